// Type conversion: Cast, CastLike (numeric, bool and string <-> number).
#include <charconv>
#include <cstdlib>
#include <string>

#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

// Shortest text that reads back as the same value (numpy's str() of a float32/float64).
template <typename F>
std::string FloatText(F v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

Result<double> ParseNumber(const Node& node, const std::string& s) {
  const char* begin = s.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);  // accepts INF, +INF, -INF, NaN, 1e-5 ...
  if (end == begin || *end != '\0') {
    return NodeError(node, "cannot convert string '" + s + "' to a number");
  }
  return v;
}

Result<Tensor> CastTensor(const Node& node, const Tensor& x, DataType to) {
  if (to == DataType::kUndefined || !IsKnownDataType(static_cast<int32_t>(to))) {
    return NodeUnsupported(node, "cast to type " + std::to_string(static_cast<int>(to)) +
                                     " is not supported");
  }
  if (x.dtype() == to) return x;
  Tensor out(to, x.shape());
  const int64_t n = x.numel();
  const DataType from = x.dtype();
  if (to == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) {
      std::string& s = out.strings()[static_cast<size_t>(i)];
      if (from == DataType::kDouble) {
        s = FloatText(x.data<double>()[i]);
      } else if (IsFloatType(from)) {
        s = FloatText(static_cast<float>(x.GetDouble(i)));
      } else if (from == DataType::kBool) {
        s = x.data<bool>()[i] ? "True" : "False";
      } else if (from == DataType::kUint64) {
        s = std::to_string(x.data<uint64_t>()[i]);
      } else {
        s = std::to_string(x.GetInt64(i));
      }
    }
    return out;
  }
  if (from == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) {
      const std::string& s = x.strings()[static_cast<size_t>(i)];
      if (IsIntegerType(to)) {
        // Integers parse exactly (a double would lose bits above 2^53).
        const char* begin = s.c_str();
        char* end = nullptr;
        if (to == DataType::kUint64) {
          out.data<uint64_t>()[i] = std::strtoull(begin, &end, 10);
        } else {
          out.SetInt64(i, std::strtoll(begin, &end, 10));
        }
        if (end != begin && *end == '\0') continue;
      }
      SY_ASSIGN_OR_RETURN(double v, ParseNumber(node, s));
      out.SetDouble(i, v);
    }
    return out;
  }
  const bool int_like_from = IsIntegerType(from) || from == DataType::kBool;
  const bool int_like_to = IsIntegerType(to) || to == DataType::kBool;
  if (int_like_from && int_like_to) {
    // Exact, wrapping like C++ integral conversions (uint64 <-> int64 keep their bits).
    for (int64_t i = 0; i < n; ++i) out.SetInt64(i, x.GetInt64(i));
  } else {
    // Float targets round to nearest; integer targets truncate toward zero and saturate.
    for (int64_t i = 0; i < n; ++i) out.SetDouble(i, x.GetDouble(i));
  }
  return out;
}

Result<std::vector<Tensor>> RunCast(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (!ctx.node.Has("to")) return NodeError(ctx.node, "missing attribute 'to'");
  const auto to = static_cast<DataType>(ctx.node.GetInt("to", 0));
  SY_ASSIGN_OR_RETURN(Tensor out, CastTensor(ctx.node, *x, to));
  return std::vector<Tensor>{std::move(out)};
}

Result<std::vector<Tensor>> RunCastLike(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* like, RequireInput(ctx, 1));
  SY_ASSIGN_OR_RETURN(Tensor out, CastTensor(ctx.node, *x, like->dtype()));
  return std::vector<Tensor>{std::move(out)};
}

Result<std::vector<TensorType>> InferCast(const InferContext& c) {
  if (!c.node.Has("to")) return NodeError(c.node, "missing attribute 'to'");
  const int64_t to = c.node.GetInt("to", 0);
  if (to <= 0 || to > 1000 || !IsKnownDataType(static_cast<int32_t>(to))) {
    return NodeUnsupported(c.node, "cast to type " + std::to_string(to) + " is not supported");
  }
  SY_ASSIGN_OR_RETURN(std::vector<TensorType> t, InferSameAsInput(c, 0));
  t[0].dtype = static_cast<DataType>(to);
  return t;
}

Result<std::vector<TensorType>> InferCastLike(const InferContext& c) {
  SY_ASSIGN_OR_RETURN(std::vector<TensorType> t, InferSameAsInput(c, 0));
  const TensorType* like = c.input(1);
  t[0].dtype = like ? like->dtype : DataType::kUndefined;
  return t;
}

}  // namespace

SY_REGISTER_OPS(Cast) {
  for (int v : {6, 9, 13, 19, 21}) reg.Register({"", "Cast", v, 1, 1, 1, 1, InferCast, RunCast});
  for (int v : {15, 19, 21}) {
    reg.Register({"", "CastLike", v, 2, 2, 1, 1, InferCastLike, RunCastLike});
  }
}

}  // namespace switchyard::ops
