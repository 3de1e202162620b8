// What the native nhwc convolutions (conv_nhwc.cc: "nhwc_rows", conv_1x1.cc: "nhwc_1x1",
// conv_taps.cc: "nhwc_taps", conv_winograd.cc: "winograd_f43"/"winograd_f23") share: the
// geometry of a group-1, dilation-1 2-D convolution, the build-time checks of route, dtypes,
// constants, bias, residual Z and activation, and the pixel-tile kernels' thread split.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/op_impl.h"

namespace switchyard::native {

// Floats (4 KiB) ahead at which the native nhwc kernels prefetch weights that their first
// pass streams from memory (conv_1x1.cc, conv_winograd.cc): the CPU's own prefetchers stop
// at each 4 KiB page. A 6x64 tile streaming its weights from a 64 MiB buffer ran at 103-107
// GFLOP/s on one Zen 5 core without, 179-184 with (198-201 from L1).
constexpr int64_t kWeightPrefetchAhead = 1024;

// The pixel-tile kernels (conv_1x1.cc, conv_taps.cc): a register tile of 6 output pixels x 64
// output channels (four 16-lane panels, 24 accumulators); column group g of M is channels
// [g*64, g*64 + width), width 64 except a last one of 16, 32 or 48.
// The tap kernel packs 16-channel column groups instead where it runs its AVX2 tile
// (conv_taps.cc); the packing's group width is the step's params["tile_cols"].
constexpr int64_t kTilePixels = 6;
constexpr int64_t kTileCols = 64;
inline int64_t TileGroupWidth(int64_t m, int64_t g, int64_t cols = kTileCols) {
  return m - g * cols < cols ? m - g * cols : cols;
}

#if defined(__x86_64__) && defined(__GNUC__)
// A register tile's R x NP accumulators set to the bias (NP*16 values; zero without one).
template <int R, int NP>
__attribute__((target("avx512f"), always_inline)) inline void TileFromBias(__m512 (&acc)[R][NP], const float* bias) {
#pragma GCC unroll 4
  for (int j = 0; j < NP; ++j) {
    const __m512 b0 = bias ? _mm512_loadu_ps(bias + 16 * j) : _mm512_setzero_ps();
#pragma GCC unroll 28
    for (int r = 0; r < R; ++r) acc[r][j] = b0;
  }
}
#endif

// How the threads share a pixel-tile layer: `pixels` contiguous ranges of pixel groups times
// `cols` ranges of column groups, pixels * cols = threads. Each item reads its columns'
// weights once and its pixels' rows once per column group, so the choice minimises
// pixels * M + cols * P, the floats a layer reads per input channel: with many pixels per
// thread that splits the pixels only (every thread streams all the weights, which stay in L2
// a group at a time); with few (ResNet-50 b1's layer4: 49 pixels, 2048 x 512 weights) it
// splits the columns, as oneDNN does.
struct NhwcSplit {
  int64_t pixels = 1, cols = 1;
};
NhwcSplit ChooseNhwcSplit(int64_t pixel_groups, int64_t col_groups, int64_t p, int64_t m, int threads);

// Prepare for the pixel-tile kernels (conv_1x1.cc, conv_taps.cc): W packed per column group
// of `cols` channels as [tap][C][width] (column group g's block at g*cols*K, K = KH*KW*C),
// params["tile_cols"] = cols, then FinishNhwcConvSpec. PrepareTileConv: cols = kTileCols.
Status PrepareTileConvCols(const Node& node, const KernelBuildContext& ctx, StepSpec& spec, int64_t cols);
Status PrepareTileConv(const Node& node, const KernelBuildContext& ctx, StepSpec& spec);

// The end of every native nhwc convolution's Prepare: `packed` replaces W (input 1), whose
// shape goes into params["w_shape"], and X (and a residual Z) are read nhwc.
void FinishNhwcConvSpec(const Node& node, const KernelBuildContext& ctx, Tensor packed, StepSpec& spec);

// A CPU with AVX-512 F and DQ (the pixel-tile and Winograd kernels' instruction set).
bool HasAvx512Nhwc();
// A CPU with AVX2 and FMA (the AVX2 tap tile's and Winograd kernels' instruction set).
bool HasAvx2Fma();
// Where the automatic choice (kernel.conv=auto) takes the native nhwc kernels for the
// layers oneDNN 2.6 runs slowly there (conv_1x1.cc's residual layers, conv_taps.cc's strided
// ones): AMD CPUs. On an Intel Xeon with AMX (the 16-core host of the GPU machine) oneDNN's
// residual 1x1 layers are not slow, and the own 1x1 kernel lost to oneDNN at 2, 4, 8 and 16
// threads: ResNet-50 b8's layer1 tail (25088 pixels, 64 -> 256) 5.3-5.5 ms against 3.3-4.5
// at 2 threads, 0.81-0.99 against 0.80-0.90 at 16; layer2's 0.80-0.89 against 0.61-0.76 at
// 16 (single-layer models, 3-4 alternations; session 22). The whole model at 16 threads, 6
// alternations of 20 runs: b8 p50 62.5-85.1 ms (median 65.9) with it, 60.5-84.8 (64.7)
// without; b1 9.1-10.5 (10.2) and 9.3-12.5 (10.0). kernel.conv=native still takes them
// there.
bool AutoPrefersNativeNhwc();
// Where kernel.conv=auto takes Switchyard's own F(2x2,3x3) Winograd for stride-1 3x3 layers
// (conv_winograd.cc, "winograd_f23_auto"): Intel CPUs with AVX-512.
bool AutoPrefersWinogradF23();
// Intel CPUs with AVX-512 and without AMX (the 2-core Xeon, family 6 model 207, where the
// rules were measured): kernel.conv=auto takes the own 1x1 kernel for few-pixel layers
// (conv_1x1.cc) and the tap kernel for strided layers with very large weights (conv_taps.cc).
// On the 16-core Xeon with AMX at 16 threads the 1x1 kernel lost to oneDNN (conv_1x1.cc).
bool AutoOwnKernelsOnIntelWithoutAmx();

// Registers a native convolution variant for Conv and switchyard.FusedConv (fused_only: for
// FusedConv only, e.g. a variant that needs its residual input), runnable where `available`
// says (null: everywhere).
void RegisterNativeConv(CpuImplRegistry& reg, const char* variant, decltype(CpuOpImpl::supports) supports,
                        decltype(CpuOpImpl::prepare) prepare, decltype(CpuOpImpl::create) create,
                        std::function<bool()> available, bool fused_only = false);

struct ConvNhwcGeom {
  int64_t n, c, h, w, m, kh, kw, sh, sw, pt, pl, oh, ow;
};

// X [N, C, H, W] and W [M, C, KH, KW] (NCHW order; the bytes are nhwc at run time).
Result<ConvNhwcGeom> MakeConvNhwcGeom(const Node& node, const std::vector<int64_t>& x,
                                      const std::vector<int64_t>& wt);

// Conv or switchyard.FusedConv on an nhwc fp32 route: f32 X (not a constant) and constant
// W, an optional 1-D bias, an optional residual Z of the output's shape, a native
// activation, a 4-D input with known C, H, W, group 1 and dilation 1.
bool SupportsNhwcConv(const Node& node, const KernelBuildContext& ctx);

// At load: the fused activation and whether a residual Z is an input.
struct ConvNhwcFusion {
  UnaryOp act = UnaryOp::kNone;
  UnaryParams ap;
  bool has_z = false;
};
Result<ConvNhwcFusion> ReadConvNhwcFusion(const Node& node);

// The output shape of X under weights `w_shape` ([N, M, OH, OW]).
ShapeFn ConvNhwcShapes(const Node& node, const std::vector<int64_t>& w_shape);

// A call's bias and Z (nullptr where absent), checked against the geometry.
struct ConvNhwcOperands {
  const TensorRef* bias = nullptr;
  const TensorRef* z = nullptr;
};
Result<ConvNhwcOperands> ReadConvNhwcOperands(const Node& node, const KernelIO& io, const ConvNhwcGeom& g,
                                              bool has_z);

// A native nhwc convolution's kernel: output shapes from `w_shape` (ConvNhwcShapes) and, at
// each call, the call's geometry and its bias and residual (has_z) checked, then `run`.
using NhwcConvRun = std::function<Status(const KernelIO&, const ConvNhwcGeom&, const ConvNhwcOperands&)>;
Result<std::unique_ptr<Kernel>> MakeNhwcConvKernel(const Node& node, const std::vector<int64_t>& w_shape, bool has_z,
                                                   NhwcConvRun run);

}  // namespace switchyard::native
