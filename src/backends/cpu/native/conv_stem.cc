// Native stem convolution, variant "nchw_stem": a network's first layer, whose few input
// channels (at most kMaxStemChannels: an image's 3) arrive plain (NCHW, the graph input) and
// whose output the nhwc route wants nhwc. Group 1, dilation 1, any kernel size, stride and
// pads, fp32, 16 to 64 output channels in 16s, bias and a fused activation, no residual;
// AVX-512. The layer reads the input planes in place and writes nhwc rows: an R-pixel x M
// register tile (R * M/16 <= 28 accumulators) per stretch of an output row, over the
// C*KH*KW taps (weights packed [c][ky][kx][M]), the input value of each pixel and tap
// broadcast; taps that fall in the padding are skipped (rows) or read as zero (columns,
// at the row's ends only).
//
// Why: oneDNN 2.6 has no fast kernel for an nchw source and an nhwc destination (it runs
// ref:any), so an nhwc route reorders the image to nhwc first and then convolves it:
// MobileNetV2 b1's stem (3 -> 32, 3x3 stride 2, 224x224) 0.039 ms for the reorder and 0.102
// for the convolution on 2 cores of an Intel Xeon; this kernel 0.110 for both. EfficientNet-B0
// b1 (SiLU) 0.165 against 0.041 + 0.148. Whole models, 6 alternations of 60-200 runs: p50
// medians MobileNetV2 b1 3.16 against 3.20 ms, EfficientNet-B0 b1 5.51 against 5.53.
#include <algorithm>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/cpu/native/conv_nhwc.h"
#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/native/nhwc.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

constexpr int64_t kMaxStemChannels = 4;
constexpr int64_t kMaxStemOutputs = 64;
// The automatic choice: kernels of at most 3x3 with 32 outputs, where it was measured faster
// than the reorder plus oneDNN. ResNet-50's 7x7 stem (64 outputs) ran at 0.81 ms against
// oneDNN's 0.73 plus the reorder's 0.054; PP-OCRv4's 3x3 stems with 16 outputs (a 28-pixel
// tile whose 28 broadcasts per weight load make it load-bound) 0.043 against 0.018 + 0.012
// (rec, 48x320) and 0.90 against 0.37 + 0.27 (det, 640x640), 2 cores of an Intel Xeon.
constexpr int64_t kAutoMaxTaps = 9;
constexpr int64_t kAutoOutputs = 32;

struct StemArgs {
  const float* x;      // image n's C planes, H x W each
  const float* w;      // packed [c][ky][kx][np*16]
  const float* bias;   // np*16 values or null
  float* y;            // the tile's first output pixel (nhwc), pixels m apart
  int64_t c, h, wd, kh, kw, sw, m;
  int64_t iy0;         // the input row of ky = 0 (may be outside [0, h))
  int64_t ix0;         // the input column of the tile's first pixel at kx = 0
  int64_t pixels;      // valid pixels of the tile (<= R)
  UnaryOp act;
  UnaryParams ap;
};

