// Native Winograd F(4x4, 3x3) convolution on nhwc fp32 activations, variant
// "winograd_f43": 3x3, stride 1, dilation 1, group 1, any pads and channel counts; Conv and
// switchyard.FusedConv (bias, residual Z, activation); AVX-512 only.
//
// A 4x4 output tile is A^T [(G g G^T) . (B^T d B)] A over the tile's 6x6 input patch d:
// 36 products per (input, output) channel pair instead of the direct convolution's 144
// multiply-adds. Over all tiles the products are 36 GEMMs [tiles, C] x [C, M], one per
// position of the 6x6 transform domain, on weights transformed (in double) and packed at
// build time. A run has three phases, each spread over the run's threads: the input
// transform (16 channels per AVX-512 vector, zero outside the image) into V[tile][pos][c],
// the GEMMs (a 6-tile x 64-channel register-blocked micro-kernel that broadcasts V in
// place; positions x chunks of tiles over the threads) into M[tile][pos][m], and the output
// transform with bias, Z and the activation fused. Where the transformed weights are small
// (kFusedWeightBytes) each thread instead takes 6 tiles at a time through all three.
// V and M live in a per-calling-thread buffer outside the engine's arena (36 x tiles x
// (C + M) floats on the three-phase path: 1.7 MiB for ResNet-50's 28x28x128 layers), kept
// for the thread's life and not counted in the build report's arena bytes.
//
// Accuracy: the transforms' constants (1/4, 1/6, 1/24, up to 8) add rounding; per layer
// the result is within about 1e-6 relative L2 of the direct convolution (ResNet-50's
// logits 3e-7), which the tuner's gate judges (kernel.conv=winograd is never the default).
//
// Used (kernel.conv=winograd) where a layer has at least kMinTiles output tiles over the
// batch; below that the 36 transformed weight matrices, 4x the direct weights, stream from
// memory for a handful of tiles (ResNet-50's 7x7x512 layers at batch 1, 4 tiles: 0.63 ms
// against oneDNN's Winograd 0.56 and its direct 0.65) and the knob falls back to oneDNN's
// Winograd. At batch 8 the same layers (32 tiles) take 2.37-2.41 ms against oneDNN
// Winograd's 3.75-3.95 (2 Zen 5 cores, `bench/steps_ab.py`, 3 repetitions). On the 2-core Zen 5
// (docs/benchmarks.md) ResNet-50's stride-1 3x3 layers take 0.44 (56x56x64), 0.29
// (28x28x128) and 0.36 ms (14x14x256) against oneDNN direct's 0.56, 0.56 and 0.54.
#include <immintrin.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "backends/cpu/native/conv_nhwc.h"
#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/gemm.h"
#include "backends/cpu/native/native.h"

// GCC 12's false maybe-uninitialized report from its own _mm512_max_ps (the undefined
// pass-through operand; bug 105593, as in silu.cc).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "backends/cpu/native/nhwc.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

constexpr int64_t kPos = 36;       // 6x6 transform domain
constexpr int64_t kLanes = 16;     // floats per AVX-512 vector
constexpr int64_t kMinTiles = 16;  // 13x13 outputs and up at batch 1, 7x7 at batch 4
constexpr int64_t kGemmRows = 96;  // tiles per GEMM piece
// The first 6 tiles of a GEMM piece prefetch U kWeightPrefetchAhead floats ahead in each
// of their panels (conv_nhwc.h): U comes from memory once per run (ResNet-50 b1's 14x14x256
// layers: 9 MiB each). Those five layers plus layer3's stride-2 one (oneDNN's): 3.04-3.21 ms
// per run without, 2.87-3.00 with (2 Zen 5 cores, 4 alternations).
// Transformed weights up to this size (C = M = 64: 576 KiB) take the fused path, which
// reads them once per 6 tiles from L2. ResNet-50's 56x56x64 layers 0.46-0.50 -> 0.30-0.33
// ms; at 28x28x128 (2.25 MiB) it was slower than the three phases (0.30 -> 0.40).
constexpr int64_t kFusedWeightBytes = 640 * 1024;

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t TilesPerImage(const ConvNhwcGeom& g) { return ((g.oh + 3) / 4) * ((g.ow + 3) / 4); }

