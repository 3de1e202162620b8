// Fused attention (see attention.h), SIMT version: one block of kWarps warps per
// (batch, tile of kWarps * kRows queries). Each warp owns kRows query rows; per K/V tile
// of 32 keys (one key per lane) a lane computes its key's score for the warp's rows, the
// warp updates the rows' online-softmax state with shuffles, and lanes accumulate the
// output columns lane, lane + 32, ... from the V tile. Scores are kept in the log2
// domain (Q pre-scaled by scale * log2 e) so the exponentials are exp2f. Fully masked
// rows give NaN (0 / 0), as the reference does.
#include "backends/cuda/kernels/attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

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

constexpr int kWarps = 4;
constexpr int kRows = 4;                    // query rows per warp
constexpr int kTileQ = kWarps * kRows;      // query rows per block
constexpr int kTileK = 32;                  // keys per tile (one per lane)
constexpr int kKStride = kTileK + 1;        // Kᵀ tile row stride (bank-conflict free)
constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float WarpMax(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// kDvL: output columns per lane (ceil(Dv / 32)).
template <typename T, int kDvL>
__global__ void __launch_bounds__(kWarps * 32) AttentionK(AttnParams p) {
  extern __shared__ float smem[];
  float* qs = smem;                            // [kTileQ][D], pre-scaled
  float* kt = qs + kTileQ * p.D;               // [D][kKStride]: Kᵀ of the tile
  float* vs = kt + p.D * kKStride;             // [kTileK][Dv]

  const int64_t qtiles = (p.S + kTileQ - 1) / kTileQ;
  const int64_t b = blockIdx.x / qtiles;
  const int q0 = static_cast<int>(blockIdx.x % qtiles) * kTileQ;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  // Operand offsets of batch b.
  int64_t qo = 0, ko = 0, vo = 0, mo = 0, rem = b;
  for (int d = p.nb - 1; d >= 0; --d) {
    const int64_t i = rem % p.bdim[d];
    rem /= p.bdim[d];
    qo += i * p.q_bs[d];
    ko += i * p.k_bs[d];
    vo += i * p.v_bs[d];
    mo += i * p.m_bs[d];
  }
  const T* q = static_cast<const T*>(p.q) + qo;
  const T* k = static_cast<const T*>(p.k) + ko;
  const T* v = static_cast<const T*>(p.v) + vo;
  const T* mask = p.mask ? static_cast<const T*>(p.mask) + mo : nullptr;
  T* o = static_cast<T*>(p.o) + b * static_cast<int64_t>(p.S) * p.Dv;

  const float qscale = p.scale * kLog2e;
  for (int idx = threadIdx.x; idx < kTileQ * p.D; idx += blockDim.x) {
    const int r = idx / p.D, c = idx % p.D;
    qs[idx] = q0 + r < p.S ? Ld(q, static_cast<int64_t>(q0 + r) * p.D + c) * qscale : 0.f;
  }

  float m[kRows], l[kRows], acc[kRows][kDvL];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.f;
#pragma unroll
    for (int c = 0; c < kDvL; ++c) acc[r][c] = 0.f;
  }
  const int row0 = q0 + warp * kRows;  // this warp's first query row
  const int kv_end = p.causal ? min(p.Skv, q0 + kTileQ) : p.Skv;

  for (int j0 = 0; j0 < kv_end; j0 += kTileK) {
    __syncthreads();  // previous tile consumed (and qs written, on the first pass)
    for (int idx = threadIdx.x; idx < kTileK * p.D; idx += blockDim.x) {
      const int j = idx / p.D, c = idx % p.D;
      kt[c * kKStride + j] = j0 + j < p.Skv ? Ld(k, static_cast<int64_t>(j0 + j) * p.D + c) : 0.f;
    }
    for (int idx = threadIdx.x; idx < kTileK * p.Dv; idx += blockDim.x) {
      const int j = idx / p.Dv, c = idx % p.Dv;
      vs[idx] = j0 + j < p.Skv ? Ld(v, static_cast<int64_t>(j0 + j) * p.Dv + c) : 0.f;
    }
    __syncthreads();
    if (row0 >= p.S) continue;  // idle warp of the last tile (still joins the barriers)

    const int j = j0 + lane;
    float s[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) s[r] = 0.f;
    const float* qw = qs + warp * kRows * p.D;
    for (int c = 0; c < p.D; ++c) {
      const float kv = kt[c * kKStride + lane];
#pragma unroll
      for (int r = 0; r < kRows; ++r) s[r] = fmaf(qw[r * p.D + c], kv, s[r]);
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int i = row0 + r;
      if (j >= p.Skv || (p.causal && j > i)) {
        s[r] = -INFINITY;
      } else if (mask && i < p.S) {
        s[r] = fmaf(Ld(mask, static_cast<int64_t>(i) * p.m_rs + static_cast<int64_t>(j) * p.m_cs), kLog2e, s[r]);
      }
      const float m_new = fmaxf(m[r], WarpMax(s[r]));
      float pr = 0.f, alpha = 1.f;
      if (m_new != -INFINITY) {
        pr = exp2f(s[r] - m_new);
        alpha = exp2f(m[r] - m_new);
      }
      m[r] = m_new;
      l[r] = l[r] * alpha + WarpSum(pr);
#pragma unroll
      for (int c = 0; c < kDvL; ++c) acc[r][c] *= alpha;
      s[r] = pr;  // now the probability of key j for row r
    }
    const int jn = min(kTileK, p.Skv - j0);
    for (int jj = 0; jj < jn; ++jj) {
      float pj[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) pj[r] = __shfl_sync(0xffffffffu, s[r], jj);
#pragma unroll
      for (int c = 0; c < kDvL; ++c) {
        const int col = lane + 32 * c;
        const float vv = col < p.Dv ? vs[jj * p.Dv + col] : 0.f;
#pragma unroll
        for (int r = 0; r < kRows; ++r) acc[r][c] = fmaf(pj[r], vv, acc[r][c]);
      }
    }
  }
  if (row0 >= p.S) return;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int i = row0 + r;
    if (i >= p.S) break;
    const float inv = 1.f / l[r];
#pragma unroll
    for (int c = 0; c < kDvL; ++c) {
      const int col = lane + 32 * c;
      if (col < p.Dv) o[static_cast<int64_t>(i) * p.Dv + col] = Cv<T>(acc[r][c] * inv);
    }
  }
}

