// Epilogue kernel (epilogue.h): y = act(y + bias_scale * bias[c] + z_scale * z[bcast]).
// One pass, grid-stride; 16-byte vector loads/stores when y (and a full z) are aligned
// and the element count is a multiple of the vector width.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/kernels/epilogue.h"

namespace switchyard::cuda::kernels {
namespace {

template <typename T> __device__ __forceinline__ float ToF(T v);
template <> __device__ __forceinline__ float ToF<float>(float v) { return v; }
template <> __device__ __forceinline__ float ToF<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float ToF<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T FromF(float v);
template <> __device__ __forceinline__ float FromF<float>(float v) { return v; }
template <> __device__ __forceinline__ __half FromF<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 FromF<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ float Activate(EpiAct a, float x, float p0, float p1) {
  switch (a) {
    case EpiAct::kNone: return x;
    case EpiAct::kRelu: return x > 0.f ? x : 0.f;
    case EpiAct::kLeakyRelu: return x >= 0.f ? x : x * p0;
    case EpiAct::kClip: return fminf(fmaxf(x, p0), p1);
    case EpiAct::kSigmoid: return 1.f / (1.f + expf(-x));
    case EpiAct::kHardSigmoid: return fmaxf(0.f, fminf(1.f, p0 * x + p1));
    case EpiAct::kHardSwish: return x * fmaxf(0.f, fminf(1.f, x * (1.f / 6.f) + 0.5f));
    case EpiAct::kTanh: return tanhf(x);
    case EpiAct::kSiLU: return x / (1.f + expf(-x));
    case EpiAct::kGelu: return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case EpiAct::kGeluTanh: {
      const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.f + tanhf(u));
    }
  }
  return x;
}

// Offset of element i of y inside a broadcast z.
__device__ __forceinline__ int64_t ZOffset(const EpilogueParams& p, int64_t i) {
  int64_t off = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    const int64_t n = p.out_dims[d];
    off += (i % n) * p.z_strides[d];
    i /= n;
  }
  return off;
}

// ZMODE: 0 none, 1 full, 2 broadcast.
template <typename T, bool BIAS, int ZMODE>
__device__ __forceinline__ float Element(const EpilogueParams& p, int64_t i, float v) {
  if constexpr (BIAS) {
    const int64_t c = (i / p.bias_inner) % p.bias_channels;
    v += p.bias_scale * ToF<T>(static_cast<const T*>(p.bias)[c]);
  }
  if constexpr (ZMODE == 1) v += p.z_scale * ToF<T>(static_cast<const T*>(p.z)[i]);
  if constexpr (ZMODE == 2) v += p.z_scale * ToF<T>(static_cast<const T*>(p.z)[ZOffset(p, i)]);
  return Activate(p.act, v, p.p0, p.p1);
}


constexpr int kThreads = 256;

template <typename T, bool BIAS, int ZMODE>
__global__ void __launch_bounds__(kThreads) EpilogueScalar(const EpilogueParams p) {
  T* y = static_cast<T*>(p.y);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel; i += stride) {
    y[i] = FromF<T>(Element<T, BIAS, ZMODE>(p, i, ToF<T>(y[i])));
  }
}

// 16 bytes per thread and iteration: numel % V == 0, y (and a full z) 16-byte aligned.
template <typename T, bool BIAS, int ZMODE>
__global__ void __launch_bounds__(kThreads) EpilogueVec(const EpilogueParams p) {
  constexpr int V = 16 / sizeof(T);
  union Pack {
    uint4 u;
    T v[V];
  };
  uint4* y = static_cast<uint4*>(p.y);
  const uint4* z = static_cast<const uint4*>(p.z);
  const int64_t nvec = p.numel / V;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < nvec; j += stride) {
    Pack a;
    a.u = y[j];
    Pack b;
    if constexpr (ZMODE == 1) b.u = z[j];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const int64_t i = j * V + k;
      float v = ToF<T>(a.v[k]);
      if constexpr (ZMODE == 1) {
        v += p.z_scale * ToF<T>(b.v[k]);
        v = Element<T, BIAS, 0>(p, i, v);
      } else {
        v = Element<T, BIAS, ZMODE>(p, i, v);
      }
      a.v[k] = FromF<T>(v);
    }
    y[j] = a.u;
  }
}

