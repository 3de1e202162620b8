// Shared plumbing of the native CPU kernels (see native.h).
#include "backends/cpu/native/native.h"

#include <algorithm>

#include "reference/op_registry.h"
#include "reference/ops/common.h"

namespace switchyard::native {

Result<Shape> BroadcastShape(const Node& node, const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& o = out[off + d];
      if (s[d] == o || s[d] == 1) continue;
      if (o == 1) {
        o = s[d];
        continue;
      }
      return ops::NodeError(node, "shapes " + ShapeToString(s) + " do not broadcast to " +
                                      ShapeToString(out));
    }
  }
  return out;
}

BroadcastPlan MakeBroadcastPlan(const Shape& out, const std::vector<Shape>& inputs) {
  const size_t rank = out.size(), n = inputs.size();
  // Full-rank strides per input (0 where broadcast).
  std::vector<Shape> full(n, Shape(rank, 0));
  for (size_t i = 0; i < n; ++i) {
    const Shape& s = inputs[i];
    const size_t off = rank - s.size();
    int64_t stride = 1;
    for (size_t d = s.size(); d-- > 0;) {
      full[i][off + d] = s[d] == 1 ? 0 : stride;
      stride *= s[d];
    }
  }
  BroadcastPlan p;
  p.strides.assign(n, {});
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;  // size-1 dims contribute nothing
    bool merge = !p.out.empty();
    for (size_t i = 0; merge && i < n; ++i) {
      // Mergeable with the previous kept dim when strides chain: prev = cur * size.
      merge = p.strides[i].back() == full[i][d] * out[d];
    }
    if (merge) {
      p.out.back() *= out[d];
      for (size_t i = 0; i < n; ++i) p.strides[i].back() = full[i][d];
    } else {
      p.out.push_back(out[d]);
      for (size_t i = 0; i < n; ++i) p.strides[i].push_back(full[i][d]);
    }
  }
  if (p.out.empty()) {
    p.out.push_back(1);
    for (size_t i = 0; i < n; ++i) p.strides[i].push_back(0);
  }
  p.numel = NumElements(p.out);
  return p;
}

// Strides of `s` broadcast against `full` (0 along broadcast dims), aligned right.
Shape BroadcastStrides(const Shape& s, const Shape& full) {
  Shape st(full.size(), 0);
  int64_t stride = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    const size_t d = s.size() - 1 - i;
    st[full.size() - 1 - i] = s[d] == 1 ? 0 : stride;
    stride *= s[d];
  }
  return st;
}

// Offsets of each batch entry of `full_batch` into a tensor with batch dims `own`, whose
// matrices hold `mat` elements each.
std::vector<int64_t> BatchOffsets(const Shape& own, const Shape& full_batch, int64_t mat) {
  const Shape st = BroadcastStrides(own, full_batch);
  const int64_t n = NumElements(full_batch);
  std::vector<int64_t> off(static_cast<size_t>(n), 0);
  Shape idx(full_batch.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) o += idx[d] * st[d];
    off[i] = o * mat;
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < full_batch[d]) break;
      idx[d] = 0;
    }
  }
  return off;
}

std::vector<int64_t> ReadInts(const TensorRef& t) {
  const int64_t n = t.numel();
  std::vector<int64_t> v(static_cast<size_t>(n));
  if (t.dtype == DataType::kInt32) {
    for (int64_t i = 0; i < n; ++i) v[i] = t.as<int32_t>()[i];
  } else if (t.dtype == DataType::kInt64) {
    std::memcpy(v.data(), t.data, static_cast<size_t>(n) * 8);
  }
  return v;
}

bool IsFloat32(DataType t) { return t == DataType::kFloat; }

bool AllFloat(const Node&, const KernelBuildContext& ctx) {
  for (DataType t : ctx.input_dtypes) {
    if (t != DataType::kUndefined && t != DataType::kFloat) return false;
  }
  return true;
}

void RegisterNative(CpuImplRegistry& reg, const std::string& domain, const std::string& op,
                    std::function<bool(const Node&, const KernelBuildContext&)> supports,
                    std::function<Result<std::unique_ptr<Kernel>>(const StepView&)> create,
                    std::function<Status(const Node&, const KernelBuildContext&, StepSpec&)>
                        prepare) {
  CpuOpImpl impl;
  impl.provider = "native";
  impl.domain = domain;
  impl.op_type = op;
  impl.supports = std::move(supports);
  impl.create = std::move(create);
  impl.prepare = prepare ? std::move(prepare)
                         : [](const Node&, const KernelBuildContext&, StepSpec&) {
                             return Status::Ok();
                           };
  reg.Register(std::move(impl));
}

int NodeVersion(const Node& n, const KernelBuildContext& ctx) {
  if (n.since_version > 0) return n.since_version;
  auto it = ctx.graph.opsets.find(n.domain);
  const int64_t opset = it == ctx.graph.opsets.end() ? 17 : it->second;
  const OpSchema* s = OpRegistry::Global().Find(n.domain, n.op_type, opset);
  return s ? s->since_version : 11;
}

}  // namespace switchyard::native
