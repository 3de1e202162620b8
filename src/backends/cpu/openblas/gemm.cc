// OpenBLAS provider: MatMul, Gemm and switchyard.FusedMatMul through cblas_sgemm with an
// epilogue loop (bias, residual, activation), and Conv/FusedConv variant "im2col_gemm"
// (im2col, or the image itself for 1x1 stride-1 unpadded kernels, then cblas_sgemm) on
// plain NCHW float32. OpenBLAS's thread count is process-global: each call sets it to
// io.threads, so concurrent sessions with different thread counts race on that setting
// (results stay correct).
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/op_impl.h"
#include "reference/ops/common.h"
#include "reference/ops/conv_common.h"

namespace switchyard::openblas {
namespace {

// The fused activation applied in place (same definitions as the reference kernels).
void Activate(const Node& node, float* y, int64_t n) {
  const std::string act = node.GetString("activation", "");
  if (act.empty()) return;
  const std::vector<float> p = node.GetFloats("activation_params", {});
  auto param = [&](size_t i, float def) { return i < p.size() ? p[i] : def; };
  const float a = param(0, act == "LeakyRelu" ? 0.01f : act == "HardSigmoid" ? 0.2f : -3.4028235e38f);
  const float b = param(1, act == "HardSigmoid" ? 0.5f : 3.4028235e38f);
  const bool gelu_tanh = act == "Gelu" && (param(0, 0.f) != 0.f || node.GetString("approximate", "none") == "tanh");
  for (int64_t i = 0; i < n; ++i) {
    const float x = y[i];
    float r = x;
    if (act == "Relu") r = x > 0 ? x : 0;
    else if (act == "LeakyRelu") r = x >= 0 ? x : a * x;
    else if (act == "Clip") r = std::min(std::max(x, a), b);
    else if (act == "Sigmoid") r = 1.f / (1.f + std::exp(-x));
    else if (act == "HardSigmoid") r = std::min(1.f, std::max(0.f, a * x + b));
    else if (act == "HardSwish") r = x * std::min(1.f, std::max(0.f, x / 6.f + 0.5f));
    else if (act == "Tanh") r = std::tanh(x);
    else if (act == "SiLU") r = x / (1.f + std::exp(-x));
    else if (act == "Gelu" && gelu_tanh) r = 0.5f * x * (1.f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    else if (act == "Gelu") r = 0.5f * x * (1.f + std::erf(x * 0.70710678f));
    y[i] = r;
  }
}

bool ActivationKnown(const Node& node) {
  static const char* kActs[] = {"", "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid",
                                "HardSwish", "Tanh", "SiLU", "Gelu"};
  const std::string act = node.GetString("activation", "");
  return std::any_of(std::begin(kActs), std::end(kActs), [&](const char* k) { return act == k; });
}

bool AllFloat(const Node& node, const KernelBuildContext& ctx) {
  for (size_t i = 0; i < ctx.input_dtypes.size(); ++i) {
    if (node.HasInput(i) && ctx.input_dtypes[i] != DataType::kFloat) return false;
  }
  return ctx.input_dtypes.size() >= 2;
}

// Numpy-broadcast read of `t` (float32) at the flat output index `i` of `out`.
float BroadcastAt(const TensorRef& t, const std::vector<int64_t>& out, int64_t i) {
  int64_t off = 0, stride = 1;
  const size_t r = out.size(), tr = t.shape.size();
  for (size_t d = r; d-- > 0;) {
    const int64_t idx = i % out[d];
    i /= out[d];
    const size_t td = d + tr - r;
    if (d + tr >= r && td < tr) {
      if (t.shape[td] != 1) off += idx * stride;
      stride *= t.shape[td];
    }
  }
  return t.as<float>()[off];
}

// ---- MatMul / Gemm / FusedMatMul ------------------------------------------------------

struct MmForm {
  bool ta = false, tb = false;
  float alpha = 1.f, beta = 1.f;
  int c = -1, z = -1;  // Gemm's C / FusedMatMul's bias (c, broadcast) and residual z
};

MmForm FormOf(const Node& node) {
  MmForm f;
  if (node.op_type == "Gemm") {
    f.ta = node.GetInt("transA", 0) != 0;
    f.tb = node.GetInt("transB", 0) != 0;
    f.alpha = node.GetFloat("alpha", 1.f);
    f.beta = node.GetFloat("beta", 1.f);
    if (node.HasInput(2)) f.c = 2;
  } else if (node.op_type == "FusedMatMul") {
    f.ta = node.GetInt("trans_a", 0) != 0;
    f.tb = node.GetInt("trans_b", 0) != 0;
    f.alpha = node.GetFloat("alpha", 1.f);
    if (node.HasInput(2)) f.c = 2;
    if (node.HasInput(3)) f.z = 3;
  }
  return f;
}

struct MmShape {
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> a_batch, b_batch, batch, out;
};

Result<MmShape> ShapeOf(const Node& node, const MmForm& f, std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.empty() || b.empty()) return ops::NodeError(node, "operands must have rank >= 1");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  MmShape s;
  s.m = f.ta ? a.back() : a[a.size() - 2];
  s.k = f.ta ? a[a.size() - 2] : a.back();
  s.n = f.tb ? b[b.size() - 2] : b.back();
  if ((f.tb ? b.back() : b[b.size() - 2]) != s.k) return ops::NodeError(node, "inner dimensions differ");
  s.a_batch.assign(a.begin(), a.end() - 2);
  s.b_batch.assign(b.begin(), b.end() - 2);
  SY_ASSIGN_OR_RETURN(s.batch, ops::BroadcastShapes(node, {s.a_batch, s.b_batch}));
  s.out = s.batch;
  if (!a1) s.out.push_back(s.m);
  if (!b1) s.out.push_back(s.n);
  return s;
}

// Flat offset in a (right-aligned, broadcast) batch of the output batch index `i`.
int64_t BatchOffset(const std::vector<int64_t>& own, const std::vector<int64_t>& full, int64_t i) {
  int64_t off = 0, stride = 1;
  for (size_t d = full.size(); d-- > 0;) {
    const int64_t idx = i % full[d];
    i /= full[d];
    const size_t r = own.size() + d;
    if (r >= full.size()) {
      const int64_t od = own[r - full.size()];
      if (od != 1) off += idx * stride;
      stride *= od;
    }
  }
  return off;
}

class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(const Node& node) : node_(node), f_(FormOf(node)) {}

