// Native 2-D convolution on nhwc activations, variant "nhwc_rows": group 1, dilation 1,
// any kernel, stride and pads, fp32; Conv and switchyard.FusedConv (bias, residual Z,
// activation). In nhwc the kernel taps of one kernel row kh and the input channels of
// output pixel w are the contiguous span x[ih, w*sw - pl .. + KW, 0..C), and the spans of
// neighbouring pixels overlap with stride sw*C: one output row is a sum over kh of GEMMs
// [OW, KW*C] x [KW*C, M] that read the input in place (no im2col, no padded copy). Pixels
// whose taps cross the left or right edge take weights packed for their valid taps;
// kernel rows above or below the image are skipped. Bias and Z join the first GEMM of a
// row, the activation the last.
//
// Selected by kernel.conv=native (a tuner candidate; not the automatic choice: on the
// 2-core AVX2 box DBNet's 3x3 96 -> 24 layers at 160x160 took 17.3-17.7 ms each against
// oneDNN's 16.8, docs/benchmarks.md).
#include <algorithm>
#include <utility>
#include <vector>

#include "backends/cpu/native/conv_nhwc.h"

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/gemm.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/native/nhwc.h"
#include "reference/ops/common.h"
#include "reference/ops/conv_common.h"

namespace switchyard::native {
namespace {

using Geom = ConvNhwcGeom;

// Valid kernel columns [t0, t1) of output pixel `o`.
std::pair<int64_t, int64_t> Taps(const Geom& g, int64_t o) {
  const int64_t start = o * g.sw - g.pl;
  return {std::max<int64_t>(0, -start), std::min(g.kw, g.w - start)};
}

// The tap ranges that need weights of their own: the full range first, then each
// distinct partial range of an edge pixel, in order of first appearance.
std::vector<std::pair<int64_t, int64_t>> TapRanges(const Geom& g) {
  std::vector<std::pair<int64_t, int64_t>> r = {{0, g.kw}};
  for (int64_t o = 0; o < g.ow; ++o) {
    const auto t = Taps(g, o);
    if (t.first < t.second && std::find(r.begin(), r.end(), t) == r.end()) r.push_back(t);
  }
  return r;
}

// Packed: for each tap range (TapRanges order) and kernel row, B[(kw - t0)*C + c][m] =
// W[m, c, kh, kw] packed by PackB. The ranges depend on W and pads only through the
// input width, which is fixed at build time.
Status PrepareRows(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  std::vector<int64_t> xs = ctx.input_shapes[0];
  xs[0] = 1;
  SY_ASSIGN_OR_RETURN(Geom g, MakeConvNhwcGeom(node, xs, ctx.input_shapes[1]));
  const Tensor& w = *ctx.constants[1];
  const float* src = w.data<float>();
  std::vector<int64_t> offsets;
  int64_t total = 0;
  const auto ranges = TapRanges(g);
  for (const auto& [t0, t1] : ranges) {
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      offsets.push_back(total);
      total += PackedBSize((t1 - t0) * g.c, g.m);
    }
  }
  Tensor packed(DataType::kFloat, {total});
  std::vector<float> b;
  size_t slot = 0;
  for (const auto& [t0, t1] : ranges) {
    const int64_t k = (t1 - t0) * g.c;
    b.assign(static_cast<size_t>(k * g.m), 0.f);
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      for (int64_t t = t0; t < t1; ++t) {
        for (int64_t ci = 0; ci < g.c; ++ci) {
          for (int64_t mi = 0; mi < g.m; ++mi) {
            b[((t - t0) * g.c + ci) * g.m + mi] = src[((mi * g.c + ci) * g.kh + kh) * g.kw + t];
          }
        }
      }
      PackB(b.data(), k, g.m, g.m, 1, packed.data<float>() + offsets[slot++]);
    }
  }
  spec.params["input_width"] = g.w;
  spec.params["b_offsets"] = offsets;
  FinishNhwcConvSpec(node, ctx, std::move(packed), spec);
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateRows(const StepView& v) {
  const Node node = v.node;
  const std::vector<int64_t> w_shape = v.params.value("w_shape", std::vector<int64_t>{});
  const std::vector<int64_t> offsets = v.params.value("b_offsets", std::vector<int64_t>{});
  const int64_t width = v.params.value("input_width", int64_t{-1});
  if (w_shape.size() != 4 || v.packed.empty()) return ops::NodeError(node, "packed weights missing");
  SY_ASSIGN_OR_RETURN(Geom g0, MakeConvNhwcGeom(node, {1, w_shape[1], std::max<int64_t>(w_shape[2], 1), width}, w_shape));
  const auto ranges = TapRanges(g0);
  if (offsets.size() != ranges.size() * static_cast<size_t>(g0.kh)) return ops::NodeError(node, "packed weights do not match");
  SY_ASSIGN_OR_RETURN(const ConvNhwcFusion fusion, ReadConvNhwcFusion(node));
  const UnaryOp act = fusion.act;
  const UnaryParams ap = fusion.ap;
  const Tensor* packed = v.packed[0];
  return MakeKernel(
      ConvNhwcShapes(node, w_shape),
      [=](const KernelIO& io) -> Status {
        SY_ASSIGN_OR_RETURN(Geom g, MakeConvNhwcGeom(node, io.inputs[0]->shape, w_shape));
        if (g.w != width) return ops::NodeError(node, "input width " + std::to_string(g.w) + " differs from the built " + std::to_string(width));
        SY_ASSIGN_OR_RETURN(const ConvNhwcOperands operands, ReadConvNhwcOperands(node, io, g, fusion.has_z));
        const TensorRef* bias = operands.bias;
        const TensorRef* z = operands.z;
        // Output pixels [lo, hi) take every kernel column; the rest are edge pixels.
        const std::pair<int64_t, int64_t> all{0, g.kw};
        int64_t lo = 0;
        while (lo < g.ow && Taps(g, lo) != all) ++lo;
        int64_t hi = lo;
        while (hi < g.ow && Taps(g, hi) == all) ++hi;
        const float* x = io.inputs[0]->as<float>();
        float* y = io.outputs[0]->as<float>();
        const float* wb = packed->data<float>();
        auto b_of = [&](std::pair<int64_t, int64_t> t, int64_t kh) {
          const size_t r = static_cast<size_t>(std::find(ranges.begin(), ranges.end(), t) - ranges.begin());
          return wb + offsets[r * static_cast<size_t>(g.kh) + static_cast<size_t>(kh)];
        };
        ParallelFor(g.n * g.oh, io.threads, 1, [&](int64_t b, int64_t e) {
          for (int64_t row = b; row < e; ++row) {
            const int64_t ni = row / g.oh, oy = row % g.oh;
            const int64_t kh0 = std::max<int64_t>(0, g.pt - oy * g.sh);
            const int64_t kh1 = std::min(g.kh, g.h + g.pt - oy * g.sh);
            float* yr = y + row * g.ow * g.m;
            const float* zr = z ? z->as<float>() + row * g.ow * g.m : nullptr;
            if (kh0 >= kh1) {  // every tap of the row is padding
              for (int64_t o = 0; o < g.ow; ++o) {
                float* yp = yr + o * g.m;
                for (int64_t mi = 0; mi < g.m; ++mi) {
                  yp[mi] = (bias ? bias->as<float>()[mi] : 0.f) + (zr ? zr[o * g.m + mi] : 0.f);
                }
                if (act != UnaryOp::kNone) ApplyUnary(act, ap, yp, yp, g.m);
              }
              continue;
            }
            // Pixels [o0, o1) with taps t: one GEMM per kernel row.
            auto span = [&](int64_t o0, int64_t o1, std::pair<int64_t, int64_t> t) {
              for (int64_t kh = kh0; kh < kh1; ++kh) {
                const int64_t iy = oy * g.sh + kh - g.pt;
                const float* a = x + ((ni * g.h + iy) * g.w + o0 * g.sw - g.pl + t.first) * g.c;
                GemmEpilogue ep;
                if (kh == kh0) {
                  if (bias) ep.add[0] = bias->as<float>(), ep.add_cs[0] = 1;
                  if (zr) ep.add[1] = zr + o0 * g.m, ep.add_rs[1] = g.m, ep.add_cs[1] = 1;
                }
                if (kh + 1 == kh1) ep.act = act, ep.act_params = ap;
                GemmPacked(o1 - o0, g.m, (t.second - t.first) * g.c, a, g.sw * g.c, 1, b_of(t, kh),
                           yr + o0 * g.m, g.m, ep, 1, kh != kh0);
              }
            };
            if (lo < hi) span(lo, hi, all);
            for (int64_t o = 0; o < g.ow; ++o) {
              if (o >= lo && o < hi) continue;
              const auto t = Taps(g, o);
              if (t.first < t.second) {
                span(o, o + 1, t);
                continue;
              }
              float* yp = yr + o * g.m;  // a pixel with no valid column
              for (int64_t mi = 0; mi < g.m; ++mi) {
                yp[mi] = (bias ? bias->as<float>()[mi] : 0.f) + (zr ? zr[o * g.m + mi] : 0.f);
              }
              if (act != UnaryOp::kNone) ApplyUnary(act, ap, yp, yp, g.m);
            }
          }
        });
        return Status::Ok();
      });
}

}  // namespace

