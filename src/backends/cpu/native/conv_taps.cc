// Native convolution on nhwc activations, variants "nhwc_taps", "nhwc_taps_strided",
// "nhwc_taps_avx2" and "nhwc_taps16": group 1, dilation 1, any kernel size, stride and pads,
// fp32, output channels a multiple of 16, at least kMinTapChannels input channels, AVX-512
// or AVX2 with FMA; Conv and switchyard.FusedConv (bias, residual Z, activation). The layer is one GEMM Y[P, M] = X'[P, KH*KW*C] · W[KH*KW*C, M] over the P
// output pixels, where X' (im2col) is never written: a 6-pixel x 64-channel register tile
// (conv_nhwc.h) runs over the taps, each tap's C channels read in place from the input
// pixel it falls on (a row of zeros where it falls in the padding). The weights are packed
// per column group as [tap][C][width] and split into K blocks of whole taps that stay in L2
// while the thread's pixel groups pass; the tile's partial sums wait in Y between blocks.
// The first pixel group of a block prefetches its weights kWeightPrefetchAhead floats ahead
// (they come from memory once per run), the next ones prefetch the following block into L2.
//
// The automatic choice (kernel.conv=auto, "nhwc_taps_strided") takes it on AMD CPUs for
// strided layers with at least kAutoWeightBytes of weights; kernel.conv=native ("nhwc_taps")
// for every layer it supports that "nhwc_1x1" does not take. Why: oneDNN 2.6 runs strided
// nhwc layers with large weights and few pixels well below its rate elsewhere on Zen 5.
// ResNet-50 on 2 Zen 5 cores (bench/steps_ab.py, medians of 3-4 alternations, session 32),
// oneDNN -> this kernel: b1 layer4.0's 3x3 (14x14x512 -> 7x7, 49 pixels, 9 MiB) 0.82 -> 0.71
// ms, its strided 1x1 shortcut 0.66 -> 0.61, layer3's shortcut 0.665 -> 0.56; at batch 8
// 6.22 -> 4.81, 4.94 -> 4.23 and 5.44 -> 4.28. Layers with small weights stay with oneDNN:
// b1 layer2.0's 3x3 (0.56 MiB) 0.60 against 0.625, layer2's shortcut (0.5 MiB) 0.52 either
// way; layer3.0's 3x3 (2.25 MiB, taken) 0.61 against 0.635 at b1, 4.80 against 4.85 at b8.
// Whole model, default route, 6 alternations of 30 runs: b1 p50 25.6-26.4 -> 24.7-25.1 ms;
// b8 (3 of 8) 191-202 -> 188-191. Stride-1 3x3 layers run at oneDNN's rate or 5-10% under
// it here (0.59-0.64 against 0.56-0.59 ms at b1). The one-line-per-k prefetch of the next
// block by groups 2..NP+1: the four strided layers of layer3.0/4.0 at b1 2.76 -> 2.52 ms
// against the whole block prefetched by the second group.
//
// On Intel CPUs with AVX-512 and without AMX (AutoOwnKernelsOnIntelWithoutAmx) the automatic
// choice takes it for strided layers with at least kAutoWeightBytesIntel of weights: on the
// 2-core Xeon (family 6 model 207; bench/steps_ab.py, kernel.conv=native against the
// default, session 38) ResNet-50 b1 layer4.0's 3x3 (9 MiB) 1.046 -> 0.926 ms and its strided
// 1x1 shortcut (8 MiB) 0.938 -> 0.857 (3 alternations), at b8 6.65 -> 6.54 and 6.42 -> 5.99
// (2); layer3.0's 3x3 (2.25 MiB) lost there (b1 0.787 -> 0.864, b8 6.00 -> 6.43), so the
// Intel rule starts above it. Session 37 saw the same layers at 0.94 -> 0.84 and 1.06 -> 0.99.
//
// Without AVX-512 the tile is 6 pixels x 16 channels (AVX2, 12 ymm accumulators) over a
// 16-wide packing ("nhwc_taps" there; "nhwc_taps16" on any CPU with AVX2). The automatic
// choice takes it ("nhwc_taps_avx2") on AMD CPUs with AVX2 and no AVX-512 for every layer
// with more than one tap: on 2 Zen 3 cores oneDNN 2.6's AVX2 direct kernel (jit:avx2 on
// nhwc) ran ResNet-50 b1's sixteen 3x3 layers in 37.8 ms (medians over 4 alternations of
// 10 runs, summed), this tile in 26.7, ONNX Runtime's NCHWc kernels in 21.7 (its
// profile); b1 p50 against ORT 0.73 -> 0.90 in one run of bench/compare_ort.py. The 1x1
// layers stay with oneDNN, at ORT's rate there (this tile's 16-wide groups read the pixels'
// rows once per 16 channels: layer3's 1x1 layers 0.95-1.0 against 0.70-0.83 ms).
#include <algorithm>
#include <cstring>
#include <memory>
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

