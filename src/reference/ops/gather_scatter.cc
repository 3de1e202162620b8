// Indexed reads and writes: Gather, GatherElements, GatherND, ScatterElements, ScatterND,
// Scatter (deprecated), OneHot, Compress.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

using Types = std::vector<TensorType>;


// Normalises index `v` into [0, n) or returns an error naming the node.
Result<int64_t> CheckIndex(const Node& node, int64_t v, int64_t n) {
  const int64_t i = v < 0 ? v + n : v;
  if (i < 0 || i >= n) {
    return NodeError(node, "index " + std::to_string(v) + " is out of range for a dimension of " +
                               std::to_string(n));
  }
  return i;
}

Status RequireIndexType(const Node& node, const TensorType* t, const char* what) {
  if (t && t->dtype != DataType::kUndefined && t->dtype != DataType::kInt64 &&
      t->dtype != DataType::kInt32) {
    return NodeError(node, std::string(what) + " must be int32 or int64, got " +
                               DataTypeName(t->dtype));
  }
  return Status::Ok();
}

// ---- Gather ------------------------------------------------------------------------------

Result<Types> InferGather(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  const TensorType* ind = ctx.input(1);
  if (!x || !ind) return NodeError(ctx.node, "Gather needs data and indices");
  SY_RETURN_IF_ERROR(RequireIndexType(ctx.node, ind, "indices"));
  if (!x->has_shape || !ind->has_shape) return Types{TensorType::Unranked(x->dtype)};
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x->rank()));
  if (const Tensor* c = ctx.constant(1); c && x->dims[axis].is_static()) {
    for (int64_t v : c->ToInt64Vector()) {
      SY_RETURN_IF_ERROR(CheckIndex(ctx.node, v, x->dims[axis].value).status());
    }
  }
  std::vector<Dim> dims(x->dims.begin(), x->dims.begin() + axis);
  dims.insert(dims.end(), ind->dims.begin(), ind->dims.end());
  dims.insert(dims.end(), x->dims.begin() + axis + 1, x->dims.end());
  return Types{TensorType(x->dtype, dims)};
}

Result<std::vector<Tensor>> RunGather(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* ind, RequireInput(ctx, 1));
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x->rank()));
  const std::vector<int64_t> idx = ind->ToInt64Vector();
  const int64_t n = x->dim(axis);
  std::vector<int64_t> norm(idx.size());
  for (size_t j = 0; j < idx.size(); ++j) {
    SY_ASSIGN_OR_RETURN(norm[j], CheckIndex(ctx.node, idx[j], n));
  }
  std::vector<int64_t> shape(x->shape().begin(), x->shape().begin() + axis);
  shape.insert(shape.end(), ind->shape().begin(), ind->shape().end());
  shape.insert(shape.end(), x->shape().begin() + axis + 1, x->shape().end());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->dim(d);
  for (int64_t d = axis + 1; d < x->rank(); ++d) inner *= x->dim(d);
  Tensor out(x->dtype(), shape);
  std::vector<int64_t> map(static_cast<size_t>(out.numel()));
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j : norm) {
      const int64_t base = (o * n + j) * inner;
      for (int64_t i = 0; i < inner; ++i) map[k++] = base + i;
    }
  }
  GatherByMap(*x, map, out);
  return std::vector<Tensor>{std::move(out)};
}

// ---- GatherElements / ScatterElements / Scatter ---------------------------------------------

