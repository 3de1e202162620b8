// Storage-precision lowering (see lower_precision.cc): the cuda target's fp16/bf16 routes
// and the cpu target's bf16 convolutions (builder.cc, CpuBf16Nodes).
#pragma once

#include <functional>
#include <string>

#include "ir/graph.h"
#include "passes/pass.h"
#include "switchyard/status.h"

namespace switchyard {

// precision_of(node) is the node's effective route precision ("fp32", "tf32", "fp16",
// "bf16"); nodes at fp16/bf16 get their float32 data in that type. Re-infers types and
// verifies the graph afterwards.
Status LowerPrecision(Graph& g, const std::function<std::string(const Node&)>& precision_of,
                      BuildReport& report);

}  // namespace switchyard