  Result<std::vector<std::vector<int64_t>>> OutputShapes(const std::vector<const TensorRef*>& in) const override {
    if (in.size() < 2 || !in[0] || !in[1]) return ops::NodeError(node_, "A and B are required");
    SY_ASSIGN_OR_RETURN(MmShape s, ShapeOf(node_, f_, in[0]->shape, in[1]->shape));
    return std::vector<std::vector<int64_t>>{s.out};
  }

  Status Run(const KernelIO& io) const override {
    const TensorRef* a = io.inputs[0];
    const TensorRef* b = io.inputs[1];
    TensorRef* y = io.outputs[0];
    SY_ASSIGN_OR_RETURN(MmShape s, ShapeOf(node_, f_, a->shape, b->shape));
    openblas_set_num_threads(std::max(1, io.threads));
    int64_t nb = 1;
    for (int64_t d : s.batch) nb *= d;
    const int64_t mn = s.m * s.n;
    float* out = y->as<float>();
    for (int64_t i = 0; i < nb; ++i) {
      const float* ap = a->as<float>() + BatchOffset(s.a_batch, s.batch, i) * s.m * s.k;
      const float* bp = b->as<float>() + BatchOffset(s.b_batch, s.batch, i) * s.k * s.n;
      cblas_sgemm(CblasRowMajor, f_.ta ? CblasTrans : CblasNoTrans, f_.tb ? CblasTrans : CblasNoTrans,
                  static_cast<int>(s.m), static_cast<int>(s.n), static_cast<int>(s.k), f_.alpha, ap,
                  static_cast<int>(f_.ta ? s.m : s.k), bp, static_cast<int>(f_.tb ? s.k : s.n), 0.f,
                  out + i * mn, static_cast<int>(s.n));
    }
    // Epilogue over the whole output: + beta*C (broadcast), + Z, activation.
    const int64_t total = y->numel();
    for (int idx : {f_.c, f_.z}) {
      if (idx < 0) continue;
      const TensorRef* t = io.inputs.size() > static_cast<size_t>(idx) ? io.inputs[idx] : nullptr;
      if (!t) return ops::NodeError(node_, "bias/residual input missing");
      const float scale = idx == f_.c ? f_.beta : 1.f;
      if (t->shape == y->shape) {
        for (int64_t i = 0; i < total; ++i) out[i] += scale * t->as<float>()[i];
      } else {
        for (int64_t i = 0; i < total; ++i) out[i] += scale * BroadcastAt(*t, y->shape, i);
      }
    }
    Activate(node_, out, total);
    return Status::Ok();
  }

