// CUDA own-kernel implementations (provider "cuda") of the elementwise ops over
// kernels/elementwise.cu: unary activations and math (float32/float16/bfloat16, float math),
// Clip (bounds from attributes, constant inputs, or device inputs), broadcast binary
// arithmetic (Add Sub Mul Div Pow Max Min), comparisons (Equal Less Greater -> bool),
// Where (any element size), Cast (float32/float16/bfloat16/int32/int64/bool) and
// switchyard.FusedElementwise (the chain of src/passes/fuse_elementwise.cc, semantics of
// src/reference/ops/fused.cc). Shapes are the build's static shapes (rank <= 6 where a
// kernel indexes by coordinates).
//
// Channels-last (layout.activations=nhwc, layout.h): unary ops, Clip and Cast of a 4-D
// run-time tensor, and arithmetic binary ops / FusedElementwise with a 4-D output, are
// layout-transparent: they declare their 4-D run-time inputs and the output "nhwc" and
// index the storage order [N, H, W, C] (other inputs must be plain tensors whose memory
// reads the same, e.g. [1, C, 1, 1] biases or scalars), so ResNet-like graphs need no
// reorders around them.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/common.h"
#include "backends/cuda/kernels/elementwise.h"
#include "backends/cuda/layout.h"
#include "reference/op_registry.h"

