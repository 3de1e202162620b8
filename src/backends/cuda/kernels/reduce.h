// Launchers of the CUDA backend's own reduction kernels (kernels/reduce.cu): ReduceSum,
// ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum over any set of axes of a tensor of up to 8 dims, and the row reduction
// GlobalAveragePool/GlobalMaxPool use. Enqueue only; the caller checks the launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/kernels/norm.h"

namespace switchyard::cuda::nk {

enum class ReduceOp : int { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum };

constexpr int kMaxReduceRank = 8;

// Reduces x of shape dims[0..rank) over the dims with reduced[d] true into y (row-major
// over the kept dims; keepdims does not change the layout). Adjacent dims of the same
// kind are merged first; a trailing reduced block takes the row kernel, anything else
// one thread per output. No-op for empty tensors. rank <= kMaxReduceRank.
void LaunchReduce(KDType t, ReduceOp op, const void* x, void* y, const int64_t* dims,
                  const bool* reduced, int rank, cudaStream_t stream);

// y[r] = op over x[r * n .. r * n + n) for r < rows (x viewed as [rows, n]).
void LaunchReduceRows(KDType t, ReduceOp op, const void* x, void* y, int64_t rows, int64_t n,
                      cudaStream_t stream);

}  // namespace switchyard::cuda::nk
