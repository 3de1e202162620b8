// Switchyard-domain fused ops: FusedConv, FusedMatMul, FusedElementwise, Reorder (and the
// activation table they share). Each reference kernel is composed from the plain ONNX
// definitions (the registered Conv / MatMul reference kernels, run in fp64), so the
// reference executor can run optimised graphs and prove each rewrite exact.
#include <cstring>

#include "passes/pass.h"
#include "reference/ops/common.h"
#include "reference/ops/fused_activation.h"

namespace switchyard::ops {

Result<Act> ParseActivation(const Node& node, const std::string& name) {
  static const std::pair<const char*, Act> kNames[] = {
      {"", Act::kNone},           {"Relu", Act::kRelu},       {"LeakyRelu", Act::kLeakyRelu},
      {"Clip", Act::kClip},       {"Sigmoid", Act::kSigmoid}, {"HardSigmoid", Act::kHardSigmoid},
      {"HardSwish", Act::kHardSwish}, {"Tanh", Act::kTanh},   {"SiLU", Act::kSiLU},
      {"Gelu", Act::kGelu},       {"GeluTanh", Act::kGeluTanh}, {"Erf", Act::kErf},         {"Exp", Act::kExp},
      {"Log", Act::kLog},         {"Sqrt", Act::kSqrt},       {"Neg", Act::kNeg},
      {"Abs", Act::kAbs},         {"Reciprocal", Act::kReciprocal}};
  for (const auto& [n, a] : kNames) {
    if (name == n) return a;
  }
  return NodeError(node, "unknown activation '" + name + "'");
}

int ActivationParamCount(Act a) {
  switch (a) {
    case Act::kLeakyRelu: return 1;
    case Act::kClip:
    case Act::kHardSigmoid: return 2;
    default: return 0;
  }
}

Result<ActivationSpec> ReadActivation(const Node& node) {
  ActivationSpec spec;
  SY_ASSIGN_OR_RETURN(spec.act, ParseActivation(node, node.GetString("activation", "")));
  // Only the pre-activation steps of FusedElementwise may use the unary-only entries.
  if (spec.act > Act::kGeluTanh) {
    return NodeError(node, "activation '" + node.GetString("activation", "") +
                               "' is not a fused-op activation");
  }
  spec.params = node.GetFloats("activation_params");
  const size_t want = static_cast<size_t>(ActivationParamCount(spec.act));
  if (spec.params.size() != want) {
    return NodeError(node, "activation '" + node.GetString("activation", "") + "' takes " +
                               std::to_string(want) + " activation_params, got " +
                               std::to_string(spec.params.size()));
  }
  if (node.Has("post_affine")) {
    const std::vector<float> pa = node.GetFloats("post_affine");
    if (pa.size() != 2) {
      return NodeError(node, "post_affine takes [scale, shift], got " + std::to_string(pa.size()) + " values");
    }
    spec.has_post = true;
    spec.post_scale = pa[0];
    spec.post_shift = pa[1];
  }
  return spec;
}

namespace {

constexpr int64_t kMaxOnnxOpset = 21;

Tensor ToDoubleTensor(const Tensor& t) {
  Tensor d(DataType::kDouble, t.shape());
  const std::vector<double> v = t.ToDoubleVector();
  if (!v.empty()) std::memcpy(d.raw(), v.data(), v.size() * sizeof(double));
  return d;
}

// Swaps the last two dimensions (a copy).
Tensor TransposeLast2(const Tensor& t) {
  std::vector<int64_t> shape = t.shape();
  const size_t r = shape.size();
  std::swap(shape[r - 1], shape[r - 2]);
  Tensor out(t.dtype(), shape);
  const int64_t rows = t.shape()[r - 2], cols = t.shape()[r - 1];
  const int64_t batch = rows * cols == 0 ? 0 : t.numel() / (rows * cols);
  const double* src = t.data<double>();
  double* dst = out.data<double>();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) dst[b * rows * cols + j * rows + i] = src[b * rows * cols + i * cols + j];
    }
  }
  return out;
}

// The node with another op type/domain and the first `n` inputs, for running a plain op.
Node PlainNode(const Node& node, const std::string& op_type, size_t n) {
  Node plain = node;
  plain.op_type = op_type;
  plain.domain.clear();
  if (plain.inputs.size() > n) plain.inputs.resize(n);
  if (plain.outputs.size() > 1) plain.outputs.resize(1);
  return plain;
}