#if defined(__x86_64__) && defined(__GNUC__)
// kEdge: some pixel's tap may fall outside the row (or the tile is short): columns checked.
template <int NP, int R, bool kEdge>
__attribute__((target("avx512f"))) void StemTile(const StemArgs& t) {
  __m512 acc[R][NP];
  TileFromBias<R, NP>(acc, t.bias);
  const int64_t step = NP * 16;
  for (int64_t ci = 0; ci < t.c; ++ci) {
    for (int64_t ky = 0; ky < t.kh; ++ky) {
      const int64_t iy = t.iy0 + ky;
      if (iy < 0 || iy >= t.h) continue;  // a padding row adds nothing
      const float* row = t.x + (ci * t.h + iy) * t.wd;
      const float* wk = t.w + ((ci * t.kh + ky) * t.kw) * step;
      for (int64_t kx = 0; kx < t.kw; ++kx, wk += step) {
        __m512 v[NP];
#pragma GCC unroll 4
        for (int j = 0; j < NP; ++j) v[j] = _mm512_loadu_ps(wk + 16 * j);
        const int64_t ix = t.ix0 + kx;
#pragma GCC unroll 28
        for (int r = 0; r < R; ++r) {
          const int64_t xr = ix + r * t.sw;
          float xv;
          if constexpr (kEdge) {
            xv = r < t.pixels && xr >= 0 && xr < t.wd ? row[xr] : 0.f;
          } else {
            xv = row[xr];
          }
          const __m512 a = _mm512_set1_ps(xv);
#pragma GCC unroll 4
          for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_fmadd_ps(a, v[j], acc[r][j]);
        }
      }
    }
  }
  const __m512 zero = _mm512_setzero_ps();
  const __m512 lo = _mm512_set1_ps(t.ap.a), hi = _mm512_set1_ps(t.ap.b);
#pragma GCC unroll 28
  for (int r = 0; r < R; ++r) {
    if (kEdge && r >= t.pixels) break;
#pragma GCC unroll 4
    for (int j = 0; j < NP; ++j) {
      __m512 o = acc[r][j];
      // Relu as a masked move (GCC 12 bug 105593 with _mm512_max_ps, as in conv_1x1.cc);
      // Clip the same way: min/max through masks, NaN passing through as Clip's reference.
      if (t.act == UnaryOp::kRelu) o = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(o, zero, _CMP_GT_OQ), o);
      if (t.act == UnaryOp::kClip) {
        o = _mm512_mask_mov_ps(o, _mm512_cmp_ps_mask(o, lo, _CMP_LT_OQ), lo);
        o = _mm512_mask_mov_ps(o, _mm512_cmp_ps_mask(o, hi, _CMP_GT_OQ), hi);
      }
      _mm512_storeu_ps(t.y + r * t.m + 16 * j, o);
    }
  }
}
#endif

using StemFn = void (*)(const StemArgs&);
// The tile's pixel count for NP column panels: 28 accumulators at most.
constexpr int RowsOf(int np) { return np == 1 ? 28 : np == 2 ? 14 : np == 3 ? 9 : 7; }

template <int NP>
StemFn StemOf(bool edge) {
#if defined(__x86_64__) && defined(__GNUC__)
  return edge ? StemTile<NP, RowsOf(NP), true> : StemTile<NP, RowsOf(NP), false>;
#else
  (void)edge;
  return nullptr;
#endif
}
StemFn StemFor(int64_t m, bool edge) {
  switch (m / 16) {
    case 1: return StemOf<1>(edge);
    case 2: return StemOf<2>(edge);
    case 3: return StemOf<3>(edge);
    case 4: return StemOf<4>(edge);
    default: return nullptr;
  }
}

// The kernel's cases (SupportsNhwcConv's otherwise, which also checks the route's nhwc
// layout and fp32): a plain input X with at most kMaxStemChannels channels, 16 to 64 output
// channels in 16s, no residual, on a CPU with AVX-512.
bool SupportsStem(const Node& node, const KernelBuildContext& ctx) {
  if (!HasAvx512Nhwc() || !SupportsNhwcConv(node, ctx)) return false;
  if (node.domain == "switchyard" && node.HasInput(3)) return false;
  if (ctx.input_layouts.empty() || !ctx.input_layouts[0].empty()) return false;
  const auto& w = ctx.input_shapes[1];
  return w[1] <= kMaxStemChannels && w[0] % 16 == 0 && w[0] <= kMaxStemOutputs;
}

// The automatic choice (kernel.conv=auto, "nchw_stem_auto"): Intel CPUs with AVX-512. On the
// 16-core Xeon with AMX (H100 host), 16 threads, MobileNetV2 b1's stem 0.047 ms against the
// reorder's 0.011 plus oneDNN's 0.053 (bench/steps_ab.py, kernel.conv=native, 3 alternations).
bool AutoTakesStem() { return AutoPrefersWinogradF23(); }
bool SupportsStemAuto(const Node& node, const KernelBuildContext& ctx) {
  if (!AutoTakesStem() || !SupportsStem(node, ctx)) return false;
  const auto& w = ctx.input_shapes[1];
  return w[0] == kAutoOutputs && w[2] * w[3] <= kAutoMaxTaps;
}

