// Joining, cutting and padding ops: Concat, Split, Slice, Pad.
#include <algorithm>
#include <cstring>
#include <limits>

#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

using Types = std::vector<TensorType>;

// dst[i] = src[map[i]], or the single element of `fill` where map[i] < 0. Same dtype.
void GatherOrFill(const Tensor& src, const std::vector<int64_t>& map, Tensor& dst,
                 const Tensor* fill = nullptr) {
  const int64_t n = dst.numel();
  if (src.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) {
      dst.strings()[i] = map[i] >= 0 ? src.strings()[map[i]] : fill ? fill->strings()[0] : "";
    }
    return;
  }
  auto copy = [&](auto tag) {
    using T = decltype(tag);
    const T* s = static_cast<const T*>(src.raw());
    const T f = fill ? *static_cast<const T*>(fill->raw()) : T{};
    T* d = static_cast<T*>(dst.raw());
    for (int64_t i = 0; i < n; ++i) d[i] = map[i] >= 0 ? s[map[i]] : f;
  };
  switch (DataTypeSize(src.dtype())) {
    case 1: copy(uint8_t{}); break;
    case 2: copy(uint16_t{}); break;
    case 4: copy(uint32_t{}); break;
    default: copy(uint64_t{}); break;
  }
}

// Copies `count` consecutive elements (same dtype).
void CopyRun(const Tensor& src, int64_t si, Tensor& dst, int64_t di, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DataType::kString) {
    for (int64_t k = 0; k < count; ++k) dst.strings()[di + k] = src.strings()[si + k];
    return;
  }
  const size_t es = DataTypeSize(src.dtype());
  std::memcpy(static_cast<uint8_t*>(dst.raw()) + di * es,
              static_cast<const uint8_t*>(src.raw()) + si * es, count * es);
}

// ---- Concat ------------------------------------------------------------------------------

Result<Types> InferConcat(const InferContext& ctx) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) idx.push_back(i);
  SY_ASSIGN_OR_RETURN(DataType dt, SameDtype(ctx, idx));
  if (!ctx.node.Has("axis")) return NodeError(ctx.node, "Concat requires 'axis'");
  int64_t rank = -1;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType* t = ctx.input(i);
    if (!t || !t->has_shape) continue;
    if (rank >= 0 && t->rank() != rank) return NodeError(ctx.node, "inputs differ in rank");
    rank = t->rank();
  }
  if (rank < 0) return Types{TensorType::Unranked(dt)};
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), rank));
  std::vector<Dim> out(rank, Dim());
  int64_t sum = 0;
  bool sum_known = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType* t = ctx.input(i);
    if (!t || !t->has_shape) {
      sum_known = false;
      continue;
    }
    for (int64_t d = 0; d < rank; ++d) {
      const Dim& x = t->dims[d];
      if (d == axis) {
        if (x.is_static()) sum += x.value; else sum_known = false;
        continue;
      }
      Dim& o = out[d];
      if (x.is_static() && o.is_static() && x.value != o.value) {
        return NodeError(ctx.node, "dimension " + std::to_string(d) + " differs: " +
                                       std::to_string(o.value) + " vs " + std::to_string(x.value));
      }
      if (!o.is_static() && (x.is_static() || o.symbol.empty())) o = x;
    }
  }
  out[axis] = sum_known ? Dim(sum) : Dim();
  return Types{TensorType(dt, out)};
}

Result<std::vector<Tensor>> RunConcat(const KernelContext& ctx) {
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i)) ins.push_back(ctx.input(i));
  }
  if (ins.empty()) return NodeError(ctx.node, "Concat needs at least one input");
  const int64_t rank = ins[0]->rank();
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), rank));
  std::vector<int64_t> out_shape = ins[0]->shape();
  out_shape[axis] = 0;
  for (const Tensor* t : ins) {
    if (t->rank() != rank || t->dtype() != ins[0]->dtype()) {
      return NodeError(ctx.node, "inputs differ in rank or dtype");
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && t->dim(d) != out_shape[d]) {
        return NodeError(ctx.node, "input shapes " + ShapeToString(ins[0]->shape()) + " and " +
                                       ShapeToString(t->shape()) + " differ off the axis");
      }
    }
    out_shape[axis] += t->dim(axis);
  }
  Tensor out(ins[0]->dtype(), out_shape);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out_shape[d];
  const int64_t out_block = outer == 0 ? 0 : out.numel() / outer;
  int64_t col = 0;
  for (const Tensor* t : ins) {
    const int64_t block = outer == 0 ? 0 : t->numel() / outer;
    for (int64_t o = 0; o < outer; ++o) CopyRun(*t, o * block, out, o * out_block + col, block);
    col += block;
  }
  return std::vector<Tensor>{std::move(out)};
}

