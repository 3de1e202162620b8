// Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, ConvInteger,
// QLinearConv, QLinearMatMul. Integer accumulations are exact in fp64 (|acc| < 2^53).
#include <cmath>
#include <limits>

#include "reference/ops/conv_common.h"

namespace switchyard::ops {
namespace {

bool IsQuantDtype(DataType t) {
  return t == DataType::kInt8 || t == DataType::kUint8 || t == DataType::kInt16 ||
         t == DataType::kUint16 || t == DataType::kInt32;
}

double QMin(DataType t) {
  switch (t) {
    case DataType::kInt8: return -128;
    case DataType::kInt16: return -32768;
    case DataType::kInt32: return std::numeric_limits<int32_t>::min();
    default: return 0;
  }
}
double QMax(DataType t) {
  switch (t) {
    case DataType::kInt8: return 127;
    case DataType::kUint8: return 255;
    case DataType::kInt16: return 32767;
    case DataType::kUint16: return 65535;
    default: return std::numeric_limits<int32_t>::max();
  }
}

// For each element of a tensor of `shape`, the index into a per-tensor (1 element) or
// per-axis (shape[axis] elements) parameter.
Result<std::vector<int64_t>> ParamIndex(const Node& node, const std::vector<int64_t>& shape,
                                        const Tensor& param, const char* what) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> idx(static_cast<size_t>(n), 0);
  if (param.numel() == 1) return idx;
  if (param.rank() != 1) {
    return NodeError(node, std::string(what) + " must be a scalar or 1-D (block quantization "
                                               "is not supported)");
  }
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", 1),
                                                  static_cast<int64_t>(shape.size())));
  const int64_t dim = shape[static_cast<size_t>(axis)];
  if (param.numel() != dim) {
    return NodeError(node, std::string(what) + " has " + std::to_string(param.numel()) +
                               " elements but axis " + std::to_string(axis) + " has size " +
                               std::to_string(dim));
  }
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
  for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = (i / inner) % dim;
  return idx;
}

Result<std::vector<TensorType>> InferQuantize(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x || !ctx.input(1)) return NodeError(ctx.node, "x and y_scale are required");
  DataType out = DataType::kUint8;
  if (const TensorType* zp = ctx.input(2)) out = zp->dtype;
  if (const int64_t od = ctx.node.GetInt("output_dtype", 0); od != 0) {
    out = static_cast<DataType>(od);
  }
  if (!IsQuantDtype(out) || out == DataType::kInt32) {
    return NodeUnsupported(ctx.node, std::string("quantized dtype ") + DataTypeName(out));
  }
  TensorType t = *x;
  t.dtype = out;
  return std::vector<TensorType>{t};
}

Result<std::vector<Tensor>> RunQuantize(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* scale, RequireInput(ctx, 1));
  const Tensor* zp = ctx.input(2);
  DataType out = zp ? zp->dtype() : DataType::kUint8;
  if (const int64_t od = ctx.node.GetInt("output_dtype", 0); od != 0) {
    out = static_cast<DataType>(od);
  }
  if (!IsQuantDtype(out) || out == DataType::kInt32) {
    return NodeUnsupported(ctx.node, std::string("quantized dtype ") + DataTypeName(out));
  }
  if (zp && zp->numel() != scale->numel()) {
    return NodeError(ctx.node, "y_zero_point and y_scale must have the same size");
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> pi, ParamIndex(ctx.node, x->shape(), *scale, "y_scale"));
  const bool in_double = x->dtype() == DataType::kDouble;
  Tensor y(out, x->shape());
  for (int64_t i = 0; i < x->numel(); ++i) {
    const int64_t p = pi[static_cast<size_t>(i)];
    const double s = scale->GetDouble(p);
    // The ONNX reference divides in float32 for float inputs; match it so that
    // round-half-to-even ties land identically.
    const double q = in_double ? x->GetDouble(i) / s
                               : static_cast<double>(static_cast<float>(x->GetDouble(i)) /
                                                     static_cast<float>(s));
    const double z = zp ? zp->GetDouble(p) : 0.0;
    y.SetDouble(i, std::clamp(std::nearbyint(q) + z, QMin(out), QMax(out)));
  }
  return std::vector<Tensor>{std::move(y)};
}