// y = act(y + z) in place on doubles, z broadcast to y's shape; then cast to `dtype`.
Result<Tensor> Epilogue(const Node& node, Tensor y, const Tensor* z, const ActivationSpec& act,
                        DataType dtype) {
  double* yd = y.data<double>();
  if (z) {
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> bs, BroadcastShapes(node, {y.shape(), z->shape()}));
    if (bs != y.shape()) {
      return NodeError(node, "residual " + ShapeToString(z->shape()) + " would enlarge the output " +
                                 ShapeToString(y.shape()));
    }
    const std::vector<int64_t> idx = BroadcastIndex(z->shape(), y.shape());
    for (int64_t i = 0; i < y.numel(); ++i) yd[i] += z->GetDouble(idx[static_cast<size_t>(i)]);
  }
  Tensor out(dtype, y.shape());
  for (int64_t i = 0; i < y.numel(); ++i) {
    double v = Activate(act.act, yd[i], act.params.data());
    if (act.has_post) v = v * act.post_scale + act.post_shift;
    out.SetDouble(i, v);
  }
  return out;
}

Status CheckResidualType(const InferContext& ctx, size_t i, const TensorType& out) {
  const TensorType* z = ctx.input(i);
  if (!z) return Status::Ok();
  if (z->dtype != DataType::kUndefined && out.dtype != DataType::kUndefined && z->dtype != out.dtype) {
    return NodeError(ctx.node, "residual Z must be " + std::string(DataTypeName(out.dtype)));
  }
  if (z->has_shape && out.has_shape && z->rank() > out.rank()) {
    return NodeError(ctx.node, "residual Z has a higher rank than the output");
  }
  return Status::Ok();
}

// --- FusedConv -------------------------------------------------------------------------
// Output 1, when present (fuse.conv_pool): GlobalAveragePool of output 0, the registered
// reference op run on it (as the node `gap`).
const OpSchema* GlobalAveragePoolOp(const Node& node, Node* gap, Status* st) {
  const OpSchema* pool = OpRegistry::Global().Find("", "GlobalAveragePool", kMaxOnnxOpset);
  if (!pool) *st = NodeUnsupported(node, "no GlobalAveragePool reference op");
  gap->name = node.name;
  gap->op_type = "GlobalAveragePool";
  gap->inputs = {node.outputs[0]};
  gap->outputs = {node.outputs[1]};
  return pool;
}

Result<std::vector<TensorType>> InferFusedConv(const InferContext& ctx) {
  const OpSchema* conv = OpRegistry::Global().Find("", "Conv", kMaxOnnxOpset);
  if (!conv) return NodeUnsupported(ctx.node, "no Conv reference op");
  SY_RETURN_IF_ERROR(ReadActivation(ctx.node).status());
  const Node plain = PlainNode(ctx.node, "Conv", 3);
  InferContext sub{plain, 11, {ctx.inputs.begin(), ctx.inputs.begin() + std::min<size_t>(3, ctx.num_inputs())},
                   {ctx.constants.begin(), ctx.constants.begin() + std::min<size_t>(3, ctx.num_inputs())}};
  SY_ASSIGN_OR_RETURN(std::vector<TensorType> out, conv->infer(sub));
  SY_RETURN_IF_ERROR(CheckResidualType(ctx, 3, out[0]));
  // Input scale S (fuse.conv_scale): [1 or N, C, 1, 1], multiplies X's channels.
  if (const TensorType* s = ctx.input(4); s && s->has_shape) {
    const TensorType& x = *ctx.input(0);
    const auto is = [](const Dim& d, int64_t v) { return d.is_static() && d.value == v; };
    const auto differ = [](const Dim& a, const Dim& b) { return a.is_static() && b.is_static() && a.value != b.value; };
    if (s->rank() != 4 || (x.has_shape && x.rank() != 4) || !is(s->dims[2], 1) || !is(s->dims[3], 1) ||
        (x.has_shape && (differ(s->dims[1], x.dims[1]) || (!is(s->dims[0], 1) && differ(s->dims[0], x.dims[0]))))) {
      return NodeError(ctx.node, "input scale " + s->ToString() + " is not [1 or N, C, 1, 1] for X " + x.ToString());
    }
    if (s->dtype != DataType::kUndefined && x.dtype != DataType::kUndefined && s->dtype != x.dtype) {
      return NodeError(ctx.node, "input scale must be " + std::string(DataTypeName(x.dtype)));
    }
  }
  if (ctx.node.outputs.size() > 1) {
    if (out[0].has_shape && out[0].rank() != 4) {
      return NodeError(ctx.node, "channel means (output 1) need a 4-D output, got " + out[0].ToString());
    }
    Status st;
    Node gap;
    const OpSchema* pool = GlobalAveragePoolOp(ctx.node, &gap, &st);
    if (!pool) return st;
    SY_ASSIGN_OR_RETURN(std::vector<TensorType> means, pool->infer(InferContext{gap, 1, {&out[0]}, {nullptr}}));
    out.push_back(means[0]);
  }
  return out;
}

