// Native TopK (1, 10, 11) for float32, int32 and int64: values and int64 indices along
// `axis`, largest or smallest, always sorted (also valid for sorted=0). Ties keep the
// lower index first and NaN ranks above every number, as the reference does; the order
// (value, index) is total, so partial_sort gives the same result as a stable sort.
#include <algorithm>
#include <cmath>
#include <utility>

#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

template <typename T>
inline bool Less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(b)) return !std::isnan(a);
    if (std::isnan(a)) return false;
  }
  return a < b;
}

struct TopKAttrs {
  int version = 11;
  int64_t axis = -1, k_attr = -1;
  bool largest = true;
};

Result<int64_t> ResolveK(const Node& node, const TopKAttrs& a, const std::vector<const TensorRef*>& in) {
  if (a.version < 10) return a.k_attr;
  if (in.size() < 2 || !in[1] || in[1]->numel() != 1) return ops::NodeError(node, "K must be a 1-element tensor");
  return ReadInts(*in[1])[0];
}

Result<Shape> OutShape(const Node& node, const TopKAttrs& a, const std::vector<const TensorRef*>& in,
                       int64_t* axis, int64_t* k) {
  const Shape& x = in[0]->shape;
  SY_ASSIGN_OR_RETURN(*axis, ops::NormalizeAxis(node, a.axis, static_cast<int64_t>(x.size())));
  SY_ASSIGN_OR_RETURN(*k, ResolveK(node, a, in));
  if (*k < 0 || *k > x[*axis]) return ops::NodeError(node, "K is out of range for the axis");
  Shape s = x;
  s[*axis] = *k;
  return s;
}

template <typename T>
void TopKLoop(const T* x, T* vals, int64_t* idx, int64_t outer, int64_t n, int64_t inner, int64_t k,
              bool largest, int threads) {
  ParallelFor(outer * inner, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    std::vector<std::pair<T, int64_t>> buf(static_cast<size_t>(n));
    for (int64_t s = b; s < e; ++s) {
      const int64_t o = s / inner, i = s % inner;
      const T* src = x + o * n * inner + i;
      for (int64_t j = 0; j < n; ++j) buf[j] = {src[j * inner], j};
      auto cmp = [largest](const std::pair<T, int64_t>& p, const std::pair<T, int64_t>& q) {
        const bool before = largest ? Less(q.first, p.first) : Less(p.first, q.first);
        if (before) return true;
        const bool after = largest ? Less(p.first, q.first) : Less(q.first, p.first);
        return !after && p.second < q.second;
      };
      std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), cmp);
      T* vo = vals + o * k * inner + i;
      int64_t* io = idx + o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        vo[j * inner] = buf[j].first;
        io[j * inner] = buf[j].second;
      }
    }
  });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeTopK) {
  RegisterNative(
      reg, "", "TopK",
      [](const Node& n, const KernelBuildContext& c) {
        if (c.input_dtypes.empty()) return false;
        const DataType t = c.input_dtypes[0];
        return t == DataType::kFloat || t == DataType::kInt64 || t == DataType::kInt32;
      },
      [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
        const Node node = v.node;
        TopKAttrs a;
        a.version = v.params.value("version", node.since_version > 0 ? node.since_version : 11);
        a.axis = node.GetInt("axis", -1);
        a.k_attr = node.GetInt("k", -1);
        a.largest = a.version < 11 || node.GetInt("largest", 1) != 0;
        return MakeKernel(
            [node, a](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
              int64_t axis, k;
              SY_ASSIGN_OR_RETURN(Shape s, OutShape(node, a, in, &axis, &k));
              return Shapes{s, s};
            },
            [node, a](const KernelIO& io) -> Status {
              int64_t axis, k;
              SY_ASSIGN_OR_RETURN(Shape s, OutShape(node, a, io.inputs, &axis, &k));
              const TensorRef& x = *io.inputs[0];
              int64_t outer = 1, inner = 1;
              for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
              for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
              const int64_t n = x.shape[axis];
              if (k == 0 || outer * inner == 0) return Status::Ok();
              // An output the graph does not use may come without a buffer.
              const int64_t count = outer * k * inner;
              std::vector<int64_t> idx_buf, val_buf;
              int64_t* idx = nullptr;
              if (io.outputs.size() > 1 && io.outputs[1]) {
                idx = io.outputs[1]->as<int64_t>();
              } else {
                idx_buf.resize(static_cast<size_t>(count));
                idx = idx_buf.data();
              }
              void* vals = nullptr;
              if (!io.outputs.empty() && io.outputs[0]) {
                vals = io.outputs[0]->data;
              } else {
                val_buf.resize(static_cast<size_t>(count));  // 8 bytes per value fits every dtype
                vals = val_buf.data();
              }
              switch (x.dtype) {
                case DataType::kFloat:
                  TopKLoop(x.as<float>(), static_cast<float*>(vals), idx, outer, n, inner, k, a.largest, io.threads);
                  break;
                case DataType::kInt32:
                  TopKLoop(x.as<int32_t>(), static_cast<int32_t*>(vals), idx, outer, n, inner, k, a.largest, io.threads);
                  break;
                case DataType::kInt64:
                  TopKLoop(x.as<int64_t>(), static_cast<int64_t*>(vals), idx, outer, n, inner, k, a.largest, io.threads);
                  break;
                default:
                  return ops::NodeError(node, "unsupported dtype");
              }
              return Status::Ok();
            });
      },
      [](const Node& n, const KernelBuildContext& c, StepSpec& spec) {
        spec.params["version"] = NodeVersion(n, c);
        return Status::Ok();
      });
}

}  // namespace switchyard::native
