// Pooling: MaxPool (with Indices), AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool,
// GlobalLpPool, MaxUnpool, MaxRoiPool.
#include <cmath>
#include <limits>

#include "reference/ops/conv_common.h"

namespace switchyard::ops {
namespace {

enum class PoolKind { kMax, kAvg, kLp };

bool IsPoolDtype(DataType t, PoolKind kind) {
  if (IsFloatingDtype(t)) return true;
  return kind == PoolKind::kMax && (t == DataType::kInt8 || t == DataType::kUint8);
}

Result<std::vector<TensorType>> InferPool(const InferContext& ctx, PoolKind kind) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "X is required");
  if (x->dtype != DataType::kUndefined && !IsPoolDtype(x->dtype, kind)) {
    return NodeError(ctx.node, std::string("unsupported dtype ") + DataTypeName(x->dtype));
  }
  std::vector<int64_t> kernel = ctx.node.GetInts("kernel_shape");
  if (kernel.empty()) return NodeError(ctx.node, "kernel_shape is required");
  std::vector<TensorType> outs;
  if (!x->has_shape) {
    outs.push_back(TensorType::Unranked(x->dtype));
  } else {
    if (x->rank() != static_cast<int64_t>(kernel.size()) + 2) {
      return NodeError(ctx.node, "kernel_shape has " + std::to_string(kernel.size()) +
                                     " entries but X has rank " + std::to_string(x->rank()));
    }
    SY_ASSIGN_OR_RETURN(Window w, ReadWindow(ctx.node, kernel));
    std::vector<Dim> dims = {x->dims[0], x->dims[1]};
    for (size_t i = 0; i < kernel.size(); ++i) {
      SY_ASSIGN_OR_RETURN(int64_t o, WindowOutputDim(ctx.node, w, i, x->dims[i + 2].value));
      dims.push_back(o >= 0 ? Dim(o) : Dim());
    }
    outs.emplace_back(x->dtype, dims);
  }
  if (ctx.num_outputs() > 1) {
    TensorType idx = outs[0];
    idx.dtype = DataType::kInt64;
    outs.push_back(idx);
  }
  return outs;
}

double LpPower(const Node& node) {
  const Attribute* a = node.Find("p");
  if (!a) return 2.0;
  return a->kind == Attribute::Kind::kFloat ? a->f : static_cast<double>(a->i);
}

