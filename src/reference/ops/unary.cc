// Unary math: Abs, Neg, Exp, Log, Sqrt, Reciprocal, Floor, Ceil, Round, Sign,
// trigonometric and hyperbolic functions, Erf, IsNaN, IsInf, Clip.
#include <cmath>
#include <limits>

#include "reference/ops/binary_kernel.h"
#include "reference/ops/unary_kernel.h"

namespace switchyard::ops {
namespace {

using namespace elem;  // NOLINT: the family's own helpers

// Registers one unary op at each of `versions`.
template <typename FOp, typename IOp>
void RegisterUnary(OpRegistry& reg, const char* name, std::initializer_list<int> versions,
                   unsigned cls, FOp fop, IOp iop) {
  for (int v : versions) {
    reg.Register({"", name, v, 1, 1, 1, 1, UnaryInfer(cls), MakeUnaryKernel(cls, fop, iop)});
  }
}

// IsNaN / IsInf: float input, bool output.
template <typename Pred>
KernelFn MakeFloatPredicate(Pred pred) {
  return [pred](const KernelContext& ctx) -> Result<std::vector<Tensor>> {
    SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
    SY_RETURN_IF_ERROR(CheckClass(ctx.node, x->dtype(), kFloats, "input"));
    Tensor out(DataType::kBool, x->shape());
    bool* o = out.data<bool>();
    Dispatch(x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloat<T>) {
        const T* in = x->data<T>();
        for (int64_t i = 0; i < x->numel(); ++i) o[i] = pred(ToF(in[i]), ctx.node);
      }
    });
    return std::vector<Tensor>{std::move(out)};
  };
}

Result<std::vector<TensorType>> InferFloatPredicate(const InferContext& c) {
  SY_RETURN_IF_ERROR(CheckClass(c.node, InDtype(c, 0), kFloats, "input"));
  SY_ASSIGN_OR_RETURN(std::vector<TensorType> t, InferSameAsInput(c, 0));
  t[0].dtype = DataType::kBool;
  return t;
}

// Clip bounds as one element of the input's type: from attributes (Clip-6) or from
// optional scalar inputs (Clip-11+).
Result<std::vector<Tensor>> RunClip(const KernelContext& ctx, bool from_attrs, unsigned cls) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_RETURN_IF_ERROR(CheckClass(ctx.node, x->dtype(), cls, "input"));
  const Tensor* bounds[2] = {nullptr, nullptr};
  Tensor attr_bounds[2];
  if (from_attrs) {
    const float lo = ctx.node.GetFloat("min", std::numeric_limits<float>::lowest());
    const float hi = ctx.node.GetFloat("max", std::numeric_limits<float>::max());
    attr_bounds[0] = Tensor::Scalar(x->dtype(), lo);
    attr_bounds[1] = Tensor::Scalar(x->dtype(), hi);
    bounds[0] = &attr_bounds[0];
    bounds[1] = &attr_bounds[1];
  } else {
    for (size_t k = 0; k < 2; ++k) {
      const Tensor* t = ctx.input(k + 1);
      if (!t) continue;
      if (t->dtype() != x->dtype()) {
        return NodeError(ctx.node, std::string(k ? "max" : "min") + " has type " +
                                       DataTypeName(t->dtype()) + " but input is " +
                                       DataTypeName(x->dtype()));
      }
      if (t->numel() != 1) {
        return NodeError(ctx.node, std::string(k ? "max" : "min") + " must be a scalar, got " +
                                       ShapeToString(t->shape()));
      }
      bounds[k] = t;
    }
  }
  Tensor out(x->dtype(), x->shape());
  Dispatch(x->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      const double lo = bounds[0] ? bounds[0]->GetDouble(0) : -INFINITY;
      const double hi = bounds[1] ? bounds[1]->GetDouble(0) : INFINITY;
      const T* in = x->data<T>();
      T* o = out.data<T>();
      // max-then-min: NaN stays NaN, and min > max gives max, as the spec says.
      for (int64_t i = 0; i < x->numel(); ++i) {
        o[i] = FromF<T>(std::min(std::max(ToF(in[i]), lo), hi));
      }
    } else if constexpr (kIsInt<T>) {
      const T lo = bounds[0] ? bounds[0]->data<T>()[0] : std::numeric_limits<T>::lowest();
      const T hi = bounds[1] ? bounds[1]->data<T>()[0] : std::numeric_limits<T>::max();
      const T* in = x->data<T>();
      T* o = out.data<T>();
      for (int64_t i = 0; i < x->numel(); ++i) o[i] = std::min(std::max(in[i], lo), hi);
    }
  });
  return std::vector<Tensor>{std::move(out)};
}

