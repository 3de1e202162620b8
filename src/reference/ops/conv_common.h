// Shared machinery of the windowed ops (Conv, ConvTranspose, pooling) and the dense
// matrix product: attribute reading, output-size rules, fp64 buffers and the GEMM core.
// Spatial geometry is normalised to three dimensions (leading 1s) so that 1-D, 2-D and
// 3-D kernels share one set of loops.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/ops/common.h"

namespace switchyard::ops {

// The window attributes of a node with `nspatial` spatial dimensions.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
};

// Reads strides/dilations/pads/auto_pad/ceil_mode (defaults 1/1/0/NOTSET/0) for the
// given kernel, validating lengths and signs.
Result<Window> ReadWindow(const Node& node, std::vector<int64_t> kernel);

// Output size of spatial dim `i` for input size `in` (< 0: unknown, then returns -1),
// resolving SAME_*/VALID padding into `w` when `in` is known.
Result<int64_t> WindowOutputDim(const Node& node, Window& w, size_t i, int64_t in);
// ConvTranspose's output_padding and output_shape, and the input size of spatial dim `i`
// (-1: not known yet), bounded like the window attributes: each in [0, 2^31) (output_shape
// in [1, 2^31)), so the size arithmetic cannot overflow. Errors name the attribute.
Status CheckTransposeSizes(const Node& node, const std::vector<int64_t>& out_pad,
                           const std::vector<int64_t>& out_shape, size_t i, int64_t in);

// Spatial geometry normalised to 3-D: in/kernel/stride/dilation/pads/out per axis.
struct Geometry3 {
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1};
  int64_t pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0}, out[3] = {1, 1, 1};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};
// Requires at most 3 spatial dims (error otherwise).
Result<Geometry3> MakeGeometry3(const Node& node, const Window& w,
                                const std::vector<int64_t>& in_spatial,
                                const std::vector<int64_t>& out_spatial);

// Tensor contents as doubles (fast path for float32/float64).
std::vector<double> ToDoubles(const Tensor& t);
// Stores doubles into `t` (same element count), casting to its dtype.
void StoreDoubles(Tensor& t, const double* v);

// C[M x N] += A[M x K] * B[K x N], all row-major with leading dimensions lda/ldb/ldc.
void GemmAccumulate(const double* a, int64_t lda, const double* b, int64_t ldb, double* c,
                    int64_t ldc, int64_t m, int64_t n, int64_t k);

// Plain grouped convolution without bias: x is [N, C, D, H, W], w is [M, C/G, KD, KH, KW];
// returns [N, M, OD, OH, OW].
std::vector<double> ConvCore(const double* x, const double* w, int64_t n, int64_t c,
                             int64_t m, int64_t group, const Geometry3& g);

// Shape inference shared by Conv, ConvInteger and QLinearConv: x/w are the input types,
// output dtype `out`.
Result<TensorType> InferConvShape(const Node& node, const TensorType* x, const TensorType* w,
                                  DataType out);

// Everything a conv-like kernel needs after validating static shapes at run time.
struct ConvPlan {
  int64_t n = 0, c = 0, m = 0, group = 1;
  Geometry3 g;
  std::vector<int64_t> out_shape;
};
Result<ConvPlan> PlanConv(const Node& node, const Tensor& x, const Tensor& w);

bool IsFloatingDtype(DataType t);

// numpy matmul: 1-D promotion and batch broadcasting. Output shape / inferred type.
Result<std::vector<int64_t>> MatMulShape(const Node& node, const std::vector<int64_t>& a,
                                         const std::vector<int64_t>& b);
Result<TensorType> InferMatMulType(const Node& node, const TensorType* a, const TensorType* b,
                                   DataType out);
// Product of a (shape `as`) and b (shape `bs`) into a buffer of shape MatMulShape(as, bs).
std::vector<double> MatMulCore(const double* a, const std::vector<int64_t>& as,
                               const double* b, const std::vector<int64_t>& bs);

}  // namespace switchyard::ops
