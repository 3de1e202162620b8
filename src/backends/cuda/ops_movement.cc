// CUDA own-kernel implementations (provider "cuda") of the data-movement ops over
// kernels/movement.cu, for any dtype of 1, 2, 4 or 8 bytes: Reshape, Flatten, Squeeze,
// Unsqueeze, Identity (one cudaMemcpyAsync), Transpose, Concat, Split, Slice, Gather,
// Expand and Pad (constant, edge, reflect, wrap). Shapes are the build's static shapes:
// shape-like inputs (Reshape's shape, Expand's shape, Split's split) need not be read, the
// inferred output shapes say it all; Slice's and Pad's constant inputs are read at prepare.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/common.h"
#include "backends/cuda/kernels/movement.h"
#include "reference/op_registry.h"

namespace switchyard::cuda {
namespace {

namespace k = kernels;
using Shape = std::vector<int64_t>;


int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

k::Dims ToDims(const Shape& s) {
  k::Dims d;
  d.rank = static_cast<int>(s.size());
  for (size_t i = 0; i < s.size() && i < static_cast<size_t>(k::kMaxDims); ++i) d.d[i] = s[i];
  return d;
}

// Element size of a movable dtype (1, 2, 4 or 8 bytes), else 0.
int ElemBytes(DataType t) {
  if (t == DataType::kString || t == DataType::kUndefined) return 0;
  const size_t s = DataTypeSize(t);
  return (s == 1 || s == 2 || s == 4 || s == 8) ? static_cast<int>(s) : 0;
}

// Output shapes as inferred in the graph (static), or nullopt.
std::optional<std::vector<Shape>> OutShapes(const Node& n, const KernelBuildContext& ctx, size_t max_rank) {
  std::vector<Shape> out;
  for (ValueId id : n.outputs) {
    if (id == kNoValue) return std::nullopt;
    const TensorType& t = ctx.graph.value(id).type;
    if (!t.has_shape) return std::nullopt;
    Shape s = t.StaticShape();
    if (!IsStaticShape(s) || s.size() > max_rank) return std::nullopt;
    out.push_back(std::move(s));
  }
  return out;
}

// Data input 0 present, static, movable dtype, rank <= max_rank; outputs static.
bool Base(const Node& n, const KernelBuildContext& ctx, size_t max_rank = 64) {
  if (!IsCudaBuild(ctx) || ctx.input_dtypes.empty() || !n.HasInput(0)) return false;
  if (ElemBytes(ctx.input_dtypes[0]) == 0) return false;
  if (!IsStaticShape(ctx.input_shapes[0]) || ctx.input_shapes[0].size() > max_rank) return false;
  return OutShapes(n, ctx, max_rank).has_value();
}

int OpVersion(const Node& n, const KernelBuildContext& ctx) {
  if (n.since_version > 0) return n.since_version;
  auto it = ctx.graph.opsets.find(n.domain);
  const OpSchema* s =
      OpRegistry::Global().Find(n.domain, n.op_type, it == ctx.graph.opsets.end() ? 17 : it->second);
  return s ? s->since_version : 1;
}

std::vector<int64_t> Ints(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.GetInt64(i);
  return v;
}

std::optional<int64_t> Axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

Status Launched(cudaError_t e, const char* what) {
  if (e != cudaSuccess) return CudaError(e, what);
  return CheckLaunch(what);
}

Status NoPrepare(const Node&, const KernelBuildContext&, StepSpec&) { return Status::Ok(); }

// The shape-like inputs (index >= 1) whose constant value the static output shapes make
// unnecessary at run time: the engine need not store them for this step.
Status ConsumeConstantExtras(const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
  for (size_t i = 1; i < n.inputs.size() && i < ctx.constants.size(); ++i) {
    if (n.HasInput(i) && ctx.constants[i]) spec.consumed_inputs.push_back(static_cast<int>(i));
  }
  return Status::Ok();
}

CpuOpImpl Impl(const std::string& op) {
  CpuOpImpl impl;
  impl.provider = "cuda";
  impl.op_type = op;
  impl.prepare = NoPrepare;
  return impl;
}

// --- Reshape, Flatten, Squeeze, Unsqueeze, Identity: the bytes do not move ------------------
void RegisterCopy(CpuImplRegistry& reg, const std::string& op) {
  CpuOpImpl impl = Impl(op);
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    if (!Base(n, ctx) || n.outputs.size() != 1) return false;
    const auto out = OutShapes(n, ctx, 64);
    return out && Numel((*out)[0]) == Numel(ctx.input_shapes[0]) &&
           ctx.graph.value(n.outputs[0]).type.dtype == ctx.input_dtypes[0];
  };
  impl.prepare = [](const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
    spec.params["view"] = true;  // the builder may give the output the input's bytes
    return ConsumeConstantExtras(n, ctx, spec);
  };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const size_t bytes = static_cast<size_t>(Numel(v.input_shapes[0])) * ElemBytes(v.input_dtypes[0]);
    return MakeFnKernel(v, [bytes](const Exec& ex, const KernelIO& io) -> Status {
      void* dst = io.outputs[0]->data;
      const void* src = io.inputs[0]->data;
      if (bytes && dst != src) {
        SY_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ex.stream));
      }
      return Status::Ok();
    });
  };
  reg.Register(std::move(impl));
}

