// Launcher of the CUDA backend's fused attention kernel (kernels/attention.cu) for
// switchyard.Attention: O = softmax(scale * Q Kᵀ + mask [causal]) V, flash-attention
// style (K/V tiles through shared memory, online softmax in float, no score matrix in
// global memory). Enqueue only; the caller checks the launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/kernels/norm.h"

namespace switchyard::cuda::nk {

constexpr int kAttnMaxBatchRank = 6;
constexpr int kAttnMaxHeadDim = 128;  // D and Dv

// Q [batch..., S, D], K [batch..., Skv, D], V [batch..., Skv, Dv], O [batch..., S, Dv] over
// the broadcast batch shape `bdim`, each with a unit stride along its last dim: per batch
// dim, *_bs is the element stride of that operand (0 where it broadcasts), and *_rs the
// stride between its rows (D for a contiguous Q; H * D when Q is stored [B, S, H, D]).
// The optional mask (same element type) is added to the scaled scores; its element for
// (batch b, query i, key j) is mask[sum m_bs * b_idx + i * m_rs + j * m_cs].
// causal hides key j from query i when j > i (top-left aligned).
struct AttnParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* mask = nullptr;
  void* o = nullptr;
  int nb = 0;  // batch rank (<= kAttnMaxBatchRank)
  int64_t bdim[kAttnMaxBatchRank] = {};
  int64_t q_bs[kAttnMaxBatchRank] = {}, k_bs[kAttnMaxBatchRank] = {};
  int64_t v_bs[kAttnMaxBatchRank] = {}, m_bs[kAttnMaxBatchRank] = {};
  int64_t o_bs[kAttnMaxBatchRank] = {};
  int64_t q_rs = 0, k_rs = 0, v_rs = 0, o_rs = 0;
  int64_t m_rs = 0, m_cs = 0;
  int64_t batches = 1;  // product of bdim
  int S = 0, Skv = 0, D = 0, Dv = 0;  // D, Dv in [1, kAttnMaxHeadDim]
  float scale = 1.f;
  bool causal = false;
};

// SIMT kernel: any float type, D and Dv in [1, kAttnMaxHeadDim].
void LaunchAttention(KDType t, const AttnParams& p, cudaStream_t stream);

// Tensor-core kernel (WMMA 16x16x16, float accumulation): float16/bfloat16 only, D and Dv
// multiples of 16 up to kAttnMaxHeadDim. Call AttentionWmmaInit once (in Create, not
// inside a graph capture) before launching: it raises the kernels' shared-memory limit.
bool AttentionWmmaSupports(KDType t, int D, int Dv);
cudaError_t AttentionWmmaInit();
void LaunchAttentionWmma(KDType t, const AttnParams& p, cudaStream_t stream);

// Tensor-core kernel with mma.sync m16n8k16 (kernels/attention_mma.cu: softmax in the
// accumulator registers, FlashAttention-2 style): the same types and head sizes as WMMA;
// AttentionMmaInit once before launching (shared-memory limit), as for WMMA.
bool AttentionMmaSupports(KDType t, int D, int Dv);
cudaError_t AttentionMmaInit();
void LaunchAttentionMma(KDType t, const AttnParams& p, cudaStream_t stream);

}  // namespace switchyard::cuda::nk
