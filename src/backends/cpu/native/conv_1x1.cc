// Native 1x1 convolution on nhwc activations, variants "nhwc_1x1", "nhwc_1x1_residual" and
// "nhwc_1x1_small":
// stride 1, no pads, group 1, fp32, output channels a multiple of 16, AVX-512. In nhwc
// the layer is one GEMM Y[P, M] = X[P, C] · W[C, M] over the P = N*H*W pixels, whose rows
// of X are read in place: a 6-pixel x 64-channel register tile (24 accumulators) starts
// from the bias, runs over C, adds the residual Z and applies the activation before its
// single store. The Z rows of the tile four pixel groups ahead are prefetched during the
// C loop, so that reading the residual costs no stall.
//
// Why: on AMD CPUs oneDNN 2.6's nhwc 1x1 convolution with a residual (its sum post-op) runs
// far below its own speed without one. ResNet-50 batch 8 on 2 Zen 5 cores, in the model: the
// bottleneck's last 1x1 layer (64 -> 256 channels at 56x56) took 3.3-3.6 ms against 2.15
// for the same shape without the residual and ONNX Runtime's 2.13-2.19 with it; this
// kernel 2.0-2.6. Its 16 last 1x1 layers together: layer1 7.0 vs 11.1 ms, layer2 8.1 vs
// 10.9, layer3 12.1 vs 13.9, layer4 6.5 vs 7.2 (medians of 3 runs). The automatic choice
// (kernel.conv=auto) therefore takes "nhwc_1x1_residual" on AMD CPUs for the layers with a
// residual, kMinChannels input channels or more and at least kMinPixelsPerRange pixels in
// each thread's pixel range (ChooseNhwcSplit); kernel.conv=native takes "nhwc_1x1" for every
// 1x1 layer it supports. Without a residual oneDNN is as fast (ResNet-50 b8's first 1x1
// layers: 11.4 vs 10.6 ms in layer2, 8.1 vs 8.5 in layer4). On Intel CPUs with AVX-512 the
// automatic choice takes "nhwc_1x1_small" for layers with few pixels and large weights
// (Supports1x1Small), where oneDNN 2.6 runs under its rate elsewhere, and (AMX or not)
// "nhwc_1x1_silu" for layers followed by a SiLU (Supports1x1Silu), which the tile applies in
// registers.
#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/cpu/native/conv_nhwc.h"
#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/native/nhwc.h"
#include "backends/cpu/native/silu_avx512.h"
#include "build/target.h"
#include "reference/ops/common.h"