 private:
  const Node node_;
  const MmForm f_;
};

bool SupportsGemm(const Node& node, const KernelBuildContext& ctx) {
  return AllFloat(node, ctx) && ActivationKnown(node) && !ctx.input_shapes[0].empty() &&
         !ctx.input_shapes[1].empty() && ctx.precision == "fp32" && ctx.quant_weights == "none";
}

// ---- Conv / FusedConv (im2col + sgemm) ------------------------------------------------

class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const Node& node) : node_(node) {}

  Result<std::vector<std::vector<int64_t>>> OutputShapes(const std::vector<const TensorRef*>& in) const override {
    if (in.size() < 2 || !in[0] || !in[1]) return ops::NodeError(node_, "X and W are required");
    SY_ASSIGN_OR_RETURN(Plan p, PlanFor(in[0]->shape, in[1]->shape));
    return std::vector<std::vector<int64_t>>{p.out};
  }

  Status Run(const KernelIO& io) const override {
    const TensorRef* x = io.inputs[0];
    const TensorRef* w = io.inputs[1];
    SY_ASSIGN_OR_RETURN(Plan p, PlanFor(x->shape, w->shape));
    openblas_set_num_threads(std::max(1, io.threads));
    const int64_t c = x->shape[1], m = w->shape[0], cg = c / p.group, mg = m / p.group;
    const int64_t kk = cg * p.kh * p.kw, osp = p.oh * p.ow, isp = p.ih * p.iw;
    const bool pointwise = p.kh == 1 && p.kw == 1 && p.sh == 1 && p.sw == 1 && p.pt == 0 && p.pl == 0 &&
                           p.pb == 0 && p.pr == 0;
    thread_local std::vector<float> col;
    if (!pointwise) col.resize(static_cast<size_t>(kk * osp));
    float* out = y(io)->as<float>();
    for (int64_t b = 0; b < x->shape[0]; ++b) {
      for (int64_t g = 0; g < p.group; ++g) {
        const float* xg = x->as<float>() + (b * c + g * cg) * isp;
        const float* src = xg;
        if (!pointwise) {
          Im2Col(xg, cg, p, col.data());
          src = col.data();
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(mg), static_cast<int>(osp),
                    static_cast<int>(kk), 1.f, w->as<float>() + g * mg * kk, static_cast<int>(kk), src,
                    static_cast<int>(osp), 0.f, out + (b * m + g * mg) * osp, static_cast<int>(osp));
      }
    }
    const int64_t total = x->shape[0] * m * osp;
    const TensorRef* bias = node_.HasInput(2) && io.inputs.size() > 2 ? io.inputs[2] : nullptr;
    const TensorRef* z = node_.domain == "switchyard" && io.inputs.size() > 3 ? io.inputs[3] : nullptr;
    if (z && z->numel() != total) return ops::NodeError(node_, "residual Z must have the output shape");
    for (int64_t i = 0; i < total; ++i) {
      float v = out[i];
      if (bias) v += bias->as<float>()[(i / osp) % m];
      if (z) v += z->as<float>()[i];
      out[i] = v;
    }
    Activate(node_, out, total);
    return Status::Ok();
  }

 private:
  struct Plan {
    int64_t group = 1, ih = 0, iw = 0, kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1;
    int64_t pt = 0, pl = 0, pb = 0, pr = 0, oh = 0, ow = 0;
    std::vector<int64_t> out;
  };
  static TensorRef* y(const KernelIO& io) { return io.outputs[0]; }

  Result<Plan> PlanFor(const std::vector<int64_t>& x, const std::vector<int64_t>& w) const {
    if (x.size() != 4 || w.size() != 4) return ops::NodeError(node_, "im2col_gemm handles 2-D convolutions only");
    Plan p;
    p.group = node_.GetInt("group", 1);
    if (p.group < 1 || x[1] % p.group != 0 || w[0] % p.group != 0 || w[1] * p.group != x[1]) {
      return ops::NodeError(node_, "channels do not match group");
    }
    SY_ASSIGN_OR_RETURN(ops::Window win, ops::ReadWindow(node_, {w[2], w[3]}));
    SY_ASSIGN_OR_RETURN(p.oh, ops::WindowOutputDim(node_, win, 0, x[2]));
    SY_ASSIGN_OR_RETURN(p.ow, ops::WindowOutputDim(node_, win, 1, x[3]));
    p.ih = x[2], p.iw = x[3], p.kh = w[2], p.kw = w[3];
    p.sh = win.strides[0], p.sw = win.strides[1], p.dh = win.dilations[0], p.dw = win.dilations[1];
    p.pt = win.pads_begin[0], p.pl = win.pads_begin[1], p.pb = win.pads_end[0], p.pr = win.pads_end[1];
    p.out = {x[0], w[0], p.oh, p.ow};
    return p;
  }

  static void Im2Col(const float* x, int64_t cg, const Plan& p, float* col) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t ky = 0; ky < p.kh; ++ky) {
        for (int64_t kx = 0; kx < p.kw; ++kx) {
          float* row = col + ((c * p.kh + ky) * p.kw + kx) * p.oh * p.ow;
          for (int64_t oy = 0; oy < p.oh; ++oy) {
            const int64_t iy = oy * p.sh - p.pt + ky * p.dh;
            float* r = row + oy * p.ow;
            if (iy < 0 || iy >= p.ih) {
              std::fill(r, r + p.ow, 0.f);
              continue;
            }
            const float* xr = x + (c * p.ih + iy) * p.iw;
            for (int64_t ox = 0; ox < p.ow; ++ox) {
              const int64_t ix = ox * p.sw - p.pl + kx * p.dw;
              r[ox] = (ix >= 0 && ix < p.iw) ? xr[ix] : 0.f;
            }
          }
        }
      }
    }
  }

  const Node node_;
};

