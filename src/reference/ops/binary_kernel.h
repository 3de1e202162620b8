// Shared machinery of the elementwise families (unary, binary, logical, variadic,
// activation): typed element access, dtype dispatch and a broadcasting row iterator.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "reference/ops/common.h"

namespace switchyard::ops::elem {

// 16-bit float storage types; arithmetic goes through double.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

template <typename T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                                 std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Element -> double (exact for every type but 64-bit integers above 2^53).
template <typename T>
inline double ToF(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return HalfToFloat(v.bits);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return Bfloat16ToFloat(v.bits);
  } else {
    return static_cast<double>(v);
  }
}

// double -> element, rounding like Tensor::SetDouble (integers clamp, NaN -> 0).
template <typename T>
inline T FromF(double v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{FloatToHalf(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{FloatToBfloat16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return 0;
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo) return std::numeric_limits<T>::min();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// Wrapping integer arithmetic (two's complement, no signed-overflow UB).
template <typename T>
using WideUnsigned = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
template <typename T>
inline T WrapAdd(T x, T y) {
  return static_cast<T>(static_cast<WideUnsigned<T>>(x) + static_cast<WideUnsigned<T>>(y));
}
template <typename T>
inline T WrapSub(T x, T y) {
  return static_cast<T>(static_cast<WideUnsigned<T>>(x) - static_cast<WideUnsigned<T>>(y));
}
template <typename T>
inline T WrapMul(T x, T y) {
  return static_cast<T>(static_cast<WideUnsigned<T>>(x) * static_cast<WideUnsigned<T>>(y));
}
template <typename T>
inline T WrapNeg(T x) {
  return WrapSub<T>(T(0), x);
}

template <typename T>
struct Tag {
  using type = T;
};

// Calls fn(Tag<T>{}) for the C++ element type of `dt`; false when `dt` has none here
// (string, undefined).
template <typename Fn>
bool Dispatch(DataType dt, Fn&& fn) {
  switch (dt) {
    case DataType::kFloat: fn(Tag<float>{}); return true;
    case DataType::kDouble: fn(Tag<double>{}); return true;
    case DataType::kFloat16: fn(Tag<Half>{}); return true;
    case DataType::kBfloat16: fn(Tag<BFloat16>{}); return true;
    case DataType::kInt8: fn(Tag<int8_t>{}); return true;
    case DataType::kUint8: fn(Tag<uint8_t>{}); return true;
    case DataType::kInt16: fn(Tag<int16_t>{}); return true;
    case DataType::kUint16: fn(Tag<uint16_t>{}); return true;
    case DataType::kInt32: fn(Tag<int32_t>{}); return true;
    case DataType::kUint32: fn(Tag<uint32_t>{}); return true;
    case DataType::kInt64: fn(Tag<int64_t>{}); return true;
    case DataType::kUint64: fn(Tag<uint64_t>{}); return true;
    case DataType::kBool: fn(Tag<bool>{}); return true;
    default: return false;
  }
}

// Dtype classes an op accepts, checked by infer and run.
enum TypeClass : unsigned {
  kFloats = 1,      // float16, bfloat16, float, double
  kSignedInts = 2,  // int8..int64
  kUnsignedInts = 4,
  kBools = 8,
  kStrings = 16,
  kInts = kSignedInts | kUnsignedInts,
  kNumeric = kFloats | kInts,
  kAll = kNumeric | kBools | kStrings,
};

inline bool InClass(DataType dt, unsigned cls) {
  if (dt == DataType::kUndefined) return true;  // unknown at inference time
  if (IsFloatType(dt)) return cls & kFloats;
  if (dt == DataType::kBool) return cls & kBools;
  if (dt == DataType::kString) return cls & kStrings;
  if (IsIntegerType(dt)) return cls & (IsSignedType(dt) ? kSignedInts : kUnsignedInts);
  return false;
}

inline Status CheckClass(const Node& node, DataType dt, unsigned cls, const char* what) {
  if (InClass(dt, cls)) return Status::Ok();
  return NodeError(node, std::string(what) + " of type " + DataTypeName(dt) +
                             " is not supported by " + node.op_type);
}

// Iterates the output of a numpy broadcast of N inputs as rows: contiguous runs of the
// output where each input advances by a fixed stride (0 or 1 after dim coalescing).
class BroadcastPlan {
 public:
  BroadcastPlan(const std::vector<std::vector<int64_t>>& in_shapes,
                const std::vector<int64_t>& out_shape);

  int64_t numel() const { return numel_; }
  const std::vector<int64_t>& out_shape() const { return out_shape_; }

  // fn(out_offset, in_offsets (N), in_strides (N), row_length) for every row.
  template <typename Fn>
  void ForEachRow(Fn&& fn) const {
    if (numel_ == 0) return;
    const size_t n = strides_.size();
    const size_t rank = dims_.size();
    std::vector<int64_t> idx(rank, 0), offs(n, 0), inner(n, 0);
    for (size_t k = 0; k < n; ++k) inner[k] = rank ? strides_[k][rank - 1] : 0;
    const int64_t row = rank ? dims_[rank - 1] : 1;
    int64_t out = 0;
    while (true) {
      fn(out, offs.data(), inner.data(), row);
      out += row;
      if (out >= numel_) return;
      // Advance the outer multi-index (dims 0..rank-2), keeping offsets in step.
      for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
        const size_t u = static_cast<size_t>(d);
        ++idx[u];
        for (size_t k = 0; k < n; ++k) offs[k] += strides_[k][u];
        if (idx[u] < dims_[u]) break;
        for (size_t k = 0; k < n; ++k) offs[k] -= strides_[k][u] * idx[u];
        idx[u] = 0;
      }
    }
  }

 private:
  std::vector<int64_t> out_shape_;
  std::vector<int64_t> dims_;                  // coalesced output dims
  std::vector<std::vector<int64_t>> strides_;  // per input, per coalesced dim
  int64_t numel_ = 0;
};

inline BroadcastPlan::BroadcastPlan(const std::vector<std::vector<int64_t>>& in_shapes,
                                    const std::vector<int64_t>& out_shape)
    : out_shape_(out_shape) {
  numel_ = 1;
  for (int64_t d : out_shape) numel_ *= d;
  const size_t rank = out_shape.size();
  std::vector<std::vector<int64_t>> st(in_shapes.size(), std::vector<int64_t>(rank, 0));
  for (size_t k = 0; k < in_shapes.size(); ++k) {
    const auto& s = in_shapes[k];
    const size_t off = rank - s.size();
    const std::vector<int64_t> contig = Strides(s);
    for (size_t i = 0; i < s.size(); ++i) st[k][off + i] = s[i] == 1 ? 0 : contig[i];
  }
  // Drop size-1 dims, then merge neighbours that every input walks the same way.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> cst(in_shapes.size());
  for (size_t i = 0; i < rank; ++i) {
    if (out_shape[i] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; merge && k < st.size(); ++k) {
      merge = cst[k].back() == st[k][i] * out_shape[i];
    }
    if (merge) {
      dims.back() *= out_shape[i];
      for (size_t k = 0; k < st.size(); ++k) cst[k].back() = st[k][i];
    } else {
      dims.push_back(out_shape[i]);
      for (size_t k = 0; k < st.size(); ++k) cst[k].push_back(st[k][i]);
    }
  }
  dims_ = std::move(dims);
  strides_ = std::move(cst);
}

// Output shape of broadcasting the given tensors, as an error naming the node if
// impossible.
inline Result<std::vector<int64_t>> BroadcastOf(const Node& node,
                                                const std::vector<const Tensor*>& ts) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor* t : ts) shapes.push_back(t->shape());
  return BroadcastShapes(node, shapes);
}

