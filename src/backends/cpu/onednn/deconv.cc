// oneDNN ConvTranspose (deconvolution_forward) for 1-D and 2-D fp32 and bf16 (bf16
// src/weights, f32 dst and bias). Weights are packed at build time into the primitive's
// format; activations use the route's layout (plain, nhwc, or the primitive's blocked
// choice). ONNX output_padding/output_shape become oneDNN's right padding (pe -
// output_padding); shapes oneDNN refuses (e.g. negative padding) make Supports false,
// so the native kernel takes the node.
#include <algorithm>
#include <cstring>
#include <optional>

#include "backends/cpu/native/conv_transpose.h"
#include "backends/cpu/onednn/common.h"

namespace switchyard::onednn {
namespace {

using DeconvPd = dnnl::deconvolution_forward::primitive_desc;

struct DeconvDims {
  memory::dims src, wei, bias, dst, strides, dil, pl, pr;
  memory::dims wei_strides;  // ONNX W [C, M/g, k...] viewed with oneDNN's dims
};

Result<DeconvDims> MakeDims(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
  SY_ASSIGN_OR_RETURN(native::DeconvGeom g, native::ResolveConvTranspose(node, x, w));
  const size_t ns = x.size() - 2;
  DeconvDims d;
  d.src = Dims(x);
  d.dst = Dims(g.out_shape);
  std::vector<int64_t> out_pad = node.GetInts("output_padding", std::vector<int64_t>(ns, 0));
  for (size_t i = 0; i < ns; ++i) {
    d.strides.push_back(g.win.strides[i]);
    d.dil.push_back(g.win.dilations[i] - 1);
    d.pl.push_back(g.win.pads_begin[i]);
    // dst = (src-1)*s + dk - pl - pr, so pr absorbs output_padding / output_shape.
    const int64_t dk = (g.win.kernel[i] - 1) * g.win.dilations[i] + 1;
    d.pr.push_back((x[2 + i] - 1) * g.win.strides[i] + dk - g.win.pads_begin[i] - g.out_sp[i]);
    if (d.pl.back() < 0 || d.pr.back() < 0) {
      return ops::NodeUnsupported(node, "oneDNN deconvolution needs non-negative padding");
    }
  }
  const int64_t group = g.group, cg = g.c / group, mg = g.m / group;
  int64_t ksz = 1;
  for (size_t i = 2; i < w.size(); ++i) ksz *= w[i];
  // ONNX W memory is [G][C/G][M/G][k...]; oneDNN's logical dims are [G][M/G][C/G][k...].
  if (group > 1) {
    d.wei = {group, mg, cg};
    d.wei_strides = {cg * mg * ksz, ksz, mg * ksz};
  } else {
    d.wei = {mg, cg};
    d.wei_strides = {ksz, mg * ksz};
  }
  int64_t stride = ksz;
  std::vector<int64_t> kst;
  for (size_t i = 2; i < w.size(); ++i) {
    stride /= w[i];
    kst.push_back(stride);
  }
  for (size_t i = 2; i < w.size(); ++i) {
    d.wei.push_back(w[i]);
    d.wei_strides.push_back(kst[i - 2]);
  }
  d.bias = {g.m};
  return d;
}

struct Config {
  bool bf16 = false, has_bias = false;
  std::string layout;  // declared src and dst layout
};

Result<DeconvPd> MakePd(const Node& node, const DeconvDims& d, const Config& cfg, Tag src_tag, Tag dst_tag) {
  std::optional<DeconvPd> pd;
  SY_RETURN_IF_ERROR(Guard(node, "deconvolution primitive", [&]() -> Status {
    dnnl::primitive_attr attr = UserScratchAttr();
    const Dt sdt = cfg.bf16 ? Dt::bf16 : Dt::f32;
    const memory::desc src(d.src, sdt, src_tag), dst(d.dst, Dt::f32, dst_tag);
    const memory::desc w(d.wei, sdt, Tag::any);
    const auto prop = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::deconvolution_direct;
    if (cfg.has_bias) {
      const memory::desc b(d.bias, Dt::f32, Tag::a);
      pd.emplace(dnnl::deconvolution_forward::desc(prop, alg, src, w, b, dst, d.strides, d.dil, d.pl, d.pr),
                 attr, CpuEngine());
    } else {
      pd.emplace(dnnl::deconvolution_forward::desc(prop, alg, src, w, dst, d.strides, d.dil, d.pl, d.pr),
                 attr, CpuEngine());
    }
    return Status::Ok();
  }));
  return *pd;
}

struct Plan {
  Config cfg;
  DeconvDims dims;
  std::optional<DeconvPd> pd;
};

Result<Plan> PlanDeconv(const Node& node, const KernelBuildContext& ctx) {
  Plan plan;
  plan.cfg.bf16 = ctx.precision == "bf16";
  plan.cfg.has_bias = node.HasInput(2);
  const std::vector<int64_t> x = Concretize(ctx.input_shapes[0]);
  SY_ASSIGN_OR_RETURN(plan.dims, MakeDims(node, x, ctx.input_shapes[1]));
  const size_t rank = x.size();
  if (rank == 4 && ctx.layout == "blocked") {
    SY_ASSIGN_OR_RETURN(DeconvPd any, MakePd(node, plan.dims, plan.cfg, Tag::any, Tag::any));
    // src and dst must agree so that chains of such ops need no reorders between them.
    std::string name = LayoutName(any.dst_desc());
    if (name == "?") name = DefaultBlockedLayout();
    plan.cfg.layout = name;
  } else if (rank == 4 && ctx.layout == "nhwc") {
    plan.cfg.layout = "nhwc";
  }
  SY_ASSIGN_OR_RETURN(Tag t, TagFor(plan.cfg.layout, rank));
  SY_ASSIGN_OR_RETURN(DeconvPd pd, MakePd(node, plan.dims, plan.cfg, t, t));
  plan.pd.emplace(pd);
  return plan;
}

bool SupportsDeconv(const Node& node, const KernelBuildContext& ctx) {
  const auto& d = ctx.input_dtypes;
  if (d.size() < 2 || d[0] != DataType::kFloat || d[1] != DataType::kFloat || !ctx.constants[1]) return false;
  const size_t rank = ctx.input_shapes[0].size();
  if ((rank != 3 && rank != 4) || ctx.input_shapes[1].size() != rank || ctx.input_shapes[0][1] < 0) return false;
  if (node.HasInput(2) && (d[2] != DataType::kFloat || ctx.input_shapes[2].size() != 1)) return false;
  if (ctx.precision == "bf16" && !ctx.target.features.HasBf16()) return false;
  return PlanDeconv(node, ctx).ok();
}

struct Entry {
  std::optional<DeconvPd> pd;
  dnnl::primitive prim;
  memory::desc src_f32, src, dst, wei;
  const void* wei_data = nullptr;
  std::vector<uint8_t> own_wei;  // this shape's primitive wants another weights format
  SrcConversion src_cvt;
  int64_t oc = 0;
  memory::desc bias;
  ArgsKey args_key;
};

class DeconvKernel final : public Kernel {
 public:
  DeconvKernel(const Node& node, Config cfg, std::vector<int64_t> w_shape, memory::desc packed_md,
               const Tensor* packed)
      : node_(node), cfg_(std::move(cfg)), w_shape_(std::move(w_shape)), packed_md_(packed_md), packed_(packed) {}

