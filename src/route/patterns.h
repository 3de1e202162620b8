// Graph pattern detectors for the route space: which nodes each fusion knob could
// rewrite. They only look (never edit) and err on the side of the documented patterns, so
// a knob appears exactly when its pass has something to match. A GraphIndex borrows the
// Graph, which must outlive it; it is not thread-safe (it memoises constant folding).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace switchyard::route {

class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);
  GraphIndex(const GraphIndex&) = delete;
  GraphIndex& operator=(const GraphIndex&) = delete;

  const Graph& graph() const { return graph_; }
  // The node producing `v`; nullptr for graph inputs, initializers and kNoValue.
  const Node* Producer(ValueId v) const;
  // The node reading `v` when it is the only reader and `v` is not a graph output (the
  // condition for fusing a producer into its consumer); else nullptr.
  const Node* SoleConsumer(ValueId v) const;
  const std::vector<NodeId>& Consumers(ValueId v) const;
  bool IsGraphOutput(ValueId v) const { return outputs_.count(v) != 0; }
  // True for initializers and for values computed only from constants by deterministic
  // ops (ONNX Constant nodes, Identity/Cast/Sqrt of constants, ...): a pass may fold them.
  bool IsConst(ValueId v) const;
  // The value of a small constant (evaluated with the reference ops); nullopt when `v` is
  // not constant or too large to fold here.
  std::optional<Tensor> ConstValue(ValueId v) const;
  // The single element of a one-element constant, else nullopt.
  std::optional<double> Scalar(ValueId v) const;
  // True when `v` is a one-element constant within 1e-3 (relative) of `expected`.
  bool ScalarNear(ValueId v, double expected) const;
  // Op of `n` in the default ONNX domain?
  static bool Is(const Node* n, const char* op_type) {
    return n && n->domain.empty() && n->op_type == op_type;
  }
  // For a binary node reading `v`, the other input (kNoValue if `v` is not an input).
  static ValueId Other(const Node& n, ValueId v);
  // Float tensor (the data path, not shape arithmetic on int64)?
  bool IsFloat(ValueId v) const;

 private:
  const Graph& graph_;
  std::vector<NodeId> producer_;
  std::vector<std::vector<NodeId>> consumers_;
  std::unordered_set<ValueId> outputs_;
  std::vector<bool> const_;  // by ValueId
  mutable std::unordered_map<ValueId, std::optional<Tensor>> value_memo_;
};

// A name set as the sorted list the detectors return.
inline std::vector<std::string> SortedNames(std::set<std::string> names) {
  return std::vector<std::string>(names.begin(), names.end());
}

// Each returns the names of the nodes the fusion would rewrite (empty: nothing to fuse),
// sorted and unique. The patterns are documented in docs/routes.md and knobs.cc.
std::vector<std::string> MatchConvBn(const GraphIndex& g);
std::vector<std::string> MatchConvAct(const GraphIndex& g);
std::vector<std::string> MatchConvScale(const GraphIndex& g);
// fuse.conv_pool: a Conv whose SiLU output (x*Sigmoid(x), past what fuse.conv_bn folds) a
// GlobalAveragePool reads; the conv's and the pooling's names.
std::vector<std::string> MatchConvPool(const GraphIndex& g);
std::vector<std::string> MatchGemmEpilogue(const GraphIndex& g);
std::vector<std::string> MatchElementwise(const GraphIndex& g);
std::vector<std::string> MatchLayerNorm(const GraphIndex& g);
std::vector<std::string> MatchGelu(const GraphIndex& g);
std::vector<std::string> MatchAttention(const GraphIndex& g);
// Gathers of constant indices reading an op that prune.rows can move them above.
std::vector<std::string> MatchPruneRows(const GraphIndex& g);
// Nodes with one of `op_types` (default domain, plus the switchyard fused forms).
std::vector<std::string> NodesOfType(const GraphIndex& g, const std::vector<std::string>& op_types);
// Nodes with one of `op_types` whose weight (input 1) is a constant.
std::vector<std::string> NodesWithConstWeight(const GraphIndex& g,
                                              const std::vector<std::string>& op_types);

}  // namespace switchyard::route