Result<ConvNhwcGeom> MakeConvNhwcGeom(const Node& node, const std::vector<int64_t>& x,
                                      const std::vector<int64_t>& wt) {
  if (x.size() != 4 || wt.size() != 4) return ops::NodeError(node, "needs 4-D X and W");
  if (node.GetInt("group", 1) != 1 || wt[1] != x[1]) {
    return ops::NodeError(node, "channels " + std::to_string(x[1]) + " do not match W " + ShapeToString(wt));
  }
  SY_ASSIGN_OR_RETURN(ops::Window win, ops::ReadWindow(node, {wt[2], wt[3]}));
  if (node.Has("kernel_shape") && node.GetInts("kernel_shape") != std::vector<int64_t>{wt[2], wt[3]}) {
    return ops::NodeError(node, "kernel_shape does not match W");
  }
  ConvNhwcGeom g{x[0], x[1], x[2], x[3], wt[0], wt[2], wt[3], 0, 0, 0, 0, 0, 0};
  SY_ASSIGN_OR_RETURN(g.oh, ops::WindowOutputDim(node, win, 0, x[2]));
  SY_ASSIGN_OR_RETURN(g.ow, ops::WindowOutputDim(node, win, 1, x[3]));
  if (win.dilations[0] != 1 || win.dilations[1] != 1) return ops::NodeError(node, "dilation is not 1");
  g.sh = win.strides[0];
  g.sw = win.strides[1];
  g.pt = win.pads_begin[0];
  g.pl = win.pads_begin[1];
  if (g.oh < 1 || g.ow < 1) return ops::NodeError(node, "empty output");
  return g;
}