Status PrepareStem(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  const auto& ws = ctx.input_shapes[1];
  const int64_t m = ws[0], taps = ws[1] * ws[2] * ws[3];
  const float* src = ctx.constants[1]->data<float>();
  Tensor packed(DataType::kFloat, {taps * m});
  float* out = packed.data<float>();
  for (int64_t k = 0; k < taps; ++k) {
    for (int64_t j = 0; j < m; ++j) out[k * m + j] = src[j * taps + k];  // [c][ky][kx][m]
  }
  spec.packed.push_back(std::move(packed));
  spec.consumed_inputs = {1};
  spec.params["w_shape"] = ws;
  DeclareNhwc(node, spec, {});  // X plain, Y nhwc
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateStem(const StepView& v) {
  const Node node = v.node;
  const std::vector<int64_t> w_shape = v.params.value("w_shape", std::vector<int64_t>{});
  if (w_shape.size() != 4 || v.packed.empty() || v.packed[0]->numel() != w_shape[0] * w_shape[1] * w_shape[2] * w_shape[3]) {
    return ops::NodeError(node, "packed weights missing");
  }
  if (!StemFor(w_shape[0], false)) return ops::NodeUnsupported(node, "stem tile (needs AVX-512, 16-64 outputs)");
  SY_ASSIGN_OR_RETURN(const ConvNhwcFusion fusion, ReadConvNhwcFusion(node));
  const Tensor* packed = v.packed[0];
  return MakeNhwcConvKernel(
      node, w_shape, false,
      [=](const KernelIO& io, const ConvNhwcGeom& g, const ConvNhwcOperands& ops) -> Status {
        const float* x = io.inputs[0]->as<float>();
        const float* bias = ops.bias ? ops.bias->as<float>() : nullptr;
        float* y = io.outputs[0]->as<float>();
        const float* wp = packed->data<float>();
        const int64_t rows = RowsOf(static_cast<int>(g.m / 16));
        // Output columns [ox_lo, ox_hi) read no column outside the input: their tiles skip
        // the checks.
        const int64_t ox_lo = std::min(g.ow, (g.pl + g.sw - 1) / g.sw);
        const int64_t last = g.w + g.pl - g.kw;  // the last inside pixel's first column, times sw
        const int64_t ox_hi = last < 0 ? ox_lo : std::max(ox_lo, std::min(g.ow, last / g.sw + 1));
        const bool in_register = fusion.act == UnaryOp::kNone || fusion.act == UnaryOp::kRelu ||
                                 fusion.act == UnaryOp::kClip;
        const bool silu = fusion.act == UnaryOp::kSiLU && SiluInPlaceIsVectorized(false);
        ParallelFor(g.n * g.oh, io.threads, 1, [&](int64_t r0, int64_t r1) {
          for (int64_t rr = r0; rr < r1; ++rr) {
            const int64_t n = rr / g.oh, oy = rr % g.oh;
            StemArgs t{x + n * g.c * g.h * g.w, wp, bias, nullptr, g.c, g.h, g.w, g.kh, g.kw, g.sw, g.m,
                       oy * g.sh - g.pt, 0, 0, in_register ? fusion.act : UnaryOp::kNone, fusion.ap};
            float* yrow = y + rr * g.ow * g.m;
            for (int64_t ox = 0; ox < g.ow; ox += rows) {
              t.pixels = std::min(rows, g.ow - ox);
              t.ix0 = ox * g.sw - g.pl;
              t.y = yrow + ox * g.m;
              const bool edge = ox < ox_lo || ox + t.pixels > ox_hi || t.pixels < rows;
              StemFor(g.m, edge)(t);
            }
            if (silu) {
              SiluInPlace(yrow, false, static_cast<size_t>(g.ow * g.m) * sizeof(float), 1);
            } else if (!in_register) {
              ApplyUnary(fusion.act, fusion.ap, yrow, yrow, g.ow * g.m);
            }
          }
        });
        return Status::Ok();
      });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeConvStem) {
  RegisterNativeConv(reg, "nchw_stem", SupportsStem, PrepareStem, CreateStem, HasAvx512Nhwc);
  RegisterNativeConv(reg, "nchw_stem_auto", SupportsStemAuto, PrepareStem, CreateStem, AutoTakesStem);
}

}  // namespace switchyard::native