Result<std::vector<TensorType>> InferDequantize(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  const TensorType* s = ctx.input(1);
  if (!x || !s) return NodeError(ctx.node, "x and x_scale are required");
  if (x->dtype != DataType::kUndefined && !IsQuantDtype(x->dtype)) {
    return NodeUnsupported(ctx.node, std::string("quantized dtype ") + DataTypeName(x->dtype));
  }
  TensorType t = *x;
  t.dtype = ctx.opset >= 19 && s->dtype != DataType::kUndefined ? s->dtype : DataType::kFloat;
  return std::vector<TensorType>{t};
}

Result<std::vector<Tensor>> RunDequantize(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* scale, RequireInput(ctx, 1));
  const Tensor* zp = ctx.input(2);
  if (!IsQuantDtype(x->dtype())) {
    return NodeUnsupported(ctx.node, std::string("quantized dtype ") + DataTypeName(x->dtype()));
  }
  if (zp && (zp->numel() != scale->numel() || zp->dtype() != x->dtype())) {
    return NodeError(ctx.node, "x_zero_point must match x's dtype and x_scale's size");
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> pi, ParamIndex(ctx.node, x->shape(), *scale, "x_scale"));
  const DataType out = ctx.opset >= 19 ? scale->dtype() : DataType::kFloat;
  Tensor y(out, x->shape());
  for (int64_t i = 0; i < x->numel(); ++i) {
    const int64_t p = pi[static_cast<size_t>(i)];
    const double z = zp ? zp->GetDouble(p) : 0.0;
    y.SetDouble(i, (x->GetDouble(i) - z) * scale->GetDouble(p));
  }
  return std::vector<Tensor>{std::move(y)};
}

Result<std::vector<TensorType>> InferDynamicQuantize(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "x is required");
  if (x->dtype != DataType::kUndefined && x->dtype != DataType::kFloat) {
    return NodeError(ctx.node, "x must be float32");
  }
  TensorType y = *x;
  y.dtype = DataType::kUint8;
  return std::vector<TensorType>{y, TensorType(DataType::kFloat, {}),
                                 TensorType(DataType::kUint8, {})};
}

Result<std::vector<Tensor>> RunDynamicQuantize(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (x->dtype() != DataType::kFloat) return NodeError(ctx.node, "x must be float32");
  // float32 arithmetic throughout, as the spec's reference computation.
  const float* xp = x->data<float>();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < x->numel(); ++i) {
    lo = std::min(lo, xp[i]);
    hi = std::max(hi, xp[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  float zpf = 0.0f;
  if (scale != 0.0f) zpf = std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f));
  Tensor y(DataType::kUint8, x->shape());
  uint8_t* yp = y.data<uint8_t>();
  for (int64_t i = 0; i < x->numel(); ++i) {
    const float q = scale != 0.0f ? std::nearbyint(xp[i] / scale) + zpf : zpf;
    yp[i] = static_cast<uint8_t>(std::clamp(q, 0.0f, 255.0f));
  }
  Tensor s(DataType::kFloat, {});
  s.data<float>()[0] = scale;
  Tensor z(DataType::kUint8, {});
  z.data<uint8_t>()[0] = static_cast<uint8_t>(zpf);
  return std::vector<Tensor>{std::move(y), std::move(s), std::move(z)};
}

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