  Result<std::vector<std::vector<int64_t>>> OutputShapes(const std::vector<const TensorRef*>& in) const override {
    if (in.empty() || !in[0]) return ops::NodeError(node_, "X is required");
    SY_ASSIGN_OR_RETURN(native::DeconvGeom g, native::ResolveConvTranspose(node_, in[0]->shape, w_shape_));
    return std::vector<std::vector<int64_t>>{g.out_shape};
  }

  Result<std::shared_ptr<const Entry>> Get(const std::vector<int64_t>& x) const {
    return cache_.Get(x, [&]() -> Result<std::shared_ptr<const Entry>> {
      auto e = std::make_shared<Entry>();
      SY_ASSIGN_OR_RETURN(DeconvDims d, MakeDims(node_, x, w_shape_));
      SY_ASSIGN_OR_RETURN(Tag t, TagFor(cfg_.layout, x.size()));
      SY_ASSIGN_OR_RETURN(DeconvPd pd, MakePd(node_, d, cfg_, t, t));
      e->pd.emplace(pd);
      e->src = pd.src_desc();
      e->dst = pd.dst_desc();
      e->wei = pd.weights_desc();
      e->src_f32 = memory::desc(d.src, Dt::f32, t);
      e->oc = d.bias[0];
      e->bias = memory::desc({e->oc}, Dt::f32, Tag::a);
      e->wei_data = packed_->raw();
      if (e->wei != packed_md_) {
        SY_ASSIGN_OR_RETURN(e->own_wei, ReorderBytes(node_, packed_md_, packed_->raw(), e->wei));
        e->wei_data = e->own_wei.data();
      }
      SY_RETURN_IF_ERROR(Guard(node_, "primitive creation", [&]() -> Status {
        e->prim = dnnl::deconvolution_forward(pd);
        e->src_cvt.Init(e->src_f32, e->src);
        return Status::Ok();
      }));
      return std::shared_ptr<const Entry>(std::move(e));
    });
  }

