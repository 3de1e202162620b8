// Epilogue kernel of the library-backed providers (cublaslt, cudnn): what cuBLASLt /
// cuDNN cannot fuse themselves, applied in place on their output in one pass:
//   y = act(y + bias_scale * bias[channel] + z_scale * z[broadcast])
// with channel = (i / bias_inner) % bias_channels (matmul: inner 1, channels N; NCHW conv:
// inner H*W, channels K) and z broadcast numpy-style to y's shape (z_strides: 0 on the
// broadcast dims). y, bias and z share one dtype; arithmetic in float.
// Plain C++ header (nvcc and g++ both include it).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace switchyard::cuda::kernels {

// Activation ids: the fused-op activation table (reference/ops/fused_activation.h) plus
// the tanh form of GELU.
enum class EpiAct : int32_t {
  kNone = 0, kRelu, kLeakyRelu, kClip, kSigmoid, kHardSigmoid, kHardSwish, kTanh, kSiLU,
  kGelu,      // exact: 0.5 x (1 + erf(x / sqrt 2))
  kGeluTanh,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
};

enum class EpiDtype : int32_t { kF32 = 0, kF16, kBf16 };

constexpr int kEpiMaxRank = 8;

struct EpilogueParams {
  void* y = nullptr;  // in/out, row-major, `numel` elements
  int64_t numel = 0;
  EpiDtype dtype = EpiDtype::kF32;
  // Per-channel bias (nullptr: none).
  const void* bias = nullptr;
  int64_t bias_inner = 1, bias_channels = 1;
  float bias_scale = 1.f;
  // Residual (nullptr: none). z_full: same element order as y (no broadcast); otherwise
  // `rank` dims of y (out_dims) and z's element strides per dim (0 = broadcast).
  const void* z = nullptr;
  bool z_full = true;
  int rank = 0;
  int64_t out_dims[kEpiMaxRank] = {};
  int64_t z_strides[kEpiMaxRank] = {};
  float z_scale = 1.f;
  EpiAct act = EpiAct::kNone;
  float p0 = 0.f, p1 = 0.f;  // LeakyRelu alpha; Clip min/max; HardSigmoid alpha/beta
};

// Enqueues the epilogue on `stream` (no-op when numel == 0); returns the launch error.
cudaError_t LaunchEpilogue(const EpilogueParams& p, cudaStream_t stream);

}  // namespace switchyard::cuda::kernels