// For each element of `ind` (same rank as data), the data linear index it addresses.
Result<std::vector<int64_t>> ElementTargets(const Node& node, const Tensor& data,
                                            const Tensor& ind, int64_t axis) {
  if (ind.rank() != data.rank()) {
    return NodeError(node, "indices rank " + std::to_string(ind.rank()) +
                               " differs from data rank " + std::to_string(data.rank()));
  }
  std::vector<int64_t> targets(static_cast<size_t>(ind.numel()));
  if (ind.numel() == 0) return targets;
  for (int64_t d = 0; d < data.rank(); ++d) {
    if (d != axis && ind.dim(d) > data.dim(d)) {
      return NodeError(node, "indices shape " + ShapeToString(ind.shape()) +
                                 " exceeds data shape " + ShapeToString(data.shape()));
    }
  }
  const std::vector<int64_t> st = Strides(data.shape());
  std::vector<int64_t> idx(ind.rank(), 0);
  int64_t k = 0;
  do {
    int64_t lin = 0;
    for (int64_t d = 0; d < data.rank(); ++d) {
      if (d == axis) {
        SY_ASSIGN_OR_RETURN(int64_t v, CheckIndex(node, ind.GetInt64(k), data.dim(axis)));
        lin += v * st[d];
      } else {
        lin += idx[d] * st[d];
      }
    }
    targets[k++] = lin;
  } while (NextIndex(idx, ind.shape()));
  return targets;
}

Result<Types> InferGatherElements(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  const TensorType* ind = ctx.input(1);
  if (!x || !ind) return NodeError(ctx.node, "needs data and indices");
  SY_RETURN_IF_ERROR(RequireIndexType(ctx.node, ind, "indices"));
  if (x->has_shape && ind->has_shape && x->rank() != ind->rank()) {
    return NodeError(ctx.node, "indices and data differ in rank");
  }
  if (!ind->has_shape) return Types{TensorType::Unranked(x->dtype)};
  return Types{TensorType(x->dtype, ind->dims)};
}

Result<std::vector<Tensor>> RunGatherElements(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* ind, RequireInput(ctx, 1));
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x->rank()));
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> map, ElementTargets(ctx.node, *x, *ind, axis));
  Tensor out(x->dtype(), ind->shape());
  GatherByMap(*x, map, out);
  return std::vector<Tensor>{std::move(out)};
}

// out[t] = reduce(out[t], upd[k]); `reduction` one of none/add/mul/max/min.
Status ScatterInto(const Node& node, Tensor& out, const Tensor& upd,
                   const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
                   const std::string& reduction) {
  if (upd.dtype() != out.dtype()) return NodeError(node, "updates dtype differs from data");
  const bool is_str = out.dtype() == DataType::kString;
  const bool is_float = IsFloatType(out.dtype());
  for (size_t k = 0; k < dst.size(); ++k) {
    const int64_t t = dst[k], s = src[k];
    if (reduction == "none") {
      if (is_str) out.strings()[t] = upd.strings()[s];
      else if (is_float) out.SetDouble(t, upd.GetDouble(s));
      else out.SetInt64(t, upd.GetInt64(s));
      continue;
    }
    if (is_str) return NodeError(node, "reduction on strings");
    if (is_float) {
      const double a = out.GetDouble(t), b = upd.GetDouble(s);
      out.SetDouble(t, reduction == "add" ? a + b : reduction == "mul" ? a * b
                       : reduction == "max" ? std::max(a, b) : std::min(a, b));
    } else {
      const int64_t a = out.GetInt64(t), b = upd.GetInt64(s);
      out.SetInt64(t, reduction == "add" ? a + b : reduction == "mul" ? a * b
                      : reduction == "max" ? std::max(a, b) : std::min(a, b));
    }
  }
  return Status::Ok();
}

Result<std::string> Reduction(const Node& node, int version) {
  const std::string r = node.GetString("reduction", "none");
  const bool ok = r == "none" || (version >= 16 && (r == "add" || r == "mul")) ||
                  (version >= 18 && (r == "max" || r == "min"));
  if (!ok) return NodeError(node, "unsupported reduction '" + r + "'");
  return r;
}