// Values of an 8-bit tensor minus its zero point: per tensor, or per slice of `axis`
// (used for per-output-channel weight zero points).
Result<std::vector<double>> Centered(const Node& node, const Tensor& x, const Tensor* zp,
                                     int64_t axis) {
  if (!Is8Bit(x.dtype())) return NodeError(node, "quantized inputs must be int8 or uint8");
  std::vector<double> v = ToDoubles(x);
  if (!zp || zp->numel() == 0) return v;
  if (zp->dtype() != x.dtype()) return NodeError(node, "zero point dtype differs from its input");
  if (zp->numel() == 1) {
    const double z = zp->GetDouble(0);
    for (double& e : v) e -= z;
    return v;
  }
  if (axis < 0 || x.rank() <= axis || zp->numel() != x.dim(axis)) {
    return NodeError(node, "zero point has " + std::to_string(zp->numel()) +
                               " elements; expected 1 or one per channel");
  }
  int64_t inner = 1;
  for (int64_t i = axis + 1; i < x.rank(); ++i) inner *= x.dim(i);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] -= zp->GetDouble((static_cast<int64_t>(i) / inner) % x.dim(axis));
  }
  return v;
}

Result<std::vector<TensorType>> InferConvInteger(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(TensorType t, InferConvShape(ctx.node, ctx.input(0), ctx.input(1),
                                                   DataType::kInt32));
  return std::vector<TensorType>{t};
}

Result<std::vector<Tensor>> RunConvInteger(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* w, RequireInput(ctx, 1));
  SY_ASSIGN_OR_RETURN(ConvPlan p, PlanConv(ctx.node, *x, *w));
  if (const Tensor* xz = ctx.input(2); xz && xz->numel() > 1) {
    return NodeError(ctx.node, "x_zero_point must be a scalar");
  }
  SY_ASSIGN_OR_RETURN(std::vector<double> xd, Centered(ctx.node, *x, ctx.input(2), -1));
  SY_ASSIGN_OR_RETURN(std::vector<double> wd, Centered(ctx.node, *w, ctx.input(3), 0));
  std::vector<double> out = ConvCore(xd.data(), wd.data(), p.n, p.c, p.m, p.group, p.g);
  Tensor y(DataType::kInt32, p.out_shape);
  StoreDoubles(y, out.data());
  return std::vector<Tensor>{std::move(y)};
}

// Requantizes int accumulators: y = saturate(rint(acc * s) + y_zp), where s is the
// float32 product x_scale * w_scale / y_scale (as the ONNX reference computes it).
Tensor Requantize(const std::vector<double>& acc, const std::vector<int64_t>& shape,
                  const std::vector<float>& s, int64_t inner, const Tensor* yzp) {
  const DataType t = yzp ? yzp->dtype() : DataType::kUint8;
  const double z = yzp ? yzp->GetDouble(0) : 0.0;
  Tensor y(t, shape);
  const int64_t ns = static_cast<int64_t>(s.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    const float si = s[static_cast<size_t>((static_cast<int64_t>(i) / inner) % ns)];
    const double q = std::nearbyint(acc[i] * static_cast<double>(si)) + z;
    y.SetDouble(static_cast<int64_t>(i), std::clamp(q, QMin(t), QMax(t)));
  }
  return y;
}

Result<std::vector<TensorType>> InferQLinearConv(const InferContext& ctx) {
  const TensorType* yzp = ctx.input(7);
  SY_ASSIGN_OR_RETURN(TensorType t, InferConvShape(ctx.node, ctx.input(0), ctx.input(3),
                                                   yzp ? yzp->dtype : DataType::kUint8));
  return std::vector<TensorType>{t};
}

