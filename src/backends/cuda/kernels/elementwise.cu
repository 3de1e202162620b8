// CUDA elementwise kernels: unary activations/math, broadcast binary ops and comparisons,
// Where and Cast (the FusedElementwise chain is in fused_elementwise.cu). Float types compute in float;
// the semantics follow the reference kernels (src/reference/ops).
#include <cmath>
#include <cstdint>
#include <limits>

#include "backends/cuda/kernels/elementwise.h"
#include "backends/cuda/kernels/ew_common.cuh"

namespace switchyard::cuda::kernels {
namespace {

using namespace ew_detail;  // NOLINT: the family's own helpers

// ---------------------------------------------------------------------------------------
// Unary
template <UnaryOp OP>
__device__ __forceinline__ float Unary(float x, float a, float b) {
  if constexpr (OP == UnaryOp::kRelu) return x < 0.f ? 0.f : x;  // NaN stays NaN
  if constexpr (OP == UnaryOp::kSigmoid) {
    if (x >= 0.f) return 1.f / (1.f + expf(-x));
    const float e = expf(x);
    return e / (1.f + e);
  }
  if constexpr (OP == UnaryOp::kTanh) return tanhf(x);
  if constexpr (OP == UnaryOp::kErf) return erff(x);
  if constexpr (OP == UnaryOp::kExp) return expf(x);
  if constexpr (OP == UnaryOp::kLog) return logf(x);
  if constexpr (OP == UnaryOp::kSqrt) return sqrtf(x);
  if constexpr (OP == UnaryOp::kNeg) return -x;
  if constexpr (OP == UnaryOp::kAbs) return fabsf(x);
  if constexpr (OP == UnaryOp::kReciprocal) return 1.f / x;
  if constexpr (OP == UnaryOp::kHardSwish) return x * fmaxf(0.f, fminf(1.f, x / 6.f + 0.5f));
  if constexpr (OP == UnaryOp::kHardSigmoid) return fmaxf(0.f, fminf(1.f, a * x + b));
  if constexpr (OP == UnaryOp::kLeakyRelu) return x >= 0.f ? x : a * x;
  if constexpr (OP == UnaryOp::kClip) {
    // max-then-min as std::min(std::max(x, lo), hi): NaN stays NaN, lo > hi gives hi.
    const float m = x < a ? a : x;
    return b < m ? b : m;
  }
  if constexpr (OP == UnaryOp::kElu) return x >= 0.f ? x : a * expm1f(x);
  if constexpr (OP == UnaryOp::kSoftplus) return x > 0.f ? x + log1pf(expf(-x)) : log1pf(expf(x));
  if constexpr (OP == UnaryOp::kGelu) return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
  if constexpr (OP == UnaryOp::kGeluTanh) {
    const float k = 0.79788456080286536f;  // sqrt(2 / pi)
    return 0.5f * x * (1.f + tanhf(k * (x + 0.044715f * x * x * x)));
  }
  if constexpr (OP == UnaryOp::kSiLU) return x / (1.f + expf(-x));
  return x;
}

template <typename T, UnaryOp OP, int V>
__global__ void UnaryKernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, float a, float b) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t packs = n / V;
  const Pack<T, V>* xp = reinterpret_cast<const Pack<T, V>*>(x);
  Pack<T, V>* yp = reinterpret_cast<Pack<T, V>*>(y);
  for (int64_t p = tid; p < packs; p += stride) {
    Pack<T, V> v = xp[p];
#pragma unroll
    for (int j = 0; j < V; ++j) v.v[j] = St<T>(Unary<OP>(Ld(v.v[j]), a, b));
    yp[p] = v;
  }
  for (int64_t i = packs * V + tid; i < n; i += stride) y[i] = St<T>(Unary<OP>(Ld(x[i]), a, b));
}