Result<std::vector<Tensor>> RunFusedConv(const KernelContext& ctx) {
  const OpSchema* conv = OpRegistry::Global().Find("", "Conv", kMaxOnnxOpset);
  if (!conv) return NodeUnsupported(ctx.node, "no Conv reference op");
  SY_ASSIGN_OR_RETURN(ActivationSpec act, ReadActivation(ctx.node));
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* w, RequireInput(ctx, 1));
  Tensor xd = ToDoubleTensor(*x);
  const Tensor wd = ToDoubleTensor(*w);
  if (const Tensor* s = ctx.input(4)) {  // input scale: X's channels times S
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> bs, BroadcastShapes(ctx.node, {xd.shape(), s->shape()}));
    if (bs != xd.shape() || s->rank() != 4 || s->shape()[2] != 1 || s->shape()[3] != 1) {
      return NodeError(ctx.node, "input scale " + ShapeToString(s->shape()) + " is not [1 or N, C, 1, 1] for X " +
                                     ShapeToString(xd.shape()));
    }
    const std::vector<int64_t> idx = BroadcastIndex(s->shape(), xd.shape());
    double* p = xd.data<double>();
    for (int64_t i = 0; i < xd.numel(); ++i) p[i] *= s->GetDouble(idx[static_cast<size_t>(i)]);
  }
  Tensor bd;
  if (ctx.input(2)) bd = ToDoubleTensor(*ctx.input(2));
  const Node plain = PlainNode(ctx.node, "Conv", 3);
  KernelContext sub{plain, 11, {&xd, &wd, ctx.input(2) ? &bd : nullptr}};
  SY_ASSIGN_OR_RETURN(std::vector<Tensor> y, conv->run(sub));
  SY_ASSIGN_OR_RETURN(Tensor out, Epilogue(ctx.node, std::move(y[0]), ctx.input(3), act, x->dtype()));
  std::vector<Tensor> outs;
  if (ctx.node.outputs.size() > 1) {
    if (out.rank() != 4) return NodeError(ctx.node, "channel means (output 1) need a 4-D output");
    Status st;
    Node gap;
    const OpSchema* pool = GlobalAveragePoolOp(ctx.node, &gap, &st);
    if (!pool) return st;
    SY_ASSIGN_OR_RETURN(std::vector<Tensor> means, pool->run(KernelContext{gap, 1, {&out}}));
    outs.push_back(std::move(out));
    outs.push_back(std::move(means[0]));
    return outs;
  }
  outs.push_back(std::move(out));
  return outs;
}

// --- FusedMatMul -----------------------------------------------------------------------
TensorType SwapLast2(const TensorType& t) {
  TensorType s = t;
  if (s.has_shape && s.rank() >= 2) std::swap(s.dims[s.dims.size() - 1], s.dims[s.dims.size() - 2]);
  return s;
}

Result<std::vector<TensorType>> InferFusedMatMul(const InferContext& ctx) {
  const OpSchema* mm = OpRegistry::Global().Find("", "MatMul", kMaxOnnxOpset);
  if (!mm) return NodeUnsupported(ctx.node, "no MatMul reference op");
  SY_RETURN_IF_ERROR(ReadActivation(ctx.node).status());
  if (ctx.node.Has("post_affine")) return NodeError(ctx.node, "post_affine is FusedConv's only");
  TensorType a = *ctx.input(0), b = *ctx.input(1);
  for (auto [t, attr] : {std::pair{&a, "trans_a"}, std::pair{&b, "trans_b"}}) {
    if (ctx.node.GetInt(attr, 0) == 0) continue;
    if (t->has_shape && t->rank() < 2) return NodeError(ctx.node, std::string(attr) + " needs rank >= 2");
    *t = SwapLast2(*t);
  }
  const Node plain = PlainNode(ctx.node, "MatMul", 2);
  InferContext sub{plain, 13, {&a, &b}, {nullptr, nullptr}};
  SY_ASSIGN_OR_RETURN(std::vector<TensorType> out, mm->infer(sub));
  if (const TensorType* bias = ctx.input(2); bias && bias->has_shape) {
    if (bias->rank() != 1) return NodeError(ctx.node, "bias must be 1-D");
    const TensorType& o = out[0];
    if (o.has_shape && o.rank() >= 1 && o.dims.back().is_static() && bias->dims[0].is_static() &&
        bias->dims[0].value != o.dims.back().value && bias->dims[0].value != 1) {
      return NodeError(ctx.node, "bias has " + std::to_string(bias->dims[0].value) +
                                     " elements for " + o.dims.back().ToString() + " columns");
    }
  }
  SY_RETURN_IF_ERROR(CheckResidualType(ctx, 3, out[0]));
  return out;
}

