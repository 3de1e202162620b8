// Own CUDA pooling kernels (see pool.h). Windowed pools: one thread per output element,
// consecutive threads on consecutive output columns (coalesced stores; loads overlap in
// L1). Global pools reuse the row reduction of reduce.cu. Channels-last variants: threads
// over channels innermost (coalesced), 16-byte vectors of channels where possible.
#include "backends/cuda/kernels/pool.h"
#include "backends/cuda/kernels/nk_common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "backends/cuda/kernels/reduce.h"

namespace switchyard::cuda::nk {
namespace {


template <typename T, bool kMax>
__global__ void PoolK(const T* __restrict__ x, T* __restrict__ y, PoolGeom g) {
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t total = g.planes * out_plane;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < total;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t plane = o / out_plane;
    int64_t r = o % out_plane;
    const int64_t ow = r % g.out[2];
    r /= g.out[2];
    const int64_t oh = r % g.out[1];
    const int64_t od = r / g.out[1];
    const int64_t start[3] = {od * g.s[0] - g.pb[0], oh * g.s[1] - g.pb[1], ow * g.s[2] - g.pb[2]};
    const T* xp = x + plane * in_plane;
    float acc = kMax ? -INFINITY : 0.f;
    int64_t valid = 0;
    for (int64_t kd = 0; kd < g.k[0]; ++kd) {
      const int64_t id = start[0] + kd * g.d[0];
      if (id < 0 || id >= g.in[0]) continue;
      for (int64_t kh = 0; kh < g.k[1]; ++kh) {
        const int64_t ih = start[1] + kh * g.d[1];
        if (ih < 0 || ih >= g.in[1]) continue;
        const T* row = xp + (id * g.in[1] + ih) * g.in[2];
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          const int64_t iw = start[2] + kw * g.d[2];
          if (iw < 0 || iw >= g.in[2]) continue;
          const float v = Ld(row, iw);
          acc = kMax ? fmaxf(acc, v) : acc + v;
          ++valid;
        }
      }
    }
    if (!kMax) {
      int64_t div = valid;
      if (g.count_include_pad) {
        // Window positions inside input + pads (the spec's divisor with explicit pads).
        div = 1;
        for (int a = 0; a < 3; ++a) {
          int64_t cnt = 0;
          for (int64_t k = 0; k < g.k[a]; ++k) {
            const int64_t pos = start[a] + k * g.d[a];
            if (pos >= -g.pb[a] && pos < g.in[a] + g.pe[a]) ++cnt;
          }
          div *= cnt;
        }
      }
      acc = div > 0 ? acc / static_cast<float>(div) : 0.f;
    }
    y[o] = Cv<T>(acc);
  }
}

unsigned GridFor(int64_t work, int block) {
  int64_t g = (work + block - 1) / block;
  if (g > 65535LL * 32) g = 65535LL * 32;
  return static_cast<unsigned>(g < 1 ? 1 : g);
}

template <typename T>
void PoolT(bool max, const void* x, void* y, const PoolGeom& g, cudaStream_t s) {
  const int64_t total = g.planes * g.out[0] * g.out[1] * g.out[2];
  const T* px = static_cast<const T*>(x);
  T* py = static_cast<T*>(y);
  if (max) {
    PoolK<T, true><<<GridFor(total, 256), 256, 0, s>>>(px, py, g);
  } else {
    PoolK<T, false><<<GridFor(total, 256), 256, 0, s>>>(px, py, g);
  }
}

// ---- Channels-last ---------------------------------------------------------------------

