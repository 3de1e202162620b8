// Activations: Relu, LeakyRelu, PRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid, HardSwish,
// Softplus, Softsign, Tanh, ThresholdedRelu, Mish, Gelu, Shrink.
#include <cmath>
#include <string>

#include "reference/ops/binary_kernel.h"
#include "reference/ops/unary_kernel.h"

namespace switchyard::ops {
namespace {

using namespace elem;  // NOLINT: the family's own helpers

constexpr auto kNoInt = nullptr;

// log(1 + exp(x)) without overflow for large |x|.
double Softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

double Sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

double Attr(const KernelContext& ctx, const char* name, float def) {
  return static_cast<double>(ctx.node.GetFloat(name, def));
}

template <unsigned kCls>
Result<std::vector<Tensor>> RunRelu(const KernelContext& ctx) {
  return RunUnaryOp(ctx, kCls, [](double x) { return x < 0 ? 0.0 : x; },  // NaN stays NaN
                    [](auto x) { return x > 0 ? x : decltype(x)(0); });
}

Result<std::vector<Tensor>> RunLeakyRelu(const KernelContext& ctx) {
  const double alpha = Attr(ctx, "alpha", 0.01f);
  return RunUnaryOp(ctx, kFloats, [alpha](double x) { return x >= 0 ? x : alpha * x; }, kNoInt);
}

Result<std::vector<Tensor>> RunElu(const KernelContext& ctx) {
  const double alpha = Attr(ctx, "alpha", 1.0f);
  return RunUnaryOp(
      ctx, kFloats, [alpha](double x) { return x >= 0 ? x : alpha * (std::exp(x) - 1.0); },
      kNoInt);
}

Result<std::vector<Tensor>> RunSelu(const KernelContext& ctx) {
  const double alpha = Attr(ctx, "alpha", 1.67326319217681884765625f);
  const double gamma = Attr(ctx, "gamma", 1.05070102519989013671875f);
  return RunUnaryOp(
      ctx, kFloats,
      [alpha, gamma](double x) { return x > 0 ? gamma * x : gamma * alpha * (std::exp(x) - 1.0); },
      kNoInt);
}

Result<std::vector<Tensor>> RunCelu(const KernelContext& ctx) {
  const double alpha = Attr(ctx, "alpha", 1.0f);
  if (alpha == 0) return NodeError(ctx.node, "alpha must be non-zero");
  return RunUnaryOp(
      ctx, kFloats,
      [alpha](double x) {
        return std::max(0.0, x) + std::min(0.0, alpha * (std::exp(x / alpha) - 1.0));
      },
      kNoInt);
}

Result<std::vector<Tensor>> RunHardSigmoid(const KernelContext& ctx) {
  const double alpha = Attr(ctx, "alpha", 0.2f);
  const double beta = Attr(ctx, "beta", 0.5f);
  return RunUnaryOp(
      ctx, kFloats,
      [alpha, beta](double x) { return std::max(0.0, std::min(1.0, alpha * x + beta)); }, kNoInt);
}

Result<std::vector<Tensor>> RunThresholdedRelu(const KernelContext& ctx) {
  const double alpha = Attr(ctx, "alpha", 1.0f);
  return RunUnaryOp(ctx, kFloats, [alpha](double x) { return x > alpha ? x : 0.0; }, kNoInt);
}

Result<std::vector<Tensor>> RunGelu(const KernelContext& ctx) {
  const std::string approx = ctx.node.GetString("approximate", "none");
  if (approx == "none") {
    return RunUnaryOp(
        ctx, kFloats, [](double x) { return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2)); }, kNoInt);
  }
  if (approx == "tanh") {
    const double k = std::sqrt(2.0 / M_PI);
    return RunUnaryOp(
        ctx, kFloats,
        [k](double x) { return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x))); },
        kNoInt);
  }
  return NodeError(ctx.node, "approximate must be 'none' or 'tanh', got '" + approx + "'");
}

// Shrink takes every numeric type; integers go through double (exact below 2^53).
Result<std::vector<Tensor>> RunShrink(const KernelContext& ctx) {
  const double lambd = Attr(ctx, "lambd", 0.5f);
  const double bias = Attr(ctx, "bias", 0.0f);
  auto f = [lambd, bias](double x) { return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0); };
  return RunUnaryOp(ctx, kNumeric, f, [f](auto x) {
    return FromF<decltype(x)>(f(static_cast<double>(x)));
  });
}