Result<std::vector<Tensor>> RunFusedMatMul(const KernelContext& ctx) {
  const OpSchema* mm = OpRegistry::Global().Find("", "MatMul", kMaxOnnxOpset);
  if (!mm) return NodeUnsupported(ctx.node, "no MatMul reference op");
  SY_ASSIGN_OR_RETURN(ActivationSpec act, ReadActivation(ctx.node));
  SY_ASSIGN_OR_RETURN(const Tensor* a, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* b, RequireInput(ctx, 1));
  if (!IsFloatType(a->dtype()) || a->dtype() != b->dtype()) {
    return NodeError(ctx.node, "A and B must share a floating-point dtype");
  }
  Tensor ad = ToDoubleTensor(*a), bd = ToDoubleTensor(*b);
  if (ctx.node.GetInt("trans_a", 0)) {
    if (ad.rank() < 2) return NodeError(ctx.node, "trans_a needs rank >= 2");
    ad = TransposeLast2(ad);
  }
  if (ctx.node.GetInt("trans_b", 0)) {
    if (bd.rank() < 2) return NodeError(ctx.node, "trans_b needs rank >= 2");
    bd = TransposeLast2(bd);
  }
  const Node plain = PlainNode(ctx.node, "MatMul", 2);
  SY_ASSIGN_OR_RETURN(std::vector<Tensor> y, mm->run(KernelContext{plain, 13, {&ad, &bd}}));
  Tensor& yd = y[0];
  const double alpha = ctx.node.GetFloat("alpha", 1.0f);
  double* p = yd.data<double>();
  for (int64_t i = 0; i < yd.numel(); ++i) p[i] *= alpha;
  if (const Tensor* bias = ctx.input(2)) {
    const int64_t n = yd.rank() == 0 ? 1 : yd.shape().back();
    if (bias->rank() != 1 || (bias->numel() != n && bias->numel() != 1)) {
      return NodeError(ctx.node, "bias must be 1-D with " + std::to_string(n) + " elements");
    }
    const bool scalar = bias->numel() == 1;
    for (int64_t i = 0; i < yd.numel(); ++i) p[i] += bias->GetDouble(scalar ? 0 : i % n);
  }
  SY_ASSIGN_OR_RETURN(Tensor out, Epilogue(ctx.node, std::move(yd), ctx.input(3), act, a->dtype()));
  return std::vector<Tensor>{std::move(out)};
}

// --- FusedElementwise ------------------------------------------------------------------
enum class Bin { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin };

struct Step {
  bool binary = false;
  Bin bin = Bin::kAdd;
  Act act = Act::kNone;
  int64_t operand = -1;
  bool swap = false;
  const float* params = nullptr;
};

Result<std::vector<Step>> ReadSteps(const Node& node, size_t num_inputs,
                                    const std::vector<float>& params) {
  const std::vector<std::string> ops = node.Find("ops") ? node.Find("ops")->strings
                                                        : std::vector<std::string>{};
  const std::vector<int64_t> operands = node.GetInts("operands");
  const std::vector<int64_t> swap = node.GetInts("swap");
  const std::vector<int64_t> offsets = node.GetInts("param_offsets");
  if (ops.empty()) return NodeError(node, "attribute 'ops' is empty");
  if (operands.size() != ops.size() || swap.size() != ops.size()) {
    return NodeError(node, "'operands' and 'swap' need one entry per op");
  }
  static const std::pair<const char*, Bin> kBinary[] = {
      {"Add", Bin::kAdd}, {"Sub", Bin::kSub}, {"Mul", Bin::kMul}, {"Div", Bin::kDiv},
      {"Pow", Bin::kPow}, {"Max", Bin::kMax}, {"Min", Bin::kMin}};
  std::vector<Step> steps(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    Step& s = steps[k];
    for (const auto& [n, b] : kBinary) {
      if (ops[k] == n) s.binary = true, s.bin = b;
    }
    if (s.binary) {
      if (operands[k] < 0 || static_cast<size_t>(operands[k]) >= num_inputs) {
        return NodeError(node, "op " + std::to_string(k) + " (" + ops[k] + ") names input " +
                                   std::to_string(operands[k]) + " of " + std::to_string(num_inputs));
      }
      s.operand = operands[k];
      s.swap = swap[k] != 0;
      continue;
    }
    SY_ASSIGN_OR_RETURN(s.act, ParseActivation(node, ops[k]));
    if (s.act == Act::kNone) return NodeError(node, "op " + std::to_string(k) + " is empty");
    const int count = ActivationParamCount(s.act);
    if (count > 0) {
      if (k >= offsets.size() || offsets[k] < 0 ||
          static_cast<size_t>(offsets[k]) + static_cast<size_t>(count) > params.size()) {
        return NodeError(node, "op " + std::to_string(k) + " (" + ops[k] + ") has no params at its offset");
      }
      s.params = params.data() + offsets[k];
    }
  }
  return steps;
}

