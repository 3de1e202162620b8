#include "reference/ops/common.h"

namespace switchyard::ops {

Status NodeError(const Node& node, const std::string& msg) {
  return Status::Invalid(NodeLabel(node) + ": " + msg);
}

Status NodeUnsupported(const Node& node, const std::string& msg) {
  return Status::Unsupported(NodeLabel(node) + ": " + msg);
}

Result<int64_t> NormalizeAxis(const Node& node, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    return NodeError(node, "axis " + std::to_string(axis) + " is out of range for rank " +
                               std::to_string(rank));
  }
  return a;
}

Result<std::vector<int64_t>> BroadcastShapes(const Node& node,
                                             const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      const int64_t d = s[i];
      int64_t& o = out[off + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string msg = "shapes cannot be broadcast together:";
      for (const auto& t : shapes) msg += " " + ShapeToString(t);
      return NodeError(node, msg);
    }
  }
  return out;
}

Result<std::vector<Dim>> BroadcastDims(const Node& node,
                                       const std::vector<std::vector<Dim>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<Dim> out(rank, Dim(1));
  for (const auto& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      const Dim& d = s[i];
      Dim& o = out[off + i];
      if (d == o || (d.is_static() && d.value == 1)) continue;
      if (o.is_static() && o.value == 1) {
        o = d;
        continue;
      }
      if (d.is_static() && o.is_static()) {
        return NodeError(node, "dimension " + std::to_string(off + i) + " cannot broadcast: " +
                                   std::to_string(o.value) + " vs " + std::to_string(d.value));
      }
      // One side symbolic: a static size other than 1 wins; two different symbols are unknown.
      if (d.is_static()) {
        o = d;
      } else if (!o.is_static()) {
        o = Dim();
      }
    }
  }
  return out;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    st[static_cast<size_t>(i)] = st[static_cast<size_t>(i) + 1] * shape[static_cast<size_t>(i) + 1];
  }
  return st;
}

std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& in_shape,
                                    const std::vector<int64_t>& out_shape) {
  const size_t rank = out_shape.size();
  const size_t off = rank - in_shape.size();
  std::vector<int64_t> in_strides(rank, 0);
  const std::vector<int64_t> st = Strides(in_shape);
  for (size_t i = 0; i < in_shape.size(); ++i) {
    in_strides[off + i] = in_shape[i] == 1 ? 0 : st[i];
  }
  int64_t n = 1;
  for (int64_t d : out_shape) n *= d;
  std::vector<int64_t> map(static_cast<size_t>(n));
  if (n == 0) return map;
  std::vector<int64_t> idx(rank, 0);
  int64_t lin = 0;
  for (int64_t k = 0; k < n; ++k) {
    map[static_cast<size_t>(k)] = lin;
    // increment idx, keeping `lin` in step
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      const size_t u = static_cast<size_t>(d);
      ++idx[u];
      lin += in_strides[u];
      if (idx[u] < out_shape[u]) break;
      lin -= in_strides[u] * idx[u];
      idx[u] = 0;
    }
  }
  return map;
}

bool NextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    const size_t u = static_cast<size_t>(d);
    if (++idx[u] < shape[u]) return true;
    idx[u] = 0;
  }
  return false;
}

Result<DataType> SameDtype(const InferContext& ctx, const std::vector<size_t>& idx) {
  DataType t = DataType::kUndefined;
  size_t first = 0;
  for (size_t i : idx) {
    const TensorType* in = ctx.input(i);
    if (!in || in->dtype == DataType::kUndefined) continue;
    if (t == DataType::kUndefined) {
      t = in->dtype;
      first = i;
    } else if (in->dtype != t) {
      return NodeError(ctx.node, "input " + std::to_string(i) + " has type " +
                                     DataTypeName(in->dtype) + " but input " +
                                     std::to_string(first) + " has type " + DataTypeName(t));
    }
  }
  return t;
}

Result<std::vector<TensorType>> InferSameAsInput(const InferContext& ctx, size_t i) {
  const TensorType* in = ctx.input(i);
  if (!in) return NodeError(ctx.node, "input " + std::to_string(i) + " is missing");
  return std::vector<TensorType>{*in};
}

Result<std::vector<TensorType>> InferBroadcast(const InferContext& ctx, DataType out) {
  std::vector<size_t> idx;
  std::vector<std::vector<Dim>> shapes;
  bool all_ranked = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType* in = ctx.input(i);
    if (!in) continue;
    idx.push_back(i);
    if (!in->has_shape) all_ranked = false;
    shapes.push_back(in->dims);
  }
  SY_ASSIGN_OR_RETURN(DataType common, SameDtype(ctx, idx));
  const DataType dt = out == DataType::kUndefined ? common : out;
  if (!all_ranked) return std::vector<TensorType>{TensorType::Unranked(dt)};
  SY_ASSIGN_OR_RETURN(std::vector<Dim> dims, BroadcastDims(ctx.node, shapes));
  return std::vector<TensorType>{TensorType(dt, std::move(dims))};
}

bool ConstantInts(const InferContext& ctx, size_t i, std::vector<int64_t>* out) {
  const Tensor* t = ctx.constant(i);
  if (!t) return false;
  *out = t->ToInt64Vector();
  return true;
}

Result<const Tensor*> RequireInput(const KernelContext& ctx, size_t i) {
  const Tensor* t = ctx.input(i);
  if (!t) return NodeError(ctx.node, "required input " + std::to_string(i) + " is missing");
  return t;
}

// dst[i] = src[map[i]] for every element of dst; same dtype (strings included).
void GatherByMap(const Tensor& src, const std::vector<int64_t>& map, Tensor& dst) {
  const int64_t n = dst.numel();
  if (src.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) dst.strings()[i] = src.strings()[map[i]];
    return;
  }
  auto copy = [&](auto tag) {
    using T = decltype(tag);
    const T* s = static_cast<const T*>(src.raw());
    T* d = static_cast<T*>(dst.raw());
    for (int64_t i = 0; i < n; ++i) d[i] = s[map[i]];
  };
  switch (DataTypeSize(src.dtype())) {
    case 1: copy(uint8_t{}); break;
    case 2: copy(uint16_t{}); break;
    case 4: copy(uint32_t{}); break;
    default: copy(uint64_t{}); break;
  }
}

Tensor FromDoubles(DataType dt, std::vector<int64_t> shape, const std::vector<double>& v) {
  Tensor t(dt, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.SetDouble(i, v[static_cast<size_t>(i)]);
  return t;
}

}  // namespace switchyard::ops