template <typename T, UnaryOp OP>
cudaError_t UnaryT(const void* xv, void* yv, int64_t n, float a, float b, cudaStream_t s) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  constexpr int V = 16 / sizeof(T);
  if (Aligned(x, 16) && Aligned(y, 16)) {
    UnaryKernel<T, OP, V><<<GridFor((n + V - 1) / V), kThreads, 0, s>>>(x, y, n, a, b);
  } else {
    UnaryKernel<T, OP, 1><<<GridFor(n), kThreads, 0, s>>>(x, y, n, a, b);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t UnaryDispatch(UnaryOp op, const void* x, void* y, int64_t n, float a, float b,
                          cudaStream_t s) {
  switch (op) {
#define SY_UNARY_CASE(NAME) \
  case UnaryOp::NAME: return UnaryT<T, UnaryOp::NAME>(x, y, n, a, b, s);
    SY_UNARY_CASE(kRelu) SY_UNARY_CASE(kSigmoid) SY_UNARY_CASE(kTanh) SY_UNARY_CASE(kErf)
    SY_UNARY_CASE(kExp) SY_UNARY_CASE(kLog) SY_UNARY_CASE(kSqrt) SY_UNARY_CASE(kNeg)
    SY_UNARY_CASE(kAbs) SY_UNARY_CASE(kReciprocal) SY_UNARY_CASE(kHardSwish)
    SY_UNARY_CASE(kHardSigmoid) SY_UNARY_CASE(kLeakyRelu) SY_UNARY_CASE(kClip)
    SY_UNARY_CASE(kElu) SY_UNARY_CASE(kSoftplus) SY_UNARY_CASE(kGelu) SY_UNARY_CASE(kGeluTanh)
    SY_UNARY_CASE(kSiLU)
#undef SY_UNARY_CASE
  }
  return cudaErrorInvalidValue;
}

template <typename T>
__global__ void ClipDeviceKernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, float lo,
                                 float hi, const T* lo_dev, const T* hi_dev) {
  if (lo_dev) lo = Ld(*lo_dev);
  if (hi_dev) hi = Ld(*hi_dev);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = St<T>(Unary<UnaryOp::kClip>(Ld(x[i]), lo, hi));
  }
}

// ---------------------------------------------------------------------------------------
// Binary
template <BinaryOp OP, typename C>
__device__ __forceinline__ auto Binary(C a, C b) {
  if constexpr (OP == BinaryOp::kAdd) return a + b;
  else if constexpr (OP == BinaryOp::kSub) return a - b;
  else if constexpr (OP == BinaryOp::kMul) return a * b;
  else if constexpr (OP == BinaryOp::kDiv) return a / b;
  else if constexpr (OP == BinaryOp::kPow) return powf(a, b);
  else if constexpr (OP == BinaryOp::kMax) return (isnan(a) || a >= b) ? a : b;  // NaN propagates
  else if constexpr (OP == BinaryOp::kMin) return (isnan(a) || a <= b) ? a : b;
  else if constexpr (OP == BinaryOp::kEqual) return static_cast<uint8_t>(a == b);
  else if constexpr (OP == BinaryOp::kLess) return static_cast<uint8_t>(a < b);
  else return static_cast<uint8_t>(a > b);
}

// Same-shape: y[i] = a[i] op b[i].
template <typename T, typename To, BinaryOp OP, int V>
__global__ void BinSameKernel(const T* __restrict__ a, const T* __restrict__ b, To* __restrict__ y,
                              int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t packs = n / V;
  for (int64_t p = tid; p < packs; p += stride) {
    const Pack<T, V> va = reinterpret_cast<const Pack<T, V>*>(a)[p];
    const Pack<T, V> vb = reinterpret_cast<const Pack<T, V>*>(b)[p];
    Pack<To, V> vy;
#pragma unroll
    for (int j = 0; j < V; ++j) vy.v[j] = St<To>(Binary<OP>(Ld(va.v[j]), Ld(vb.v[j])));
    reinterpret_cast<Pack<To, V>*>(y)[p] = vy;
  }
  for (int64_t i = packs * V + tid; i < n; i += stride) y[i] = St<To>(Binary<OP>(Ld(a[i]), Ld(b[i])));
}

