// oneDNN MaxPool (without the Indices output), AveragePool, GlobalAveragePool and
// GlobalMaxPool on plain, nhwc and blocked (nChw16c/nChw8c) 4-D layouts; plain 3-D/5-D.
// float32 or bf16 (bf16 activations, precision=bf16).
#include <algorithm>
#include <optional>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/onednn/common.h"
#include "reference/ops/conv_common.h"

namespace switchyard::onednn {
namespace {

using PoolPd = dnnl::pooling_forward::primitive_desc;

bool IsGlobal(const Node& n) { return n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool"; }
bool IsMax(const Node& n) { return n.op_type == "MaxPool" || n.op_type == "GlobalMaxPool"; }

struct PoolGeom {
  memory::dims src, dst, kernel, strides, pl, pr;
  bool exclude_pad = true;
};

Result<PoolGeom> MakeGeom(const Node& node, const std::vector<int64_t>& x) {
  if (x.size() < 3 || x.size() > 5) return ops::NodeError(node, "oneDNN pooling needs rank 3..5");
  const size_t ns = x.size() - 2;
  PoolGeom g;
  g.src = Dims(x);
  g.dst = {x[0], x[1]};
  if (IsGlobal(node)) {
    g.kernel.assign(x.begin() + 2, x.end());
    g.strides.assign(ns, 1);
    g.pl.assign(ns, 0);
    g.pr.assign(ns, 0);
    g.dst.insert(g.dst.end(), ns, 1);
    return g;
  }
  const std::vector<int64_t> kernel = node.GetInts("kernel_shape");
  if (kernel.size() != ns) return ops::NodeError(node, "kernel_shape must have one entry per spatial dim");
  SY_ASSIGN_OR_RETURN(ops::Window win, ops::ReadWindow(node, kernel));
  for (int64_t d : win.dilations) {
    if (d != 1) return Status::Unsupported("node '" + node.name + "': oneDNN pooling without dilation only");
  }
  g.exclude_pad = node.GetInt("count_include_pad", 0) == 0;
  for (size_t i = 0; i < ns; ++i) {
    SY_ASSIGN_OR_RETURN(int64_t o, ops::WindowOutputDim(node, win, i, x[2 + i]));
    // ceil_mode: the last window may overhang; oneDNN sees it as extra end padding.
    const int64_t pr = (o - 1) * win.strides[i] + kernel[i] - x[2 + i] - win.pads_begin[i];
    if (pr != win.pads_end[i] && !g.exclude_pad && !IsMax(node)) {
      return Status::Unsupported("node '" + node.name + "': ceil_mode with count_include_pad");
    }
    if (pr < 0 || pr >= kernel[i] || win.pads_begin[i] >= kernel[i]) {
      return Status::Unsupported("node '" + node.name + "': padding not smaller than the kernel");
    }
    g.dst.push_back(o);
    g.kernel.push_back(kernel[i]);
    g.strides.push_back(win.strides[i]);
    g.pl.push_back(win.pads_begin[i]);
    g.pr.push_back(pr);
  }
  return g;
}

Result<PoolPd> MakePd(const Node& node, const PoolGeom& g, Tag tag, Dt dt) {
  std::optional<PoolPd> pd;
  SY_RETURN_IF_ERROR(Guard(node, "pooling primitive", [&]() -> Status {
    const dnnl::algorithm alg = IsMax(node)      ? dnnl::algorithm::pooling_max
                                : g.exclude_pad ? dnnl::algorithm::pooling_avg_exclude_padding
                                                 : dnnl::algorithm::pooling_avg_include_padding;
    const memory::desc src(g.src, dt, tag), dst(g.dst, dt, tag);
    pd.emplace(dnnl::pooling_forward::desc(dnnl::prop_kind::forward_inference, alg, src, dst, g.strides,
                                           g.kernel, g.pl, g.pr),
               UserScratchAttr(), CpuEngine());
    return Status::Ok();
  }));
  return *pd;
}

std::string LayoutFor(const KernelBuildContext& ctx, size_t rank) {
  if (rank != 4) return "";
  if (ctx.layout == "blocked") return DefaultBlockedLayout();
  if (ctx.layout == "nhwc") return "nhwc";
  return "";
}

struct PoolEntry {
  std::optional<PoolPd> pd;
  dnnl::primitive prim;
  ArgsKey args_key;
};

class PoolKernel final : public Kernel {
 public:
  PoolKernel(const Node& node, std::string layout, DataType type)
      : node_(node), layout_(std::move(layout)), type_(type) {}

  Result<std::vector<std::vector<int64_t>>> OutputShapes(const std::vector<const TensorRef*>& in) const override {
    if (in.empty() || !in[0]) return ops::NodeError(node_, "X is required");
    SY_ASSIGN_OR_RETURN(PoolGeom g, MakeGeom(node_, in[0]->shape));
    return std::vector<std::vector<int64_t>>{std::vector<int64_t>(g.dst.begin(), g.dst.end())};
  }

  Status Run(const KernelIO& io) const override {
    ThreadScope threads(io.threads);
    const TensorRef* x = io.inputs[0];
    if (!x || x->dtype != type_) return ops::NodeError(node_, std::string("X must be ") + DataTypeName(type_));
    const auto& xs = x->shape;
    if (node_.op_type == "GlobalAveragePool" && layout_ == "nhwc" && xs.size() == 4 && xs[0] > 0 && xs[2] * xs[3] > 0) {
      if (type_ == DataType::kFloat) {
        native::ChannelMeansNhwc(x->as<float>(), xs[0], xs[1], xs[2] * xs[3], io.outputs[0]->as<float>(), io.threads);
      } else {  // means in float, rounded to bf16 once
        float* means = static_cast<float*>(ThreadScratch(kAux2, static_cast<size_t>(xs[0] * xs[1]) * sizeof(float)));
        native::ChannelMeansNhwc(x->as<uint16_t>(), xs[0], xs[1], xs[2] * xs[3], means, io.threads);
        native::ConvertToBf16(means, io.outputs[0]->as<uint16_t>(), xs[0] * xs[1], 1);
      }
      return Status::Ok();
    }
    return Guard(node_, "pooling", [&]() -> Status {
      SY_ASSIGN_OR_RETURN(auto e, cache_.Get(x->shape, [&]() -> Result<std::shared_ptr<const PoolEntry>> {
        auto e = std::make_shared<PoolEntry>();
        SY_ASSIGN_OR_RETURN(PoolGeom g, MakeGeom(node_, x->shape));
        SY_ASSIGN_OR_RETURN(Tag tag, TagFor(layout_, x->shape.size()));
        SY_ASSIGN_OR_RETURN(Dt dt, ToDnnl(type_));
        SY_ASSIGN_OR_RETURN(PoolPd pd, MakePd(node_, g, tag, dt));
        e->pd.emplace(pd);
        e->prim = dnnl::pooling_forward(pd);
        return std::shared_ptr<const PoolEntry>(std::move(e));
      }));
      ExecArgs(e->args_key)
          .Add(DNNL_ARG_SRC, e->pd->src_desc(), x->data)
          .Add(DNNL_ARG_DST, e->pd->dst_desc(), io.outputs[0]->data)
          .Run(e->prim, &*e->pd);
      return Status::Ok();
    });
  }

 private:
  const Node node_;
  const std::string layout_;
  const DataType type_;
  ShapeCache<PoolEntry> cache_;
};

bool SupportsPool(const Node& node, const KernelBuildContext& ctx) {
  if (ctx.input_dtypes.empty()) return false;
  const DataType type = ctx.input_dtypes[0];
  if (type != DataType::kFloat && type != DataType::kBfloat16) return false;
  if (node.outputs.size() > 1 && node.outputs[1] != kNoValue) return false;  // MaxPool indices
  if (node.GetInt("storage_order", 0) != 0) return false;
  const auto x = Concretize(ctx.input_shapes[0]);
  auto g = MakeGeom(node, x);
  if (!g.ok()) return false;
  auto tag = TagFor(LayoutFor(ctx, x.size()), x.size());
  return tag.ok() && MakePd(node, *g, *tag, type == DataType::kFloat ? Dt::f32 : Dt::bf16).ok();
}

Status PreparePool(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  const auto& xs = ctx.input_shapes[0];
  const std::string layout = LayoutFor(ctx, xs.size());
  spec.params["input_layouts"] = {layout};
  spec.params["output_layouts"] = {layout};
  bool is_static = true;
  for (int64_t d : xs) is_static = is_static && d >= 0;
  if (!layout.empty() && is_static) {
    SY_ASSIGN_OR_RETURN(PoolGeom g, MakeGeom(node, xs));
    SY_ASSIGN_OR_RETURN(Tag tag, TagFor(layout, xs.size()));
    SY_ASSIGN_OR_RETURN(Dt dt, ToDnnl(ctx.input_dtypes[0]));
    spec.params["output_bytes"] = {static_cast<int64_t>(memory::desc(g.dst, dt, tag).get_size())};
  }
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreatePool(const StepView& view) {
  const DataType type = view.input_dtypes.empty() ? DataType::kFloat : view.input_dtypes[0];
  if (type != DataType::kFloat && type != DataType::kBfloat16) {
    return ops::NodeError(view.node, std::string("pooling of ") + DataTypeName(type) + " is not supported");
  }
  return std::unique_ptr<Kernel>(new PoolKernel(view.node, LayoutsFromParams(view.params, "input_layouts", 1)[0], type));
}

}  // namespace

SY_REGISTER_CPU_IMPLS(OnednnPool) {
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}) {
    reg.Register({"onednn", "", op, "", SupportsPool, PreparePool, CreatePool});
  }
}

}  // namespace switchyard::onednn
