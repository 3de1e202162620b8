// Own CUDA kernels for Softmax/LogSoftmax, row normalisation and BatchNormalization
// (see norm.h). Rows of up to 1024 elements get one warp each; longer rows one block.
// Math is in float whatever the element type.
#include "backends/cuda/kernels/norm.h"
#include "backends/cuda/kernels/nk_common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

namespace switchyard::cuda::nk {
namespace {

constexpr float kNegInf = -INFINITY;


// Calls f(i, x[i]) for this thread's elements of a row (thread tid of nthr); with `vec`
// (n a multiple of the vector width, row 16-byte aligned) through 16-byte loads.
template <typename T, typename F>
__device__ __forceinline__ void VisitRow(const T* xr, int64_t n, int tid, int nthr, bool vec, F&& f) {
  constexpr int kV = 16 / sizeof(T);
  if (vec) {
    const uint4* x4 = reinterpret_cast<const uint4*>(xr);
    for (int64_t k = tid; k < n / kV; k += nthr) {
      const uint4 u = x4[k];
      const T* e = reinterpret_cast<const T*>(&u);
#pragma unroll
      for (int v = 0; v < kV; ++v) f(k * kV + v, Ld(e, v));
    }
  } else {
    for (int64_t i = tid; i < n; i += nthr) f(i, Ld(xr, i));
  }
}

// y[i] = g(i, x[i]) over this thread's elements of a row (vectorised like VisitRow).
template <typename T, typename G>
__device__ __forceinline__ void MapRow(const T* xr, T* yr, int64_t n, int tid, int nthr, bool vec, G&& g) {
  constexpr int kV = 16 / sizeof(T);
  if (vec) {
    const uint4* x4 = reinterpret_cast<const uint4*>(xr);
    uint4* y4 = reinterpret_cast<uint4*>(yr);
    for (int64_t k = tid; k < n / kV; k += nthr) {
      const uint4 u = x4[k];
      const T* e = reinterpret_cast<const T*>(&u);
      uint4 w;
      T* o = reinterpret_cast<T*>(&w);
#pragma unroll
      for (int v = 0; v < kV; ++v) o[v] = Cv<T>(g(k * kV + v, Ld(e, v)));
      y4[k] = w;
    }
  } else {
    for (int64_t i = tid; i < n; i += nthr) yr[i] = Cv<T>(g(i, Ld(xr, i)));
  }
}

// Whether rows of n elements at x and y can take 16-byte accesses.
template <typename T>
bool CanVectorize(const void* x, const void* y, int64_t n) {
  constexpr int kV = 16 / sizeof(T);
  return n % kV == 0 && (reinterpret_cast<uintptr_t>(x) & 15u) == 0 &&
         (reinterpret_cast<uintptr_t>(y) & 15u) == 0;
}

// Online softmax state: running max m and sum of exp(x - m).
struct MaxSum {
  float m, s;
};
__device__ __forceinline__ MaxSum Merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == kNegInf) return {kNegInf, 0.f};
  return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}
__device__ __forceinline__ MaxSum Push(MaxSum a, float v) {
  if (v > a.m) return {v, a.s * __expf(a.m - v) + 1.f};  // exp(-inf) = 0 on the first value
  if (v == kNegInf) return a;                            // contributes nothing
  return {a.m, a.s + __expf(v - a.m)};
}
__device__ __forceinline__ MaxSum WarpMerge(MaxSum v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    MaxSum u{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
    v = Merge(v, u);
  }
  return v;
}
__device__ __forceinline__ float2 WarpSum2(float2 v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
    v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
  }
  return v;
}

