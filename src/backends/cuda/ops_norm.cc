// CUDA own-kernel implementations (provider "cuda") of Softmax, LogSoftmax,
// switchyard.LayerNorm, LayerNormalization (output 0 only), BatchNormalization
// (inference) and InstanceNormalization, over kernels/norm.cu. Float32/float16/bfloat16;
// every floating input must share X's dtype. Shapes are static on this target, so the
// row geometry is fixed in Create.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/common.h"
#include "backends/cuda/nk_dtype.h"
#include "backends/cuda/kernels/norm.h"
#include "backends/cuda/layout.h"

namespace switchyard::cuda {
namespace {

using Shape = std::vector<int64_t>;



int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Normalised axis in [0, rank), or -1 when out of range.
int64_t Axis(int64_t a, int64_t rank) {
  if (a < 0) a += rank;
  return a >= 0 && a < rank ? a : -1;
}

// Input 0 is a static-shaped CUDA float; inputs `same` (when present) share its dtype and
// have static shapes; no output beyond `max_outputs` is requested.
bool Common(const Node& node, const KernelBuildContext& ctx, std::vector<size_t> same,
            size_t max_outputs = 1) {
  if (!IsCudaBuild(ctx) || ctx.input_dtypes.empty() || ctx.input_shapes.empty()) return false;
  if (!IsCudaFloat(ctx.input_dtypes[0]) || !IsStaticShape(ctx.input_shapes[0])) return false;
  for (size_t i : same) {
    if (!node.HasInput(i)) continue;
    if (i >= ctx.input_dtypes.size() || ctx.input_dtypes[i] != ctx.input_dtypes[0]) return false;
    if (!IsStaticShape(ctx.input_shapes[i])) return false;
  }
  for (size_t o = max_outputs; o < node.outputs.size(); ++o) {
    if (node.outputs[o] != kNoValue) return false;
  }
  return true;
}

bool HasOptional(const StepView& v, size_t i) { return v.node.HasInput(i); }

// ---- Softmax / LogSoftmax ---------------------------------------------------------------

struct SoftmaxGeom {
  int64_t outer = 1, n = 1, inner = 1;
};

std::optional<SoftmaxGeom> SoftmaxGeometry(const Node& node, const Shape& x) {
  const bool coerce_2d = node.since_version > 0 && node.since_version < 13;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) return std::nullopt;
  const int64_t axis = Axis(node.GetInt("axis", coerce_2d ? 1 : -1), rank);
  if (axis < 0) return std::nullopt;
  SoftmaxGeom g;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) {
      g.outer *= x[d];
    } else if (d == axis || coerce_2d) {
      g.n *= x[d];
    } else {
      g.inner *= x[d];
    }
  }
  return g;
}

void RegisterSoftmax(CpuImplRegistry& reg, const std::string& op, bool log) {
  CpuOpImpl impl;
  impl.provider = "cuda";
  impl.domain = "";
  impl.op_type = op;
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    return Common(n, ctx, {}) && SoftmaxGeometry(n, ctx.input_shapes[0]).has_value();
  };
  impl.prepare = [](const Node&, const KernelBuildContext&, StepSpec&) { return Status::Ok(); };
  impl.create = [log](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const auto g = SoftmaxGeometry(v.node, v.input_shapes[0]);
    const auto t = KType(v.input_dtypes[0]);
    if (!g || !t) return Status::Internal("cuda " + v.node.op_type + ": unsupported input");
    const SoftmaxGeom geom = *g;
    const nk::KDType kt = *t;
    return MakeFnKernel(v, [geom, kt, log](const Exec& ex, const KernelIO& io) -> Status {
      nk::LaunchSoftmax(kt, io.inputs[0]->data, io.outputs[0]->data, geom.outer, geom.n, geom.inner,
                        log, ex.stream);
      return CheckLaunch(log ? "LogSoftmax" : "Softmax");
    });
  };
  reg.Register(std::move(impl));
}

// ---- LayerNorm / LayerNormalization -----------------------------------------------------

