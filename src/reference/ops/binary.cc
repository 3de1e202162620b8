// Broadcasting arithmetic: Add, Sub, Mul, Div, Pow, Mod.
#include <cmath>

#include "reference/ops/binary_kernel.h"

namespace switchyard::ops {
namespace {

using namespace elem;  // NOLINT: the family's own helpers

// Both inputs present, same dtype within `cls`; returns the broadcast output tensor.
Result<Tensor> PrepareSameType(const KernelContext& ctx, unsigned cls) {
  SY_ASSIGN_OR_RETURN(const Tensor* a, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* b, RequireInput(ctx, 1));
  if (a->dtype() != b->dtype()) {
    return NodeError(ctx.node, std::string("input types differ: ") + DataTypeName(a->dtype()) +
                                   " vs " + DataTypeName(b->dtype()));
  }
  SY_RETURN_IF_ERROR(CheckClass(ctx.node, a->dtype(), cls, "input"));
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastOf(ctx.node, {a, b}));
  return Tensor(a->dtype(), std::move(shape));
}

// Same-dtype arithmetic. `fop` works on doubles for float types; `iop(x, y, &bad)` on the
// integer type itself (exact), setting `bad` for a zero divisor.
template <typename FOp, typename IOp>
Result<std::vector<Tensor>> RunArith(const KernelContext& ctx, unsigned cls, FOp fop, IOp iop) {
  SY_ASSIGN_OR_RETURN(Tensor out, PrepareSameType(ctx, cls));
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  bool bad = false;
  Dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      BinaryLoop<T, T, T>(a, b, out, [&](T x, T y) { return FromF<T>(fop(ToF(x), ToF(y))); });
    } else if constexpr (kIsInt<T>) {
      BinaryLoop<T, T, T>(a, b, out, [&](T x, T y) { return iop(x, y, &bad); });
    }
  });
  if (bad) return NodeError(ctx.node, "integer division by zero");
  return std::vector<Tensor>{std::move(out)};
}

template <typename T>
T IntDiv(T x, T y, bool* bad) {
  if (y == 0) {
    *bad = true;
    return 0;
  }
  if constexpr (std::is_signed_v<T>) {
    if (y == -1) return WrapNeg(x);  // avoids INT_MIN / -1
  }
  return static_cast<T>(x / y);  // truncates toward zero, like C
}

template <typename T>
T IntMod(T x, T y, bool fmod, bool* bad) {
  if (y == 0) {
    *bad = true;
    return 0;
  }
  if constexpr (std::is_signed_v<T>) {
    if (y == -1) return 0;
    T r = static_cast<T>(x % y);  // sign of the dividend (C fmod)
    if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);  // sign of divisor
    return r;
  } else {
    return static_cast<T>(x % y);
  }
}

Result<std::vector<Tensor>> RunAdd(const KernelContext& ctx) {
  return RunArith(ctx, kNumeric, [](double x, double y) { return x + y; },
                  [](auto x, auto y, bool*) { return WrapAdd(x, y); });
}
Result<std::vector<Tensor>> RunSub(const KernelContext& ctx) {
  return RunArith(ctx, kNumeric, [](double x, double y) { return x - y; },
                  [](auto x, auto y, bool*) { return WrapSub(x, y); });
}
Result<std::vector<Tensor>> RunMul(const KernelContext& ctx) {
  return RunArith(ctx, kNumeric, [](double x, double y) { return x * y; },
                  [](auto x, auto y, bool*) { return WrapMul(x, y); });
}
Result<std::vector<Tensor>> RunDiv(const KernelContext& ctx) {
  return RunArith(ctx, kNumeric, [](double x, double y) { return x / y; },
                  [](auto x, auto y, bool* bad) { return IntDiv(x, y, bad); });
}