// Block-wide merge (block of kThreads, a multiple of 32); every thread gets the result.
template <int kThreads>
__device__ MaxSum BlockMerge(MaxSum v) {
  __shared__ MaxSum part[kThreads / 32];
  v = WarpMerge(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < kThreads / 32 ? part[lane] : MaxSum{kNegInf, 0.f};
  v = WarpMerge(v);
  __syncthreads();  // part may be reused by the caller's next reduction
  return v;
}
template <int kThreads>
__device__ float2 BlockSum2(float2 v) {
  __shared__ float2 part[kThreads / 32];
  v = WarpSum2(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < kThreads / 32 ? part[lane] : make_float2(0.f, 0.f);
  v = WarpSum2(v);
  __syncthreads();
  return v;
}

constexpr int kWarpRowsPerBlock = 8;   // warp-per-row kernels: 256 threads
constexpr int kRowBlock = 512;         // block-per-row kernels
constexpr int64_t kWarpRowMax = 1024;  // rows up to this length get a warp

// ---- Softmax ------------------------------------------------------------------------

// kWarp: one warp per row (kWarpRowsPerBlock rows per block); else one block per row.
template <typename T, bool kWarp>
__global__ void SoftmaxRows(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n,
                            bool log, bool vec) {
  const int64_t row = kWarp ? static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.x / 32
                            : static_cast<int64_t>(blockIdx.x);
  if (row >= rows) return;  // whole warps (kWarp) or whole blocks leave together
  const int tid = kWarp ? threadIdx.x % 32 : threadIdx.x;
  const int nthr = kWarp ? 32 : kRowBlock;
  const T* xr = x + row * n;
  T* yr = y + row * n;
  MaxSum st{kNegInf, 0.f};
  VisitRow(xr, n, tid, nthr, vec, [&](int64_t, float v) { st = Push(st, v); });
  st = kWarp ? WarpMerge(st) : BlockMerge<kRowBlock>(st);
  if (log) {
    const float shift = st.m + __logf(st.s);
    MapRow(xr, yr, n, tid, nthr, vec, [&](int64_t, float v) { return v - shift; });
  } else {
    const float inv = 1.f / st.s, m = st.m;
    MapRow(xr, yr, n, tid, nthr, vec, [&](int64_t, float v) { return __expf(v - m) * inv; });
  }
}

// Axis not innermost: one thread per (outer, inner) column, coalesced across inner.
template <typename T>
__global__ void SoftmaxColumns(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t n,
                               int64_t inner, bool log) {
  const int64_t total = outer * inner;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < total;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = c / inner, i = c % inner;
    const T* xc = x + o * n * inner + i;
    T* yc = y + o * n * inner + i;
    MaxSum st{kNegInf, 0.f};
    for (int64_t k = 0; k < n; ++k) st = Push(st, Ld(xc, k * inner));
    if (log) {
      const float shift = st.m + __logf(st.s);
      for (int64_t k = 0; k < n; ++k) yc[k * inner] = Cv<T>(Ld(xc, k * inner) - shift);
    } else {
      const float inv = 1.f / st.s;
      for (int64_t k = 0; k < n; ++k) yc[k * inner] = Cv<T>(__expf(Ld(xc, k * inner) - st.m) * inv);
    }
  }
}

unsigned GridFor(int64_t work, int block) {
  int64_t g = (work + block - 1) / block;
  if (g > 65535LL * 32) g = 65535LL * 32;  // grid-stride loops cover the rest
  return static_cast<unsigned>(g < 1 ? 1 : g);
}

template <typename T>
void Softmax(const void* x, void* y, int64_t outer, int64_t n, int64_t inner, bool log,
             cudaStream_t s) {
  const T* px = static_cast<const T*>(x);
  T* py = static_cast<T*>(y);
  if (inner == 1) {
    const bool vec = CanVectorize<T>(x, y, n);
    if (n <= kWarpRowMax) {
      const unsigned grid = static_cast<unsigned>((outer + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock);
      SoftmaxRows<T, true><<<grid, 32 * kWarpRowsPerBlock, 0, s>>>(px, py, outer, n, log, vec);
    } else {
      SoftmaxRows<T, false><<<static_cast<unsigned>(outer), kRowBlock, 0, s>>>(px, py, outer, n, log, vec);
    }
  } else {
    SoftmaxColumns<T><<<GridFor(outer * inner, 256), 256, 0, s>>>(px, py, outer, n, inner, log);
  }
}

// ---- Row normalisation ----------------------------------------------------------------

// Mean and variance from sums of (x - k) and (x - k)^2 with k = the row's first element
// (shifted data: no catastrophic cancellation when |mean| >> std).
template <typename T, bool kWarp>
__global__ void RowNorm(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n,
                        RowAffine a, float eps, bool vec) {
  const int64_t row = kWarp ? static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.x / 32
                            : static_cast<int64_t>(blockIdx.x);
  if (row >= rows) return;
  const int tid = kWarp ? threadIdx.x % 32 : threadIdx.x;
  const int nthr = kWarp ? 32 : kRowBlock;
  const T* xr = x + row * n;
  T* yr = y + row * n;
  const float k = Ld(xr, 0);
  float2 acc = make_float2(0.f, 0.f);
  VisitRow(xr, n, tid, nthr, vec, [&](int64_t, float v) {
    const float d = v - k;
    acc.x += d;
    acc.y += d * d;
  });
  acc = kWarp ? WarpSum2(acc) : BlockSum2<kRowBlock>(acc);
  const float inv_n = 1.f / static_cast<float>(n);
  const float dm = acc.x * inv_n;
  const float var = fmaxf(acc.y * inv_n - dm * dm, 0.f);
  const float mean = k + dm;
  const float rstd = rsqrtf(var + eps);
  const T* g = static_cast<const T*>(a.gamma);
  const T* b = static_cast<const T*>(a.beta);
  const int64_t ch = row % a.c;
  const T* gr = g ? g + ch * a.g_rs : nullptr;
  const T* br = b ? b + ch * a.b_rs : nullptr;
  const int64_t g_cs = a.g_cs, b_cs = a.b_cs;
  MapRow(xr, yr, n, tid, nthr, vec, [&](int64_t i, float x_i) {
    float v = (x_i - mean) * rstd;
    if (gr) v *= Ld(gr, i * g_cs);
    if (br) v += Ld(br, i * b_cs);
    return v;
  });
}

template <typename T>
void RowNormT(const void* x, void* y, int64_t rows, int64_t n, const RowAffine& a, float eps,
              cudaStream_t s) {
  const T* px = static_cast<const T*>(x);
  T* py = static_cast<T*>(y);
  const bool vec = CanVectorize<T>(x, y, n);
  if (n <= kWarpRowMax) {
    const unsigned grid = static_cast<unsigned>((rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock);
    RowNorm<T, true><<<grid, 32 * kWarpRowsPerBlock, 0, s>>>(px, py, rows, n, a, eps, vec);
  } else {
    RowNorm<T, false><<<static_cast<unsigned>(rows), kRowBlock, 0, s>>>(px, py, rows, n, a, eps, vec);
  }
}

// ---- BatchNormalization -----------------------------------------------------------------

template <typename T>
__global__ void BatchNormK(const T* __restrict__ x, T* __restrict__ y, int64_t total, int64_t c,
                           int64_t spatial, const T* __restrict__ scale, const T* __restrict__ bias,
                           const T* __restrict__ mean, const T* __restrict__ var, float eps) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ch = (i / spatial) % c;
    const float a = Ld(scale, ch) * rsqrtf(Ld(var, ch) + eps);
    y[i] = Cv<T>((Ld(x, i) - Ld(mean, ch)) * a + Ld(bias, ch));
  }
}

template <typename T>
void BatchNormT(const void* x, void* y, int64_t n, int64_t c, int64_t spatial, const void* scale,
                const void* bias, const void* mean, const void* var, float eps, cudaStream_t s) {
  const int64_t total = n * c * spatial;
  BatchNormK<T><<<GridFor(total, 256), 256, 0, s>>>(
      static_cast<const T*>(x), static_cast<T*>(y), total, c, spatial, static_cast<const T*>(scale),
      static_cast<const T*>(bias), static_cast<const T*>(mean), static_cast<const T*>(var), eps);
}

}  // namespace

