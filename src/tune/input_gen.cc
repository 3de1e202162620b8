#include "tune/input_gen.h"

#include <cmath>
#include <random>

namespace switchyard {

Result<TensorMap> GenerateInputs(const std::vector<InputDecl>& decls, uint64_t seed) {
  TensorMap out;
  std::mt19937_64 rng(seed);
  for (const InputDecl& d : decls) {
    auto n = CheckedNumElements(d.shape, int64_t{1} << 32);
    if (!n.ok()) return n.status().WithContext("input '" + d.name + "'");
    if (d.dtype == DataType::kString || d.dtype == DataType::kUndefined) {
      return Status::Unsupported("input '" + d.name + "': cannot generate " + DataTypeName(d.dtype) + " data");
    }
    Tensor t(d.dtype, d.shape);
    std::uniform_real_distribution<double> u(d.low, d.high);
    for (int64_t i = 0; i < *n; ++i) {
      const double v = u(rng);
      if (IsFloatType(d.dtype)) t.SetDouble(i, v);
      else if (d.dtype == DataType::kBool) t.SetInt64(i, v >= (d.low + d.high) / 2 ? 1 : 0);
      else t.SetInt64(i, static_cast<int64_t>(std::floor(v)));
    }
    out[d.name] = std::move(t);
  }
  return out;
}

}  // namespace switchyard