// Column stride of a scale/bias of shape `p` over the rows [axis, rank) of `x`: 1 when p
// is exactly the normalised block (leading 1s aside), 0 when it has one element;
// nullopt for other broadcasts (not supported by the row kernel).
std::optional<int64_t> ParamColStride(const Shape& p, const Shape& x, int64_t axis) {
  if (Numel(p) == 1) return 0;
  const int64_t rank = static_cast<int64_t>(x.size()), prank = static_cast<int64_t>(p.size());
  if (prank > rank) return std::nullopt;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t pd = d - (rank - prank);
    const int64_t pv = pd >= 0 ? p[pd] : 1;
    if (d < axis ? pv != 1 : (pv != x[d])) return std::nullopt;
  }
  return 1;
}

void RegisterLayerNorm(CpuImplRegistry& reg, const std::string& domain, const std::string& op) {
  const bool onnx = domain.empty();
  CpuOpImpl impl;
  impl.provider = "cuda";
  impl.domain = domain;
  impl.op_type = op;
  impl.supports = [onnx](const Node& n, const KernelBuildContext& ctx) {
    if (!Common(n, ctx, {1, 2})) return false;
    const Shape& x = ctx.input_shapes[0];
    const int64_t axis = Axis(n.GetInt("axis", -1), static_cast<int64_t>(x.size()));
    if (axis < 0) return false;
    if (onnx && !n.HasInput(1)) return false;
    for (size_t i : {size_t{1}, size_t{2}}) {
      if (n.HasInput(i) && !ParamColStride(ctx.input_shapes[i], x, axis)) return false;
    }
    return true;
  };
  impl.prepare = [](const Node&, const KernelBuildContext&, StepSpec&) { return Status::Ok(); };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const Shape& x = v.input_shapes[0];
    const int64_t axis = Axis(v.node.GetInt("axis", -1), static_cast<int64_t>(x.size()));
    const auto t = KType(v.input_dtypes[0]);
    if (axis < 0 || !t) return Status::Internal("cuda " + v.node.op_type + ": unsupported input");
    int64_t rows = 1, n = 1;
    for (int64_t d = 0; d < static_cast<int64_t>(x.size()); ++d) (d < axis ? rows : n) *= x[d];
    const bool has_scale = HasOptional(v, 1), has_bias = HasOptional(v, 2);
    nk::RowAffine a;
    a.g_cs = has_scale ? ParamColStride(v.input_shapes[1], x, axis).value_or(1) : 0;
    a.b_cs = has_bias ? ParamColStride(v.input_shapes[2], x, axis).value_or(1) : 0;
    const float eps = v.node.GetFloat("epsilon", 1e-5f);
    const nk::KDType kt = *t;
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      nk::RowAffine aa = a;
      aa.gamma = has_scale && io.inputs.size() > 1 && io.inputs[1] ? io.inputs[1]->data : nullptr;
      aa.beta = has_bias && io.inputs.size() > 2 && io.inputs[2] ? io.inputs[2]->data : nullptr;
      nk::LaunchRowNorm(kt, io.inputs[0]->data, io.outputs[0]->data, rows, n, aa, eps, ex.stream);
      return CheckLaunch("LayerNorm");
    });
  };
  reg.Register(std::move(impl));
}

// ---- BatchNormalization / InstanceNormalization -------------------------------------------

// [N, C, spatial] of a rank >= 2 shape.
void ChannelDims(const Shape& x, int64_t* n, int64_t* c, int64_t* sp) {
  *n = x[0];
  *c = x[1];
  *sp = 1;
  for (size_t d = 2; d < x.size(); ++d) *sp *= x[d];
}

bool ChannelParams(const Node& node, const KernelBuildContext& ctx, size_t first, size_t last) {
  const Shape& x = ctx.input_shapes[0];
  if (x.size() < 2) return false;
  for (size_t i = first; i < last; ++i) {
    if (!node.HasInput(i) || i >= ctx.input_shapes.size() || Numel(ctx.input_shapes[i]) != x[1]) {
      return false;
    }
  }
  return true;
}