bool SupportsWinograd(const Node& node, const KernelBuildContext& ctx) {
  if (!__builtin_cpu_supports("avx512f") || !SupportsNhwcConv(node, ctx)) return false;
  std::vector<int64_t> xs = ctx.input_shapes[0];
  xs[0] = 1;
  auto g = MakeConvNhwcGeom(node, xs, ctx.input_shapes[1]);
  const int64_t batch = std::max<int64_t>(1, ctx.input_shapes[0][0]);
  return g.ok() && g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && TilesPerImage(*g) * batch >= kMinTiles;
}

// U[pos][c][m] = (G g G^T)[pos] of W[m, c] in double, each position packed by PackB.
Status PrepareWinograd(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  std::vector<int64_t> xs = ctx.input_shapes[0];
  xs[0] = 1;
  SY_ASSIGN_OR_RETURN(ConvNhwcGeom g, MakeConvNhwcGeom(node, xs, ctx.input_shapes[1]));
  static const double kG[6][3] = {{1.0 / 4, 0, 0},          {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                  {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                  {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  const float* w = ctx.constants[1]->data<float>();
  std::vector<float> u(static_cast<size_t>(kPos * g.c * g.m));
  for (int64_t m = 0; m < g.m; ++m) {
    for (int64_t c = 0; c < g.c; ++c) {
      const float* k = w + (m * g.c + c) * 9;
      double gk[6][3];  // G g
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 3; ++j) gk[i][j] = kG[i][0] * k[j] + kG[i][1] * k[3 + j] + kG[i][2] * k[6 + j];
      }
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 6; ++j) {
          const double v = gk[i][0] * kG[j][0] + gk[i][1] * kG[j][1] + gk[i][2] * kG[j][2];
          u[static_cast<size_t>(((i * 6 + j) * g.c + c) * g.m + m)] = static_cast<float>(v);
        }
      }
    }
  }
  const int64_t per = PackedBSize(g.c, g.m);
  Tensor packed(DataType::kFloat, {kPos * per});
  for (int64_t p = 0; p < kPos; ++p) PackB(u.data() + p * g.c * g.m, g.c, g.m, g.m, 1, packed.data<float>() + p * per);
  spec.packed.push_back(std::move(packed));
  spec.consumed_inputs = {1};
  spec.params["w_shape"] = ctx.input_shapes[1];
  std::vector<size_t> nhwc_inputs = {0};
  if (node.domain == "switchyard" && node.HasInput(3)) nhwc_inputs.push_back(3);
  DeclareNhwc(node, spec, nhwc_inputs);
  return Status::Ok();
}

struct Tiling {
  ConvNhwcGeom g;
  int64_t th, tw, tiles, cp, mp;  // tiles per image column and row, in all; C and M padded to 16
};

__mmask16 TailMask(int64_t left) { return left >= kLanes ? 0xFFFF : static_cast<__mmask16>((1u << left) - 1); }

// B^T applied to six vectors (a column or a row of the 6x6 patch).
__attribute__((target("avx512f"))) inline void InputRows(const __m512 d[6], __m512 t[6]) {
  const __m512 four = _mm512_set1_ps(4.f), five = _mm512_set1_ps(5.f), two = _mm512_set1_ps(2.f);
  const __m512 d4m2 = _mm512_sub_ps(d[4], d[2]), d3m1 = _mm512_sub_ps(d[3], d[1]);
  const __m512 d4md2x4 = _mm512_fnmadd_ps(four, d[2], d[4]);  // d4 - 4 d2
  const __m512 d3m1x4 = _mm512_mul_ps(four, d[1]);
  t[0] = _mm512_fnmadd_ps(five, d[2], _mm512_fmadd_ps(four, d[0], d[4]));
  t[1] = _mm512_sub_ps(_mm512_add_ps(d4md2x4, d[3]), d3m1x4);  // -4 d1 - 4 d2 + d3 + d4
  t[2] = _mm512_sub_ps(_mm512_add_ps(d4md2x4, d3m1x4), d[3]);  //  4 d1 - 4 d2 - d3 + d4
  t[3] = _mm512_fmadd_ps(two, d3m1, d4m2);                     // -2 d1 - d2 + 2 d3 + d4
  t[4] = _mm512_fnmadd_ps(two, d3m1, d4m2);                    //  2 d1 - d2 - 2 d3 + d4
  t[5] = _mm512_fnmadd_ps(five, d[3], _mm512_fmadd_ps(four, d[1], d[5]));
}

