// Native ConvTranspose (fp32, 1-D/2-D/3-D, any group/stride/dilation/pads/output_padding/
// output_shape/auto_pad) as GEMM + col2im: per image and group, col[M/g·K, HW] =
// Wᵀ_g · X_g with the native blocked GEMM, then each (oc, kernel tap) row of col is
// scatter-added into the output plane, output channels spread over OpenMP threads. With a
// constant W, Wᵀ is laid out at build time so the GEMM reads it row-major.
#include "backends/cpu/native/conv_transpose.h"

#include <algorithm>
#include <vector>

#include "backends/cpu/native/gemm.h"
#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::native {

Result<DeconvGeom> ResolveConvTranspose(const Node& node, const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& w) {
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) {
    return ops::NodeError(node, "X and W must have equal rank 3..5, got " + ShapeToString(x) +
                                    " and " + ShapeToString(w));
  }
  DeconvGeom g;
  g.group = node.GetInt("group", 1);
  g.n = x[0];
  g.c = x[1];
  if (g.group < 1 || w[0] != g.c || g.c % g.group != 0) {
    return ops::NodeError(node, "channel mismatch: X " + ShapeToString(x) + ", W " + ShapeToString(w) +
                                    ", group " + std::to_string(g.group));
  }
  g.m = w[1] * g.group;
  const size_t ns = x.size() - 2;
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  const std::vector<int64_t> attr = node.GetInts("kernel_shape");
  if (!attr.empty() && attr != kernel) return ops::NodeError(node, "kernel_shape does not match W");
  SY_ASSIGN_OR_RETURN(g.win, ops::ReadWindow(node, kernel));
  ops::Window& win = g.win;
  std::vector<int64_t> out_pad = node.GetInts("output_padding", std::vector<int64_t>(ns, 0));
  std::vector<int64_t> out_shape = node.GetInts("output_shape");
  if (out_pad.size() != ns) return ops::NodeError(node, "output_padding length mismatch");
  if (out_shape.size() == ns + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != ns) return ops::NodeError(node, "output_shape length mismatch");
  const bool same = win.auto_pad == "SAME_UPPER" || win.auto_pad == "SAME_LOWER";
  g.in_sp.assign(x.begin() + 2, x.end());
  g.out_sp.assign(ns, 0);
  for (size_t i = 0; i < ns; ++i) {
    if (out_pad[i] < 0) return ops::NodeError(node, "output_padding must be non-negative");
    SY_RETURN_IF_ERROR(ops::CheckTransposeSizes(node, out_pad, out_shape, i, g.in_sp[i]));
    const int64_t dk = (win.kernel[i] - 1) * win.dilations[i] + 1, in = g.in_sp[i];
    if (win.auto_pad == "VALID") win.pads_begin[i] = win.pads_end[i] = 0;
    if (out_shape.empty() && !same) {
      g.out_sp[i] = win.strides[i] * (in - 1) + out_pad[i] + dk - win.pads_begin[i] - win.pads_end[i];
    } else {
      const int64_t target = !out_shape.empty() ? out_shape[i] : in * win.strides[i];
      g.out_sp[i] = target;
      const int64_t total = win.strides[i] * (in - 1) + out_pad[i] + dk - target;
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      win.pads_begin[i] = win.auto_pad == "SAME_UPPER" ? half : total - half;
      win.pads_end[i] = total - win.pads_begin[i];
    }
    if (g.out_sp[i] < 1) return ops::NodeError(node, "output size would be non-positive");
  }
  g.out_shape = {g.n, g.m};
  g.out_shape.insert(g.out_shape.end(), g.out_sp.begin(), g.out_sp.end());
  return g;
}

namespace {

// Scatter-adds col rows (oc, kd, kh, kw) of one output channel into its plane.
void Col2Im(const float* col, float* out, const ops::Geometry3& g) {
  const int64_t in_size = g.in_size();
  for (int64_t kd = 0; kd < g.k[0]; ++kd) {
    for (int64_t kh = 0; kh < g.k[1]; ++kh) {
      for (int64_t kw = 0; kw < g.k[2]; ++kw, col += in_size) {
        // Input columns iw whose ow = iw*s - pb + kw*d lies in [0, out).
        const int64_t off = kw * g.d[2] - g.pb[2];
        const int64_t iw0 = off >= 0 ? 0 : (-off + g.s[2] - 1) / g.s[2];
        const int64_t lim = g.out[2] - off;  // iw*s < lim
        const int64_t iw1 = lim <= 0 ? 0 : std::min(g.in[2], (lim + g.s[2] - 1) / g.s[2]);
        for (int64_t id = 0; id < g.in[0]; ++id) {
          const int64_t od = id * g.s[0] - g.pb[0] + kd * g.d[0];
          if (od < 0 || od >= g.out[0]) continue;
          for (int64_t ih = 0; ih < g.in[1]; ++ih) {
            const int64_t oh = ih * g.s[1] - g.pb[1] + kh * g.d[1];
            if (oh < 0 || oh >= g.out[1]) continue;
            const float* src = col + (id * g.in[1] + ih) * g.in[2];
            float* dst = out + (od * g.out[1] + oh) * g.out[2];
            if (g.s[2] == 1) {
              for (int64_t iw = iw0; iw < iw1; ++iw) dst[iw + off] += src[iw];
            } else {
              for (int64_t iw = iw0; iw < iw1; ++iw) dst[iw * g.s[2] + off] += src[iw];
            }
          }
        }
      }
    }
  }
}

class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(const Node& node, std::vector<int64_t> w_shape, const Tensor* wt)
      : node_(node), w_shape_(std::move(w_shape)), wt_(wt) {}