// ---- Split ------------------------------------------------------------------------------

// Sizes of the pieces along an axis of size `dim`. `split` empty when not given.
Result<std::vector<int64_t>> SplitSizes(const Node& node, int64_t dim,
                                        const std::vector<int64_t>& split, bool has_split,
                                        size_t n_out, int version) {
  if (has_split && split.empty()) has_split = false;  // an empty split input: equal parts
  if (has_split) {
    if (split.size() != n_out) {
      return NodeError(node, "split has " + std::to_string(split.size()) + " entries for " +
                                 std::to_string(n_out) + " outputs");
    }
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0) return NodeError(node, "split has a negative entry");
      sum += s;
    }
    if (dim >= 0 && sum != dim) {
      return NodeError(node, "split sums to " + std::to_string(sum) + " but the axis has " +
                                 std::to_string(dim));
    }
    return split;
  }
  if (dim < 0) return std::vector<int64_t>(n_out, -1);
  const int64_t n = version >= 18 && node.Has("num_outputs") ? node.GetInt("num_outputs", 0)
                                                             : static_cast<int64_t>(n_out);
  if (n <= 0 || static_cast<size_t>(n) != n_out) {
    return NodeError(node, "num_outputs does not match the number of outputs");
  }
  if (version >= 18 && node.Has("num_outputs")) {
    const int64_t chunk = (dim + n - 1) / n;
    std::vector<int64_t> out;
    int64_t left = dim;
    for (int64_t i = 0; i < n; ++i) {
      out.push_back(std::min(chunk, left));
      left -= out.back();
    }
    return out;
  }
  if (dim % n != 0) {
    return NodeError(node, "axis of size " + std::to_string(dim) + " cannot split evenly into " +
                               std::to_string(n));
  }
  return std::vector<int64_t>(n, dim / n);
}

Result<Types> InferSplit(const InferContext& ctx, int version) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  const size_t n_out = ctx.num_outputs();
  if (!x->has_shape) return Types(n_out, TensorType::Unranked(x->dtype));
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x->rank()));
  std::vector<int64_t> split;
  bool has_split = false;
  if (version >= 13) {
    has_split = ctx.node.HasInput(1);
    if (has_split && !ConstantInts(ctx, 1, &split)) {
      std::vector<Dim> dims = x->dims;
      dims[axis] = Dim();
      return Types(n_out, TensorType(x->dtype, dims));
    }
  } else {
    has_split = ctx.node.Has("split");
    split = ctx.node.GetInts("split");
  }
  const Dim& d = x->dims[axis];
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                      SplitSizes(ctx.node, d.is_static() ? d.value : -1, split, has_split,
                                 n_out, version));
  Types out;
  for (int64_t s : sizes) {
    std::vector<Dim> dims = x->dims;
    dims[axis] = s >= 0 ? Dim(s) : Dim();
    out.push_back(TensorType(x->dtype, dims));
  }
  return out;
}

Result<std::vector<Tensor>> RunSplit(const KernelContext& ctx, int version) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", 0), x->rank()));
  std::vector<int64_t> split;
  bool has_split = false;
  if (version >= 13) {
    has_split = ctx.input(1) != nullptr;
    if (has_split) split = ctx.input(1)->ToInt64Vector();
  } else {
    has_split = ctx.node.Has("split");
    split = ctx.node.GetInts("split");
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                      SplitSizes(ctx.node, x->dim(axis), split, has_split, ctx.num_outputs(),
                                 version));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->dim(d);
  for (int64_t d = axis + 1; d < x->rank(); ++d) inner *= x->dim(d);
  std::vector<Tensor> outs;
  int64_t start = 0;
  for (int64_t s : sizes) {
    std::vector<int64_t> shape = x->shape();
    shape[axis] = s;
    Tensor t(x->dtype(), shape);
    for (int64_t o = 0; o < outer; ++o) {
      CopyRun(*x, (o * x->dim(axis) + start) * inner, t, o * s * inner, s * inner);
    }
    start += s;
    outs.push_back(std::move(t));
  }
  return outs;
}