// GCC 12 reports the undefined pass-through operand of _mm512_range_ps (SiluPs) as
// maybe-uninitialized once inlined (GCC bug 105593, fixed in 13), as in silu.cc.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace switchyard::native {
namespace {

// A tile covers 6 pixels (kTilePixels) or, where the pixels divide into 7s and not 6s, 7:
// 28 accumulators, the broadcast of X folded into the FMAs. ResNet-50 b1's layer4 has 49
// pixels: 6-pixel tiles run 8 tiles and one more for the last pixel (RowsFor).
constexpr int64_t kRows = kTilePixels;
constexpr int64_t kRows7 = 7;
int64_t RowsFor(int64_t pixels) { return pixels % kRows != 0 && pixels % kRows7 == 0 ? kRows7 : kRows; }
constexpr int64_t kCols = kTileCols;
constexpr int64_t kAhead = 4;     // Z is prefetched this many pixel groups ahead
// The first pixel group of a column group prefetches the weights kWeightPrefetchAhead
// floats ahead (conv_nhwc.h): the weights of ResNet-50's later layers come from memory once
// per run. Its layer3 and layer4 1x1 layers at batch 1 on this kernel (kernel.conv=native):
// 9.31-10.50 ms per run without, 9.17-9.93 with (2 Zen 5 cores, 4 alternations, each pair faster).
// The automatic choice's limit: pixels per pixel range of the threads' split
// (ChooseNhwcSplit). Each item streams its columns' weights once and reuses them over its
// pixels: with fewer that costs more than the products. Splitting pixels only, ResNet-50
// b1's layer4 (49 pixels, 2048 x 512 weights, 2 threads) took 1.57 ms against oneDNN's
// 0.99; split by columns 0.36-0.39 against 0.31-0.33 (2 Zen 5 cores, medians of 3). Its
// layer3 (196 pixels, split by columns) 0.30-0.32 against 0.30-0.33, b8's layer4 (392
// pixels, 2 x 1024 columns) 2.17-2.23 against 2.24-2.32 split by pixels.
constexpr int64_t kMinPixelsPerRange = 192;
// With few input channels each tile's epilogue weighs as much as its products: DBNet's
// 24 -> 96 lateral at 160x160 took 0.48 ms against oneDNN's 0.40 (2 Zen 5 cores, medians
// of 3). ResNet's residual layers have 64 or more.
constexpr int64_t kMinChannels = 64;


// Packed weights (PrepareTileConv, one tap): column group g's [C][width] block at g*64*C.
struct TileArgs {
  int64_t c;           // input channels (the GEMM's K)
  const float* a;      // 6 pixel rows of X, c apart
  const float* b;      // packed weights of the column group, [c][NP*16]
  const float* bias;   // NP*16 values, or null
  const float* z;      // residual rows (ldy apart), or null; may alias y
  float* y;            // output rows, ldy apart
  int64_t ldy;
  const float* pf;     // residual rows to prefetch (ldy apart), or null
  UnaryOp act;
  UnaryParams ap;
  // This tile's share of the next column group's packed weights, prefetched into L2 a
  // 64-byte line at a time over its C loop (NextPanelShare), or null.
  const float* next_b = nullptr;
  int64_t next_lines = 0;
};

#if defined(__x86_64__) && defined(__GNUC__)
template <int R, int NP, bool kStreamB>
__attribute__((target("avx512f,avx512dq"))) void Tile(const TileArgs& t) {
  __m512 acc[R][NP];
  TileFromBias<R, NP>(acc, t.bias);
  // One residual row (NP lines of 64 bytes) prefetched every `step` channels.
  const int64_t step = std::max<int64_t>(1, t.c / R);
  int64_t next_pf = t.pf ? 0 : t.c, pf_row = 0;
  // The next group's lines: one every `nb_step` channels, `nb_per` at a time.
  const int64_t nb_per = t.next_b ? (t.next_lines + t.c - 1) / t.c : 0;
  const int64_t nb_step = nb_per ? std::max<int64_t>(1, t.c * nb_per / std::max<int64_t>(t.next_lines, 1)) : t.c + 1;
  const char* nb = reinterpret_cast<const char*>(t.next_b);
  const char* nb_end = nb + 64 * t.next_lines;
  int64_t nb_next = 0;
  for (int64_t k = 0; k < t.c; ++k) {
    __m512 v[NP];
#pragma GCC unroll 4
    for (int j = 0; j < NP; ++j) v[j] = _mm512_loadu_ps(t.b + k * NP * 16 + 16 * j);
    if constexpr (kStreamB) {
#pragma GCC unroll 4
      for (int j = 0; j < NP; ++j) {
        _mm_prefetch(reinterpret_cast<const char*>(t.b + k * NP * 16 + kWeightPrefetchAhead + 16 * j), _MM_HINT_T0);
      }
    }
#pragma GCC unroll 7
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(t.a[r * t.c + k]);
#pragma GCC unroll 4
      for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_fmadd_ps(av, v[j], acc[r][j]);
    }
    if (k == next_pf && pf_row < R) {
      const char* p = reinterpret_cast<const char*>(t.pf + pf_row * t.ldy);
#pragma GCC unroll 4
      for (int j = 0; j < NP; ++j) _mm_prefetch(p + 64 * j, _MM_HINT_T0);
      ++pf_row;
      next_pf += step;
    }
    if (k == nb_next) {
      for (int64_t l = 0; l < nb_per && nb < nb_end; ++l, nb += 64) _mm_prefetch(nb, _MM_HINT_T1);
      nb_next += nb_step;
    }
  }
  const __m512 zero = _mm512_setzero_ps();
  const __m512 lo = _mm512_set1_ps(t.ap.a), hi = _mm512_set1_ps(t.ap.b);
#pragma GCC unroll 7
  for (int r = 0; r < R; ++r) {
    float* yr = t.y + r * t.ldy;
#pragma GCC unroll 4
    for (int j = 0; j < NP; ++j) {
      __m512 w = acc[r][j];
      if (t.z) w = _mm512_add_ps(w, _mm512_loadu_ps(t.z + r * t.ldy + 16 * j));
      // Relu as a masked move, not _mm512_max_ps, whose undefined pass-through operand GCC 12
      // reports as maybe-uninitialized (bug 105593). Same results: NaN and -0 give +0.
      if (t.act == UnaryOp::kRelu) w = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(w, zero, _CMP_GT_OQ), w);
      if (t.act == UnaryOp::kSiLU) w = SiluPs(w);
      // Clip as x < a ? a : (x > b ? b : x), NaN kept, by masked moves.
      if (t.act == UnaryOp::kClip) {
        w = _mm512_mask_mov_ps(w, _mm512_cmp_ps_mask(w, lo, _CMP_LT_OQ), lo);
        w = _mm512_mask_mov_ps(w, _mm512_cmp_ps_mask(w, hi, _CMP_GT_OQ), hi);
      }
      _mm512_storeu_ps(yr + 16 * j, w);
    }
    if (t.act != UnaryOp::kNone && t.act != UnaryOp::kRelu && t.act != UnaryOp::kSiLU && t.act != UnaryOp::kClip) {
      ApplyUnary(t.act, t.ap, yr, yr, NP * 16);
    }
  }
}
#endif