double ApplyBinary(Bin b, double x, double y) {
  switch (b) {
    case Bin::kAdd: return x + y;
    case Bin::kSub: return x - y;
    case Bin::kMul: return x * y;
    case Bin::kDiv: return x / y;
    case Bin::kPow: return std::pow(x, y);
    case Bin::kMax: return std::fmax(x, y);
    case Bin::kMin: return std::fmin(x, y);
  }
  return x;
}

Result<std::vector<TensorType>> InferFusedElementwise(const InferContext& ctx) {
  const std::vector<float> params = ctx.node.GetFloats("params");
  SY_RETURN_IF_ERROR(ReadSteps(ctx.node, ctx.num_inputs(), params).status());
  return InferBroadcast(ctx);
}

Result<std::vector<Tensor>> RunFusedElementwise(const KernelContext& ctx) {
  const std::vector<float> params = ctx.node.GetFloats("params");
  SY_ASSIGN_OR_RETURN(std::vector<Step> steps, ReadSteps(ctx.node, ctx.num_inputs(), params));
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    SY_ASSIGN_OR_RETURN(const Tensor* t, RequireInput(ctx, i));
    if (!IsFloatType(t->dtype())) return NodeError(ctx.node, "inputs must be floating-point");
    shapes.push_back(t->shape());
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape, BroadcastShapes(ctx.node, shapes));
  // Broadcasting commutes with elementwise ops, so the whole chain runs at the output shape.
  std::vector<std::vector<double>> in(ctx.num_inputs());
  Tensor probe(DataType::kUint8, out_shape);
  const int64_t n = probe.numel();
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const std::vector<double> v = ctx.input(i)->ToDoubleVector();
    const std::vector<int64_t> idx = BroadcastIndex(shapes[i], out_shape);
    in[i].resize(static_cast<size_t>(n));
    for (int64_t e = 0; e < n; ++e) in[i][e] = v[static_cast<size_t>(idx[e])];
  }
  std::vector<double> acc = in[0];
  for (const Step& s : steps) {
    if (s.binary) {
      const std::vector<double>& o = in[static_cast<size_t>(s.operand)];
      for (int64_t e = 0; e < n; ++e) acc[e] = s.swap ? ApplyBinary(s.bin, o[e], acc[e]) : ApplyBinary(s.bin, acc[e], o[e]);
    } else {
      for (int64_t e = 0; e < n; ++e) acc[e] = Activate(s.act, acc[e], s.params);
    }
  }
  Tensor out(ctx.input(0)->dtype(), out_shape);
  for (int64_t e = 0; e < n; ++e) out.SetDouble(e, acc[e]);
  return std::vector<Tensor>{std::move(out)};
}

// --- Reorder: a layout change, the identity on values ------------------------------------
Result<std::vector<Tensor>> RunReorder(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  return std::vector<Tensor>{*x};
}

}  // namespace

SY_REGISTER_OPS(FusedOps) {
  reg.Register({kSwitchyardDomain, "FusedConv", 1, 2, 5, 1, 2, InferFusedConv, RunFusedConv});
  reg.Register({kSwitchyardDomain, "FusedMatMul", 1, 2, 4, 1, 1, InferFusedMatMul, RunFusedMatMul});
  reg.Register({kSwitchyardDomain, "FusedElementwise", 1, 1, -1, 1, 1, InferFusedElementwise,
                RunFusedElementwise});
  reg.Register({kSwitchyardDomain, "Reorder", 1, 1, 1, 1, 1,
                [](const InferContext& ctx) { return InferSameAsInput(ctx); }, RunReorder});
}

}  // namespace switchyard::ops
