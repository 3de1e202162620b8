// Own CUDA pooling kernels (see pool.h). Windowed pools: one thread per output element,
// consecutive threads on consecutive output columns (coalesced stores; loads overlap in
// L1). Global pools reuse the row reduction of reduce.cu.
#include "backends/cuda/kernels/pool.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "backends/cuda/kernels/reduce.h"

namespace switchyard::cuda::nk {
namespace {

template <typename T> __device__ __forceinline__ float Ld(const T* p, int64_t i);
template <> __device__ __forceinline__ float Ld<float>(const float* p, int64_t i) { return p[i]; }
template <> __device__ __forceinline__ float Ld<__half>(const __half* p, int64_t i) {
  return __half2float(p[i]);
}
template <> __device__ __forceinline__ float Ld<__nv_bfloat16>(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}
template <typename T> __device__ __forceinline__ T Cv(float v);
template <> __device__ __forceinline__ float Cv<float>(float v) { return v; }
template <> __device__ __forceinline__ __half Cv<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 Cv<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

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

}  // namespace

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
