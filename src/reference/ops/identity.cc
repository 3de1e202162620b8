// Identity-like ops: Identity, Dropout (inference mode).
#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

Result<std::vector<Tensor>> RunIdentity(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  return std::vector<Tensor>{*x};
}

// Dropout at inference: output = input, mask all true. Training mode with a non-zero
// ratio draws random numbers, which the reference executor does not do.
Result<std::vector<Tensor>> RunDropout(const KernelContext& ctx, bool mask_like_input) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  double ratio = ctx.node.GetFloat("ratio", 0.5f);
  bool training = false;
  if (const Tensor* r = ctx.input(1)) {
    if (r->numel() != 1) return NodeError(ctx.node, "ratio must be a scalar");
    ratio = r->GetDouble(0);
  }
  if (const Tensor* t = ctx.input(2)) {
    if (t->numel() != 1) return NodeError(ctx.node, "training_mode must be a scalar");
    training = t->GetDouble(0) != 0;
  }
  if (ratio < 0 || ratio >= 1) {
    return NodeError(ctx.node, "ratio must be in [0, 1), got " + std::to_string(ratio));
  }
  if (training && ratio > 0) {
    return NodeUnsupported(ctx.node, "training_mode=true with ratio > 0 (random dropout)");
  }
  std::vector<Tensor> outs{*x};
  if (ctx.num_outputs() > 1) {
    // Dropout-7's mask has the input's type; later versions' is bool.
    const DataType mask_type = mask_like_input ? x->dtype() : DataType::kBool;
    Tensor mask(mask_type, x->shape());
    for (int64_t i = 0; i < mask.numel(); ++i) mask.SetDouble(i, 1.0);
    outs.push_back(std::move(mask));
  }
  return outs;
}

Result<std::vector<TensorType>> InferDropout(const InferContext& c, bool mask_like_input) {
  SY_ASSIGN_OR_RETURN(std::vector<TensorType> t, InferSameAsInput(c, 0));
  if (c.num_outputs() > 1) {
    TensorType mask = t[0];
    if (!mask_like_input) mask.dtype = DataType::kBool;
    t.push_back(mask);
  }
  return t;
}

}  // namespace

SY_REGISTER_OPS(Identity) {
  for (int v : {7, 10, 12, 13}) {
    const bool mask_like_input = v == 7;
    reg.Register({"", "Dropout", v, 1, v >= 12 ? 3 : 1, 1, 2,
                  [=](const InferContext& c) { return InferDropout(c, mask_like_input); },
                  [=](const KernelContext& c) { return RunDropout(c, mask_like_input); }});
  }
  for (int v : {1, 13, 14, 16, 19, 21}) {
    reg.Register({"", "Identity", v, 1, 1, 1, 1,
                  [](const InferContext& c) { return InferSameAsInput(c, 0); }, RunIdentity});
  }
}

}  // namespace switchyard::ops
