// Fused attention (attention.h) on Hopper/Ampere tensor cores with mma.sync m16n8k16,
// float16/bfloat16 operands, float accumulation: the FlashAttention-2 scheme. One block of
// 4 warps per (batch, 64 queries); each warp owns 16 query rows whose Q fragments stay in
// registers. Per tile of 64 keys, K (row-major) and Vᵀ go through shared memory;
// S = Q Kᵀ lands in the mma accumulators, whose layout is known (thread g = lane / 4,
// t = lane % 4 holds rows g and g + 8, columns 2t and 2t + 1 of every 8-column tile), so
// the online softmax runs in registers (row max and sum over the 4 threads of a quad) and
// the accumulators, rounded to T, are already the A fragments of P V. Unlike the WMMA
// kernel no score or output tile takes a round trip through shared memory.
// Scores are kept in the log2 domain (exp2f); P is rounded to T before both P V and the
// row sum, so the normalisation matches what was multiplied. Fully masked rows give NaN
// (0 / 0), as the reference does.
#include "backends/cuda/kernels/attention.h"
#include "backends/cuda/kernels/attention_common.cuh"
#include "backends/cuda/kernels/nk_common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

namespace switchyard::cuda::nk {
namespace {

constexpr int kBr = 64;               // query rows per block
constexpr int kBc = 64;               // keys per tile
constexpr int kWarps = kBr / 16;      // each warp: 16 query rows
constexpr int kPad = 8;               // T elements of row padding (rows stay 16-byte aligned)
constexpr float kLog2e = 1.4426950408889634f;

// D = A B + D for one m16n8k16 tile; a: 4 registers of two T, b: 2 registers.
template <typename T> __device__ __forceinline__ void Mma(float* d, const uint32_t* a, uint32_t b0, uint32_t b1);
template <> __device__ __forceinline__ void Mma<__half>(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void Mma<__nv_bfloat16>(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats rounded to T, packed (x in the low half: the lower column).
template <typename T> __device__ __forceinline__ uint32_t Pack(float x, float y);
template <> __device__ __forceinline__ uint32_t Pack<__half>(float x, float y) {
  __half2 h = __floats2half2_rn(x, y);
  return *reinterpret_cast<uint32_t*>(&h);
}
template <> __device__ __forceinline__ uint32_t Pack<__nv_bfloat16>(float x, float y) {
  __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
  return *reinterpret_cast<uint32_t*>(&h);
}
// The float values of a packed pair (what rounding to T left).
template <typename T> __device__ __forceinline__ float2 Unpack(uint32_t v);
template <> __device__ __forceinline__ float2 Unpack<__half>(uint32_t v) {
  return __half22float2(*reinterpret_cast<__half2*>(&v));
}
template <> __device__ __forceinline__ float2 Unpack<__nv_bfloat16>(uint32_t v) {
  return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&v));
}

__device__ __forceinline__ uint32_t Ld32(const void* p) { return *reinterpret_cast<const uint32_t*>(p); }

// Rows [r0, r0 + rows) of a row-major matrix (n rows of `cols`, `stride` apart),
// transposed into dst[c][r] with row stride ld (columns [cols, width) and rows past n zero).
template <typename T>
__device__ __forceinline__ void LoadRowsTransposed(T* dst, int ld, const T* src, int64_t stride, int r0, int n,
                                                   int rows, int cols, int width) {
  const int vpr = width / 8;
  for (int idx = threadIdx.x; idx < rows * vpr; idx += blockDim.x) {
    const int r = idx % rows, c = (idx / rows) * 8;  // consecutive threads: consecutive rows
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (r0 + r < n && c < cols) v = *reinterpret_cast<const uint4*>(src + (r0 + r) * stride + c);
    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
    for (int i = 0; i < 8; ++i) dst[(c + i) * ld + r] = e[i];
  }
}

// kD: head size bound for both D and Dv (64 or 128), operands zero-padded up to it.
template <typename T, int kD>
__global__ void __launch_bounds__(kWarps * 32) AttentionMmaK(AttnParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int ldk = kD + kPad, ldv = kBc + kPad;
  T* qs = reinterpret_cast<T*>(smem_raw);  // [kBr][ldk]
  T* ks = qs + kBr * ldk;                  // [kBc][ldk]
  T* vt = ks + kBc * ldk;                  // [kD][ldv]: Vᵀ of the tile

  const int64_t qtiles = (p.S + kBr - 1) / kBr;
  const int64_t b = blockIdx.x / qtiles;
  const int q0 = static_cast<int>(blockIdx.x % qtiles) * kBr;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane >> 2, t4 = lane & 3;

  const auto [q, k, v, mask, o] = BatchOperands<T>(p, b);

  LoadRows(qs, ldk, q, p.q_rs, q0, p.S, kBr, p.D, kD);
  __syncthreads();
  // This warp's Q as A fragments, kD / 16 k-steps.
  uint32_t qa[kD / 16][4];
  {
    const T* qw = qs + warp * 16 * ldk;
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      qa[kk][0] = Ld32(qw + g * ldk + kk * 16 + 2 * t4);
      qa[kk][1] = Ld32(qw + (g + 8) * ldk + kk * 16 + 2 * t4);
      qa[kk][2] = Ld32(qw + g * ldk + kk * 16 + 8 + 2 * t4);
      qa[kk][3] = Ld32(qw + (g + 8) * ldk + kk * 16 + 8 + 2 * t4);
    }
  }
  const int ksteps = (p.D + 15) / 16;
  const int vtiles = (p.Dv + 7) / 8;
  const int row[2] = {q0 + warp * 16 + g, q0 + warp * 16 + g + 8};
  const float qscale = p.scale * kLog2e;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // l: this thread's partial row sums
  float acc[kD / 8][4];
#pragma unroll
  for (int n = 0; n < kD / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
  const int kv_end = p.causal ? min(p.Skv, q0 + kBr) : p.Skv;

  for (int j0 = 0; j0 < kv_end; j0 += kBc) {
    __syncthreads();  // the previous tile is consumed
    LoadRows(ks, ldk, k, p.k_rs, j0, p.Skv, kBc, p.D, kD);
    LoadRowsTransposed(vt, ldv, v, p.v_rs, j0, p.Skv, kBc, p.Dv, kD);
    __syncthreads();

    // S = Q Kᵀ: 8 column tiles of 8 keys.
    float s[kBc / 8][4];
#pragma unroll
    for (int n = 0; n < kBc / 8; ++n) {
      s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
      const T* kr = ks + (n * 8 + g) * ldk + 2 * t4;
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk) {
        if (kk < ksteps) Mma<T>(s[n], qa[kk], Ld32(kr + kk * 16), Ld32(kr + kk * 16 + 8));
      }
    }
    // Scale, mask, online softmax (rows g and g + 8; the quad shares a row).
    float tmax[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < kBc / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int h = e >> 1, j = j0 + n * 8 + 2 * t4 + (e & 1);
        float x = s[n][e] * qscale;
        if (j >= p.Skv || (p.causal && j > row[h])) {
          x = -INFINITY;
        } else if (mask && row[h] < p.S) {
          x = fmaf(Ld(mask, static_cast<int64_t>(row[h]) * p.m_rs + static_cast<int64_t>(j) * p.m_cs), kLog2e, x);
        }
        s[n][e] = x;
        tmax[h] = fmaxf(tmax[h], x);
      }
    }
    float alpha[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      tmax[h] = fmaxf(tmax[h], __shfl_xor_sync(0xffffffffu, tmax[h], 1));
      tmax[h] = fmaxf(tmax[h], __shfl_xor_sync(0xffffffffu, tmax[h], 2));
      const float m_new = fmaxf(m[h], tmax[h]);
      alpha[h] = m_new == -INFINITY ? 1.f : exp2f(m[h] - m_new);
      m[h] = m_new;
      l[h] *= alpha[h];
    }
#pragma unroll
    for (int n = 0; n < kD / 8; ++n) {
      acc[n][0] *= alpha[0];
      acc[n][1] *= alpha[0];
      acc[n][2] *= alpha[1];
      acc[n][3] *= alpha[1];
    }
    // P (rounded to T) as A fragments of P V, 16 keys per k-step; O += P V.
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      uint32_t pa[4];
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // key columns 16kk + 8 half + {2t4, 2t4 + 1}
        const float* sn = s[2 * kk + half];
        const float p0 = m[0] == -INFINITY ? 0.f : exp2f(sn[0] - m[0]);
        const float p1 = m[0] == -INFINITY ? 0.f : exp2f(sn[1] - m[0]);
        const float p2 = m[1] == -INFINITY ? 0.f : exp2f(sn[2] - m[1]);
        const float p3 = m[1] == -INFINITY ? 0.f : exp2f(sn[3] - m[1]);
        pa[2 * half] = Pack<T>(p0, p1);      // row g
        pa[2 * half + 1] = Pack<T>(p2, p3);  // row g + 8
        const float2 r0 = Unpack<T>(pa[2 * half]), r1 = Unpack<T>(pa[2 * half + 1]);
        l[0] += r0.x + r0.y;
        l[1] += r1.x + r1.y;
      }
      // mma A order: (row g, k 0-7), (row g+8, k 0-7), (row g, k 8-15), (row g+8, k 8-15).
      const uint32_t a[4] = {pa[0], pa[1], pa[2], pa[3]};
#pragma unroll
      for (int n = 0; n < kD / 8; ++n) {
        if (n < vtiles) {
          const T* vr = vt + (n * 8 + g) * ldv + kk * 16 + 2 * t4;
          Mma<T>(acc[n], a, Ld32(vr), Ld32(vr + 8));
        }
      }
    }
  }
  // Row sums over the quad, then O / l (0 / 0 = NaN for fully masked rows).
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
  }
  const float inv[2] = {1.f / l[0], 1.f / l[1]};