void LaunchSoftmax(KDType t, const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
                   bool log, cudaStream_t stream) {
  if (outer * n * inner == 0) return;
  switch (t) {
    case KDType::kF32: Softmax<float>(x, y, outer, n, inner, log, stream); break;
    case KDType::kF16: Softmax<__half>(x, y, outer, n, inner, log, stream); break;
    case KDType::kBF16: Softmax<__nv_bfloat16>(x, y, outer, n, inner, log, stream); break;
  }
}

void LaunchRowNorm(KDType t, const void* x, void* y, int64_t rows, int64_t n, const RowAffine& a,
                   float eps, cudaStream_t stream) {
  if (rows * n == 0) return;
  switch (t) {
    case KDType::kF32: RowNormT<float>(x, y, rows, n, a, eps, stream); break;
    case KDType::kF16: RowNormT<__half>(x, y, rows, n, a, eps, stream); break;
    case KDType::kBF16: RowNormT<__nv_bfloat16>(x, y, rows, n, a, eps, stream); break;
  }
}

void LaunchBatchNorm(KDType t, const void* x, void* y, int64_t n, int64_t c, int64_t spatial,
                     const void* scale, const void* bias, const void* mean, const void* var,
                     float eps, cudaStream_t stream) {
  if (n * c * spatial == 0) return;
  switch (t) {
    case KDType::kF32: BatchNormT<float>(x, y, n, c, spatial, scale, bias, mean, var, eps, stream); break;
    case KDType::kF16: BatchNormT<__half>(x, y, n, c, spatial, scale, bias, mean, var, eps, stream); break;
    case KDType::kBF16:
      BatchNormT<__nv_bfloat16>(x, y, n, c, spatial, scale, bias, mean, var, eps, stream);
      break;
  }
}

}  // namespace switchyard::cuda::nk
