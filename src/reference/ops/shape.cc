// Shape ops: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Shape, Size, Expand, Tile.
#include <algorithm>
#include <cstring>
#include <set>

#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {


// For each element of out_shape (row-major), offset + sum(idx[d] * strides[d]).
std::vector<int64_t> StridedMap(const std::vector<int64_t>& out_shape,
                                const std::vector<int64_t>& strides, int64_t offset) {
  int64_t n = 1;
  for (int64_t d : out_shape) n *= d;
  std::vector<int64_t> map(static_cast<size_t>(n));
  if (n == 0) return map;
  std::vector<int64_t> idx(out_shape.size(), 0);
  int64_t lin = offset;
  for (int64_t k = 0; k < n; ++k) {
    map[k] = lin;
    for (int64_t d = static_cast<int64_t>(out_shape.size()) - 1; d >= 0; --d) {
      ++idx[d];
      lin += strides[d];
      if (idx[d] < out_shape[d]) break;
      lin -= strides[d] * idx[d];
      idx[d] = 0;
    }
  }
  return map;
}

// Product of dims [a, b): static when all are; the single symbolic dim when the rest are 1.
// A static product that overflows int64 describes no tensor that can exist: an error.
Result<Dim> DimProduct(const Node& node, const std::vector<Dim>& dims, size_t a, size_t b) {
  int64_t p = 1;
  const Dim* sym = nullptr;
  int n_sym = 0;
  for (size_t i = a; i < b; ++i) {
    // A zero anywhere makes the product 0 whatever the other dims, so no overflow.
    if (dims[i].is_static() && dims[i].value == 0) p = 0;
  }
  for (size_t i = a; i < b && p != 0; ++i) {
    if (dims[i].is_static()) {
      if (__builtin_mul_overflow(p, dims[i].value, &p)) {
        return NodeError(node, "product of input dims [" + std::to_string(a) + ", " +
                                   std::to_string(b) + ") overflows int64 at dim " +
                                   std::to_string(i) + " = " + std::to_string(dims[i].value));
      }
    } else {
      sym = &dims[i];
      ++n_sym;
    }
  }
  if (n_sym == 0) return Dim(p);
  if (n_sym == 1 && p == 1) return *sym;
  return Dim();
}

std::vector<Dim> UnknownDims(size_t n) { return std::vector<Dim>(n, Dim()); }

// ---- Reshape ------------------------------------------------------------------------

// Resolves a Reshape target against the input dims (symbolic allowed). Errors on invalid
// targets; unknown output dims stay Dim().
Result<std::vector<Dim>> ReshapeDims(const Node& node, const std::vector<Dim>& in,
                                     const std::vector<int64_t>& shape, bool allowzero) {
  std::vector<Dim> out(shape.size());
  int64_t infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t s = shape[i];
    if (s == -1) {
      if (infer_at >= 0) return NodeError(node, "shape has more than one -1");
      infer_at = static_cast<int64_t>(i);
    } else if (s == 0 && !allowzero) {
      if (i >= in.size()) {
        return NodeError(node, "shape[" + std::to_string(i) + "] is 0 but the input has rank " +
                                   std::to_string(in.size()));
      }
      out[i] = in[i];
    } else if (s < 0) {
      return NodeError(node, "shape[" + std::to_string(i) + "] = " + std::to_string(s) +
                                 " is invalid");
    } else {
      out[i] = Dim(s);
    }
  }
  if (allowzero && infer_at >= 0 &&
      std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    return NodeError(node, "shape has both 0 (with allowzero=1) and -1");
  }
  // Cancel symbolic dims present on both sides; compare static products.
  std::multiset<std::string> in_syms;
  int64_t in_prod = 1;
  bool in_unknown = false;
  for (const Dim& d : in) {
    if (d.is_static()) {
      if (__builtin_mul_overflow(in_prod, d.value, &in_prod)) return NodeError(node, "input is too large");
    } else if (d.symbol.empty()) in_unknown = true;
    else in_syms.insert(d.symbol);
  }
  int64_t out_prod = 1;
  bool out_unknown = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (static_cast<int64_t>(i) == infer_at) continue;
    const Dim& d = out[i];
    if (d.is_static()) {
      if (__builtin_mul_overflow(out_prod, d.value, &out_prod)) {
        return NodeError(node, "shape " + ShapeToString(shape) + " is too large");
      }
    } else if (!d.symbol.empty() && in_syms.count(d.symbol)) {
      in_syms.erase(in_syms.find(d.symbol));
    } else {
      out_unknown = true;
    }
  }
  if (in_unknown || out_unknown) return out;  // -1 (if any) stays unknown
  if (infer_at >= 0) {
    if (in_syms.empty()) {
      if (out_prod == 0 || in_prod % out_prod != 0) {
        if (out_prod == 0 && in_prod == 0) return out;  // ambiguous: leave unknown
        return NodeError(node, "cannot infer -1: input has " + std::to_string(in_prod) +
                                   " elements, not divisible by " + std::to_string(out_prod));
      }
      out[infer_at] = Dim(in_prod / out_prod);
    } else if (in_syms.size() == 1 && in_prod == out_prod) {
      out[infer_at] = Dim::Symbol(*in_syms.begin());
    }
  } else if (in_syms.empty() && in_prod != out_prod) {
    return NodeError(node, "cannot reshape " + std::to_string(in_prod) + " elements into " +
                               ShapeToString(shape));
  }
  return out;
}