// The share of column group `cg`'s packed weights (C x width floats, 64-byte lines) that
// tile `j` of the `tiles` tiles of the previous group prefetches into L2: the tiles after
// the first (which streams its own group's weights) split the lines evenly. Without it
// only the first tile of a group reads ahead, 4 KiB at a time (kWeightPrefetchAhead), and
// a group's weights come from memory while just that tile computes; spread over the whole
// previous group the reads overlap its products. A 49 x 2048 x 512 GEMM (ResNet-50 b1's
// layer4) from cold weights on one core of an Intel Xeon with AVX-512 (a 7-pixel test
// tile): 1.01-1.03 ms without, 0.81-0.82 with, 0.67 from L2.
struct PanelShare {
  const float* b = nullptr;
  int64_t lines = 0;
};
PanelShare NextPanelShare(const float* wb, int64_t cg, int64_t c, int64_t m, int64_t j, int64_t tiles) {
  if (j == 0 || tiles < 2) return {};
  const int64_t lines = c * TileGroupWidth(m, cg) / 16;
  const int64_t l0 = lines * (j - 1) / (tiles - 1), l1 = lines * j / (tiles - 1);
  return {wb + cg * kCols * c + l0 * 16, l1 - l0};
}

using TileFn = void (*)(const TileArgs&);
// stream_b: the tile is the first to read its column group's weights, which come from
// memory, so it prefetches them kWeightPrefetchAhead floats ahead.
template <int R>
TileFn TileForRows(int64_t width, bool stream_b) {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (width / 16) {
    case 1: return stream_b ? Tile<R, 1, true> : Tile<R, 1, false>;
    case 2: return stream_b ? Tile<R, 2, true> : Tile<R, 2, false>;
    case 3: return stream_b ? Tile<R, 3, true> : Tile<R, 3, false>;
    case 4: return stream_b ? Tile<R, 4, true> : Tile<R, 4, false>;
    default: break;
  }
#endif
  (void)width;
  (void)stream_b;
  return nullptr;
}
TileFn TileFor(int64_t width, int64_t rows = kRows, bool stream_b = false) {
  return rows == kRows7 ? TileForRows<kRows7>(width, stream_b) : TileForRows<kRows>(width, stream_b);
}

// A 1x1, stride-1, unpadded layer (SupportsNhwcConv's cases otherwise) with M a
// multiple of 16, on a CPU with AVX-512.
bool Supports1x1(const Node& node, const KernelBuildContext& ctx) {
  if (!HasAvx512Nhwc() || !SupportsNhwcConv(node, ctx)) return false;
  const auto& w = ctx.input_shapes[1];
  if (w[2] != 1 || w[3] != 1 || w[0] % 16 != 0) return false;
  std::vector<int64_t> xs = ctx.input_shapes[0];
  xs[0] = 1;
  const auto g = MakeConvNhwcGeom(node, xs, w);
  return g.ok() && g->sh == 1 && g->sw == 1 && g->oh == g->h && g->ow == g->w;
}