// One operand full, the other indexed by (i / inner) % chan (scalar: chan = 1; row:
// inner = 1; per-channel: [outer, chan, inner]). kFullFirst: full op small.
template <typename T, typename To, BinaryOp OP, bool kFullFirst, int V>
__global__ void BinChanKernel(const T* __restrict__ full, const T* __restrict__ small,
                              To* __restrict__ y, int64_t n, int64_t chan, int64_t inner) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t packs = n / V;
  for (int64_t p = tid; p < packs; p += stride) {
    const int64_t i0 = p * V;
    const Pack<T, V> vf = reinterpret_cast<const Pack<T, V>*>(full)[p];
    Pack<To, V> vy;
    if (V > 1 && inner == 1 && chan > 1) {
      // Row broadcast: chan % V == 0, so the V small values are contiguous.
      const Pack<T, V> vs = *reinterpret_cast<const Pack<T, V>*>(small + i0 % chan);
#pragma unroll
      for (int j = 0; j < V; ++j) {
        vy.v[j] = kFullFirst ? St<To>(Binary<OP>(Ld(vf.v[j]), Ld(vs.v[j])))
                             : St<To>(Binary<OP>(Ld(vs.v[j]), Ld(vf.v[j])));
      }
    } else {
      const auto s = Ld(small[(i0 / inner) % chan]);  // inner % V == 0: one value per pack
#pragma unroll
      for (int j = 0; j < V; ++j) {
        vy.v[j] = kFullFirst ? St<To>(Binary<OP>(Ld(vf.v[j]), s)) : St<To>(Binary<OP>(s, Ld(vf.v[j])));
      }
    }
    reinterpret_cast<Pack<To, V>*>(y)[p] = vy;
  }
  for (int64_t i = packs * V + tid; i < n; i += stride) {
    const auto f = Ld(full[i]);
    const auto s = Ld(small[(i / inner) % chan]);
    y[i] = kFullFirst ? St<To>(Binary<OP>(f, s)) : St<To>(Binary<OP>(s, f));
  }
}

template <typename T, typename To, BinaryOp OP, typename I>
__global__ void BinGeneralKernel(const T* __restrict__ a, const T* __restrict__ b, To* __restrict__ y,
                                 I n, Bcast<2> bc) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I off[2];
    Offsets<2, I>(bc, i, off);
    y[i] = St<To>(Binary<OP>(Ld(a[off[0]]), Ld(b[off[1]])));
  }
}

