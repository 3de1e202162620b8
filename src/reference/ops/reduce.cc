// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/ops/binary_kernel.h"
#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

using Types = std::vector<TensorType>;

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// Which axes to reduce: `all` when every axis, `noop` when the op is an identity.
struct AxesSpec {
  bool known = true;
  bool noop = false;
  std::vector<bool> reduce;  // per input axis
};

// Reads axes from the attribute or input 1. `axes_in` is the constant/run-time tensor
// (nullptr when not known at inference).
Result<AxesSpec> ResolveAxes(const Node& node, bool from_input, const Tensor* axes_in,
                             int64_t rank) {
  AxesSpec spec;
  std::vector<int64_t> axes;
  if (from_input) {
    if (node.HasInput(1)) {
      if (!axes_in) {
        spec.known = false;
        return spec;
      }
      axes = axes_in->ToInt64Vector();
    }
  } else {
    axes = node.GetInts("axes");
  }
  if (axes.empty()) {
    if (from_input && node.GetInt("noop_with_empty_axes", 0) != 0) {
      spec.noop = true;
      return spec;
    }
    spec.reduce.assign(rank, true);
    return spec;
  }
  spec.reduce.assign(rank, false);
  for (int64_t a : axes) {
    SY_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(node, a, rank));
    spec.reduce[n] = true;
  }
  return spec;
}

Result<Types> InferReduce(const InferContext& ctx, bool from_input) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "missing input");
  if (from_input && ctx.input(1) && ctx.input(1)->dtype != DataType::kInt64 &&
      ctx.input(1)->dtype != DataType::kUndefined) {
    return NodeError(ctx.node, "axes must be int64");
  }
  const bool keepdims = ctx.node.GetInt("keepdims", 1) != 0;
  if (!x->has_shape) return Types{TensorType::Unranked(x->dtype)};
  SY_ASSIGN_OR_RETURN(AxesSpec spec, ResolveAxes(ctx.node, from_input, ctx.constant(1), x->rank()));
  if (!spec.known) {
    if (keepdims) return Types{TensorType(x->dtype, std::vector<Dim>(x->dims.size()))};
    const TensorType* a = ctx.input(1);
    if (a->has_shape && a->dims.size() == 1 && a->dims[0].is_static() && a->dims[0].value > 0) {
      const int64_t r = x->rank() - a->dims[0].value;
      if (r >= 0) return Types{TensorType(x->dtype, std::vector<Dim>(r))};
    }
    return Types{TensorType::Unranked(x->dtype)};
  }
  if (spec.noop) return Types{*x};
  std::vector<Dim> dims;
  for (size_t i = 0; i < x->dims.size(); ++i) {
    if (!spec.reduce[i]) dims.push_back(x->dims[i]);
    else if (keepdims) dims.push_back(Dim(1));
  }
  return Types{TensorType(x->dtype, dims)};
}

double Identity(Kind k) {
  switch (k) {
    case Kind::kMax: return -std::numeric_limits<double>::infinity();
    case Kind::kMin: return std::numeric_limits<double>::infinity();
    case Kind::kProd: return 1.0;
    default: return 0.0;
  }
}