// --- Transpose -------------------------------------------------------------------------------
std::optional<std::vector<int>> Perm(const Node& n, size_t rank) {
  std::vector<int64_t> p = n.GetInts("perm");
  if (p.empty()) {
    for (size_t i = 0; i < rank; ++i) p.push_back(static_cast<int64_t>(rank - 1 - i));
  }
  if (p.size() != rank) return std::nullopt;
  std::vector<int> out;
  std::vector<bool> seen(rank, false);
  for (int64_t a : p) {
    if (a < 0) a += static_cast<int64_t>(rank);
    if (a < 0 || a >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(a)]) return std::nullopt;
    seen[static_cast<size_t>(a)] = true;
    out.push_back(static_cast<int>(a));
  }
  return out;
}

void RegisterTranspose(CpuImplRegistry& reg) {
  CpuOpImpl impl = Impl("Transpose");
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    return Base(n, ctx, k::kMaxDims) && Perm(n, ctx.input_shapes[0].size()).has_value();
  };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const auto perm = Perm(v.node, v.input_shapes[0].size());
    if (!perm) return Status::Internal("cuda Transpose: bad perm");
    const std::vector<int> p = *perm;
    const k::Dims xs = ToDims(v.input_shapes[0]);
    const int es = ElemBytes(v.input_dtypes[0]);
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      return Launched(k::LaunchTranspose(es, io.inputs[0]->data, xs, p.data(), io.outputs[0]->data, ex.stream),
                      "Transpose");
    });
  };
  reg.Register(std::move(impl));
}

// --- Concat / Split ----------------------------------------------------------------------------
// outer / inner around `axis` of `shape`.
void OuterInner(const Shape& shape, int64_t axis, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int64_t d = 0; d < axis; ++d) *outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) *inner *= shape[d];
}

void RegisterConcat(CpuImplRegistry& reg) {
  CpuOpImpl impl = Impl("Concat");
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    if (!Base(n, ctx)) return false;
    const int64_t rank = static_cast<int64_t>(ctx.input_shapes[0].size());
    if (rank == 0 || !Axis(n.GetInt("axis", 0), rank)) return false;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (!n.HasInput(i) || ctx.input_dtypes[i] != ctx.input_dtypes[0] || !IsStaticShape(ctx.input_shapes[i]) ||
          static_cast<int64_t>(ctx.input_shapes[i].size()) != rank) {
        return false;
      }
    }
    return true;
  };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const Shape& out = v.output_shapes[0];
    const auto axis = Axis(v.node.GetInt("axis", 0), static_cast<int64_t>(out.size()));
    if (!axis) return Status::Internal("cuda Concat: bad axis");
    int64_t outer, inner;
    OuterInner(out, *axis, &outer, &inner);
    std::vector<int64_t> sizes;
    for (const Shape& s : v.input_shapes) sizes.push_back(s[static_cast<size_t>(*axis)]);
    const int es = ElemBytes(v.input_dtypes[0]);
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      std::vector<const void*> parts;
      for (const TensorRef* t : io.inputs) parts.push_back(t ? t->data : nullptr);
      return Launched(k::LaunchConcat(es, parts.data(), sizes.data(), static_cast<int>(sizes.size()), outer,
                                      inner, io.outputs[0]->data, ex.stream),
                      "Concat");
    });
  };
  reg.Register(std::move(impl));
}

