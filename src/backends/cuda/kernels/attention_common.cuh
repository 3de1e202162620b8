// Device helpers shared by the attention kernels (attention.cu: SIMT and WMMA;
// attention_mma.cu: mma.sync). nvcc only.
#pragma once

#include <cstdint>

#include "backends/cuda/kernels/attention.h"

namespace switchyard::cuda::nk {

// The operands of flattened batch b: its Q, K, V and mask blocks through the per-operand
// batch strides (0 where an operand broadcasts), and its output block.
template <typename T>
struct AttnBatch {
  const T* q;
  const T* k;
  const T* v;
  const T* mask;  // nullptr without a mask
  T* o;
};

template <typename T>
__device__ __forceinline__ AttnBatch<T> BatchOperands(const AttnParams& p, int64_t b) {
  int64_t qo = 0, ko = 0, vo = 0, mo = 0, rem = b;
  for (int d = p.nb - 1; d >= 0; --d) {
    const int64_t i = rem % p.bdim[d];
    rem /= p.bdim[d];
    qo += i * p.q_bs[d];
    ko += i * p.k_bs[d];
    vo += i * p.v_bs[d];
    mo += i * p.m_bs[d];
  }
  return {static_cast<const T*>(p.q) + qo, static_cast<const T*>(p.k) + ko, static_cast<const T*>(p.v) + vo,
          p.mask ? static_cast<const T*>(p.mask) + mo : nullptr,
          static_cast<T*>(p.o) + b * static_cast<int64_t>(p.S) * p.Dv};
}

// Rows [r0, r0 + rows) of a row-major [n][cols] matrix (cols % 8 == 0, 16-byte aligned
// rows) into shared memory with row stride ld, 16 bytes per thread and step; columns
// [cols, width) and rows at or beyond n are zero (width % 8 == 0).
template <typename T>
__device__ __forceinline__ void LoadRows(T* dst, int ld, const T* src, int r0, int n, int rows, int cols,
                                         int width) {
  const int vpr = width / 8;
  for (int idx = threadIdx.x; idx < rows * vpr; idx += blockDim.x) {
    const int r = idx / vpr, c = (idx % vpr) * 8;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (r0 + r < n && c < cols) v = *reinterpret_cast<const uint4*>(src + static_cast<int64_t>(r0 + r) * cols + c);
    *reinterpret_cast<uint4*>(dst + r * ld + c) = v;
  }
}

inline bool Aligned16(const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0; }

}  // namespace switchyard::cuda::nk
