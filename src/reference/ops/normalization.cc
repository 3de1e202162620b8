// Normalization ops: BatchNormalization, InstanceNormalization, LayerNormalization,
// GroupNormalization, LpNormalization, MeanVarianceNormalization, LRN.
#include <cmath>

#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

Status CheckFloat(const Node& node, const TensorType* t, const char* what) {
  if (t && t->dtype != DataType::kUndefined && !IsFloatType(t->dtype)) {
    return NodeError(node, std::string(what) + " must be a floating-point tensor, got " +
                               DataTypeName(t->dtype));
  }
  return Status::Ok();
}

Status CheckFloat(const Node& node, const Tensor& t, const char* what) {
  if (!IsFloatType(t.dtype())) {
    return NodeError(node, std::string(what) + " must be a floating-point tensor, got " +
                               DataTypeName(t.dtype()));
  }
  return Status::Ok();
}

// Error unless `t` holds exactly `n` elements (a per-channel parameter).
Status CheckCount(const Node& node, const Tensor& t, int64_t n, const char* what) {
  if (t.numel() != n) {
    return NodeError(node, std::string(what) + " has shape " + ShapeToString(t.shape()) +
                               " but " + std::to_string(n) + " elements are required");
  }
  return Status::Ok();
}

// X viewed as [N, C, S] where S is the product of the spatial dims.
struct NCS {
  int64_t n = 1, c = 1, s = 1;
};
Result<NCS> ViewNCS(const Node& node, const Tensor& x) {
  if (x.rank() < 2) return NodeError(node, "input must have rank >= 2 (N x C x ...)");
  NCS v;
  v.n = x.dim(0);
  v.c = x.dim(1);
  for (int64_t d = 2; d < x.rank(); ++d) v.s *= x.dim(d);
  return v;
}

// Statically known 1-D parameters (inputs first..last-1) must have X's channel count.
Status CheckChannelParams(const InferContext& ctx, size_t first, size_t last) {
  const TensorType* x = ctx.input(0);
  if (!x || !x->has_shape || x->rank() < 2 || !x->dims[1].is_static()) return Status::Ok();
  const int64_t c = x->dims[1].value;
  for (size_t i = first; i < last; ++i) {
    const TensorType* p = ctx.input(i);
    if (!p || !p->has_shape || p->rank() != 1 || !p->dims[0].is_static()) continue;
    if (p->dims[0].value != c) {
      return NodeError(ctx.node, "input " + std::to_string(i) + " has " +
                                     std::to_string(p->dims[0].value) + " elements but X has " +
                                     std::to_string(c) + " channels");
    }
  }
  return Status::Ok();
}

// --- BatchNormalization --------------------------------------------------------------

Result<std::vector<TensorType>> InferBatchNorm(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "input X is missing");
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, x, "X"));
  if (x->has_shape && x->rank() < 2) return NodeError(ctx.node, "X must have rank >= 2");
  // Opset-7 spatial=0 parameters are per activation ([C, D1, ...]), not per channel.
  if (ctx.node.GetInt("spatial", 1) != 0) SY_RETURN_IF_ERROR(CheckChannelParams(ctx, 1, 5));
  std::vector<TensorType> out{*x};
  // Training-mode outputs (running mean / var) have shape [C] and the type of input 3.
  const TensorType* mean = ctx.input(3);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    if (mean) {
      out.push_back(*mean);
    } else {
      out.push_back(TensorType::Unranked(x->dtype));
    }
  }
  return out;
}

