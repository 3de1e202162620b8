// Epilogue kernel of the library-backed providers (cublaslt, cudnn): what cuBLASLt /
// cuDNN cannot fuse themselves, applied in place on their output in one pass:
//   y = act(y + bias_scale * bias[channel] + z_scale * z[broadcast])
// with channel = (i / bias_inner) % bias_channels (matmul: inner 1, channels N; NCHW conv:
// inner H*W, channels K; NHWC conv: inner 1, channels K) and z broadcast numpy-style to
// y's shape (z_strides: 0 on the broadcast dims; an NHWC conv passes the storage-order
// dims [N, H, W, K] and z's likewise). y, bias and z share one dtype; arithmetic in float.
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

// Zero-padded copy of a row-major [planes, D, H, W] tensor (1-D/2-D inputs use D = H = 1)
// into [planes, D + pd0 + pd1, H + ph0 + ph1, W + pw0 + pw1]: explicit (possibly
// asymmetric) padding in front of a library convolution that only pads symmetrically.
// An NHWC 2-D input is [N, H, W, C] with planes = N and no padding on the last axis.
struct PadParams {
  const void* x = nullptr;
  void* y = nullptr;
  EpiDtype dtype = EpiDtype::kF32;
  int64_t planes = 0;        // N * C
  int64_t in[3] = {1, 1, 1};  // D, H, W
  int64_t begin[3] = {0, 0, 0}, end[3] = {0, 0, 0};
};
cudaError_t LaunchPadCopy(const PadParams& p, cudaStream_t stream);

}  // namespace switchyard::cuda::kernels
