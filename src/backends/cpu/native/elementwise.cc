// Native unary elementwise ops (fp32 activations and math, Clip, Not) and Cast.
#include <algorithm>
#include <limits>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/native/nhwc.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

constexpr int64_t kGrain = 16384;  // elements per thread below which threading does not pay

ShapeFn SameShapeAsInput0() {
  return [](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
    return Shapes{in[0]->shape};
  };
}

bool OneFloatInOut(const Node& n, const KernelBuildContext& ctx) {
  return !ctx.input_dtypes.empty() && ctx.input_dtypes[0] == DataType::kFloat;
}

// Elementwise on X alone: runs on whatever unpadded layout X arrives in (nhwc included).
Status FollowInputLayout(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  if (InputIsNhwc(ctx)) DeclareNhwc(node, spec, {0});
  return Status::Ok();
}

// Unary fp32 ops whose only parameters are attributes.
void RegisterUnary(CpuImplRegistry& reg, const std::string& name, UnaryOp op) {
  RegisterNative(
      reg, "", name, OneFloatInOut, [op](const StepView& v) {
        UnaryParams p = DefaultUnaryParams(op);
        const Node& n = v.node;
        if (op == UnaryOp::kLeakyRelu || op == UnaryOp::kElu) p.a = n.GetFloat("alpha", p.a);
        if (op == UnaryOp::kHardSigmoid || op == UnaryOp::kSelu) {
          p.a = n.GetFloat("alpha", p.a);
          p.b = n.GetFloat(op == UnaryOp::kSelu ? "gamma" : "beta", p.b);
        }
        return MakeKernel(SameShapeAsInput0(), [op, p](const KernelIO& io) {
          const float* x = io.inputs[0]->as<float>();
          float* y = io.outputs[0]->as<float>();
          ParallelFor(io.inputs[0]->numel(), io.threads, kGrain, [&](int64_t b, int64_t e) {
            ApplyUnary(op, p, x + b, y + b, e - b);
          });
          return Status::Ok();
        });
      }, FollowInputLayout);
}

// Clip: bounds from attributes (opset < 11) or optional scalar inputs (opset >= 11).
void RegisterClip(CpuImplRegistry& reg) {
  RegisterNative(reg, "", "Clip", AllFloat, [](const StepView& v) {
    // Attributes exist only before opset 11, inputs only from 11: reading both is safe.
    UnaryParams base = DefaultUnaryParams(UnaryOp::kClip);
    base.a = v.node.GetFloat("min", base.a);
    base.b = v.node.GetFloat("max", base.b);
    const Node node = v.node;
    return MakeKernel(SameShapeAsInput0(), [base, node](const KernelIO& io) {
      UnaryParams p = base;
      {
        for (int i = 1; i <= 2; ++i) {
          const TensorRef* t = io.inputs.size() > size_t(i) ? io.inputs[i] : nullptr;
          if (!t) continue;
          if (t->numel() != 1) return ops::NodeError(node, "Clip bounds must be scalars");
          (i == 1 ? p.a : p.b) = t->as<float>()[0];
        }
      }
      const float* x = io.inputs[0]->as<float>();
      float* y = io.outputs[0]->as<float>();
      ParallelFor(io.inputs[0]->numel(), io.threads, kGrain, [&](int64_t b, int64_t e) {
        ApplyUnary(UnaryOp::kClip, p, x + b, y + b, e - b);
      });
      return Status::Ok();
    });
  }, FollowInputLayout);
}

void RegisterNot(CpuImplRegistry& reg) {
  RegisterNative(
      reg, "", "Not",
      [](const Node&, const KernelBuildContext& c) {
        return !c.input_dtypes.empty() && c.input_dtypes[0] == DataType::kBool;
      },
      [](const StepView&) {
        return MakeKernel(SameShapeAsInput0(), [](const KernelIO& io) {
          const uint8_t* x = io.inputs[0]->as<uint8_t>();
          uint8_t* y = io.outputs[0]->as<uint8_t>();
          const int64_t n = io.inputs[0]->numel();
          for (int64_t i = 0; i < n; ++i) y[i] = !x[i];
          return Status::Ok();
        });
      });
}