Result<std::vector<TensorType>> InferReshape(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  const TensorType* s = ctx.input(1);
  if (!x || !s) return NodeError(ctx.node, "Reshape needs data and shape inputs");
  if (s->dtype != DataType::kInt64 && s->dtype != DataType::kUndefined) {
    return NodeError(ctx.node, "shape input must be int64");
  }
  const bool allowzero = ctx.node.GetInt("allowzero", 0) != 0;
  std::vector<int64_t> shape;
  if (ConstantInts(ctx, 1, &shape)) {
    if (!x->has_shape) {
      // Without input dims, only entries that are positive (or 0 with allowzero) are known.
      std::vector<Dim> out;
      for (int64_t v : shape) out.push_back(v > 0 || (v == 0 && allowzero) ? Dim(v) : Dim());
      return std::vector<TensorType>{TensorType(x->dtype, out)};
    }
    SY_ASSIGN_OR_RETURN(std::vector<Dim> dims, ReshapeDims(ctx.node, x->dims, shape, allowzero));
    return std::vector<TensorType>{TensorType(x->dtype, std::move(dims))};
  }
  if (s->has_shape && s->dims.size() == 1 && s->dims[0].is_static()) {
    return std::vector<TensorType>{TensorType(x->dtype, UnknownDims(s->dims[0].value))};
  }
  return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
}

Result<std::vector<Tensor>> RunReshape(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* s, RequireInput(ctx, 1));
  if (s->rank() != 1) return NodeError(ctx.node, "shape input must be 1-D");
  const bool allowzero = ctx.node.GetInt("allowzero", 0) != 0;
  std::vector<Dim> in(x->shape().begin(), x->shape().end());
  SY_ASSIGN_OR_RETURN(std::vector<Dim> dims,
                      ReshapeDims(ctx.node, in, s->ToInt64Vector(), allowzero));
  std::vector<int64_t> out;
  for (const Dim& d : dims) {
    if (!d.is_static()) return NodeError(ctx.node, "cannot infer the -1 dimension");
    out.push_back(d.value);
  }
  auto n = CheckedNumElements(out);
  if (!n.ok() || *n != x->numel()) {
    return NodeError(ctx.node, "cannot reshape " + ShapeToString(x->shape()) + " into " +
                                   ShapeToString(out));
  }
  return std::vector<Tensor>{x->Reshaped(out)};
}

// ---- Flatten --------------------------------------------------------------------------