// ---- Slice ------------------------------------------------------------------------------

struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
};

// Clamped start and element count of one sliced axis of size d.
void SliceAxis(int64_t d, int64_t start, int64_t end, int64_t step, int64_t* s, int64_t* n) {
  if (d == 0) {  // nothing to take; also keeps the clamps below well-formed
    *s = 0;
    *n = 0;
    return;
  }
  if (start < 0) start = start < -d ? 0 : start + d;  // avoids overflow near INT64_MIN
  if (end < 0) end = end < -d ? -1 : end + d;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, d);
    end = std::clamp<int64_t>(end, 0, d);
    *n = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, d - 1);
    end = std::clamp<int64_t>(end, -1, d - 1);
    *n = start > end ? (start - end + (-step) - 1) / (-step) : 0;
  }
  *s = start;
}

Status CheckSliceParams(const Node& node, SliceParams& p, int64_t rank) {
  if (p.starts.size() != p.ends.size()) return NodeError(node, "starts and ends differ in length");
  if (p.axes.empty()) {
    for (size_t i = 0; i < p.starts.size(); ++i) p.axes.push_back(static_cast<int64_t>(i));
  }
  if (p.steps.empty()) p.steps.assign(p.starts.size(), 1);
  if (p.axes.size() != p.starts.size() || p.steps.size() != p.starts.size()) {
    return NodeError(node, "starts, ends, axes and steps differ in length");
  }
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < p.axes.size(); ++i) {
    SY_ASSIGN_OR_RETURN(p.axes[i], NormalizeAxis(node, p.axes[i], rank));
    if (seen[p.axes[i]]) return NodeError(node, "axes contain a duplicate");
    seen[p.axes[i]] = true;
    if (p.steps[i] == 0) return NodeError(node, "step is 0");
  }
  return Status::Ok();
}

Result<Types> InferSlice(const InferContext& ctx, bool from_inputs) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  if (!x->has_shape) return Types{TensorType::Unranked(x->dtype)};
  SliceParams p;
  if (from_inputs) {
    const bool known = ConstantInts(ctx, 1, &p.starts) && ConstantInts(ctx, 2, &p.ends) &&
                       (!ctx.node.HasInput(3) || ConstantInts(ctx, 3, &p.axes)) &&
                       (!ctx.node.HasInput(4) || ConstantInts(ctx, 4, &p.steps));
    if (!known) {
      std::vector<Dim> dims = x->dims;
      std::vector<int64_t> axes;
      if (ctx.node.HasInput(3) && ConstantInts(ctx, 3, &axes)) {
        for (int64_t a : axes) {
          SY_ASSIGN_OR_RETURN(int64_t na, NormalizeAxis(ctx.node, a, x->rank()));
          dims[na] = Dim();
        }
      } else {
        dims.assign(dims.size(), Dim());
      }
      return Types{TensorType(x->dtype, dims)};
    }
  } else {
    p.starts = ctx.node.GetInts("starts");
    p.ends = ctx.node.GetInts("ends");
    p.axes = ctx.node.GetInts("axes");
  }
  SY_RETURN_IF_ERROR(CheckSliceParams(ctx.node, p, x->rank()));
  std::vector<Dim> dims = x->dims;
  for (size_t i = 0; i < p.axes.size(); ++i) {
    Dim& d = dims[p.axes[i]];
    if (d.is_static()) {
      int64_t s, n;
      SliceAxis(d.value, p.starts[i], p.ends[i], p.steps[i], &s, &n);
      d = Dim(n);
    } else {
      // A full slice (forward, or reversed with step -1) keeps the symbol.
      const int64_t big = std::numeric_limits<int32_t>::max();
      const bool full_fwd = p.starts[i] == 0 && p.steps[i] == 1 && p.ends[i] >= big;
      const bool full_rev = p.starts[i] == -1 && p.steps[i] == -1 && p.ends[i] <= -big;
      if (!full_fwd && !full_rev) d = Dim();
    }
  }
  return Types{TensorType(x->dtype, dims)};
}

