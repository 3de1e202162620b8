// Native Softmax and LogSoftmax (fp32): contiguous rows when the axis is innermost,
// otherwise a vectorised walk over the inner dims. A softmax row's exponentials and sum
// (SoftmaxExpRow, also the attention kernel's) are one AVX-512 pass after the max where
// the CPU has it: SVTR's [80, 6625] CTC head softmax was 15% of its time on 2 threads.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include "backends/cpu/native/avx512_exp.h"
#endif
#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

// The portable form (lane-wise max and sum, so that the loops vectorise under the clones).
SY_NATIVE_CLONES
float SoftmaxExpRowScalar(const float* x, float* row, int64_t n, int64_t limit, float scale, const float* mask,
                          int64_t mask_cs) {
  if (x != row || scale != 1.f || mask) {
    for (int64_t j = 0; j < limit; ++j) row[j] = x[j] * scale + (mask ? mask[j * mask_cs] : 0.f);
  }
  const float m = SpanMax(row, limit);
  for (int64_t j = 0; j < limit; ++j) row[j] = SoftmaxExp(row[j] - m);
  std::fill(row + limit, row + n, 0.f);
  return SpanSum(row, limit);
}

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's false (maybe-)uninitialized reports from its own AVX-512 reduce intrinsics
// (bug 105593, as in avx512_exp.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
__attribute__((target("avx512f"))) float SoftmaxExpRowAvx512(const float* x, float* row, int64_t n, int64_t limit,
                                                            float scale, const float* mask, int64_t mask_cs) {
  if (mask && mask_cs != 1) {  // a broadcast or strided mask row: added first, into row
    for (int64_t j = 0; j < limit; ++j) row[j] = x[j] * scale + mask[j * mask_cs];
    x = row;
    scale = 1.f;
    mask = nullptr;
  }
  const __m512 vs = _mm512_set1_ps(scale);
  __m512 vmax = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t j = 0; j < limit; j += 16) {
    const __mmask16 km = limit - j >= 16 ? __mmask16(0xffff) : __mmask16((1u << (limit - j)) - 1);
    __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(km, x + j), vs);
    if (mask) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(km, mask + j));
    _mm512_mask_storeu_ps(row + j, km, v);
    vmax = _mm512_mask_max_ps(vmax, km, v, vmax);
  }
  const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
  __m512 vsum = _mm512_setzero_ps();
  for (int64_t j = 0; j < limit; j += 16) {
    const __mmask16 km = limit - j >= 16 ? __mmask16(0xffff) : __mmask16((1u << (limit - j)) - 1);
    const __m512 dlt = _mm512_sub_ps(_mm512_maskz_loadu_ps(km, row + j), m);
    // Zero below -80; NaN (unordered) goes on through the exponential.
    const __mmask16 keep = _mm512_mask_cmp_ps_mask(km, dlt, _mm512_set1_ps(-80.f), _CMP_NLT_UQ);
    const __m512 e = _mm512_maskz_mov_ps(keep, ExpAvx512(dlt));
    _mm512_mask_storeu_ps(row + j, km, e);
    vsum = _mm512_add_ps(vsum, e);
  }
  std::fill(row + limit, row + n, 0.f);
  return _mm512_reduce_add_ps(vsum);
}
#pragma GCC diagnostic pop
#endif

using SoftmaxExpRowFn = float (*)(const float*, float*, int64_t, int64_t, float, const float*, int64_t);
SoftmaxExpRowFn PickSoftmaxExpRow() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f")) return SoftmaxExpRowAvx512;
#endif
  return SoftmaxExpRowScalar;
}
const SoftmaxExpRowFn kSoftmaxExpRow = PickSoftmaxExpRow();

}  // namespace

float SoftmaxExpRow(const float* x, float* row, int64_t n, int64_t limit, float scale, const float* mask,
                    int64_t mask_cs) {
  return kSoftmaxExpRow(x, row, n, limit, scale, mask, mask_cs);
}