// With fewer channels per tap the tile's pointer setup and epilogue weigh as much as its
// products.
constexpr int64_t kMinTapChannels = 32;
// Packed weights per K block (whole taps; at least one): they stay in L2 while the item's
// pixel groups pass.
constexpr int64_t kTapBlockBytes = 256 * 1024;
// The automatic choice: strided layers with at least this many bytes of weights (below).
constexpr int64_t kAutoWeightBytes = 2 << 20;
constexpr int64_t kAutoWeightBytesIntel = 4 << 20;

// How a tile reads ahead in the weights: not at all, the block it reads kWeightPrefetchAhead
// floats ahead (the first pixel group of a block: from memory), or the next block into L2.
enum class TapAhead { kNone, kStream, kNext, kSlice };

struct TapTileArgs {
  int64_t c;                 // input channels per tap
  int64_t taps;              // taps in this K block
  const float* const* rows;  // [taps][6] pointers to C floats (the zero row in the padding)
  const float* b;            // the column group's packed weights of this block, [taps*c][NP*16]
  const float* bias;         // NP*16 values or null; the first block starts from it
  bool first, last;          // the first / last K block (the activation)
  // Residual rows (ldy apart) or null: the first block starts from them too, so Z may be Y.
  const float* z;
  float* y;                  // output rows, ldy apart: partial sums between blocks
  int64_t ldy, rows_valid;   // rows_valid of the 6 pixels exist
  UnaryOp act;
  UnaryParams ap;
  const float* pf = nullptr;  // kSlice: one line of the next block per k from here
};

