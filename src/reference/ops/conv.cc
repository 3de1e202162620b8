// Conv (1-D/2-D/3-D, grouped, dilated, auto_pad) and the im2col + GEMM core that
// ConvInteger and QLinearConv share.
#include "reference/ops/conv_common.h"

namespace switchyard::ops {

namespace {

// Unfolds the `cg` channels of one image into rows of [cg*KD*KH*KW, OD*OH*OW].
void Im2Col(const double* x, int64_t cg, const Geometry3& g, double* col) {
  const int64_t out_sp = g.out_size(), in_sp = g.in_size();
  double* dst = col;
  for (int64_t c = 0; c < cg; ++c) {
    const double* xc = x + c * in_sp;
    for (int64_t kd = 0; kd < g.k[0]; ++kd) {
      for (int64_t kh = 0; kh < g.k[1]; ++kh) {
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
              const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
              double* row = dst + (od * g.out[1] + oh) * g.out[2];
              if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
                std::fill(row, row + g.out[2], 0.0);
                continue;
              }
              const double* xr = xc + (id * g.in[1] + ih) * g.in[2];
              int64_t iw = kw * g.d[2] - g.pb[2];
              for (int64_t ow = 0; ow < g.out[2]; ++ow, iw += g.s[2]) {
                row[ow] = (iw >= 0 && iw < g.in[2]) ? xr[iw] : 0.0;
              }
            }
          }
          dst += out_sp;
        }
      }
    }
  }
}

bool IsPointwise(const Geometry3& g) {
  for (int i = 0; i < 3; ++i) {
    if (g.k[i] != 1 || g.s[i] != 1 || g.pb[i] != 0 || g.pe[i] != 0) return false;
  }
  return true;
}

}  // namespace

std::vector<double> ConvCore(const double* x, const double* w, int64_t n, int64_t c,
                             int64_t m, int64_t group, const Geometry3& g) {
  const int64_t cg = c / group, mg = m / group;
  const int64_t kk = cg * g.k_size(), out_sp = g.out_size(), in_sp = g.in_size();
  std::vector<double> out(static_cast<size_t>(n * m * out_sp), 0.0);
  // A 1x1, stride-1, unpadded kernel reads the image itself as its column matrix.
  const bool pointwise = IsPointwise(g);
  std::vector<double> col(pointwise ? 0 : static_cast<size_t>(kk * out_sp));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const double* xg = x + (b * c + gi * cg) * in_sp;
      const double* colp = xg;
      if (!pointwise) {
        Im2Col(xg, cg, g, col.data());
        colp = col.data();
      }
      GemmAccumulate(w + gi * mg * kk, kk, colp, out_sp, out.data() + (b * m + gi * mg) * out_sp,
                     out_sp, mg, out_sp, kk);
    }
  }
  return out;
}

Result<TensorType> InferConvShape(const Node& node, const TensorType* x, const TensorType* w,
                                  DataType out) {
  if (!x || !w) return NodeError(node, "X and W are required");
  int64_t rank = x->has_shape ? x->rank() : w->rank();
  if (rank < 0) return TensorType::Unranked(out);
  if (rank < 3) return NodeError(node, "X must have rank >= 3, got " + std::to_string(rank));
  if (x->has_shape && w->has_shape && w->rank() != rank) {
    return NodeError(node, "W rank " + std::to_string(w->rank()) + " differs from X rank " +
                               std::to_string(rank));
  }
  const size_t ns = static_cast<size_t>(rank - 2);
  const int64_t group = node.GetInt("group", 1);
  if (group < 1) return NodeError(node, "group must be positive");
  std::vector<int64_t> kernel = node.GetInts("kernel_shape");
  if (!kernel.empty() && kernel.size() != ns) {
    return NodeError(node, "kernel_shape has " + std::to_string(kernel.size()) +
                               " entries for " + std::to_string(ns) + " spatial dims");
  }
  if (w->has_shape) {
    for (size_t i = 0; i < ns && kernel.size() == ns; ++i) {
      const Dim& d = w->dims[i + 2];
      if (d.is_static() && d.value != kernel[i]) {
        return NodeError(node, "kernel_shape does not match the weight shape");
      }
    }
    if (kernel.empty()) {
      for (size_t i = 0; i < ns; ++i) kernel.push_back(w->dims[i + 2].value);
    }
    const Dim& m = w->dims[0];
    if (m.is_static() && m.value % group != 0) {
      return NodeError(node, "output channels " + std::to_string(m.value) +
                                 " not divisible by group " + std::to_string(group));
    }
    if (x->has_shape && x->dims[1].is_static() && w->dims[1].is_static() &&
        x->dims[1].value != w->dims[1].value * group) {
      return NodeError(node, "input has " + std::to_string(x->dims[1].value) +
                                 " channels but weights expect " +
                                 std::to_string(w->dims[1].value) + " x group " +
                                 std::to_string(group));
    }
  }
  std::vector<Dim> dims(static_cast<size_t>(rank));
  if (x->has_shape) dims[0] = x->dims[0];
  if (w->has_shape) dims[1] = w->dims[0];
  bool kernel_known = kernel.size() == ns;
  for (int64_t k : kernel) kernel_known = kernel_known && k > 0;
  if (kernel_known && x->has_shape) {
    SY_ASSIGN_OR_RETURN(Window win, ReadWindow(node, kernel));
    for (size_t i = 0; i < ns; ++i) {
      SY_ASSIGN_OR_RETURN(int64_t o, WindowOutputDim(node, win, i, x->dims[i + 2].value));
      if (o >= 0) dims[i + 2] = Dim(o);
    }
  }
  return TensorType(out, dims);
}