template <typename T, int kDvL>
void Launch(const AttnParams& p, cudaStream_t s) {
  const int64_t qtiles = (p.S + kTileQ - 1) / kTileQ;
  const size_t smem = sizeof(float) * (static_cast<size_t>(kTileQ) * p.D +
                                       static_cast<size_t>(p.D) * kKStride +
                                       static_cast<size_t>(kTileK) * p.Dv);
  AttentionK<T, kDvL><<<static_cast<unsigned>(p.batches * qtiles), kWarps * 32, smem, s>>>(p);
}

template <typename T>
void LaunchT(const AttnParams& p, cudaStream_t s) {
  if (p.Dv <= 32) {
    Launch<T, 1>(p, s);
  } else if (p.Dv <= 64) {
    Launch<T, 2>(p, s);
  } else {
    Launch<T, 4>(p, s);
  }
}

}  // namespace

void LaunchAttention(KDType t, const AttnParams& p, cudaStream_t stream) {
  if (p.batches == 0 || p.S == 0 || p.Dv == 0) return;
  switch (t) {
    case KDType::kF32: LaunchT<float>(p, stream); break;
    case KDType::kF16: LaunchT<__half>(p, stream); break;
    case KDType::kBF16: LaunchT<__nv_bfloat16>(p, stream); break;
  }
}

}  // namespace switchyard::cuda::nk