Result<std::vector<TensorType>> InferClip(const InferContext& c) {
  SY_RETURN_IF_ERROR(CheckClass(c.node, InDtype(c, 0), kNumeric, "input"));
  SY_RETURN_IF_ERROR(SameDtype(c, {0, 1, 2}).status());
  return InferSameAsInput(c, 0);
}

}  // namespace

SY_REGISTER_OPS(Unary) {
  constexpr auto kNoInt = nullptr;
  RegisterUnary(reg, "Abs", {6, 13}, kNumeric, [](double x) { return std::fabs(x); },
                [](auto x) {
                  if constexpr (std::is_signed_v<decltype(x)>) return x < 0 ? WrapNeg(x) : x;
                  else return x;
                });
  RegisterUnary(reg, "Neg", {6, 13}, kFloats | kSignedInts, [](double x) { return -x; },
                [](auto x) { return WrapNeg(x); });
  RegisterUnary(reg, "Sign", {9, 13}, kNumeric,
                [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); },
                [](auto x) { return static_cast<decltype(x)>((x > 0) - (x < 0)); });
  RegisterUnary(reg, "Exp", {6, 13}, kFloats, [](double x) { return std::exp(x); }, kNoInt);
  RegisterUnary(reg, "Log", {6, 13}, kFloats, [](double x) { return std::log(x); }, kNoInt);
  RegisterUnary(reg, "Sqrt", {6, 13}, kFloats, [](double x) { return std::sqrt(x); }, kNoInt);
  RegisterUnary(reg, "Reciprocal", {6, 13}, kFloats, [](double x) { return 1.0 / x; }, kNoInt);
  RegisterUnary(reg, "Floor", {6, 13}, kFloats, [](double x) { return std::floor(x); }, kNoInt);
  RegisterUnary(reg, "Ceil", {6, 13}, kFloats, [](double x) { return std::ceil(x); }, kNoInt);
  // Round half to even (the default floating-point rounding mode).
  RegisterUnary(reg, "Round", {11}, kFloats, [](double x) { return std::nearbyint(x); }, kNoInt);
  RegisterUnary(reg, "Sin", {7}, kFloats, [](double x) { return std::sin(x); }, kNoInt);
  RegisterUnary(reg, "Cos", {7}, kFloats, [](double x) { return std::cos(x); }, kNoInt);
  RegisterUnary(reg, "Tan", {7}, kFloats, [](double x) { return std::tan(x); }, kNoInt);
  RegisterUnary(reg, "Asin", {7}, kFloats, [](double x) { return std::asin(x); }, kNoInt);
  RegisterUnary(reg, "Acos", {7}, kFloats, [](double x) { return std::acos(x); }, kNoInt);
  RegisterUnary(reg, "Atan", {7}, kFloats, [](double x) { return std::atan(x); }, kNoInt);
  RegisterUnary(reg, "Sinh", {9}, kFloats, [](double x) { return std::sinh(x); }, kNoInt);
  RegisterUnary(reg, "Cosh", {9}, kFloats, [](double x) { return std::cosh(x); }, kNoInt);
  RegisterUnary(reg, "Asinh", {9}, kFloats, [](double x) { return std::asinh(x); }, kNoInt);
  RegisterUnary(reg, "Acosh", {9}, kFloats, [](double x) { return std::acosh(x); }, kNoInt);
  RegisterUnary(reg, "Atanh", {9}, kFloats, [](double x) { return std::atanh(x); }, kNoInt);
  RegisterUnary(reg, "Erf", {9, 13}, kFloats, [](double x) { return std::erf(x); }, kNoInt);

  const KernelFn is_nan = MakeFloatPredicate([](double x, const Node&) { return std::isnan(x); });
  for (int v : {9, 13, 20}) {
    reg.Register({"", "IsNaN", v, 1, 1, 1, 1, InferFloatPredicate, is_nan});
  }
  const KernelFn is_inf = MakeFloatPredicate([](double x, const Node& n) {
    if (!std::isinf(x)) return false;
    return x > 0 ? n.GetInt("detect_positive", 1) != 0 : n.GetInt("detect_negative", 1) != 0;
  });
  for (int v : {10, 20}) reg.Register({"", "IsInf", v, 1, 1, 1, 1, InferFloatPredicate, is_inf});

  reg.Register({"", "Clip", 6, 1, 1, 1, 1, InferClip,
                [](const KernelContext& c) { return RunClip(c, true, kFloats); }});
  reg.Register({"", "Clip", 11, 1, 3, 1, 1, InferClip,
                [](const KernelContext& c) { return RunClip(c, false, kFloats); }});
  for (int v : {12, 13}) {
    reg.Register({"", "Clip", v, 1, 3, 1, 1, InferClip,
                  [](const KernelContext& c) { return RunClip(c, false, kNumeric); }});
  }
}

}  // namespace switchyard::ops