namespace switchyard::cuda {
namespace {

namespace k = kernels;
using Shape = std::vector<int64_t>;

std::optional<k::ElemType> Elem(DataType t) {
  switch (t) {
    case DataType::kFloat: return k::ElemType::kF32;
    case DataType::kFloat16: return k::ElemType::kF16;
    case DataType::kBfloat16: return k::ElemType::kBF16;
    case DataType::kInt32: return k::ElemType::kI32;
    case DataType::kInt64: return k::ElemType::kI64;
    case DataType::kBool: return k::ElemType::kBool;
    default: return std::nullopt;
  }
}


k::Dims ToDims(const Shape& s) {
  k::Dims d;
  d.rank = static_cast<int>(s.size());
  for (size_t i = 0; i < s.size() && i < static_cast<size_t>(k::kMaxDims); ++i) d.d[i] = s[i];
  return d;
}

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Every present input static and every output's inferred shape static with rank <= max_rank.
bool StaticIO(const Node& n, const KernelBuildContext& ctx, size_t max_rank) {
  for (size_t i = 0; i < ctx.input_shapes.size(); ++i) {
    if (!n.HasInput(i)) continue;
    if (!IsStaticShape(ctx.input_shapes[i]) || ctx.input_shapes[i].size() > max_rank) return false;
  }
  for (ValueId id : n.outputs) {
    if (id == kNoValue) continue;
    const TensorType& t = ctx.graph.value(id).type;
    if (!t.has_shape) return false;
    const Shape s = t.StaticShape();
    if (!IsStaticShape(s) || s.size() > max_rank) return false;
  }
  return true;
}

DataType OutDtype(const Node& n, const KernelBuildContext& ctx, size_t i = 0) {
  return i < n.outputs.size() && n.outputs[i] != kNoValue ? ctx.graph.value(n.outputs[i]).type.dtype
                                                           : DataType::kUndefined;
}

int OpVersion(const Node& n, const KernelBuildContext& ctx) {
  if (n.since_version > 0) return n.since_version;
  auto it = ctx.graph.opsets.find(n.domain);
  const OpSchema* s =
      OpRegistry::Global().Find(n.domain, n.op_type, it == ctx.graph.opsets.end() ? 17 : it->second);
  return s ? s->since_version : 1;
}

Status Launched(cudaError_t e, const char* what) {
  if (e != cudaSuccess) return CudaError(e, what);
  return CheckLaunch(what);
}

Status NoPrepare(const Node&, const KernelBuildContext&, StepSpec&) { return Status::Ok(); }

// --- Channels-last ---------------------------------------------------------------------
// Unary-like ops (input 0 is the data, further inputs are scalars): nhwc in and out when
// the route asks for it and input 0 is a 4-D run-time tensor that a conv chain produces
// channels-last (LikelyNhwc).
void UnaryLayouts(const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
  if (!WantNhwc(ctx) || ctx.input_shapes.empty() || ctx.input_shapes[0].size() != 4) return;
  if (ctx.constants.empty() || ctx.constants[0] || n.outputs.size() != 1) return;
  if (!LikelyNhwc(ctx.graph, n.inputs[0])) return;  // stays with its plain producer
  std::vector<std::string> in(n.inputs.size(), "");
  in[0] = kNhwc;
  spec.params["input_layouts"] = in;
  spec.params["output_layouts"] = {kNhwc};
}

Status UnaryPrepare(const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
  UnaryLayouts(n, ctx, spec);
  return Status::Ok();
}

// Broadcasting ops with a 4-D output and an input that a conv chain produces channels-last:
// every 4-D run-time input nhwc; the others must be plain tensors whose memory reads as
// NHWC (constants are never reordered). Plain layouts otherwise.
void BroadcastLayouts(const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
  if (!WantNhwc(ctx) || n.outputs.size() != 1 || n.outputs[0] == kNoValue) return;
  const TensorType& ot = ctx.graph.value(n.outputs[0]).type;
  if (!ot.has_shape || ot.StaticShape().size() != 4) return;
  std::vector<std::string> in(n.inputs.size(), "");
  bool any = false;
  for (size_t i = 0; i < n.inputs.size() && i < ctx.input_shapes.size(); ++i) {
    if (!n.HasInput(i)) return;
    const Shape& s = ctx.input_shapes[i];
    const bool constant = i < ctx.constants.size() && ctx.constants[i];
    if (s.size() == 4 && !constant) {
      in[i] = kNhwc;
      any = any || LikelyNhwc(ctx.graph, n.inputs[i]);
    } else if (!PlainIsNhwc(s)) {
      return;
    }
  }
  if (!any) return;
  spec.params["input_layouts"] = in;
  spec.params["output_layouts"] = {kNhwc};
}

Status BroadcastPrepare(const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
  BroadcastLayouts(n, ctx, spec);
  return Status::Ok();
}

// The dims a broadcasting kernel indexes for input `i` (or the output with i = npos):
// logical when the output is plain, the storage order [N, H, W, C] when it is nhwc.
Result<k::Dims> StoredDims(const StepView& v, size_t i) {
  const bool out_nhwc = IsNhwc(v.output_layouts, 0);
  const Shape& s = i == std::string::npos ? v.output_shapes[0] : v.input_shapes[i];
  const bool in_nhwc = i != std::string::npos && IsNhwc(v.input_layouts, i);
  if (!out_nhwc) {
    if (in_nhwc) return Status::Internal("cuda " + v.node.op_type + ": nhwc input with a plain output");
    return ToDims(s);
  }
  if (s.size() > 4 || (i != std::string::npos && !in_nhwc && !PlainIsNhwc(s)) || (in_nhwc && s.size() != 4)) {
    return Status::Internal("cuda " + v.node.op_type + ": input " + std::to_string(i) + " " + ShapeToString(s) +
                            " cannot be read channels-last");
  }
  return ToDims(NhwcDims(Rank4(s)));
}

CpuOpImpl Impl(const std::string& domain, const std::string& op) {
  CpuOpImpl impl;
  impl.provider = "cuda";
  impl.domain = domain;
  impl.op_type = op;
  impl.prepare = NoPrepare;
  return impl;
}

// --- Unary -----------------------------------------------------------------------------
bool FloatUnary(const Node& n, const KernelBuildContext& ctx) {
  return IsCudaBuild(ctx) && !ctx.input_dtypes.empty() && n.HasInput(0) &&
         IsCudaFloat(ctx.input_dtypes[0]) && StaticIO(n, ctx, 64) &&
         OutDtype(n, ctx) == ctx.input_dtypes[0];
}

void RegisterUnary(CpuImplRegistry& reg, const std::string& domain, const std::string& name,
                   k::UnaryOp op) {
  CpuOpImpl impl = Impl(domain, name);
  impl.prepare = UnaryPrepare;
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    if (!FloatUnary(n, ctx) || n.inputs.size() != 1) return false;
    if (n.op_type == "Gelu") {
      const std::string a = n.GetString("approximate", "none");
      return a == "none" || a == "tanh";
    }
    return true;
  };
  impl.create = [op](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const Node& n = v.node;
    k::UnaryOp o = op;
    float a = 0.f, b = 0.f;
    switch (op) {
      case k::UnaryOp::kLeakyRelu: a = n.GetFloat("alpha", 0.01f); break;
      case k::UnaryOp::kElu: a = n.GetFloat("alpha", 1.0f); break;
      case k::UnaryOp::kHardSigmoid:
        a = n.GetFloat("alpha", 0.2f);
        b = n.GetFloat("beta", 0.5f);
        break;
      case k::UnaryOp::kGelu:
        if (n.GetString("approximate", "none") == "tanh") o = k::UnaryOp::kGeluTanh;
        break;
      default: break;
    }
    const auto t = Elem(v.input_dtypes[0]);
    if (!t) return Status::Internal("cuda " + n.op_type + ": unsupported dtype");
    const k::ElemType et = *t;
    const std::string what = n.op_type;
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      return Launched(k::LaunchUnary(et, o, a, b, io.inputs[0]->data, io.outputs[0]->data,
                                     io.inputs[0]->numel(), ex.stream),
                      what.c_str());
    });
  };
  reg.Register(std::move(impl));
}

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Clip: bounds from attributes (opset < 11) or optional scalar inputs (11+): constant
// ones are read at prepare, others are read on the device at run time.
void RegisterClip(CpuImplRegistry& reg) {
  CpuOpImpl impl = Impl("", "Clip");
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    if (!FloatUnary(n, ctx) || n.inputs.size() > 3) return false;
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      if (!n.HasInput(i)) continue;
      if (ctx.input_dtypes[i] != ctx.input_dtypes[0] || Numel(ctx.input_shapes[i]) != 1) return false;
    }
    return true;
  };
  impl.prepare = [](const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
    double lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
    bool lo_dev = false, hi_dev = false;
    if (OpVersion(n, ctx) < 11) {
      lo = n.GetFloat("min", std::numeric_limits<float>::lowest());
      hi = n.GetFloat("max", std::numeric_limits<float>::max());
    } else {
      lo = -INFINITY;
      hi = INFINITY;
      for (size_t i = 1; i <= 2 && i < n.inputs.size(); ++i) {
        if (!n.HasInput(i)) continue;
        const Tensor* c = ctx.constants[i];
        if (c) {
          (i == 1 ? lo : hi) = c->GetDouble(0);
          spec.consumed_inputs.push_back(static_cast<int>(i));
        } else {
          (i == 1 ? lo_dev : hi_dev) = true;
        }
      }
    }
    // As float bit patterns: JSON has no infinities.
    spec.params["lo_bits"] = FloatBits(static_cast<float>(lo));
    spec.params["hi_bits"] = FloatBits(static_cast<float>(hi));
    spec.params["lo_dev"] = lo_dev;
    spec.params["hi_dev"] = hi_dev;
    UnaryLayouts(n, ctx, spec);
    return Status::Ok();
  };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const auto t = Elem(v.input_dtypes[0]);
    if (!t) return Status::Internal("cuda Clip: unsupported dtype");
    const k::ElemType et = *t;
    const float lo = BitsFloat(v.params.value("lo_bits", FloatBits(-INFINITY)));
    const float hi = BitsFloat(v.params.value("hi_bits", FloatBits(INFINITY)));
    const bool lo_dev = v.params.value("lo_dev", false), hi_dev = v.params.value("hi_dev", false);
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      const TensorRef& x = *io.inputs[0];
      if (!lo_dev && !hi_dev) {
        return Launched(k::LaunchUnary(et, k::UnaryOp::kClip, lo, hi, x.data, io.outputs[0]->data,
                                       x.numel(), ex.stream),
                        "Clip");
      }
      const void* lp = lo_dev && io.inputs.size() > 1 && io.inputs[1] ? io.inputs[1]->data : nullptr;
      const void* hp = hi_dev && io.inputs.size() > 2 && io.inputs[2] ? io.inputs[2]->data : nullptr;
      return Launched(k::LaunchClipDevice(et, lo, hi, lp, hp, x.data, io.outputs[0]->data, x.numel(),
                                          ex.stream),
                      "Clip");
    });
  };
  reg.Register(std::move(impl));
}