SY_NATIVE_CLONES
void SoftmaxRow(const float* x, float* y, int64_t n, bool log) {
  if (log) {
    // SoftmaxExp, max and sum in loops of their own vectorise (glibc's expf does not); y
    // may be x: the exponentials go through a scratch chunk.
    const float m = SpanMax(x, n);
    constexpr int64_t kChunk = 256;
    float e[kChunk];
    float sum = 0.f;
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t c = std::min(kChunk, n - i0);
      for (int64_t i = 0; i < c; ++i) e[i] = SoftmaxExp(x[i0 + i] - m);
      sum += SpanSum(e, c);
    }
    const float shift = m + std::log(sum);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - shift;
    return;
  }
  const float inv = 1.f / SoftmaxExpRow(x, y, n, n, 1.f, nullptr, 0);
  for (int64_t i = 0; i < n; ++i) y[i] *= inv;
}

namespace {

// One outer slice [n][inner]: softmax along n for each of the inner positions.
SY_NATIVE_CLONES
void SoftmaxStrided(const float* x, float* y, int64_t n, int64_t inner, bool log,
                    float* mx, float* sum) {
  std::copy(x, x + inner, mx);
  for (int64_t j = 1; j < n; ++j) {
    const float* r = x + j * inner;
    for (int64_t i = 0; i < inner; ++i) mx[i] = r[i] > mx[i] ? r[i] : mx[i];
  }
  std::fill(sum, sum + inner, 0.f);
  for (int64_t j = 0; j < n; ++j) {
    const float* r = x + j * inner;
    float* o = y + j * inner;
    for (int64_t i = 0; i < inner; ++i) {
      o[i] = SoftmaxExp(r[i] - mx[i]);
      sum[i] += o[i];
    }
  }
  for (int64_t i = 0; i < inner; ++i) sum[i] = log ? mx[i] + std::log(sum[i]) : 1.f / sum[i];
  for (int64_t j = 0; j < n; ++j) {
    const float* r = x + j * inner;
    float* o = y + j * inner;
    if (log) {
      for (int64_t i = 0; i < inner; ++i) o[i] = r[i] - sum[i];
    } else {
      for (int64_t i = 0; i < inner; ++i) o[i] *= sum[i];
    }
  }
}

void RegisterSoftmax(CpuImplRegistry& reg, const std::string& op, bool log) {
  RegisterNative(reg, "", op, AllFloat, [log](const StepView& v) {
    const Node node = v.node;
    const bool coerce_2d = node.since_version > 0 && node.since_version < 13;
    const int64_t axis_attr = node.GetInt("axis", coerce_2d ? 1 : -1);
    return MakeKernel(
        [](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          return Shapes{in[0]->shape};
        },
        [node, log, coerce_2d, axis_attr](const KernelIO& io) -> Status {
          const TensorRef& x = *io.inputs[0];
          const int64_t rank = static_cast<int64_t>(x.shape.size());
          if (rank == 0) return ops::NodeError(node, "Softmax of a scalar");
          SY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, axis_attr, rank));
          int64_t outer = 1, n = 1, inner = 1;
          for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
          if (coerce_2d) {
            for (int64_t d = axis; d < rank; ++d) n *= x.shape[d];
          } else {
            n = x.shape[axis];
            for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[d];
          }
          if (outer * n * inner == 0) return Status::Ok();
          const float* px = x.as<float>();
          float* py = io.outputs[0]->as<float>();
          const int64_t slice = n * inner;
          ParallelFor(outer, io.threads, std::max<int64_t>(1, 16384 / slice),
                      [&](int64_t b, int64_t e) {
                        std::vector<float> scratch(inner > 1 ? 2 * inner : 0);
                        for (int64_t o = b; o < e; ++o) {
                          if (inner == 1) {
                            SoftmaxRow(px + o * slice, py + o * slice, n, log);
                          } else {
                            SoftmaxStrided(px + o * slice, py + o * slice, n, inner, log,
                                           scratch.data(), scratch.data() + inner);
                          }
                        }
                      });
          return Status::Ok();
        });
  });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeSoftmax) {
  RegisterSoftmax(reg, "Softmax", false);
  RegisterSoftmax(reg, "LogSoftmax", true);
}

}  // namespace switchyard::native