Result<std::vector<Tensor>> RunBatchNorm(int since, const KernelContext& ctx) {
  for (size_t i = 0; i < 5; ++i) SY_RETURN_IF_ERROR(RequireInput(ctx, i).status());
  const Tensor& x = *ctx.input(0);
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, x, "X"));
  SY_ASSIGN_OR_RETURN(NCS v, ViewNCS(ctx.node, x));
  const double eps = ctx.node.GetFloat("epsilon", 1e-5f);
  const double momentum = ctx.node.GetFloat("momentum", 0.9f);
  const bool training = since >= 14 && ctx.node.GetInt("training_mode", 0) != 0;
  // Opset 7 with spatial=0 has per-activation parameters of shape [C, D1, ...].
  const bool per_activation = since < 9 && ctx.node.GetInt("spatial", 1) == 0;
  if (!training && since < 14 && ctx.num_outputs() > 1) {
    return NodeUnsupported(ctx.node, "training-mode outputs of BatchNormalization before opset 14");
  }
  const int64_t params = per_activation ? v.c * v.s : v.c;
  const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
  std::vector<std::vector<double>> p(5);
  for (size_t i = 1; i < 5; ++i) {
    SY_RETURN_IF_ERROR(CheckFloat(ctx.node, *ctx.input(i), names[i]));
    SY_RETURN_IF_ERROR(CheckCount(ctx.node, *ctx.input(i), params, names[i]));
    p[i] = ctx.input(i)->ToDoubleVector();
  }
  const std::vector<double> xv = x.ToDoubleVector();
  std::vector<double> mean = p[3], var = p[4];
  if (training) {
    // Batch statistics over every axis but the channel axis (population variance).
    const double count = static_cast<double>(v.n * v.s);
    for (int64_t c = 0; c < v.c; ++c) {
      double sum = 0, sq = 0;
      for (int64_t n = 0; n < v.n; ++n) {
        const double* row = xv.data() + (n * v.c + c) * v.s;
        for (int64_t s = 0; s < v.s; ++s) sum += row[s];
      }
      const double m = count > 0 ? sum / count : 0;
      for (int64_t n = 0; n < v.n; ++n) {
        const double* row = xv.data() + (n * v.c + c) * v.s;
        for (int64_t s = 0; s < v.s; ++s) sq += (row[s] - m) * (row[s] - m);
      }
      mean[static_cast<size_t>(c)] = m;
      var[static_cast<size_t>(c)] = count > 0 ? sq / count : 0;
    }
  }
  std::vector<double> yv(xv.size());
  for (int64_t n = 0; n < v.n; ++n) {
    for (int64_t c = 0; c < v.c; ++c) {
      const int64_t off = (n * v.c + c) * v.s;
      for (int64_t s = 0; s < v.s; ++s) {
        const size_t k = static_cast<size_t>(per_activation ? c * v.s + s : c);
        const size_t i = static_cast<size_t>(off + s);
        yv[i] = (xv[i] - mean[k]) / std::sqrt(var[k] + eps) * p[1][k] + p[2][k];
      }
    }
  }
  std::vector<Tensor> out;
  out.push_back(FromDoubles(x.dtype(), x.shape(), yv));
  if (ctx.num_outputs() > 1) {
    if (!training) {
      return NodeError(ctx.node, "running_mean / running_var outputs need training_mode=1");
    }
    std::vector<double> rm(mean.size()), rv(var.size());
    for (size_t c = 0; c < mean.size(); ++c) {
      rm[c] = p[3][c] * momentum + mean[c] * (1 - momentum);
      rv[c] = p[4][c] * momentum + var[c] * (1 - momentum);
    }
    out.push_back(FromDoubles(ctx.input(3)->dtype(), ctx.input(3)->shape(), rm));
    out.push_back(FromDoubles(ctx.input(4)->dtype(), ctx.input(4)->shape(), rv));
  }
  return out;
}

// --- InstanceNormalization / GroupNormalization ----------------------------------------

// Normalises x (viewed [N, G, K]) over K per (n, g); the affine parameter of element k of
// group g is param_index(g, k).
template <typename ParamIndex>
std::vector<double> NormalizeGroups(const std::vector<double>& xv, int64_t n_groups_total,
                                    int64_t k_size, int64_t groups, double eps,
                                    const std::vector<double>& scale,
                                    const std::vector<double>& bias, ParamIndex param_index) {
  std::vector<double> yv(xv.size());
  for (int64_t ng = 0; ng < n_groups_total; ++ng) {
    const double* row = xv.data() + ng * k_size;
    double sum = 0, sq = 0;
    for (int64_t k = 0; k < k_size; ++k) sum += row[k];
    const double mean = k_size ? sum / static_cast<double>(k_size) : 0;
    for (int64_t k = 0; k < k_size; ++k) sq += (row[k] - mean) * (row[k] - mean);
    const double inv = 1.0 / std::sqrt((k_size ? sq / static_cast<double>(k_size) : 0) + eps);
    const int64_t g = ng % groups;
    for (int64_t k = 0; k < k_size; ++k) {
      const size_t p = static_cast<size_t>(param_index(g, k));
      yv[static_cast<size_t>(ng * k_size + k)] = (row[k] - mean) * inv * scale[p] + bias[p];
    }
  }
  return yv;
}

Result<std::vector<TensorType>> InferNormSameAsX(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "input X is missing");
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, x, "X"));
  return std::vector<TensorType>{*x};
}

Result<std::vector<TensorType>> InferInstanceNorm(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(auto out, InferNormSameAsX(ctx));
  SY_RETURN_IF_ERROR(CheckChannelParams(ctx, 1, 3));
  return out;
}

