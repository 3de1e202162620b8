// Seeded evaluation inputs drawn from declared dtypes, shapes and distributions, for
// `bench` and the tuner when no data is given. Deterministic for a given seed and build
// (std::mt19937_64 and libstdc++'s distributions). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "reference/executor.h"

namespace switchyard {

enum class Distribution { kUniform, kNormal, kConstant };

struct InputDecl {
  std::string name;
  DataType dtype = DataType::kFloat;
  std::vector<int64_t> shape;  // concrete
  Distribution distribution = Distribution::kUniform;
  // kUniform: values in [low, high) (integers: rounded down; bool: 1 when at or above the
  // midpoint (low + high) / 2).
  double low = 0, high = 1;
  // kNormal: N(mean, stddev); integers and bool round to nearest (halves away from zero),
  // bool is 1 when the rounded value is non-zero. Integers saturate at the dtype's range.
  double mean = 0, stddev = 1;
  // kConstant: every element is `value` (converted like kNormal's samples).
  double value = 0;
};

// One tensor per decl, in decl order from one generator seeded with `seed`: adding a decl
// at the end never changes the earlier tensors. Errors: unsupported dtype (string),
// non-finite or inconsistent parameters (low > high, stddev < 0), too many elements.
Result<TensorMap> GenerateInputs(const std::vector<InputDecl>& decls, uint64_t seed);

}  // namespace switchyard
