// Elementwise unary kernel template shared by the unary math and activation families.
#pragma once

#include <cstddef>
#include <type_traits>

#include "reference/ops/binary_kernel.h"

namespace switchyard::ops::elem {

// out = op(x) with x's dtype within `cls`. Float types go through `fop(double)`; integer
// types through `iop(T) -> T` (exact), or are refused when `iop` is nullptr.
template <typename FOp, typename IOp>
Result<std::vector<Tensor>> RunUnaryOp(const KernelContext& ctx, unsigned cls, const FOp& fop,
                                       const IOp& iop) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_RETURN_IF_ERROR(CheckClass(ctx.node, x->dtype(), cls, "input"));
  Tensor out(x->dtype(), x->shape());
  const int64_t n = x->numel();
  Dispatch(x->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x->data<T>();
    T* o = out.data<T>();
    if constexpr (kIsFloat<T>) {
      for (int64_t i = 0; i < n; ++i) o[i] = FromF<T>(fop(ToF(in[i])));
    } else if constexpr (kIsInt<T> && !std::is_same_v<IOp, std::nullptr_t>) {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(iop(in[i]));
    }
  });
  return std::vector<Tensor>{std::move(out)};
}

template <typename FOp, typename IOp>
KernelFn MakeUnaryKernel(unsigned cls, FOp fop, IOp iop) {
  return [cls, fop, iop](const KernelContext& ctx) { return RunUnaryOp(ctx, cls, fop, iop); };
}

inline InferFn UnaryInfer(unsigned cls) {
  return [cls](const InferContext& c) -> Result<std::vector<TensorType>> {
    const TensorType* t = c.input(0);
    if (t) SY_RETURN_IF_ERROR(CheckClass(c.node, t->dtype, cls, "input"));
    return InferSameAsInput(c, 0);
  };
}

}  // namespace switchyard::ops::elem