// The automatic choice's case: an AMD CPU, a residual Z, a known batch, kMinChannels
// input channels or more and at least kMinPixelsPerRange pixels in each pixel range of the
// split.
bool Supports1x1Residual(const Node& node, const KernelBuildContext& ctx) {
  if (!AutoPrefersNativeNhwc() || node.domain != "switchyard" || !node.HasInput(3) || !Supports1x1(node, ctx)) {
    return false;
  }
  const auto& x = ctx.input_shapes[0];
  const int64_t pixels = x[0] * x[2] * x[3], m = ctx.input_shapes[1][0];
  if (x[0] <= 0 || x[1] < kMinChannels) return false;
  const NhwcSplit split = ChooseNhwcSplit((pixels + kRows - 1) / kRows, (m + kCols - 1) / kCols, pixels, m, ctx.threads);
  return pixels / split.pixels >= kMinPixelsPerRange;
}

// The automatic choice's case on Intel CPUs with AVX-512: few pixels (kSmallMaxPixels
// over the batch) and large weights (kSmallMinWeightBytes). ResNet-50 b1's layer4 1x1
// layers (49 pixels, 4 MiB of weights) on 2 cores of an Intel Xeon (family 6 model 207):
// 0.398-0.429 ms against oneDNN 2.6's 0.457-0.489; MobileNetV2 b1's last 1x1 layer (320
// -> 1280) 0.164 against 0.197 (bench/steps_ab.py, 3 alternations). Layers of 196 pixels
// (layer3) ran as fast as oneDNN's, so they stay there.
// Intel CPUs with AVX-512 and without AMX (AutoOwnKernelsOnIntelWithoutAmx). On the 16-core
// Xeon with AMX (H100 host) at 16 threads the own kernel lost: MobileNetV2 b1's features.18
// 0.057 ms against oneDNN's 0.042, features.17's projection 0.042 against 0.028; ResNet-50
// b1's layer4 1x1 layers 0.63 ms either way (bench/steps_ab.py, kernel.conv=native, 3
// alternations, session 37).
constexpr int64_t kSmallMaxPixels = 64;
constexpr int64_t kSmallMinWeightBytes = int64_t{1} << 20;
bool Supports1x1Small(const Node& node, const KernelBuildContext& ctx) {
  if (!AutoOwnKernelsOnIntelWithoutAmx() || !Supports1x1(node, ctx)) return false;
  const auto& x = ctx.input_shapes[0];
  const auto& w = ctx.input_shapes[1];
  if (x[0] <= 0 || x[0] * x[2] * x[3] > kSmallMaxPixels) return false;
  if (w[0] * w[1] * static_cast<int64_t>(sizeof(float)) < kSmallMinWeightBytes) return false;
  UnaryOp act;
  UnaryParams ap;
  return ParseActivation(node.GetString("activation", ""), node.GetFloats("activation_params"), &act, &ap) &&
         (act == UnaryOp::kNone || act == UnaryOp::kRelu || act == UnaryOp::kClip);
}

// The automatic choice's case on Intel CPUs with AVX-512 (AMX or not: fp32 layers): a SiLU
// after the layer (EfficientNet's expansions). The tile applies it in registers before its
// store (SiluPs), where oneDNN's layer is followed by a SiLU pass over its output
// (onednn/conv.cc: its swish post-op is slower still). EfficientNet-B0 b1, bench/steps_ab.py
// '' 'kernel.conv=native': on 2 cores of an Intel Xeon (family 6 model 207, 3 alternations)
// its 16 -> 96 expansion at 112x112 0.300 ms against 0.354, its 15 expansions together 1.92
// against 2.09; at 16 threads on the 16-core Xeon with AMX (4 alternations) 0.085 against
// 0.106, the 15 together 0.62 against 0.78 (session 40).
// Not a squeeze-excite FC (one pixel: 1152 -> 48 took 13 us against oneDNN's 9).
bool Supports1x1Silu(const Node& node, const KernelBuildContext& ctx) {
  if (!AutoPrefersWinogradF23() || !Supports1x1(node, ctx)) return false;
  if (ctx.input_shapes[0][2] * ctx.input_shapes[0][3] < kRows) return false;
  const Result<ConvNhwcFusion> fusion = ReadConvNhwcFusion(node);
  return fusion.ok() && fusion->act == UnaryOp::kSiLU;
}

