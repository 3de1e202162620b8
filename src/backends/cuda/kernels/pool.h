// Launchers of the CUDA backend's own pooling kernels (kernels/pool.cu): MaxPool and
// AveragePool over 1-3 spatial dims of NCHW-style tensors (one thread per output), and
// GlobalAveragePool / GlobalMaxPool (a row reduction per (n, c) plane); channels-last
// variants of both. Enqueue only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/kernels/norm.h"

namespace switchyard::cuda::nk {

// Window geometry per spatial axis, padded to 3 axes with leading unit axes
// (in = out = k = s = d = 1, no pads).
struct PoolGeom {
  int64_t planes = 1;  // N * C
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1};
  int64_t pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
  bool count_include_pad = false;  // AveragePool's divisor counts positions in the pads
};

// max: MaxPool (-inf where a window sees no input); else AveragePool (0 where the divisor
// is 0).
void LaunchPool(KDType t, bool max, const void* x, void* y, const PoolGeom& g, cudaStream_t stream);

// Global pooling: y[p] = mean (or max) over x[p * spatial, (p + 1) * spatial).
void LaunchGlobalPool(KDType t, bool max, const void* x, void* y, int64_t planes, int64_t spatial,
                      cudaStream_t stream);

// Channels-last (layout.activations=nhwc): x is [planes = N][in D][in H][in W][channels],
// y is [N][out D][out H][out W][channels]; one thread per output pixel and group of
// consecutive channels (16-byte loads when channels and both pointers allow).
void LaunchPoolNhwc(KDType t, bool max, const void* x, void* y, const PoolGeom& g, int64_t channels,
                    cudaStream_t stream);

// Channels-last global pooling: x [n][spatial][channels] -> y [n][channels] (which is
// also the plain [N, C, 1, 1] output); coalesced over channels.
void LaunchGlobalPoolNhwc(KDType t, bool max, const void* x, void* y, int64_t n, int64_t spatial,
                          int64_t channels, cudaStream_t stream);

}  // namespace switchyard::cuda::nk