// Pools `x` ([N, C, spatial]) with window `w`; `global` uses the whole spatial extent.
Result<std::vector<Tensor>> Pool(const KernelContext& ctx, PoolKind kind, bool global) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  const Node& node = ctx.node;
  if (!IsPoolDtype(x->dtype(), kind)) {
    return NodeError(node, std::string("unsupported dtype ") + DataTypeName(x->dtype()));
  }
  if (x->rank() < 3) return NodeError(node, "X must have rank >= 3");
  const size_t ns = static_cast<size_t>(x->rank() - 2);
  std::vector<int64_t> in_sp(x->shape().begin() + 2, x->shape().end());
  std::vector<int64_t> kernel = global ? in_sp : node.GetInts("kernel_shape");
  if (kernel.size() != ns) return NodeError(node, "kernel_shape does not match X rank");
  Window w;
  if (global) {
    w.kernel = kernel;
    w.strides = w.dilations = std::vector<int64_t>(ns, 1);
    w.pads_begin = w.pads_end = std::vector<int64_t>(ns, 0);
  } else {
    SY_ASSIGN_OR_RETURN(w, ReadWindow(node, kernel));
  }
  std::vector<int64_t> out_sp(ns);
  for (size_t i = 0; i < ns; ++i) {
    SY_ASSIGN_OR_RETURN(out_sp[i], WindowOutputDim(node, w, i, in_sp[i]));
  }
  SY_ASSIGN_OR_RETURN(Geometry3 g, MakeGeometry3(node, w, in_sp, out_sp));
  const bool include_pad = node.GetInt("count_include_pad", 0) != 0;
  const bool col_major = node.GetInt("storage_order", 0) != 0;
  const double p = LpPower(node);
  const bool want_indices = kind == PoolKind::kMax && ctx.num_outputs() > 1;
  const int64_t n = x->dim(0), c = x->dim(1), in_size = g.in_size(), out_size = g.out_size();
  std::vector<int64_t> out_shape = {n, c};
  out_shape.insert(out_shape.end(), out_sp.begin(), out_sp.end());
  const std::vector<double> xd = ToDoubles(*x);
  std::vector<double> out(static_cast<size_t>(n * c * out_size));
  Tensor indices(DataType::kInt64, want_indices ? out_shape : std::vector<int64_t>{0});
  int64_t* ip = want_indices ? indices.data<int64_t>() : nullptr;
  for (int64_t plane = 0; plane < n * c; ++plane) {
    const double* xp = xd.data() + plane * in_size;
    double* op = out.data() + plane * out_size;
    int64_t o = 0;
    for (int64_t od = 0; od < g.out[0]; ++od) {
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        for (int64_t ow = 0; ow < g.out[2]; ++ow, ++o) {
          const int64_t start[3] = {od * g.s[0] - g.pb[0], oh * g.s[1] - g.pb[1],
                                    ow * g.s[2] - g.pb[2]};
          double acc = kind == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
          int64_t best = -1, valid = 0, padded = 1;
          for (int a = 0; a < 3; ++a) {
            // Window positions inside input + explicit pads (count_include_pad's divisor).
            int64_t cnt = 0;
            for (int64_t k = 0; k < g.k[a]; ++k) {
              const int64_t pos = start[a] + k * g.d[a];
              if (pos >= -g.pb[a] && pos < g.in[a] + g.pe[a]) ++cnt;
            }
            padded *= cnt;
          }
          for (int64_t kd = 0; kd < g.k[0]; ++kd) {
            const int64_t id = start[0] + kd * g.d[0];
            if (id < 0 || id >= g.in[0]) continue;
            for (int64_t kh = 0; kh < g.k[1]; ++kh) {
              const int64_t ih = start[1] + kh * g.d[1];
              if (ih < 0 || ih >= g.in[1]) continue;
              for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                const int64_t iw = start[2] + kw * g.d[2];
                if (iw < 0 || iw >= g.in[2]) continue;
                const int64_t li = (id * g.in[1] + ih) * g.in[2] + iw;
                const double v = xp[li];
                ++valid;
                if (kind == PoolKind::kMax) {
                  if (v > acc || best < 0) {
                    acc = v;
                    best = col_major ? id + ih * g.in[0] + iw * g.in[0] * g.in[1] : li;
                  }
                } else if (kind == PoolKind::kAvg) {
                  acc += v;
                } else {
                  acc += std::pow(std::fabs(v), p);
                }
              }
            }
          }
          if (kind == PoolKind::kAvg) {
            const int64_t div = include_pad ? padded : valid;
            acc = div > 0 ? acc / static_cast<double>(div) : 0.0;
          } else if (kind == PoolKind::kLp) {
            acc = std::pow(acc, 1.0 / p);
          }
          op[o] = acc;
          if (ip) ip[plane * out_size + o] = best < 0 ? -1 : plane * in_size + best;
        }
      }
    }
  }
  Tensor y(x->dtype(), out_shape);
  StoreDoubles(y, out.data());
  std::vector<Tensor> res;
  res.push_back(std::move(y));
  if (want_indices) res.push_back(std::move(indices));
  return res;
}

Result<std::vector<TensorType>> InferGlobalPool(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "X is required");
  if (x->dtype != DataType::kUndefined && !IsFloatingDtype(x->dtype)) {
    return NodeError(ctx.node, std::string("unsupported dtype ") + DataTypeName(x->dtype));
  }
  if (!x->has_shape) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  if (x->rank() < 3) return NodeError(ctx.node, "X must have rank >= 3");
  std::vector<Dim> dims = x->dims;
  for (size_t i = 2; i < dims.size(); ++i) dims[i] = Dim(1);
  return std::vector<TensorType>{TensorType(x->dtype, dims)};
}

// MaxUnpool: scatters X into zeros at the flat positions given by I.
Result<std::vector<TensorType>> InferMaxUnpool(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "X is required");
  std::vector<int64_t> shape;
  if (ConstantInts(ctx, 2, &shape)) return std::vector<TensorType>{TensorType::FromShape(x->dtype, shape)};
  if (ctx.input(2)) {
    if (x->has_shape) return std::vector<TensorType>{TensorType(x->dtype, std::vector<Dim>(x->dims.size()))};
    return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  }
  if (!x->has_shape) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  std::vector<int64_t> kernel = ctx.node.GetInts("kernel_shape");
  if (x->rank() < 3 || static_cast<int64_t>(kernel.size()) + 2 != x->rank()) {
    return NodeError(ctx.node, "kernel_shape does not match X rank");
  }
  SY_ASSIGN_OR_RETURN(Window w, ReadWindow(ctx.node, kernel));
  std::vector<Dim> dims = {x->dims[0], x->dims[1]};
  for (size_t i = 0; i < kernel.size(); ++i) {
    const Dim& d = x->dims[i + 2];
    dims.push_back(d.is_static() ? Dim((d.value - 1) * w.strides[i] + kernel[i] -
                                       w.pads_begin[i] - w.pads_end[i])
                                 : Dim());
  }
  return std::vector<TensorType>{TensorType(x->dtype, dims)};
}

