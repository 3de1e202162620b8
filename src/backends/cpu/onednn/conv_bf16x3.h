// bf16x3 convolutions (precision=bf16x3; oneDNN's conv kernel, conv.cc): group 1, nhwc f32
// X and Y. The primitive is a bf16 convolution over 3C input channels: X split per call into
// [X_hi, X_hi, X_lo] (native::SplitBf16x3) against weights packed [W_hi, W_lo, W_hi] along C
// at build time, so that it sums X_hi W_hi + X_hi W_lo + X_lo W_hi in f32: the layer to
// about 1e-5 relative instead of bf16's 1e-3, at three times bf16's multiply-adds (where AMX
// makes bf16 many times faster than f32, still fewer cycles than f32).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/onednn/common.h"
#include "backends/cpu/op_impl.h"

namespace switchyard::onednn {

// Whether the node can run as bf16x3: f32 X, an nhwc route, 4-D, group 1, not Winograd, no
// int8 weights and no input scale (fuse.conv_scale scales f32 weights per call).
bool Bf16x3Fits(const Node& node, const KernelBuildContext& ctx);

// W ([M, C, kh, kw] f32; `wei` its dims) as [M, 3C, kh, kw] bf16, each output channel's C
// input channels as W_hi, W_lo, W_hi (W_lo = bf16(W - W_hi)), reordered into `to`.
Result<std::vector<uint8_t>> PackBf16x3Weights(const Node& node, const Tensor& w, const memory::dims& wei,
                                               const memory::desc& to);

// X (nhwc f32 of NCHW shape `x`) split into the calling thread's kSrcConvert scratch of
// `bytes` (the primitive's 3C-channel bf16 source); returns it.
void* SplitBf16x3Input(const void* x, const std::vector<int64_t>& shape, size_t bytes, int threads);

}  // namespace switchyard::onednn