// --- Binary ------------------------------------------------------------------------------
void RegisterBinary(CpuImplRegistry& reg, const std::string& name, k::BinaryOp op) {
  CpuOpImpl impl = Impl("", name);
  if (!k::IsCompare(op)) impl.prepare = BroadcastPrepare;
  impl.supports = [op](const Node& n, const KernelBuildContext& ctx) {
    if (!IsCudaBuild(ctx) || n.inputs.size() != 2 || !n.HasInput(0) || !n.HasInput(1)) return false;
    if (ctx.input_dtypes.size() != 2 || ctx.input_dtypes[0] != ctx.input_dtypes[1]) return false;
    if (!StaticIO(n, ctx, k::kMaxDims)) return false;
    const DataType t = ctx.input_dtypes[0];
    if (k::IsCompare(op)) {
      const bool ok = IsCudaFloat(t) || t == DataType::kInt32 || t == DataType::kInt64 ||
                      (t == DataType::kBool && op == k::BinaryOp::kEqual);
      return ok && OutDtype(n, ctx) == DataType::kBool;
    }
    return IsCudaFloat(t) && OutDtype(n, ctx) == t;
  };
  impl.create = [op](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const auto t = Elem(v.input_dtypes[0]);
    if (!t) return Status::Internal("cuda " + v.node.op_type + ": unsupported dtype");
    const k::ElemType et = *t;
    SY_ASSIGN_OR_RETURN(const k::Dims as, StoredDims(v, 0));
    SY_ASSIGN_OR_RETURN(const k::Dims bs, StoredDims(v, 1));
    SY_ASSIGN_OR_RETURN(const k::Dims ys, StoredDims(v, std::string::npos));
    const std::string what = v.node.op_type;
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      return Launched(k::LaunchBinary(et, op, io.inputs[0]->data, as, io.inputs[1]->data, bs,
                                      io.outputs[0]->data, ys, ex.stream),
                      what.c_str());
    });
  };
  reg.Register(std::move(impl));
}