Result<std::vector<Tensor>> RunMaxUnpool(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* ind, RequireInput(ctx, 1));
  const Node& node = ctx.node;
  if (ind->shape() != x->shape()) return NodeError(node, "I must have the shape of X");
  if (x->rank() < 3) return NodeError(node, "X must have rank >= 3");
  // Indices address the natural unpooled shape; a larger output_shape pads that result
  // at the end of each dimension (as the ONNX reference does).
  std::vector<int64_t> kernel = node.GetInts("kernel_shape");
  if (static_cast<int64_t>(kernel.size()) + 2 != x->rank()) {
    return NodeError(node, "kernel_shape does not match X rank");
  }
  SY_ASSIGN_OR_RETURN(Window w, ReadWindow(node, kernel));
  std::vector<int64_t> shape = {x->dim(0), x->dim(1)};
  for (size_t i = 0; i < kernel.size(); ++i) {
    shape.push_back((x->dim(static_cast<int64_t>(i) + 2) - 1) * w.strides[i] + kernel[i] -
                    w.pads_begin[i] - w.pads_end[i]);
  }
  SY_ASSIGN_OR_RETURN(int64_t total, CheckedNumElements(shape));
  Tensor y(x->dtype(), shape);
  for (int64_t i = 0; i < x->numel(); ++i) {
    const int64_t at = ind->GetInt64(i);
    if (at < 0 || at >= total) {
      return NodeError(node, "index " + std::to_string(at) + " is outside the output of " +
                                 std::to_string(total) + " elements");
    }
    y.SetDouble(at, x->GetDouble(i));
  }
  if (const Tensor* os = ctx.input(2)) {
    const std::vector<int64_t> want = os->ToInt64Vector();
    if (want.size() != shape.size()) return NodeError(node, "output_shape must have X's rank");
    for (size_t i = 0; i < want.size(); ++i) {
      if (want[i] < shape[i]) {
        return NodeError(node, "output_shape " + ShapeToString(want) +
                                   " is smaller than the unpooled shape " + ShapeToString(shape));
      }
    }
    SY_RETURN_IF_ERROR(CheckedNumElements(want).status());
    Tensor padded(x->dtype(), want);
    std::vector<int64_t> idx(shape.size(), 0);
    const std::vector<int64_t> st = Strides(want);
    for (int64_t i = 0; i < total; ++i) {
      int64_t at = 0;
      for (size_t d = 0; d < idx.size(); ++d) at += idx[d] * st[d];
      padded.SetDouble(at, y.GetDouble(i));
      NextIndex(idx, shape);
    }
    y = std::move(padded);
  }
  return std::vector<Tensor>{std::move(y)};
}

// MaxRoiPool (Caffe/Fast R-CNN semantics): rois are [num_rois, 5] rows of
// (batch index, x1, y1, x2, y2) in input coordinates scaled by spatial_scale.
Result<std::vector<TensorType>> InferMaxRoiPool(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  const TensorType* r = ctx.input(1);
  if (!x || !r) return NodeError(ctx.node, "X and rois are required");
  std::vector<int64_t> ps = ctx.node.GetInts("pooled_shape");
  if (ps.size() != 2) return NodeError(ctx.node, "pooled_shape must have 2 entries");
  Dim nr = r->has_shape && r->rank() == 2 ? r->dims[0] : Dim();
  Dim ch = x->has_shape && x->rank() == 4 ? x->dims[1] : Dim();
  return std::vector<TensorType>{TensorType(x->dtype, {nr, ch, ps[0], ps[1]})};
}