#pragma unroll
  for (int n = 0; n < kD / 8; ++n) {
    const int c = n * 8 + 2 * t4;
    if (n >= vtiles || c >= p.Dv) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (row[h] >= p.S) continue;
      T* dst = o + row[h] * p.o_rs + c;
      const uint32_t packed = Pack<T>(acc[n][2 * h] * inv[h], acc[n][2 * h + 1] * inv[h]);
      *reinterpret_cast<uint32_t*>(dst) = packed;  // strides and c even: 4-byte aligned
    }
  }
}

template <int kD>
constexpr size_t SmemBytes() {
  return 2 * (static_cast<size_t>(kBr) * (kD + kPad) + static_cast<size_t>(kBc) * (kD + kPad) +
              static_cast<size_t>(kD) * (kBc + kPad));
}

template <typename T>
cudaError_t InitT() {
  cudaError_t e = cudaFuncSetAttribute(AttentionMmaK<T, 64>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(SmemBytes<64>()));
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(AttentionMmaK<T, 128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(SmemBytes<128>()));
}

template <typename T>
void LaunchT(const AttnParams& p, cudaStream_t s) {
  const int64_t qtiles = (p.S + kBr - 1) / kBr;
  const unsigned grid = static_cast<unsigned>(p.batches * qtiles);
  if (p.D <= 64 && p.Dv <= 64) {
    AttentionMmaK<T, 64><<<grid, kWarps * 32, SmemBytes<64>(), s>>>(p);
  } else {
    AttentionMmaK<T, 128><<<grid, kWarps * 32, SmemBytes<128>(), s>>>(p);
  }
}

}  // namespace

bool AttentionMmaSupports(KDType t, int D, int Dv) {
  return (t == KDType::kF16 || t == KDType::kBF16) && D >= 16 && D <= kAttnMaxHeadDim && D % 16 == 0 &&
         Dv >= 16 && Dv <= kAttnMaxHeadDim && Dv % 16 == 0;
}

cudaError_t AttentionMmaInit() {
  const cudaError_t e = InitT<__half>();
  if (e != cudaSuccess) return e;
  return InitT<__nv_bfloat16>();
}

void LaunchAttentionMma(KDType t, const AttnParams& p, cudaStream_t stream) {
  if (p.batches == 0 || p.S == 0 || p.Dv == 0) return;
  // Unaligned operands (views into other buffers, odd strides) take the SIMT kernel.
  if (!AttentionMmaSupports(t, p.D, p.Dv) || !TensorCoreAligned(p)) {
    LaunchAttention(t, p, stream);
    return;
  }
  if (t == KDType::kF16) {
    LaunchT<__half>(p, stream);
  } else {
    LaunchT<__nv_bfloat16>(p, stream);
  }
}

}  // namespace switchyard::cuda::nk