Result<std::vector<Tensor>> RunReduce(const KernelContext& ctx, Kind kind, bool from_input) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (x->dtype() == DataType::kString) return NodeError(ctx.node, "cannot reduce strings");
  const bool keepdims = ctx.node.GetInt("keepdims", 1) != 0;
  SY_ASSIGN_OR_RETURN(AxesSpec spec, ResolveAxes(ctx.node, from_input, ctx.input(1), x->rank()));
  if (spec.noop) return std::vector<Tensor>{*x};
  const int64_t r = x->rank();
  std::vector<int64_t> keep_shape(r), out_shape;
  for (int64_t i = 0; i < r; ++i) {
    keep_shape[i] = spec.reduce[i] ? 1 : x->dim(i);
    if (!spec.reduce[i]) out_shape.push_back(x->dim(i));
    else if (keepdims) out_shape.push_back(1);
  }
  // Output strides over the input index space: 0 along reduced axes.
  std::vector<int64_t> ost = Strides(keep_shape);
  for (int64_t i = 0; i < r; ++i) {
    if (spec.reduce[i]) ost[i] = 0;
  }
  int64_t n_out = 1;
  for (int64_t d : keep_shape) n_out *= d;
  const int64_t n_in = x->numel();
  const int64_t count = n_out == 0 ? 0 : n_in / std::max<int64_t>(n_out, 1);
  std::vector<int64_t> omap(static_cast<size_t>(n_in));
  if (n_in > 0) {
    std::vector<int64_t> idx(r, 0);
    int64_t lin = 0;
    for (int64_t k = 0; k < n_in; ++k) {
      omap[k] = lin;
      for (int64_t d = r - 1; d >= 0; --d) {
        ++idx[d];
        lin += ost[d];
        if (idx[d] < x->dim(d)) break;
        lin -= ost[d] * idx[d];
        idx[d] = 0;
      }
    }
  }
  Tensor out(x->dtype(), out_shape);
  const bool exact_int = IsIntegerType(x->dtype()) &&
                         (kind == Kind::kSum || kind == Kind::kProd || kind == Kind::kMax ||
                          kind == Kind::kMin || kind == Kind::kL1 || kind == Kind::kSumSquare);
  if (exact_int) {
    std::vector<int64_t> acc(n_out);
    const int64_t init = kind == Kind::kProd  ? 1
                         : kind == Kind::kMax ? std::numeric_limits<int64_t>::min()
                         : kind == Kind::kMin ? std::numeric_limits<int64_t>::max()
                                              : 0;
    std::fill(acc.begin(), acc.end(), init);
    for (int64_t k = 0; k < n_in; ++k) {
      const int64_t v = x->GetInt64(k);
      int64_t& a = acc[omap[k]];
      // Integers wrap (two's complement, as ONNX Runtime and numpy compute them; found by
      // fuzzing onnx_import: a constant-folded ReduceSumSquare overflowed, UB in C++).
      switch (kind) {
        case Kind::kProd: a = elem::WrapMul(a, v); break;
        case Kind::kMax: a = std::max(a, v); break;
        case Kind::kMin: a = std::min(a, v); break;
        case Kind::kL1: a = elem::WrapAdd(a, v < 0 ? elem::WrapNeg(v) : v); break;
        case Kind::kSumSquare: a = elem::WrapAdd(a, elem::WrapMul(v, v)); break;
        default: a = elem::WrapAdd(a, v); break;
      }
    }
    for (int64_t i = 0; i < n_out; ++i) {
      if (count == 0 && (kind == Kind::kMax || kind == Kind::kMin)) {
        out.SetDouble(i, Identity(kind));  // saturates to the dtype's min / max
      } else {
        out.SetInt64(i, acc[i]);
      }
    }
    return std::vector<Tensor>{std::move(out)};
  }
  const std::vector<double> xv = x->ToDoubleVector();
  std::vector<double> acc(n_out, Identity(kind));
  std::vector<double> mx;
  if (kind == Kind::kLogSumExp) {
    // Subtract the per-output max so exp() cannot overflow.
    mx.assign(n_out, -std::numeric_limits<double>::infinity());
    for (int64_t k = 0; k < n_in; ++k) mx[omap[k]] = std::max(mx[omap[k]], xv[k]);
    for (double& m : mx) {
      if (!std::isfinite(m)) m = 0;
    }
  }
  for (int64_t k = 0; k < n_in; ++k) {
    const double v = xv[k];
    double& a = acc[omap[k]];
    switch (kind) {
      case Kind::kSum: case Kind::kMean: case Kind::kLogSum: a += v; break;
      case Kind::kMax: if (std::isnan(v) || v > a) a = v; break;
      case Kind::kMin: if (std::isnan(v) || v < a) a = v; break;
      case Kind::kProd: a *= v; break;
      case Kind::kL1: a += std::fabs(v); break;
      case Kind::kL2: case Kind::kSumSquare: a += v * v; break;
      case Kind::kLogSumExp: a += std::exp(v - mx[omap[k]]); break;
    }
  }
  for (int64_t i = 0; i < n_out; ++i) {
    double a = acc[i];
    switch (kind) {
      case Kind::kMean: a = a / static_cast<double>(count); break;
      case Kind::kL2: a = std::sqrt(a); break;
      case Kind::kLogSum: a = std::log(a); break;
      case Kind::kLogSumExp: a = std::log(a) + mx[i]; break;
      default: break;
    }
    out.SetDouble(i, a);
  }
  return std::vector<Tensor>{std::move(out)};
}

void RegisterReduce(OpRegistry& reg, const char* name, Kind kind, std::vector<int> versions,
                    int input_from) {
  for (int v : versions) {
    const bool in = v >= input_from;
    reg.Register({"", name, v, 1, in ? 2 : 1, 1, 1,
                  [in](const InferContext& c) { return InferReduce(c, in); },
                  [kind, in](const KernelContext& c) { return RunReduce(c, kind, in); }});
  }
}

}  // namespace

SY_REGISTER_OPS(Reduce) {
  RegisterReduce(reg, "ReduceSum", Kind::kSum, {1, 11, 13}, 13);
  RegisterReduce(reg, "ReduceMean", Kind::kMean, {1, 11, 13, 18}, 18);
  RegisterReduce(reg, "ReduceMax", Kind::kMax, {1, 11, 12, 13, 18, 20}, 18);
  RegisterReduce(reg, "ReduceMin", Kind::kMin, {1, 11, 12, 13, 18, 20}, 18);
  RegisterReduce(reg, "ReduceProd", Kind::kProd, {1, 11, 13, 18}, 18);
  RegisterReduce(reg, "ReduceL1", Kind::kL1, {1, 11, 13, 18}, 18);
  RegisterReduce(reg, "ReduceL2", Kind::kL2, {1, 11, 13, 18}, 18);
  RegisterReduce(reg, "ReduceLogSum", Kind::kLogSum, {1, 11, 13, 18}, 18);
  RegisterReduce(reg, "ReduceLogSumExp", Kind::kLogSumExp, {1, 11, 13, 18}, 18);
  RegisterReduce(reg, "ReduceSumSquare", Kind::kSumSquare, {1, 11, 13, 18}, 18);
}

}  // namespace switchyard::ops
