// Variadic broadcasting reductions over inputs: Sum, Max, Min, Mean.
#include <cmath>

#include "reference/ops/binary_kernel.h"

namespace switchyard::ops {
namespace {

using namespace elem;  // NOLINT: the family's own helpers

// acc[o] = op(acc[o], load(in[i])) for `in` broadcast to `out_shape` (acc is dense).
template <typename A, typename T, typename Load, typename Op>
void FoldInto(A* acc, const std::vector<int64_t>& out_shape, const Tensor& in, Load load,
              Op op) {
  const T* p = in.data<T>();
  BroadcastPlan plan({in.shape()}, out_shape);
  plan.ForEachRow([&](int64_t o, const int64_t* off, const int64_t* st, int64_t n) {
    const T* r = p + off[0];
    for (int64_t i = 0; i < n; ++i) acc[o + i] = op(acc[o + i], load(r[i * st[0]]));
  });
}

enum class VariadicKind { kSum, kMax, kMin, kMean };

Result<std::vector<Tensor>> RunVariadic(const KernelContext& ctx, VariadicKind kind, unsigned cls) {
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    SY_ASSIGN_OR_RETURN(const Tensor* t, RequireInput(ctx, i));
    if (!ins.empty() && t->dtype() != ins[0]->dtype()) {
      return NodeError(ctx.node, "input " + std::to_string(i) + " has type " +
                                     DataTypeName(t->dtype()) + " but input 0 has type " +
                                     DataTypeName(ins[0]->dtype()));
    }
    ins.push_back(t);
  }
  if (ins.empty()) return NodeError(ctx.node, "needs at least one input");
  SY_RETURN_IF_ERROR(CheckClass(ctx.node, ins[0]->dtype(), cls, "input"));
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastOf(ctx.node, ins));
  Tensor out(ins[0]->dtype(), shape);
  const int64_t n = out.numel();
  Dispatch(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      // Accumulate in fp64, round once.
      std::vector<double> acc(static_cast<size_t>(n));
      auto load = [](T v) { return ToF(v); };
      FoldInto<double, T>(acc.data(), shape, *ins[0], load, [](double, double v) { return v; });
      for (size_t k = 1; k < ins.size(); ++k) {
        switch (kind) {
          case VariadicKind::kSum:
          case VariadicKind::kMean:
            FoldInto<double, T>(acc.data(), shape, *ins[k], load,
                                [](double a, double v) { return a + v; });
            break;
          case VariadicKind::kMax:  // NaN propagates, as in numpy
            FoldInto<double, T>(acc.data(), shape, *ins[k], load, [](double a, double v) {
              return (std::isnan(a) || a >= v) ? a : v;
            });
            break;
          case VariadicKind::kMin:
            FoldInto<double, T>(acc.data(), shape, *ins[k], load, [](double a, double v) {
              return (std::isnan(a) || a <= v) ? a : v;
            });
            break;
        }
      }
      const double scale = kind == VariadicKind::kMean ? 1.0 / static_cast<double>(ins.size()) : 1.0;
      T* o = out.data<T>();
      for (int64_t i = 0; i < n; ++i) o[i] = FromF<T>(acc[static_cast<size_t>(i)] * scale);
    } else if constexpr (kIsInt<T>) {
      T* o = out.data<T>();
      auto load = [](T v) { return v; };
      FoldInto<T, T>(o, shape, *ins[0], load, [](T, T v) { return v; });
      for (size_t k = 1; k < ins.size(); ++k) {
        switch (kind) {
          case VariadicKind::kSum:
          case VariadicKind::kMean:
            FoldInto<T, T>(o, shape, *ins[k], load, [](T a, T v) { return WrapAdd(a, v); });
            break;
          case VariadicKind::kMax:
            FoldInto<T, T>(o, shape, *ins[k], load, [](T a, T v) { return a >= v ? a : v; });
            break;
          case VariadicKind::kMin:
            FoldInto<T, T>(o, shape, *ins[k], load, [](T a, T v) { return a <= v ? a : v; });
            break;
        }
      }
    }
  });
  return std::vector<Tensor>{std::move(out)};
}

template <VariadicKind kKind, unsigned kCls>
Result<std::vector<Tensor>> Run(const KernelContext& ctx) {
  return RunVariadic(ctx, kKind, kCls);
}

template <unsigned kCls>
Result<std::vector<TensorType>> Infer(const InferContext& c) {
  SY_RETURN_IF_ERROR(CheckClass(c.node, InDtype(c, 0), kCls, "input"));
  return InferBroadcast(c);
}

}  // namespace

SY_REGISTER_OPS(Variadic) {
  // Opset 6 had no broadcasting; broadcasting is a strict superset of it.
  for (int v : {6, 8, 13}) {
    reg.Register({"", "Sum", v, 1, -1, 1, 1, Infer<kNumeric>, Run<VariadicKind::kSum, kNumeric>});
    reg.Register({"", "Mean", v, 1, -1, 1, 1, Infer<kFloats>, Run<VariadicKind::kMean, kFloats>});
  }
  for (int v : {6, 8, 12, 13}) {
    reg.Register({"", "Max", v, 1, -1, 1, 1, Infer<kNumeric>, Run<VariadicKind::kMax, kNumeric>});
    reg.Register({"", "Min", v, 1, -1, 1, 1, Infer<kNumeric>, Run<VariadicKind::kMin, kNumeric>});
  }
}

}  // namespace switchyard::ops