bool SupportsConv(const Node& node, const KernelBuildContext& ctx) {
  if (!AllFloat(node, ctx) || !ActivationKnown(node)) return false;
  if (ctx.input_shapes[0].size() != 4 || ctx.input_shapes[1].size() != 4) return false;
  if (node.HasInput(3) && !ResidualHasOutputShape(ctx)) return false;
  if (node.HasInput(4) || node.Has("post_affine") || HasPooledOutput(node)) return false;  // oneDNN's kernel only
  return ctx.precision == "fp32" && ctx.quant_weights == "none";
}

Status PreparePlain(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  return Status::Ok();  // plain layouts, no packing: the weights stay a constant input
}

}  // namespace

SY_REGISTER_CPU_IMPLS(OpenblasGemm) {
  auto gemm = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new GemmKernel(v.node));
  };
  auto conv = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new ConvKernel(v.node));
  };
  reg.Register({"openblas", "", "MatMul", "", SupportsGemm, PreparePlain, gemm});
  reg.Register({"openblas", "", "Gemm", "", SupportsGemm, PreparePlain, gemm});
  reg.Register({"openblas", "switchyard", "FusedMatMul", "", SupportsGemm, PreparePlain, gemm});
  reg.Register({"openblas", "", "Conv", "im2col_gemm", SupportsConv, PreparePlain, conv});
  reg.Register({"openblas", "switchyard", "FusedConv", "im2col_gemm", SupportsConv, PreparePlain, conv});
}

}  // namespace switchyard::openblas
