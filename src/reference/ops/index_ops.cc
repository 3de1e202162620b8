// Index-producing and index-driven ops: NonZero, TopK, ArgMax, ArgMin, Trilu, EyeLike, Range,
// CumSum, Unique, ReverseSequence, NonMaxSuppression.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

using Types = std::vector<TensorType>;

// Calls fn(std::vector<K>) with the input's values as exact int64 (integers, bool) or
// double (floats). Strings are refused by callers.
template <typename Fn>
auto WithKeys(const Tensor& x, Fn fn) {
  if (IsFloatType(x.dtype())) return fn(x.ToDoubleVector());
  return fn(x.ToInt64Vector());
}

// A strict weak order in which NaN is greater than every number (so sorting stays
// well-defined on NaN input); integers compare plainly.
inline bool KeyLess(double a, double b) {
  if (std::isnan(b)) return !std::isnan(a);
  if (std::isnan(a)) return false;
  return a < b;
}
inline bool KeyLess(int64_t a, int64_t b) { return a < b; }

// outer x axis x inner decomposition of a shape around `axis`.
void Around(const std::vector<int64_t>& s, int64_t axis, int64_t* outer, int64_t* n,
            int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int64_t d = 0; d < axis; ++d) *outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) *inner *= s[d];
  *n = s[axis];
}

// ---- NonZero ------------------------------------------------------------------------------

Result<std::vector<Tensor>> RunNonZero(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (x->dtype() == DataType::kString) return NodeError(ctx.node, "string input");
  std::vector<std::vector<int64_t>> hits;
  std::vector<int64_t> idx(x->rank(), 0);
  if (x->numel() > 0) {
    int64_t k = 0;
    do {
      if (x->GetDouble(k) != 0.0) hits.push_back(idx);
      ++k;
    } while (NextIndex(idx, x->shape()));
  }
  const int64_t n = static_cast<int64_t>(hits.size());
  Tensor out(DataType::kInt64, {x->rank(), n});
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t d = 0; d < x->rank(); ++d) out.data<int64_t>()[d * n + j] = hits[j][d];
  }
  return std::vector<Tensor>{std::move(out)};
}

Result<Types> InferNonZero(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  return Types{TensorType(DataType::kInt64, {x->has_shape ? Dim(x->rank()) : Dim(), Dim()})};
}

// ---- TopK -------------------------------------------------------------------------------

Result<int64_t> TopKK(const Node& node, int version, const Tensor* k_in) {
  if (version < 10) return node.GetInt("k", -1);
  if (!k_in || k_in->numel() != 1) return NodeError(node, "K must be a 1-element tensor");
  return k_in->GetInt64(0);
}

Result<Types> InferTopK(const InferContext& ctx, int version) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  if (!x->has_shape) {
    return Types{TensorType::Unranked(x->dtype), TensorType::Unranked(DataType::kInt64)};
  }
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", -1), x->rank()));
  std::vector<Dim> dims = x->dims;
  dims[axis] = Dim();
  if (version < 10 || ctx.constant(1)) {
    SY_ASSIGN_OR_RETURN(int64_t k, TopKK(ctx.node, version, ctx.constant(1)));
    if (k < 0) return NodeError(ctx.node, "K must be non-negative");
    if (x->dims[axis].is_static() && k > x->dims[axis].value) {
      return NodeError(ctx.node, "K exceeds the axis length");
    }
    dims[axis] = Dim(k);
  }
  return Types{TensorType(x->dtype, dims), TensorType(DataType::kInt64, dims)};
}

