// Loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12 and 13).
#include <cmath>
#include <limits>
#include <optional>

#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

enum class Reduction { kNone, kSum, kMean };

Result<Reduction> GetReduction(const Node& node) {
  const std::string r = node.GetString("reduction", "mean");
  if (r == "none") return Reduction::kNone;
  if (r == "sum") return Reduction::kSum;
  if (r == "mean") return Reduction::kMean;
  return NodeError(node, "reduction must be none, sum or mean, got '" + r + "'");
}

// Input 0 is [N, C, d1...]; input 1 (target) is [N, d1...] of int32/int64; input 2 an
// optional [C] weight. Output 0 is [N, d1...] (reduction none) or a scalar; output 1
// (SoftmaxCrossEntropyLoss only) has input 0's type.
Result<std::vector<TensorType>> InferLoss(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  const TensorType* t = ctx.input(1);
  if (!x || !t) return NodeError(ctx.node, "inputs 0 and 1 are required");
  if (x->dtype != DataType::kUndefined && !IsFloatType(x->dtype)) {
    return NodeError(ctx.node, std::string("input 0 must be floating point, got ") +
                                   DataTypeName(x->dtype));
  }
  if (t->dtype != DataType::kUndefined && t->dtype != DataType::kInt32 &&
      t->dtype != DataType::kInt64) {
    return NodeError(ctx.node, std::string("target must be int32 or int64, got ") +
                                   DataTypeName(t->dtype));
  }
  SY_RETURN_IF_ERROR(SameDtype(ctx, {0, 2}).status());
  SY_ASSIGN_OR_RETURN(Reduction red, GetReduction(ctx.node));
  if (x->has_shape && x->rank() < 2) return NodeError(ctx.node, "input 0 must have rank >= 2");
  if (x->has_shape && t->has_shape && t->rank() != x->rank() - 1) {
    return NodeError(ctx.node, "target rank " + std::to_string(t->rank()) +
                                   " must be the input rank minus one");
  }
  std::vector<TensorType> out;
  if (red != Reduction::kNone) {
    out.push_back(TensorType(x->dtype, {}));
  } else if (t->has_shape) {
    out.push_back(TensorType(x->dtype, t->dims));
  } else if (x->has_shape) {
    std::vector<Dim> d = x->dims;
    d.erase(d.begin() + 1);
    out.push_back(TensorType(x->dtype, d));
  } else {
    out.push_back(TensorType::Unranked(x->dtype));
  }
  if (ctx.num_outputs() > 1) out.push_back(*x);
  return out;
}

// The loss given log-probabilities `logp` ([N, C, D] flattened) and targets.
Result<Tensor> NllLoss(const Node& node, DataType dt, const std::vector<double>& logp,
                       const std::vector<int64_t>& x_shape, const Tensor& target,
                       const Tensor* weight) {
  SY_ASSIGN_OR_RETURN(Reduction red, GetReduction(node));
  if (x_shape.size() < 2) return NodeError(node, "input 0 must have rank >= 2");
  const int64_t n = x_shape[0], c = x_shape[1];
  int64_t d = 1;
  for (size_t i = 2; i < x_shape.size(); ++i) d *= x_shape[i];
  std::vector<int64_t> want(x_shape);
  want.erase(want.begin() + 1);
  if (target.shape() != want) {
    return NodeError(node, "target shape " + ShapeToString(target.shape()) +
                               " must be " + ShapeToString(want));
  }
  if (target.dtype() != DataType::kInt32 && target.dtype() != DataType::kInt64) {
    return NodeError(node, "target must be int32 or int64");
  }
  std::vector<double> w;
  if (weight) {
    if (weight->numel() != c || weight->rank() != 1) {
      return NodeError(node, "weight shape " + ShapeToString(weight->shape()) + " must be [" +
                                 std::to_string(c) + "]");
    }
    w = weight->ToDoubleVector();
  }
  std::optional<int64_t> ignore;
  if (node.Has("ignore_index")) ignore = node.GetInt("ignore_index", 0);
  std::vector<double> loss(static_cast<size_t>(n * d), 0.0);
  double weight_sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      const int64_t k = i * d + j;
      const int64_t cls = target.GetInt64(k);
      if (ignore && cls == *ignore) continue;  // loss 0, weight 0
      if (cls < 0 || cls >= c) {
        return NodeError(node, "target value " + std::to_string(cls) + " is outside [0, " +
                                   std::to_string(c) + ")");
      }
      const double wt = weight ? w[static_cast<size_t>(cls)] : 1.0;
      loss[static_cast<size_t>(k)] = -logp[static_cast<size_t>((i * c + cls) * d + j)] * wt;
      weight_sum += wt;
    }
  }
  if (red == Reduction::kNone) {
    Tensor out(dt, want);
    for (int64_t i = 0; i < out.numel(); ++i) out.SetDouble(i, loss[static_cast<size_t>(i)]);
    return out;
  }
  double sum = 0;
  for (double v : loss) sum += v;
  // mean divides by the total weight of the counted elements (0/0 = NaN like numpy when
  // every element is ignored).
  return Tensor::Scalar(dt, red == Reduction::kSum ? sum : sum / weight_sum);
}