#if defined(__x86_64__) && defined(__GNUC__)
template <int NP, TapAhead kAhead>
__attribute__((target("avx512f"))) void TapTile(const TapTileArgs& t) {
  __m512 acc[kTilePixels][NP];
#pragma GCC unroll 6
  for (int r = 0; r < kTilePixels; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < NP; ++j) {
      if (!t.first) {
        acc[r][j] = r < t.rows_valid ? _mm512_loadu_ps(t.y + r * t.ldy + 16 * j) : _mm512_setzero_ps();
      } else {
        acc[r][j] = t.bias ? _mm512_loadu_ps(t.bias + 16 * j) : _mm512_setzero_ps();
        if (t.z && r < t.rows_valid) acc[r][j] = _mm512_add_ps(acc[r][j], _mm512_loadu_ps(t.z + r * t.ldy + 16 * j));
      }
    }
  }
  const float* b = t.b;
  const int64_t block = t.taps * t.c * NP * 16;  // the next block starts this many floats on
  for (int64_t tap = 0; tap < t.taps; ++tap) {
    const float* const* a = t.rows + tap * kTilePixels;
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
    for (int64_t k = 0; k < t.c; ++k, b += NP * 16) {
      __m512 v[NP];
#pragma GCC unroll 4
      for (int j = 0; j < NP; ++j) v[j] = _mm512_loadu_ps(b + 16 * j);
      if constexpr (kAhead == TapAhead::kStream) {
#pragma GCC unroll 4
        for (int j = 0; j < NP; ++j) _mm_prefetch(reinterpret_cast<const char*>(b + kWeightPrefetchAhead + 16 * j), _MM_HINT_T0);
      } else if constexpr (kAhead == TapAhead::kNext) {
#pragma GCC unroll 4
        for (int j = 0; j < NP; ++j) _mm_prefetch(reinterpret_cast<const char*>(b + block + 16 * j), _MM_HINT_T1);
      } else if constexpr (kAhead == TapAhead::kSlice) {
        _mm_prefetch(reinterpret_cast<const char*>(t.pf + (b - t.b) / NP), _MM_HINT_T1);
      }
      const __m512 x0 = _mm512_set1_ps(a0[k]), x1 = _mm512_set1_ps(a1[k]), x2 = _mm512_set1_ps(a2[k]);
#pragma GCC unroll 4
      for (int j = 0; j < NP; ++j) {
        acc[0][j] = _mm512_fmadd_ps(x0, v[j], acc[0][j]);
        acc[1][j] = _mm512_fmadd_ps(x1, v[j], acc[1][j]);
        acc[2][j] = _mm512_fmadd_ps(x2, v[j], acc[2][j]);
      }
      const __m512 x3 = _mm512_set1_ps(a3[k]), x4 = _mm512_set1_ps(a4[k]), x5 = _mm512_set1_ps(a5[k]);
#pragma GCC unroll 4
      for (int j = 0; j < NP; ++j) {
        acc[3][j] = _mm512_fmadd_ps(x3, v[j], acc[3][j]);
        acc[4][j] = _mm512_fmadd_ps(x4, v[j], acc[4][j]);
        acc[5][j] = _mm512_fmadd_ps(x5, v[j], acc[5][j]);
      }
    }
  }
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 6
  for (int r = 0; r < kTilePixels; ++r) {
    if (r >= t.rows_valid) break;
    float* yr = t.y + r * t.ldy;
#pragma GCC unroll 4
    for (int j = 0; j < NP; ++j) {
      __m512 w = acc[r][j];
      // Relu as a masked move (GCC 12 bug 105593 with _mm512_max_ps, as in conv_1x1.cc).
      if (t.last && t.act == UnaryOp::kRelu) w = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(w, zero, _CMP_GT_OQ), w);
      _mm512_storeu_ps(yr + 16 * j, w);
    }
    if (t.last && t.act != UnaryOp::kNone && t.act != UnaryOp::kRelu) ApplyUnary(t.act, t.ap, yr, yr, NP * 16);
  }
}

// The AVX2 tile (16 ymm registers): 6 pixels x 16 channels (12 accumulators) of a 16-wide
// packing, one cache line of weights per k; prefetches as the AVX-512 tile's.
template <TapAhead kAhead>
__attribute__((target("avx2,fma"))) void TapTileAvx2(const TapTileArgs& t) {
  __m256 acc[kTilePixels][2];
#pragma GCC unroll 6
  for (int r = 0; r < kTilePixels; ++r) {
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      if (!t.first) {
        acc[r][h] = r < t.rows_valid ? _mm256_loadu_ps(t.y + r * t.ldy + 8 * h) : _mm256_setzero_ps();
      } else {
        acc[r][h] = t.bias ? _mm256_loadu_ps(t.bias + 8 * h) : _mm256_setzero_ps();
        if (t.z && r < t.rows_valid) acc[r][h] = _mm256_add_ps(acc[r][h], _mm256_loadu_ps(t.z + r * t.ldy + 8 * h));
      }
    }
  }
  const float* b = t.b;
  const int64_t block = t.taps * t.c * 16;
  for (int64_t tap = 0; tap < t.taps; ++tap) {
    const float* a[kTilePixels];
    for (int r = 0; r < kTilePixels; ++r) a[r] = t.rows[tap * kTilePixels + r];
    // Unrolled: one index register addresses the six rows (ResNet-50 b1's 3x3 layers on 2
    // Zen 3 cores, summed: 24.3-30.7 -> 21.8-25.8 ms, 4 alternations).
#pragma GCC unroll 4
    for (int64_t k = 0; k < t.c; ++k, b += 16) {
      const __m256 v0 = _mm256_loadu_ps(b), v1 = _mm256_loadu_ps(b + 8);
      if constexpr (kAhead == TapAhead::kStream) {
        _mm_prefetch(reinterpret_cast<const char*>(b + kWeightPrefetchAhead), _MM_HINT_T0);
      } else if constexpr (kAhead == TapAhead::kNext) {
        _mm_prefetch(reinterpret_cast<const char*>(b + block), _MM_HINT_T1);
      } else if constexpr (kAhead == TapAhead::kSlice) {
        _mm_prefetch(reinterpret_cast<const char*>(t.pf + (b - t.b)), _MM_HINT_T1);
      }
#pragma GCC unroll 6
      for (int r = 0; r < kTilePixels; ++r) {
        const __m256 x = _mm256_broadcast_ss(a[r] + k);
        acc[r][0] = _mm256_fmadd_ps(x, v0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(x, v1, acc[r][1]);
      }
    }
  }
  const __m256 zero = _mm256_setzero_ps();
#pragma GCC unroll 6
  for (int r = 0; r < kTilePixels; ++r) {
    if (r >= t.rows_valid) break;
    float* yr = t.y + r * t.ldy;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      __m256 w = acc[r][h];
      if (t.last && t.act == UnaryOp::kRelu) w = _mm256_max_ps(w, zero);  // NaN -> 0, as the AVX-512 tile
      _mm256_storeu_ps(yr + 8 * h, w);
    }
    if (t.last && t.act != UnaryOp::kNone && t.act != UnaryOp::kRelu) ApplyUnary(t.act, t.ap, yr, yr, 16);
  }
}
#endif