// params["tiles_7_next_panel"]: 7-pixel tiles where the pixels divide into 7s and not 6s
// (RowsFor), and the next column group's weights prefetched over each group (NextPanelShare).
// params["balanced_cols"]: a column split over threads that do not divide the column
// groups shares the tiles evenly (Create1x1). Both measured on an Intel Xeon, so nhwc_1x1,
// nhwc_1x1_small and nhwc_1x1_silu set them and the AMD residual variant, tuned on Zen 5
// before them, does not (nor do engines built before them).
Status Prepare1x1(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  SY_RETURN_IF_ERROR(PrepareTileConv(node, ctx, spec));
  spec.params["tiles_7_next_panel"] = true;
  spec.params["balanced_cols"] = true;
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> Create1x1(const StepView& v) {
  const Node node = v.node;
  const std::vector<int64_t> w_shape = v.params.value("w_shape", std::vector<int64_t>{});
  const bool tiles_7_next_panel = v.params.value("tiles_7_next_panel", false);
  const bool balanced_cols = v.params.value("balanced_cols", false);
  if (w_shape.size() != 4 || v.packed.empty() || v.packed[0]->numel() != w_shape[0] * w_shape[1]) {
    return ops::NodeError(node, "packed weights missing");
  }
  for (int64_t g = 0; g * kCols < w_shape[0]; ++g) {
    if (!TileFor(TileGroupWidth(w_shape[0], g))) return ops::NodeUnsupported(node, "1x1 tile (needs AVX-512)");
  }
  SY_ASSIGN_OR_RETURN(const ConvNhwcFusion fusion, ReadConvNhwcFusion(node));
  const Tensor* packed = v.packed[0];
  return MakeNhwcConvKernel(
      node, w_shape, fusion.has_z,
      [=](const KernelIO& io, const ConvNhwcGeom& g, const ConvNhwcOperands& ops) -> Status {
        const int64_t pixels = g.n * g.oh * g.ow, m = g.m, c = g.c;
        const float* x = io.inputs[0]->as<float>();
        const float* bias = ops.bias ? ops.bias->as<float>() : nullptr;
        const float* z = ops.z ? ops.z->as<float>() : nullptr;
        float* y = io.outputs[0]->as<float>();
        const float* wb = packed->data<float>();
        const int64_t rows = tiles_7_next_panel ? RowsFor(pixels) : kRows;
        const int64_t groups = (pixels + rows - 1) / rows;
        const int64_t full = pixels / rows;  // groups of `rows` whole pixels
        auto tile = [&](int64_t cg, const float* a, const float* zt, float* yt, int64_t ldy, const float* pf,
                        bool first = false, PanelShare next = {}) {
          TileArgs t{c, a, wb + cg * kCols * c, bias ? bias + cg * kCols : nullptr, zt ? zt + cg * kCols : nullptr,
                     yt + cg * kCols, ldy, pf ? pf + cg * kCols : nullptr, fusion.act, fusion.ap, next.b, next.lines};
          TileFor(TileGroupWidth(m, cg), rows, first)(t);
        };
        const int64_t col_groups = (m + kCols - 1) / kCols;
        const NhwcSplit split = ChooseNhwcSplit(groups, col_groups, pixels, m, io.threads);
        // Item i of the split: pixel groups of part i / cols, column groups of part
        // i % cols. Each item runs its pixel range column group by column group: one
        // group's packed weights (C x 64) stay in L2 while its rows pass. Pixel groups
        // outer instead re-read every group's weights from L3 for each pixel group: 2.2-2.6
        // ms against 1.9-2.0 (layer3/4 shapes of ResNet-50 b8, 2 Zen 5 cores).
        // Column groups [c0, c1) over pixel groups [g0, g1), the last one partial where
        // g1 > full.
        auto run_range = [&](int64_t c0, int64_t c1, int64_t g0, int64_t g1) {
          const int64_t f1 = std::min(g1, full);
          for (int64_t cg = c0; cg < c1; ++cg) {
            for (int64_t pg = g0; pg < f1; ++pg) {
              const int64_t p = pg * rows;
              const float* pf = z && pg + kAhead < f1 ? z + (p + kAhead * rows) * m : nullptr;
              const PanelShare next = tiles_7_next_panel && cg + 1 < c1 ? NextPanelShare(wb, cg + 1, c, m, pg - g0, f1 - g0) : PanelShare{};
              tile(cg, x + p * c, z ? z + p * m : nullptr, y + p * m, m, pf, pg == g0, next);
            }
          }
          if (g1 <= full) return;
          // The last group's missing pixels: its rows copied into zero-padded scratch,
          // this range's columns copied back.
          const int64_t p = full * rows, left = pixels - p;
          std::vector<float> xs(static_cast<size_t>(rows * c), 0.f), ys(static_cast<size_t>(rows * m), 0.f);
          std::memcpy(xs.data(), x + p * c, static_cast<size_t>(left * c) * sizeof(float));
          if (z) std::memcpy(ys.data(), z + p * m, static_cast<size_t>(left * m) * sizeof(float));
          for (int64_t cg = c0; cg < c1; ++cg) tile(cg, xs.data(), z ? ys.data() : nullptr, ys.data(), m, nullptr);
          const int64_t lo = c0 * kCols, hi = std::min(m, c1 * kCols);
          for (int64_t r = 0; r < left; ++r) {
            std::memcpy(y + (p + r) * m + lo, ys.data() + r * m + lo, static_cast<size_t>(hi - lo) * sizeof(float));
          }
        };
        if (balanced_cols && split.pixels == 1 && col_groups % split.cols != 0) {
          // Columns split over threads that do not divide the column groups (MobileNetV2's
          // 960 -> 320 at 7x7: 5 groups, 3 on one thread and 2 on the other): the tiles
          // (column group, pixel group), column by column, in equal shares; a group on a
          // share's edge is split by pixels.
          const int64_t tiles = col_groups * groups;
          ParallelFor(split.cols, io.threads, 1, [&](int64_t i0, int64_t i1) {
            for (int64_t i = i0; i < i1; ++i) {
              for (int64_t t = tiles * i / split.cols, t1 = tiles * (i + 1) / split.cols; t < t1;) {
                const int64_t cg = t / groups, pg0 = t % groups, pg1 = std::min(groups, pg0 + (t1 - t));
                run_range(cg, cg + 1, pg0, pg1);
                t += pg1 - pg0;
              }
            }
          });
          return Status::Ok();
        }
        ParallelFor(split.pixels * split.cols, io.threads, 1, [&](int64_t i0, int64_t i1) {
          for (int64_t i = i0; i < i1; ++i) {
            const int64_t pi = i / split.cols, ci = i % split.cols;
            run_range(col_groups * ci / split.cols, col_groups * (ci + 1) / split.cols, groups * pi / split.pixels,
                      groups * (pi + 1) / split.pixels);
          }
        });
        return Status::Ok();
      });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeConv1x1) {
  RegisterNativeConv(reg, "nhwc_1x1", Supports1x1, Prepare1x1, Create1x1, HasAvx512Nhwc);
  // A residual is a FusedConv input only.
  RegisterNativeConv(reg, "nhwc_1x1_residual", Supports1x1Residual, PrepareTileConv, Create1x1,
                     [] { return HasAvx512Nhwc() && AutoPrefersNativeNhwc(); }, /*fused_only=*/true);
  RegisterNativeConv(reg, "nhwc_1x1_small", Supports1x1Small, Prepare1x1, Create1x1, AutoOwnKernelsOnIntelWithoutAmx);
  // The SiLU is a FusedConv activation only.
  RegisterNativeConv(reg, "nhwc_1x1_silu", Supports1x1Silu, Prepare1x1, Create1x1, AutoPrefersWinogradF23,
                     /*fused_only=*/true);
}

}  // namespace switchyard::native