Status CheckScores(const Node& node, const Tensor& x) {
  if (!IsFloatType(x.dtype())) return NodeError(node, "input 0 must be floating point");
  if (x.rank() < 2) return NodeError(node, "input 0 must have rank >= 2 (N x C x ...)");
  return Status::Ok();
}

Result<std::vector<Tensor>> RunNll(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* t, RequireInput(ctx, 1));
  SY_RETURN_IF_ERROR(CheckScores(ctx.node, *x));
  SY_ASSIGN_OR_RETURN(Tensor loss, NllLoss(ctx.node, x->dtype(), x->ToDoubleVector(), x->shape(),
                                           *t, ctx.input(2)));
  return std::vector<Tensor>{std::move(loss)};
}

Result<std::vector<Tensor>> RunSce(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* t, RequireInput(ctx, 1));
  SY_RETURN_IF_ERROR(CheckScores(ctx.node, *x));
  // log_softmax over axis 1.
  const int64_t n = x->dim(0), c = x->dim(1);
  int64_t d = 1;
  for (int64_t i = 2; i < x->rank(); ++i) d *= x->dim(i);
  std::vector<double> v = x->ToDoubleVector();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < c; ++k) mx = std::max(mx, v[static_cast<size_t>((i * c + k) * d + j)]);
      double sum = 0;
      for (int64_t k = 0; k < c; ++k) sum += std::exp(v[static_cast<size_t>((i * c + k) * d + j)] - mx);
      const double lse = mx + std::log(sum);
      for (int64_t k = 0; k < c; ++k) v[static_cast<size_t>((i * c + k) * d + j)] -= lse;
    }
  }
  SY_ASSIGN_OR_RETURN(Tensor loss, NllLoss(ctx.node, x->dtype(), v, x->shape(), *t, ctx.input(2)));
  std::vector<Tensor> out;
  out.push_back(std::move(loss));
  if (ctx.num_outputs() > 1) {
    Tensor lp(x->dtype(), x->shape());
    for (int64_t i = 0; i < lp.numel(); ++i) lp.SetDouble(i, v[static_cast<size_t>(i)]);
    out.push_back(std::move(lp));
  }
  return out;
}

}  // namespace

SY_REGISTER_OPS(Loss) {
  for (int v : {12, 13}) {
    reg.Register({"", "NegativeLogLikelihoodLoss", v, 2, 3, 1, 1, InferLoss, RunNll});
    reg.Register({"", "SoftmaxCrossEntropyLoss", v, 2, 3, 1, 2, InferLoss, RunSce});
  }
}

}  // namespace switchyard::ops