template <typename T, typename To, BinaryOp OP>
cudaError_t BinaryT(const void* av, const Dims& as, const void* bv, const Dims& bs, void* yv,
                    const Dims& ys, cudaStream_t s) {
  const T* a = static_cast<const T*>(av);
  const T* b = static_cast<const T*>(bv);
  To* y = static_cast<To*>(yv);
  const int64_t n = NumElements(ys);
  if (n == 0) return cudaSuccess;
  constexpr int V = (16 / sizeof(T)) < 8 ? (16 / sizeof(T)) : 8;  // <= 8 lanes (bool outputs)
  const bool vec_ok = Aligned(a, sizeof(T) * V) && Aligned(b, sizeof(T) * V) && Aligned(y, sizeof(To) * V);
  const int64_t na = NumElements(as), nb = NumElements(bs);
  if (na == n && nb == n) {
    if (vec_ok) {
      BinSameKernel<T, To, OP, V><<<GridFor((n + V - 1) / V), kThreads, 0, s>>>(a, b, y, n);
    } else {
      BinSameKernel<T, To, OP, 1><<<GridFor(n), kThreads, 0, s>>>(a, b, y, n);
    }
    return cudaGetLastError();
  }
  Dims shapes[2] = {as, bs};
  Bcast<2> bc;
  if (!MakeBcast<2>(ys, shapes, 2, &bc)) return cudaErrorInvalidValue;
  // Channel pattern: one operand dense, the other's merged strides (0, 1, 0) / (1, 0) /
  // (0, 1) / scalar.
  for (int full = 0; full < 2; ++full) {
    const int sm = 1 - full;
    if ((full == 0 ? na : nb) != n) continue;
    int64_t chan = 1, inner = 1;
    int nonzero = 0;
    bool ok = true;
    for (int d = 0; d < bc.rank; ++d) {
      if (bc.strides[sm][d] != 0) {
        ++nonzero;
        chan = bc.dims[d];
        if (bc.strides[sm][d] != 1) ok = false;
        inner = 1;
        for (int j = d + 1; j < bc.rank; ++j) inner *= bc.dims[j];
      }
    }
    if (!ok || nonzero > 1) continue;
    const T* f = full == 0 ? a : b;
    const T* sp = full == 0 ? b : a;
    const bool vec = vec_ok && (chan == 1 || (inner == 1 ? chan % V == 0 : inner % V == 0));
    const int grid = vec ? GridFor((n + V - 1) / V) : GridFor(n);
    if (full == 0) {
      if (vec) BinChanKernel<T, To, OP, true, V><<<grid, kThreads, 0, s>>>(f, sp, y, n, chan, inner);
      else BinChanKernel<T, To, OP, true, 1><<<grid, kThreads, 0, s>>>(f, sp, y, n, chan, inner);
    } else {
      if (vec) BinChanKernel<T, To, OP, false, V><<<grid, kThreads, 0, s>>>(f, sp, y, n, chan, inner);
      else BinChanKernel<T, To, OP, false, 1><<<grid, kThreads, 0, s>>>(f, sp, y, n, chan, inner);
    }
    return cudaGetLastError();
  }
  if (n < (int64_t{1} << 31)) {
    BinGeneralKernel<T, To, OP, uint32_t><<<GridFor(n), kThreads, 0, s>>>(a, b, y, static_cast<uint32_t>(n), bc);
  } else {
    BinGeneralKernel<T, To, OP, int64_t><<<GridFor(n), kThreads, 0, s>>>(a, b, y, n, bc);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t BinaryArith(BinaryOp op, const void* a, const Dims& as, const void* b, const Dims& bs,
                        void* y, const Dims& ys, cudaStream_t s) {
  switch (op) {
    case BinaryOp::kAdd: return BinaryT<T, T, BinaryOp::kAdd>(a, as, b, bs, y, ys, s);
    case BinaryOp::kSub: return BinaryT<T, T, BinaryOp::kSub>(a, as, b, bs, y, ys, s);
    case BinaryOp::kMul: return BinaryT<T, T, BinaryOp::kMul>(a, as, b, bs, y, ys, s);
    case BinaryOp::kDiv: return BinaryT<T, T, BinaryOp::kDiv>(a, as, b, bs, y, ys, s);
    case BinaryOp::kPow: return BinaryT<T, T, BinaryOp::kPow>(a, as, b, bs, y, ys, s);
    case BinaryOp::kMax: return BinaryT<T, T, BinaryOp::kMax>(a, as, b, bs, y, ys, s);
    case BinaryOp::kMin: return BinaryT<T, T, BinaryOp::kMin>(a, as, b, bs, y, ys, s);
    default: return cudaErrorInvalidValue;
  }
}

template <typename T>
cudaError_t BinaryCompare(BinaryOp op, const void* a, const Dims& as, const void* b, const Dims& bs,
                          void* y, const Dims& ys, cudaStream_t s) {
  switch (op) {
    case BinaryOp::kEqual: return BinaryT<T, uint8_t, BinaryOp::kEqual>(a, as, b, bs, y, ys, s);
    case BinaryOp::kLess: return BinaryT<T, uint8_t, BinaryOp::kLess>(a, as, b, bs, y, ys, s);
    case BinaryOp::kGreater: return BinaryT<T, uint8_t, BinaryOp::kGreater>(a, as, b, bs, y, ys, s);
    default: return cudaErrorInvalidValue;
  }
}

// ---------------------------------------------------------------------------------------
// Where
template <typename U, int V>
__global__ void WhereSameKernel(const uint8_t* __restrict__ c, const U* __restrict__ x,
                                const U* __restrict__ z, U* __restrict__ y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t packs = n / V;
  for (int64_t p = tid; p < packs; p += stride) {
    const Pack<uint8_t, V> vc = reinterpret_cast<const Pack<uint8_t, V>*>(c)[p];
    const Pack<U, V> vx = reinterpret_cast<const Pack<U, V>*>(x)[p];
    const Pack<U, V> vz = reinterpret_cast<const Pack<U, V>*>(z)[p];
    Pack<U, V> vy;
#pragma unroll
    for (int j = 0; j < V; ++j) vy.v[j] = vc.v[j] ? vx.v[j] : vz.v[j];
    reinterpret_cast<Pack<U, V>*>(y)[p] = vy;
  }
  for (int64_t i = packs * V + tid; i < n; i += stride) y[i] = c[i] ? x[i] : z[i];
}

template <typename U, typename I>
__global__ void WhereGeneralKernel(const uint8_t* __restrict__ c, const U* __restrict__ x,
                                   const U* __restrict__ z, U* __restrict__ y, I n, Bcast<3> bc) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I off[3];
    Offsets<3, I>(bc, i, off);
    y[i] = c[off[0]] ? x[off[1]] : z[off[2]];
  }
}