// V consecutive elements: one 16-byte access when V > 1.
template <typename T, int V>
__device__ __forceinline__ void LoadV(const T* p, float* out) {
  if constexpr (V == 1) {
    out[0] = Ld(p, 0);
  } else {
    union {
      uint4 u;
      T v[V];
    } pk;
    pk.u = *reinterpret_cast<const uint4*>(p);
#pragma unroll
    for (int k = 0; k < V; ++k) out[k] = Ld(pk.v, k);
  }
}
template <typename T, int V>
__device__ __forceinline__ void StoreV(T* p, const float* in) {
  if constexpr (V == 1) {
    p[0] = Cv<T>(in[0]);
  } else {
    union {
      uint4 u;
      T v[V];
    } pk;
#pragma unroll
    for (int k = 0; k < V; ++k) pk.v[k] = Cv<T>(in[k]);
    *reinterpret_cast<uint4*>(p) = pk.u;
  }
}

template <typename T, bool kMax, int V>
__global__ void PoolNhwcK(const T* __restrict__ x, T* __restrict__ y, PoolGeom g, int64_t c) {
  const int64_t cv = c / V;
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t total = g.planes * out_plane * cv;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < total;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c0 = (o % cv) * V;
    int64_t r = o / cv;
    const int64_t ow = r % g.out[2];
    r /= g.out[2];
    const int64_t oh = r % g.out[1];
    r /= g.out[1];
    const int64_t od = r % g.out[0];
    const int64_t n = r / g.out[0];
    const int64_t start[3] = {od * g.s[0] - g.pb[0], oh * g.s[1] - g.pb[1], ow * g.s[2] - g.pb[2]};
    float acc[V];
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] = kMax ? -INFINITY : 0.f;
    int64_t valid = 0;
    for (int64_t kd = 0; kd < g.k[0]; ++kd) {
      const int64_t id = start[0] + kd * g.d[0];
      if (id < 0 || id >= g.in[0]) continue;
      for (int64_t kh = 0; kh < g.k[1]; ++kh) {
        const int64_t ih = start[1] + kh * g.d[1];
        if (ih < 0 || ih >= g.in[1]) continue;
        const int64_t row = ((n * g.in[0] + id) * g.in[1] + ih) * g.in[2];
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          const int64_t iw = start[2] + kw * g.d[2];
          if (iw < 0 || iw >= g.in[2]) continue;
          float v[V];
          LoadV<T, V>(x + (row + iw) * c + c0, v);
#pragma unroll
          for (int k = 0; k < V; ++k) acc[k] = kMax ? fmaxf(acc[k], v[k]) : acc[k] + v[k];
          ++valid;
        }
      }
    }
    if (!kMax) {
      int64_t div = valid;
      if (g.count_include_pad) {
        div = 1;
        for (int a = 0; a < 3; ++a) {
          int64_t cnt = 0;
          for (int64_t k = 0; k < g.k[a]; ++k) {
            const int64_t pos = start[a] + k * g.d[a];
            if (pos >= -g.pb[a] && pos < g.in[a] + g.pe[a]) ++cnt;
          }
          div *= cnt;
        }
      }
#pragma unroll
      for (int k = 0; k < V; ++k) acc[k] = div > 0 ? acc[k] / static_cast<float>(div) : 0.f;
    }
    StoreV<T, V>(y + (((n * g.out[0] + od) * g.out[1] + oh) * g.out[2] + ow) * c + c0, acc);
  }
}

template <typename T, bool kMax>
void PoolNhwcT(const void* x, void* y, const PoolGeom& g, int64_t c, cudaStream_t s) {
  constexpr int V = 16 / sizeof(T);
  const T* px = static_cast<const T*>(x);
  T* py = static_cast<T*>(y);
  const int64_t pixels = g.planes * g.out[0] * g.out[1] * g.out[2];
  const bool vec = c % V == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  if (vec) {
    PoolNhwcK<T, kMax, V><<<GridFor(pixels * (c / V), 256), 256, 0, s>>>(px, py, g, c);
  } else {
    PoolNhwcK<T, kMax, 1><<<GridFor(pixels * c, 256), 256, 0, s>>>(px, py, g, c);
  }
}

template <typename T>
void PoolNhwcT(bool max, const void* x, void* y, const PoolGeom& g, int64_t c, cudaStream_t s) {
  if (max) {
    PoolNhwcT<T, true>(x, y, g, c, s);
  } else {
    PoolNhwcT<T, false>(x, y, g, c, s);
  }
}

