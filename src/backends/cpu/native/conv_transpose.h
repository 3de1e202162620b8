// ConvTranspose geometry shared by the native and oneDNN kernels: resolves
// output_shape / output_padding / auto_pad into explicit pads and output sizes exactly as
// the reference op does (src/reference/ops/conv_transpose.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "reference/ops/conv_common.h"
#include "switchyard/status.h"

namespace switchyard::native {

struct DeconvGeom {
  int64_t n = 0, c = 0, m = 0, group = 1;  // batch, input channels, output channels
  ops::Window win;                          // pads resolved (may be negative at the end)
  std::vector<int64_t> in_sp, out_sp;       // spatial sizes
  std::vector<int64_t> out_shape;           // [N, M, out_sp...]
};

// x: [N, C, spatial...], w: [C, M/group, kernel...]. Errors name the node.
Result<DeconvGeom> ResolveConvTranspose(const Node& node, const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& w);

}  // namespace switchyard::native