Result<ConvPlan> PlanConv(const Node& node, const Tensor& x, const Tensor& w) {
  if (x.rank() < 3) return NodeError(node, "X must have rank >= 3");
  if (w.rank() != x.rank()) return NodeError(node, "W rank differs from X rank");
  ConvPlan p;
  p.n = x.dim(0);
  p.c = x.dim(1);
  p.m = w.dim(0);
  p.group = node.GetInt("group", 1);
  if (p.group < 1 || p.m % p.group != 0 || p.c != w.dim(1) * p.group) {
    return NodeError(node, "channel mismatch: X " + ShapeToString(x.shape()) + ", W " +
                               ShapeToString(w.shape()) + ", group " +
                               std::to_string(p.group));
  }
  const size_t ns = static_cast<size_t>(x.rank() - 2);
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  std::vector<int64_t> attr = node.GetInts("kernel_shape");
  if (!attr.empty() && attr != kernel) {
    return NodeError(node, "kernel_shape does not match the weight shape");
  }
  SY_ASSIGN_OR_RETURN(Window win, ReadWindow(node, kernel));
  std::vector<int64_t> in_sp(x.shape().begin() + 2, x.shape().end()), out_sp(ns);
  for (size_t i = 0; i < ns; ++i) {
    SY_ASSIGN_OR_RETURN(out_sp[i], WindowOutputDim(node, win, i, in_sp[i]));
  }
  SY_ASSIGN_OR_RETURN(p.g, MakeGeometry3(node, win, in_sp, out_sp));
  p.out_shape = {p.n, p.m};
  p.out_shape.insert(p.out_shape.end(), out_sp.begin(), out_sp.end());
  return p;
}

namespace {

Result<std::vector<TensorType>> InferConv(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(DataType t, SameDtype(ctx, {0, 1, 2}));
  if (t != DataType::kUndefined && !IsFloatingDtype(t)) {
    return NodeError(ctx.node, std::string("unsupported dtype ") + DataTypeName(t));
  }
  SY_ASSIGN_OR_RETURN(TensorType out, InferConvShape(ctx.node, ctx.input(0), ctx.input(1), t));
  if (const TensorType* b = ctx.input(2); b && b->has_shape && out.has_shape) {
    if (b->rank() != 1) return NodeError(ctx.node, "B must be 1-D");
    if (b->dims[0].is_static() && out.dims[1].is_static() && b->dims[0].value != out.dims[1].value) {
      return NodeError(ctx.node, "B has " + std::to_string(b->dims[0].value) +
                                     " elements for " + std::to_string(out.dims[1].value) +
                                     " output channels");
    }
  }
  return std::vector<TensorType>{out};
}

Result<std::vector<Tensor>> RunConv(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* w, RequireInput(ctx, 1));
  if (!IsFloatingDtype(x->dtype()) || w->dtype() != x->dtype()) {
    return NodeError(ctx.node, "X and W must share a floating-point dtype");
  }
  SY_ASSIGN_OR_RETURN(ConvPlan p, PlanConv(ctx.node, *x, *w));
  const std::vector<double> xd = ToDoubles(*x), wd = ToDoubles(*w);
  std::vector<double> out = ConvCore(xd.data(), wd.data(), p.n, p.c, p.m, p.group, p.g);
  if (const Tensor* b = ctx.input(2)) {
    if (b->numel() != p.m || b->rank() != 1) {
      return NodeError(ctx.node, "B must be 1-D with " + std::to_string(p.m) + " elements");
    }
    const int64_t sp = p.g.out_size();
    for (int64_t i = 0; i < p.n; ++i) {
      for (int64_t c = 0; c < p.m; ++c) {
        const double bv = b->GetDouble(c);
        double* o = out.data() + (i * p.m + c) * sp;
        for (int64_t j = 0; j < sp; ++j) o[j] += bv;
      }
    }
  }
  Tensor y(x->dtype(), p.out_shape);
  StoreDoubles(y, out.data());
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

SY_REGISTER_OPS(Conv) {
  for (int v : {1, 11}) reg.Register({"", "Conv", v, 2, 3, 1, 1, InferConv, RunConv});
}

}  // namespace switchyard::ops
