// Native Winograd convolution on nhwc fp32 activations, variants "winograd_f43" (F(4x4, 3x3))
// and "winograd_f23" (F(2x2, 3x3)): 3x3, stride 1, dilation 1, group 1, any pads and channel
// counts; Conv and switchyard.FusedConv (bias, residual Z, activation); AVX-512, or AVX2 with
// FMA ("winograd_f43_avx2", "winograd_f23_avx2": the same kernels, conv_winograd_isa.inc,
// built for 8 lanes and a 6-tile x 16-channel GEMM tile).
//
// A TxT output tile is A^T [(G g G^T) . (B^T d B)] A over the tile's (T+2)x(T+2) input
// patch d: F(4x4) takes 36 products per (input, output) channel pair instead of the direct
// convolution's 144 multiply-adds, F(2x2) 16 instead of 36. Over all tiles the products are
// (T+2)^2 GEMMs [tiles, C] x [C, M], one per position of the transform domain, on weights
// transformed (in double) and packed at build time. A run has three phases, each spread over
// the run's threads: the input transform (16 channels per AVX-512 vector, zero outside the
// image) into V[tile][pos][c], the GEMMs (a 6-tile x 64-channel register-blocked
// micro-kernel that broadcasts V in place; positions x pieces of tiles over the threads, each
// piece a 64-channel strip of the weights at a time through all its tiles) into
// M[tile][pos][m], and the output transform with bias, Z and the activation fused. Where the
// transformed weights are small (kFusedWeightBytes) each thread instead takes 6 tiles at a
// time through all three. V and M live in a per-calling-thread buffer outside the engine's
// arena ((T+2)^2 x tiles x (C + M) floats on the three-phase path: 1.7 MiB for ResNet-50's
// 28x28x128 layers), kept for the thread's life and not counted in the build report's arena
// bytes.
//
// Accuracy: F(4x4)'s transform constants (1/4, 1/6, 1/24, up to 8) add rounding; per layer
// the result is within about 1e-6 relative L2 of the direct convolution (ResNet-50's
// logits 3e-7), which the tuner's gate judges (F(4x4) is never the default).
// F(2x2)'s constants are 1/2 and 1 (ResNet-50's 7x7x512 layers 9e-7 by `switchyard check`):
// as accurate as oneDNN's direct convolution in a whole network (ResNet-50 b1 with F(2x2)
// on all 13 stride-1 3x3 layers, `switchyard check --threshold 1e-4` against the fp64
// reference: the first intermediate over 1e-4 is layer4.1's conv3 at l2 1.107e-4, oneDNN
// direct's the same node at 1.128e-4; with F(4x4) layer3.5's, earlier).
//
// The automatic choice (kernel.conv=auto, "winograd_f23_auto"): F(2x2) on every 3x3
// stride-1 layer with kAutoMinChannels input channels or more, 16 outputs or more and 16
// 2x2 tiles over the batch and 8 per thread (kAutoMinTilesPerThread), on Intel CPUs with AVX-512
// (AutoPrefersWinogradF23), where it ran faster than oneDNN 2.6's direct kernels at 2 and
// 16 threads (session 36, medians of alternations): ResNet-50 b1 on a 2-core Xeon (no AMX)
// 30.1 -> 27.5 ms (F(4x4) 26.1, ORT 29.6), b8 213 -> 192 ms; PP-OCRv4 det's 96 -> 24 FPN
// layers at 160x160 4.4-4.6 -> 3.1 ms each; on the 16-core Xeon with AMX b1 8.73 -> 8.22 ms
// (noisy host: 6.4-14.7 against 6.6-8.7), b8 65.4 -> 53.0. AMD CPUs keep their own
// automatic choices (conv_taps.cc, conv_1x1.cc; not measured with it).
//
// Used (kernel.conv=winograd): F(4x4) where a layer has at least kMinTiles 4x4 output tiles
// over the batch, F(2x2) where it has fewer of those but at least kMinTiles 2x2 ones
// (ResNet-50's 7x7x512 layers at batch 1: 4 tiles of 4x4, whose 36 transformed weight
// matrices, 37.7 MB, stream from memory for 4 tiles, against 16 tiles of 2x2 on 16.8 MB),
// oneDNN's Winograd below that. On 2 Zen 5 cores (`bench/steps_ab.py`, medians of 5
// alternations, session 32) the 7x7x512 layers take 0.54-0.56 ms against oneDNN Winograd's
// 0.68-0.69 (its direct: 0.77); at batch 8 (32 tiles of 4x4) F(4x4) took 2.37-2.41 against
// oneDNN Winograd's 3.75-3.95 in an earlier session, 2.79 -> 2.51 with the strip order below
// (3 alternations, the box slower that day). ResNet-50's stride-1 3x3 layers at batch 1 take 0.23-0.28
// (56x56x64), 0.22-0.25 (28x28x128) and 0.34-0.36 ms (14x14x256) against oneDNN direct's
// 0.56, 0.56 and 0.54.
#include <immintrin.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <utility>
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