// The tap tile's instruction set: AVX-512, else AVX2 with FMA.
bool HasTapTile() { return HasAvx512Nhwc() || HasAvx2Fma(); }

using TapTileFn = void (*)(const TapTileArgs&);
// The AVX-512 tile for 64-wide packings (CPUs with AVX-512: the engine requires the build
// CPU's features), the AVX2 one for 16-wide packings.
template <TapAhead A>
TapTileFn TapTileOf(int64_t width, bool avx2_tile) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!avx2_tile) {
    switch (width / 16) {
      case 1: return TapTile<1, A>;
      case 2: return TapTile<2, A>;
      case 3: return TapTile<3, A>;
      case 4: return TapTile<4, A>;
      default: break;
    }
  } else if (width == 16) {
    return TapTileAvx2<A>;
  }
#endif
  (void)width;
  (void)avx2_tile;
  return nullptr;
}
TapTileFn TapTileFor(int64_t width, TapAhead ahead, bool avx2_tile) {
  switch (ahead) {
    case TapAhead::kStream: return TapTileOf<TapAhead::kStream>(width, avx2_tile);
    case TapAhead::kNext: return TapTileOf<TapAhead::kNext>(width, avx2_tile);
    case TapAhead::kSlice: return TapTileOf<TapAhead::kSlice>(width, avx2_tile);
    default: return TapTileOf<TapAhead::kNone>(width, avx2_tile);
  }
}

bool SupportsTaps(const Node& node, const KernelBuildContext& ctx) {
  if (!HasTapTile() || !SupportsNhwcConv(node, ctx)) return false;
  const auto& w = ctx.input_shapes[1];
  return w[0] % 16 == 0 && w[1] >= kMinTapChannels;
}
// "nhwc_taps16": 16-wide packing and the AVX2 tile on any CPU with AVX2 (no knob value
// names it: the kernel harness runs the AVX2 tile with it on CPUs with AVX-512 too).
bool SupportsTaps16(const Node& node, const KernelBuildContext& ctx) { return HasAvx2Fma() && SupportsTaps(node, ctx); }

// The automatic choice's case (AutoPrefersNativeNhwc: AMD CPUs; Intel ones without AMX): a
// strided layer with at least kAutoWeightBytes (Intel: kAutoWeightBytesIntel) of weights,
// where oneDNN 2.6 streams them for few pixels (above).
bool AutoTapsStrided() { return HasAvx512Nhwc() && (AutoPrefersNativeNhwc() || AutoOwnKernelsOnIntelWithoutAmx()); }
bool SupportsTapsStrided(const Node& node, const KernelBuildContext& ctx) {
  if (!AutoTapsStrided() || !SupportsTaps(node, ctx)) return false;
  const auto& w = ctx.input_shapes[1];
  std::vector<int64_t> xs = ctx.input_shapes[0];
  xs[0] = 1;
  const auto g = MakeConvNhwcGeom(node, xs, w);
  const int64_t bytes = w[0] * w[1] * w[2] * w[3] * static_cast<int64_t>(sizeof(float));
  return g.ok() && (g->sh > 1 || g->sw > 1) &&
         bytes >= (AutoPrefersNativeNhwc() ? kAutoWeightBytes : kAutoWeightBytesIntel);
}

