// Softmax-family ops: Softmax, LogSoftmax, Hardmax (opsets 1, 11 and 13).
#include <cmath>
#include <limits>

#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// Before opset 13 the input is coerced to 2-D [prod(d[:axis]), prod(d[axis:])] and the
// op works on the second dimension; from 13 on it works on the single dimension `axis`.
bool Coerces2D(int since_version) { return since_version < 13; }
int64_t DefaultAxis(int since_version) { return Coerces2D(since_version) ? 1 : -1; }

Status CheckFloat(const Node& node, DataType t) {
  if (t != DataType::kUndefined && !IsFloatType(t)) {
    return NodeError(node, std::string("input must be a floating-point tensor, got ") +
                               DataTypeName(t));
  }
  return Status::Ok();
}

Result<std::vector<TensorType>> InferSoftmax(int since, const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "input 0 is missing");
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, x->dtype));
  if (x->has_shape) {
    const int64_t rank = x->rank();
    const int64_t axis = ctx.node.GetInt("axis", DefaultAxis(since));
    // Opset 1..12 accept axis == rank (an empty second coerced dimension) in principle;
    // we require an existing axis, except for the rank-0 corner nobody uses.
    if (rank == 0) return NodeError(ctx.node, "input must have rank >= 1");
    SY_RETURN_IF_ERROR(NormalizeAxis(ctx.node, axis, rank).status());
  }
  return std::vector<TensorType>{*x};
}

// Applies the op to `x` viewed as [outer, n, inner], reducing over n.
void Apply(SoftmaxKind kind, const std::vector<double>& x, int64_t outer, int64_t n, int64_t inner,
           std::vector<double>& y) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      double mx = -std::numeric_limits<double>::infinity();
      int64_t arg = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double v = x[static_cast<size_t>(base + k * inner)];
        if (v > mx) {  // strict: the first maximum wins (Hardmax spec)
          mx = v;
          arg = k;
        }
      }
      if (kind == SoftmaxKind::kHardmax) {
        for (int64_t k = 0; k < n; ++k) y[static_cast<size_t>(base + k * inner)] = k == arg ? 1 : 0;
        continue;
      }
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(x[static_cast<size_t>(base + k * inner)] - mx);
      const double log_sum = std::log(sum);
      for (int64_t k = 0; k < n; ++k) {
        const size_t p = static_cast<size_t>(base + k * inner);
        y[p] = kind == SoftmaxKind::kSoftmax ? std::exp(x[p] - mx) / sum : x[p] - mx - log_sum;
      }
    }
  }
}

Result<std::vector<Tensor>> RunSoftmax(SoftmaxKind kind, int since, const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, x->dtype()));
  const int64_t rank = x->rank();
  if (rank == 0) return NodeError(ctx.node, "input must have rank >= 1");
  SY_ASSIGN_OR_RETURN(int64_t axis,
                      NormalizeAxis(ctx.node, ctx.node.GetInt("axis", DefaultAxis(since)), rank));
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) {
      outer *= x->dim(d);
    } else if (d == axis || Coerces2D(since)) {
      n *= x->dim(d);
    } else {
      inner *= x->dim(d);
    }
  }
  const std::vector<double> xv = x->ToDoubleVector();
  std::vector<double> yv(xv.size());
  if (n > 0) Apply(kind, xv, outer, n, inner, yv);
  Tensor y(x->dtype(), x->shape());
  for (int64_t i = 0; i < y.numel(); ++i) y.SetDouble(i, yv[static_cast<size_t>(i)]);
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

SY_REGISTER_OPS(Softmax) {
  const std::pair<const char*, SoftmaxKind> ops[] = {
      {"Softmax", SoftmaxKind::kSoftmax}, {"LogSoftmax", SoftmaxKind::kLogSoftmax}, {"Hardmax", SoftmaxKind::kHardmax}};
  for (const auto& [name, kind] : ops) {
    for (int v : {1, 11, 13}) {
      const SoftmaxKind k = kind;
      reg.Register({"", name, v, 1, 1, 1, 1,
                    [v](const InferContext& c) { return InferSoftmax(v, c); },
                    [k, v](const KernelContext& c) { return RunSoftmax(k, v, c); }});
    }
  }
}

}  // namespace switchyard::ops
