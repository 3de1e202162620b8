// A oneDNN convolution's input scale (FusedConv input 4, fuse.conv_scale): conv(x * s) is
// conv x with W[:, c] * s[c], so the kernel scales its packed weights by input channel per
// call. A table built once per primitive shape gives each packed weight's input channel,
// so scaling is one pass in the primitive's own order (no reorder per call; bf16 keeps the
// f32 weights in that order too, so they are rounded once).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/onednn/common.h"

namespace switchyard::onednn {

// The packed weights' channel table and, for weights in another type than f32, the f32
// weights in the packed order.
struct ScaledWeightsTable {
  // Per element of the packed weights (format `wei`): its input channel, C for padding
  // (which reads a zero scale).
  std::vector<int32_t> chan;
  std::vector<uint8_t> wei_f32;  // empty for f32 weights (the packed weights themselves)
};

// `wei`: the primitive's weights format (blocked, not Winograd); `plain_dims`: W's dims;
// `w_shape`: W's shape [M, C, ...]; `plain_f32`: the f32 weights as given (needed when
// `wei` is not f32).
Result<ScaledWeightsTable> MakeScaledWeightsTable(const Node& node, bool winograd, const memory::desc& wei,
                                                  const memory::dims& plain_dims, const std::vector<int64_t>& w_shape,
                                                  const Tensor* plain_f32);

// The packed weights (`wei_data`, format `wei`) times `s` (C scales of `type`: float32, or
// bf16 with bf16 activations) by input channel, in the calling thread's scratch.
const void* ScaleWeights(const ScaledWeightsTable& t, const memory::desc& wei, const void* wei_data, int64_t c,
                         const void* s, DataType type, int threads);

}  // namespace switchyard::onednn