Result<std::vector<Tensor>> RunInstanceNorm(const KernelContext& ctx) {
  for (size_t i = 0; i < 3; ++i) SY_RETURN_IF_ERROR(RequireInput(ctx, i).status());
  const Tensor& x = *ctx.input(0);
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, x, "X"));
  SY_ASSIGN_OR_RETURN(NCS v, ViewNCS(ctx.node, x));
  SY_RETURN_IF_ERROR(CheckCount(ctx.node, *ctx.input(1), v.c, "scale"));
  SY_RETURN_IF_ERROR(CheckCount(ctx.node, *ctx.input(2), v.c, "B"));
  const double eps = ctx.node.GetFloat("epsilon", 1e-5f);
  auto yv = NormalizeGroups(x.ToDoubleVector(), v.n * v.c, v.s, v.c, eps,
                            ctx.input(1)->ToDoubleVector(), ctx.input(2)->ToDoubleVector(),
                            [](int64_t g, int64_t) { return g; });
  return std::vector<Tensor>{FromDoubles(x.dtype(), x.shape(), yv)};
}

Result<std::vector<Tensor>> RunGroupNorm(int since, const KernelContext& ctx) {
  for (size_t i = 0; i < 3; ++i) SY_RETURN_IF_ERROR(RequireInput(ctx, i).status());
  const Tensor& x = *ctx.input(0);
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, x, "X"));
  SY_ASSIGN_OR_RETURN(NCS v, ViewNCS(ctx.node, x));
  const int64_t groups = ctx.node.GetInt("num_groups", 0);
  if (!ctx.node.Has("num_groups") || groups <= 0 || v.c % groups != 0) {
    return NodeError(ctx.node, "num_groups must be a positive divisor of the channel count " +
                                   std::to_string(v.c));
  }
  const int64_t per_group = v.c / groups;
  // Opset 18 has one scale/bias per group, opset 21 one per channel. Exporters that feed
  // per-channel parameters to an opset-18 node are accepted too (unambiguous by size).
  const int64_t n_params = ctx.input(1)->numel();
  const bool per_channel = since >= 21 || (n_params == v.c && n_params != groups);
  const int64_t want = per_channel ? v.c : groups;
  SY_RETURN_IF_ERROR(CheckCount(ctx.node, *ctx.input(1), want, "scale"));
  SY_RETURN_IF_ERROR(CheckCount(ctx.node, *ctx.input(2), want, "bias"));
  const double eps = ctx.node.GetFloat("epsilon", 1e-5f);
  const int64_t s = v.s;
  auto yv = NormalizeGroups(x.ToDoubleVector(), v.n * groups, per_group * s, groups, eps,
                            ctx.input(1)->ToDoubleVector(), ctx.input(2)->ToDoubleVector(),
                            [&](int64_t g, int64_t k) {
                              return per_channel ? g * per_group + k / s : g;
                            });
  return std::vector<Tensor>{FromDoubles(x.dtype(), x.shape(), yv)};
}

// --- LayerNormalization ----------------------------------------------------------------

DataType StashType(const Node& node, DataType x) {
  // stash_type 1 (float) is the default; the Mean/InvStdDev outputs carry that type.
  const int64_t st = node.GetInt("stash_type", 1);
  const DataType t = static_cast<DataType>(st);
  return IsFloatType(t) ? t : x;
}

Result<std::vector<TensorType>> InferLayerNorm(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "input X is missing");
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, x, "X"));
  std::vector<TensorType> out{*x};
  const DataType st = StashType(ctx.node, x->dtype);
  if (!x->has_shape) {
    for (size_t i = 1; i < ctx.num_outputs(); ++i) out.push_back(TensorType::Unranked(st));
    return out;
  }
  SY_ASSIGN_OR_RETURN(int64_t axis,
                      NormalizeAxis(ctx.node, ctx.node.GetInt("axis", -1), x->rank()));
  std::vector<Dim> stat_dims = x->dims;
  for (size_t d = static_cast<size_t>(axis); d < stat_dims.size(); ++d) stat_dims[d] = Dim(1);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) out.push_back(TensorType(st, stat_dims));
  return out;
}