// A^T applied to six vectors: four outputs.
__attribute__((target("avx512f"))) inline void OutputRows(const __m512 m[6], __m512 o[4]) {
  const __m512 s12 = _mm512_add_ps(m[1], m[2]), d12 = _mm512_sub_ps(m[1], m[2]);
  const __m512 s34 = _mm512_add_ps(m[3], m[4]), d34 = _mm512_sub_ps(m[3], m[4]);
  o[0] = _mm512_add_ps(_mm512_add_ps(m[0], s12), s34);
  o[1] = _mm512_fmadd_ps(_mm512_set1_ps(2.f), d34, d12);
  o[2] = _mm512_fmadd_ps(_mm512_set1_ps(4.f), s34, s12);
  o[3] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.f), d34, d12), m[5]);
}

// c[R][16*NP] = a[R][kc] x b: R (at most 6) rows of A (tiles) rsa apart, read in place
// and broadcast; B as NP consecutive 16-column panels of PackB's format, panel_stride
// apart. R x NP accumulators (24 at 6 x 4: per k 4 loads, 6 broadcasts, 24 FMAs).
template <int R, int NP, bool kStreamB = false>
__attribute__((target("avx512f"))) void Micro(int64_t kc, const float* a, int64_t rsa, const float* b,
                                               int64_t panel_stride, float* c, int64_t ldc) {
  __m512 acc[R][NP];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int p = 0; p < NP; ++p) acc[r][p] = _mm512_setzero_ps();
  }
  for (int64_t k = 0; k < kc; ++k) {
    __m512 bv[NP];
#pragma GCC unroll 4
    for (int p = 0; p < NP; ++p) bv[p] = _mm512_loadu_ps(b + p * panel_stride + k * kLanes);
    if constexpr (kStreamB) {
#pragma GCC unroll 4
      for (int p = 0; p < NP; ++p) {
        _mm_prefetch(reinterpret_cast<const char*>(b + p * panel_stride + k * kLanes + kWeightPrefetchAhead), _MM_HINT_T0);
      }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * rsa + k]);
#pragma GCC unroll 4
      for (int p = 0; p < NP; ++p) acc[r][p] = _mm512_fmadd_ps(av, bv[p], acc[r][p]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int p = 0; p < NP; ++p) _mm512_storeu_ps(c + r * ldc + p * kLanes, acc[r][p]);
  }
}
using MicroFn = void (*)(int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t);
template <int R, bool S>
constexpr std::array<MicroFn, 5> kMicroRow = {nullptr, Micro<R, 1, S>, Micro<R, 2, S>, Micro<R, 3, S>, Micro<R, 4, S>};
// [streams U][rows][panels]
template <bool S>
constexpr std::array<std::array<MicroFn, 5>, 7> kMicroOf = {std::array<MicroFn, 5>{}, kMicroRow<1, S>, kMicroRow<2, S>,
                                                            kMicroRow<3, S>, kMicroRow<4, S>, kMicroRow<5, S>,
                                                            kMicroRow<6, S>};
constexpr std::array<std::array<std::array<MicroFn, 5>, 7>, 2> kMicro = {kMicroOf<false>, kMicroOf<true>};

// V[pos][c] of tile t at v (all channels; padded lanes zero).
__attribute__((target("avx512f"))) void InputTile(const float* x, const Tiling& tl, int64_t t, float* v) {
  const int64_t cp = tl.cp;
  const ConvNhwcGeom& g = tl.g;
  const int64_t n = t / (tl.th * tl.tw), r = t % (tl.th * tl.tw);
  const int64_t y0 = (r / tl.tw) * 4 - g.pt, x0 = (r % tl.tw) * 4 - g.pl;
  const float* px[6][6];
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) {
      const int64_t iy = y0 + i, ix = x0 + j;
      px[i][j] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? x + ((n * g.h + iy) * g.w + ix) * g.c : nullptr;
    }
  }
  for (int64_t c0 = 0; c0 < tl.cp; c0 += kLanes) {
    const __mmask16 mask = TailMask(g.c - c0);
    __m512 tt[6][6];  // B^T d: tt[i][j]
    for (int j = 0; j < 6; ++j) {
      __m512 d[6], t6[6];
      for (int i = 0; i < 6; ++i) d[i] = px[i][j] ? _mm512_maskz_loadu_ps(mask, px[i][j] + c0) : _mm512_setzero_ps();
      InputRows(d, t6);
      for (int i = 0; i < 6; ++i) tt[i][j] = t6[i];
    }
    for (int i = 0; i < 6; ++i) {
      __m512 o6[6];
      InputRows(tt[i], o6);
      for (int j = 0; j < 6; ++j) _mm512_storeu_ps(v + (i * 6 + j) * cp + c0, o6[j]);
    }
  }
}