Result<std::vector<Tensor>> RunTopK(const KernelContext& ctx, int version) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (x->dtype() == DataType::kString) return NodeError(ctx.node, "string input");
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", -1), x->rank()));
  SY_ASSIGN_OR_RETURN(int64_t k, TopKK(ctx.node, version, ctx.input(1)));
  const bool largest = version < 11 || ctx.node.GetInt("largest", 1) != 0;
  if (k < 0 || k > x->dim(axis)) return NodeError(ctx.node, "K is out of range for the axis");
  int64_t outer, n, inner;
  Around(x->shape(), axis, &outer, &n, &inner);
  std::vector<int64_t> shape = x->shape();
  shape[axis] = k;
  Tensor values(x->dtype(), shape), indices(DataType::kInt64, shape);
  WithKeys(*x, [&](auto keys) {
    std::vector<int64_t> order(n);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        std::iota(order.begin(), order.end(), 0);
        // Ties keep the lower index first (stable sort on the value only).
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          const auto va = keys[base + a * inner], vb = keys[base + b * inner];
          return largest ? KeyLess(vb, va) : KeyLess(va, vb);
        });
        for (int64_t j = 0; j < k; ++j) {
          const int64_t dst = o * k * inner + j * inner + i;
          const int64_t src = base + order[j] * inner;
          if (IsFloatType(x->dtype())) values.SetDouble(dst, x->GetDouble(src));
          else values.SetInt64(dst, x->GetInt64(src));
          indices.data<int64_t>()[dst] = order[j];
        }
      }
    }
    return 0;
  });
  return std::vector<Tensor>{std::move(values), std::move(indices)};
}

// ---- ArgMax / ArgMin ------------------------------------------------------------------------

Result<Types> InferArg(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  if (!x->has_shape) return Types{TensorType::Unranked(DataType::kInt64)};
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x->rank()));
  std::vector<Dim> dims = x->dims;
  if (ctx.node.GetInt("keepdims", 1) != 0) dims[axis] = Dim(1);
  else dims.erase(dims.begin() + axis);
  return Types{TensorType(DataType::kInt64, dims)};
}

Result<std::vector<Tensor>> RunArg(const KernelContext& ctx, bool is_max) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (x->dtype() == DataType::kString) return NodeError(ctx.node, "string input");
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x->rank()));
  const bool last = ctx.node.GetInt("select_last_index", 0) != 0;
  int64_t outer, n, inner;
  Around(x->shape(), axis, &outer, &n, &inner);
  if (n == 0) return NodeError(ctx.node, "cannot take an arg-reduction over an empty axis");
  std::vector<int64_t> shape = x->shape();
  if (ctx.node.GetInt("keepdims", 1) != 0) shape[axis] = 1;
  else shape.erase(shape.begin() + axis);
  Tensor out(DataType::kInt64, shape);
  WithKeys(*x, [&](auto keys) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        int64_t best = 0;
        for (int64_t j = 1; j < n; ++j) {
          const auto v = keys[base + j * inner], b = keys[base + best * inner];
          const bool better = is_max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
          if (better) best = j;
        }
        out.data<int64_t>()[o * inner + i] = best;
      }
    }
    return 0;
  });
  return std::vector<Tensor>{std::move(out)};
}

// ---- Trilu / EyeLike -------------------------------------------------------------------------

Result<std::vector<Tensor>> RunTrilu(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (x->rank() < 2) return NodeError(ctx.node, "input must have rank >= 2");
  int64_t k = 0;
  if (const Tensor* kt = ctx.input(1)) {
    if (kt->numel() != 1) return NodeError(ctx.node, "k must be a scalar");
    k = kt->GetInt64(0);
  }
  const bool upper = ctx.node.GetInt("upper", 1) != 0;
  const int64_t rows = x->dim(x->rank() - 2), cols = x->dim(x->rank() - 1);
  Tensor out = *x;
  Tensor zero(x->dtype(), {1});
  for (int64_t e = 0; e < out.numel(); ++e) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    const bool keep = upper ? j - i >= k : j - i <= k;
    if (keep) continue;
    if (out.dtype() == DataType::kString) out.strings()[e].clear();
    else out.SetInt64(e, 0);
  }
  return std::vector<Tensor>{std::move(out)};
}

Result<DataType> EyeDtype(const Node& node, DataType in) {
  if (!node.Has("dtype")) return in;
  const int64_t dt = node.GetInt("dtype", 0);
  if (!IsKnownDataType(static_cast<int32_t>(dt)) || dt == static_cast<int64_t>(DataType::kString)) {
    return NodeError(node, "unsupported dtype " + std::to_string(dt));
  }
  return static_cast<DataType>(dt);
}