  Status Run(const KernelIO& io) const override {
    ThreadScope threads(io.threads);
    const TensorRef* x = io.inputs[0];
    if (!x || x->dtype != DataType::kFloat) return ops::NodeError(node_, "X must be float32");
    return Guard(node_, "deconvolution", [&]() -> Status {
      SY_ASSIGN_OR_RETURN(auto e, Get(x->shape));
      const void* src = x->data;
      if (e->src_cvt.needed()) {
        void* buf = ThreadScratch(kSrcConvert, e->src.get_size());
        e->src_cvt.Run(x->data, buf, e->args_key, 1, io.threads);
        src = buf;
      }
      ExecArgs args(e->args_key);
      args.Add(DNNL_ARG_SRC, e->src, src);
      args.Add(DNNL_ARG_WEIGHTS, e->wei, e->wei_data);
      args.Add(DNNL_ARG_DST, e->dst, io.outputs[0]->data);
      if (cfg_.has_bias) {
        const TensorRef* b = io.inputs.size() > 2 ? io.inputs[2] : nullptr;
        if (!b || b->numel() != e->oc) return ops::NodeError(node_, "bias must have M elements");
        args.Add(DNNL_ARG_BIAS, e->bias, b->data);
      }
      args.Run(e->prim, &*e->pd);
      return Status::Ok();
    });
  }

 private:
  const Node node_;
  const Config cfg_;
  const std::vector<int64_t> w_shape_;
  const memory::desc packed_md_;
  const Tensor* const packed_;
  ShapeCache<Entry> cache_;
};

Status PrepareDeconv(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  SY_ASSIGN_OR_RETURN(Plan plan, PlanDeconv(node, ctx));
  const Tensor& w = *ctx.constants[1];
  const memory::desc wei_md = plan.pd->weights_desc();
  const memory::desc onnx_md(plan.dims.wei, Dt::f32, plan.dims.wei_strides);
  SY_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReorderBytes(node, onnx_md, w.raw(), wei_md));
  Tensor packed(DataType::kUint8, {static_cast<int64_t>(bytes.size())});
  std::memcpy(packed.raw(), bytes.data(), bytes.size());
  spec.packed.push_back(std::move(packed));
  spec.consumed_inputs = {1};
  std::vector<std::string> in_layouts(node.inputs.size(), "");
  in_layouts[0] = plan.cfg.layout;
  spec.params["input_layouts"] = in_layouts;
  spec.params["output_layouts"] = {plan.cfg.layout};
  const auto& xs = ctx.input_shapes[0];
  const bool static_x = std::none_of(xs.begin(), xs.end(), [](int64_t v) { return v < 0; });
  if (!plan.cfg.layout.empty() && static_x) {
    SY_ASSIGN_OR_RETURN(Tag t, TagFor(plan.cfg.layout, xs.size()));
    spec.params["output_bytes"] = {static_cast<int64_t>(memory::desc(plan.dims.dst, Dt::f32, t).get_size())};
  }
  spec.params["precision"] = plan.cfg.bf16 ? "bf16" : "fp32";
  spec.params["w_shape"] = ctx.input_shapes[1];
  spec.params["weights_format"] = FormatString(wei_md);
  spec.params["impl"] = plan.pd->impl_info_str();
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateDeconv(const StepView& view) {
  const Node& node = view.node;
  const auto& p = view.params;
  if (view.packed.empty()) return ops::NodeError(node, "packed weights missing");
  Config cfg;
  cfg.bf16 = p.value("precision", "fp32") == "bf16";
  cfg.has_bias = node.HasInput(2);
  cfg.layout = LayoutsFromParams(p, "input_layouts", 1)[0];
  const std::vector<int64_t> w_shape = p.value("w_shape", std::vector<int64_t>{});
  if (w_shape.empty() || view.input_shapes.empty()) return ops::NodeError(node, "weights shape missing");
  const std::vector<int64_t> x = Concretize(view.input_shapes[0]);
  SY_ASSIGN_OR_RETURN(DeconvDims d, MakeDims(node, x, w_shape));
  SY_ASSIGN_OR_RETURN(Tag t, TagFor(cfg.layout, x.size()));
  SY_ASSIGN_OR_RETURN(DeconvPd pd, MakePd(node, d, cfg, t, t));
  const memory::desc wei = pd.weights_desc();
  const std::string want = FormatString(wei), have = p.value("weights_format", "");
  if (want != have || wei.get_size() != view.packed[0]->nbytes()) {
    return Status::FailedPrecondition("node '" + node.name + "': engine was built for a different CPU: weights packed as '" +
                                      have + "', this machine's oneDNN wants '" + want + "'");
  }
  return std::unique_ptr<Kernel>(new DeconvKernel(node, cfg, w_shape, wei, view.packed[0]));
}

}  // namespace

SY_REGISTER_CPU_IMPLS(OnednnDeconv) {
  reg.Register({"onednn", "", "ConvTranspose", "", SupportsDeconv, PrepareDeconv, CreateDeconv});
}

}  // namespace switchyard::onednn