Result<std::vector<Tensor>> RunScatterElements(const KernelContext& ctx, int version) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* ind, RequireInput(ctx, 1));
  SY_ASSIGN_OR_RETURN(const Tensor* upd, RequireInput(ctx, 2));
  if (upd->shape() != ind->shape()) return NodeError(ctx.node, "updates shape differs from indices");
  SY_ASSIGN_OR_RETURN(std::string red, Reduction(ctx.node, version));
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x->rank()));
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> dst, ElementTargets(ctx.node, *x, *ind, axis));
  std::vector<int64_t> src(dst.size());
  for (size_t k = 0; k < src.size(); ++k) src[k] = static_cast<int64_t>(k);
  Tensor out = *x;
  SY_RETURN_IF_ERROR(ScatterInto(ctx.node, out, *upd, src, dst, red));
  return std::vector<Tensor>{std::move(out)};
}

// ---- GatherND / ScatterND -------------------------------------------------------------------

// The data offsets addressed by each index tuple of `ind` (last dim k), and the size of
// each addressed slice.
Result<std::vector<int64_t>> NdTargets(const Node& node, const Tensor& data, const Tensor& ind,
                                       int64_t batch_dims, int64_t* slice) {
  const int64_t r = data.rank(), q = ind.rank(), b = batch_dims;
  if (q < 1) return NodeError(node, "indices must have rank >= 1");
  if (b < 0 || b >= q || b >= r) return NodeError(node, "batch_dims is out of range");
  const int64_t k = ind.dim(q - 1);
  if (k > r - b) return NodeError(node, "indices last dimension exceeds the data rank");
  for (int64_t d = 0; d < b; ++d) {
    if (ind.dim(d) != data.dim(d)) return NodeError(node, "batch dimensions differ");
  }
  const std::vector<int64_t> st = Strides(data.shape());
  *slice = 1;
  for (int64_t d = b + k; d < r; ++d) *slice *= data.dim(d);
  int64_t per_batch_tuples = 1;
  for (int64_t d = b; d < q - 1; ++d) per_batch_tuples *= ind.dim(d);
  int64_t batch_size = 1;
  for (int64_t d = b; d < r; ++d) batch_size *= data.dim(d);
  int64_t tuples = 1;
  for (int64_t d = 0; d < q - 1; ++d) tuples *= ind.dim(d);
  std::vector<int64_t> offsets(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    const int64_t batch = per_batch_tuples == 0 ? 0 : t / per_batch_tuples;
    int64_t off = batch * batch_size;
    for (int64_t j = 0; j < k; ++j) {
      SY_ASSIGN_OR_RETURN(int64_t v, CheckIndex(node, ind.GetInt64(t * k + j), data.dim(b + j)));
      off += v * st[b + j];
    }
    offsets[t] = off;
  }
  return offsets;
}

Result<Types> InferGatherND(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  const TensorType* ind = ctx.input(1);
  if (!x || !ind) return NodeError(ctx.node, "needs data and indices");
  if (ind->dtype != DataType::kInt64 && ind->dtype != DataType::kUndefined) {
    return NodeError(ctx.node, "indices must be int64");
  }
  const int64_t b = ctx.node.GetInt("batch_dims", 0);
  if (!x->has_shape || !ind->has_shape || ind->dims.empty() || !ind->dims.back().is_static()) {
    return Types{TensorType::Unranked(x->dtype)};
  }
  const int64_t k = ind->dims.back().value;
  if (b < 0 || k > x->rank() - b) return NodeError(ctx.node, "indices last dimension too large");
  std::vector<Dim> dims(ind->dims.begin(), ind->dims.end() - 1);
  dims.insert(dims.end(), x->dims.begin() + b + k, x->dims.end());
  return Types{TensorType(x->dtype, dims)};
}

