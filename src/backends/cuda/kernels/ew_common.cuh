// Device helpers shared by elementwise.cu and movement.cu (nvcc only): float conversion of
// the activation types, packed vector access and the broadcast indexer.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/kernels/elementwise.h"

namespace switchyard::cuda::kernels::ew_detail {

constexpr int kThreads = 256;

inline int GridFor(int64_t work, int threads = kThreads) {
  const int64_t b = (work + threads - 1) / threads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(b, 8192)));
}

template <typename T> struct IsFloatLike : std::false_type {};
template <> struct IsFloatLike<float> : std::true_type {};
template <> struct IsFloatLike<__half> : std::true_type {};
template <> struct IsFloatLike<__nv_bfloat16> : std::true_type {};

// Value type computations use: float for the float types, the type itself otherwise.
template <typename T> struct Calc { using type = T; };
template <> struct Calc<__half> { using type = float; };
template <> struct Calc<__nv_bfloat16> { using type = float; };

template <typename T>
__device__ __forceinline__ typename Calc<T>::type Ld(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return v;
  }
}

// Converts a computed value to the stored type (float types round to nearest).
template <typename To, typename V>
__device__ __forceinline__ To St(V v) {
  if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

// V consecutive elements, aligned to their size (V * sizeof(T) <= 16).
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

inline bool Aligned(const void* p, size_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) % bytes) == 0;
}

// Broadcast indexing for N inputs over a (merged) output shape of rank <= kMaxDims:
// per input a stride per output dim (0 where the input broadcasts).
template <int N>
struct Bcast {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[N][kMaxDims] = {};
};

// Builds the merged broadcast plan of `n_in` input shapes against `out`. Returns false
// when a shape does not broadcast.
template <int N>
bool MakeBcast(const Dims& out, const Dims* in, int n_in, Bcast<N>* b) {
  int64_t dims[kMaxDims];
  int64_t st[N][kMaxDims];
  int r = 0;
  for (int d = 0; d < out.rank; ++d) {
    if (out.d[d] == 1) continue;  // size-1 output dims carry no index
    dims[r] = out.d[d];
    for (int k = 0; k < n_in; ++k) {
      const int off = out.rank - in[k].rank;
      const int id = d - off;
      int64_t s = 0;
      if (id >= 0) {
        const int64_t ext = in[k].d[id];
        if (ext != 1 && ext != out.d[d]) return false;
        if (ext != 1) {
          s = 1;
          for (int j = id + 1; j < in[k].rank; ++j) s *= in[k].d[j];
        }
      }
      st[k][r] = s;
    }
    ++r;
  }
  // Merge dim d into d+1 when every input is contiguous across the pair.
  b->rank = 0;
  for (int d = 0; d < r; ++d) {
    if (b->rank > 0) {
      const int p = b->rank - 1;
      bool merge = true;
      for (int k = 0; k < n_in; ++k) {
        if (b->strides[k][p] != st[k][d] * dims[d]) merge = false;
      }
      if (merge) {
        b->dims[p] *= dims[d];
        for (int k = 0; k < n_in; ++k) b->strides[k][p] = st[k][d];
        continue;
      }
    }
    b->dims[b->rank] = dims[d];
    for (int k = 0; k < n_in; ++k) b->strides[k][b->rank] = st[k][d];
    ++b->rank;
  }
  return true;
}

// Offsets of output element i in each of the first n_in inputs.
template <int N, typename I>
__device__ __forceinline__ void Offsets(const Bcast<N>& b, I i, I (&off)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d < b.rank) {
      const I dim = static_cast<I>(b.dims[d]);
      const I c = i % dim;
      i /= dim;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += c * static_cast<I>(b.strides[k][d]);
    }
  }
}

inline int64_t NumElements(const Dims& s) {
  int64_t n = 1;
  for (int d = 0; d < s.rank; ++d) n *= s.d[d];
  return n;
}

}  // namespace switchyard::cuda::kernels::ew_detail