// Global pooling, channels-last: block (32, kRowsG) covers 32 consecutive channels of one
// image; threads stride over the spatial positions, then a shared-memory reduction.
constexpr int kRowsG = 16;

template <typename T, bool kMax>
__global__ void GlobalPoolNhwcK(const T* __restrict__ x, T* __restrict__ y, int64_t spatial, int64_t c) {
  __shared__ float part[kRowsG][33];
  const int64_t n = blockIdx.y;
  const int64_t ch = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  float acc = kMax ? -INFINITY : 0.f;
  if (ch < c) {
    const T* xp = x + n * spatial * c + ch;
    for (int64_t s = threadIdx.y; s < spatial; s += kRowsG) {
      const float v = Ld(xp, s * c);
      acc = kMax ? fmaxf(acc, v) : acc + v;
    }
  }
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && ch < c) {
    for (int r = 1; r < kRowsG; ++r) acc = kMax ? fmaxf(acc, part[r][threadIdx.x]) : acc + part[r][threadIdx.x];
    y[n * c + ch] = Cv<T>(kMax ? acc : acc / static_cast<float>(spatial));
  }
}

template <typename T>
void GlobalPoolNhwcT(bool max, const void* x, void* y, int64_t n, int64_t spatial, int64_t c, cudaStream_t s) {
  const dim3 block(32, kRowsG);
  const dim3 grid(static_cast<unsigned>((c + 31) / 32), static_cast<unsigned>(n));
  const T* px = static_cast<const T*>(x);
  T* py = static_cast<T*>(y);
  if (max) {
    GlobalPoolNhwcK<T, true><<<grid, block, 0, s>>>(px, py, spatial, c);
  } else {
    GlobalPoolNhwcK<T, false><<<grid, block, 0, s>>>(px, py, spatial, c);
  }
}

}  // namespace

void LaunchPoolNhwc(KDType t, bool max, const void* x, void* y, const PoolGeom& g, int64_t channels,
                    cudaStream_t stream) {
  if (g.planes * g.out[0] * g.out[1] * g.out[2] * channels == 0) return;
  switch (t) {
    case KDType::kF32: PoolNhwcT<float>(max, x, y, g, channels, stream); break;
    case KDType::kF16: PoolNhwcT<__half>(max, x, y, g, channels, stream); break;
    case KDType::kBF16: PoolNhwcT<__nv_bfloat16>(max, x, y, g, channels, stream); break;
  }
}

void LaunchGlobalPoolNhwc(KDType t, bool max, const void* x, void* y, int64_t n, int64_t spatial,
                          int64_t channels, cudaStream_t stream) {
  if (n * channels == 0) return;
  switch (t) {
    case KDType::kF32: GlobalPoolNhwcT<float>(max, x, y, n, spatial, channels, stream); break;
    case KDType::kF16: GlobalPoolNhwcT<__half>(max, x, y, n, spatial, channels, stream); break;
    case KDType::kBF16: GlobalPoolNhwcT<__nv_bfloat16>(max, x, y, n, spatial, channels, stream); break;
  }
}

void LaunchPool(KDType t, bool max, const void* x, void* y, const PoolGeom& g, cudaStream_t stream) {
  if (g.planes * g.out[0] * g.out[1] * g.out[2] == 0) return;
  switch (t) {
    case KDType::kF32: PoolT<float>(max, x, y, g, stream); break;
    case KDType::kF16: PoolT<__half>(max, x, y, g, stream); break;
    case KDType::kBF16: PoolT<__nv_bfloat16>(max, x, y, g, stream); break;
  }
}

void LaunchGlobalPool(KDType t, bool max, const void* x, void* y, int64_t planes, int64_t spatial,
                      cudaStream_t stream) {
  LaunchReduceRows(t, max ? ReduceOp::kMax : ReduceOp::kMean, x, y, planes, spatial, stream);
}

}  // namespace switchyard::cuda::nk
