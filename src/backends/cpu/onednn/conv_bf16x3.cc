// bf16x3 convolutions: conv_bf16x3.h.
#include "backends/cpu/onednn/conv_bf16x3.h"

#include <algorithm>
#include <cmath>

#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::onednn {

bool Bf16x3Fits(const Node& node, const KernelBuildContext& ctx) {
  return !ctx.input_dtypes.empty() && ctx.input_dtypes[0] == DataType::kFloat && ctx.layout == "nhwc" &&
         ctx.input_shapes[0].size() == 4 && node.GetInt("group", 1) == 1 && ctx.variant != "winograd" &&
         ctx.quant_weights == "none" && !node.HasInput(4);
}

Result<std::vector<uint8_t>> PackBf16x3Weights(const Node& node, const Tensor& w, const memory::dims& wei,
                                               const memory::desc& to) {
  if (w.dtype() != DataType::kFloat || wei.size() < 2) return ops::NodeError(node, "bf16x3 needs f32 weights of group 1");
  const int64_t m = wei[0], per = w.numel() / std::max<int64_t>(m, 1);  // C x kh x kw
  std::vector<uint16_t> plain(static_cast<size_t>(3 * w.numel()));
  const float* src = w.data<float>();
  for (int64_t o = 0; o < m; ++o) {
    uint16_t* d = plain.data() + o * 3 * per;
    for (int64_t k = 0; k < per; ++k) {
      const float x = src[o * per + k];
      const uint16_t hi = FloatToBfloat16(x);
      d[k] = d[2 * per + k] = hi;
      const float h = Bfloat16ToFloat(hi);
      d[per + k] = std::isfinite(h) ? FloatToBfloat16(x - h) : uint16_t{0};
    }
  }
  memory::dims dims = wei;
  dims[1] *= 3;
  return ReorderBytes(node, memory::desc(dims, Dt::bf16, PlainTag(dims.size())), plain.data(), to);
}

void* SplitBf16x3Input(const void* x, const std::vector<int64_t>& shape, size_t bytes, int threads) {
  void* buf = ThreadScratch(kSrcConvert, bytes);
  native::SplitBf16x3(static_cast<const float*>(x), static_cast<uint16_t*>(buf), shape[0] * shape[2] * shape[3], shape[1],
                      threads);
  return buf;
}

}  // namespace switchyard::onednn