  Result<std::vector<std::vector<int64_t>>> OutputShapes(
      const std::vector<const TensorRef*>& in) const override {
    if (in.empty() || !in[0]) return ops::NodeError(node_, "X is required");
    SY_ASSIGN_OR_RETURN(DeconvGeom g, ResolveConvTranspose(node_, in[0]->shape, WShape(in)));
    return std::vector<std::vector<int64_t>>{g.out_shape};
  }

  Status Run(const KernelIO& io) const override {
    const TensorRef& x = *io.inputs[0];
    SY_ASSIGN_OR_RETURN(DeconvGeom dg, ResolveConvTranspose(node_, x.shape, WShape(io.inputs)));
    SY_ASSIGN_OR_RETURN(ops::Geometry3 g, ops::MakeGeometry3(node_, dg.win, dg.in_sp, dg.out_sp));
    const int64_t group = dg.group, cg = dg.c / group, mg = dg.m / group;
    const int64_t ks = g.k_size(), in_size = g.in_size(), out_size = g.out_size();
    const int64_t rows = mg * ks;
    const TensorRef* bias = io.inputs.size() > 2 ? io.inputs[2] : nullptr;
    if (bias && bias->numel() != dg.m) {
      return ops::NodeError(node_, "B must have " + std::to_string(dg.m) + " elements");
    }
    // A = Wᵀ_g [rows, cg]: pre-transposed (row-major) or read strided from W [cg, rows].
    const float* wt = wt_ ? wt_->data<float>() : io.inputs[1]->as<float>();
    const int64_t rsa = wt_ ? cg : 1, csa = wt_ ? 1 : rows;
    thread_local std::vector<float> col_buf;  // per calling thread: sessions run concurrently
    float* const col = ScratchOf(col_buf, static_cast<size_t>(rows * in_size));  // worker threads below must not name the thread_local
    const float* xp = x.as<float>();
    float* yp = io.outputs[0]->as<float>();
    std::fill(yp, yp + dg.n * dg.m * out_size, 0.f);
    for (int64_t b = 0; b < dg.n; ++b) {
      for (int64_t gi = 0; gi < group; ++gi) {
        Gemm(rows, in_size, cg, wt + gi * cg * rows, rsa, csa, xp + (b * dg.c + gi * cg) * in_size,
             in_size, 1, col, in_size, GemmEpilogue{}, io.threads);
        float* out = yp + (b * dg.m + gi * mg) * out_size;
        const float* bp = bias ? bias->as<float>() + gi * mg : nullptr;
        ParallelFor(mg, io.threads, 1, [&](int64_t o0, int64_t o1) {
          for (int64_t oc = o0; oc < o1; ++oc) {
            float* plane = out + oc * out_size;
            Col2Im(col + oc * ks * in_size, plane, g);
            if (bp) {
              const float bv = bp[oc];
              for (int64_t j = 0; j < out_size; ++j) plane[j] += bv;
            }
          }
        });
      }
    }
    return Status::Ok();
  }

 private:
  std::vector<int64_t> WShape(const std::vector<const TensorRef*>& in) const {
    if (!wt_ && in.size() > 1 && in[1]) return in[1]->shape;
    return w_shape_;
  }

  const Node node_;
  const std::vector<int64_t> w_shape_;
  const Tensor* const wt_;  // Wᵀ per group [group][rows][cg], or nullptr (W at run time)
};

bool SupportsConvTranspose(const Node& node, const KernelBuildContext& ctx) {
  const auto& d = ctx.input_dtypes;
  if (d.size() < 2 || d[0] != DataType::kFloat || d[1] != DataType::kFloat) return false;
  if (node.HasInput(2) && d[2] != DataType::kFloat) return false;
  const auto& w = ctx.input_shapes[1];
  if (w.size() < 3 || w.size() > 5 || ctx.input_shapes[0].size() != w.size()) return false;
  return std::none_of(w.begin(), w.end(), [](int64_t v) { return v < 0; });
}

Status PrepareConvTranspose(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  const Tensor* w = ctx.constants[1];
  spec.params["w_shape"] = ctx.input_shapes[1];
  if (!w) return Status::Ok();
  const int64_t group = node.GetInt("group", 1), c = w->dim(0);
  if (group < 1 || c % group != 0) return ops::NodeError(node, "channels do not match group");
  const int64_t cg = c / group, rows = w->numel() / c;
  Tensor wt(DataType::kFloat, {group, rows, cg});
  const float* src = w->data<float>();
  float* dst = wt.data<float>();
  for (int64_t gi = 0; gi < group; ++gi) {
    for (int64_t ci = 0; ci < cg; ++ci) {
      for (int64_t r = 0; r < rows; ++r) dst[(gi * rows + r) * cg + ci] = src[(gi * cg + ci) * rows + r];
    }
  }
  spec.packed.push_back(std::move(wt));
  spec.consumed_inputs = {1};
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateConvTranspose(const StepView& v) {
  std::vector<int64_t> w_shape = v.params.value("w_shape", std::vector<int64_t>{});
  if (w_shape.empty() && v.input_shapes.size() > 1) w_shape = v.input_shapes[1];
  const Tensor* wt = v.packed.empty() ? nullptr : v.packed[0];
  return std::unique_ptr<Kernel>(new ConvTransposeKernel(v.node, std::move(w_shape), wt));
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeConvTranspose) {
  RegisterNative(reg, "", "ConvTranspose", SupportsConvTranspose, CreateConvTranspose,
                 PrepareConvTranspose);
}

}  // namespace switchyard::native
