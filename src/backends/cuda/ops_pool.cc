// CUDA own-kernel implementations (provider "cuda") of MaxPool (single output),
// AveragePool, GlobalAveragePool and GlobalMaxPool over kernels/pool.cu, for 1-3
// spatial dims (NCHW-style, plain layout). Attributes: kernel_shape, strides, pads,
// dilations, auto_pad (NOTSET/VALID/SAME_UPPER/SAME_LOWER), ceil_mode, count_include_pad.
// The output spatial size is the build's static output shape. Channels-last
// (layout.activations=nhwc, layout.h): 2-D pools of a run-time 4-D input take and give
// "nhwc"; global pools take "nhwc" and give [N, C, 1, 1] (the same memory in both layouts)
// tagged for its readers (layout.h ReadersTakeNhwc).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/common.h"
#include "backends/cuda/nk_dtype.h"
#include "backends/cuda/kernels/pool.h"
#include "backends/cuda/layout.h"

namespace switchyard::cuda {
namespace {

using Shape = std::vector<int64_t>;



bool Base(const Node& n, const KernelBuildContext& ctx) {
  if (!IsCudaBuild(ctx) || ctx.input_dtypes.empty() || ctx.input_shapes.empty()) return false;
  if (!IsCudaFloat(ctx.input_dtypes[0]) || !IsStaticShape(ctx.input_shapes[0])) return false;
  for (size_t o = 1; o < n.outputs.size(); ++o) {
    if (n.outputs[o] != kNoValue) return false;  // MaxPool's Indices
  }
  return ctx.input_shapes[0].size() >= 3;
}

// The window geometry of a node for input `x`; nullopt when unsupported or invalid.
std::optional<nk::PoolGeom> Geometry(const Node& node, const Shape& x) {
  const std::vector<int64_t> kernel = node.GetInts("kernel_shape");
  const size_t sp = kernel.size();
  if (sp < 1 || sp > 3 || x.size() != sp + 2) return std::nullopt;
  const std::vector<int64_t> strides = node.GetInts("strides", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> dil = node.GetInts("dilations", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * sp, 0));
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  const bool ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  if (strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp) return std::nullopt;
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return std::nullopt;
  }
  nk::PoolGeom g;
  g.planes = x[0] * x[1];
  g.count_include_pad = node.GetInt("count_include_pad", 0) != 0;
  const size_t off = 3 - sp;
  for (size_t i = 0; i < sp; ++i) {
    const size_t a = off + i;
    g.k[a] = kernel[i];
    g.s[a] = strides[i];
    g.d[a] = dil[i];
    g.in[a] = x[i + 2];
    if (g.k[a] <= 0 || g.s[a] <= 0 || g.d[a] <= 0) return std::nullopt;
    const int64_t ext = (g.k[a] - 1) * g.d[a] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[a] = (g.in[a] + g.s[a] - 1) / g.s[a];
      const int64_t total = std::max<int64_t>(0, (g.out[a] - 1) * g.s[a] + ext - g.in[a]);
      g.pb[a] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pe[a] = total - g.pb[a];
    } else {
      if (auto_pad == "NOTSET") {
        g.pb[a] = pads[i];
        g.pe[a] = pads[i + sp];
      }
      if (g.pb[a] < 0 || g.pe[a] < 0) return std::nullopt;
      const int64_t span = g.in[a] + g.pb[a] + g.pe[a] - ext;
      if (span < 0) return std::nullopt;
      g.out[a] = (ceil_mode ? (span + g.s[a] - 1) / g.s[a] : span / g.s[a]) + 1;
      // ceil_mode: the last window must start inside the input or its begin padding.
      if (ceil_mode && (g.out[a] - 1) * g.s[a] >= g.in[a] + g.pb[a]) --g.out[a];
    }
  }
  return g;
}

// Channels-last for a 2-D pool of a run-time tensor when the route asks for it.
bool PoolNhwc(const KernelBuildContext& ctx) {
  return WantNhwc(ctx) && !ctx.input_shapes.empty() && ctx.input_shapes[0].size() == 4 &&
         !ctx.constants.empty() && !ctx.constants[0];
}

