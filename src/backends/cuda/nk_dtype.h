// The element type of the nk kernel families (norm, reduce, pool, attention) for a dtype.
#pragma once

#include <optional>

#include "backends/cuda/kernels/norm.h"
#include "ir/dtype.h"

namespace switchyard::cuda {

inline std::optional<nk::KDType> KType(DataType t) {
  switch (t) {
    case DataType::kFloat: return nk::KDType::kF32;
    case DataType::kFloat16: return nk::KDType::kF16;
    case DataType::kBfloat16: return nk::KDType::kBF16;
    default: return std::nullopt;
  }
}

}  // namespace switchyard::cuda
