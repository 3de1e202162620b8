// What the native nhwc convolutions (conv_nhwc.cc: "nhwc_rows", conv_winograd.cc:
// "winograd_f43") share: the geometry of a group-1, dilation-1 2-D convolution and the
// build-time checks of route, dtypes, constants, bias, residual Z and activation.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/op_impl.h"

namespace switchyard::native {

// Floats (4 KiB) ahead at which the native nhwc kernels prefetch weights that their first
// pass streams from memory (conv_1x1.cc, conv_winograd.cc): the CPU's own prefetchers stop
// at each 4 KiB page. A 6x64 tile streaming its weights from a 64 MiB buffer ran at 103-107
// GFLOP/s on one Zen 5 core without, 179-184 with (198-201 from L1).
constexpr int64_t kWeightPrefetchAhead = 1024;

struct ConvNhwcGeom {
  int64_t n, c, h, w, m, kh, kw, sh, sw, pt, pl, oh, ow;
};

// X [N, C, H, W] and W [M, C, KH, KW] (NCHW order; the bytes are nhwc at run time).
Result<ConvNhwcGeom> MakeConvNhwcGeom(const Node& node, const std::vector<int64_t>& x,
                                      const std::vector<int64_t>& wt);

// Conv or switchyard.FusedConv on an nhwc fp32 route: f32 X (not a constant) and constant
// W, an optional 1-D bias, an optional residual Z of the output's shape, a native
// activation, a 4-D input with known C, H, W, group 1 and dilation 1.
bool SupportsNhwcConv(const Node& node, const KernelBuildContext& ctx);

// At load: the fused activation and whether a residual Z is an input.
struct ConvNhwcFusion {
  UnaryOp act = UnaryOp::kNone;
  UnaryParams ap;
  bool has_z = false;
};
Result<ConvNhwcFusion> ReadConvNhwcFusion(const Node& node);

// The output shape of X under weights `w_shape` ([N, M, OH, OW]).
ShapeFn ConvNhwcShapes(const Node& node, const std::vector<int64_t>& w_shape);

// A call's bias and Z (nullptr where absent), checked against the geometry.
struct ConvNhwcOperands {
  const TensorRef* bias = nullptr;
  const TensorRef* z = nullptr;
};
Result<ConvNhwcOperands> ReadConvNhwcOperands(const Node& node, const KernelIO& io, const ConvNhwcGeom& g,
                                              bool has_z);

}  // namespace switchyard::native