// PRelu: y = x < 0 ? slope * x : x, slope broadcast to x's shape (unidirectionally).
Result<std::vector<Tensor>> RunPRelu(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* s, RequireInput(ctx, 1));
  if (x->dtype() != s->dtype()) {
    return NodeError(ctx.node, std::string("slope has type ") + DataTypeName(s->dtype()) +
                                   " but X is " + DataTypeName(x->dtype()));
  }
  SY_RETURN_IF_ERROR(CheckClass(ctx.node, x->dtype(), kNumeric, "input"));
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastOf(ctx.node, {x, s}));
  if (shape != x->shape()) {
    return NodeError(ctx.node, "slope " + ShapeToString(s->shape()) +
                                   " does not broadcast to X " + ShapeToString(x->shape()));
  }
  Tensor out(x->dtype(), shape);
  Dispatch(x->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      BinaryLoop<T, T, T>(*x, *s, out, [](T a, T b) {
        const double v = ToF(a);
        return FromF<T>(v < 0 ? v * ToF(b) : v);
      });
    } else if constexpr (kIsInt<T>) {
      BinaryLoop<T, T, T>(*x, *s, out, [](T a, T b) { return a < 0 ? WrapMul(a, b) : a; });
    }
  });
  return std::vector<Tensor>{std::move(out)};
}

Result<std::vector<TensorType>> InferPRelu(const InferContext& c) {
  SY_RETURN_IF_ERROR(CheckClass(c.node, InDtype(c, 0), kNumeric, "input"));
  SY_RETURN_IF_ERROR(SameDtype(c, {0, 1}).status());
  const TensorType* x = c.input(0);
  const TensorType* s = c.input(1);
  if (x && s && x->has_shape && s->has_shape) {
    SY_RETURN_IF_ERROR(BroadcastDims(c.node, {x->dims, s->dims}).status());
    if (s->rank() > x->rank()) return NodeError(c.node, "slope has higher rank than X");
  }
  return InferSameAsInput(c, 0);
}

void Reg(OpRegistry& reg, const char* name, std::initializer_list<int> versions, unsigned cls,
         KernelFn run) {
  for (int v : versions) reg.Register({"", name, v, 1, 1, 1, 1, UnaryInfer(cls), run});
}

}  // namespace

SY_REGISTER_OPS(Activation) {
  Reg(reg, "Relu", {6, 13}, kFloats, RunRelu<kFloats>);
  Reg(reg, "Relu", {14}, kFloats | kSignedInts, RunRelu<kFloats | kSignedInts>);
  Reg(reg, "LeakyRelu", {6, 16}, kFloats, RunLeakyRelu);
  Reg(reg, "Elu", {6}, kFloats, RunElu);
  Reg(reg, "Selu", {6}, kFloats, RunSelu);
  Reg(reg, "Celu", {12}, kFloats, RunCelu);
  Reg(reg, "HardSigmoid", {6}, kFloats, RunHardSigmoid);
  Reg(reg, "ThresholdedRelu", {10}, kFloats, RunThresholdedRelu);
  Reg(reg, "Gelu", {20}, kFloats, RunGelu);
  Reg(reg, "Shrink", {9}, kNumeric, RunShrink);
  Reg(reg, "Sigmoid", {6, 13}, kFloats, MakeUnaryKernel(kFloats, Sigmoid, kNoInt));
  Reg(reg, "Tanh", {6, 13}, kFloats,
      MakeUnaryKernel(kFloats, [](double x) { return std::tanh(x); }, kNoInt));
  Reg(reg, "HardSwish", {14}, kFloats,
      MakeUnaryKernel(kFloats, [](double x) { return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5)); },
                      kNoInt));
  Reg(reg, "Softplus", {1}, kFloats, MakeUnaryKernel(kFloats, Softplus, kNoInt));
  Reg(reg, "Softsign", {1}, kFloats,
      MakeUnaryKernel(kFloats, [](double x) { return x / (1.0 + std::fabs(x)); }, kNoInt));
  Reg(reg, "Mish", {18}, kFloats,
      MakeUnaryKernel(kFloats, [](double x) { return x * std::tanh(Softplus(x)); }, kNoInt));
  for (int v : {7, 9, 16}) reg.Register({"", "PRelu", v, 2, 2, 1, 1, InferPRelu, RunPRelu});
}

}  // namespace switchyard::ops
