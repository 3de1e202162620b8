// Shared plumbing of the native CPU kernels: a Kernel built from two closures, a
// parallel-for over OpenMP (serial when the build has no OpenMP), broadcasting plans,
// and registration helpers. Closures run once per call, never per element.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "backends/cpu/op_impl.h"
#include "ir/graph.h"
#include "runtime/kernel.h"
#include "switchyard/status.h"

namespace switchyard::native {

using Shape = std::vector<int64_t>;
using Shapes = std::vector<Shape>;
using ShapeFn = std::function<Result<Shapes>(const std::vector<const TensorRef*>&)>;
using RunFn = std::function<Status(const KernelIO&)>;

// A Kernel from closures. Both must be thread-safe (they capture only immutable state).
class FnKernel final : public Kernel {
 public:
  FnKernel(ShapeFn shapes, RunFn run) : shapes_(std::move(shapes)), run_(std::move(run)) {}
  Result<Shapes> OutputShapes(const std::vector<const TensorRef*>& in) const override {
    return shapes_(in);
  }
  Status Run(const KernelIO& io) const override { return run_(io); }

 private:
  const ShapeFn shapes_;
  const RunFn run_;
};

inline Result<std::unique_ptr<Kernel>> MakeKernel(ShapeFn s, RunFn r) {
  return std::unique_ptr<Kernel>(std::make_unique<FnKernel>(std::move(s), std::move(r)));
}

// Calls f(begin, end) over [0, n) split into chunks across `threads` OpenMP threads.
// `grain` is the smallest chunk worth a thread (avoids waking threads for tiny loops).
// The team is always `threads` strong, even when there are fewer chunks (those threads
// idle): GNU libgomp ends the surplus threads of its pool whenever a parallel region asks
// for fewer threads than the one before, and the next larger region creates them anew.
// A team sized by the chunk count did that between every two steps of different sizes:
// alternating regions of 4 and 2 threads cost 0.46 ms each (200 new threads in 200
// regions) against 0.03 ms at a constant 4, and BERT-base b1 at threads=16 on a 16-core
// Xeon ran slower (164 ms) than at threads=4 (92 ms).
template <typename F>
void ParallelFor(int64_t n, int threads, int64_t grain, F&& f) {
  if (n <= 0) return;
  int64_t chunks = grain > 0 ? n / grain : n;
  if (chunks > threads) chunks = threads;
#if defined(__SANITIZE_THREAD__)
  // TSan builds (scripts/sanitize.sh tsan): libgomp is not instrumented, so a team's hand-offs
  // look like races; that run checks our own std::threads and leaves OpenMP regions out.
  chunks = 1;
#endif
#ifdef _OPENMP
  if (chunks > 1) {
#pragma omp parallel num_threads(threads)
    {
      const int64_t team = omp_get_num_threads();
      for (int64_t c = omp_get_thread_num(); c < chunks; c += team) f(n * c / chunks, n * (c + 1) / chunks);
    }
    return;
  }
#endif
  f(0, n);
}

// f32 -> bf16 (round to nearest even; NaN stays NaN; denormal inputs become signed zero,
// as vcvtneps2bf16 does) of n elements over `threads` threads; AVX512_BF16 where the CPU
// has it. convert.cc.
void ConvertToBf16(const float* src, uint16_t* dst, int64_t n, int threads);
// The same conversion of `images` plain [C, pixels] f32 images into nhwc [pixels, C] bf16
// ones, in one pass (the input Cast of a precision=bf16 engine whose reader is an nhwc
// convolution), for 1 <= c <= kMaxNhwcCastChannels. convert.cc.
constexpr int64_t kMaxNhwcCastChannels = 4;
void ConvertToBf16Nhwc(const float* src, uint16_t* dst, int64_t images, int64_t c, int64_t pixels, int threads);
// bf16 -> f32 (exact) of n elements over `threads` threads. convert.cc.
void ConvertFromBf16(const uint16_t* src, float* dst, int64_t n, int threads);

// x * sigmoid(x) in place over `bytes` of fp32 (or bf16, rounded to nearest even) on
// `threads` threads: the SiLU that onednn/conv.cc applies after its primitive. AVX-512
// where the CPU has it (AVX512_BF16 for bf16; fp32 within 3e-7 relative), else the
// elementwise ops' SiLU.
// silu.cc.
void SiluInPlace(void* data, bool bf16, size_t bytes, int threads);
// True when SiluInPlace runs vectorized on this CPU for that type.
bool SiluInPlaceIsVectorized(bool bf16);
// SiluInPlace's fp32 SiLU over n floats on the calling thread.
void SiluF32(float* d, int64_t n);
// The same over `rows` rows of c floats, adding each result to acc[j] for its channel j
// (row by row, as AddRows sums: the same bits as SiluF32 then AddRows).
void SiluRowsAddTo(float* d, int64_t rows, int64_t c, float* acc);
// SiluInPlace's work per thread at least (elements): the SiLU costs about 0.26 ns per
// value on one AVX-512 core, so 8K values (2 us) pay for a second thread.
constexpr int64_t kSiluGrain = int64_t{1} << 13;

// GlobalAveragePool of an nhwc [n, C, H, W] tensor (`pixels` = H * W rows of c values per
// image): y[b * c + j] = the mean of channel j of image b, summed in float (bf16 rows as
// uint16_t bit patterns). pool.cc.
void ChannelMeansNhwc(const float* x, int64_t n, int64_t c, int64_t pixels, float* y, int threads);
void ChannelMeansNhwc(const uint16_t* x, int64_t n, int64_t c, int64_t pixels, float* y, int threads);
// The SiLU of x in place (SiluF32) and the channel means of the result, in one pass: each
// result is added to its channel's sum as it is stored (SiluRowsAddTo; a convolution's
// SiLU followed by the GlobalAveragePool that fuse.conv_pool folded into it). pool.cc.
void SiluChannelMeansNhwc(float* x, int64_t n, int64_t c, int64_t pixels, float* y, int threads);

// Numpy broadcast of shapes; error (naming the node) when incompatible.
Result<Shape> BroadcastShape(const Node& node, const std::vector<Shape>& shapes);

// A broadcast of several inputs to `out`, with adjacent dims merged where every input
// agrees on broadcasting them. strides[i][d] is 0 along broadcast dims.
struct BroadcastPlan {
  Shape out;                          // collapsed output dims (at least one)
  std::vector<Shape> strides;         // per input, per collapsed dim
  int64_t numel = 1;
};
BroadcastPlan MakeBroadcastPlan(const Shape& out, const std::vector<Shape>& inputs);

// Calls f(offsets_of_each_input, out_offset, inner_count, inner_strides) for each run of
// the innermost collapsed dim, rows [row_begin, row_end) of the outer dims.
template <typename F>
void ForEachRow(const BroadcastPlan& p, int64_t row_begin, int64_t row_end, F&& f) {
  const size_t rank = p.out.size(), n_in = p.strides.size();
  const int64_t inner = p.out[rank - 1];
  std::vector<int64_t> idx(rank, 0), off(n_in, 0), inner_stride(n_in);
  for (size_t i = 0; i < n_in; ++i) inner_stride[i] = p.strides[i][rank - 1];
  // Decompose row_begin into the outer multi-index.
  int64_t r = row_begin;
  for (size_t d = rank - 1; d-- > 0;) {
    idx[d] = r % p.out[d];
    r /= p.out[d];
  }
  for (size_t i = 0; i < n_in; ++i) {
    off[i] = 0;
    for (size_t d = 0; d + 1 < rank; ++d) off[i] += idx[d] * p.strides[i][d];
  }
  for (int64_t row = row_begin; row < row_end; ++row) {
    f(off.data(), row * inner, inner, inner_stride.data());
    for (size_t d = rank - 1; d-- > 0;) {  // advance the outer index
      ++idx[d];
      for (size_t i = 0; i < n_in; ++i) off[i] += p.strides[i][d];
      if (idx[d] < p.out[d]) break;
      for (size_t i = 0; i < n_in; ++i) off[i] -= idx[d] * p.strides[i][d];
      idx[d] = 0;
    }
  }
}

// Strides of `s` broadcast against `full` (0 along broadcast dims), aligned right.
Shape BroadcastStrides(const Shape& s, const Shape& full);
// Offsets of each entry of `full_batch` (row-major) into a tensor whose batch dims `own`
// broadcast to it and whose matrices hold `mat` elements each.
std::vector<int64_t> BatchOffsets(const Shape& own, const Shape& full_batch, int64_t mat);

// Values of an integer tensor (int64 or int32) handed to OutputShapes/Run.
std::vector<int64_t> ReadInts(const TensorRef& t);
// Element count of a shape.
inline int64_t NumElements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// A node's effective op version: its own, else the newest schema's for the graph's opset.
int NodeVersion(const Node& n, const KernelBuildContext& ctx);

// At least n floats of a kernel's scratch buffer (a thread_local kept between calls),
// grown but never shrunk: resize() to a smaller size and back zero-fills the regrown part,
// which cost ResNet-50 b8's Winograd layers a 14 MB memset per run where their sizes
// alternate. The contents are not initialised.
template <typename T>
inline T* ScratchOf(std::vector<T>& buf, size_t n) {
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}

// Shape of input i as the kernel saw it at build time (may hold -1).
bool IsFloat32(DataType t);
// True when every present input of the node has dtype float32 and so have the outputs.
bool AllFloat(const Node&, const KernelBuildContext& ctx);

// Registers a native impl with variant "" and a Prepare that stores nothing.
void RegisterNative(CpuImplRegistry& reg, const std::string& domain, const std::string& op,
                    std::function<bool(const Node&, const KernelBuildContext&)> supports,
                    std::function<Result<std::unique_ptr<Kernel>>(const StepView&)> create,
                    std::function<Status(const Node&, const KernelBuildContext&, StepSpec&)>
                        prepare = nullptr);

}  // namespace switchyard::native