// Values of `t` broadcast (unidirectionally) to the normalised shape `norm_shape`.
Result<std::vector<double>> BroadcastParam(const Node& node, const Tensor& t,
                                           const std::vector<int64_t>& norm_shape,
                                           const char* what) {
  if (t.rank() > static_cast<int64_t>(norm_shape.size())) {
    return NodeError(node, std::string(what) + " has higher rank than the normalised shape");
  }
  const size_t off = norm_shape.size() - static_cast<size_t>(t.rank());
  for (int64_t d = 0; d < t.rank(); ++d) {
    if (t.dim(d) != 1 && t.dim(d) != norm_shape[off + static_cast<size_t>(d)]) {
      return NodeError(node, std::string(what) + " shape " + ShapeToString(t.shape()) +
                                 " does not broadcast to " + ShapeToString(norm_shape));
    }
  }
  const std::vector<double> v = t.ToDoubleVector();
  const std::vector<int64_t> map = BroadcastIndex(t.shape(), norm_shape);
  std::vector<double> out(map.size());
  for (size_t i = 0; i < map.size(); ++i) out[i] = v[static_cast<size_t>(map[i])];
  return out;
}

Result<std::vector<Tensor>> RunLayerNorm(const KernelContext& ctx) {
  SY_RETURN_IF_ERROR(RequireInput(ctx, 0).status());
  SY_RETURN_IF_ERROR(RequireInput(ctx, 1).status());
  const Tensor& x = *ctx.input(0);
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, x, "X"));
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", -1), x.rank()));
  std::vector<int64_t> norm_shape(x.shape().begin() + axis, x.shape().end());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.rank(); ++d) (d < axis ? outer : inner) *= x.dim(d);
  SY_ASSIGN_OR_RETURN(std::vector<double> scale,
                      BroadcastParam(ctx.node, *ctx.input(1), norm_shape, "Scale"));
  std::vector<double> bias(static_cast<size_t>(inner), 0.0);
  if (ctx.input(2)) {
    SY_ASSIGN_OR_RETURN(bias, BroadcastParam(ctx.node, *ctx.input(2), norm_shape, "B"));
  }
  const double eps = ctx.node.GetFloat("epsilon", 1e-5f);
  const std::vector<double> xv = x.ToDoubleVector();
  std::vector<double> yv(xv.size()), means(static_cast<size_t>(outer)),
      inv_std(static_cast<size_t>(outer));
  for (int64_t o = 0; o < outer; ++o) {
    const double* row = xv.data() + o * inner;
    double sum = 0, sq = 0;
    for (int64_t k = 0; k < inner; ++k) sum += row[k];
    const double mean = inner ? sum / static_cast<double>(inner) : 0;
    for (int64_t k = 0; k < inner; ++k) sq += (row[k] - mean) * (row[k] - mean);
    const double inv = 1.0 / std::sqrt((inner ? sq / static_cast<double>(inner) : 0) + eps);
    for (int64_t k = 0; k < inner; ++k) {
      const size_t u = static_cast<size_t>(k);
      yv[static_cast<size_t>(o * inner + k)] = (row[k] - mean) * inv * scale[u] + bias[u];
    }
    means[static_cast<size_t>(o)] = mean;
    inv_std[static_cast<size_t>(o)] = inv;
  }
  std::vector<Tensor> out;
  out.push_back(FromDoubles(x.dtype(), x.shape(), yv));
  std::vector<int64_t> stat_shape = x.shape();
  for (size_t d = static_cast<size_t>(axis); d < stat_shape.size(); ++d) stat_shape[d] = 1;
  const DataType st = StashType(ctx.node, x.dtype());
  if (ctx.num_outputs() > 1) out.push_back(FromDoubles(st, stat_shape, means));
  if (ctx.num_outputs() > 2) out.push_back(FromDoubles(st, stat_shape, inv_std));
  return out;
}

// --- LpNormalization / MeanVarianceNormalization / LRN --------------------------------

Result<std::vector<Tensor>> RunLpNorm(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, *x, "input"));
  const int64_t p = ctx.node.GetInt("p", 2);
  if (p != 1 && p != 2) return NodeError(ctx.node, "p must be 1 or 2, got " + std::to_string(p));
  if (x->rank() == 0) return NodeError(ctx.node, "input must have rank >= 1");
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", -1), x->rank()));
  int64_t outer = 1, n = x->dim(axis), inner = 1;
  for (int64_t d = 0; d < x->rank(); ++d) {
    if (d < axis) outer *= x->dim(d);
    if (d > axis) inner *= x->dim(d);
  }
  const std::vector<double> xv = x->ToDoubleVector();
  std::vector<double> yv(xv.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      double norm = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double v = xv[static_cast<size_t>(base + k * inner)];
        norm += p == 1 ? std::fabs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      // An all-zero slice stays zero (instead of 0/0 = NaN), as onnxruntime does.
      for (int64_t k = 0; k < n; ++k) {
        const size_t u = static_cast<size_t>(base + k * inner);
        yv[u] = norm == 0 ? 0 : xv[u] / norm;
      }
    }
  }
  return std::vector<Tensor>{FromDoubles(x->dtype(), x->shape(), yv)};
}