Result<std::vector<TensorType>> InferFlatten(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  if (!x->has_shape) return std::vector<TensorType>{TensorType(x->dtype, UnknownDims(2))};
  const int64_t r = x->rank();
  int64_t axis = ctx.node.GetInt("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return NodeError(ctx.node, "axis is out of range");
  SY_ASSIGN_OR_RETURN(Dim outer, DimProduct(ctx.node, x->dims, 0, static_cast<size_t>(axis)));
  SY_ASSIGN_OR_RETURN(Dim inner, DimProduct(ctx.node, x->dims, static_cast<size_t>(axis),
                                            x->dims.size()));
  return std::vector<TensorType>{TensorType(x->dtype, {outer, inner})};
}

Result<std::vector<Tensor>> RunFlatten(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  const int64_t r = x->rank();
  int64_t axis = ctx.node.GetInt("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return NodeError(ctx.node, "axis is out of range");
  int64_t a = 1;
  for (int64_t i = 0; i < axis; ++i) a *= x->dim(i);
  const int64_t b = a == 0 ? 0 : x->numel() / a;
  int64_t b_exact = 1;
  for (int64_t i = axis; i < r; ++i) b_exact *= x->dim(i);
  return std::vector<Tensor>{x->Reshaped({a, a == 0 ? b_exact : b})};
}

// ---- Squeeze / Unsqueeze ----------------------------------------------------------------

// Axes from the attribute (older opsets) or input 1 (opset 13+). `known` false when the
// input is not constant.
bool AxesFrom(const Node& node, bool from_input, const Tensor* axes_in, std::vector<int64_t>* axes,
              bool* present) {
  if (from_input) {
    *present = node.HasInput(1);
    if (!*present) return true;
    if (!axes_in) return false;
    *axes = axes_in->ToInt64Vector();
    return true;
  }
  *present = node.Has("axes");
  *axes = node.GetInts("axes");
  return true;
}

Result<std::vector<int64_t>> NormalizeAxes(const Node& node, std::vector<int64_t> axes,
                                           int64_t rank) {
  for (int64_t& a : axes) {
    SY_ASSIGN_OR_RETURN(a, NormalizeAxis(node, a, rank));
  }
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return NodeError(node, "axes contain a duplicate");
  }
  return sorted;
}

Result<std::vector<TensorType>> InferSqueeze(const InferContext& ctx, bool from_input) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  std::vector<int64_t> axes;
  bool present = false;
  const bool known = AxesFrom(ctx.node, from_input, ctx.constant(1), &axes, &present);
  if (!x->has_shape || !known) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  if (axes.empty()) present = false;  // an empty axes tensor means "all 1s", as omitted
  std::vector<Dim> out;
  if (!present) {
    for (const Dim& d : x->dims) {
      if (!d.is_static()) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
      if (d.value != 1) out.push_back(d);
    }
    return std::vector<TensorType>{TensorType(x->dtype, out)};
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> ax, NormalizeAxes(ctx.node, axes, x->rank()));
  for (size_t i = 0; i < x->dims.size(); ++i) {
    if (std::binary_search(ax.begin(), ax.end(), static_cast<int64_t>(i))) {
      if (x->dims[i].is_static() && x->dims[i].value != 1) {
        return NodeError(ctx.node, "cannot squeeze axis " + std::to_string(i) + " of size " +
                                       std::to_string(x->dims[i].value));
      }
      continue;
    }
    out.push_back(x->dims[i]);
  }
  return std::vector<TensorType>{TensorType(x->dtype, out)};
}

Result<std::vector<Tensor>> RunSqueeze(const KernelContext& ctx, bool from_input) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  std::vector<int64_t> axes;
  bool present = false;
  AxesFrom(ctx.node, from_input, ctx.input(1), &axes, &present);
  if (from_input && present && !ctx.input(1)) return NodeError(ctx.node, "axes input missing");
  if (axes.empty()) present = false;  // an empty axes tensor means "all 1s", as omitted
  std::vector<int64_t> out;
  if (!present) {
    for (int64_t d : x->shape()) if (d != 1) out.push_back(d);
  } else {
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> ax, NormalizeAxes(ctx.node, axes, x->rank()));
    for (int64_t i = 0; i < x->rank(); ++i) {
      if (std::binary_search(ax.begin(), ax.end(), i)) {
        if (x->dim(i) != 1) {
          return NodeError(ctx.node, "cannot squeeze axis " + std::to_string(i) + " of size " +
                                         std::to_string(x->dim(i)));
        }
        continue;
      }
      out.push_back(x->dim(i));
    }
  }
  return std::vector<Tensor>{x->Reshaped(out)};
}

