// Helpers shared by the reference op families: error text, axes, broadcasting, strides,
// and the common inference rules. Everything here is pure and thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "reference/op_registry.h"
#include "switchyard/status.h"

namespace switchyard::ops {

// "Conv node 'conv1' (Conv-11): <msg>" as an invalid-argument status.
Status NodeError(const Node& node, const std::string& msg);
Status NodeUnsupported(const Node& node, const std::string& msg);

// Maps a possibly negative axis into [0, rank); error naming the node if out of range.
Result<int64_t> NormalizeAxis(const Node& node, int64_t axis, int64_t rank);

// Numpy-style broadcast of static shapes / of symbolic dims.
Result<std::vector<int64_t>> BroadcastShapes(const Node& node,
                                             const std::vector<std::vector<int64_t>>& shapes);
Result<std::vector<Dim>> BroadcastDims(const Node& node,
                                       const std::vector<std::vector<Dim>>& shapes);

std::vector<int64_t> Strides(const std::vector<int64_t>& shape);  // row-major, in elements

// For each element of `out_shape` (row-major), the linear index into a tensor of shape
// `in_shape` broadcast to `out_shape`.
std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& in_shape,
                                    const std::vector<int64_t>& out_shape);

// Advances a multi-index over `shape` in row-major order; false after the last element.
bool NextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& shape);

// --- inference helpers ---------------------------------------------------------------
// Error unless inputs `idx` (those present) all share one dtype; returns that dtype.
Result<DataType> SameDtype(const InferContext& ctx, const std::vector<size_t>& idx);
// Output 0 = input i's type.
Result<std::vector<TensorType>> InferSameAsInput(const InferContext& ctx, size_t i = 0);
// Output 0 = broadcast of all present inputs' shapes, with dtype `out` (or the common
// input dtype when out == kUndefined, requiring all inputs to agree).
Result<std::vector<TensorType>> InferBroadcast(const InferContext& ctx,
                                               DataType out = DataType::kUndefined);
// The values of a constant int tensor input, if the input is a constant.
bool ConstantInts(const InferContext& ctx, size_t i, std::vector<int64_t>* out);

// --- kernel helpers ------------------------------------------------------------------
// dst[i] = src[map[i]] for every element of dst; same dtype (strings included).
void GatherByMap(const Tensor& src, const std::vector<int64_t>& map, Tensor& dst);

// Error unless input i is present.
Result<const Tensor*> RequireInput(const KernelContext& ctx, size_t i);

// A tensor of dtype `dt` and `shape` holding `v` (one value per element, row-major).
Tensor FromDoubles(DataType dt, std::vector<int64_t> shape, const std::vector<double>& v);

}  // namespace switchyard::ops
