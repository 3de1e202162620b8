// Type and shape inference over a Graph using each op's registered InferFn. Declared
// types (graph outputs, value_info) are merged with inferred ones; a contradiction is an
// error naming the node. Small constant sub-expressions (Shape of static tensors, shape
// arithmetic) are evaluated on the side so that Reshape/Expand/... get exact shapes.
#pragma once

#include "ir/graph.h"
#include "switchyard/status.h"

namespace switchyard {

struct ShapeInferenceOptions {
  // Nodes without a registered op get unknown output types instead of an error.
  bool allow_unsupported = false;
  // Largest tensor (elements) evaluated on the side for data propagation.
  int64_t max_fold_elements = 1 << 16;
};

Status InferShapes(Graph& graph, const ShapeInferenceOptions& options = {});

}  // namespace switchyard
