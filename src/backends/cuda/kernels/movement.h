// Launchers of the CUDA backend's data-movement kernels (Transpose, Concat, Split, Slice,
// Gather, Expand, Pad). They move elements of `elem_bytes` = 1, 2, 4 or 8 bytes, so any
// dtype works. Plain C++ header; the device code lives in movement.cu. Every launcher only
// enqueues work on `stream` and returns the launch error (cudaGetLastError).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/kernels/elementwise.h"  // Dims, kMaxDims

namespace switchyard::cuda::kernels {

// y = transpose(x, perm): y.shape[d] = x.shape[perm[d]]; rank <= kMaxDims.
cudaError_t LaunchTranspose(int elem_bytes, const void* x, const Dims& x_shape, const int* perm,
                            void* y, cudaStream_t stream);

// Concat / Split along an axis of a tensor seen as [outer, parts..., inner]: part k has
// `sizes[k]` entries along the axis. Concat gathers parts[k] into y; Split scatters x
// into parts[k]. Any number of parts.
cudaError_t LaunchConcat(int elem_bytes, const void* const* parts, const int64_t* sizes, int num_parts,
                         int64_t outer, int64_t inner, void* y, cudaStream_t stream);
cudaError_t LaunchSplit(int elem_bytes, const void* x, const int64_t* sizes, int num_parts,
                        int64_t outer, int64_t inner, void* const* parts, cudaStream_t stream);

// Slice: y[c] = x[start + c * step] per dim (x_shape and y_shape of the same rank).
cudaError_t LaunchSlice(int elem_bytes, const void* x, const Dims& x_shape, const int64_t* start,
                        const int64_t* step, void* y, const Dims& y_shape, cudaStream_t stream);

// Gather along an axis: x seen as [outer, axis_dim, inner], indices (num_indices of
// int32 or int64, negative ones wrap, out-of-range ones clamp) -> y [outer, num_indices, inner].
cudaError_t LaunchGather(int elem_bytes, const void* x, int64_t outer, int64_t axis_dim, int64_t inner,
                         const void* indices, bool indices_int64, int64_t num_indices, void* y,
                         cudaStream_t stream);

// Expand: x broadcast (numpy rules) to y_shape.
cudaError_t LaunchExpand(int elem_bytes, const void* x, const Dims& x_shape, void* y,
                         const Dims& y_shape, cudaStream_t stream);

// Pad: y[c] = x[map(c - pads_begin)] per dim; mode 0 constant (fill), 1 edge, 2 reflect,
// 3 wrap. fill_bits holds the constant's element bytes (little-endian); a non-null
// fill_dev (one element on the device) overrides it.
enum class PadMode : int { kConstant = 0, kEdge = 1, kReflect = 2, kWrap = 3 };
cudaError_t LaunchPad(int elem_bytes, PadMode mode, const void* x, const Dims& x_shape,
                      const int64_t* pads_begin, uint64_t fill_bits, const void* fill_dev, void* y,
                      const Dims& y_shape, cudaStream_t stream);

}  // namespace switchyard::cuda::kernels
