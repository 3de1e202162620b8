// Runs one node through one CPU implementation, the way an engine would (Supports,
// Prepare, Create, OutputShapes, Run) on plain or nhwc layouts. The cross-backend harness uses
// it to compare every implementation with the reference kernel of the same op.
#pragma once

#include <string>
#include <vector>

#include "backends/cpu/op_impl.h"
#include "ir/tensor.h"
#include "switchyard/status.h"

namespace switchyard {

struct SingleOpOptions {
  std::string precision = "fp32";
  std::string quant_weights = "none";
  int threads = 1;
  // "cpu", or "cuda": build for the cuda target and run the kernel on the GPU through the
  // device backend (inputs copied in, outputs copied back; fails without a GPU).
  std::string target = "cpu";
  // Inputs to treat as build-time constants (weights); default: none.
  std::vector<bool> constant_inputs;
  // "nchw", or "nhwc": the route's activations are nhwc and every 4-D input arrives nhwc
  // (as from an nhwc producer). Inputs and outputs the implementation declares nhwc are
  // handed over in nhwc bytes and turned back; inputs and outputs stay NCHW-ordered.
  std::string layout = "nchw";
  // With layout "nhwc": the 4-D inputs arrive plain instead (as the graph's image does to a
  // network's first layer).
  bool plain_inputs = false;
};

// `node` needs op_type/domain/attrs and as many inputs/outputs entries as it uses (ids
// are ignored). Inputs may be nullptr (omitted). Errors if the implementation does not
// support the node.
Result<std::vector<Tensor>> RunSingleOp(const CpuOpImpl& impl, const Node& node, int64_t opset,
                                        const std::vector<const Tensor*>& inputs,
                                        const SingleOpOptions& options = {});

}  // namespace switchyard