Result<Types> InferEyeLike(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  SY_ASSIGN_OR_RETURN(DataType dt, EyeDtype(ctx.node, x->dtype));
  if (x->has_shape && x->rank() != 2) return NodeError(ctx.node, "input must be 2-D");
  TensorType t = *x;
  t.dtype = dt;
  return Types{t};
}

Result<std::vector<Tensor>> RunEyeLike(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (x->rank() != 2) return NodeError(ctx.node, "input must be 2-D");
  SY_ASSIGN_OR_RETURN(DataType dt, EyeDtype(ctx.node, x->dtype()));
  const int64_t k = ctx.node.GetInt("k", 0);
  Tensor out(dt, x->shape());
  for (int64_t i = 0; i < x->dim(0); ++i) {
    const int64_t j = i + k;
    if (j >= 0 && j < x->dim(1)) out.SetInt64(i * x->dim(1) + j, 1);
  }
  return std::vector<Tensor>{std::move(out)};
}

// ---- Range / CumSum -------------------------------------------------------------------------

Result<int64_t> RangeCount(const Node& node, const Tensor& s, const Tensor& l, const Tensor& d) {
  if (s.numel() != 1 || l.numel() != 1 || d.numel() != 1) {
    return NodeError(node, "start, limit and delta must be scalars");
  }
  if (IsFloatType(s.dtype())) {
    const double a = s.GetDouble(0), b = l.GetDouble(0), c = d.GetDouble(0);
    if (c == 0) return NodeError(node, "delta is 0");
    const double n = std::ceil((b - a) / c);
    if (!(n < 1e12)) return n > 0 ? NodeError(node, "range is too long") : Result<int64_t>(0);
    return std::max<int64_t>(0, static_cast<int64_t>(n));
  }
  const int64_t a = s.GetInt64(0), b = l.GetInt64(0), c = d.GetInt64(0);
  if (c == 0) return NodeError(node, "delta is 0");
  int64_t span = 0;
  if (__builtin_sub_overflow(b, a, &span)) return NodeError(node, "range is too long");
  if ((span > 0) != (c > 0) || span == 0) return 0;
  // ceil(span / c) with span and c of the same sign, without overflow
  const int64_t q = span / c;
  return q + (span % c != 0 ? 1 : 0);
}

Result<Types> InferRange(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(DataType dt, SameDtype(ctx, {0, 1, 2}));
  if (ctx.constant(0) && ctx.constant(1) && ctx.constant(2)) {
    SY_ASSIGN_OR_RETURN(int64_t n, RangeCount(ctx.node, *ctx.constant(0), *ctx.constant(1),
                                              *ctx.constant(2)));
    return Types{TensorType(dt, {Dim(n)})};
  }
  return Types{TensorType(dt, {Dim()})};
}

Result<std::vector<Tensor>> RunRange(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* s, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* l, RequireInput(ctx, 1));
  SY_ASSIGN_OR_RETURN(const Tensor* d, RequireInput(ctx, 2));
  SY_ASSIGN_OR_RETURN(int64_t n, RangeCount(ctx.node, *s, *l, *d));
  Tensor out(s->dtype(), {n});
  for (int64_t i = 0; i < n; ++i) {
    if (IsFloatType(s->dtype())) out.SetDouble(i, s->GetDouble(0) + i * d->GetDouble(0));
    else out.SetInt64(i, s->GetInt64(0) + i * d->GetInt64(0));
  }
  return std::vector<Tensor>{std::move(out)};
}