void RegisterSplit(CpuImplRegistry& reg) {
  CpuOpImpl impl = Impl("Split");
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    if (!Base(n, ctx)) return false;
    const int64_t rank = static_cast<int64_t>(ctx.input_shapes[0].size());
    const auto axis = Axis(n.GetInt("axis", 0), rank);
    if (rank == 0 || !axis) return false;
    // The parts' extents along the axis come from the inferred output shapes.
    const auto out = OutShapes(n, ctx, 64);
    int64_t total = 0;
    for (const Shape& s : *out) {
      if (static_cast<int64_t>(s.size()) != rank) return false;
      total += s[static_cast<size_t>(*axis)];
    }
    return total == ctx.input_shapes[0][static_cast<size_t>(*axis)];
  };
  impl.prepare = ConsumeConstantExtras;
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const Shape& x = v.input_shapes[0];
    const auto axis = Axis(v.node.GetInt("axis", 0), static_cast<int64_t>(x.size()));
    if (!axis) return Status::Internal("cuda Split: bad axis");
    int64_t outer, inner;
    OuterInner(x, *axis, &outer, &inner);
    std::vector<int64_t> sizes;
    for (const Shape& s : v.output_shapes) sizes.push_back(s[static_cast<size_t>(*axis)]);
    const int es = ElemBytes(v.input_dtypes[0]);
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      std::vector<void*> parts;
      for (TensorRef* t : io.outputs) parts.push_back(t ? t->data : nullptr);
      return Launched(k::LaunchSplit(es, io.inputs[0]->data, sizes.data(), static_cast<int>(sizes.size()),
                                     outer, inner, parts.data(), ex.stream),
                      "Split");
    });
  };
  reg.Register(std::move(impl));
}

// --- Slice -------------------------------------------------------------------------------------
// Per-dim start and step of a Slice node for input shape x (constant starts/ends/axes/steps,
// or the attributes before opset 10), as the reference resolves them; nullopt when unknown.
struct SliceParams {
  Shape start, step, out;
};
std::optional<SliceParams> ResolveSlice(const Node& n, const KernelBuildContext& ctx) {
  const Shape& x = ctx.input_shapes[0];
  const int64_t rank = static_cast<int64_t>(x.size());
  Shape starts, ends, axes, steps;
  if (OpVersion(n, ctx) < 10) {
    starts = n.GetInts("starts");
    ends = n.GetInts("ends");
    axes = n.GetInts("axes");
  } else {
    auto constant = [&](size_t i, Shape* out) {
      if (!n.HasInput(i)) return true;
      if (i >= ctx.constants.size() || !ctx.constants[i]) return false;
      *out = Ints(*ctx.constants[i]);
      return true;
    };
    if (!n.HasInput(1) || !n.HasInput(2)) return std::nullopt;
    if (!constant(1, &starts) || !constant(2, &ends) || !constant(3, &axes) || !constant(4, &steps)) {
      return std::nullopt;
    }
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return std::nullopt;
  }
  SliceParams s{Shape(static_cast<size_t>(rank), 0), Shape(static_cast<size_t>(rank), 1), x};
  for (size_t i = 0; i < starts.size(); ++i) {
    const auto a = Axis(axes[i], rank);
    if (!a) return std::nullopt;
    const int64_t dim = x[static_cast<size_t>(*a)], step = steps[i];
    if (step == 0) return std::nullopt;
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      b = std::clamp<int64_t>(b, 0, std::max<int64_t>(dim - 1, 0));
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    const int64_t cnt = step > 0 ? (e - b + step - 1) / step : (b - e + (-step) - 1) / (-step);
    s.start[static_cast<size_t>(*a)] = b;
    s.step[static_cast<size_t>(*a)] = step;
    s.out[static_cast<size_t>(*a)] = std::max<int64_t>(0, cnt);
  }
  return s;
}