// --- Cast between the numeric types models use for shapes, masks and activations. ---
template <typename F>
bool VisitType(DataType t, F&& f) {
  switch (t) {
    case DataType::kFloat: f(float{}); return true;
    case DataType::kDouble: f(double{}); return true;
    case DataType::kInt64: f(int64_t{}); return true;
    case DataType::kInt32: f(int32_t{}); return true;
    case DataType::kInt8: f(int8_t{}); return true;
    case DataType::kUint8: f(uint8_t{}); return true;
    case DataType::kBool: f(bool{}); return true;
    default: return false;
  }
}

template <typename S, typename D>
void CastLoop(const void* src, void* dst, int64_t n) {
  const S* s = static_cast<const S*>(src);
  D* d = static_cast<D*>(dst);
  if constexpr (std::is_same_v<D, bool>) {
    uint8_t* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) b[i] = s[i] != S(0);
  } else if constexpr (std::is_same_v<S, bool>) {
    const uint8_t* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<D>(b[i] != 0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    // Out-of-range float -> int is undefined in C++: saturate instead (NaN -> 0).
    const double lo = static_cast<double>(std::numeric_limits<D>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<D>::max());
    for (int64_t i = 0; i < n; ++i) {
      const double v = static_cast<double>(s[i]);
      d[i] = v != v ? D(0) : v <= lo ? std::numeric_limits<D>::lowest()
                             : v >= hi ? std::numeric_limits<D>::max() : static_cast<D>(v);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<D>(s[i]);
  }
}

// float32 <-> bfloat16: the boundaries of bf16 activations (precision=bf16), vectorized and
// threaded, on whatever unpadded layout X arrives in.
bool IsBf16Cast(DataType from, DataType to) {
  return (from == DataType::kFloat && to == DataType::kBfloat16) ||
         (from == DataType::kBfloat16 && to == DataType::kFloat);
}

// The f32 -> bf16 Cast of a plain [N, C, H, W] tensor of a few channels (an image) read only
// by convolutions, in an nhwc route: the input Cast of a precision=bf16 engine. It writes
// nhwc itself (ConvertToBf16Nhwc), where the Cast and then a Reorder to nhwc each went over
// the tensor; oneDNN's reorder of 3 bf16 channels is slow (EfficientNet-B0 b8 on 2 Zen 5
// cores: Cast 0.19 ms, Reorder 0.29 ms).
bool CastsToNhwc(const Node& n, const KernelBuildContext& c) {
  if (c.layout != "nhwc" || c.input_dtypes.empty() || c.input_dtypes[0] != DataType::kFloat ||
      static_cast<DataType>(n.GetInt("to", 0)) != DataType::kBfloat16 || n.outputs.size() != 1) {
    return false;
  }
  if (!c.input_layouts.empty() && !c.input_layouts[0].empty()) return false;
  if (c.input_shapes.empty() || c.input_shapes[0].size() != 4) return false;
  const int64_t channels = c.input_shapes[0][1];
  if (channels < 1 || channels > kMaxNhwcCastChannels) return false;
  const ValueId out = n.outputs[0];
  const Graph& g = c.graph;
  if (std::find(g.outputs.begin(), g.outputs.end(), out) != g.outputs.end()) return false;
  const auto readers = g.Consumers()[static_cast<size_t>(out)];
  return !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](NodeId r) {
    const std::string& op = g.nodes[static_cast<size_t>(r)].op_type;
    return op == "Conv" || op == "FusedConv";
  });
}

Status PrepareCast(const Node& n, const KernelBuildContext& c, StepSpec& spec) {
  if (!CastsToNhwc(n, c)) return FollowInputLayout(n, c, spec);
  spec.params["input_layouts"] = {""};
  spec.params["output_layouts"] = {"nhwc"};
  return Status::Ok();
}