// The automatic choice on AMD CPUs with AVX2 and no AVX-512 (the AVX2 tile): every layer
// with more than one tap. oneDNN 2.6's AVX2 direct kernel runs ResNet-50's 3x3 layers well
// under ONNX Runtime's rate on Zen 3 (below); its 1x1 layers at that rate, faster than this
// tile's 16-wide groups, which read the pixels' rows once per 16 channels.
bool AutoTapsAvx2() { return AutoPrefersNativeNhwc() && !HasAvx512Nhwc() && HasAvx2Fma(); }
bool SupportsTapsAvx2(const Node& node, const KernelBuildContext& ctx) {
  if (!AutoTapsAvx2() || !SupportsTaps(node, ctx)) return false;
  const auto& w = ctx.input_shapes[1];
  return w[2] * w[3] > 1;
}

// Taps per K block: whole taps whose packed weights (`cols` wide) fit kTapBlockBytes, spread
// evenly.
int64_t TapsPerBlock(int64_t taps, int64_t c, int64_t cols) {
  const int64_t fit = std::max<int64_t>(1, kTapBlockBytes / (c * cols * static_cast<int64_t>(sizeof(float))));
  const int64_t blocks = (taps + fit - 1) / fit;
  return (taps + blocks - 1) / blocks;
}

// The packing's column groups: 64 channels for the AVX-512 tile, 16 for the AVX2 one (its
// 6x16 tile then reads each k's 16 weights from one cache line; with 64-wide groups its
// four panel passes read every fourth line and ran ResNet-50 b1's layer3 3x3 layers at
// 1.99-2.04 ms against 1.72-1.80 with 16-wide ones on 2 Zen 3 cores). Any CPU runs either.
Status PrepareTaps(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  return PrepareTileConvCols(node, ctx, spec, HasAvx512Nhwc() ? kTileCols : 16);
}
Status PrepareTaps16(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  return PrepareTileConvCols(node, ctx, spec, 16);
}