template <typename D>
Result<std::vector<D>> UnsqueezeDims(const Node& node, const std::vector<D>& in,
                                     const std::vector<int64_t>& axes) {
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes.size());
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> ax, NormalizeAxes(node, axes, out_rank));
  std::vector<D> out;
  size_t j = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (std::binary_search(ax.begin(), ax.end(), i)) out.push_back(D(1));
    else out.push_back(in[j++]);
  }
  return out;
}

Result<std::vector<TensorType>> InferUnsqueeze(const InferContext& ctx, bool from_input) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  std::vector<int64_t> axes;
  bool present = false;
  const bool known = AxesFrom(ctx.node, from_input, ctx.constant(1), &axes, &present);
  if (!present) return NodeError(ctx.node, "Unsqueeze requires axes");
  if (!known) {
    const TensorType* a = ctx.input(1);
    if (x->has_shape && a && a->has_shape && a->dims.size() == 1 && a->dims[0].is_static()) {
      return std::vector<TensorType>{
          TensorType(x->dtype, UnknownDims(x->dims.size() + a->dims[0].value))};
    }
    return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  }
  if (!x->has_shape) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  SY_ASSIGN_OR_RETURN(std::vector<Dim> dims, UnsqueezeDims(ctx.node, x->dims, axes));
  return std::vector<TensorType>{TensorType(x->dtype, std::move(dims))};
}

Result<std::vector<Tensor>> RunUnsqueeze(const KernelContext& ctx, bool from_input) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  std::vector<int64_t> axes;
  bool present = false;
  AxesFrom(ctx.node, from_input, ctx.input(1), &axes, &present);
  if (!present || (from_input && !ctx.input(1))) {
    return NodeError(ctx.node, "Unsqueeze requires axes");
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> out, UnsqueezeDims(ctx.node, x->shape(), axes));
  return std::vector<Tensor>{x->Reshaped(out)};
}

// ---- Transpose --------------------------------------------------------------------------

Result<std::vector<int64_t>> Perm(const Node& node, int64_t rank) {
  std::vector<int64_t> perm = node.GetInts("perm");
  if (!node.Has("perm")) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank) {
    return NodeError(node, "perm has " + std::to_string(perm.size()) + " entries for rank " +
                               std::to_string(rank));
  }
  std::vector<bool> seen(rank, false);
  for (int64_t& p : perm) {
    SY_ASSIGN_OR_RETURN(p, NormalizeAxis(node, p, rank));
    if (seen[p]) return NodeError(node, "perm is not a permutation");
    seen[p] = true;
  }
  return perm;
}

Result<std::vector<TensorType>> InferTranspose(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  if (!x->has_shape) {
    if (ctx.node.Has("perm")) {
      return std::vector<TensorType>{
          TensorType(x->dtype, UnknownDims(ctx.node.GetInts("perm").size()))};
    }
    return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(ctx.node, x->rank()));
  std::vector<Dim> out;
  for (int64_t p : perm) out.push_back(x->dims[p]);
  return std::vector<TensorType>{TensorType(x->dtype, out)};
}

Result<std::vector<Tensor>> RunTranspose(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(ctx.node, x->rank()));
  const std::vector<int64_t> in_strides = Strides(x->shape());
  std::vector<int64_t> out_shape, strides;
  for (int64_t p : perm) {
    out_shape.push_back(x->dim(p));
    strides.push_back(in_strides[p]);
  }
  Tensor out(x->dtype(), out_shape);
  GatherByMap(*x, StridedMap(out_shape, strides, 0), out);
  return std::vector<Tensor>{std::move(out)};
}

// ---- Shape / Size ---------------------------------------------------------------------