Status PrepareTileConvCols(const Node& node, const KernelBuildContext& ctx, StepSpec& spec, int64_t cols) {
  const auto& ws = ctx.input_shapes[1];
  const int64_t m = ws[0], c = ws[1], taps = ws[2] * ws[3], k_all = taps * c;
  const float* src = ctx.constants[1]->data<float>();
  Tensor packed(DataType::kFloat, {m * k_all});
  float* out = packed.data<float>();
  for (int64_t g = 0; g * cols < m; ++g) {
    const int64_t width = TileGroupWidth(m, g, cols);
    float* block = out + g * cols * k_all;
    for (int64_t tap = 0; tap < taps; ++tap) {
      for (int64_t k = 0; k < c; ++k) {
        float* row = block + (tap * c + k) * width;
        for (int64_t j = 0; j < width; ++j) row[j] = src[((g * cols + j) * c + k) * taps + tap];
      }
    }
  }
  FinishNhwcConvSpec(node, ctx, std::move(packed), spec);
  spec.params["tile_cols"] = cols;
  return Status::Ok();
}

Status PrepareTileConv(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  return PrepareTileConvCols(node, ctx, spec, kTileCols);
}

void FinishNhwcConvSpec(const Node& node, const KernelBuildContext& ctx, Tensor packed, StepSpec& spec) {
  spec.packed.push_back(std::move(packed));
  spec.consumed_inputs = {1};
  spec.params["w_shape"] = ctx.input_shapes[1];
  std::vector<size_t> nhwc_inputs = {0};
  if (node.domain == "switchyard" && node.HasInput(3)) nhwc_inputs.push_back(3);
  DeclareNhwc(node, spec, nhwc_inputs);
}

bool HasAvx512Nhwc() {
#if defined(__x86_64__) && defined(__GNUC__)
  // DQ for the 1x1 tile's SiLU (vrangeps): every AVX-512 CPU since Skylake-SP has it.
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

bool HasAvx2Fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool AutoPrefersNativeNhwc() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_is("amd");
#else
  return false;
#endif
}

bool AutoPrefersWinogradF23() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_is("intel") && HasAvx512Nhwc();
#else
  return false;
#endif
}

bool AutoOwnKernelsOnIntelWithoutAmx() { return AutoPrefersWinogradF23() && !Target::HostCpu().features.amx_bf16; }

Result<std::unique_ptr<Kernel>> MakeNhwcConvKernel(const Node& node, const std::vector<int64_t>& w_shape, bool has_z,
                                                   NhwcConvRun run) {
  return MakeKernel(ConvNhwcShapes(node, w_shape),
                    [node, w_shape, has_z, run = std::move(run)](const KernelIO& io) -> Status {
                      SY_ASSIGN_OR_RETURN(ConvNhwcGeom g, MakeConvNhwcGeom(node, io.inputs[0]->shape, w_shape));
                      SY_ASSIGN_OR_RETURN(const ConvNhwcOperands ops, ReadConvNhwcOperands(node, io, g, has_z));
                      return run(io, g, ops);
                    });
}