Result<std::vector<Tensor>> RunCumSum(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* a, RequireInput(ctx, 1));
  if (a->numel() != 1) return NodeError(ctx.node, "axis must be a scalar");
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, a->GetInt64(0), x->rank()));
  const bool exclusive = ctx.node.GetInt("exclusive", 0) != 0;
  const bool reverse = ctx.node.GetInt("reverse", 0) != 0;
  int64_t outer, n, inner;
  Around(x->shape(), axis, &outer, &n, &inner);
  Tensor out(x->dtype(), x->shape());
  const bool fl = IsFloatType(x->dtype());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double accd = 0;
      int64_t acci = 0;
      for (int64_t t = 0; t < n; ++t) {
        const int64_t j = reverse ? n - 1 - t : t;
        const int64_t e = (o * n + j) * inner + i;
        if (exclusive) {
          if (fl) out.SetDouble(e, accd); else out.SetInt64(e, acci);
        }
        if (fl) accd += x->GetDouble(e); else acci += x->GetInt64(e);
        if (!exclusive) {
          if (fl) out.SetDouble(e, accd); else out.SetInt64(e, acci);
        }
      }
    }
  }
  return std::vector<Tensor>{std::move(out)};
}


// ---- Unique -------------------------------------------------------------------------------

// Unique over slices along `axis` (or elements of the flattened input). Keys compare
// lexicographically; K is double, int64 or std::string.
template <typename K>
Result<std::vector<Tensor>> UniqueImpl(const KernelContext& ctx, const Tensor& x,
                                       const std::vector<K>& keys, int64_t axis, bool sorted) {
  int64_t outer, n, inner;
  Around(x.shape(), axis, &outer, &n, &inner);
  auto slice = [&](int64_t j) {
    std::vector<K> s;
    s.reserve(static_cast<size_t>(outer * inner));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) s.push_back(keys[(o * n + j) * inner + i]);
    }
    return s;
  };
  std::map<std::vector<K>, int64_t> first;  // slice -> unique id (first-occurrence order)
  std::vector<int64_t> firsts, counts, inverse(n);
  std::vector<std::vector<K>> uniq;
  for (int64_t j = 0; j < n; ++j) {
    std::vector<K> s = slice(j);
    auto it = first.find(s);
    if (it == first.end()) {
      it = first.emplace(s, static_cast<int64_t>(firsts.size())).first;
      firsts.push_back(j);
      counts.push_back(0);
      uniq.push_back(std::move(s));
    }
    inverse[j] = it->second;
    ++counts[it->second];
  }
  const int64_t u = static_cast<int64_t>(firsts.size());
  std::vector<int64_t> order(u);  // output position -> unique id
  std::iota(order.begin(), order.end(), 0);
  if (sorted) {
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return uniq[a] < uniq[b]; });
  }
  std::vector<int64_t> pos(u);
  for (int64_t p = 0; p < u; ++p) pos[order[p]] = p;
  std::vector<int64_t> shape = x.shape();
  shape[axis] = u;
  Tensor y(x.dtype(), shape);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t p = 0; p < u; ++p) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t src = (o * n + firsts[order[p]]) * inner + i, dst = (o * u + p) * inner + i;
        if (x.dtype() == DataType::kString) y.strings()[dst] = x.strings()[src];
        else if (IsFloatType(x.dtype())) y.SetDouble(dst, x.GetDouble(src));
        else y.SetInt64(dst, x.GetInt64(src));
      }
    }
  }
  std::vector<int64_t> ind(u), inv(n), cnt(u);
  for (int64_t p = 0; p < u; ++p) {
    ind[p] = firsts[order[p]];
    cnt[p] = counts[order[p]];
  }
  for (int64_t j = 0; j < n; ++j) inv[j] = pos[inverse[j]];
  std::vector<Tensor> outs{std::move(y), Tensor::FromInt64(ind, {u}), Tensor::FromInt64(inv, {n}),
                           Tensor::FromInt64(cnt, {u})};
  outs.resize(std::max<size_t>(1, ctx.num_outputs()));
  return outs;
}