void ShapeRange(const Node& node, int64_t r, int64_t* start, int64_t* end) {
  *start = node.GetInt("start", 0);
  *end = node.GetInt("end", r);
  if (*start < 0) *start += r;
  if (*end < 0) *end += r;
  *start = std::clamp<int64_t>(*start, 0, r);
  *end = std::clamp<int64_t>(*end, *start, r);
}

Result<std::vector<TensorType>> InferShape(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  if (!x->has_shape) return std::vector<TensorType>{TensorType(DataType::kInt64, {Dim()})};
  int64_t start, end;
  ShapeRange(ctx.node, x->rank(), &start, &end);
  return std::vector<TensorType>{TensorType(DataType::kInt64, {Dim(end - start)})};
}

Result<std::vector<Tensor>> RunShape(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  int64_t start, end;
  ShapeRange(ctx.node, x->rank(), &start, &end);
  std::vector<int64_t> part(x->shape().begin() + start, x->shape().begin() + end);
  return std::vector<Tensor>{Tensor::FromInt64(part, {static_cast<int64_t>(part.size())})};
}

Result<std::vector<Tensor>> RunSize(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  return std::vector<Tensor>{Tensor::FromInt64({x->numel()}, {})};
}

// ---- Expand / Tile -------------------------------------------------------------------------

Result<std::vector<TensorType>> InferExpand(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  const TensorType* s = ctx.input(1);
  if (!x || !s) return NodeError(ctx.node, "Expand needs input and shape");
  std::vector<int64_t> shape;
  if (ConstantInts(ctx, 1, &shape)) {
    if (!x->has_shape) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
    std::vector<Dim> sd;
    for (int64_t v : shape) {
      if (v < 0) return NodeError(ctx.node, "shape has a negative entry");
      sd.push_back(Dim(v));
    }
    SY_ASSIGN_OR_RETURN(std::vector<Dim> dims, BroadcastDims(ctx.node, {x->dims, sd}));
    return std::vector<TensorType>{TensorType(x->dtype, std::move(dims))};
  }
  if (x->has_shape && s->has_shape && s->dims.size() == 1 && s->dims[0].is_static()) {
    const size_t r = std::max<size_t>(x->dims.size(), s->dims[0].value);
    return std::vector<TensorType>{TensorType(x->dtype, UnknownDims(r))};
  }
  return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
}

Result<std::vector<Tensor>> RunExpand(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* s, RequireInput(ctx, 1));
  if (s->rank() != 1) return NodeError(ctx.node, "shape input must be 1-D");
  const std::vector<int64_t> shape = s->ToInt64Vector();
  for (int64_t v : shape) {
    if (v < 0) return NodeError(ctx.node, "shape has a negative entry");
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape,
                      BroadcastShapes(ctx.node, {x->shape(), shape}));
  SY_RETURN_IF_ERROR(CheckedNumElements(out_shape).status());
  Tensor out(x->dtype(), out_shape);
  GatherByMap(*x, BroadcastIndex(x->shape(), out_shape), out);
  return std::vector<Tensor>{std::move(out)};
}

Result<std::vector<TensorType>> InferTile(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x || !ctx.input(1)) return NodeError(ctx.node, "Tile needs input and repeats");
  if (!x->has_shape) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  std::vector<int64_t> reps;
  if (!ConstantInts(ctx, 1, &reps)) {
    return std::vector<TensorType>{TensorType(x->dtype, UnknownDims(x->dims.size()))};
  }
  if (reps.size() != x->dims.size()) {
    return NodeError(ctx.node, "repeats has " + std::to_string(reps.size()) +
                                   " entries for rank " + std::to_string(x->dims.size()));
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < reps.size(); ++i) {
    if (reps[i] < 0) return NodeError(ctx.node, "repeats has a negative entry");
    const Dim& d = x->dims[i];
    if (reps[i] == 1 || !d.is_static()) {
      out.push_back(reps[i] == 1 ? d : Dim());
      continue;
    }
    int64_t v = 0;
    if (__builtin_mul_overflow(d.value, reps[i], &v)) {
      return NodeError(ctx.node, "repeats[" + std::to_string(i) + "] = " +
                                     std::to_string(reps[i]) + " times dim " +
                                     std::to_string(d.value) + " overflows int64");
    }
    out.push_back(Dim(v));
  }
  return std::vector<TensorType>{TensorType(x->dtype, out)};
}

