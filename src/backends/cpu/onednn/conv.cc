// oneDNN Conv and switchyard.FusedConv (variants "" = convolution_auto, "direct",
// "winograd"): fp32, bf16 (bf16 src/weights; f32 X converted per call, f32 bias and Y, or
// every input and Y in bf16 where the builder stores the activations in bf16) and int8 (per-output-
// channel s8 weights packed at build time, activations quantized per tensor at run time).
// Bias, the residual Z (sum post-op), the activation and a post_affine scale and shift after
// it (eltwise post-ops) are fused.
// A FusedConv input scale S (input 4, [N or 1, C, 1, 1]: a squeeze-excite scale folded by
// fuse.conv_scale) multiplies the weights' input channels per call (conv_scale.h): for the
// layers the pass picks the weights are smaller than the activations; when S differs per
// image the kernel runs image by image.
// A second output (fuse.conv_pool: a GlobalAveragePool of Y folded into the conv), nhwc
// fp32 only: the channel means of Y, [N, M, 1, 1], summed in the SiLU pass over Y where the
// kernel runs its SiLU itself (native::SiluChannelMeansNhwc), else in a pass of their own.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/onednn/common.h"
#include "backends/cpu/onednn/conv_scale.h"
#include "reference/ops/conv_common.h"

namespace switchyard::onednn {
namespace {

using ConvPd = dnnl::convolution_forward::primitive_desc;

struct ConvGeom {
  memory::dims src, wei, bias, dst, strides, dil, pl, pr;
};

Result<ConvGeom> MakeGeom(const Node& node, const std::vector<int64_t>& x,
                          const std::vector<int64_t>& w) {
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) {
    return ops::NodeError(node, "oneDNN conv needs X and W of equal rank 3..5");
  }
  const size_t ns = x.size() - 2;
  const int64_t group = node.GetInt("group", 1), c = x[1], m = w[0];
  if (group < 1 || c % group != 0 || m % group != 0 || w[1] * group != c) {
    return ops::NodeError(node, "channels " + std::to_string(c) + " / weights " +
                                    ShapeToString(w) + " do not match group " + std::to_string(group));
  }
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (node.Has("kernel_shape") && node.GetInts("kernel_shape") != kernel) {
    return ops::NodeError(node, "kernel_shape does not match W");
  }
  SY_ASSIGN_OR_RETURN(ops::Window win, ops::ReadWindow(node, kernel));
  ConvGeom g;
  g.src = Dims(x);
  g.dst = {x[0], m};
  for (size_t i = 0; i < ns; ++i) {
    SY_ASSIGN_OR_RETURN(int64_t o, ops::WindowOutputDim(node, win, i, x[2 + i]));
    if (o < 1) return ops::NodeError(node, "empty output for input " + ShapeToString(x));
    g.dst.push_back(o);
    g.strides.push_back(win.strides[i]);
    g.dil.push_back(win.dilations[i] - 1);
    g.pl.push_back(win.pads_begin[i]);
    g.pr.push_back(win.pads_end[i]);
  }
  g.wei = group > 1 ? memory::dims{group, m / group, c / group} : memory::dims{m, c};
  g.wei.insert(g.wei.end(), kernel.begin(), kernel.end());
  g.bias = {m};
  return g;
}

struct ConvConfig {
  Prec prec = Prec::kF32;
  dnnl::algorithm alg = dnnl::algorithm::convolution_auto;
  bool has_bias = false, has_z = false, has_scale = false;
  bool io_bf16 = false;  // X, Z and Y are bf16 tensors (bf16 only)
  bool native_act = false;  // the activation (SiLU) runs as native::SiluInPlace after the primitive
  bool pooled = false;      // output 1: Y's channel means (fuse.conv_pool)
  std::string src_layout, dst_layout;  // what the step's buffers hold (declared)
  // What the primitive runs on; differs from the declared layouts only where the route
  // wants plain/nhwc but the algorithm (Winograd) needs blocked: reordered inside Run.
  std::string prim_src_layout, prim_dst_layout;
};

const char* PrecName(Prec p) { return p == Prec::kBf16 ? "bf16" : p == Prec::kInt8 ? "int8" : "fp32"; }
Prec PrecFromName(const std::string& s) {
  return s == "bf16" ? Prec::kBf16 : s == "int8" ? Prec::kInt8 : Prec::kF32;
}
dnnl::algorithm ConvAlgorithm(const std::string& variant) {
  if (variant == "direct") return dnnl::algorithm::convolution_direct;
  if (variant == "winograd") return dnnl::algorithm::convolution_winograd;
  return dnnl::algorithm::convolution_auto;
}

// The type of the step's X, Z and Y tensors.
Dt IoDt(const ConvConfig& cfg) { return cfg.io_bf16 ? Dt::bf16 : Dt::f32; }

// int8: oneDNN 2.6 convolutions take no runtime output scales, so the per-channel weight
// scales are fixed attributes (`w_scales`, ones while planning) and the per-call
// activation scale is a binary_mul post-op with a runtime scalar operand.
Result<ConvPd> MakePd(const Node& node, const ConvGeom& g, const ConvConfig& cfg, Dt src_dt,
                      Tag src_tag, Tag dst_tag, const memory::desc* wei,
                      const float* w_scales = nullptr) {
  std::optional<ConvPd> pd;
  Status st = Guard(node, "convolution primitive", [&]() -> Status {
    dnnl::primitive_attr attr = UserScratchAttr();
    dnnl::post_ops po;
    if (cfg.prec == Prec::kInt8) {
      const int64_t m = g.dst[1];
      attr.set_output_scales(1 << 1, w_scales ? std::vector<float>(w_scales, w_scales + m) : std::vector<float>(m, 1.f));
      po.append_binary(dnnl::algorithm::binary_mul, memory::desc(memory::dims(g.src.size(), 1), Dt::f32, PlainTag(g.src.size())));
    }
    if (cfg.has_z) po.append_sum(1.f);  // Z is copied into dst before the call
    if (!cfg.native_act) SY_RETURN_IF_ERROR(AppendActivation(node, po));
    attr.set_post_ops(po);
    const Dt wdt = cfg.prec == Prec::kInt8 ? Dt::s8 : cfg.prec == Prec::kBf16 ? Dt::bf16 : Dt::f32;
    const memory::desc src(g.src, src_dt, src_tag), dst(g.dst, IoDt(cfg), dst_tag);
    const memory::desc w = wei ? *wei : memory::desc(g.wei, wdt, Tag::any);
    const auto prop = dnnl::prop_kind::forward_inference;
    if (cfg.has_bias) {
      const memory::desc b(g.bias, IoDt(cfg), Tag::a);
      pd.emplace(dnnl::convolution_forward::desc(prop, cfg.alg, src, w, b, dst, g.strides, g.dil,
                                                 g.pl, g.pr),
                 attr, CpuEngine());
    } else {
      pd.emplace(dnnl::convolution_forward::desc(prop, cfg.alg, src, w, dst, g.strides, g.dil,
                                                 g.pl, g.pr),
                 attr, CpuEngine());
    }
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return *pd;
}

// Build-time decision: layouts, the primitive and its weights format.
struct ConvPlan {
  ConvConfig cfg;
  ConvGeom geom;
  std::optional<ConvPd> pd;
};

Result<ConvPlan> PlanConv(const Node& node, const KernelBuildContext& ctx) {
  ConvPlan plan;
  ConvConfig& cfg = plan.cfg;
  cfg.prec = ctx.quant_weights == "int8" ? Prec::kInt8
             : ctx.precision == "bf16"   ? Prec::kBf16
                                         : Prec::kF32;
  cfg.alg = ConvAlgorithm(ctx.variant);
  cfg.has_bias = node.HasInput(2);
  cfg.has_z = node.domain == "switchyard" && node.HasInput(3);
  cfg.has_scale = node.domain == "switchyard" && node.HasInput(4);
  cfg.io_bf16 = !ctx.input_dtypes.empty() && ctx.input_dtypes[0] == DataType::kBfloat16;
  // SiLU: oneDNN's swish post-op costs more than the convolution on large outputs (silu.cc).
  cfg.native_act = node.GetString("activation", "") == "SiLU" && !node.Has("post_affine") &&
                   native::SiluInPlaceIsVectorized(cfg.io_bf16);
  cfg.pooled = HasPooledOutput(node);
  if (ctx.input_shapes.size() < 2) return ops::NodeError(node, "X and W are required");
  const std::vector<int64_t> x = Concretize(ctx.input_shapes[0]);
  SY_ASSIGN_OR_RETURN(plan.geom, MakeGeom(node, x, ctx.input_shapes[1]));
  const size_t rank = x.size();
  const Dt sdt = SrcDt(cfg.prec);
  // Declared layouts follow the route (blocked: the primitive's own choice). int8 and
  // Winograd run on the primitive's choice even on a plain/nhwc route (plain int8 has only
  // a reference implementation; Winograd needs blocked), reordering inside Run.
  std::string any_src, any_dst;
  const bool want_any = rank == 4 && (ctx.layout == "blocked" || cfg.prec == Prec::kInt8 ||
                                      cfg.alg == dnnl::algorithm::convolution_winograd);
  if (want_any) {
    SY_ASSIGN_OR_RETURN(ConvPd any, MakePd(node, plan.geom, cfg, sdt, Tag::any, Tag::any, nullptr));
    any_src = LayoutName(any.src_desc());
    any_dst = LayoutName(any.dst_desc());
    if (any_src == "?") any_src = DefaultBlockedLayout();
    if (any_dst == "?") any_dst = DefaultBlockedLayout();
  }
  if (rank == 4 && ctx.layout == "blocked") {
    cfg.src_layout = any_src;
    cfg.dst_layout = any_dst;
  } else if (rank == 4 && ctx.layout == "nhwc") {
    cfg.src_layout = cfg.dst_layout = "nhwc";
  }
  cfg.prim_src_layout = want_any ? any_src : cfg.src_layout;
  cfg.prim_dst_layout = want_any ? any_dst : cfg.dst_layout;
  SY_ASSIGN_OR_RETURN(Tag st, TagFor(cfg.prim_src_layout, rank));
  SY_ASSIGN_OR_RETURN(Tag dt, TagFor(cfg.prim_dst_layout, rank));
  SY_ASSIGN_OR_RETURN(ConvPd pd, MakePd(node, plan.geom, cfg, sdt, st, dt, nullptr));
  plan.pd.emplace(pd);
  return plan;
}

bool SupportsConv(const Node& node, const KernelBuildContext& ctx) {
  const auto& d = ctx.input_dtypes;
  if (d.size() < 2) return false;
  // Channel means of an nhwc fp32 output only.
  if (HasPooledOutput(node) && (ctx.layout != "nhwc" || d[0] != DataType::kFloat || ctx.input_shapes[0].size() != 4)) {
    return false;
  }
  // Every input bf16 only for a bf16 convolution (int8 and Winograd are refused below).
  const bool io_bf16 = d[0] == DataType::kBfloat16 && ctx.precision == "bf16";
  if ((d[0] != DataType::kFloat && !io_bf16) || d[1] != d[0]) return false;
  if (!ctx.constants[1] || ctx.input_shapes[0].size() < 3 || ctx.input_shapes[0][1] < 0) return false;
  if (node.HasInput(2) && (d[2] != d[0] || ctx.input_shapes[2].size() != 1)) return false;
  if (node.HasInput(3) && d[3] != d[0]) return false;
  if (node.HasInput(3) && !ResidualHasOutputShape(ctx)) return false;
  // An input scale scales the packed weights per call: not int8 (quantized per output
  // channel at build time), not Winograd (its weights are transformed, not permuted).
  if (node.HasInput(4) && (!InputScaleFits(ctx) || ctx.quant_weights == "int8" || ctx.variant == "winograd" ||
                           node.GetInt("group", 1) != 1)) {
    return false;
  }
  if (!ActivationSupported(node)) return false;
  if (ctx.precision == "bf16" && !ctx.target.features.HasBf16()) return false;
  if (ctx.variant == "winograd" && (ctx.quant_weights == "int8" || ctx.precision == "bf16")) return false;
  return PlanConv(node, ctx).ok();  // the primitive must exist for this shape and variant
}

// Per-shape state: the primitive, the weights in the format it wants, and for bf16 the
// f32 → bf16 activation reorder.
struct ConvEntry {
  std::optional<ConvPd> pd;
  dnnl::primitive prim;
  memory::desc src_f32, src, dst, wei;
  memory::desc src_f32_prim;  // int8: the f32 input in the primitive's layout
  memory::desc dst_io;  // the declared output layout (== dst unless reordered)
  memory::desc bias;    // [oc] f32
  const void* wei_data = nullptr;
  std::vector<uint8_t> own_wei;  // when this shape's primitive wants another weights format
  SrcConversion src_cvt;
  std::optional<dnnl::reorder> dst_cvt, z_cvt;
  ScaledWeightsTable scaled;  // with an input scale (conv_scale.h)
  int64_t oc = 0;
  std::vector<int64_t> out_shape;
  ArgsKey args_key;
};

class ConvKernel final : public Kernel {
 public:
  // w_scales: int8 per-output-channel scales; plain: the f32 weights as given (bf16 with an
  // input scale).
  ConvKernel(const Node& node, ConvConfig cfg, std::vector<int64_t> w_shape, memory::desc packed_md,
             const Tensor* packed, const Tensor* w_scales, const Tensor* plain)
      : node_(node), cfg_(std::move(cfg)), w_shape_(std::move(w_shape)), packed_md_(packed_md),
        packed_(packed), w_scales_(w_scales), packed_plain_(plain) {}

  Result<std::vector<std::vector<int64_t>>> OutputShapes(
      const std::vector<const TensorRef*>& inputs) const override {
    if (inputs.empty() || !inputs[0]) return ops::NodeError(node_, "X is required");
    // The cached entry holds the geometry: no shape arithmetic (and no allocation) per call.
    SY_ASSIGN_OR_RETURN(auto e, Entry(inputs[0]->shape, SrcDt(cfg_.prec)));
    if (cfg_.pooled) return std::vector<std::vector<int64_t>>{e->out_shape, {e->out_shape[0], e->oc, 1, 1}};
    return std::vector<std::vector<int64_t>>{e->out_shape};
  }

  Result<std::shared_ptr<const ConvEntry>> Entry(const std::vector<int64_t>& x, Dt sdt) const {
    std::vector<int64_t>& key = KeyBuffer();
    key.insert(key.end(), x.begin(), x.end());
    key.push_back(static_cast<int64_t>(sdt));
    return cache_.Get(key, [&]() -> Result<std::shared_ptr<const ConvEntry>> {
      auto e = std::make_shared<ConvEntry>();
      SY_ASSIGN_OR_RETURN(ConvGeom g, MakeGeom(node_, x, w_shape_));
      SY_ASSIGN_OR_RETURN(Tag st, TagFor(cfg_.prim_src_layout, x.size()));
      SY_ASSIGN_OR_RETURN(Tag dt, TagFor(cfg_.prim_dst_layout, x.size()));
      SY_ASSIGN_OR_RETURN(Tag io_st, TagFor(cfg_.src_layout, x.size()));
      SY_ASSIGN_OR_RETURN(Tag io_dt, TagFor(cfg_.dst_layout, x.size()));
      SY_ASSIGN_OR_RETURN(ConvPd pd, MakePd(node_, g, cfg_, sdt, st, dt, nullptr,
                                            w_scales_ ? w_scales_->data<float>() : nullptr));
      e->pd.emplace(pd);
      e->src = pd.src_desc();
      e->dst = pd.dst_desc();
      e->wei = pd.weights_desc();
      e->src_f32 = memory::desc(g.src, IoDt(cfg_), io_st);
      e->dst_io = memory::desc(g.dst, IoDt(cfg_), io_dt);
      e->src_f32_prim = memory::desc(g.src, Dt::f32, st);
      e->oc = g.dst[1];
      e->out_shape.assign(g.dst.begin(), g.dst.end());
      e->bias = memory::desc({e->oc}, IoDt(cfg_), Tag::a);
      e->wei_data = packed_->raw();
      if (e->wei != packed_md_) {
        SY_ASSIGN_OR_RETURN(e->own_wei, ReorderBytes(node_, packed_md_, packed_->raw(), e->wei));
        e->wei_data = e->own_wei.data();
      }
      SY_RETURN_IF_ERROR(Guard(node_, "primitive creation", [&]() -> Status {
        e->prim = dnnl::convolution_forward(pd);
        const bool quantized = sdt == Dt::u8 || sdt == Dt::s8;  // quantized by Run itself
        auto make = [](const memory::desc& a, const memory::desc& b) {
          return dnnl::reorder(dnnl::reorder::primitive_desc(CpuEngine(), a, CpuEngine(), b));
        };
        e->src_cvt.Init(e->src_f32, quantized ? e->src_f32_prim : e->src);
        if (e->dst != e->dst_io) {
          e->dst_cvt.emplace(make(e->dst, e->dst_io));
          e->z_cvt.emplace(make(e->dst_io, e->dst));
        }
        return Status::Ok();
      }));
      if (cfg_.has_scale) {
        SY_ASSIGN_OR_RETURN(e->scaled, MakeScaledWeightsTable(node_, cfg_.alg == dnnl::algorithm::convolution_winograd,
                                                              e->wei, g.wei, w_shape_, packed_plain_));
      }
      return std::shared_ptr<const ConvEntry>(std::move(e));
    });
  }

  Status Run(const KernelIO& io) const override {
    ThreadScope threads(io.threads);
    const TensorRef* x = io.inputs[0];
    TensorRef* y = io.outputs[0];
    const DataType io_type = cfg_.io_bf16 ? DataType::kBfloat16 : DataType::kFloat;
    if (!x || x->dtype != io_type) return ops::NodeError(node_, std::string("X must be ") + DataTypeName(io_type));
    const TensorRef* z = cfg_.has_z && io.inputs.size() > 3 ? io.inputs[3] : nullptr;
    if (cfg_.has_z && (!z || z->shape != y->shape)) return ops::NodeError(node_, "residual Z must have the output shape");
    const TensorRef* b = cfg_.has_bias && io.inputs.size() > 2 ? io.inputs[2] : nullptr;
    if (!cfg_.has_scale) {
      return Guard(node_, "convolution", [&]() -> Status {
        SY_ASSIGN_OR_RETURN(auto e, Entry(x->shape, SrcDt(cfg_.prec)));
        return Execute(io, *e, x->data, y->data, z ? z->data : nullptr, b, e->wei_data, Means(io, 0));
      });
    }
    const TensorRef* s = io.inputs.size() > 4 ? io.inputs[4] : nullptr;
    const auto& xs = x->shape;
    if (!s || s->dtype != io_type || xs.size() != 4 || s->shape.size() != 4 || s->shape[1] != xs[1] ||
        s->shape[2] != 1 || s->shape[3] != 1 || (s->shape[0] != 1 && s->shape[0] != xs[0])) {
      return ops::NodeError(node_, "input scale must be [1 or N, C, 1, 1] for X " + ShapeToString(xs));
    }
    return Guard(node_, "convolution", [&]() -> Status {
      // One scale for every image: one call. Else image by image, each with its weights.
      const bool shared = s->shape[0] == 1 || xs[0] == 1;
      std::vector<int64_t> image;
      if (!shared) image = {1, xs[1], xs[2], xs[3]};
      SY_ASSIGN_OR_RETURN(auto e, Entry(shared ? xs : image, SrcDt(cfg_.prec)));
      const int64_t images = shared ? 1 : xs[0];
      const size_t x_step = e->src_f32.get_size(), y_step = e->dst_io.get_size();
      for (int64_t i = 0; i < images; ++i) {
        const void* wei = ScaleWeights(e->scaled, e->wei, e->wei_data, w_shape_[1],
                                       static_cast<const char*>(s->data) + i * xs[1] * DataTypeSize(io_type), io_type,
                                       io.threads);
        const auto at = [](const void* p, size_t off) { return static_cast<const char*>(p) + off; };
        SY_RETURN_IF_ERROR(Execute(io, *e, at(x->data, i * x_step), const_cast<char*>(at(y->data, i * y_step)),
                                   z ? at(z->data, i * y_step) : nullptr, b, wei, Means(io, i * e->oc)));
      }
      return Status::Ok();
    });
  }

 private:
  // Output 1 (the channel means) from image `offset / M` on, or null without one.
  float* Means(const KernelIO& io, int64_t offset) const {
    return cfg_.pooled && io.outputs.size() > 1 && io.outputs[1] ? io.outputs[1]->as<float>() + offset : nullptr;
  }

  // One primitive call on x/y/z (the entry's shape) with the given weights; the channel
  // means of y into `means` when given (nhwc fp32).
  Status Execute(const KernelIO& io, const ConvEntry& entry, const void* x_data, void* y_data, const void* z_data,
                 const TensorRef* b, const void* wei, float* means) const {
    const ConvEntry* e = &entry;
    std::shared_ptr<const ConvEntry> requant;  // int8 with signed activations: the s8 entry
    {
      Dt sdt = SrcDt(cfg_.prec);
      const void* src = x_data;
      float x_scale = 1.f;
      if (cfg_.prec == Prec::kInt8) {
        const float* xf = static_cast<const float*>(x_data);
        if (e->src_cvt.needed()) {  // to the primitive's layout first; quantizing is elementwise
          void* staged = ThreadScratch(kSrcStage, e->src_f32_prim.get_size());
          e->src_cvt.Run(x_data, staged, e->args_key, 1, io.threads);
          xf = static_cast<const float*>(staged);
        }
        SY_ASSIGN_OR_RETURN(src, QuantizePerTensor(node_, xf, static_cast<int64_t>(e->src_f32_prim.get_size() / sizeof(float)), &x_scale, &sdt));
        if (sdt != Dt::u8) {
          SY_ASSIGN_OR_RETURN(requant, Entry(io.inputs[0]->shape, sdt));
          e = requant.get();
          wei = e->wei_data;
        }
      } else if (e->src_cvt.needed()) {
        void* buf = ThreadScratch(kSrcConvert, e->src.get_size());
        e->src_cvt.Run(x_data, buf, e->args_key, 1, io.threads);
        src = buf;
      }
      ExecArgs args(e->args_key);
      args.Add(DNNL_ARG_SRC, e->src, src);
      args.Add(DNNL_ARG_WEIGHTS, e->wei, wei);
      void* dst = e->dst_cvt ? ThreadScratch(kDstConvert, e->dst.get_size()) : y_data;
      args.Add(DNNL_ARG_DST, e->dst, dst);
      if (cfg_.has_z) {
        if (e->z_cvt) {
          ExecArgs(e->args_key, 2).Add(DNNL_ARG_FROM, e->dst_io, z_data).Add(DNNL_ARG_TO, e->dst, dst).Run(*e->z_cvt);
        } else if (z_data != y_data) {
          std::memcpy(y_data, z_data, e->dst.get_size());
        }
      }
      if (cfg_.has_bias && (!b || b->numel() != e->oc)) return ops::NodeError(node_, "bias must have M elements");
      if (cfg_.prec == Prec::kInt8) {
        float* xs = static_cast<float*>(ThreadScratch(kAux, sizeof(float)));
        *xs = x_scale;
        const size_t rank = io.inputs[0]->shape.size();
        args.Add(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, {memory::dims(rank, 1), Dt::f32, PlainTag(rank)}, xs);
        if (b) {  // oneDNN 2.x scales after adding the bias: pre-divide it.
          const float* ws = w_scales_->data<float>();
          float* bq = static_cast<float*>(ThreadScratch(kAux2, e->oc * sizeof(float)));
          for (int64_t i = 0; i < e->oc; ++i) bq[i] = b->as<float>()[i] / (x_scale * ws[i]);
          args.Add(DNNL_ARG_BIAS, {{e->oc}, Dt::f32, Tag::a}, bq);
        }
      } else if (b) {
        args.Add(DNNL_ARG_BIAS, e->bias, b->data);
      }
      args.Run(e->prim, &*e->pd);
      if (e->dst_cvt) {
        ExecArgs(e->args_key, 3).Add(DNNL_ARG_FROM, e->dst, dst).Add(DNNL_ARG_TO, e->dst_io, y_data).Run(*e->dst_cvt);
      }
      const auto& ys = e->out_shape;
      if (means && (cfg_.io_bf16 || ys.size() != 4)) return ops::NodeError(node_, "channel means of a 4-D fp32 Y only");
      float* yf = static_cast<float*>(y_data);
      if (cfg_.native_act && means) {
        native::SiluChannelMeansNhwc(yf, ys[0], ys[1], ys[2] * ys[3], means, io.threads);
      } else {
        if (cfg_.native_act) native::SiluInPlace(y_data, cfg_.io_bf16, e->dst_io.get_size(), io.threads);
        if (means) native::ChannelMeansNhwc(yf, ys[0], ys[1], ys[2] * ys[3], means, io.threads);
      }
      return Status::Ok();
    }
  }

  const Node node_;
  const ConvConfig cfg_;
  const std::vector<int64_t> w_shape_;
  const memory::desc packed_md_;
  const Tensor* const packed_;
  const Tensor* const w_scales_;
  const Tensor* const packed_plain_;
  ShapeCache<ConvEntry> cache_;
};

Status PrepareConv(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  SY_ASSIGN_OR_RETURN(ConvPlan plan, PlanConv(node, ctx));
  const Tensor& w = *ctx.constants[1];
  const ConvGeom& g = plan.geom;
  // Winograd weights are stored plain: oneDNN reorders into its Winograd format but not out
  // of it, and a shape other than the built one (another batch) may want another variant of
  // that format (tiny_cnn at threads=1, batch 2: "could not create a primitive descriptor
  // for a reorder primitive"). The kernel reorders them per shape at the shape's first run.
  const bool plain_store = plan.cfg.alg == dnnl::algorithm::convolution_winograd;
  const memory::desc wei_md =
      plain_store ? memory::desc(g.wei, Dt::f32, PlainTag(g.wei.size())) : plan.pd->weights_desc();
  std::vector<uint8_t> bytes;
  Tensor scales;
  if (plan.cfg.prec == Prec::kInt8) {
    const int64_t m = w.dim(0);
    scales = Tensor(DataType::kFloat, {m});
    std::vector<int8_t> q(static_cast<size_t>(w.numel()));
    QuantizeRowsInt8(w.data<float>(), m, w.numel() / m, q.data(), scales.data<float>());
    SY_ASSIGN_OR_RETURN(bytes, ReorderBytes(node, memory::desc(g.wei, Dt::s8, PlainTag(g.wei.size())), q.data(), wei_md));
  } else {
    SY_ASSIGN_OR_RETURN(Dt w_dt, ToDnnl(w.dtype()));  // f32, or bf16 with bf16 activations
    SY_ASSIGN_OR_RETURN(bytes, ReorderBytes(node, memory::desc(g.wei, w_dt, PlainTag(g.wei.size())), w.raw(), wei_md));
  }
  Tensor packed(DataType::kUint8, {static_cast<int64_t>(bytes.size())});
  std::memcpy(packed.raw(), bytes.data(), bytes.size());
  spec.packed.push_back(std::move(packed));
  if (plan.cfg.prec == Prec::kInt8) spec.packed.push_back(std::move(scales));
  // bf16 with an input scale: the f32 weights too, scaled per call before rounding to bf16
  // (fp32 scales its packed weights themselves).
  if (plan.cfg.has_scale && plan.cfg.prec == Prec::kBf16) {
    if (w.dtype() == DataType::kFloat) {
      spec.packed.push_back(w);
    } else {
      Tensor f(DataType::kFloat, w.shape());
      native::ConvertFromBf16(static_cast<const uint16_t*>(w.raw()), f.data<float>(), w.numel(), 1);
      spec.packed.push_back(std::move(f));
    }
  }
  spec.consumed_inputs = {1};
  std::vector<std::string> in_layouts(node.inputs.size(), "");
  in_layouts[0] = plan.cfg.src_layout;
  // [N, C, 1, 1] has the same bytes in nhwc and plain: no reorder after an nhwc producer.
  if (plan.cfg.has_scale && plan.cfg.src_layout == "nhwc") in_layouts[4] = "nhwc";
  if (plan.cfg.has_z) {
    in_layouts[3] = plan.cfg.dst_layout;
    spec.params["inplace"] = 3;  // the sum post-op adds onto Z: the builder may give Y Z's bytes
  }
  spec.params["input_layouts"] = in_layouts;
  spec.params["output_layouts"] = {plan.cfg.dst_layout};
  // The means ([N, M, 1, 1]: the same bytes in nhwc and plain) declared nhwc, as the
  // GlobalAveragePool they replace had them.
  if (plan.cfg.pooled) spec.params["output_layouts"].push_back(plan.cfg.dst_layout);
  const auto& xs = ctx.input_shapes[0];
  const bool static_x = std::none_of(xs.begin(), xs.end(), [](int64_t d) { return d < 0; });
  if (!plan.cfg.dst_layout.empty() && static_x) {
    SY_ASSIGN_OR_RETURN(Tag io_dt, TagFor(plan.cfg.dst_layout, xs.size()));
    spec.params["output_bytes"] = {static_cast<int64_t>(memory::desc(plan.geom.dst, IoDt(plan.cfg), io_dt).get_size())};
    if (plan.cfg.pooled) spec.params["output_bytes"].push_back(plan.geom.dst[0] * plan.geom.dst[1] * int64_t{4});
  }
  // One thread under 256K multiply-adds (output elements x C / group x kernel size): a
  // squeeze-excite FC (EfficientNet-B0 bf16: 32 of them 0.235 -> 0.153 ms on one thread).
  if (static_x) LimitThreadsToWork(ConvMacs(g.dst, g.wei), int64_t{1} << 17, ctx, spec);
  if (plan.cfg.io_bf16) spec.params["activations"] = "bf16";
  if (plan.cfg.native_act) spec.params["activation_impl"] = "native";
  spec.params["prim_layouts"] = {plan.cfg.prim_src_layout, plan.cfg.prim_dst_layout};
  spec.params["precision"] = PrecName(plan.cfg.prec);
  spec.params["algorithm"] = ctx.variant.empty() ? "auto" : ctx.variant;
  spec.params["weights_format"] = FormatString(wei_md);
  spec.params["weights_bytes"] = static_cast<int64_t>(wei_md.get_size());
  spec.params["impl"] = plan.pd->impl_info_str();
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateConv(const StepView& view) {
  const Node& node = view.node;
  const auto& p = view.params;
  if (view.packed.empty() || view.input_shapes.size() < 2) return ops::NodeError(node, "packed weights missing");
  ConvConfig cfg;
  cfg.prec = PrecFromName(p.value("precision", "fp32"));
  cfg.alg = ConvAlgorithm(p.value("algorithm", "auto"));
  cfg.has_bias = node.HasInput(2);
  cfg.has_z = node.domain == "switchyard" && node.HasInput(3);
  cfg.has_scale = node.domain == "switchyard" && node.HasInput(4);
  cfg.io_bf16 = p.value("activations", "fp32") == "bf16";
  cfg.native_act = p.value("activation_impl", "onednn") == "native";
  if (cfg.native_act && (node.GetString("activation", "") != "SiLU" || node.Has("post_affine"))) {
    return ops::NodeError(node, "native activation is SiLU only, without post_affine");
  }
  cfg.pooled = HasPooledOutput(node);
  if (cfg.io_bf16 && (cfg.prec != Prec::kBf16 || view.input_dtypes.empty() ||
                      view.input_dtypes[0] != DataType::kBfloat16)) {
    return ops::NodeError(node, "bf16 activations need a bf16 convolution with a bf16 X");
  }
  cfg.src_layout = LayoutsFromParams(p, "input_layouts", 1)[0];
  cfg.dst_layout = LayoutsFromParams(p, "output_layouts", 1)[0];
  if (cfg.pooled && (cfg.dst_layout != "nhwc" || cfg.io_bf16)) {
    return ops::NodeError(node, "channel means (output 1) of an nhwc fp32 output only");
  }
  const std::vector<std::string> prim = LayoutsFromParams(p, "prim_layouts", 2);
  cfg.prim_src_layout = p.contains("prim_layouts") ? prim[0] : cfg.src_layout;
  cfg.prim_dst_layout = p.contains("prim_layouts") ? prim[1] : cfg.dst_layout;
  if (!view.input_layouts.empty() && !view.input_layouts[0].empty() &&
      view.input_layouts[0] != cfg.src_layout) {
    return ops::NodeError(node, "input layout " + view.input_layouts[0] + " differs from the built " + cfg.src_layout);
  }
  if (cfg.prec == Prec::kInt8 && view.packed.size() < 2) return ops::NodeError(node, "weight scales missing");
  int64_t w_count = 1;
  for (int64_t d : view.input_shapes[1]) w_count *= d;
  const bool bf16_plain = cfg.has_scale && cfg.prec == Prec::kBf16;  // see PrepareConv
  if (cfg.has_scale && (cfg.prec == Prec::kInt8 ||
                        (bf16_plain && (view.packed.size() < 2 || view.packed[1]->dtype() != DataType::kFloat ||
                                        view.packed[1]->numel() != w_count)))) {
    return ops::NodeError(node, "plain weights for the input scale missing");
  }
  const std::vector<int64_t> x = Concretize(view.input_shapes[0]);
  SY_ASSIGN_OR_RETURN(ConvGeom g, MakeGeom(node, x, view.input_shapes[1]));
  SY_ASSIGN_OR_RETURN(Tag st, TagFor(cfg.prim_src_layout, x.size()));
  SY_ASSIGN_OR_RETURN(Tag dt, TagFor(cfg.prim_dst_layout, x.size()));
  SY_ASSIGN_OR_RETURN(ConvPd pd, MakePd(node, g, cfg, SrcDt(cfg.prec), st, dt, nullptr));
  memory::desc wei = pd.weights_desc();
  const std::string have = p.value("weights_format", "");
  if (cfg.alg == dnnl::algorithm::convolution_winograd) {
    const memory::desc plain(g.wei, Dt::f32, PlainTag(g.wei.size()));
    if (have == FormatString(plain)) wei = plain;  // stored plain (engines built before keep theirs)
  }
  const std::string want = FormatString(wei);
  if (want != have || wei.get_size() != view.packed[0]->nbytes()) {
    return Status::FailedPrecondition("node '" + node.name + "': engine was built for a different CPU: weights packed as '" +
                                      have + "', this machine's oneDNN wants '" + want + "'");
  }
  return std::unique_ptr<Kernel>(new ConvKernel(node, cfg, view.input_shapes[1], wei, view.packed[0],
                                                cfg.prec == Prec::kInt8 ? view.packed[1] : nullptr,
                                                bf16_plain ? view.packed[1] : nullptr));
}

}  // namespace

SY_REGISTER_CPU_IMPLS(OnednnConv) {
  for (const char* op : {"Conv", "FusedConv"}) {
    const std::string domain = std::string(op) == "Conv" ? "" : "switchyard";
    for (const char* variant : {"", "direct", "winograd"}) {
      const CpuOpImpl impl{"onednn", domain, op, variant, SupportsConv, PrepareConv, CreateConv};
      if (std::string(variant) == "winograd") reg.SetAvailability(impl, WinogradAvailable);
      reg.Register(impl);
    }
  }
}

}  // namespace switchyard::onednn
