#include "backends/cpu/onednn/conv_scale.h"

#include <algorithm>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::onednn {

Result<ScaledWeightsTable> MakeScaledWeightsTable(const Node& node, bool winograd, const memory::desc& wei,
                                                  const memory::dims& plain_dims, const std::vector<int64_t>& w_shape,
                                                  const Tensor* plain_f32) {
  if (wei.data.format_kind != dnnl_blocked || winograd) {
    return ops::NodeError(node, "an input scale needs weights in a blocked format, not " + FormatString(wei));
  }
  memory::desc f32_md = wei;
  f32_md.data.data_type = dnnl_f32;  // blocking strides count elements: same positions
  const memory::desc plain(plain_dims, memory::data_type::f32, PlainTag(plain_dims.size()));
  const int64_t c = w_shape[1];
  int64_t count = 1;
  for (int64_t d : w_shape) count *= d;
  if (c >= (int64_t{1} << 24)) return ops::NodeError(node, "an input scale over 2^24 channels");
  // A plain tensor holding c + 1 at every W[o, c, ...], reordered into the primitive's
  // format (as f32: exact below 2^24; padding reads 0).
  const int64_t k = count / std::max<int64_t>(1, w_shape[0] * c);
  std::vector<float> code(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) code[i] = static_cast<float>((i / k) % c + 1);
  SY_ASSIGN_OR_RETURN(std::vector<uint8_t> table, ReorderBytes(node, plain, code.data(), f32_md));
  const float* t = reinterpret_cast<const float*>(table.data());
  ScaledWeightsTable out;
  out.chan.resize(table.size() / sizeof(float));
  for (size_t i = 0; i < out.chan.size(); ++i) {
    out.chan[i] = t[i] > 0.f ? static_cast<int32_t>(t[i]) - 1 : static_cast<int32_t>(c);
  }
  if (wei.data.data_type != dnnl_f32) {
    if (!plain_f32) return ops::NodeError(node, "f32 weights for a scaled bf16 convolution missing");
    SY_ASSIGN_OR_RETURN(out.wei_f32, ReorderBytes(node, plain, plain_f32->raw(), f32_md));
  }
  return out;
}

const void* ScaleWeights(const ScaledWeightsTable& t, const memory::desc& wei, const void* wei_data, int64_t c,
                         const void* s, DataType type, int threads) {
  const int64_t n = static_cast<int64_t>(t.chan.size());
  float* sc = static_cast<float*>(ThreadScratch(kAux, static_cast<size_t>(c + 1) * sizeof(float)));
  if (type == DataType::kBfloat16) {
    native::ConvertFromBf16(static_cast<const uint16_t*>(s), sc, c, 1);
  } else {
    std::copy(static_cast<const float*>(s), static_cast<const float*>(s) + c, sc);
  }
  sc[c] = 0.f;
  const bool f32 = t.wei_f32.empty();
  const float* base = static_cast<const float*>(f32 ? wei_data : t.wei_f32.data());
  float* out = static_cast<float*>(ThreadScratch(kScaledWeights, static_cast<size_t>(n) * sizeof(float)));
  native::ParallelFor(n, threads, 16384, [&](int64_t i0, int64_t i1) {
    native::ScaleByIndex(base + i0, t.chan.data() + i0, sc, out + i0, i1 - i0);
  });
  if (f32) return out;
  void* packed = ThreadScratch(kScaledPacked, wei.get_size());
  native::ConvertToBf16(out, static_cast<uint16_t*>(packed), n, threads);
  return packed;
}

}  // namespace switchyard::onednn