// Where: bool condition, values of any 1/2/4/8-byte dtype, all three broadcast.
void RegisterWhere(CpuImplRegistry& reg) {
  CpuOpImpl impl = Impl("", "Where");
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    if (!IsCudaBuild(ctx) || n.inputs.size() != 3 || ctx.input_dtypes.size() != 3) return false;
    for (size_t i = 0; i < 3; ++i) {
      if (!n.HasInput(i)) return false;
    }
    const DataType t = ctx.input_dtypes[1];
    if (ctx.input_dtypes[0] != DataType::kBool || ctx.input_dtypes[2] != t || t == DataType::kString) {
      return false;
    }
    const size_t es = DataTypeSize(t);
    return (es == 1 || es == 2 || es == 4 || es == 8) && StaticIO(n, ctx, k::kMaxDims);
  };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const int es = static_cast<int>(DataTypeSize(v.input_dtypes[1]));
    const k::Dims cs = ToDims(v.input_shapes[0]), xs = ToDims(v.input_shapes[1]),
                  zs = ToDims(v.input_shapes[2]), ys = ToDims(v.output_shapes[0]);
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      return Launched(k::LaunchWhere(es, io.inputs[0]->data, cs, io.inputs[1]->data, xs,
                                     io.inputs[2]->data, zs, io.outputs[0]->data, ys, ex.stream),
                      "Where");
    });
  };
  reg.Register(std::move(impl));
}

// --- Cast ----------------------------------------------------------------------------------
void RegisterCast(CpuImplRegistry& reg) {
  CpuOpImpl impl = Impl("", "Cast");
  impl.prepare = UnaryPrepare;
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    if (!IsCudaBuild(ctx) || ctx.input_dtypes.empty() || !n.HasInput(0) || !n.Has("to")) return false;
    const auto to = static_cast<DataType>(n.GetInt("to", 0));
    return Elem(ctx.input_dtypes[0]).has_value() && Elem(to).has_value() && StaticIO(n, ctx, 64);
  };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const DataType from_t = v.input_dtypes[0];
    const DataType to_t = static_cast<DataType>(v.node.GetInt("to", 0));
    const auto from = Elem(from_t), to = Elem(to_t);
    if (!from || !to) return Status::Internal("cuda Cast: unsupported dtypes");
    const k::ElemType f = *from, t = *to;
    const size_t es = DataTypeSize(from_t);
    const bool same = from_t == to_t;
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      const TensorRef& x = *io.inputs[0];
      if (same) {
        if (x.data != io.outputs[0]->data && x.numel() > 0) {
          SY_CUDA_CHECK(cudaMemcpyAsync(io.outputs[0]->data, x.data, static_cast<size_t>(x.numel()) * es,
                                        cudaMemcpyDeviceToDevice, ex.stream));
        }
        return Status::Ok();
      }
      return Launched(k::LaunchCast(f, t, x.data, io.outputs[0]->data, x.numel(), ex.stream), "Cast");
    });
  };
  reg.Register(std::move(impl));
}

