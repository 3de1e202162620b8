// Helpers the library-backed CUDA providers (cublaslt.cc, cudnn.cc) share: activation and
// dtype mapping for the epilogue kernel, the heuristic-rank variant, constant conversion
// and the broadcast description of a residual.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/op_impl.h"
#include "backends/cuda/kernels/epilogue.h"
#include "ir/tensor.h"
#include "reference/ops/fused_activation.h"

namespace switchyard::cuda {

// The epilogue kernel's activation for `a`; false when it has none.
bool ActToEpi(ops::Act a, kernels::EpiAct* out);
kernels::EpiDtype ToEpiDtype(DataType t);
int64_t Numel(const std::vector<int64_t>& shape);
// "rank1".."rank3" -> 1..3; "" (auto) -> 0.
int RankOf(const std::string& variant);
// A constant converted to `dt` (same shape), optionally scaled.
Tensor ConvertConstant(const Tensor& t, DataType dt, double scale = 1.0);
// Broadcast description of `z` against `out` for the epilogue kernel; false when `z` does
// not broadcast to `out` or the rank is over the kernel's limit.
bool FillBroadcast(const std::vector<int64_t>& z, const std::vector<int64_t>& out,
                   kernels::EpilogueParams* p);
// Inputs 0 and 1 given, every given input of one float dtype (float32, float16, bfloat16)
// and a static shape: that dtype, else an Unsupported error naming the node and
// `provider` ("cublaslt: A and B are required" with required = "A and B").
Result<DataType> CommonFloatInputs(const Node& node, const std::vector<std::vector<int64_t>>& shapes,
                                   const std::vector<DataType>& dtypes, const std::string& provider,
                                   const std::string& required);
// The build-time constant of input `i`, or nullptr.
const Tensor* ConstantInput(const KernelBuildContext& ctx, size_t i);

}  // namespace switchyard::cuda
