// Native Softmax and LogSoftmax (fp32): contiguous rows when the axis is innermost,
// otherwise a vectorised walk over the inner dims.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::native {

SY_NATIVE_CLONES
void SoftmaxRow(const float* x, float* y, int64_t n, bool log) {
  // SoftmaxExp, max and sum in loops of their own vectorise (glibc's expf does not).
  const float m = SpanMax(x, n);
  if (log) {  // y may be x: the exponentials go through a scratch chunk
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
  for (int64_t i = 0; i < n; ++i) y[i] = SoftmaxExp(x[i] - m);
  const float inv = 1.f / SpanSum(y, n);
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
