// Launchers of the CUDA backend's own normalisation kernels (kernels/norm.cu): Softmax /
// LogSoftmax, row normalisation (LayerNorm, LayerNormalization, InstanceNormalization)
// and BatchNormalization's inference affine. Plain C++ so that nvcc never sees the rest
// of the code base. Every launcher only enqueues on `stream`; the caller checks the launch
// (CheckLaunch). Element types: float32, float16, bfloat16 (KDType); math in float.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace switchyard::cuda::nk {

// Element type of a kernel's floating tensors (shared by norm/reduce/pool/attention).
enum class KDType : int { kF32 = 0, kF16 = 1, kBF16 = 2 };

// Softmax (log=false) or LogSoftmax (log=true) of x viewed as [outer, n, inner] along n.
void LaunchSoftmax(KDType t, const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
                   bool log, cudaStream_t stream);

// Per-row affine parameters of a row normalisation: element i of row r uses
// gamma[(r % c) * g_rs + i * g_cs] (and likewise beta). gamma/beta may be null (1 / 0).
// LayerNorm: c = 1, g_rs = 0, g_cs = 1 (or 0 for a one-element scale).
// InstanceNormalization: rows are (n, ch) planes, c = C, g_rs = 1, g_cs = 0.
struct RowAffine {
  const void* gamma = nullptr;
  const void* beta = nullptr;
  int64_t c = 1;
  int64_t g_rs = 0, g_cs = 1, b_rs = 0, b_cs = 1;
};

// y = (x - mean) / sqrt(var + eps) * gamma + beta over each row of x viewed as [rows, n]
// (population variance). gamma/beta have the element type of x.
void LaunchRowNorm(KDType t, const void* x, void* y, int64_t rows, int64_t n, const RowAffine& a,
                   float eps, cudaStream_t stream);

// BatchNormalization (inference) of x [n, c, spatial]: y = (x - mean) * scale /
// sqrt(var + eps) + bias per channel; the four parameters have c elements of type `t`.
void LaunchBatchNorm(KDType t, const void* x, void* y, int64_t n, int64_t c, int64_t spatial,
                     const void* scale, const void* bias, const void* mean, const void* var,
                     float eps, cudaStream_t stream);

}  // namespace switchyard::cuda::nk
