// Native ops real models need beyond the core set: Trilu (GPT-2's causal mask) for any
// fixed-size dtype.
#include <algorithm>

#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

// Trilu: keeps x[..., i, j] where j - i >= k (upper) or j - i <= k (lower), else zero.
Status RunTrilu(const Node& node, bool upper, const KernelIO& io) {
  const TensorRef& x = *io.inputs[0];
  if (x.shape.size() < 2) return ops::NodeError(node, "input must have rank >= 2");
  int64_t k = 0;
  if (io.inputs.size() > 1 && io.inputs[1]) {
    if (io.inputs[1]->numel() != 1) return ops::NodeError(node, "k must be a scalar");
    k = ReadInts(*io.inputs[1])[0];
  }
  const size_t r = x.shape.size(), es = DataTypeSize(x.dtype);
  const int64_t rows = x.shape[r - 2], cols = x.shape[r - 1];
  const int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(io.outputs[0]->data);
  ParallelFor(mats * rows, io.threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t row = b; row < e; ++row) {
                  const int64_t i = row % rows;
                  // Kept columns: [max(0, i+k), cols) for upper, [0, min(cols, i+k+1)) for lower.
                  const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
                  const int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
                  const char* s = src + row * cols * es;
                  char* d = dst + row * cols * es;
                  std::memset(d, 0, static_cast<size_t>(cols * es));
                  if (hi > lo) std::memcpy(d + lo * es, s + lo * es, static_cast<size_t>((hi - lo) * es));
                }
              });
  return Status::Ok();
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeExtraOps) {
  RegisterNative(
      reg, "", "Trilu",
      [](const Node&, const KernelBuildContext& c) {
        return !c.input_dtypes.empty() && c.input_dtypes[0] != DataType::kString &&
               c.input_dtypes[0] != DataType::kUndefined;
      },
      [](const StepView& v) {
        const Node node = v.node;
        const bool upper = node.GetInt("upper", 1) != 0;
        return MakeKernel(
            [](const std::vector<const TensorRef*>& in) -> Result<Shapes> { return Shapes{in[0]->shape}; },
            [node, upper](const KernelIO& io) { return RunTrilu(node, upper, io); });
      });
}

}  // namespace switchyard::native