Result<std::vector<Tensor>> RunTile(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* r, RequireInput(ctx, 1));
  const std::vector<int64_t> reps = r->ToInt64Vector();
  if (static_cast<int64_t>(reps.size()) != x->rank()) {
    return NodeError(ctx.node, "repeats has " + std::to_string(reps.size()) +
                                   " entries for rank " + std::to_string(x->rank()));
  }
  std::vector<int64_t> out_shape;
  for (size_t i = 0; i < reps.size(); ++i) {
    if (reps[i] < 0) return NodeError(ctx.node, "repeats has a negative entry");
    int64_t d = 0;
    if (__builtin_mul_overflow(x->dim(i), reps[i], &d)) {
      return NodeError(ctx.node, "repeats[" + std::to_string(i) + "] = " +
                                     std::to_string(reps[i]) + " times dim " +
                                     std::to_string(x->dim(i)) + " overflows int64");
    }
    out_shape.push_back(d);
  }
  SY_RETURN_IF_ERROR(CheckedNumElements(out_shape).status());
  Tensor out(x->dtype(), out_shape);
  std::vector<int64_t> map(static_cast<size_t>(out.numel()));
  if (out.numel() > 0) {
    const std::vector<int64_t> st = Strides(x->shape());
    std::vector<int64_t> idx(out_shape.size(), 0);
    int64_t k = 0;
    do {
      int64_t lin = 0;
      for (size_t d = 0; d < idx.size(); ++d) lin += (idx[d] % x->dim(d)) * st[d];
      map[k++] = lin;
    } while (NextIndex(idx, out_shape));
  }
  GatherByMap(*x, map, out);
  return std::vector<Tensor>{std::move(out)};
}

Result<std::vector<TensorType>> InferInt64Scalar(const InferContext&) {
  return std::vector<TensorType>{TensorType(DataType::kInt64, {})};
}

}  // namespace

SY_REGISTER_OPS(Shape) {
  for (int v : {5, 13, 14, 19, 21}) {
    reg.Register({"", "Reshape", v, 2, 2, 1, 1, InferReshape, RunReshape});
  }
  for (int v : {1, 9, 11, 13, 21}) {
    reg.Register({"", "Flatten", v, 1, 1, 1, 1, InferFlatten, RunFlatten});
  }
  for (int v : {1, 11, 13, 21}) {
    const bool in = v >= 13;
    reg.Register({"", "Squeeze", v, 1, in ? 2 : 1, 1, 1,
                  [in](const InferContext& c) { return InferSqueeze(c, in); },
                  [in](const KernelContext& c) { return RunSqueeze(c, in); }});
    reg.Register({"", "Unsqueeze", v, 1, in ? 2 : 1, 1, 1,
                  [in](const InferContext& c) { return InferUnsqueeze(c, in); },
                  [in](const KernelContext& c) { return RunUnsqueeze(c, in); }});
  }
  for (int v : {1, 13, 21}) {
    reg.Register({"", "Transpose", v, 1, 1, 1, 1, InferTranspose, RunTranspose});
  }
  for (int v : {1, 13, 15, 19, 21}) {
    reg.Register({"", "Shape", v, 1, 1, 1, 1, InferShape, RunShape});
  }
  for (int v : {1, 13, 19, 21}) {
    reg.Register({"", "Size", v, 1, 1, 1, 1, InferInt64Scalar, RunSize});
  }
  for (int v : {8, 13}) {
    reg.Register({"", "Expand", v, 2, 2, 1, 1, InferExpand, RunExpand});
  }
  for (int v : {6, 13}) {
    reg.Register({"", "Tile", v, 2, 2, 1, 1, InferTile, RunTile});
  }
}

}  // namespace switchyard::ops
