// ConvTranspose (1-D/2-D/3-D, grouped, dilated, output_padding/output_shape/auto_pad):
// a GEMM into columns followed by col2im scatter-add.
#include "reference/ops/conv_common.h"

namespace switchyard::ops {
namespace {

// Resolves pads and output spatial sizes. `in` entries < 0 are unknown (output -1).
Result<std::vector<int64_t>> TransposeOutput(const Node& node, Window& w,
                                             const std::vector<int64_t>& in) {
  const size_t ns = in.size();
  std::vector<int64_t> out_pad = node.GetInts("output_padding", std::vector<int64_t>(ns, 0));
  std::vector<int64_t> out_shape = node.GetInts("output_shape");
  if (out_pad.size() != ns) return NodeError(node, "output_padding length mismatch");
  if (out_shape.size() == ns + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != ns) {
    return NodeError(node, "output_shape length mismatch");
  }
  const bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
  std::vector<int64_t> out(ns, -1);
  for (size_t i = 0; i < ns; ++i) {
    if (out_pad[i] < 0) return NodeError(node, "output_padding must be non-negative");
    SY_RETURN_IF_ERROR(CheckTransposeSizes(node, out_pad, out_shape, i, in[i]));
    const int64_t dk = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (w.auto_pad == "VALID") w.pads_begin[i] = w.pads_end[i] = 0;
    if (out_shape.empty() && !same) {
      if (in[i] >= 0) {
        out[i] = w.strides[i] * (in[i] - 1) + out_pad[i] + dk - w.pads_begin[i] - w.pads_end[i];
        if (out[i] < 1) return NodeError(node, "output size would be non-positive");
      }
      continue;
    }
    // Output size given (explicitly, or in*stride for SAME): pads follow from it.
    const int64_t target = !out_shape.empty() ? out_shape[i] : (in[i] >= 0 ? in[i] * w.strides[i] : -1);
    out[i] = target;
    if (in[i] < 0 || target < 0) continue;
    const int64_t total = w.strides[i] * (in[i] - 1) + out_pad[i] + dk - target;
    // Floor division (as the ONNX reference): a negative total (output_shape larger than
    // the natural size) becomes extra zero rows at the end.
    const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
    if (w.auto_pad == "SAME_UPPER") {
      w.pads_begin[i] = half;
      w.pads_end[i] = total - half;
    } else {
      w.pads_begin[i] = total - half;
      w.pads_end[i] = half;
    }
  }
  return out;
}

Result<std::vector<TensorType>> InferConvTranspose(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(DataType t, SameDtype(ctx, {0, 1, 2}));
  if (t != DataType::kUndefined && !IsFloatingDtype(t)) {
    return NodeError(ctx.node, std::string("unsupported dtype ") + DataTypeName(t));
  }
  const TensorType* x = ctx.input(0);
  const TensorType* w = ctx.input(1);
  if (!x || !w) return NodeError(ctx.node, "X and W are required");
  const int64_t rank = x->has_shape ? x->rank() : w->rank();
  if (rank < 0) return std::vector<TensorType>{TensorType::Unranked(t)};
  if (rank < 3) return NodeError(ctx.node, "X must have rank >= 3");
  const size_t ns = static_cast<size_t>(rank - 2);
  const int64_t group = ctx.node.GetInt("group", 1);
  if (group < 1) return NodeError(ctx.node, "group must be positive");
  std::vector<Dim> dims(static_cast<size_t>(rank));
  if (x->has_shape) dims[0] = x->dims[0];
  std::vector<int64_t> kernel = ctx.node.GetInts("kernel_shape");
  if (w->has_shape) {
    if (w->rank() != rank) return NodeError(ctx.node, "W rank differs from X rank");
    if (w->dims[1].is_static()) dims[1] = Dim(w->dims[1].value * group);
    if (x->has_shape && x->dims[1].is_static() && w->dims[0].is_static() &&
        x->dims[1].value != w->dims[0].value) {
      return NodeError(ctx.node, "input channels " + std::to_string(x->dims[1].value) +
                                     " differ from W's first dimension " +
                                     std::to_string(w->dims[0].value));
    }
    if (kernel.empty()) {
      for (size_t i = 0; i < ns; ++i) kernel.push_back(w->dims[i + 2].value);
    }
  }
  bool known = kernel.size() == ns;
  for (int64_t k : kernel) known = known && k > 0;
  if (known) {
    SY_ASSIGN_OR_RETURN(Window win, ReadWindow(ctx.node, kernel));
    std::vector<int64_t> in(ns, -1);
    if (x->has_shape) {
      for (size_t i = 0; i < ns; ++i) in[i] = x->dims[i + 2].value;
    }
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> out, TransposeOutput(ctx.node, win, in));
    for (size_t i = 0; i < ns; ++i) {
      if (out[i] >= 0) dims[i + 2] = Dim(out[i]);
    }
  }
  return std::vector<TensorType>{TensorType(t, dims)};
}

Result<std::vector<Tensor>> RunConvTranspose(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* w, RequireInput(ctx, 1));
  const Node& node = ctx.node;
  if (!IsFloatingDtype(x->dtype()) || w->dtype() != x->dtype()) {
    return NodeError(node, "X and W must share a floating-point dtype");
  }
  if (x->rank() < 3 || w->rank() != x->rank()) {
    return NodeError(node, "X must have rank >= 3 and W the same rank");
  }
  const int64_t group = node.GetInt("group", 1);
  const int64_t n = x->dim(0), c = x->dim(1);
  if (group < 1 || w->dim(0) != c || c % group != 0) {
    return NodeError(node, "channel mismatch: X " + ShapeToString(x->shape()) + ", W " +
                               ShapeToString(w->shape()) + ", group " + std::to_string(group));
  }
  const int64_t mg = w->dim(1), m = mg * group, cg = c / group;
  const size_t ns = static_cast<size_t>(x->rank() - 2);
  std::vector<int64_t> kernel(w->shape().begin() + 2, w->shape().end());
  std::vector<int64_t> attr = node.GetInts("kernel_shape");
  if (!attr.empty() && attr != kernel) return NodeError(node, "kernel_shape does not match W");
  SY_ASSIGN_OR_RETURN(Window win, ReadWindow(node, kernel));
  std::vector<int64_t> in_sp(x->shape().begin() + 2, x->shape().end());
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> out_sp, TransposeOutput(node, win, in_sp));
  for (size_t i = 0; i < ns; ++i) {
    if (out_sp[i] < 1) return NodeError(node, "output size would be non-positive");
  }
  SY_ASSIGN_OR_RETURN(Geometry3 g, MakeGeometry3(node, win, in_sp, out_sp));
  std::vector<int64_t> out_shape = {n, m};
  out_shape.insert(out_shape.end(), out_sp.begin(), out_sp.end());
  SY_RETURN_IF_ERROR(CheckedNumElements(out_shape).status());

  const std::vector<double> xd = ToDoubles(*x), wd = ToDoubles(*w);
  const int64_t ks = g.k_size(), in_size = g.in_size(), out_size = g.out_size();
  const int64_t rows = mg * ks;  // column-matrix rows per group: (oc, kernel position)
  std::vector<double> out(static_cast<size_t>(n * m * out_size), 0.0);
  std::vector<double> wt(static_cast<size_t>(rows * cg));
  std::vector<double> col(static_cast<size_t>(rows * in_size));
  for (int64_t gi = 0; gi < group; ++gi) {
    // W_g is [cg, rows]; transpose once so the GEMM reads it row-major.
    const double* wg = wd.data() + gi * cg * rows;
    for (int64_t ci = 0; ci < cg; ++ci) {
      for (int64_t r = 0; r < rows; ++r) wt[static_cast<size_t>(r * cg + ci)] = wg[ci * rows + r];
    }
    for (int64_t b = 0; b < n; ++b) {
      std::fill(col.begin(), col.end(), 0.0);
      GemmAccumulate(wt.data(), cg, xd.data() + (b * c + gi * cg) * in_size, in_size,
                     col.data(), in_size, rows, in_size, cg);
      for (int64_t oc = 0; oc < mg; ++oc) {
        double* op = out.data() + (b * m + gi * mg + oc) * out_size;
        const double* cr = col.data() + oc * ks * in_size;
        for (int64_t kd = 0; kd < g.k[0]; ++kd) {
          for (int64_t kh = 0; kh < g.k[1]; ++kh) {
            for (int64_t kw = 0; kw < g.k[2]; ++kw, cr += in_size) {
              for (int64_t id = 0; id < g.in[0]; ++id) {
                const int64_t od = id * g.s[0] - g.pb[0] + kd * g.d[0];
                if (od < 0 || od >= g.out[0]) continue;
                for (int64_t ih = 0; ih < g.in[1]; ++ih) {
                  const int64_t oh = ih * g.s[1] - g.pb[1] + kh * g.d[1];
                  if (oh < 0 || oh >= g.out[1]) continue;
                  const double* src = cr + (id * g.in[1] + ih) * g.in[2];
                  double* dst = op + (od * g.out[1] + oh) * g.out[2];
                  int64_t ow = kw * g.d[2] - g.pb[2];
                  for (int64_t iw = 0; iw < g.in[2]; ++iw, ow += g.s[2]) {
                    if (ow >= 0 && ow < g.out[2]) dst[ow] += src[iw];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  if (const Tensor* bias = ctx.input(2)) {
    if (bias->rank() != 1 || bias->numel() != m) {
      return NodeError(node, "B must be 1-D with " + std::to_string(m) + " elements");
    }
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t oc = 0; oc < m; ++oc) {
        const double bv = bias->GetDouble(oc);
        double* op = out.data() + (b * m + oc) * out_size;
        for (int64_t j = 0; j < out_size; ++j) op[j] += bv;
      }
    }
  }
  Tensor y(x->dtype(), out_shape);
  StoreDoubles(y, out.data());
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

SY_REGISTER_OPS(ConvTranspose) {
  for (int v : {1, 11}) {
    reg.Register({"", "ConvTranspose", v, 2, 3, 1, 1, InferConvTranspose, RunConvTranspose});
  }
}

}  // namespace switchyard::ops