Result<std::vector<Tensor>> RunUnique(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x0, RequireInput(ctx, 0));
  const bool has_axis = ctx.node.Has("axis");
  const Tensor x = has_axis ? *x0 : x0->Reshaped({x0->numel()});
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x.rank()));
  const bool sorted = ctx.node.GetInt("sorted", 1) != 0;
  if (x.dtype() == DataType::kString) return UniqueImpl(ctx, x, x.strings(), axis, sorted);
  if (IsFloatType(x.dtype())) return UniqueImpl(ctx, x, x.ToDoubleVector(), axis, sorted);
  return UniqueImpl(ctx, x, x.ToInt64Vector(), axis, sorted);
}

Result<Types> InferUnique(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  TensorType y(x->dtype, {Dim()});
  if (ctx.node.Has("axis")) {
    if (!x->has_shape) {
      y = TensorType::Unranked(x->dtype);
    } else {
      SY_ASSIGN_OR_RETURN(int64_t axis,
                          NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x->rank()));
      y = *x;
      y.dims[axis] = Dim();
    }
  }
  const TensorType idx(DataType::kInt64, {Dim()});
  return Types{y, idx, idx, idx};
}

// ---- ReverseSequence ---------------------------------------------------------------------

Result<std::vector<Tensor>> RunReverseSequence(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* lens_t, RequireInput(ctx, 1));
  if (x->rank() < 2) return NodeError(ctx.node, "input must have rank >= 2");
  SY_ASSIGN_OR_RETURN(int64_t bax, NormalizeAxis(ctx.node, ctx.node.GetInt("batch_axis", 1), x->rank()));
  SY_ASSIGN_OR_RETURN(int64_t tax, NormalizeAxis(ctx.node, ctx.node.GetInt("time_axis", 0), x->rank()));
  if (bax == tax || bax > 1 || tax > 1) return NodeError(ctx.node, "batch_axis and time_axis must be 0 and 1");
  const std::vector<int64_t> lens = lens_t->ToInt64Vector();
  if (static_cast<int64_t>(lens.size()) != x->dim(bax)) {
    return NodeError(ctx.node, "sequence_lens length differs from the batch size");
  }
  for (int64_t l : lens) {
    if (l < 0 || l > x->dim(tax)) return NodeError(ctx.node, "sequence length out of range");
  }
  Tensor out = *x;
  const std::vector<int64_t> st = Strides(x->shape());
  const int64_t inner = x->rank() > 2 ? st[1] : 1;
  for (int64_t b = 0; b < x->dim(bax); ++b) {
    for (int64_t t = 0; t < lens[b]; ++t) {
      const int64_t src_t = lens[b] - 1 - t;
      const int64_t dst = b * st[bax] + t * st[tax], src = b * st[bax] + src_t * st[tax];
      for (int64_t i = 0; i < inner; ++i) {
        if (x->dtype() == DataType::kString) out.strings()[dst + i] = x->strings()[src + i];
        else if (IsFloatType(x->dtype())) out.SetDouble(dst + i, x->GetDouble(src + i));
        else out.SetInt64(dst + i, x->GetInt64(src + i));
      }
    }
  }
  return std::vector<Tensor>{std::move(out)};
}

// ---- NonMaxSuppression ------------------------------------------------------------------

struct Box {
  double y1, x1, y2, x2;
};

double Iou(const Box& a, const Box& b) {
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const double iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return 0;
  const double inter = ih * iw;
  const double uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
  return uni <= 0 ? 0 : inter / uni;
}

Result<Types> InferNms(const InferContext& ctx) {
  return Types{TensorType(DataType::kInt64, {Dim(), Dim(3)})};
}