void RegisterPool(CpuImplRegistry& reg, const std::string& op, bool max) {
  CpuOpImpl impl;
  impl.provider = "cuda";
  impl.op_type = op;
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) {
    return Base(n, ctx) && Geometry(n, ctx.input_shapes[0]).has_value();
  };
  impl.prepare = [](const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
    if (PoolNhwc(ctx)) {
      std::vector<std::string> in(n.inputs.size(), "");
      in[0] = kNhwc;
      spec.params["input_layouts"] = in;
      spec.params["output_layouts"] = {kNhwc};
    }
    return Status::Ok();
  };
  impl.create = [max](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const auto t = KType(v.input_dtypes[0]);
    auto g = Geometry(v.node, v.input_shapes[0]);
    const bool nhwc = IsNhwc(v.input_layouts, 0);
    if (nhwc != IsNhwc(v.output_layouts, 0) || (nhwc && v.input_shapes[0].size() != 4)) {
      return Status::Internal("cuda " + v.node.op_type + ": nhwc needs a 4-D input and output");
    }
    if (!t || !g) return Status::Internal("cuda " + v.node.op_type + ": unsupported geometry");
    // The build's output shape is authoritative; a mismatch means our geometry differs.
    const Shape& out = v.output_shapes[0];
    const size_t sp = out.size() - 2;
    for (size_t i = 0; i < sp; ++i) {
      if (out[i + 2] != g->out[3 - sp + i]) {
        return Status::Internal("cuda " + v.node.op_type + ": output shape " + ShapeToString(out) +
                                " does not match the pooling geometry");
      }
    }
    nk::PoolGeom geom = *g;
    const nk::KDType kt = *t;
    const int64_t channels = v.input_shapes[0][1];
    if (nhwc) geom.planes = v.input_shapes[0][0];
    return std::unique_ptr<Kernel>(std::make_unique<FnCudaKernel>(
        v, [=](const Exec& ex, const KernelIO& io) -> Status {
          if (nhwc) {
            nk::LaunchPoolNhwc(kt, max, io.inputs[0]->data, io.outputs[0]->data, geom, channels, ex.stream);
          } else {
            nk::LaunchPool(kt, max, io.inputs[0]->data, io.outputs[0]->data, geom, ex.stream);
          }
          return CheckLaunch(max ? "MaxPool" : "AveragePool");
        }));
  };
  reg.Register(std::move(impl));
}

void RegisterGlobalPool(CpuImplRegistry& reg, const std::string& op, bool max) {
  CpuOpImpl impl;
  impl.provider = "cuda";
  impl.op_type = op;
  impl.supports = [](const Node& n, const KernelBuildContext& ctx) { return Base(n, ctx); };
  impl.prepare = [](const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
    if (PoolNhwc(ctx)) {
      std::vector<std::string> in(n.inputs.size(), "");
      in[0] = kNhwc;
      spec.params["input_layouts"] = in;
      // The [N, C, 1, 1] output has the same memory in both layouts: tagged for its readers
      // (a squeeze-excite conv takes nhwc, a Flatten/Gemm head plain), so neither needs a
      // reorder.
      if (!n.outputs.empty() && ReadersTakeNhwc(ctx.graph, n.outputs[0])) spec.params["output_layouts"] = {kNhwc};
    }
    return Status::Ok();
  };
  impl.create = [max](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const auto t = KType(v.input_dtypes[0]);
    const Shape& x = v.input_shapes[0];
    if (!t || x.size() < 2) return Status::Internal("cuda " + v.node.op_type + ": unsupported input");
    int64_t sp = 1;
    for (size_t d = 2; d < x.size(); ++d) sp *= x[d];
    const int64_t planes = x[0] * x[1];
    const nk::KDType kt = *t;
    const bool nhwc = IsNhwc(v.input_layouts, 0);
    if (nhwc && x.size() != 4) return Status::Internal("cuda " + v.node.op_type + ": nhwc needs a 4-D input");
    const int64_t n = x[0], c = x[1];
    return std::unique_ptr<Kernel>(std::make_unique<FnCudaKernel>(
        v, [=](const Exec& ex, const KernelIO& io) -> Status {
          if (nhwc) {
            nk::LaunchGlobalPoolNhwc(kt, max, io.inputs[0]->data, io.outputs[0]->data, n, sp, c, ex.stream);
          } else {
            nk::LaunchGlobalPool(kt, max, io.inputs[0]->data, io.outputs[0]->data, planes, sp, ex.stream);
          }
          return CheckLaunch(max ? "GlobalMaxPool" : "GlobalAveragePool");
        }));
  };
  reg.Register(std::move(impl));
}

}  // namespace
}  // namespace switchyard::cuda

namespace switchyard {
SY_REGISTER_CUDA_IMPLS(Pool) {
  cuda::RegisterPool(reg, "MaxPool", true);
  cuda::RegisterPool(reg, "AveragePool", false);
  cuda::RegisterGlobalPool(reg, "GlobalAveragePool", false);
  cuda::RegisterGlobalPool(reg, "GlobalMaxPool", true);
}
}  // namespace switchyard