void RegisterSlice(CpuImplRegistry& reg) {
  CpuOpImpl impl = Impl("Slice");
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    if (!Base(n, ctx, k::kMaxDims)) return false;
    const auto s = ResolveSlice(n, ctx);
    const auto out = OutShapes(n, ctx, k::kMaxDims);
    return s && out && s->out == (*out)[0];
  };
  impl.prepare = [](const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
    const auto s = ResolveSlice(n, ctx);
    if (!s) return Status::Internal("cuda Slice: starts/ends/axes/steps are not constant");
    spec.params["start"] = s->start;
    spec.params["step"] = s->step;
    for (int i = 1; i <= 4; ++i) {
      if (n.HasInput(static_cast<size_t>(i))) spec.consumed_inputs.push_back(i);
    }
    return Status::Ok();
  };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const Shape start = v.params.value("start", Shape{});
    const Shape step = v.params.value("step", Shape{});
    const Shape& x = v.input_shapes[0];
    if (start.size() != x.size() || step.size() != x.size()) {
      return Status::Internal("cuda Slice: params do not match the input rank");
    }
    const k::Dims xs = ToDims(x), ys = ToDims(v.output_shapes[0]);
    const int es = ElemBytes(v.input_dtypes[0]);
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      return Launched(k::LaunchSlice(es, io.inputs[0]->data, xs, start.data(), step.data(),
                                     io.outputs[0]->data, ys, ex.stream),
                      "Slice");
    });
  };
  reg.Register(std::move(impl));
}

// --- Gather ------------------------------------------------------------------------------------
void RegisterGather(CpuImplRegistry& reg) {
  CpuOpImpl impl = Impl("Gather");
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    if (!Base(n, ctx) || n.inputs.size() != 2 || !n.HasInput(1)) return false;
    const DataType it = ctx.input_dtypes[1];
    if ((it != DataType::kInt64 && it != DataType::kInt32) || !IsStaticShape(ctx.input_shapes[1])) return false;
    const int64_t rank = static_cast<int64_t>(ctx.input_shapes[0].size());
    const auto axis = Axis(n.GetInt("axis", 0), rank);
    return rank > 0 && axis && ctx.input_shapes[0][static_cast<size_t>(*axis)] > 0;
  };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const Shape& x = v.input_shapes[0];
    const auto axis = Axis(v.node.GetInt("axis", 0), static_cast<int64_t>(x.size()));
    if (!axis) return Status::Internal("cuda Gather: bad axis");
    int64_t outer, inner;
    OuterInner(x, *axis, &outer, &inner);
    const int64_t axis_dim = x[static_cast<size_t>(*axis)];
    const int64_t num = Numel(v.input_shapes[1]);
    const bool idx64 = v.input_dtypes[1] == DataType::kInt64;
    const int es = ElemBytes(v.input_dtypes[0]);
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      return Launched(k::LaunchGather(es, io.inputs[0]->data, outer, axis_dim, inner, io.inputs[1]->data,
                                      idx64, num, io.outputs[0]->data, ex.stream),
                      "Gather");
    });
  };
  reg.Register(std::move(impl));
}

// --- Expand ------------------------------------------------------------------------------------
void RegisterExpand(CpuImplRegistry& reg) {
  CpuOpImpl impl = Impl("Expand");
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    return Base(n, ctx, k::kMaxDims);
  };
  impl.prepare = ConsumeConstantExtras;
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const k::Dims xs = ToDims(v.input_shapes[0]), ys = ToDims(v.output_shapes[0]);
    const int es = ElemBytes(v.input_dtypes[0]);
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      return Launched(k::LaunchExpand(es, io.inputs[0]->data, xs, io.outputs[0]->data, ys, ex.stream),
                      "Expand");
    });
  };
  reg.Register(std::move(impl));
}

// --- Pad ---------------------------------------------------------------------------------------
std::optional<k::PadMode> PadModeOf(const std::string& s) {
  if (s == "constant") return k::PadMode::kConstant;
  if (s == "edge") return k::PadMode::kEdge;
  if (s == "reflect") return k::PadMode::kReflect;
  if (s == "wrap") return k::PadMode::kWrap;
  return std::nullopt;
}

// Begin pads per dim (full [begin..., end...] resolved as the reference does), or nullopt
// when the pads or axes are not constant.
std::optional<Shape> PadsOf(const Node& n, const KernelBuildContext& ctx) {
  const int64_t rank = static_cast<int64_t>(ctx.input_shapes[0].size());
  Shape pads, axes;
  if (OpVersion(n, ctx) < 11) {
    pads = n.GetInts("pads");
  } else {
    if (!n.HasInput(1) || ctx.constants.size() < 2 || !ctx.constants[1]) return std::nullopt;
    pads = Ints(*ctx.constants[1]);
    if (n.HasInput(3)) {
      if (ctx.constants.size() < 4 || !ctx.constants[3]) return std::nullopt;
      axes = Ints(*ctx.constants[3]);
    }
  }
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) return std::nullopt;
  Shape full(static_cast<size_t>(2 * rank), 0);
  const size_t k = axes.size();
  for (size_t i = 0; i < k; ++i) {
    const auto a = Axis(axes[i], rank);
    if (!a) return std::nullopt;
    full[static_cast<size_t>(*a)] = pads[i];
    full[static_cast<size_t>(rank + *a)] = pads[k + i];
  }
  return full;
}

