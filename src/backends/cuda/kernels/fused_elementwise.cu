// Own CUDA kernel for switchyard.FusedElementwise (see elementwise.h): a chain of unary and
// binary links evaluated per element in float, one read of each input and one write.
// Split from elementwise.cu; shares its helpers through ew_common.cuh.
#include <cmath>
#include <cstdint>

#include "backends/cuda/kernels/elementwise.h"
#include "backends/cuda/kernels/ew_common.cuh"

namespace switchyard::cuda::kernels {
namespace {

using namespace ew_detail;  // NOLINT: the family's own helpers

// ---------------------------------------------------------------------------------------
// FusedElementwise
__device__ __forceinline__ float FusedBinary(int op, float a, float b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return powf(a, b);
    case 5: return fmaxf(a, b);
    case 6: return fminf(a, b);
  }
  return a;
}

// The reference's Activate (fused_activation.h) in float.
__device__ __forceinline__ float FusedUnary(int op, float x, float p0, float p1) {
  switch (static_cast<FusedAct>(op)) {
    case FusedAct::kRelu: return x > 0.f ? x : 0.f;
    case FusedAct::kLeakyRelu: return x >= 0.f ? x : x * p0;
    case FusedAct::kClip: return fminf(fmaxf(x, p0), p1);
    case FusedAct::kSigmoid: return 1.f / (1.f + expf(-x));
    case FusedAct::kHardSigmoid: return fmaxf(0.f, fminf(1.f, p0 * x + p1));
    case FusedAct::kHardSwish: return x * fmaxf(0.f, fminf(1.f, x / 6.f + 0.5f));
    case FusedAct::kTanh: return tanhf(x);
    case FusedAct::kSiLU: return x / (1.f + expf(-x));
    case FusedAct::kGelu: return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case FusedAct::kErf: return erff(x);
    case FusedAct::kExp: return expf(x);
    case FusedAct::kLog: return logf(x);
    case FusedAct::kSqrt: return sqrtf(x);
    case FusedAct::kNeg: return -x;
    case FusedAct::kAbs: return fabsf(x);
    case FusedAct::kReciprocal: return 1.f / x;
  }
  return x;
}

struct FusedInputs {
  const void* p[kMaxFusedInputs];
};

template <typename T>
__device__ __forceinline__ float FusedRun(const FusedChain& ch, const float (&v)[kMaxFusedInputs]) {
  float acc = v[0];
  for (int l = 0; l < ch.num_links; ++l) {
    const int op = ch.op[l];
    if (op < 16) {
      float o = 0.f;
#pragma unroll
      for (int k = 0; k < kMaxFusedInputs; ++k) {
        if (k == ch.operand[l]) o = v[k];
      }
      acc = ch.swap[l] ? FusedBinary(op, o, acc) : FusedBinary(op, acc, o);
    } else {
      acc = FusedUnary(op, acc, ch.p0[l], ch.p1[l]);
    }
  }
  return acc;
}

// All inputs dense (same shape as the output) or scalars (scalar_mask bit k).
template <typename T>
__global__ void FusedDenseKernel(FusedChain ch, FusedInputs in, unsigned scalar_mask, T* __restrict__ y,
                                 int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v[kMaxFusedInputs];
#pragma unroll
    for (int k = 0; k < kMaxFusedInputs; ++k) {
      v[k] = k < ch.num_inputs ? Ld(static_cast<const T*>(in.p[k])[(scalar_mask >> k) & 1u ? 0 : i]) : 0.f;
    }
    y[i] = St<T>(FusedRun<T>(ch, v));
  }
}

template <typename T, typename I>
__global__ void FusedGeneralKernel(FusedChain ch, FusedInputs in, Bcast<kMaxFusedInputs> bc,
                                   T* __restrict__ y, I n) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I off[kMaxFusedInputs];
    Offsets<kMaxFusedInputs, I>(bc, i, off);
    float v[kMaxFusedInputs];
#pragma unroll
    for (int k = 0; k < kMaxFusedInputs; ++k) {
      v[k] = k < ch.num_inputs ? Ld(static_cast<const T*>(in.p[k])[off[k]]) : 0.f;
    }
    y[i] = St<T>(FusedRun<T>(ch, v));
  }
}

template <typename T>
cudaError_t FusedT(const FusedChain& ch, const void* const* inputs, const Dims* shapes, void* yv,
                   const Dims& ys, cudaStream_t s) {
  T* y = static_cast<T*>(yv);
  const int64_t n = NumElements(ys);
  if (n == 0) return cudaSuccess;
  if (ch.num_inputs < 1 || ch.num_inputs > kMaxFusedInputs) return cudaErrorInvalidValue;
  FusedInputs in{};
  bool dense = true;
  unsigned scalar_mask = 0;
  for (int k = 0; k < ch.num_inputs; ++k) {
    in.p[k] = inputs[k];
    const int64_t nk = NumElements(shapes[k]);
    if (nk == 1 && n != 1) {
      scalar_mask |= 1u << k;
    } else if (nk != n) {
      dense = false;
    }
  }
  if (dense) {
    FusedDenseKernel<T><<<GridFor(n), kThreads, 0, s>>>(ch, in, scalar_mask, y, n);
    return cudaGetLastError();
  }
  Bcast<kMaxFusedInputs> bc;
  if (!MakeBcast<kMaxFusedInputs>(ys, shapes, ch.num_inputs, &bc)) return cudaErrorInvalidValue;
  if (n < (int64_t{1} << 31)) {
    FusedGeneralKernel<T, uint32_t><<<GridFor(n), kThreads, 0, s>>>(ch, in, bc, y, static_cast<uint32_t>(n));
  } else {
    FusedGeneralKernel<T, int64_t><<<GridFor(n), kThreads, 0, s>>>(ch, in, bc, y, n);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchFusedElementwise(ElemType t, const FusedChain& chain, const void* const* inputs,
                                   const Dims* shapes, void* y, const Dims& y_shape,
                                   cudaStream_t stream) {
  switch (t) {
    case ElemType::kF32: return FusedT<float>(chain, inputs, shapes, y, y_shape, stream);
    case ElemType::kF16: return FusedT<__half>(chain, inputs, shapes, y, y_shape, stream);
    case ElemType::kBF16: return FusedT<__nv_bfloat16>(chain, inputs, shapes, y, y_shape, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace switchyard::cuda::kernels