// --- FusedElementwise ----------------------------------------------------------------------
// Parses the chain exactly as the reference's ReadSteps; nullopt when invalid or too long.
std::optional<k::FusedChain> ParseChain(const Node& node, size_t num_inputs) {
  const std::vector<std::string> ops =
      node.Find("ops") ? node.Find("ops")->strings : std::vector<std::string>{};
  const std::vector<int64_t> operands = node.GetInts("operands");
  const std::vector<int64_t> swap = node.GetInts("swap");
  const std::vector<int64_t> offsets = node.GetInts("param_offsets");
  const std::vector<float> params = node.GetFloats("params");
  if (ops.empty() || ops.size() > static_cast<size_t>(k::kMaxFusedLinks)) return std::nullopt;
  if (operands.size() != ops.size() || swap.size() != ops.size()) return std::nullopt;
  if (num_inputs < 1 || num_inputs > static_cast<size_t>(k::kMaxFusedInputs)) return std::nullopt;
  static const std::pair<const char*, int> kBinary[] = {{"Add", 0}, {"Sub", 1}, {"Mul", 2}, {"Div", 3},
                                                        {"Pow", 4}, {"Max", 5}, {"Min", 6}};
  static const std::pair<const char*, k::FusedAct> kUnary[] = {
      {"Relu", k::FusedAct::kRelu},         {"LeakyRelu", k::FusedAct::kLeakyRelu},
      {"Clip", k::FusedAct::kClip},         {"Sigmoid", k::FusedAct::kSigmoid},
      {"HardSigmoid", k::FusedAct::kHardSigmoid}, {"HardSwish", k::FusedAct::kHardSwish},
      {"Tanh", k::FusedAct::kTanh},         {"SiLU", k::FusedAct::kSiLU},
      {"Gelu", k::FusedAct::kGelu},         {"Erf", k::FusedAct::kErf},
      {"Exp", k::FusedAct::kExp},           {"Log", k::FusedAct::kLog},
      {"Sqrt", k::FusedAct::kSqrt},         {"Neg", k::FusedAct::kNeg},
      {"Abs", k::FusedAct::kAbs},           {"Reciprocal", k::FusedAct::kReciprocal}};
  k::FusedChain ch;
  ch.num_links = static_cast<int>(ops.size());
  ch.num_inputs = static_cast<int>(num_inputs);
  for (size_t l = 0; l < ops.size(); ++l) {
    int bin = -1;
    for (const auto& [name, code] : kBinary) {
      if (ops[l] == name) bin = code;
    }
    if (bin >= 0) {
      if (operands[l] < 0 || static_cast<size_t>(operands[l]) >= num_inputs) return std::nullopt;
      ch.op[l] = bin;
      ch.operand[l] = static_cast<int>(operands[l]);
      ch.swap[l] = swap[l] != 0 ? 1 : 0;
      continue;
    }
    int act = -1;
    for (const auto& [name, code] : kUnary) {
      if (ops[l] == name) act = static_cast<int>(code);
    }
    if (act < 0) return std::nullopt;
    ch.op[l] = act;
    const auto a = static_cast<k::FusedAct>(act);
    const int count = a == k::FusedAct::kLeakyRelu                                  ? 1
                      : (a == k::FusedAct::kClip || a == k::FusedAct::kHardSigmoid) ? 2
                                                                                     : 0;
    if (count > 0) {
      if (l >= offsets.size() || offsets[l] < 0 ||
          static_cast<size_t>(offsets[l]) + static_cast<size_t>(count) > params.size()) {
        return std::nullopt;
      }
      ch.p0[l] = params[static_cast<size_t>(offsets[l])];
      if (count > 1) ch.p1[l] = params[static_cast<size_t>(offsets[l]) + 1];
    }
  }
  return ch;
}