void RegisterBatchNorm(CpuImplRegistry& reg) {
  CpuOpImpl impl;
  impl.provider = "cuda";
  impl.op_type = "BatchNormalization";
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    return Common(n, ctx, {1, 2, 3, 4}) && n.GetInt("training_mode", 0) == 0 &&
           n.GetInt("spatial", 1) != 0 && ChannelParams(n, ctx, 1, 5);
  };
  // Channels-last (layout.h): a run-time 4-D X is taken and given "nhwc" (channel innermost).
  impl.prepare = [](const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
    if (WantNhwc(ctx) && ctx.input_shapes[0].size() == 4 && !ctx.constants[0]) {
      std::vector<std::string> in(n.inputs.size(), "");
      in[0] = kNhwc;
      spec.params["input_layouts"] = in;
      spec.params["output_layouts"] = {kNhwc};
    }
    return Status::Ok();
  };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const auto t = KType(v.input_dtypes[0]);
    if (!t || v.input_shapes[0].size() < 2) return Status::Internal("cuda BatchNormalization: unsupported input");
    int64_t n, c, sp;
    ChannelDims(v.input_shapes[0], &n, &c, &sp);
    if (IsNhwc(v.input_layouts, 0)) {  // [N * H * W] rows of C: the channel is i % C
      if (!IsNhwc(v.output_layouts, 0)) return Status::Internal("cuda BatchNormalization: nhwc input, plain output");
      n *= sp;
      sp = 1;
    }
    const float eps = v.node.GetFloat("epsilon", 1e-5f);
    const nk::KDType kt = *t;
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      for (size_t i = 1; i < 5; ++i) {
        if (io.inputs.size() <= i || !io.inputs[i]) return Status::Internal("BatchNormalization: missing parameter");
      }
      nk::LaunchBatchNorm(kt, io.inputs[0]->data, io.outputs[0]->data, n, c, sp, io.inputs[1]->data,
                          io.inputs[2]->data, io.inputs[3]->data, io.inputs[4]->data, eps, ex.stream);
      return CheckLaunch("BatchNormalization");
    });
  };
  reg.Register(std::move(impl));
}

void RegisterInstanceNorm(CpuImplRegistry& reg) {
  CpuOpImpl impl;
  impl.provider = "cuda";
  impl.op_type = "InstanceNormalization";
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    return Common(n, ctx, {1, 2}) && ChannelParams(n, ctx, 1, 3);
  };
  impl.prepare = [](const Node&, const KernelBuildContext&, StepSpec&) { return Status::Ok(); };
  impl.create = [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const auto t = KType(v.input_dtypes[0]);
    if (!t || v.input_shapes[0].size() < 2) return Status::Internal("cuda InstanceNormalization: unsupported input");
    int64_t n, c, sp;
    ChannelDims(v.input_shapes[0], &n, &c, &sp);
    const float eps = v.node.GetFloat("epsilon", 1e-5f);
    const nk::KDType kt = *t;
    return MakeFnKernel(v, [=](const Exec& ex, const KernelIO& io) -> Status {
      if (io.inputs.size() < 3 || !io.inputs[1] || !io.inputs[2]) {
        return Status::Internal("InstanceNormalization: missing parameter");
      }
      nk::RowAffine a;
      a.gamma = io.inputs[1]->data;
      a.beta = io.inputs[2]->data;
      a.c = c;
      a.g_rs = a.b_rs = 1;
      a.g_cs = a.b_cs = 0;
      nk::LaunchRowNorm(kt, io.inputs[0]->data, io.outputs[0]->data, n * c, sp, a, eps, ex.stream);
      return CheckLaunch("InstanceNormalization");
    });
  };
  reg.Register(std::move(impl));
}

}  // namespace

}  // namespace switchyard::cuda

namespace switchyard {
SY_REGISTER_CUDA_IMPLS(Norm) {
  cuda::RegisterSoftmax(reg, "Softmax", false);
  cuda::RegisterSoftmax(reg, "LogSoftmax", true);
  cuda::RegisterLayerNorm(reg, "switchyard", "LayerNorm");
  cuda::RegisterLayerNorm(reg, "", "LayerNormalization");
  cuda::RegisterBatchNorm(reg);
  cuda::RegisterInstanceNorm(reg);
}
}  // namespace switchyard