Result<std::vector<Tensor>> RunQLinearConv(const KernelContext& ctx) {
  for (size_t i : {0, 1, 3, 4, 6}) SY_RETURN_IF_ERROR(RequireInput(ctx, i).status());
  const Tensor& x = *ctx.input(0);
  const Tensor& w = *ctx.input(3);
  SY_ASSIGN_OR_RETURN(ConvPlan p, PlanConv(ctx.node, x, w));
  SY_ASSIGN_OR_RETURN(std::vector<double> xd, Centered(ctx.node, x, ctx.input(2), -1));
  SY_ASSIGN_OR_RETURN(std::vector<double> wd, Centered(ctx.node, w, ctx.input(5), 0));
  std::vector<double> acc = ConvCore(xd.data(), wd.data(), p.n, p.c, p.m, p.group, p.g);
  const int64_t sp = p.g.out_size();
  if (const Tensor* b = ctx.input(8)) {
    if (b->numel() != p.m) return NodeError(ctx.node, "B must have one value per output channel");
    for (size_t i = 0; i < acc.size(); ++i) {
      acc[i] += b->GetDouble((static_cast<int64_t>(i) / sp) % p.m);
    }
  }
  const Tensor& ws = *ctx.input(4);
  if (ws.numel() != 1 && ws.numel() != p.m) {
    return NodeError(ctx.node, "w_scale must be a scalar or have one value per output channel");
  }
  std::vector<float> s(static_cast<size_t>(ws.numel()));
  const float xs = static_cast<float>(ctx.input(1)->GetDouble(0));
  const float ys = static_cast<float>(ctx.input(6)->GetDouble(0));
  for (size_t i = 0; i < s.size(); ++i) {
    s[i] = xs * static_cast<float>(ws.GetDouble(static_cast<int64_t>(i))) / ys;
  }
  return std::vector<Tensor>{Requantize(acc, p.out_shape, s, sp, ctx.input(7))};
}

Result<std::vector<TensorType>> InferQLinearMatMul(const InferContext& ctx) {
  const TensorType* yzp = ctx.input(7);
  SY_ASSIGN_OR_RETURN(TensorType t, InferMatMulType(ctx.node, ctx.input(0), ctx.input(3),
                                                    yzp ? yzp->dtype : DataType::kUint8));
  return std::vector<TensorType>{t};
}

Result<std::vector<Tensor>> RunQLinearMatMul(const KernelContext& ctx) {
  for (size_t i : {0, 1, 3, 4, 6}) SY_RETURN_IF_ERROR(RequireInput(ctx, i).status());
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(3);
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, MatMulShape(ctx.node, a.shape(), b.shape()));
  if (ctx.input(1)->numel() != 1 || ctx.input(4)->numel() != 1 || ctx.input(6)->numel() != 1) {
    return NodeUnsupported(ctx.node, "only per-tensor scales are supported");
  }
  SY_ASSIGN_OR_RETURN(std::vector<double> ad, Centered(ctx.node, a, ctx.input(2), -1));
  SY_ASSIGN_OR_RETURN(std::vector<double> bd, Centered(ctx.node, b, ctx.input(5), -1));
  const std::vector<double> acc = MatMulCore(ad.data(), a.shape(), bd.data(), b.shape());
  const float s = static_cast<float>(ctx.input(1)->GetDouble(0)) *
                  static_cast<float>(ctx.input(4)->GetDouble(0)) /
                  static_cast<float>(ctx.input(6)->GetDouble(0));
  return std::vector<Tensor>{Requantize(acc, shape, {s}, 1, ctx.input(7))};
}

}  // namespace

SY_REGISTER_OPS(Quantize) {
  for (int v : {10, 13, 19, 21}) {
    reg.Register({"", "QuantizeLinear", v, 2, 3, 1, 1, InferQuantize, RunQuantize});
    reg.Register({"", "DequantizeLinear", v, 2, 3, 1, 1, InferDequantize, RunDequantize});
  }
  reg.Register({"", "DynamicQuantizeLinear", 11, 1, 1, 3, 3, InferDynamicQuantize,
                RunDynamicQuantize});
  reg.Register({"", "ConvInteger", 10, 2, 4, 1, 1, InferConvInteger, RunConvInteger});
  reg.Register({"", "QLinearConv", 10, 8, 9, 1, 1, InferQLinearConv, RunQLinearConv});
  for (int v : {10, 21}) {
    reg.Register({"", "QLinearMatMul", v, 8, 8, 1, 1, InferQLinearMatMul, RunQLinearMatMul});
  }
}

}  // namespace switchyard::ops