// F(TxT, 3x3): T x T output tiles from (T + 2) x (T + 2) input patches, kPos<T> products.
template <int T>
constexpr int kP = T + 2;
template <int T>
constexpr int64_t kPos = kP<T> * kP<T>;
constexpr int64_t kLanes = 16;     // floats per PackB panel and per padded channel group (an AVX-512 vector)
constexpr int64_t kMinTiles = 16;  // F(4x4): 13x13 outputs and up at batch 1, 7x7 at batch 4
// The automatic F(2x2)'s least input channels: the layers it was measured on have 64 to 512
// (ResNet-50) and 96 (PP-OCRv4 det); with few channels per tile the transforms weigh more.
constexpr int64_t kAutoMinChannels = 64;
// The automatic F(2x2)'s least 2x2 tiles per thread: with fewer, each thread's GEMMs are
// short and the transformed weights (16 matrices, 1.8x the layer's weights) are read for few
// tiles. ResNet-50 on the 16-core Xeon with AMX (H100 host), 16 threads, F(2x2) -> oneDNN
// per layer (bench/steps_ab.py, 3 alternations, ms): b1 layer1 (49 tiles per thread)
// 0.088-0.107 against 0.144-0.158, layer2 (12) 0.140-0.213 against 0.145-0.154, layer3 (3)
// 0.154-0.163 against 0.144-0.155, layer4 (1) 0.185 against 0.168-0.170; b8 layer3 (24)
// 0.57-0.61 against 0.87, layer4 (8) 1.24-1.33 against 1.19. On 2 cores b1's layer4 (8 per
// thread) ran 0.87-0.97 against oneDNN's 0.99-1.07 (3 profiles each): 8 keeps it.
constexpr int64_t kAutoMinTilesPerThread = 8;
constexpr int64_t kGemmRows = 96;  // tiles per GEMM piece
// U comes from memory once per run (ResNet-50 b1's 14x14x256 layers: 9 MiB each). A GEMM
// piece takes it a 64-channel strip at a time through all its tiles: the first 6 tiles
// prefetch the strip kWeightPrefetchAhead floats ahead in each of its panels (conv_nhwc.h;
// those five layers plus layer3's stride-2 one, oneDNN's: 3.04-3.21 ms per run without,
// 2.87-3.00 with), the next 6 prefetch the following strip into L2 while the strip they read
// is there already (session 32, medians of 6 alternations on 2 Zen 5 cores: layer3's five
// layers 0.41-0.42 -> 0.37-0.39 ms each, the 7x7x512 F(2x2) ones 0.67-0.69 -> 0.63-0.64;
// before, each group of 6 tiles read all of a position's U, from L3 for the 7x7x512 layers'
// 1 MiB).
// Transformed weights up to this size (C = M = 64: 576 KiB) take the fused path, which
// reads them once per 6 tiles from L2. ResNet-50's 56x56x64 layers 0.46-0.50 -> 0.30-0.33
// ms; at 28x28x128 (2.25 MiB) it was slower than the three phases (0.30 -> 0.40).
constexpr int64_t kFusedWeightBytes = 640 * 1024;

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
template <int T>
int64_t TilesPerImage(const ConvNhwcGeom& g) { return ((g.oh + T - 1) / T) * ((g.ow + T - 1) / T); }

