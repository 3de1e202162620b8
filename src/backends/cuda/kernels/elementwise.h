// Launchers of the CUDA backend's elementwise kernels (unary activations and math, broadcast
// binary ops and comparisons, Where, Cast, switchyard.FusedElementwise). Plain C++ so that
// g++ translation units can include it; the device code lives in elementwise.cu.
// Every launcher only enqueues work on `stream` and returns the launch error
// (cudaGetLastError) so callers can wrap it with CheckLaunch / CudaError.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace switchyard::cuda::kernels {

// Element types the kernels take. kBool is one byte (0 / 1).
enum class ElemType : int { kF32 = 0, kF16 = 1, kBF16 = 2, kI32 = 3, kI64 = 4, kBool = 5 };

constexpr int kMaxDims = 6;  // broadcast / movement rank limit (after dimension merging)

// A row-major shape of rank <= kMaxDims (rank 0 = scalar).
struct Dims {
  int rank = 0;
  int64_t d[kMaxDims] = {0, 0, 0, 0, 0, 0};
};

// --- Unary ---------------------------------------------------------------------------
enum class UnaryOp : int {
  kRelu, kSigmoid, kTanh, kErf, kExp, kLog, kSqrt, kNeg, kAbs, kReciprocal, kHardSwish,
  kHardSigmoid,  // a = alpha, b = beta
  kLeakyRelu,    // a = alpha
  kClip,         // a = min, b = max (NaN stays NaN)
  kElu,          // a = alpha
  kSoftplus,
  kGelu,         // erf form
  kGeluTanh,     // tanh approximation
  kSiLU,
};

// y[i] = op(x[i]) for n elements of a float type (kF32 / kF16 / kBF16), math in float.
cudaError_t LaunchUnary(ElemType t, UnaryOp op, float a, float b, const void* x, void* y,
                        int64_t n, cudaStream_t stream);
// Clip whose bounds live on the device (runtime Clip-11+ inputs, each of type t); a null
// pointer means "use the host bound" (lo / hi).
cudaError_t LaunchClipDevice(ElemType t, float lo, float hi, const void* lo_dev, const void* hi_dev,
                             const void* x, void* y, int64_t n, cudaStream_t stream);

// --- Binary with numpy broadcasting ----------------------------------------------------
enum class BinaryOp : int { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kEqual, kLess, kGreater };
inline bool IsCompare(BinaryOp op) {
  return op == BinaryOp::kEqual || op == BinaryOp::kLess || op == BinaryOp::kGreater;
}
// y = a op b; a, b of type t (float types for arithmetic; float, kI32, kI64 and kBool for
// comparisons, which write kBool). Shapes of any rank <= kMaxDims broadcast to y_shape.
cudaError_t LaunchBinary(ElemType t, BinaryOp op, const void* a, const Dims& a_shape, const void* b,
                         const Dims& b_shape, void* y, const Dims& y_shape, cudaStream_t stream);

// Where: y = cond ? x : z (cond kBool; x, z and y elements of `elem_bytes` = 1, 2, 4 or 8).
cudaError_t LaunchWhere(int elem_bytes, const void* cond, const Dims& c_shape, const void* x,
                        const Dims& x_shape, const void* z, const Dims& z_shape, void* y,
                        const Dims& y_shape, cudaStream_t stream);

// Cast of n elements between any two ElemTypes. Float -> integer truncates toward zero
// and saturates (NaN -> 0); anything -> bool is (v != 0).
cudaError_t LaunchCast(ElemType from, ElemType to, const void* x, void* y, int64_t n,
                       cudaStream_t stream);

// --- switchyard.FusedElementwise ---------------------------------------------------------
constexpr int kMaxFusedLinks = 16;
constexpr int kMaxFusedInputs = 8;
// Link op codes: 0..6 binary (Add Sub Mul Div Pow Max Min, as in the reference's Bin),
// 16+ unary (FusedAct below), as the reference's Activate table.
enum class FusedAct : int {
  kRelu = 16, kLeakyRelu, kClip, kSigmoid, kHardSigmoid, kHardSwish, kTanh, kSiLU, kGelu,
  kErf, kExp, kLog, kSqrt, kNeg, kAbs, kReciprocal,
};
// A chain passed by value to the kernel.
struct FusedChain {
  int num_links = 0;
  int num_inputs = 0;
  int op[kMaxFusedLinks] = {};       // BinaryOp (0..6) or FusedAct
  int operand[kMaxFusedLinks] = {};  // binary: input index
  int swap[kMaxFusedLinks] = {};     // binary: 1 = operand op acc
  float p0[kMaxFusedLinks] = {};     // unary params (LeakyRelu alpha; Clip min,max;
  float p1[kMaxFusedLinks] = {};     //  HardSigmoid alpha,beta)
};
// y (shape y_shape) = chain applied to input 0, every input broadcast to y_shape.
cudaError_t LaunchFusedElementwise(ElemType t, const FusedChain& chain, const void* const* inputs,
                                   const Dims* shapes, void* y, const Dims& y_shape,
                                   cudaStream_t stream);

}  // namespace switchyard::cuda::kernels