Result<std::vector<Tensor>> RunMaxRoiPool(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* rois, RequireInput(ctx, 1));
  const Node& node = ctx.node;
  std::vector<int64_t> ps = node.GetInts("pooled_shape");
  if (ps.size() != 2 || ps[0] < 1 || ps[1] < 1) return NodeError(node, "bad pooled_shape");
  if (x->rank() != 4 || rois->rank() != 2 || rois->dim(1) != 5) {
    return NodeError(node, "X must be 4-D and rois [num_rois, 5]");
  }
  const double scale = node.GetFloat("spatial_scale", 1.0f);
  const int64_t c = x->dim(1), h = x->dim(2), w = x->dim(3), nr = rois->dim(0);
  const std::vector<double> xd = ToDoubles(*x), rd = ToDoubles(*rois);
  std::vector<double> out(static_cast<size_t>(nr * c * ps[0] * ps[1]));
  for (int64_t r = 0; r < nr; ++r) {
    const double* roi = rd.data() + r * 5;
    const int64_t b = static_cast<int64_t>(roi[0]);
    if (b < 0 || b >= x->dim(0)) return NodeError(node, "roi batch index out of range");
    const int64_t x1 = std::llround(roi[1] * scale), y1 = std::llround(roi[2] * scale);
    const int64_t x2 = std::llround(roi[3] * scale), y2 = std::llround(roi[4] * scale);
    const double bin_h = static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / ps[0];
    const double bin_w = static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / ps[1];
    for (int64_t ch = 0; ch < c; ++ch) {
      const double* plane = xd.data() + (b * c + ch) * h * w;
      for (int64_t py = 0; py < ps[0]; ++py) {
        const int64_t hs = std::clamp<int64_t>(static_cast<int64_t>(std::floor(py * bin_h)) + y1, 0, h);
        const int64_t he = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((py + 1) * bin_h)) + y1, 0, h);
        for (int64_t px = 0; px < ps[1]; ++px) {
          const int64_t ws = std::clamp<int64_t>(static_cast<int64_t>(std::floor(px * bin_w)) + x1, 0, w);
          const int64_t we = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((px + 1) * bin_w)) + x1, 0, w);
          double m = (he <= hs || we <= ws) ? 0.0 : -std::numeric_limits<double>::infinity();
          for (int64_t yy = hs; yy < he; ++yy) {
            for (int64_t xx = ws; xx < we; ++xx) m = std::max(m, plane[yy * w + xx]);
          }
          out[static_cast<size_t>(((r * c + ch) * ps[0] + py) * ps[1] + px)] = m;
        }
      }
    }
  }
  Tensor y(x->dtype(), {nr, c, ps[0], ps[1]});
  StoreDoubles(y, out.data());
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

SY_REGISTER_OPS(Pool) {
  auto infer_max = [](const InferContext& c) { return InferPool(c, PoolKind::kMax); };
  auto infer_avg = [](const InferContext& c) { return InferPool(c, PoolKind::kAvg); };
  auto infer_lp = [](const InferContext& c) { return InferPool(c, PoolKind::kLp); };
  for (int v : {1, 8, 10, 11, 12}) {
    reg.Register({"", "MaxPool", v, 1, 1, 1, v >= 8 ? 2 : 1, infer_max,
                  [](const KernelContext& c) { return Pool(c, PoolKind::kMax, false); }});
  }
  for (int v : {1, 7, 10, 11, 19}) {
    reg.Register({"", "AveragePool", v, 1, 1, 1, 1, infer_avg,
                  [](const KernelContext& c) { return Pool(c, PoolKind::kAvg, false); }});
  }
  for (int v : {1, 2, 11, 18}) {
    reg.Register({"", "LpPool", v, 1, 1, 1, 1, infer_lp,
                  [](const KernelContext& c) { return Pool(c, PoolKind::kLp, false); }});
  }
  reg.Register({"", "GlobalAveragePool", 1, 1, 1, 1, 1, InferGlobalPool,
                [](const KernelContext& c) { return Pool(c, PoolKind::kAvg, true); }});
  reg.Register({"", "GlobalMaxPool", 1, 1, 1, 1, 1, InferGlobalPool,
                [](const KernelContext& c) { return Pool(c, PoolKind::kMax, true); }});
  for (int v : {1, 2}) {
    reg.Register({"", "GlobalLpPool", v, 1, 1, 1, 1, InferGlobalPool,
                  [](const KernelContext& c) { return Pool(c, PoolKind::kLp, true); }});
  }
  for (int v : {9, 11}) {
    reg.Register({"", "MaxUnpool", v, 2, 3, 1, 1, InferMaxUnpool, RunMaxUnpool});
  }
  reg.Register({"", "MaxRoiPool", 1, 2, 2, 1, 1, InferMaxRoiPool, RunMaxRoiPool});
}

}  // namespace switchyard::ops