Result<std::vector<Tensor>> RunSlice(const KernelContext& ctx, bool from_inputs) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SliceParams p;
  if (from_inputs) {
    SY_ASSIGN_OR_RETURN(const Tensor* st, RequireInput(ctx, 1));
    SY_ASSIGN_OR_RETURN(const Tensor* en, RequireInput(ctx, 2));
    p.starts = st->ToInt64Vector();
    p.ends = en->ToInt64Vector();
    if (ctx.input(3)) p.axes = ctx.input(3)->ToInt64Vector();
    if (ctx.input(4)) p.steps = ctx.input(4)->ToInt64Vector();
  } else {
    p.starts = ctx.node.GetInts("starts");
    p.ends = ctx.node.GetInts("ends");
    p.axes = ctx.node.GetInts("axes");
  }
  SY_RETURN_IF_ERROR(CheckSliceParams(ctx.node, p, x->rank()));
  const std::vector<int64_t> in_strides = Strides(x->shape());
  std::vector<int64_t> out_shape = x->shape(), strides = in_strides;
  int64_t offset = 0;
  for (size_t i = 0; i < p.axes.size(); ++i) {
    const int64_t a = p.axes[i];
    int64_t s, n;
    SliceAxis(x->dim(a), p.starts[i], p.ends[i], p.steps[i], &s, &n);
    out_shape[a] = n;
    strides[a] = in_strides[a] * p.steps[i];
    offset += s * in_strides[a];
  }
  Tensor out(x->dtype(), out_shape);
  std::vector<int64_t> map(static_cast<size_t>(out.numel()));
  if (out.numel() > 0) {
    std::vector<int64_t> idx(out_shape.size(), 0);
    int64_t k = 0;
    do {
      int64_t lin = offset;
      for (size_t d = 0; d < idx.size(); ++d) lin += idx[d] * strides[d];
      map[k++] = lin;
    } while (NextIndex(idx, out_shape));
  }
  GatherOrFill(*x, map, out);
  return std::vector<Tensor>{std::move(out)};
}

// ---- Pad --------------------------------------------------------------------------------

constexpr int64_t kMaxPad = int64_t{1} << 40;  // keeps dim + pads free of overflow

// Full per-axis pads (begin..., end...) from attribute or inputs, honouring `axes`.
Result<std::vector<int64_t>> FullPads(const Node& node, int64_t rank, std::vector<int64_t> pads,
                                      const std::vector<int64_t>* axes) {
  std::vector<int64_t> ax;
  if (axes) {
    ax = *axes;
  } else {
    for (int64_t i = 0; i < rank; ++i) ax.push_back(i);
  }
  if (pads.size() != 2 * ax.size()) {
    return NodeError(node, "pads has " + std::to_string(pads.size()) + " entries, expected " +
                               std::to_string(2 * ax.size()));
  }
  for (int64_t p : pads) {
    if (p > kMaxPad || p < -kMaxPad) return NodeError(node, "pad " + std::to_string(p) + " is too large");
  }
  std::vector<int64_t> full(2 * rank, 0);
  const size_t k = ax.size();
  for (size_t i = 0; i < k; ++i) {
    SY_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(node, ax[i], rank));
    full[a] = pads[i];
    full[rank + a] = pads[k + i];
  }
  return full;
}

Result<Types> InferPad(const InferContext& ctx, bool from_inputs) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  if (!x->has_shape) return Types{TensorType::Unranked(x->dtype)};
  const int64_t r = x->rank();
  std::vector<int64_t> pads, axes;
  bool has_axes = false;
  if (from_inputs) {
    if (!ConstantInts(ctx, 1, &pads)) return Types{TensorType(x->dtype, std::vector<Dim>(r))};
    has_axes = ctx.node.HasInput(3);
    if (has_axes && !ConstantInts(ctx, 3, &axes)) {
      return Types{TensorType(x->dtype, std::vector<Dim>(r))};
    }
  } else {
    pads = ctx.node.GetInts("pads");
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> full,
                      FullPads(ctx.node, r, pads, has_axes ? &axes : nullptr));
  std::vector<Dim> dims = x->dims;
  for (int64_t i = 0; i < r; ++i) {
    const int64_t add = full[i] + full[r + i];
    if (add == 0) continue;
    if (dims[i].is_static()) {
      if (dims[i].value + add < 0) return NodeError(ctx.node, "pads make a negative dimension");
      dims[i] = Dim(dims[i].value + add);
    } else {
      dims[i] = Dim();
    }
  }
  return Types{TensorType(x->dtype, dims)};
}