Result<std::vector<Tensor>> RunMvn(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, *x, "input"));
  const int64_t rank = x->rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : ctx.node.GetInts("axes", {0, 2, 3})) {
    SY_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis(ctx.node, a, rank));
    reduced[static_cast<size_t>(ax)] = true;
  }
  // Group elements by their index on the kept axes.
  std::vector<int64_t> kept_shape;
  for (int64_t d = 0; d < rank; ++d) kept_shape.push_back(reduced[static_cast<size_t>(d)] ? 1 : x->dim(d));
  const std::vector<int64_t> group_of = BroadcastIndex(kept_shape, x->shape());
  int64_t groups = 1;
  for (int64_t d : kept_shape) groups *= d;
  const std::vector<double> xv = x->ToDoubleVector();
  std::vector<double> sum(static_cast<size_t>(groups), 0), sq(sum), cnt(sum);
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t g = static_cast<size_t>(group_of[i]);
    sum[g] += xv[i];
    cnt[g] += 1;
  }
  for (size_t g = 0; g < sum.size(); ++g) sum[g] = cnt[g] ? sum[g] / cnt[g] : 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t g = static_cast<size_t>(group_of[i]);
    sq[g] += (xv[i] - sum[g]) * (xv[i] - sum[g]);
  }
  // ONNX's function body: (X - E[X]) / (sqrt(Var[X]) + 1e-9).
  std::vector<double> yv(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t g = static_cast<size_t>(group_of[i]);
    yv[i] = (xv[i] - sum[g]) / (std::sqrt(sq[g] / cnt[g]) + 1e-9);
  }
  return std::vector<Tensor>{FromDoubles(x->dtype(), x->shape(), yv)};
}

Result<std::vector<Tensor>> RunLrn(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_RETURN_IF_ERROR(CheckFloat(ctx.node, *x, "X"));
  SY_ASSIGN_OR_RETURN(NCS v, ViewNCS(ctx.node, *x));
  const int64_t size = ctx.node.GetInt("size", 0);
  if (size <= 0) return NodeError(ctx.node, "attribute 'size' must be a positive integer");
  const double alpha = ctx.node.GetFloat("alpha", 1e-4f), beta = ctx.node.GetFloat("beta", 0.75f),
               bias = ctx.node.GetFloat("bias", 1.0f);
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;  // floor / ceil of (size-1)/2
  const std::vector<double> xv = x->ToDoubleVector();
  std::vector<double> yv(xv.size());
  for (int64_t n = 0; n < v.n; ++n) {
    for (int64_t c = 0; c < v.c; ++c) {
      for (int64_t s = 0; s < v.s; ++s) {
        double sq = 0;
        for (int64_t j = std::max<int64_t>(0, c - lo); j <= std::min(v.c - 1, c + hi); ++j) {
          const double e = xv[static_cast<size_t>((n * v.c + j) * v.s + s)];
          sq += e * e;
        }
        const size_t i = static_cast<size_t>((n * v.c + c) * v.s + s);
        yv[i] = xv[i] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
      }
    }
  }
  return std::vector<Tensor>{FromDoubles(x->dtype(), x->shape(), yv)};
}

}  // namespace

SY_REGISTER_OPS(Normalization) {
  for (int v : {7, 9, 14, 15}) {
    const int max_out = v < 14 ? 5 : 3;
    reg.Register({"", "BatchNormalization", v, 5, 5, 1, max_out, InferBatchNorm,
                  [v](const KernelContext& c) { return RunBatchNorm(v, c); }});
  }
  reg.Register({"", "InstanceNormalization", 6, 3, 3, 1, 1, InferInstanceNorm, RunInstanceNorm});
  reg.Register({"", "LayerNormalization", 17, 2, 3, 1, 3, InferLayerNorm, RunLayerNorm});
  for (int v : {18, 21}) {
    reg.Register({"", "GroupNormalization", v, 3, 3, 1, 1, InferNormSameAsX,
                  [v](const KernelContext& c) { return RunGroupNorm(v, c); }});
  }
  reg.Register({"", "LpNormalization", 1, 1, 1, 1, 1, InferNormSameAsX, RunLpNorm});
  for (int v : {9, 13}) {
    reg.Register({"", "MeanVarianceNormalization", v, 1, 1, 1, 1, InferNormSameAsX, RunMvn});
  }
  for (int v : {1, 13}) reg.Register({"", "LRN", v, 1, 1, 1, 1, InferNormSameAsX, RunLrn});
}

}  // namespace switchyard::ops
