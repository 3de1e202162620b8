// Seeded evaluation inputs drawn from declared dtypes and shapes, for `bench` and the
// tuner when no data is given. Deterministic for a given seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "reference/executor.h"

namespace switchyard {

struct InputDecl {
  std::string name;
  DataType dtype = DataType::kFloat;
  std::vector<int64_t> shape;  // concrete
  // Values are uniform in [low, high) (integers: [low, high) rounded down; bool: 0/1).
  double low = 0, high = 1;
};

Result<TensorMap> GenerateInputs(const std::vector<InputDecl>& decls, uint64_t seed);

}  // namespace switchyard
