// The reference executor: runs a Graph node by node with the registered reference
// kernels (fp64 accumulation for float math). It is the accuracy oracle for every
// optimised engine, so it favours obvious correctness over speed. An executor is
// immutable after Create and may Run from many threads at once.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "reference/op_registry.h"
#include "switchyard/status.h"

namespace switchyard {

using TensorMap = std::map<std::string, Tensor>;

struct ReferenceRunOptions {
  // Also return every intermediate value (by name), for layer-wise accuracy checks.
  bool keep_intermediates = false;
};

// Checks named inputs against a graph's declared inputs: every input present, no
// unknown names, dtype, rank, static dims and consistent symbolic dims.
Status ValidateInputs(const Graph& graph, const TensorMap& inputs);

class ReferenceExecutor {
 public:
  // Resolves every node's reference kernel; fails on unsupported ops. The graph must
  // outlive the executor.
  static Result<ReferenceExecutor> Create(const Graph& graph);

  // Runs the graph; returns the graph outputs by name (plus intermediates if asked).
  Result<TensorMap> Run(const TensorMap& inputs, const ReferenceRunOptions& options = {}) const;

 private:
  explicit ReferenceExecutor(const Graph& graph) : graph_(&graph) {}
  const Graph* graph_;
  std::vector<const OpSchema*> schemas_;  // per node
  std::vector<int> last_use_;             // per value: last node index reading it
};

}  // namespace switchyard