Result<std::unique_ptr<Kernel>> CreateTaps(const StepView& v) {
  const Node node = v.node;
  const std::vector<int64_t> w_shape = v.params.value("w_shape", std::vector<int64_t>{});
  const int64_t cols = v.params.value("tile_cols", kTileCols);
  if (w_shape.size() != 4 || v.packed.empty() || v.packed[0]->numel() != w_shape[0] * w_shape[1] * w_shape[2] * w_shape[3]) {
    return ops::NodeError(node, "packed weights missing");
  }
  if (cols != 16 && cols != kTileCols) return ops::NodeError(node, "tile_cols");
  const bool avx2_tile = cols == 16;
  for (int64_t g = 0; g * cols < w_shape[0]; ++g) {
    if (!TapTileFor(TileGroupWidth(w_shape[0], g, cols), TapAhead::kNone, avx2_tile)) {
      return ops::NodeUnsupported(node, "tap tile (needs AVX-512 or AVX2 with FMA)");
    }
  }
  SY_ASSIGN_OR_RETURN(const ConvNhwcFusion fusion, ReadConvNhwcFusion(node));
  const Tensor* packed = v.packed[0];
  const auto zeros = std::make_shared<const std::vector<float>>(static_cast<size_t>(w_shape[1]), 0.f);
  return MakeNhwcConvKernel(
      node, w_shape, fusion.has_z,
      [=](const KernelIO& io, const ConvNhwcGeom& g, const ConvNhwcOperands& ops) -> Status {
        const int64_t pixels = g.n * g.oh * g.ow, m = g.m, c = g.c, taps = g.kh * g.kw, k_all = taps * c;
        const float* x = io.inputs[0]->as<float>();
        const float* bias = ops.bias ? ops.bias->as<float>() : nullptr;
        const float* z = ops.z ? ops.z->as<float>() : nullptr;
        float* y = io.outputs[0]->as<float>();
        const float* wb = packed->data<float>();
        const float* zero = zeros->data();
        const int64_t groups = (pixels + kTilePixels - 1) / kTilePixels;
        const int64_t col_groups = (m + cols - 1) / cols;
        const int64_t per_block = TapsPerBlock(taps, c, cols);
        const NhwcSplit split = ChooseNhwcSplit(groups, col_groups, pixels, m, io.threads);
        ParallelFor(split.pixels * split.cols, io.threads, 1, [&](int64_t i0, int64_t i1) {
          thread_local std::vector<const float*> rows;  // [group][tap][6] of this item
          for (int64_t i = i0; i < i1; ++i) {
            const int64_t pi = i / split.cols, ci = i % split.cols;
            const int64_t g0 = groups * pi / split.pixels, g1 = groups * (pi + 1) / split.pixels;
            const int64_t c0 = col_groups * ci / split.cols, c1 = col_groups * (ci + 1) / split.cols;
            const float** r = ScratchOf(rows, static_cast<size_t>((g1 - g0) * taps * kTilePixels));
            for (int64_t pg = g0; pg < g1; ++pg) {
              for (int64_t q = 0; q < kTilePixels; ++q) {
                const int64_t p = std::min(pg * kTilePixels + q, pixels - 1);  // missing pixels repeat the last
                const int64_t n = p / (g.oh * g.ow), oy = p / g.ow % g.oh, ox = p % g.ow;
                for (int64_t ky = 0; ky < g.kh; ++ky) {
                  for (int64_t kx = 0; kx < g.kw; ++kx) {
                    const int64_t iy = oy * g.sh - g.pt + ky, ix = ox * g.sw - g.pl + kx;
                    const bool in = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
                    r[((pg - g0) * taps + ky * g.kw + kx) * kTilePixels + q] = in ? x + ((n * g.h + iy) * g.w + ix) * c : zero;
                  }
                }
              }
            }
            for (int64_t cg = c0; cg < c1; ++cg) {
              const int64_t width = TileGroupWidth(m, cg, cols);
              for (int64_t t0 = 0; t0 < taps; t0 += per_block) {
                const int64_t nt = std::min(per_block, taps - t0);
                for (int64_t pg = g0; pg < g1; ++pg) {
                  const int64_t p = pg * kTilePixels;
                  // The first pixel group streams the block from memory; while the
                  // next ones find it in L2 they prefetch the next block, one line per k
                  // each, groups 2..NP+1 a 1/NP slice each (with fewer groups, the second
                  // all of it).
                  const int64_t np = width / 16, nb = nt * c * width;  // the block's floats
                  TapAhead ahead = pg == g0 ? TapAhead::kStream : TapAhead::kNone;
                  const float* pf = nullptr;
                  if (g1 - g0 > np && pg > g0 && pg - g0 <= np) {
                    ahead = TapAhead::kSlice;
                    pf = wb + cg * cols * k_all + t0 * c * width + nb + (pg - g0 - 1) * (nb / np);
                  } else if (g1 - g0 <= np && pg == g0 + 1) {
                    ahead = TapAhead::kNext;
                  }
                  TapTileArgs t{c, nt, r + ((pg - g0) * taps + t0) * kTilePixels,
                                wb + cg * cols * k_all + t0 * c * width, bias ? bias + cg * cols : nullptr,
                                t0 == 0, t0 + nt >= taps, z ? z + p * m + cg * cols : nullptr,
                                y + p * m + cg * cols, m, std::min(kTilePixels, pixels - p), fusion.act, fusion.ap, pf};
                  TapTileFor(width, ahead, avx2_tile)(t);
                }
              }
            }
          }
        });
        return Status::Ok();
      });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeConvTaps) {
  RegisterNativeConv(reg, "nhwc_taps", SupportsTaps, PrepareTaps, CreateTaps, HasTapTile);
  RegisterNativeConv(reg, "nhwc_taps_strided", SupportsTapsStrided, PrepareTaps, CreateTaps, AutoTapsStrided);
  RegisterNativeConv(reg, "nhwc_taps_avx2", SupportsTapsAvx2, PrepareTaps16, CreateTaps, AutoTapsAvx2);
  RegisterNativeConv(reg, "nhwc_taps16", SupportsTaps16, PrepareTaps16, CreateTaps, HasAvx2Fma);
}

}  // namespace switchyard::native
