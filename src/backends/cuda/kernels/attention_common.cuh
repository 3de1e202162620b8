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
  int64_t qo = 0, ko = 0, vo = 0, mo = 0, oo = 0, rem = b;
  for (int d = p.nb - 1; d >= 0; --d) {
    const int64_t i = rem % p.bdim[d];
    rem /= p.bdim[d];
    qo += i * p.q_bs[d];
    ko += i * p.k_bs[d];
    vo += i * p.v_bs[d];
    mo += i * p.m_bs[d];
    oo += i * p.o_bs[d];
  }
  return {static_cast<const T*>(p.q) + qo, static_cast<const T*>(p.k) + ko, static_cast<const T*>(p.v) + vo,
          p.mask ? static_cast<const T*>(p.mask) + mo : nullptr, static_cast<T*>(p.o) + oo};
}

// Rows [r0, r0 + rows) of a row-major matrix with n rows of `cols` elements, `stride`
// elements apart (cols and stride % 8 == 0, 16-byte aligned rows), into shared memory
// with row stride ld, 16 bytes per thread and step; columns [cols, width) and rows at or
// beyond n are zero (width % 8 == 0).
template <typename T>
__device__ __forceinline__ void LoadRows(T* dst, int ld, const T* src, int64_t stride, int r0, int n, int rows,
                                         int cols, int width) {
  const int vpr = width / 8;
  for (int idx = threadIdx.x; idx < rows * vpr; idx += blockDim.x) {
    const int r = idx / vpr, c = (idx % vpr) * 8;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (r0 + r < n && c < cols) v = *reinterpret_cast<const uint4*>(src + (r0 + r) * stride + c);
    *reinterpret_cast<uint4*>(dst + r * ld + c) = v;
  }
}

inline bool Aligned16(const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0; }

// Whether the tensor-core kernels' 16-byte row loads hold for every batch and row of Q, K
// and V (16-byte aligned bases, strides multiples of 8 elements) and their 4-byte output
// stores for O (even strides). Otherwise the SIMT kernel runs.
inline bool TensorCoreAligned(const AttnParams& p) {
  if (!Aligned16(p.q) || !Aligned16(p.k) || !Aligned16(p.v) || !Aligned16(p.o)) return false;
  if (p.q_rs % 8 || p.k_rs % 8 || p.v_rs % 8 || p.o_rs % 2) return false;
  for (int d = 0; d < p.nb; ++d) {
    if (p.q_bs[d] % 8 || p.k_bs[d] % 8 || p.v_bs[d] % 8 || p.o_bs[d] % 2) return false;
  }
  return true;
}

}  // namespace switchyard::cuda::nk
