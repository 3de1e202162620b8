// Identity-like ops: Identity, Dropout (inference mode).
#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

Result<std::vector<Tensor>> RunIdentity(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  return std::vector<Tensor>{*x};
}

}  // namespace

SY_REGISTER_OPS(Identity) {
  for (int v : {1, 13, 14, 16, 19, 21}) {
    reg.Register({"", "Identity", v, 1, 1, 1, 1,
                  [](const InferContext& c) { return InferSameAsInput(c, 0); }, RunIdentity});
  }
}

}  // namespace switchyard::ops