template <typename U>
cudaError_t WhereT(const void* cv, const Dims& cs, const void* xv, const Dims& xs, const void* zv,
                   const Dims& zs, void* yv, const Dims& ys, cudaStream_t s) {
  const uint8_t* c = static_cast<const uint8_t*>(cv);
  const U* x = static_cast<const U*>(xv);
  const U* z = static_cast<const U*>(zv);
  U* y = static_cast<U*>(yv);
  const int64_t n = NumElements(ys);
  if (n == 0) return cudaSuccess;
  if (NumElements(cs) == n && NumElements(xs) == n && NumElements(zs) == n) {
    constexpr int V = 4;
    if (Aligned(c, V) && Aligned(x, sizeof(U) * V) && Aligned(z, sizeof(U) * V) && Aligned(y, sizeof(U) * V)) {
      WhereSameKernel<U, V><<<GridFor((n + V - 1) / V), kThreads, 0, s>>>(c, x, z, y, n);
    } else {
      WhereSameKernel<U, 1><<<GridFor(n), kThreads, 0, s>>>(c, x, z, y, n);
    }
    return cudaGetLastError();
  }
  Dims shapes[3] = {cs, xs, zs};
  Bcast<3> bc;
  if (!MakeBcast<3>(ys, shapes, 3, &bc)) return cudaErrorInvalidValue;
  if (n < (int64_t{1} << 31)) {
    WhereGeneralKernel<U, uint32_t><<<GridFor(n), kThreads, 0, s>>>(c, x, z, y, static_cast<uint32_t>(n), bc);
  } else {
    WhereGeneralKernel<U, int64_t><<<GridFor(n), kThreads, 0, s>>>(c, x, z, y, n, bc);
  }
  return cudaGetLastError();
}

// ---------------------------------------------------------------------------------------
// Cast (kBool is uint8_t here: the only one-byte type the kernels take)
template <typename S, typename D, bool kToBool>
__device__ __forceinline__ D CastOne(S s) {
  if constexpr (kToBool) {
    return static_cast<D>(Ld(s) != 0);
  } else if constexpr (IsFloatLike<S>::value && !IsFloatLike<D>::value) {
    // float -> integer: truncate toward zero, saturate, NaN -> 0.
    const float v = Ld(s);
    if (v != v) return D(0);
    constexpr float kLo = static_cast<float>(std::numeric_limits<D>::lowest());
    constexpr float kHi = static_cast<float>(std::numeric_limits<D>::max());
    if (v <= kLo) return std::numeric_limits<D>::lowest();
    if (v >= kHi) return std::numeric_limits<D>::max();
    return static_cast<D>(v);
  } else if constexpr (IsFloatLike<D>::value) {
    return St<D>(static_cast<float>(Ld(s)));
  } else {
    return static_cast<D>(s);
  }
}

template <typename S, typename D, bool kToBool>
__global__ void CastKernel(const S* __restrict__ x, D* __restrict__ y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = CastOne<S, D, kToBool>(x[i]);
  }
}

