// Own CUDA reduction kernels (see reduce.h): a warp (rows <= 1024) or a block per row for
// reductions over trailing contiguous dims, and one thread per output with a strided walk
// over the reduced index space otherwise (coalesced when the innermost dim is kept).
#include "backends/cuda/kernels/reduce.h"
#include "backends/cuda/kernels/nk_common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

namespace switchyard::cuda::nk {
namespace {


// Calls f(x[i]) for this thread's elements of a row (thread tid of nthr); with `vec` (n a
// multiple of the vector width, row 16-byte aligned) through 16-byte loads.
template <typename T, typename F>
__device__ __forceinline__ void VisitRow(const T* xr, int64_t n, int tid, int nthr, bool vec, F&& f) {
  constexpr int kV = 16 / sizeof(T);
  if (vec) {
    const uint4* x4 = reinterpret_cast<const uint4*>(xr);
    for (int64_t k = tid; k < n / kV; k += nthr) {
      const uint4 u = x4[k];
      const T* e = reinterpret_cast<const T*>(&u);
#pragma unroll
      for (int v = 0; v < kV; ++v) f(Ld(e, v));
    }
  } else {
    for (int64_t i = tid; i < n; i += nthr) f(Ld(xr, i));
  }
}

// Per-op init, element map, combine and finish (count = reduced element count).
template <ReduceOp kOp> struct R;
template <> struct R<ReduceOp::kSum> {
  static __device__ float Init() { return 0.f; }
  static __device__ float Map(float v) { return v; }
  static __device__ float Comb(float a, float b) { return a + b; }
  static __device__ float Fin(float a, int64_t) { return a; }
};
template <> struct R<ReduceOp::kMean> : R<ReduceOp::kSum> {
  static __device__ float Fin(float a, int64_t n) { return n ? a / static_cast<float>(n) : NAN; }
};
template <> struct R<ReduceOp::kMax> {
  static __device__ float Init() { return -INFINITY; }
  static __device__ float Map(float v) { return v; }
  static __device__ float Comb(float a, float b) { return fmaxf(a, b); }
  static __device__ float Fin(float a, int64_t) { return a; }
};
template <> struct R<ReduceOp::kMin> {
  static __device__ float Init() { return INFINITY; }
  static __device__ float Map(float v) { return v; }
  static __device__ float Comb(float a, float b) { return fminf(a, b); }
  static __device__ float Fin(float a, int64_t) { return a; }
};
template <> struct R<ReduceOp::kProd> {
  static __device__ float Init() { return 1.f; }
  static __device__ float Map(float v) { return v; }
  static __device__ float Comb(float a, float b) { return a * b; }
  static __device__ float Fin(float a, int64_t) { return a; }
};
template <> struct R<ReduceOp::kL1> : R<ReduceOp::kSum> {
  static __device__ float Map(float v) { return fabsf(v); }
};
template <> struct R<ReduceOp::kSumSquare> : R<ReduceOp::kSum> {
  static __device__ float Map(float v) { return v * v; }
};
template <> struct R<ReduceOp::kL2> : R<ReduceOp::kSumSquare> {
  static __device__ float Fin(float a, int64_t) { return sqrtf(a); }
};
template <> struct R<ReduceOp::kLogSum> : R<ReduceOp::kSum> {
  static __device__ float Fin(float a, int64_t) { return logf(a); }
};

template <ReduceOp kOp>
__device__ __forceinline__ float WarpComb(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = R<kOp>::Comb(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

constexpr int kWarpRowsPerBlock = 8;
constexpr int kRowBlock = 512;
constexpr int64_t kWarpRowMax = 1024;

template <typename T, ReduceOp kOp, bool kWarp>
__global__ void ReduceRowsK(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n,
                            bool vec) {
  const int64_t row = kWarp ? static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.x / 32
                            : static_cast<int64_t>(blockIdx.x);
  if (row >= rows) return;
  const int tid = kWarp ? threadIdx.x % 32 : threadIdx.x;
  const int nthr = kWarp ? 32 : kRowBlock;
  const T* xr = x + row * n;
  float acc = R<kOp>::Init();
  VisitRow(xr, n, tid, nthr, vec, [&](float v) { acc = R<kOp>::Comb(acc, R<kOp>::Map(v)); });
  acc = WarpComb<kOp>(acc);
  if (!kWarp) {
    __shared__ float part[kRowBlock / 32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) part[warp] = acc;
    __syncthreads();
    acc = lane < kRowBlock / 32 ? part[lane] : R<kOp>::Init();
    acc = WarpComb<kOp>(acc);
  }
  if (tid == 0) y[row] = Cv<T>(R<kOp>::Fin(acc, n));
}

// Merged geometry for the strided kernel: kept dims (output order) and reduced dims, each
// with their input strides.
struct Geom {
  int nk = 0, nr = 0;
  int64_t kdim[kMaxReduceRank], kstride[kMaxReduceRank];
  int64_t rdim[kMaxReduceRank], rstride[kMaxReduceRank];
  int64_t out_n = 1, red_n = 1;
};

template <typename T, ReduceOp kOp>
__global__ void ReduceStridedK(const T* __restrict__ x, T* __restrict__ y, Geom g) {
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < g.out_n;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t base = 0, rem = o;
    for (int d = g.nk - 1; d >= 0; --d) {
      base += (rem % g.kdim[d]) * g.kstride[d];
      rem /= g.kdim[d];
    }
    float acc = R<kOp>::Init();
    // Odometer over the reduced dims (innermost fastest).
    int64_t idx[kMaxReduceRank] = {};
    int64_t off = base;
    for (int64_t r = 0; r < g.red_n; ++r) {
      acc = R<kOp>::Comb(acc, R<kOp>::Map(Ld(x, off)));
      for (int d = g.nr - 1; d >= 0; --d) {
        off += g.rstride[d];
        if (++idx[d] < g.rdim[d]) break;
        off -= idx[d] * g.rstride[d];
        idx[d] = 0;
      }
    }
    y[o] = Cv<T>(R<kOp>::Fin(acc, g.red_n));
  }
}

unsigned GridFor(int64_t work, int block) {
  int64_t g = (work + block - 1) / block;
  if (g > 65535LL * 32) g = 65535LL * 32;
  return static_cast<unsigned>(g < 1 ? 1 : g);
}

template <typename T, ReduceOp kOp>
void Rows(const void* x, void* y, int64_t rows, int64_t n, cudaStream_t s) {
  const T* px = static_cast<const T*>(x);
  T* py = static_cast<T*>(y);
  constexpr int kV = 16 / sizeof(T);
  const bool vec = n % kV == 0 && (reinterpret_cast<uintptr_t>(x) & 15u) == 0;
  if (n <= kWarpRowMax) {
    const unsigned grid = static_cast<unsigned>((rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock);
    ReduceRowsK<T, kOp, true><<<grid, 32 * kWarpRowsPerBlock, 0, s>>>(px, py, rows, n, vec);
  } else {
    ReduceRowsK<T, kOp, false><<<static_cast<unsigned>(rows), kRowBlock, 0, s>>>(px, py, rows, n, vec);
  }
}

template <typename T, ReduceOp kOp>
void Strided(const void* x, void* y, const Geom& g, cudaStream_t s) {
  ReduceStridedK<T, kOp><<<GridFor(g.out_n, 256), 256, 0, s>>>(static_cast<const T*>(x),
                                                                 static_cast<T*>(y), g);
}

template <typename T>
void RowsT(ReduceOp op, const void* x, void* y, int64_t rows, int64_t n, cudaStream_t s) {
  switch (op) {
    case ReduceOp::kSum: Rows<T, ReduceOp::kSum>(x, y, rows, n, s); break;
    case ReduceOp::kMean: Rows<T, ReduceOp::kMean>(x, y, rows, n, s); break;
    case ReduceOp::kMax: Rows<T, ReduceOp::kMax>(x, y, rows, n, s); break;
    case ReduceOp::kMin: Rows<T, ReduceOp::kMin>(x, y, rows, n, s); break;
    case ReduceOp::kProd: Rows<T, ReduceOp::kProd>(x, y, rows, n, s); break;
    case ReduceOp::kL1: Rows<T, ReduceOp::kL1>(x, y, rows, n, s); break;
    case ReduceOp::kL2: Rows<T, ReduceOp::kL2>(x, y, rows, n, s); break;
    case ReduceOp::kSumSquare: Rows<T, ReduceOp::kSumSquare>(x, y, rows, n, s); break;
    case ReduceOp::kLogSum: Rows<T, ReduceOp::kLogSum>(x, y, rows, n, s); break;
  }
}

template <typename T>
void StridedT(ReduceOp op, const void* x, void* y, const Geom& g, cudaStream_t s) {
  switch (op) {
    case ReduceOp::kSum: Strided<T, ReduceOp::kSum>(x, y, g, s); break;
    case ReduceOp::kMean: Strided<T, ReduceOp::kMean>(x, y, g, s); break;
    case ReduceOp::kMax: Strided<T, ReduceOp::kMax>(x, y, g, s); break;
    case ReduceOp::kMin: Strided<T, ReduceOp::kMin>(x, y, g, s); break;
    case ReduceOp::kProd: Strided<T, ReduceOp::kProd>(x, y, g, s); break;
    case ReduceOp::kL1: Strided<T, ReduceOp::kL1>(x, y, g, s); break;
    case ReduceOp::kL2: Strided<T, ReduceOp::kL2>(x, y, g, s); break;
    case ReduceOp::kSumSquare: Strided<T, ReduceOp::kSumSquare>(x, y, g, s); break;
    case ReduceOp::kLogSum: Strided<T, ReduceOp::kLogSum>(x, y, g, s); break;
  }
}

}  // namespace

void LaunchReduceRows(KDType t, ReduceOp op, const void* x, void* y, int64_t rows, int64_t n,
                      cudaStream_t stream) {
  if (rows == 0 || n == 0) return;
  switch (t) {
    case KDType::kF32: RowsT<float>(op, x, y, rows, n, stream); break;
    case KDType::kF16: RowsT<__half>(op, x, y, rows, n, stream); break;
    case KDType::kBF16: RowsT<__nv_bfloat16>(op, x, y, rows, n, stream); break;
  }
}

void LaunchReduce(KDType t, ReduceOp op, const void* x, void* y, const int64_t* dims,
                  const bool* reduced, int rank, cudaStream_t stream) {
  // Merge adjacent dims of the same kind, dropping size-1 dims (they change nothing).
  int64_t mdim[kMaxReduceRank];
  bool mred[kMaxReduceRank];
  int m = 0;
  int64_t in_n = 1;
  for (int d = 0; d < rank; ++d) {
    in_n *= dims[d];
    if (dims[d] == 1) continue;
    if (m > 0 && mred[m - 1] == reduced[d]) {
      mdim[m - 1] *= dims[d];
    } else {
      mdim[m] = dims[d];
      mred[m] = reduced[d];
      ++m;
    }
  }
  if (in_n == 0) return;
  Geom g;
  int64_t stride = 1;
  // Strides from the innermost dim; fill kept/reduced lists in reverse, then flip.
  int64_t kd[kMaxReduceRank], ks[kMaxReduceRank], rd[kMaxReduceRank], rs[kMaxReduceRank];
  for (int d = m - 1; d >= 0; --d) {
    if (mred[d]) {
      rd[g.nr] = mdim[d];
      rs[g.nr++] = stride;
      g.red_n *= mdim[d];
    } else {
      kd[g.nk] = mdim[d];
      ks[g.nk++] = stride;
      g.out_n *= mdim[d];
    }
    stride *= mdim[d];
  }
  for (int i = 0; i < g.nk; ++i) {
    g.kdim[i] = kd[g.nk - 1 - i];
    g.kstride[i] = ks[g.nk - 1 - i];
  }
  for (int i = 0; i < g.nr; ++i) {
    g.rdim[i] = rd[g.nr - 1 - i];
    g.rstride[i] = rs[g.nr - 1 - i];
  }
  // Rows: nothing reduced (a copy through the row kernel with n = 1), or one trailing
  // reduced block.
  const bool trailing = g.nr == 0 || (g.nr == 1 && m > 0 && mred[m - 1]);
  if (trailing) {
    LaunchReduceRows(t, op, x, y, g.out_n, g.red_n, stream);
    return;
  }
  switch (t) {
    case KDType::kF32: StridedT<float>(op, x, y, g, stream); break;
    case KDType::kF16: StridedT<__half>(op, x, y, g, stream); break;
    case KDType::kBF16: StridedT<__nv_bfloat16>(op, x, y, g, stream); break;
  }
}

}  // namespace switchyard::cuda::nk