Result<std::vector<Tensor>> RunMod(const KernelContext& ctx) {
  const bool fmod = ctx.node.GetInt("fmod", 0) != 0;
  const Tensor* a = ctx.input(0);
  if (!fmod && a && IsFloatType(a->dtype())) {
    return NodeError(ctx.node, "fmod must be 1 for floating-point inputs");
  }
  return RunArith(ctx, kNumeric, [](double x, double y) { return std::fmod(x, y); },
                  [fmod](auto x, auto y, bool* bad) { return IntMod(x, y, fmod, bad); });
}

// Exact integer power with wrap-around; negative exponents truncate like C (1/x^n).
int64_t IntPow(int64_t base, int64_t e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  while (e > 0) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<int64_t>(result);
}

// Pow: base type T, exponent any numeric type; output has the base's type.
Result<std::vector<Tensor>> RunPow(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* a, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* b, RequireInput(ctx, 1));
  SY_RETURN_IF_ERROR(CheckClass(ctx.node, a->dtype(), kNumeric, "base"));
  SY_RETURN_IF_ERROR(CheckClass(ctx.node, b->dtype(), kNumeric, "exponent"));
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastOf(ctx.node, {a, b}));
  Tensor out(a->dtype(), std::move(shape));
  // The exponent travels as double (float types) or int64 (integers) to keep the
  // number of instantiations small; both conversions are exact.
  const bool int_exp = IsIntegerType(b->dtype());
  Tensor e(int_exp ? DataType::kInt64 : DataType::kDouble, b->shape());
  for (int64_t i = 0; i < b->numel(); ++i) {
    if (int_exp) e.data<int64_t>()[i] = b->GetInt64(i);
    else e.data<double>()[i] = b->GetDouble(i);
  }
  Dispatch(a->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T> || kIsInt<T>) {
      if (int_exp) {
        BinaryLoop<T, int64_t, T>(*a, e, out, [](T x, int64_t y) {
          if constexpr (kIsInt<T>) {
            return static_cast<T>(IntPow(static_cast<int64_t>(x), y));
          } else {
            return FromF<T>(std::pow(ToF(x), static_cast<double>(y)));
          }
        });
      } else {
        BinaryLoop<T, double, T>(*a, e, out,
                                 [](T x, double y) { return FromF<T>(std::pow(ToF(x), y)); });
      }
    }
  });
  return std::vector<Tensor>{std::move(out)};
}

InferFn ArithInfer(unsigned cls) {
  return [cls](const InferContext& c) -> Result<std::vector<TensorType>> {
    SY_RETURN_IF_ERROR(CheckClass(c.node, InDtype(c, 0), cls, "input"));
    return InferBroadcast(c);
  };
}

Result<std::vector<TensorType>> InferPow(const InferContext& c) {
  SY_RETURN_IF_ERROR(CheckClass(c.node, InDtype(c, 0), kNumeric, "base"));
  SY_RETURN_IF_ERROR(CheckClass(c.node, InDtype(c, 1), kNumeric, "exponent"));
  return BroadcastTypes(c, {0, 1}, InDtype(c, 0));
}

}  // namespace

SY_REGISTER_OPS(Binary) {
  for (int v : {7, 13, 14}) {
    reg.Register({"", "Add", v, 2, 2, 1, 1, ArithInfer(kNumeric), RunAdd});
    reg.Register({"", "Sub", v, 2, 2, 1, 1, ArithInfer(kNumeric), RunSub});
    reg.Register({"", "Mul", v, 2, 2, 1, 1, ArithInfer(kNumeric), RunMul});
    reg.Register({"", "Div", v, 2, 2, 1, 1, ArithInfer(kNumeric), RunDiv});
  }
  for (int v : {7, 12, 13, 15}) reg.Register({"", "Pow", v, 2, 2, 1, 1, InferPow, RunPow});
  for (int v : {10, 13}) reg.Register({"", "Mod", v, 2, 2, 1, 1, ArithInfer(kNumeric), RunMod});
}

}  // namespace switchyard::ops
