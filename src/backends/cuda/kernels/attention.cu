// Fused attention (see attention.h), SIMT version: one block of kWarps warps per
// (batch, tile of kWarps * kRows queries). Each warp owns kRows query rows; per K/V tile
// of 32 keys (one key per lane) a lane computes its key's score for the warp's rows, the
// warp updates the rows' online-softmax state with shuffles, and lanes accumulate the
// output columns lane, lane + 32, ... from the V tile. Scores are kept in the log2
// domain (Q pre-scaled by scale * log2 e) so the exponentials are exp2f. Fully masked
// rows give NaN (0 / 0), as the reference does.
#include "backends/cuda/kernels/attention.h"
#include "backends/cuda/kernels/attention_common.cuh"
#include "backends/cuda/kernels/nk_common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <mma.h>

#include <cmath>
#include <cstdint>

namespace switchyard::cuda::nk {
namespace {


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

  const auto [q, k, v, mask, o] = BatchOperands<T>(p, b);

  const float qscale = p.scale * kLog2e;
  for (int idx = threadIdx.x; idx < kTileQ * p.D; idx += blockDim.x) {
    const int r = idx / p.D, c = idx % p.D;
    qs[idx] = q0 + r < p.S ? Ld(q, (q0 + r) * p.q_rs + c) * qscale : 0.f;
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
      kt[c * kKStride + j] = j0 + j < p.Skv ? Ld(k, (j0 + j) * p.k_rs + c) : 0.f;
    }
    for (int idx = threadIdx.x; idx < kTileK * p.Dv; idx += blockDim.x) {
      const int j = idx / p.Dv, c = idx % p.Dv;
      vs[idx] = j0 + j < p.Skv ? Ld(v, (j0 + j) * p.v_rs + c) : 0.f;
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
      if (col < p.Dv) o[i * p.o_rs + col] = Cv<T>(acc[r][c] * inv);
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


// ---- Tensor-core kernel (float16 / bfloat16) -------------------------------------------
// One block of 4 warps per (batch, 64 queries); each warp owns 16 query rows. Per tile of
// 64 keys: S = Q Kᵀ with WMMA into a per-warp float scratch, the online softmax in SIMT
// (lane pair 2r, 2r+1 owns row r, columns hh + 2t), P (rounded to T) back to shared
// memory, then P V with WMMA in chunks of 64 output columns that each lane folds into
// its register accumulator O = O * alpha + P V (WMMA fragments have no row layout to
// rescale in place).
namespace wm = nvcuda::wmma;

constexpr int kWBr = 64;          // query rows per block
constexpr int kWBc = 64;          // keys per tile
constexpr int kWWarps = kWBr / 16;
constexpr int kWPad = 8;          // T elements of row padding (keeps rows 16-byte aligned)
constexpr int kWLdS = kWBc + 4;   // float scratch row stride
constexpr int kWLdP = kWBc + 8;   // P row stride

size_t WmmaSmemBytes(int D, int Dv) {
  const size_t ldq = static_cast<size_t>(D) + kWPad, ldv = static_cast<size_t>(Dv) + kWPad;
  return 2 * (kWBr * ldq + kWBc * ldq + kWBc * ldv) + 4 * static_cast<size_t>(kWWarps) * 16 * kWLdS +
         2 * static_cast<size_t>(kWWarps) * 16 * kWLdP;
}

template <typename T, int kDvChunks>
__global__ void __launch_bounds__(kWWarps * 32) AttentionWmmaK(AttnParams p) {
  extern __shared__ __align__(128) unsigned char wsm[];
  const int ldq = p.D + kWPad, ldv = p.Dv + kWPad;
  T* qs = reinterpret_cast<T*>(wsm);
  T* ks = qs + kWBr * ldq;
  T* vs = ks + kWBc * ldq;
  float* ss = reinterpret_cast<float*>(vs + kWBc * ldv);
  T* ps = reinterpret_cast<T*>(ss + kWWarps * 16 * kWLdS);

  const int64_t qtiles = (p.S + kWBr - 1) / kWBr;
  const int64_t b = blockIdx.x / qtiles;
  const int q0 = static_cast<int>(blockIdx.x % qtiles) * kWBr;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  const auto [q, k, v, mask, o] = BatchOperands<T>(p, b);

  LoadRows(qs, ldq, q, p.q_rs, q0, p.S, kWBr, p.D, p.D);

  float* sw = ss + warp * 16 * kWLdS;
  T* pw = ps + warp * 16 * kWLdP;
  const int r = lane >> 1, hh = lane & 1;
  const int i = q0 + warp * 16 + r;  // this lane's query row
  const bool warp_active = q0 + warp * 16 < p.S;
  const float qscale = p.scale * kLog2e;
  float m = -INFINITY, l = 0.f;
  float acc_o[kDvChunks][32];
#pragma unroll
  for (int ch = 0; ch < kDvChunks; ++ch) {
#pragma unroll
    for (int t = 0; t < 32; ++t) acc_o[ch][t] = 0.f;
  }
  const int kv_end = p.causal ? min(p.Skv, q0 + kWBr) : p.Skv;

  for (int j0 = 0; j0 < kv_end; j0 += kWBc) {
    __syncthreads();  // previous K/V tile consumed (Q tile written, first pass)
    LoadRows(ks, ldq, k, p.k_rs, j0, p.Skv, kWBc, p.D, p.D);
    LoadRows(vs, ldv, v, p.v_rs, j0, p.Skv, kWBc, p.Dv, p.Dv);
    __syncthreads();
    if (!warp_active) continue;

    // S = Q_w Kᵀ: 16 x 64 floats into this warp's scratch.
    for (int nt = 0; nt < kWBc / 16; ++nt) {
      wm::fragment<wm::accumulator, 16, 16, 16, float> acc;
      wm::fill_fragment(acc, 0.f);
      for (int kt = 0; kt < p.D / 16; ++kt) {
        wm::fragment<wm::matrix_a, 16, 16, 16, T, wm::row_major> fa;
        wm::fragment<wm::matrix_b, 16, 16, 16, T, wm::col_major> fb;
        wm::load_matrix_sync(fa, qs + warp * 16 * ldq + kt * 16, ldq);
        wm::load_matrix_sync(fb, ks + nt * 16 * ldq + kt * 16, ldq);
        wm::mma_sync(acc, fa, fb, acc);
      }
      wm::store_matrix_sync(sw + nt * 16, acc, kWLdS, wm::mem_row_major);
    }
    __syncwarp();

    // Online softmax of row r over this tile (log2 domain).
    float sv[32];
    float tmax = -INFINITY;
#pragma unroll
    for (int t = 0; t < 32; ++t) {
      const int c = hh + 2 * t, j = j0 + c;
      float s = sw[r * kWLdS + c] * qscale;
      if (j >= p.Skv || (p.causal && j > i)) {
        s = -INFINITY;
      } else if (mask && i < p.S) {
        s = fmaf(Ld(mask, static_cast<int64_t>(i) * p.m_rs + static_cast<int64_t>(j) * p.m_cs), kLog2e, s);
      }
      sv[t] = s;
      tmax = fmaxf(tmax, s);
    }
    tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
    const float m_new = fmaxf(m, tmax);
    float alpha = 1.f, psum = 0.f;
    if (m_new != -INFINITY) alpha = exp2f(m - m_new);
#pragma unroll
    for (int t = 0; t < 32; ++t) {
      const T pt = Cv<T>(m_new != -INFINITY ? exp2f(sv[t] - m_new) : 0.f);
      pw[r * kWLdP + hh + 2 * t] = pt;
      psum += Ld(&pt, 0);  // the rounded P that P V uses
    }
    psum += __shfl_xor_sync(0xffffffffu, psum, 1);
    l = l * alpha + psum;
    m = m_new;
    __syncwarp();

    // O = O * alpha + P V, 64 output columns at a time.
#pragma unroll
    for (int ch = 0; ch < kDvChunks; ++ch) {
      const int c0 = ch * 64;
      const int ntiles = min(4, (p.Dv - c0) / 16);
      for (int nt = 0; nt < ntiles; ++nt) {
        wm::fragment<wm::accumulator, 16, 16, 16, float> acc;
        wm::fill_fragment(acc, 0.f);
#pragma unroll
        for (int kt = 0; kt < kWBc / 16; ++kt) {
          wm::fragment<wm::matrix_a, 16, 16, 16, T, wm::row_major> fa;
          wm::fragment<wm::matrix_b, 16, 16, 16, T, wm::row_major> fb;
          wm::load_matrix_sync(fa, pw + kt * 16, kWLdP);
          wm::load_matrix_sync(fb, vs + kt * 16 * ldv + c0 + nt * 16, ldv);
          wm::mma_sync(acc, fa, fb, acc);
        }
        wm::store_matrix_sync(sw + nt * 16, acc, kWLdS, wm::mem_row_major);
      }
      __syncwarp();
#pragma unroll
      for (int t = 0; t < 32; ++t) {
        const int c = hh + 2 * t;
        if (c0 + c < p.Dv) acc_o[ch][t] = acc_o[ch][t] * alpha + sw[r * kWLdS + c];
      }
      __syncwarp();
    }
  }
  if (!warp_active || i >= p.S) return;
  const float inv = 1.f / l;
#pragma unroll
  for (int ch = 0; ch < kDvChunks; ++ch) {
#pragma unroll
    for (int t = 0; t < 32; ++t) {
      const int c = ch * 64 + hh + 2 * t;
      if (c < p.Dv) o[i * p.o_rs + c] = Cv<T>(acc_o[ch][t] * inv);
    }
  }
}

template <typename T>
cudaError_t WmmaInitT() {
  const int bytes = static_cast<int>(WmmaSmemBytes(kAttnMaxHeadDim, kAttnMaxHeadDim));
  cudaError_t e = cudaFuncSetAttribute(AttentionWmmaK<T, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(AttentionWmmaK<T, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

template <typename T>
void LaunchWmmaT(const AttnParams& p, cudaStream_t s) {
  const int64_t qtiles = (p.S + kWBr - 1) / kWBr;
  const unsigned grid = static_cast<unsigned>(p.batches * qtiles);
  const size_t smem = WmmaSmemBytes(p.D, p.Dv);
  if (p.Dv <= 64) {
    AttentionWmmaK<T, 1><<<grid, kWWarps * 32, smem, s>>>(p);
  } else {
    AttentionWmmaK<T, 2><<<grid, kWWarps * 32, smem, s>>>(p);
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

bool AttentionWmmaSupports(KDType t, int D, int Dv) {
  return (t == KDType::kF16 || t == KDType::kBF16) && D >= 16 && D <= kAttnMaxHeadDim &&
         D % 16 == 0 && Dv >= 16 && Dv <= kAttnMaxHeadDim && Dv % 16 == 0;
}

cudaError_t AttentionWmmaInit() {
  const cudaError_t e = WmmaInitT<__half>();
  if (e != cudaSuccess) return e;
  return WmmaInitT<__nv_bfloat16>();
}

void LaunchAttentionWmma(KDType t, const AttnParams& p, cudaStream_t stream) {
  if (p.batches == 0 || p.S == 0 || p.Dv == 0) return;
  // Unaligned operands (views into other buffers, odd strides) take the SIMT kernel.
  if (!AttentionWmmaSupports(t, p.D, p.Dv) || !TensorCoreAligned(p)) {
    LaunchAttention(t, p, stream);
    return;
  }
  if (t == KDType::kF16) {
    LaunchWmmaT<__half>(p, stream);
  } else {
    LaunchWmmaT<__nv_bfloat16>(p, stream);
  }
}

}  // namespace switchyard::cuda::nk