void RegisterCast(CpuImplRegistry& reg) {
  RegisterNative(
      reg, "", "Cast",
      [](const Node& n, const KernelBuildContext& c) {
        const auto to = static_cast<DataType>(n.GetInt("to", 0));
        if (!c.input_dtypes.empty() && IsBf16Cast(c.input_dtypes[0], to)) return true;
        return !c.input_dtypes.empty() && VisitType(to, [](auto) {}) &&
               VisitType(c.input_dtypes[0], [](auto) {});
      },
      [](const StepView& v) {
        const DataType from = v.input_dtypes[0];
        const auto to = static_cast<DataType>(v.node.GetInt("to", 0));
        const bool to_nhwc = RunsNhwc(v) && (v.input_layouts.empty() || v.input_layouts[0].empty());
        if (to_nhwc) {
          if (from != DataType::kFloat || to != DataType::kBfloat16) {
            return Result<std::unique_ptr<Kernel>>(ops::NodeError(v.node, "an nhwc Cast is f32 -> bf16 only"));
          }
          return MakeKernel(SameShapeAsInput0(), [node = v.node](const KernelIO& io) {
            const auto& s = io.inputs[0]->shape;
            if (s.size() != 4 || s[1] < 1 || s[1] > kMaxNhwcCastChannels) {
              return ops::NodeError(node, "an nhwc Cast takes [N, C <= " + std::to_string(kMaxNhwcCastChannels) +
                                              ", H, W], got " + ShapeToString(s));
            }
            ConvertToBf16Nhwc(io.inputs[0]->as<float>(), io.outputs[0]->as<uint16_t>(), s[0], s[1], s[2] * s[3],
                              io.threads);
            return Status::Ok();
          });
        }
        if (IsBf16Cast(from, to)) {
          return MakeKernel(SameShapeAsInput0(), [to](const KernelIO& io) {
            const int64_t n = io.inputs[0]->numel();
            if (to == DataType::kBfloat16) {
              ConvertToBf16(io.inputs[0]->as<float>(), io.outputs[0]->as<uint16_t>(), n, io.threads);
            } else {
              ConvertFromBf16(io.inputs[0]->as<uint16_t>(), io.outputs[0]->as<float>(), n, io.threads);
            }
            return Status::Ok();
          });
        }
        void (*fn)(const void*, void*, int64_t) = nullptr;
        VisitType(from, [&](auto s) {
          VisitType(to, [&](auto d) { fn = &CastLoop<decltype(s), decltype(d)>; });
        });
        return MakeKernel(SameShapeAsInput0(), [fn](const KernelIO& io) {
          fn(io.inputs[0]->data, io.outputs[0]->data, io.inputs[0]->numel());
          return Status::Ok();
        });
      }, PrepareCast);
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeUnary) {
  const std::pair<const char*, UnaryOp> kUnary[] = {
      {"Relu", UnaryOp::kRelu},         {"Sigmoid", UnaryOp::kSigmoid},
      {"Tanh", UnaryOp::kTanh},         {"Erf", UnaryOp::kErf},
      {"Exp", UnaryOp::kExp},           {"Log", UnaryOp::kLog},
      {"Sqrt", UnaryOp::kSqrt},         {"Neg", UnaryOp::kNeg},
      {"Abs", UnaryOp::kAbs},           {"Reciprocal", UnaryOp::kReciprocal},
      {"HardSwish", UnaryOp::kHardSwish}, {"HardSigmoid", UnaryOp::kHardSigmoid},
      {"LeakyRelu", UnaryOp::kLeakyRelu}, {"Softplus", UnaryOp::kSoftplus},
      {"Floor", UnaryOp::kFloor},       {"Ceil", UnaryOp::kCeil},
      {"Round", UnaryOp::kRound},       {"Sign", UnaryOp::kSign},
      {"Elu", UnaryOp::kElu},           {"Selu", UnaryOp::kSelu},
      {"Softsign", UnaryOp::kSoftsign}, {"Sin", UnaryOp::kSin},
      {"Cos", UnaryOp::kCos},
  };
  for (const auto& [name, op] : kUnary) RegisterUnary(reg, name, op);
  RegisterClip(reg);
  RegisterNot(reg);
  RegisterCast(reg);
}

}  // namespace switchyard::native
