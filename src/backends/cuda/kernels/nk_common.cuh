// Device helpers shared by the nk kernel families (norm, reduce, pool, attention): load an
// element as float and convert a float back to the element type (float, __half,
// __nv_bfloat16; round to nearest even). nvcc only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace switchyard::cuda::nk {

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

}  // namespace switchyard::cuda::nk