int Blocks(int64_t work) {
  static int max_blocks = [] {
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0) {
      cudaGetLastError();
      sms = 132;
    }
    return sms * 8;
  }();
  const int64_t want = (work + kThreads - 1) / kThreads;
  return static_cast<int>(want < max_blocks ? (want < 1 ? 1 : want) : max_blocks);
}

template <typename T, bool BIAS, int ZMODE>
void Dispatch3(const EpilogueParams& p, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  const bool aligned = reinterpret_cast<uintptr_t>(p.y) % 16 == 0 &&
                       (ZMODE != 1 || reinterpret_cast<uintptr_t>(p.z) % 16 == 0) && p.numel % V == 0;
  if (aligned) {
    EpilogueVec<T, BIAS, ZMODE><<<Blocks(p.numel / V), kThreads, 0, stream>>>(p);
  } else {
    EpilogueScalar<T, BIAS, ZMODE><<<Blocks(p.numel), kThreads, 0, stream>>>(p);
  }
}

template <typename T, bool BIAS>
void Dispatch2(const EpilogueParams& p, cudaStream_t stream) {
  if (!p.z) return Dispatch3<T, BIAS, 0>(p, stream);
  if (p.z_full) return Dispatch3<T, BIAS, 1>(p, stream);
  Dispatch3<T, BIAS, 2>(p, stream);
}

template <typename T>
void Dispatch1(const EpilogueParams& p, cudaStream_t stream) {
  if (p.bias) return Dispatch2<T, true>(p, stream);
  Dispatch2<T, false>(p, stream);
}

template <typename T>
__global__ void __launch_bounds__(kThreads) PadCopy(const PadParams p, int64_t total) {
  const T* x = static_cast<const T*>(p.x);
  T* y = static_cast<T*>(p.y);
  const int64_t od = p.in[0] + p.begin[0] + p.end[0], oh = p.in[1] + p.begin[1] + p.end[1],
                ow = p.in[2] + p.begin[2] + p.end[2];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    int64_t r = i;
    const int64_t w = r % ow - p.begin[2];
    r /= ow;
    const int64_t h = r % oh - p.begin[1];
    r /= oh;
    const int64_t d = r % od - p.begin[0];
    const int64_t plane = r / od;
    const bool inside = w >= 0 && w < p.in[2] && h >= 0 && h < p.in[1] && d >= 0 && d < p.in[0];
    y[i] = inside ? x[((plane * p.in[0] + d) * p.in[1] + h) * p.in[2] + w] : FromF<T>(0.f);
  }
}

}  // namespace

cudaError_t LaunchPadCopy(const PadParams& p, cudaStream_t stream) {
  int64_t total = p.planes;
  for (int i = 0; i < 3; ++i) {
    if (p.in[i] <= 0 || p.begin[i] < 0 || p.end[i] < 0) return cudaErrorInvalidValue;
    total *= p.in[i] + p.begin[i] + p.end[i];
  }
  if (total <= 0) return cudaSuccess;
  switch (p.dtype) {
    case EpiDtype::kF32: PadCopy<float><<<Blocks(total), kThreads, 0, stream>>>(p, total); break;
    case EpiDtype::kF16: PadCopy<__half><<<Blocks(total), kThreads, 0, stream>>>(p, total); break;
    case EpiDtype::kBf16: PadCopy<__nv_bfloat16><<<Blocks(total), kThreads, 0, stream>>>(p, total); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchEpilogue(const EpilogueParams& p, cudaStream_t stream) {
  if (p.numel <= 0) return cudaSuccess;
  if (p.bias && (p.bias_inner <= 0 || p.bias_channels <= 0)) return cudaErrorInvalidValue;
  if (p.z && !p.z_full && (p.rank <= 0 || p.rank > kEpiMaxRank)) return cudaErrorInvalidValue;
  switch (p.dtype) {
    case EpiDtype::kF32: Dispatch1<float>(p, stream); break;
    case EpiDtype::kF16: Dispatch1<__half>(p, stream); break;
    case EpiDtype::kBf16: Dispatch1<__nv_bfloat16>(p, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace switchyard::cuda::kernels