Result<std::vector<Tensor>> RunNms(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* boxes, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* scores, RequireInput(ctx, 1));
  if (boxes->rank() != 3 || boxes->dim(2) != 4 || scores->rank() != 3 ||
      scores->dim(0) != boxes->dim(0) || scores->dim(2) != boxes->dim(1)) {
    return NodeError(ctx.node, "boxes must be [B,N,4] and scores [B,C,N]");
  }
  const int64_t max_out = ctx.input(2) && ctx.input(2)->numel() ? ctx.input(2)->GetInt64(0) : 0;
  const double iou_th = ctx.input(3) && ctx.input(3)->numel() ? ctx.input(3)->GetDouble(0) : 0.0;
  const bool has_score_th = ctx.input(4) && ctx.input(4)->numel();
  const double score_th = has_score_th ? ctx.input(4)->GetDouble(0) : 0.0;
  const bool center = ctx.node.GetInt("center_point_box", 0) != 0;
  const int64_t nb = boxes->dim(0), nc = scores->dim(1), n = boxes->dim(1);
  std::vector<int64_t> sel;
  for (int64_t b = 0; b < nb; ++b) {
    std::vector<Box> bx(n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t o = (b * n + i) * 4;
      const double v0 = boxes->GetDouble(o), v1 = boxes->GetDouble(o + 1),
                   v2 = boxes->GetDouble(o + 2), v3 = boxes->GetDouble(o + 3);
      if (center) {  // [x_center, y_center, width, height]
        bx[i] = {v1 - v3 / 2, v0 - v2 / 2, v1 + v3 / 2, v0 + v2 / 2};
      } else {
        bx[i] = {std::min(v0, v2), std::min(v1, v3), std::max(v0, v2), std::max(v1, v3)};
      }
    }
    for (int64_t c = 0; c < nc; ++c) {
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < n; ++i) {
        if (!has_score_th || scores->GetDouble((b * nc + c) * n + i) > score_th) cand.push_back(i);
      }
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t p, int64_t q) {
        return KeyLess(scores->GetDouble((b * nc + c) * n + q), scores->GetDouble((b * nc + c) * n + p));
      });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool ok = true;
        for (int64_t k : kept) {
          if (Iou(bx[i], bx[k]) > iou_th) {
            ok = false;
            break;
          }
        }
        if (!ok) continue;
        kept.push_back(i);
        sel.insert(sel.end(), {b, c, i});
      }
    }
  }
  const int64_t m = static_cast<int64_t>(sel.size() / 3);
  return std::vector<Tensor>{Tensor::FromInt64(sel, {m, 3})};
}

}  // namespace

SY_REGISTER_OPS(IndexOps) {
  for (int v : {9, 13}) {
    reg.Register({"", "NonZero", v, 1, 1, 1, 1, InferNonZero, RunNonZero});
  }
  for (int v : {1, 10, 11}) {
    reg.Register({"", "TopK", v, v >= 10 ? 2 : 1, v >= 10 ? 2 : 1, 2, 2,
                  [v](const InferContext& c) { return InferTopK(c, v); },
                  [v](const KernelContext& c) { return RunTopK(c, v); }});
  }
  for (int v : {1, 11, 12, 13}) {
    reg.Register({"", "ArgMax", v, 1, 1, 1, 1, InferArg,
                  [](const KernelContext& c) { return RunArg(c, true); }});
    reg.Register({"", "ArgMin", v, 1, 1, 1, 1, InferArg,
                  [](const KernelContext& c) { return RunArg(c, false); }});
  }
  reg.Register({"", "Trilu", 14, 1, 2, 1, 1,
                [](const InferContext& c) { return InferSameAsInput(c, 0); }, RunTrilu});
  reg.Register({"", "EyeLike", 9, 1, 1, 1, 1, InferEyeLike, RunEyeLike});
  reg.Register({"", "Range", 11, 3, 3, 1, 1, InferRange, RunRange});
  for (int v : {11, 14}) {
    reg.Register({"", "CumSum", v, 2, 2, 1, 1,
                  [](const InferContext& c) { return InferSameAsInput(c, 0); }, RunCumSum});
  }
  reg.Register({"", "Unique", 11, 1, 1, 1, 4, InferUnique, RunUnique});
  reg.Register({"", "ReverseSequence", 10, 2, 2, 1, 1,
                [](const InferContext& c) { return InferSameAsInput(c, 0); }, RunReverseSequence});
  for (int v : {10, 11}) {
    reg.Register({"", "NonMaxSuppression", v, 2, 5, 1, 1, InferNms, RunNms});
  }
}

}  // namespace switchyard::ops