// F(4x4) where a layer has kMinTiles of its tiles over the batch; F(2x2) where only its
// smaller tiles reach that many.
// kAvx512: the AVX-512 kernels, else the AVX2 ones.
// A 3x3 stride-1 convolution the native nhwc kernels take: its per-image geometry and its
// output tiles of TxT over the batch; nullopt otherwise.
template <int T>
std::optional<std::pair<ConvNhwcGeom, int64_t>> Stride1Tiles(const Node& node, const KernelBuildContext& ctx) {
  if (!SupportsNhwcConv(node, ctx)) return std::nullopt;
  std::vector<int64_t> xs = ctx.input_shapes[0];
  xs[0] = 1;
  auto g = MakeConvNhwcGeom(node, xs, ctx.input_shapes[1]);
  if (!g.ok() || g->kh != 3 || g->kw != 3 || g->sh != 1 || g->sw != 1) return std::nullopt;
  return std::make_pair(*g, TilesPerImage<T>(*g) * std::max<int64_t>(1, ctx.input_shapes[0][0]));
}

template <int T, bool kAvx512>
bool SupportsWinograd(const Node& node, const KernelBuildContext& ctx) {
  const bool isa = kAvx512 ? HasAvx512Nhwc() : HasAvx2Fma();
  if (!isa) return false;
  const auto t4 = Stride1Tiles<4>(node, ctx);
  if (!t4) return false;
  const bool f43 = t4->second >= kMinTiles;
  return T == 4 ? f43 : !f43 && Stride1Tiles<2>(node, ctx)->second >= kMinTiles;
}

// kernel.conv=auto's F(2x2) (AVX-512 kernels; header comment).
bool SupportsWinogradAuto(const Node& node, const KernelBuildContext& ctx) {
  if (!AutoPrefersWinogradF23()) return false;
  const auto t2 = Stride1Tiles<2>(node, ctx);
  return t2 && t2->first.c >= kAutoMinChannels && t2->first.m >= 16 && t2->second >= kMinTiles &&
         t2->second >= kAutoMinTilesPerThread * std::max(ctx.threads, 1);
}