Result<std::vector<Tensor>> RunGatherND(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* ind, RequireInput(ctx, 1));
  const int64_t b = ctx.node.GetInt("batch_dims", 0);
  int64_t slice = 0;
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> offs, NdTargets(ctx.node, *x, *ind, b, &slice));
  const int64_t k = ind->dim(ind->rank() - 1);
  std::vector<int64_t> shape(ind->shape().begin(), ind->shape().end() - 1);
  shape.insert(shape.end(), x->shape().begin() + b + k, x->shape().end());
  Tensor out(x->dtype(), shape);
  std::vector<int64_t> map;
  map.reserve(static_cast<size_t>(out.numel()));
  for (int64_t o : offs) {
    for (int64_t i = 0; i < slice; ++i) map.push_back(o + i);
  }
  GatherByMap(*x, map, out);
  return std::vector<Tensor>{std::move(out)};
}

Result<std::vector<Tensor>> RunScatterND(const KernelContext& ctx, int version) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* ind, RequireInput(ctx, 1));
  SY_ASSIGN_OR_RETURN(const Tensor* upd, RequireInput(ctx, 2));
  SY_ASSIGN_OR_RETURN(std::string red, Reduction(ctx.node, version));
  int64_t slice = 0;
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> offs, NdTargets(ctx.node, *x, *ind, 0, &slice));
  const int64_t k = ind->dim(ind->rank() - 1);
  std::vector<int64_t> want(ind->shape().begin(), ind->shape().end() - 1);
  want.insert(want.end(), x->shape().begin() + k, x->shape().end());
  if (upd->shape() != want) {
    return NodeError(ctx.node, "updates shape " + ShapeToString(upd->shape()) + " should be " +
                                   ShapeToString(want));
  }
  std::vector<int64_t> src, dst;
  for (size_t t = 0; t < offs.size(); ++t) {
    for (int64_t i = 0; i < slice; ++i) {
      src.push_back(static_cast<int64_t>(t) * slice + i);
      dst.push_back(offs[t] + i);
    }
  }
  Tensor out = *x;
  SY_RETURN_IF_ERROR(ScatterInto(ctx.node, out, *upd, src, dst, red));
  return std::vector<Tensor>{std::move(out)};
}

// ---- OneHot / Compress ------------------------------------------------------------------

Result<Types> InferOneHot(const InferContext& ctx) {
  const TensorType* ind = ctx.input(0);
  const TensorType* val = ctx.input(2);
  if (!ind || !ctx.input(1) || !val) return NodeError(ctx.node, "needs indices, depth and values");
  if (!ind->has_shape) return Types{TensorType::Unranked(val->dtype)};
  const int64_t r = ind->rank() + 1;
  int64_t axis = ctx.node.GetInt("axis", -1);
  SY_ASSIGN_OR_RETURN(axis, NormalizeAxis(ctx.node, axis, r));
  Dim depth;
  if (const Tensor* c = ctx.constant(1); c && c->numel() == 1) {
    depth = Dim(static_cast<int64_t>(c->GetDouble(0)));
  }
  std::vector<Dim> dims = ind->dims;
  dims.insert(dims.begin() + axis, depth);
  return Types{TensorType(val->dtype, dims)};
}

Result<std::vector<Tensor>> RunOneHot(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* ind, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* dep, RequireInput(ctx, 1));
  SY_ASSIGN_OR_RETURN(const Tensor* val, RequireInput(ctx, 2));
  if (dep->numel() != 1) return NodeError(ctx.node, "depth must have one element");
  if (val->numel() != 2) return NodeError(ctx.node, "values must have two elements");
  const double depth_d = dep->GetDouble(0);
  if (!(depth_d >= 1 && depth_d < 1e12)) return NodeError(ctx.node, "depth must be positive");
  const int64_t depth = static_cast<int64_t>(depth_d);
  if (depth < 1) return NodeError(ctx.node, "depth must be positive");
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", -1),
                                                  ind->rank() + 1));
  std::vector<int64_t> shape = ind->shape();
  shape.insert(shape.begin() + axis, depth);
  SY_RETURN_IF_ERROR(CheckedNumElements(shape).status());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= ind->dim(d);
  for (int64_t d = axis; d < ind->rank(); ++d) inner *= ind->dim(d);
  // map: 0 = off value, 1 = on value
  std::vector<int64_t> map(static_cast<size_t>(outer * depth * inner), 0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const double dv = ind->GetDouble(o * inner + i);
      if (!(std::fabs(dv) < static_cast<double>(depth) + 1)) continue;  // NaN or far out: all off
      int64_t v = static_cast<int64_t>(dv);
      if (v < 0) v += depth;
      if (v >= 0 && v < depth) map[(o * depth + v) * inner + i] = 1;
    }
  }
  Tensor out(val->dtype(), shape);
  GatherByMap(*val, map, out);
  return std::vector<Tensor>{std::move(out)};
}