template <typename S>
cudaError_t CastFrom(ElemType to, const void* xv, void* yv, int64_t n, cudaStream_t s) {
  const S* x = static_cast<const S*>(xv);
  const int grid = GridFor(n);
  switch (to) {
    case ElemType::kF32: CastKernel<S, float, false><<<grid, kThreads, 0, s>>>(x, static_cast<float*>(yv), n); break;
    case ElemType::kF16: CastKernel<S, __half, false><<<grid, kThreads, 0, s>>>(x, static_cast<__half*>(yv), n); break;
    case ElemType::kBF16: CastKernel<S, __nv_bfloat16, false><<<grid, kThreads, 0, s>>>(x, static_cast<__nv_bfloat16*>(yv), n); break;
    case ElemType::kI32: CastKernel<S, int32_t, false><<<grid, kThreads, 0, s>>>(x, static_cast<int32_t*>(yv), n); break;
    case ElemType::kI64: CastKernel<S, int64_t, false><<<grid, kThreads, 0, s>>>(x, static_cast<int64_t*>(yv), n); break;
    case ElemType::kBool: CastKernel<S, uint8_t, true><<<grid, kThreads, 0, s>>>(x, static_cast<uint8_t*>(yv), n); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchUnary(ElemType t, UnaryOp op, float a, float b, const void* x, void* y, int64_t n,
                        cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (t) {
    case ElemType::kF32: return UnaryDispatch<float>(op, x, y, n, a, b, stream);
    case ElemType::kF16: return UnaryDispatch<__half>(op, x, y, n, a, b, stream);
    case ElemType::kBF16: return UnaryDispatch<__nv_bfloat16>(op, x, y, n, a, b, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchClipDevice(ElemType t, float lo, float hi, const void* lo_dev, const void* hi_dev,
                             const void* x, void* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (t) {
    case ElemType::kF32:
      ClipDeviceKernel<float><<<GridFor(n), kThreads, 0, stream>>>(
          static_cast<const float*>(x), static_cast<float*>(y), n, lo, hi,
          static_cast<const float*>(lo_dev), static_cast<const float*>(hi_dev));
      break;
    case ElemType::kF16:
      ClipDeviceKernel<__half><<<GridFor(n), kThreads, 0, stream>>>(
          static_cast<const __half*>(x), static_cast<__half*>(y), n, lo, hi,
          static_cast<const __half*>(lo_dev), static_cast<const __half*>(hi_dev));
      break;
    case ElemType::kBF16:
      ClipDeviceKernel<__nv_bfloat16><<<GridFor(n), kThreads, 0, stream>>>(
          static_cast<const __nv_bfloat16*>(x), static_cast<__nv_bfloat16*>(y), n, lo, hi,
          static_cast<const __nv_bfloat16*>(lo_dev), static_cast<const __nv_bfloat16*>(hi_dev));
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchBinary(ElemType t, BinaryOp op, const void* a, const Dims& as, const void* b,
                         const Dims& bs, void* y, const Dims& ys, cudaStream_t stream) {
  if (IsCompare(op)) {
    switch (t) {
      case ElemType::kF32: return BinaryCompare<float>(op, a, as, b, bs, y, ys, stream);
      case ElemType::kF16: return BinaryCompare<__half>(op, a, as, b, bs, y, ys, stream);
      case ElemType::kBF16: return BinaryCompare<__nv_bfloat16>(op, a, as, b, bs, y, ys, stream);
      case ElemType::kI32: return BinaryCompare<int32_t>(op, a, as, b, bs, y, ys, stream);
      case ElemType::kI64: return BinaryCompare<int64_t>(op, a, as, b, bs, y, ys, stream);
      case ElemType::kBool: return BinaryCompare<uint8_t>(op, a, as, b, bs, y, ys, stream);
    }
    return cudaErrorInvalidValue;
  }
  switch (t) {
    case ElemType::kF32: return BinaryArith<float>(op, a, as, b, bs, y, ys, stream);
    case ElemType::kF16: return BinaryArith<__half>(op, a, as, b, bs, y, ys, stream);
    case ElemType::kBF16: return BinaryArith<__nv_bfloat16>(op, a, as, b, bs, y, ys, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchWhere(int elem_bytes, const void* cond, const Dims& c_shape, const void* x,
                        const Dims& x_shape, const void* z, const Dims& z_shape, void* y,
                        const Dims& y_shape, cudaStream_t stream) {
  switch (elem_bytes) {
    case 1: return WhereT<uint8_t>(cond, c_shape, x, x_shape, z, z_shape, y, y_shape, stream);
    case 2: return WhereT<uint16_t>(cond, c_shape, x, x_shape, z, z_shape, y, y_shape, stream);
    case 4: return WhereT<uint32_t>(cond, c_shape, x, x_shape, z, z_shape, y, y_shape, stream);
    case 8: return WhereT<uint64_t>(cond, c_shape, x, x_shape, z, z_shape, y, y_shape, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchCast(ElemType from, ElemType to, const void* x, void* y, int64_t n,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (from) {
    case ElemType::kF32: return CastFrom<float>(to, x, y, n, stream);
    case ElemType::kF16: return CastFrom<__half>(to, x, y, n, stream);
    case ElemType::kBF16: return CastFrom<__nv_bfloat16>(to, x, y, n, stream);
    case ElemType::kI32: return CastFrom<int32_t>(to, x, y, n, stream);
    case ElemType::kI64: return CastFrom<int64_t>(to, x, y, n, stream);
    case ElemType::kBool: return CastFrom<uint8_t>(to, x, y, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace switchyard::cuda::kernels
