// Layer-wise accuracy debugging (`switchyard check`, docs/compare.md): builds a model for a
// route with every intermediate value also marked as a graph output, runs it and the
// reference executor (keep_intermediates) on the evaluation sets, and applies the
// tuner's accuracy metric to every value in topological order, so that a reader sees
// where along the graph the error grows and which node first crosses the threshold.
// Marking a value as an output blocks fusions across it (a fused Conv+Relu would hide the
// Conv's output), so the instrumented engine is not the engine in service: callers also
// gate the uninstrumented engine's final outputs. Values; thread-safe (no shared state).
#pragma once

#include <string>
#include <vector>

#include "build/builder.h"
#include "ir/graph.h"
#include "passes/pass.h"
#include "switchyard/status.h"
#include "tune/eval_data.h"
#include "tune/gate.h"

namespace switchyard {

// A copy of `model` whose graph outputs are its own followed by every node output that is
// not already one (top-level nodes, in topological order). *added gets the names added.
Graph MarkIntermediatesAsOutputs(const Graph& model, std::vector<std::string>* added);

// One value produced by one node: its worst error over the sets.
struct LayerRow {
  int node_index = 0;   // position of the producing node in topological order
  std::string node, op_type, value, type;  // type: "float32[1,64,40,40]"
  std::string metric;
  double threshold = 0;
  double error = 0;       // worst over the sets (+inf for non-finite or mismatched values)
  std::string worst_set;
  double input_error = 0; // worst error among the node's inputs that are rows (0: exact inputs)
  bool passed = true;
  bool graph_output = false;  // one of the model's own outputs
  std::string detail;
};

struct LayerwiseResult {
  std::vector<LayerRow> rows;         // topological order
  int first_diverging = -1;           // index into rows; -1 when every value passes
  int marked = 0;                     // intermediate values marked as outputs
  BuildReport instrumented_report;    // of the instrumented build (fusions that still fired)
  std::vector<TensorMap> reference;   // per set: the reference executor's graph outputs
};

// `model` must outlive the call only. The instrumented engine is built for and run on
// `target` (the served engine's). Errors: the route does not parse, the instrumented
// build fails, a set's inputs do not fit the model, the reference executor fails, or the
// instrumented engine fails to run (each with context).
Result<LayerwiseResult> CheckLayerwise(const Graph& model, const std::string& route, const BuildOptions& build,
                                       const std::vector<EvalSet>& sets, const AccuracyPolicy& policy,
                                       const Target& target);

}  // namespace switchyard