void RegisterFused(CpuImplRegistry& reg) {
  CpuOpImpl impl = Impl("switchyard", "FusedElementwise");
  impl.prepare = BroadcastPrepare;
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    if (!IsCudaBuild(ctx) || ctx.input_dtypes.empty()) return false;
    const DataType t = ctx.input_dtypes[0];
    if (!IsCudaFloat(t) || OutDtype(n, ctx) != t) return false;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (!n.HasInput(i) || ctx.input_dtypes[i] != t) return false;
    }
    return StaticIO(n, ctx, k::kMaxDims) && ParseChain(n, n.inputs.size()).has_value();
  };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const auto ch = ParseChain(v.node, v.input_shapes.size());
    const auto t = Elem(v.input_dtypes[0]);
    if (!ch || !t) return Status::Internal("cuda FusedElementwise: unsupported chain");
    const k::FusedChain chain = *ch;
    const k::ElemType et = *t;
    std::vector<k::Dims> shapes;
    for (size_t i = 0; i < v.input_shapes.size(); ++i) {
      SY_ASSIGN_OR_RETURN(const k::Dims d, StoredDims(v, i));
      shapes.push_back(d);
    }
    SY_ASSIGN_OR_RETURN(const k::Dims ys, StoredDims(v, std::string::npos));
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      const void* ptrs[k::kMaxFusedInputs] = {};
      for (size_t i = 0; i < shapes.size(); ++i) {
        if (!io.inputs[i]) return Status::Internal("cuda FusedElementwise: missing input");
        ptrs[i] = io.inputs[i]->data;
      }
      return Launched(k::LaunchFusedElementwise(et, chain, ptrs, shapes.data(), io.outputs[0]->data, ys,
                                                ex.stream),
                      "FusedElementwise");
    });
  };
  reg.Register(std::move(impl));
}

}  // namespace

SY_REGISTER_CUDA_IMPLS(Elementwise) {
  const std::pair<const char*, k::UnaryOp> kUnary[] = {
      {"Relu", k::UnaryOp::kRelu},           {"Sigmoid", k::UnaryOp::kSigmoid},
      {"Tanh", k::UnaryOp::kTanh},           {"Erf", k::UnaryOp::kErf},
      {"Exp", k::UnaryOp::kExp},             {"Log", k::UnaryOp::kLog},
      {"Sqrt", k::UnaryOp::kSqrt},           {"Neg", k::UnaryOp::kNeg},
      {"Abs", k::UnaryOp::kAbs},             {"Reciprocal", k::UnaryOp::kReciprocal},
      {"HardSwish", k::UnaryOp::kHardSwish}, {"HardSigmoid", k::UnaryOp::kHardSigmoid},
      {"LeakyRelu", k::UnaryOp::kLeakyRelu}, {"Elu", k::UnaryOp::kElu},
      {"Softplus", k::UnaryOp::kSoftplus},   {"Gelu", k::UnaryOp::kGelu},
  };
  for (const auto& [name, op] : kUnary) RegisterUnary(reg, "", name, op);
  RegisterUnary(reg, "switchyard", "Gelu", k::UnaryOp::kGelu);
  RegisterClip(reg);
  const std::pair<const char*, k::BinaryOp> kBinary[] = {
      {"Add", k::BinaryOp::kAdd},     {"Sub", k::BinaryOp::kSub},   {"Mul", k::BinaryOp::kMul},
      {"Div", k::BinaryOp::kDiv},     {"Pow", k::BinaryOp::kPow},   {"Max", k::BinaryOp::kMax},
      {"Min", k::BinaryOp::kMin},     {"Equal", k::BinaryOp::kEqual}, {"Less", k::BinaryOp::kLess},
      {"Greater", k::BinaryOp::kGreater},
  };
  for (const auto& [name, op] : kBinary) RegisterBinary(reg, name, op);
  RegisterWhere(reg);
  RegisterCast(reg);
  RegisterFused(reg);
}

}  // namespace switchyard::cuda