void RegisterPad(CpuImplRegistry& reg) {
  CpuOpImpl impl = Impl("Pad");
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    if (!Base(n, ctx, k::kMaxDims)) return false;
    const auto mode = PadModeOf(n.GetString("mode", "constant"));
    const auto full = PadsOf(n, ctx);
    const auto out = OutShapes(n, ctx, k::kMaxDims);
    if (!mode || !full || !out) return false;
    const Shape& x = ctx.input_shapes[0];
    const size_t r = x.size();
    for (size_t d = 0; d < r; ++d) {
      if ((*out)[0][d] != x[d] + (*full)[d] + (*full)[r + d]) return false;
      if (*mode != k::PadMode::kConstant && x[d] == 0 && (*out)[0][d] > 0) return false;
    }
    // The constant value (Pad-11+): same dtype, one element.
    if (OpVersion(n, ctx) >= 11 && n.HasInput(2)) {
      if (ctx.input_dtypes[2] != ctx.input_dtypes[0] || Numel(ctx.input_shapes[2]) != 1) return false;
    }
    return true;
  };
  impl.prepare = [](const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
    const auto full = PadsOf(n, ctx);
    if (!full) return Status::Internal("cuda Pad: pads are not constant");
    const size_t r = ctx.input_shapes[0].size();
    spec.params["begin"] = Shape(full->begin(), full->begin() + static_cast<std::ptrdiff_t>(r));
    const DataType t = ctx.input_dtypes[0];
    uint64_t bits = 0;
    bool fill_dev = false;
    if (OpVersion(n, ctx) < 11) {
      const Tensor v = Tensor::Scalar(t, n.GetFloat("value", 0.f));
      std::memcpy(&bits, v.raw(), std::min<size_t>(v.nbytes(), sizeof(bits)));
    } else {
      spec.consumed_inputs.push_back(1);
      if (n.HasInput(3)) spec.consumed_inputs.push_back(3);
      if (n.HasInput(2)) {
        if (const Tensor* c = ctx.constants[2]) {
          std::memcpy(&bits, c->raw(), std::min<size_t>(c->nbytes(), sizeof(bits)));
          spec.consumed_inputs.push_back(2);
        } else {
          fill_dev = true;
        }
      }
    }
    spec.params["fill_bits"] = bits;
    spec.params["fill_dev"] = fill_dev;
    return Status::Ok();
  };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const auto mode = PadModeOf(v.node.GetString("mode", "constant"));
    const Shape begin = v.params.value("begin", Shape{});
    const Shape& x = v.input_shapes[0];
    if (!mode || begin.size() != x.size()) return Status::Internal("cuda Pad: bad params");
    const uint64_t bits = v.params.value("fill_bits", uint64_t{0});
    const bool fill_dev = v.params.value("fill_dev", false);
    const k::PadMode m = *mode;
    const k::Dims xs = ToDims(x), ys = ToDims(v.output_shapes[0]);
    const int es = ElemBytes(v.input_dtypes[0]);
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      const void* fill = fill_dev && io.inputs.size() > 2 && io.inputs[2] ? io.inputs[2]->data : nullptr;
      return Launched(k::LaunchPad(es, m, io.inputs[0]->data, xs, begin.data(), bits, fill,
                                   io.outputs[0]->data, ys, ex.stream),
                      "Pad");
    });
  };
  reg.Register(std::move(impl));
}

}  // namespace

SY_REGISTER_CUDA_IMPLS(Movement) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}) RegisterCopy(reg, op);
  RegisterTranspose(reg);
  RegisterConcat(reg);
  RegisterSplit(reg);
  RegisterSlice(reg);
  RegisterGather(reg);
  RegisterExpand(reg);
  RegisterPad(reg);
}

}  // namespace switchyard::cuda