// out[i] = op(a[i'], b[i'']) over the broadcast of a and b; TA/TB/TO are storage types.
template <typename TA, typename TB, typename TO, typename Op>
void BinaryLoop(const Tensor& a, const Tensor& b, Tensor& out, Op&& op) {
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TO* po = out.data<TO>();
  if (a.shape() == b.shape()) {
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i], pb[i]);
    return;
  }
  BroadcastPlan plan({a.shape(), b.shape()}, out.shape());
  plan.ForEachRow([&](int64_t o, const int64_t* off, const int64_t* st, int64_t n) {
    const TA* ra = pa + off[0];
    const TB* rb = pb + off[1];
    TO* ro = po + o;
    if (st[0] == 1 && st[1] == 0) {
      const TB y = *rb;
      for (int64_t i = 0; i < n; ++i) ro[i] = op(ra[i], y);
    } else if (st[0] == 0 && st[1] == 1) {
      const TA x = *ra;
      for (int64_t i = 0; i < n; ++i) ro[i] = op(x, rb[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) ro[i] = op(ra[i * st[0]], rb[i * st[1]]);
    }
  });
}

// Output types of a broadcasting op over inputs `idx` (those present), with dtype `dt`.
inline Result<std::vector<TensorType>> BroadcastTypes(const InferContext& ctx,
                                                      const std::vector<size_t>& idx,
                                                      DataType dt) {
  std::vector<std::vector<Dim>> shapes;
  for (size_t i : idx) {
    const TensorType* in = ctx.input(i);
    if (!in) continue;
    if (!in->has_shape) return std::vector<TensorType>{TensorType::Unranked(dt)};
    shapes.push_back(in->dims);
  }
  SY_ASSIGN_OR_RETURN(std::vector<Dim> dims, BroadcastDims(ctx.node, shapes));
  return std::vector<TensorType>{TensorType(dt, std::move(dims))};
}

inline DataType InDtype(const InferContext& ctx, size_t i) {
  const TensorType* t = ctx.input(i);
  return t ? t->dtype : DataType::kUndefined;
}

}  // namespace switchyard::ops::elem
