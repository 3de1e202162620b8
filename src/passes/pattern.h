// Shared machinery of the graph passes: a Rewriter that collects one sweep of
// non-overlapping rewrites over a Graph (consumer lists built once per sweep, edits
// applied together at Commit so node order stays topological), plus small matchers:
// constant scalars, dtype/shape checks and the activation patterns fused by several
// passes. Not thread-safe; one Rewriter edits one Graph.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "switchyard/status.h"

namespace switchyard::passes {

class Rewriter {
 public:
  explicit Rewriter(Graph& graph);

  Graph& graph() { return g_; }
  const Graph& graph() const { return g_; }
  const Node& node(NodeId n) const { return g_.nodes[static_cast<size_t>(n)]; }

  const std::vector<NodeId>& Consumers(ValueId v) const { return consumers_[static_cast<size_t>(v)]; }
  bool IsGraphOutput(ValueId v) const { return is_output_[static_cast<size_t>(v)] != 0; }
  // The value has exactly one reading node, and is not a graph output.
  bool SingleUse(ValueId v) const;
  // The node producing `v`, or -1 when none or when that node was already rewritten.
  NodeId Producer(ValueId v) const;
  // The only reader of `v` when SingleUse(v) and it is untouched, else -1.
  NodeId SoleConsumer(ValueId v) const;
  // Whether a node was removed or replaced in this sweep (it may not match again).
  bool Touched(NodeId n) const { return touched_[static_cast<size_t>(n)] != 0; }

  void Remove(NodeId n);
  // `node` takes n's place in the order. All of its inputs must be defined before n.
  void Replace(NodeId n, Node node);
  // `node` goes immediately before n (before n's replacement, if any).
  void InsertBefore(NodeId n, Node node);

  // A fresh value (name made unique from `base`).
  ValueId NewValue(const std::string& base, TensorType type = {});
  ValueId NewConstant(const std::string& base, Tensor t);

  int changes() const { return changes_; }
  void CountChange() { ++changes_; }
  // Applies the edits: compacts the node list and rebuilds producers.
  void Commit();

 private:
  Graph& g_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<char> is_output_;
  std::vector<char> touched_, removed_;
  std::vector<std::pair<NodeId, Node>> replacements_, inserts_;
  int changes_ = 0;
};

// Runs `sweep` over fresh Rewriters until a sweep changes nothing (each sweep applies
// non-overlapping rewrites); returns the total number of rewrites. More than `max_sweeps`
// sweeps is an error (a pass that keeps rewriting its own output).
Result<int> RunSweeps(Graph& graph, const std::function<Status(Rewriter&)>& sweep, int max_sweeps = 64);

// A constant with exactly one element, as double.
bool ConstantScalar(const Graph& g, ValueId v, double* out);
bool ConstantScalarIs(const Graph& g, ValueId v, double want, double tol = 0);
// The constant int64 values of `v`, when it is a constant integer tensor.
bool ConstantInts(const Graph& g, ValueId v, std::vector<int64_t>* out);
bool IsFloatValue(const Graph& g, ValueId v);
// The static shape of `v` (false when a dim is unknown or zero).
bool StaticShape(const Graph& g, ValueId v, std::vector<int64_t>* s);
// Same rank and every dim equal (static sizes or the same symbol).
bool SameDims(const TensorType& a, const TensorType& b);
// No evidence that `a` and `b` differ: same rank; two static dims are equal; two named
// symbols are equal; a static dim is never paired with a non-static one. Unknown dims
// pair with unknown or named ones. Used where shapes are dynamic at import (the builder
// specialises them later; fused kernels check the exact shapes when they are prepared).
bool CompatibleDims(const TensorType& a, const TensorType& b);
// `mask` broadcasts onto `target` without enlarging it, as far as known: rank not larger,
// and aligned static dims are 1 or equal.
bool BroadcastsInto(const TensorType& mask, const TensorType& target);
// The Add that is the only reader of `v` and adds a residual of v's dims and dtype (dims
// compatible as CompatibleDims says, or the same as SameDims says with `exact_dims`):
// its node, the residual in *other; -1 when there is none.
NodeId MatchResidualAdd(const Rewriter& rw, ValueId v, bool exact_dims, ValueId* other);
// Default-domain op `op_type` (any opset).
bool IsOp(const Node& n, const char* op_type);
// The other input of a binary node, given one of them; kNoValue if `v` is not an input.
ValueId OtherInput(const Node& n, ValueId v);

Node MakeNode(const std::string& op_type, const std::string& domain, const std::string& name,
              std::vector<ValueId> inputs, std::vector<ValueId> outputs);
void SetInt(Node& n, const std::string& a, int64_t v);
void SetFloat(Node& n, const std::string& a, float v);
void SetString(Node& n, const std::string& a, const std::string& v);
void SetInts(Node& n, const std::string& a, std::vector<int64_t> v);
void SetFloats(Node& n, const std::string& a, std::vector<float> v);
void SetStrings(Node& n, const std::string& a, std::vector<std::string> v);

// An activation applied to value `in`: one unary node (Relu, LeakyRelu, Clip with constant
// bounds, Sigmoid, HardSigmoid, HardSwish, Tanh, Gelu: named "Gelu", or "GeluTanh" with
// approximate=tanh) reading it as its only consumer, or the two-node forms x*Sigmoid(x) (SiLU) and
// x*HardSigmoid(x; 1/6, 1/2) (HardSwish). Names and params follow the fused-op
// `activation` / `activation_params` attributes.
struct ActivationMatch {
  std::string name;
  std::vector<float> params;
  std::vector<NodeId> nodes;  // in graph order; the last one produces `out`
  ValueId out = kNoValue;
};
bool MatchActivation(const Rewriter& rw, ValueId in, ActivationMatch* m);
// A Mul/Div/Add/Sub node `n` of `x` by a constant (the constant second for Div and Sub, no
// zero divisor) as the affine map x * s + t per channel: the constant a scalar or one value
// per channel along axis 1 of a rank-`rank` tensor with `channels` channels (right-aligned
// dims all 1 but that axis), so it never enlarges x. fuse.conv_bn folds such maps into
// convolutions (channels = the conv's), fuse.conv_act takes scalar ones (channels = 1).
bool ConstantAffine(const Graph& g, const Node& n, ValueId x, int64_t rank, int64_t channels, std::vector<double>* s,
                    std::vector<double>* t);
// The activation name/params of one unary node (fills name and params only).
bool ActivationOf(const Graph& g, const Node& n, ActivationMatch* m);

}  // namespace switchyard::passes