NhwcSplit ChooseNhwcSplit(int64_t pixel_groups, int64_t col_groups, int64_t p, int64_t m, int threads) {
  NhwcSplit best;
  double best_cost = -1;
  const int64_t t = std::max(threads, 1);
  for (int64_t cols = 1; cols <= std::min(t, col_groups); ++cols) {
    if (t % cols != 0 || t / cols > pixel_groups) continue;
    const double cost = static_cast<double>(t / cols) * static_cast<double>(m) + static_cast<double>(cols * p);
    if (best_cost < 0 || cost < best_cost) {
      best = {t / cols, cols};
      best_cost = cost;
    }
  }
  if (best_cost < 0) best = {std::min(t, pixel_groups), 1};  // fewer pixel groups than threads
  return best;
}

bool SupportsNhwcConv(const Node& node, const KernelBuildContext& ctx) {
  const auto& d = ctx.input_dtypes;
  if (ctx.layout != "nhwc" || ctx.precision != "fp32" || ctx.quant_weights != "none") return false;
  // X and Z are read as nhwc: not constants (the builder hands those over plain).
  if (d.size() < 2 || d[0] != DataType::kFloat || d[1] != DataType::kFloat || !ctx.constants[1] || ctx.constants[0]) {
    return false;
  }
  if (node.HasInput(2) && (d[2] != DataType::kFloat || ctx.input_shapes[2].size() != 1)) return false;
  const bool has_z = node.domain == "switchyard" && node.HasInput(3);
  if (has_z && (d[3] != DataType::kFloat || ctx.constants[3] || !ResidualHasOutputShape(ctx))) return false;
  if (node.HasInput(4)) return false;  // an input scale (fuse.conv_scale): oneDNN's kernel only
  if (HasPooledOutput(node)) return false;  // channel means (fuse.conv_pool): oneDNN's kernel only
  if (node.Has("post_affine")) return false;  // oneDNN's kernel only
  UnaryOp act;
  UnaryParams ap;
  if (!ParseActivation(node.GetString("activation", ""), node.GetFloats("activation_params"), &act, &ap)) return false;
  const auto& x = ctx.input_shapes[0];
  if (x.size() != 4 || std::any_of(x.begin() + 1, x.end(), [](int64_t v) { return v < 0; })) return false;
  std::vector<int64_t> xs = x;
  xs[0] = 1;
  return MakeConvNhwcGeom(node, xs, ctx.input_shapes[1]).ok();
}

Result<ConvNhwcFusion> ReadConvNhwcFusion(const Node& node) {
  ConvNhwcFusion f;
  if (!ParseActivation(node.GetString("activation", ""), node.GetFloats("activation_params"), &f.act, &f.ap)) {
    return ops::NodeUnsupported(node, "activation");
  }
  f.has_z = node.domain == "switchyard" && node.HasInput(3);
  return f;
}

ShapeFn ConvNhwcShapes(const Node& node, const std::vector<int64_t>& w_shape) {
  return [node, w_shape](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
    if (in.empty() || !in[0]) return ops::NodeError(node, "X is required");
    SY_ASSIGN_OR_RETURN(ConvNhwcGeom g, MakeConvNhwcGeom(node, in[0]->shape, w_shape));
    return Shapes{{g.n, g.m, g.oh, g.ow}};
  };
}

Result<ConvNhwcOperands> ReadConvNhwcOperands(const Node& node, const KernelIO& io, const ConvNhwcGeom& g,
                                              bool has_z) {
  ConvNhwcOperands o;
  o.bias = node.HasInput(2) && io.inputs.size() > 2 ? io.inputs[2] : nullptr;
  o.z = has_z && io.inputs.size() > 3 ? io.inputs[3] : nullptr;
  if (o.bias && o.bias->numel() != g.m) return ops::NodeError(node, "bias must have M elements");
  if (has_z && (!o.z || o.z->shape != io.outputs[0]->shape)) {
    return ops::NodeError(node, "residual Z must have the output shape");
  }
  return o;
}

void RegisterNativeConv(CpuImplRegistry& reg, const char* variant, decltype(CpuOpImpl::supports) supports,
                        decltype(CpuOpImpl::prepare) prepare, decltype(CpuOpImpl::create) create,
                        std::function<bool()> available, bool fused_only) {
  for (const char* op : {"Conv", "FusedConv"}) {
    const bool fused = std::string(op) == "FusedConv";
    if (fused_only && !fused) continue;
    const CpuOpImpl impl{"native", fused ? "switchyard" : "", op, variant, supports, prepare, create};
    if (available) reg.SetAvailability(impl, available);
    reg.Register(impl);
  }
}

SY_REGISTER_CPU_IMPLS(NativeConvNhwc) {
  RegisterNativeConv(reg, "nhwc_rows", SupportsNhwcConv, PrepareRows, CreateRows, nullptr);
}

}  // namespace switchyard::native