Result<std::vector<Tensor>> RunPad(const KernelContext& ctx, bool from_inputs) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  const int64_t r = x->rank();
  const std::string mode = ctx.node.GetString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    return NodeError(ctx.node, "unknown mode '" + mode + "'");
  }
  std::vector<int64_t> pads, axes;
  Tensor fill(x->dtype(), {});
  if (from_inputs) {
    SY_ASSIGN_OR_RETURN(const Tensor* p, RequireInput(ctx, 1));
    pads = p->ToInt64Vector();
    if (const Tensor* c = ctx.input(2); c && c->numel() > 0) {
      if (c->dtype() != x->dtype()) return NodeError(ctx.node, "constant_value dtype differs");
      fill = c->Reshaped({1}).Reshaped({});
      if (c->numel() != 1) return NodeError(ctx.node, "constant_value must be a scalar");
    }
    if (ctx.input(3)) axes = ctx.input(3)->ToInt64Vector();
  } else {
    pads = ctx.node.GetInts("pads");
    if (x->dtype() != DataType::kString) fill.SetDouble(0, ctx.node.GetFloat("value", 0.f));
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> full,
                      FullPads(ctx.node, r, pads, ctx.input(3) ? &axes : nullptr));
  std::vector<int64_t> out_shape(r);
  for (int64_t i = 0; i < r; ++i) {
    out_shape[i] = x->dim(i) + full[i] + full[r + i];
    if (out_shape[i] < 0) return NodeError(ctx.node, "pads make a negative dimension");
    if (mode != "constant" && x->dim(i) == 0 && out_shape[i] > 0) {
      return NodeError(ctx.node, "cannot pad an empty axis in mode " + mode);
    }
  }
  SY_RETURN_IF_ERROR(CheckedNumElements(out_shape).status());
  Tensor out(x->dtype(), out_shape);
  std::vector<int64_t> map(static_cast<size_t>(out.numel()));
  if (out.numel() > 0) {
    const std::vector<int64_t> st = Strides(x->shape());
    std::vector<int64_t> idx(r, 0);
    int64_t k = 0;
    do {
      int64_t lin = 0;
      for (int64_t d = 0; d < r && lin >= 0; ++d) {
        const int64_t n = x->dim(d);
        int64_t i = idx[d] - full[d];
        if (i < 0 || i >= n) {
          if (mode == "constant") {
            lin = -1;
            break;
          } else if (mode == "edge") {
            i = std::clamp<int64_t>(i, 0, n - 1);
          } else if (mode == "wrap") {
            i = ((i % n) + n) % n;
          } else if (n == 1) {
            i = 0;
          } else {  // reflect without repeating the edge
            const int64_t period = 2 * (n - 1);
            i = ((i % period) + period) % period;
            if (i >= n) i = period - i;
          }
        }
        lin += i * st[d];
      }
      map[k++] = lin;
    } while (NextIndex(idx, out_shape));
  }
  GatherOrFill(*x, map, out, &fill);
  return std::vector<Tensor>{std::move(out)};
}

}  // namespace

SY_REGISTER_OPS(ConcatSplit) {
  for (int v : {4, 11, 13}) {
    reg.Register({"", "Concat", v, 1, -1, 1, 1, InferConcat, RunConcat});
  }
  for (int v : {2, 11, 13, 18}) {
    reg.Register({"", "Split", v, 1, v >= 13 ? 2 : 1, 1, -1,
                  [v](const InferContext& c) { return InferSplit(c, v); },
                  [v](const KernelContext& c) { return RunSplit(c, v); }});
  }
  for (int v : {1, 10, 11, 13}) {
    const bool in = v >= 10;
    reg.Register({"", "Slice", v, in ? 3 : 1, in ? 5 : 1, 1, 1,
                  [in](const InferContext& c) { return InferSlice(c, in); },
                  [in](const KernelContext& c) { return RunSlice(c, in); }});
  }
  for (int v : {2, 11, 13, 18, 19, 21}) {
    const bool in = v >= 11;
    const int max_in = v >= 18 ? 4 : in ? 3 : 1;
    reg.Register({"", "Pad", v, in ? 2 : 1, max_in, 1, 1,
                  [in](const InferContext& c) { return InferPad(c, in); },
                  [in](const KernelContext& c) { return RunPad(c, in); }});
  }
}

}  // namespace switchyard::ops