// G: the kernel transform (kP<T> x 3).
template <int T>
const double (&KernelTransform())[kP<T>][3] {
  if constexpr (T == 4) {
    static const double g[6][3] = {{1.0 / 4, 0, 0},          {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                   {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                   {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
    return g;
  } else {
    static const double g[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    return g;
  }
}

// U[pos][c][m] = (G g G^T)[pos] of W[m, c] in double, each position in PackB's layout.
template <int T>
Status PrepareWinograd(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  constexpr int P = kP<T>;
  std::vector<int64_t> xs = ctx.input_shapes[0];
  xs[0] = 1;
  SY_ASSIGN_OR_RETURN(ConvNhwcGeom g, MakeConvNhwcGeom(node, xs, ctx.input_shapes[1]));
  const auto& kG = KernelTransform<T>();
  const float* w = ctx.constants[1]->data<float>();
  // U = G g G^T per (input, output) channel pair, written straight into PackB's layout (per
  // position a [C x M] matrix in kGemmNR-wide column panels, each [C][kGemmNR], padding
  // columns zero), a panel of output channels at a time so that each (position, c) row of
  // a panel is written whole. Before, a [position][C][M] matrix written column by column
  // and then packed cost ResNet-50's build a fresh 80 MB (its 13 stride-1 3x3 layers' U)
  // and two passes over it: 0.7-2.05 s against oneDNN's direct kernels' 0.52-1.0 on the
  // 2-core Xeon of session 36, mostly the VM's page clearing.
  const int64_t per = PackedBSize(g.c, g.m);
  Tensor packed = g.m % kGemmNR == 0 ? Tensor::Uninitialized(DataType::kFloat, {kPos<T> * per})
                                     : Tensor(DataType::kFloat, {kPos<T> * per});
  float* out = packed.data<float>();
  for (int64_t m0 = 0; m0 < g.m; m0 += kGemmNR) {
    float* panel = out + m0 * g.c;  // panel m0 / kGemmNR of each position: kGemmNR * C floats
    for (int64_t c = 0; c < g.c; ++c) {
      for (int64_t m = m0; m < std::min(g.m, m0 + kGemmNR); ++m) {
        const float* k = w + (m * g.c + c) * 9;
        double gk[P][3];  // G g
        for (int i = 0; i < P; ++i) {
          for (int j = 0; j < 3; ++j) gk[i][j] = kG[i][0] * k[j] + kG[i][1] * k[3 + j] + kG[i][2] * k[6 + j];
        }
        for (int i = 0; i < P; ++i) {
          for (int j = 0; j < P; ++j) {
            const double v = gk[i][0] * kG[j][0] + gk[i][1] * kG[j][1] + gk[i][2] * kG[j][2];
            panel[(i * P + j) * per + c * kGemmNR + (m - m0)] = static_cast<float>(v);
          }
        }
      }
    }
  }
  FinishNhwcConvSpec(node, ctx, std::move(packed), spec);
  return Status::Ok();
}

struct Tiling {
  ConvNhwcGeom g;
  int64_t th, tw, tiles, cp, mp;  // tiles per image column and row, in all; C and M padded to 16
};

// How a micro-kernel reads ahead in U. kNone: not at all (U is in cache). kStream: the
// first rows to read a strip of U (from memory) prefetch it kWeightPrefetchAhead floats ahead
// in each panel. kNext: rows that find the strip in L2 already prefetch the strip after it
// (the NP panels that follow in memory, next in the run's order) into L2, so that memory
// reads overlap their products.
enum class Ahead { kNone, kStream, kNext };
using WinoMicroFn = void (*)(int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t);

}  // namespace

// The kernels for AVX-512 (16 lanes, strips of 4 panels: a 6 x 64 register tile) and for AVX2
// with FMA (8 lanes, strips of one panel: 6 x 16), one source (conv_winograd_isa.inc).
// The region's functions (templates too) get the target attribute: GCC's target pragma,
// clang's attribute pragma (clang ignores the former; the fuzz build uses clang).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif
namespace wino_avx512 {
namespace {
#define WV __m512
#define WM __mmask16
#define WL 16
#define WSTRIP 4
#define WADD _mm512_add_ps
#define WSUB _mm512_sub_ps
#define WMUL _mm512_mul_ps
#define WFMA _mm512_fmadd_ps
#define WFNMA _mm512_fnmadd_ps
#define WSET1 _mm512_set1_ps
#define WZERO _mm512_setzero_ps
#define WLOAD _mm512_loadu_ps
#define WSTORE _mm512_storeu_ps
#define WMLOAD _mm512_maskz_loadu_ps
#define WMSTORE _mm512_mask_storeu_ps
#define WMAX _mm512_max_ps
inline __mmask16 WTAIL(int64_t left) {
  return left >= 16 ? 0xFFFF : left <= 0 ? 0 : static_cast<__mmask16>((1u << left) - 1);
}
#include "backends/cpu/native/conv_winograd_isa.inc"
}  // namespace
}  // namespace wino_avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace wino_avx2 {
namespace {
#define WV __m256
#define WM __m256i
#define WL 8
#define WSTRIP 1
#define WADD _mm256_add_ps
#define WSUB _mm256_sub_ps
#define WMUL _mm256_mul_ps
#define WFMA _mm256_fmadd_ps
#define WFNMA _mm256_fnmadd_ps
#define WSET1 _mm256_set1_ps
#define WZERO _mm256_setzero_ps
#define WLOAD _mm256_loadu_ps
#define WSTORE _mm256_storeu_ps
#define WMLOAD(m, p) _mm256_maskload_ps((p), (m))
#define WMSTORE(p, m, v) _mm256_maskstore_ps((p), (m), (v))
#define WMAX _mm256_max_ps
inline __m256i WTAIL(int64_t left) {
  const int n = static_cast<int>(std::clamp<int64_t>(left, 0, 8));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#include "backends/cpu/native/conv_winograd_isa.inc"
}  // namespace
}  // namespace wino_avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

namespace {

template <int T, class K>
Result<std::unique_ptr<Kernel>> CreateWinograd(const StepView& v) {
  constexpr int64_t kPositions = kPos<T>;
  const Node node = v.node;
  const std::vector<int64_t> w_shape = v.params.value("w_shape", std::vector<int64_t>{});
  if (w_shape.size() != 4 || v.packed.empty()) return ops::NodeError(node, "packed weights missing");
  SY_ASSIGN_OR_RETURN(const ConvNhwcFusion fusion, ReadConvNhwcFusion(node));
  const UnaryOp act = fusion.act;
  const UnaryParams ap = fusion.ap;
  const Tensor* packed = v.packed[0];
  if (packed->numel() != kPositions * PackedBSize(w_shape[1], w_shape[0])) return ops::NodeError(node, "packed weights do not match");
  return MakeKernel(
      ConvNhwcShapes(node, w_shape),
      [=](const KernelIO& io) -> Status {
        Tiling tl;
        SY_ASSIGN_OR_RETURN(tl.g, MakeConvNhwcGeom(node, io.inputs[0]->shape, w_shape));
        const ConvNhwcGeom& g = tl.g;
        SY_ASSIGN_OR_RETURN(const ConvNhwcOperands operands, ReadConvNhwcOperands(node, io, g, fusion.has_z));
        const TensorRef* bias = operands.bias;
        const TensorRef* z = operands.z;
        tl.th = (g.oh + T - 1) / T;
        tl.tw = (g.ow + T - 1) / T;
        tl.tiles = g.n * tl.th * tl.tw;
        tl.cp = RoundUp(g.c, kLanes);
        tl.mp = RoundUp(g.m, kLanes);
        const float* x = io.inputs[0]->as<float>();
        float* y = io.outputs[0]->as<float>();
        const float* wb = packed->data<float>();
        const float* bp = bias ? bias->as<float>() : nullptr;
        const float* zp = z ? z->as<float>() : nullptr;
        const int64_t per = PackedBSize(g.c, g.m), panel = g.c * kLanes;
        // Position p's products of r <= 6 tiles (V and M rows at v and mo) with U (in L2).
        auto products = [&](const float* v, float* mo, int64_t p, int64_t r) {
          for (int64_t n0 = 0; n0 < tl.mp; n0 += K::kStrip * kLanes) {
            const int64_t np = std::min<int64_t>(K::kStrip, (tl.mp - n0) / kLanes);
            K::MicroFor(Ahead::kNone, r, np)(g.c, v + p * tl.cp, kPositions * tl.cp,
                                                               wb + p * per + n0 / kLanes * panel, panel,
                                                               mo + p * tl.mp + n0, kPositions * tl.mp);
          }
        };
        thread_local std::vector<float> scratch;  // per calling thread: sessions run concurrently
        auto aligned = [](std::vector<float>& buf, size_t n) {  // 64-byte aligned: vectors stay within a cache line
          float* const p = ScratchOf(buf, n + kLanes);
          return p + (kLanes - reinterpret_cast<uintptr_t>(p) / sizeof(float) % kLanes) % kLanes;
        };
        if (kPositions * g.c * g.m * 4 <= kFusedWeightBytes) {
          // Small U (stays in L2): each thread takes groups of 6 tiles through all three
          // phases in its own V and M, which then stay in L1/L2 too. Same arithmetic as below.
          const int64_t each = RoundUp(6 * kPositions * (tl.cp + tl.mp), kLanes);
          float* const base = aligned(scratch, static_cast<size_t>(each * std::max(io.threads, 1)));
          ParallelFor((tl.tiles + 5) / 6, io.threads, 1, [&](int64_t b, int64_t e) {
            int worker = 0;
#ifdef _OPENMP
            worker = omp_get_thread_num();
#endif
            float* v = base + worker * each;
            float* mo = v + 6 * kPositions * tl.cp;
            for (int64_t grp = b; grp < e; ++grp) {
              const int64_t t0 = grp * 6, t1 = std::min(tl.tiles, t0 + 6);
              for (int64_t t = t0; t < t1; ++t) K::template Input<T>(x, tl, t, v + (t - t0) * kPositions * tl.cp);
              for (int64_t p = 0; p < kPositions; ++p) products(v, mo, p, t1 - t0);
              for (int64_t t = t0; t < t1; ++t) {
                K::template Output<T>(mo + (t - t0) * kPositions * tl.mp, tl, t, bp, zp, act, ap, y);
              }
            }
          });
          return Status::Ok();
        }
        // Otherwise V and M for all tiles at once: splitting the tiles into chunks whose V
        // and M stay in L2 made every layer slower (U is read again per chunk; ResNet-50's
        // 28x28x128 layers 0.29 -> 0.37-0.47 ms with 256-768 KiB chunks).
        float* const vbuf = aligned(scratch, static_cast<size_t>(kPositions * tl.tiles * (tl.cp + tl.mp)));
        float* const mbuf = vbuf + kPositions * tl.tiles * tl.cp;
        ParallelFor(tl.tiles, io.threads, 4, [&](int64_t b, int64_t e) {
          for (int64_t t = b; t < e; ++t) K::template Input<T>(x, tl, t, vbuf + t * kPositions * tl.cp);
        });
        const int64_t pieces = (tl.tiles + kGemmRows - 1) / kGemmRows;
        ParallelFor(kPositions * pieces, io.threads, 1, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) {
            const int64_t p = i / pieces, t0 = (i % pieces) * kGemmRows, t1 = std::min(tl.tiles, t0 + kGemmRows);
            // A strip of U (64 output channels) at a time through all the piece's tiles:
            // the first 6 stream it from memory, the next 6 prefetch the strip after it
            // into L2, the rest find it in L2.
            for (int64_t n0 = 0; n0 < tl.mp; n0 += K::kStrip * kLanes) {
              const int64_t np = std::min<int64_t>(K::kStrip, (tl.mp - n0) / kLanes);
              for (int64_t t = t0; t < t1; t += 6) {
                const Ahead ahead = t == t0 ? Ahead::kStream : t == t0 + 6 ? Ahead::kNext : Ahead::kNone;
                K::MicroFor(ahead, std::min<int64_t>(6, t1 - t), np)(
                    g.c, vbuf + (t * kPositions + p) * tl.cp, kPositions * tl.cp, wb + p * per + n0 / kLanes * panel,
                    panel, mbuf + (t * kPositions + p) * tl.mp + n0, kPositions * tl.mp);
              }
            }
          }
        });
        ParallelFor(tl.tiles, io.threads, 4, [&](int64_t b, int64_t e) {
          for (int64_t t = b; t < e; ++t) K::template Output<T>(mbuf + t * kPositions * tl.mp, tl, t, bp, zp, act, ap, y);
        });
        return Status::Ok();
      });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeConvWinograd) {
  using A512 = wino_avx512::WinoKernels;
  using A2 = wino_avx2::WinoKernels;
  RegisterNativeConv(reg, "winograd_f43", SupportsWinograd<4, true>, PrepareWinograd<4>, CreateWinograd<4, A512>,
                     HasAvx512Nhwc);
  RegisterNativeConv(reg, "winograd_f23", SupportsWinograd<2, true>, PrepareWinograd<2>, CreateWinograd<2, A512>,
                     HasAvx512Nhwc);
  RegisterNativeConv(reg, "winograd_f23_auto", SupportsWinogradAuto, PrepareWinograd<2>, CreateWinograd<2, A512>,
                     AutoPrefersWinogradF23);
  // The AVX2 kernels: what kernel.conv=winograd takes on CPUs without AVX-512 (after the
  // AVX-512 variants, which CPUs with it take), and on any CPU with AVX2 the kernel
  // harness's.
  RegisterNativeConv(reg, "winograd_f43_avx2", SupportsWinograd<4, false>, PrepareWinograd<4>, CreateWinograd<4, A2>,
                     HasAvx2Fma);
  RegisterNativeConv(reg, "winograd_f23_avx2", SupportsWinograd<2, false>, PrepareWinograd<2>, CreateWinograd<2, A2>,
                     HasAvx2Fma);
}

}  // namespace switchyard::native