// Y for tile t from its M[pos][m] at mb: A^T M A + bias + Z, then the activation.
__attribute__((target("avx512f"))) void OutputTile(const float* mb, const Tiling& tl, int64_t t, const float* bias,
                                                    const float* z, UnaryOp act, UnaryParams ap, float* y) {
  const ConvNhwcGeom& g = tl.g;
  const int64_t mp = tl.mp;
  const int64_t n = t / (tl.th * tl.tw), r = t % (tl.th * tl.tw);
  const int64_t oy0 = (r / tl.tw) * 4, ox0 = (r % tl.tw) * 4;
  const int64_t rows = std::min<int64_t>(4, g.oh - oy0), cols = std::min<int64_t>(4, g.ow - ox0);
  for (int64_t m0 = 0; m0 < tl.mp; m0 += kLanes) {
    const __mmask16 mask = TailMask(g.m - m0);
    __m512 s[6][4];  // M A: s[i][jj]
    for (int i = 0; i < 6; ++i) {
      __m512 m6[6];
      for (int j = 0; j < 6; ++j) m6[j] = _mm512_loadu_ps(mb + (i * 6 + j) * mp + m0);
      OutputRows(m6, s[i]);
    }
    const __m512 b = bias ? _mm512_maskz_loadu_ps(mask, bias + m0) : _mm512_setzero_ps();
    for (int jj = 0; jj < cols; ++jj) {
      __m512 col[6], o4[4];
      for (int i = 0; i < 6; ++i) col[i] = s[i][jj];
      OutputRows(col, o4);
      for (int ii = 0; ii < rows; ++ii) {
        const int64_t off = ((n * g.oh + oy0 + ii) * g.ow + ox0 + jj) * g.m + m0;
        __m512 o = _mm512_add_ps(o4[ii], b);
        if (z) o = _mm512_add_ps(o, _mm512_maskz_loadu_ps(mask, z + off));
        if (act == UnaryOp::kRelu) o = _mm512_max_ps(o, _mm512_setzero_ps());
        _mm512_mask_storeu_ps(y + off, mask, o);
      }
    }
  }
  if (act == UnaryOp::kNone || act == UnaryOp::kRelu) return;
  for (int64_t ii = 0; ii < rows; ++ii) {  // the tile's row spans are contiguous in nhwc
    float* p = y + ((n * g.oh + oy0 + ii) * g.ow + ox0) * g.m;
    ApplyUnary(act, ap, p, p, cols * g.m);
  }
}