Result<Types> InferCompress(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x || !ctx.input(1)) return NodeError(ctx.node, "needs input and condition");
  if (!ctx.node.Has("axis")) return Types{TensorType(x->dtype, {Dim()})};
  if (!x->has_shape) return Types{TensorType::Unranked(x->dtype)};
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x->rank()));
  std::vector<Dim> dims = x->dims;
  dims[axis] = Dim();
  return Types{TensorType(x->dtype, dims)};
}

Result<std::vector<Tensor>> RunCompress(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x0, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* cond, RequireInput(ctx, 1));
  if (cond->rank() != 1) return NodeError(ctx.node, "condition must be 1-D");
  const bool has_axis = ctx.node.Has("axis");
  const Tensor x = has_axis ? *x0 : x0->Reshaped({x0->numel()});
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x.rank()));
  const int64_t n = x.dim(axis);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond->numel(); ++i) {
    if (cond->GetInt64(i) == 0) continue;
    if (i >= n) return NodeError(ctx.node, "condition selects beyond the axis length");
    keep.push_back(i);
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  std::vector<int64_t> shape = x.shape();
  shape[axis] = static_cast<int64_t>(keep.size());
  Tensor out(x.dtype(), shape);
  std::vector<int64_t> map;
  map.reserve(static_cast<size_t>(out.numel()));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j : keep) {
      for (int64_t i = 0; i < inner; ++i) map.push_back((o * n + j) * inner + i);
    }
  }
  GatherByMap(x, map, out);
  return std::vector<Tensor>{std::move(out)};
}

Result<Types> InferFirst(const InferContext& ctx) { return InferSameAsInput(ctx, 0); }

}  // namespace

SY_REGISTER_OPS(GatherScatter) {
  for (int v : {1, 11, 13}) reg.Register({"", "Gather", v, 2, 2, 1, 1, InferGather, RunGather});
  for (int v : {11, 13}) {
    reg.Register({"", "GatherElements", v, 2, 2, 1, 1, InferGatherElements, RunGatherElements});
  }
  for (int v : {11, 12, 13}) {
    reg.Register({"", "GatherND", v, 2, 2, 1, 1, InferGatherND, RunGatherND});
  }
  for (int v : {11, 13, 16, 18}) {
    reg.Register({"", "ScatterElements", v, 3, 3, 1, 1, InferFirst,
                  [v](const KernelContext& c) { return RunScatterElements(c, v); }});
    reg.Register({"", "ScatterND", v, 3, 3, 1, 1, InferFirst,
                  [v](const KernelContext& c) { return RunScatterND(c, v); }});
  }
  for (int v : {9, 11}) {
    reg.Register({"", "Scatter", v, 3, 3, 1, 1, InferFirst,
                  [](const KernelContext& c) { return RunScatterElements(c, 11); }});
  }
  for (int v : {9, 11}) reg.Register({"", "OneHot", v, 3, 3, 1, 1, InferOneHot, RunOneHot});
  for (int v : {9, 11}) {
    reg.Register({"", "Compress", v, 2, 2, 1, 1, InferCompress, RunCompress});
  }
}

}  // namespace switchyard::ops