Result<std::unique_ptr<Kernel>> CreateWinograd(const StepView& v) {
  const Node node = v.node;
  const std::vector<int64_t> w_shape = v.params.value("w_shape", std::vector<int64_t>{});
  if (w_shape.size() != 4 || v.packed.empty()) return ops::NodeError(node, "packed weights missing");
  SY_ASSIGN_OR_RETURN(const ConvNhwcFusion fusion, ReadConvNhwcFusion(node));
  const UnaryOp act = fusion.act;
  const UnaryParams ap = fusion.ap;
  const Tensor* packed = v.packed[0];
  if (packed->numel() != kPos * PackedBSize(w_shape[1], w_shape[0])) return ops::NodeError(node, "packed weights do not match");
  return MakeKernel(
      ConvNhwcShapes(node, w_shape),
      [=](const KernelIO& io) -> Status {
        Tiling tl;
        SY_ASSIGN_OR_RETURN(tl.g, MakeConvNhwcGeom(node, io.inputs[0]->shape, w_shape));
        const ConvNhwcGeom& g = tl.g;
        SY_ASSIGN_OR_RETURN(const ConvNhwcOperands operands, ReadConvNhwcOperands(node, io, g, fusion.has_z));
        const TensorRef* bias = operands.bias;
        const TensorRef* z = operands.z;
        tl.th = (g.oh + 3) / 4;
        tl.tw = (g.ow + 3) / 4;
        tl.tiles = g.n * tl.th * tl.tw;
        tl.cp = RoundUp(g.c, kLanes);
        tl.mp = RoundUp(g.m, kLanes);
        const float* x = io.inputs[0]->as<float>();
        float* y = io.outputs[0]->as<float>();
        const float* wb = packed->data<float>();
        const float* bp = bias ? bias->as<float>() : nullptr;
        const float* zp = z ? z->as<float>() : nullptr;
        const int64_t per = PackedBSize(g.c, g.m), panel = g.c * kLanes;
        // Position p's products of r <= 6 tiles (V and M rows at v and mo) with U.
        // stream: the first rows to read U at this position, from memory (prefetched ahead).
        auto products = [&](const float* v, float* mo, int64_t p, int64_t r, bool stream = false) {
          for (int64_t n0 = 0; n0 < tl.mp; n0 += 4 * kLanes) {
            const int64_t np = std::min<int64_t>(4, (tl.mp - n0) / kLanes);
            kMicro[stream][r][np](g.c, v + p * tl.cp, kPos * tl.cp, wb + p * per + n0 / kLanes * panel, panel,
                                  mo + p * tl.mp + n0, kPos * tl.mp);
          }
        };
        thread_local std::vector<float> scratch;  // per calling thread: sessions run concurrently
        auto aligned = [](std::vector<float>& buf, size_t n) {  // 64-byte aligned: vectors stay within a cache line
          float* const p = ScratchOf(buf, n + kLanes);
          return p + (kLanes - reinterpret_cast<uintptr_t>(p) / sizeof(float) % kLanes) % kLanes;
        };
        if (kPos * g.c * g.m * 4 <= kFusedWeightBytes) {
          // Small U (stays in L2): each thread takes groups of 6 tiles through all three
          // phases in its own V and M, which then stay in L1/L2 too. Same arithmetic as below.
          const int64_t each = RoundUp(6 * kPos * (tl.cp + tl.mp), kLanes);
          float* const base = aligned(scratch, static_cast<size_t>(each * std::max(io.threads, 1)));
          ParallelFor((tl.tiles + 5) / 6, io.threads, 1, [&](int64_t b, int64_t e) {
            int worker = 0;
#ifdef _OPENMP
            worker = omp_get_thread_num();
#endif
            float* v = base + worker * each;
            float* mo = v + 6 * kPos * tl.cp;
            for (int64_t grp = b; grp < e; ++grp) {
              const int64_t t0 = grp * 6, t1 = std::min(tl.tiles, t0 + 6);
              for (int64_t t = t0; t < t1; ++t) InputTile(x, tl, t, v + (t - t0) * kPos * tl.cp);
              for (int64_t p = 0; p < kPos; ++p) products(v, mo, p, t1 - t0);
              for (int64_t t = t0; t < t1; ++t) OutputTile(mo + (t - t0) * kPos * tl.mp, tl, t, bp, zp, act, ap, y);
            }
          });
          return Status::Ok();
        }
        // Otherwise V and M for all tiles at once: splitting the tiles into chunks whose V
        // and M stay in L2 made every layer slower (U is read again per chunk; ResNet-50's
        // 28x28x128 layers 0.29 -> 0.37-0.47 ms with 256-768 KiB chunks).
        float* const vbuf = aligned(scratch, static_cast<size_t>(kPos * tl.tiles * (tl.cp + tl.mp)));
        float* const mbuf = vbuf + kPos * tl.tiles * tl.cp;
        ParallelFor(tl.tiles, io.threads, 4, [&](int64_t b, int64_t e) {
          for (int64_t t = b; t < e; ++t) InputTile(x, tl, t, vbuf + t * kPos * tl.cp);
        });
        const int64_t pieces = (tl.tiles + kGemmRows - 1) / kGemmRows;
        ParallelFor(kPos * pieces, io.threads, 1, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) {
            const int64_t p = i / pieces, t0 = (i % pieces) * kGemmRows, t1 = std::min(tl.tiles, t0 + kGemmRows);
            for (int64_t t = t0; t < t1; t += 6) {
              products(vbuf + t * kPos * tl.cp, mbuf + t * kPos * tl.mp, p, std::min<int64_t>(6, t1 - t),
                       t == t0);
            }
          }
        });
        ParallelFor(tl.tiles, io.threads, 4, [&](int64_t b, int64_t e) {
          for (int64_t t = b; t < e; ++t) OutputTile(mbuf + t * kPos * tl.mp, tl, t, bp, zp, act, ap, y);
        });
        return Status::Ok();
      });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeConvWinograd) {
  for (const char* op : {"Conv", "FusedConv"}) {
    const std::string domain = std::string(op) == "Conv" ? "" : "switchyard";
    reg.Register({"native", domain, op, "winograd_f43", SupportsWinograd, PrepareWinograd, CreateWinograd});
  }
}

}  // namespace switchyard::native
