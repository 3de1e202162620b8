// oneDNN Add/Mul/Sub of float32 (or, between bf16 convolutions of a precision=bf16 route,
// bf16) tensors, same-shape or with one operand broadcast, in plain, nhwc or blocked 4-D
// layouts, so residual adds and squeeze-excite scales stay in the convolutions' layout
// instead of forcing reorders.
#include <optional>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/onednn/common.h"
#include "reference/ops/common.h"

namespace switchyard::onednn {
namespace {

using BinPd = dnnl::binary::primitive_desc;

dnnl::algorithm BinaryAlgorithm(const std::string& op) {
  if (op == "Mul") return dnnl::algorithm::binary_mul;
  if (op == "Sub") return dnnl::algorithm::binary_sub;
  return dnnl::algorithm::binary_add;
}

// Which input is oneDNN's src0 (full output shape); the other broadcasts. Sub with a
// broadcast left operand has no oneDNN form (error).
Result<bool> Swapped(const Node& node, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> out, ops::BroadcastShapes(node, {a, b}));
  if (a == out) return false;
  if (b == out && node.op_type != "Sub") return true;
  return Status::Unsupported("node '" + node.name + "': oneDNN binary needs one operand of the output shape");
}

memory::dims Padded(const std::vector<int64_t>& s, size_t rank) {
  memory::dims d(rank - s.size(), 1);
  d.insert(d.end(), s.begin(), s.end());
  return d;
}

// The broadcast operand's layout in oneDNN's desc, from its dims padded to the full
// operand's rank (d1) and its own rank: the full operand's when both have the same dims
// and rank; in an nhwc route also for a per-channel [1,C,1,1] (or [C,1,1]) operand
// (squeeze-excite scales), whose nhwc and plain bytes are the same: no reorder before the
// step, and oneDNN sees one channels-last binary (EfficientNet-B0: 16 reorders of
// [1,C,1,1] tensors before). An operand of lower rank is stored plain (DeclaredLayout).
std::string OtherLayout(const memory::dims& d0, const memory::dims& d1, size_t other_rank, const std::string& layout) {
  if (d0 == d1 && other_rank == d0.size()) return layout;
  if (layout == "nhwc" && d1.size() == 4 && d1[0] == 1 && d1[2] == 1 && d1[3] == 1) return layout;
  return "";
}

// The layout the step declares for the broadcast operand's tensor: a tensor of another
// rank than the full one has no 4-D layout and arrives plain (its bytes are the desc's).
std::string DeclaredLayout(const memory::dims& d0, const memory::dims& d1, size_t other_rank,
                           const std::string& layout) {
  return other_rank == d0.size() ? OtherLayout(d0, d1, other_rank, layout) : "";
}

Result<BinPd> MakePd(const Node& node, const std::vector<int64_t>& full, const std::vector<int64_t>& other,
                     const std::string& layout, Dt dt) {
  std::optional<BinPd> pd;
  SY_RETURN_IF_ERROR(Guard(node, "binary primitive", [&]() -> Status {
    const size_t rank = std::max<size_t>(full.size(), 1);
    SY_ASSIGN_OR_RETURN(Tag tag, TagFor(layout, rank));
    const memory::dims d0 = Padded(full, rank), d1 = Padded(other, rank);
    SY_ASSIGN_OR_RETURN(Tag tag1, TagFor(OtherLayout(d0, d1, other.size(), layout), rank));
    const memory::desc s0(d0, dt, tag), s1(d1, dt, tag1), dst(d0, dt, tag);
    pd.emplace(dnnl::binary::desc(BinaryAlgorithm(node.op_type), s0, s1, dst), UserScratchAttr(), CpuEngine());
    return Status::Ok();
  }));
  return *pd;
}

// A per-channel operand ([N or 1, C, 1, 1]) over an nhwc [N, C, H, W] tensor (squeeze-excite
// scales, per-channel biases): rows of C values, each combined with its batch's channel
// row, in a native loop (f32, or bf16 for Add, Sub and Mul). oneDNN 2.6's jit:uni binary did
// this at about 20 GB/s (EfficientNet-B0's 16 squeeze-excite Muls: 0.69 ms of 7.3 ms on a
// 2-core Zen 5). In bf16 the native loop takes EfficientNet-B0 b8's 13 squeeze-excite Muls
// (those left unfused at batch 8) from 0.63-0.65 to 0.40-0.41 ms per run on 2 Zen 5 cores.
bool ChannelRows(const Node& node, DataType type, const TensorRef& full, const TensorRef& channel, void* out,
                 int threads) {
  if (full.shape.size() != 4 || channel.shape.size() > 4) return false;
  const memory::dims c = Padded(channel.shape, 4);
  const int64_t n = full.shape[0], ch = full.shape[1], pixels = full.shape[2] * full.shape[3];
  if (c[1] != ch || c[2] != 1 || c[3] != 1 || (c[0] != 1 && c[0] != n)) return false;
  native::BinaryOp op;
  if (!native::ParseBinary(node.op_type, &op)) return false;
  const bool bf16 = type == DataType::kBfloat16;
  if (bf16 && op != native::BinaryOp::kAdd && op != native::BinaryOp::kSub && op != native::BinaryOp::kMul) {
    return false;
  }
  const int64_t batch_step = c[0] == 1 ? 0 : ch;
  native::ParallelFor(n * pixels, threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(ch, 1)),
                      [&](int64_t begin, int64_t end) {
                        while (begin < end) {
                          const int64_t b = begin / pixels, stop = std::min(end, (b + 1) * pixels);
                          if (bf16) {
                            native::ApplyBinaryRowsBf16(op, full.as<uint16_t>() + begin * ch,
                                                        channel.as<uint16_t>() + b * batch_step,
                                                        static_cast<uint16_t*>(out) + begin * ch, stop - begin, ch);
                          } else {
                            native::ApplyBinaryRows(op, full.as<float>() + begin * ch,
                                                    channel.as<float>() + b * batch_step,
                                                    static_cast<float*>(out) + begin * ch, stop - begin, ch);
                          }
                          begin = stop;
                        }
                      });
  return true;
}

struct BinEntry {
  std::optional<BinPd> pd;
  dnnl::primitive prim;
  ArgsKey args_key;
};

class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(const Node& node, std::string layout, DataType type)
      : node_(node), layout_(std::move(layout)), type_(type) {}

  Result<std::vector<std::vector<int64_t>>> OutputShapes(const std::vector<const TensorRef*>& in) const override {
    if (in.size() < 2 || !in[0] || !in[1]) return ops::NodeError(node_, "two inputs are required");
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> out, ops::BroadcastShapes(node_, {in[0]->shape, in[1]->shape}));
    return std::vector<std::vector<int64_t>>{out};
  }

  Status Run(const KernelIO& io) const override {
    ThreadScope threads(io.threads);
    const TensorRef* a = io.inputs[0];
    const TensorRef* b = io.inputs[1];
    if (!a || !b || a->dtype != type_ || b->dtype != type_) {
      return ops::NodeError(node_, std::string("inputs must be ") + DataTypeName(type_));
    }
    return Guard(node_, "binary", [&]() -> Status {
      SY_ASSIGN_OR_RETURN(bool swap, Swapped(node_, a->shape, b->shape));
      const TensorRef* s0 = swap ? b : a;
      const TensorRef* s1 = swap ? a : b;
      const std::string layout = s0->shape.size() == 4 ? layout_ : "";
      if (layout == "nhwc" && ChannelRows(node_, type_, *s0, *s1, io.outputs[0]->data, io.threads)) {
        return Status::Ok();
      }
      SY_ASSIGN_OR_RETURN(auto e, cache_.Get(ShapeKey({a, b}), [&]() -> Result<std::shared_ptr<const BinEntry>> {
        auto e = std::make_shared<BinEntry>();
        SY_ASSIGN_OR_RETURN(Dt dt, ToDnnl(type_));
        SY_ASSIGN_OR_RETURN(BinPd pd, MakePd(node_, s0->shape, s1->shape, layout, dt));
        e->pd.emplace(pd);
        e->prim = dnnl::binary(pd);
        return std::shared_ptr<const BinEntry>(std::move(e));
      }));
      ExecArgs(e->args_key)
          .Add(DNNL_ARG_SRC_0, e->pd->src_desc(0), s0->data)
          .Add(DNNL_ARG_SRC_1, e->pd->src_desc(1), s1->data)
          .Add(DNNL_ARG_DST, e->pd->dst_desc(), io.outputs[0]->data)
          .Run(e->prim, &*e->pd);
      return Status::Ok();
    });
  }

 private:
  const Node node_;
  const std::string layout_;
  const DataType type_;
  ShapeCache<BinEntry> cache_;
};

// The layout for this node: the route's activation layout for 4-D operands when the
// primitive exists in it, else plain.
Result<std::string> ChooseLayout(const Node& node, const KernelBuildContext& ctx) {
  const auto a = Concretize(ctx.input_shapes[0], 8), b = Concretize(ctx.input_shapes[1], 8);
  SY_ASSIGN_OR_RETURN(bool swap, Swapped(node, a, b));
  const auto& full = swap ? b : a;
  const auto& other = swap ? a : b;
  std::string layout;
  if (full.size() == 4 && ctx.layout == "blocked") layout = DefaultBlockedLayout();
  if (full.size() == 4 && ctx.layout == "nhwc") layout = "nhwc";
  SY_ASSIGN_OR_RETURN(Dt dt, ToDnnl(ctx.input_dtypes[0]));
  if (!layout.empty() && MakePd(node, full, other, layout, dt).ok()) return layout;
  SY_RETURN_IF_ERROR(MakePd(node, full, other, "", dt).status());
  return std::string();
}

bool SupportsBinary(const Node& node, const KernelBuildContext& ctx) {
  const auto& d = ctx.input_dtypes;
  if (d.size() != 2 || d[0] != d[1] || (d[0] != DataType::kFloat && d[0] != DataType::kBfloat16)) return false;
  if (ctx.input_shapes[0].size() > 6 || ctx.input_shapes[1].size() > 6) return false;
  for (const auto& s : ctx.input_shapes) {
    for (int64_t v : s) {
      if (v < 0) return false;  // the broadcast roles must be known at build time
    }
  }
  return ChooseLayout(node, ctx).ok();
}

Status PrepareBinary(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  SY_ASSIGN_OR_RETURN(std::string layout, ChooseLayout(node, ctx));
  const auto& a = ctx.input_shapes[0];
  const auto& b = ctx.input_shapes[1];
  SY_ASSIGN_OR_RETURN(bool swap, Swapped(node, a, b));
  const auto& full = swap ? b : a;
  std::vector<std::string> in(2, "");
  const size_t rank = std::max<size_t>(full.size(), 1);
  in[swap ? 1 : 0] = layout;
  const auto& other = swap ? a : b;
  in[swap ? 0 : 1] = DeclaredLayout(Padded(full, rank), Padded(other, rank), other.size(), layout);
  spec.params["input_layouts"] = in;
  spec.params["output_layouts"] = {layout};
  spec.params["layout"] = layout;
  // A broadcast operand (a squeeze-excite scale): one thread under 512K bf16 elements or
  // 32K fp32 ones. oneDNN 2.6's bf16 broadcast binary gained nothing from a second thread:
  // EfficientNet-B0's eight [1,C,14|7,14|7] Muls took 0.132 ms on 2 Zen 5 threads, 0.049 on
  // one (on 2 Xeon threads, family 6 model 207: 0.074 either way). In fp32 the second
  // thread pays: the same eight Muls 0.184 ms on one Xeon thread, 0.100 on two ([1,672,14,14]
  // 37 -> 14 us; each thread presumably reads the half its own core's convolution wrote;
  // session 40, 3 alternations), and so do 16 on the 16-core Xeon with AMX ([1,672,14,14]
  // 70 -> 24 us, the model's steps 2.43 -> 2.24 ms). Same-shape operands keep every thread
  // (BERT-base's [128,768] Adds: 14 us on 2, 16-21 on one).
  if (a != b) {
    int64_t elements = 1;
    for (int64_t d : full) elements = d < 0 ? 0 : elements * d;
    const bool fp32 = ctx.input_dtypes[0] == DataType::kFloat;
    LimitThreadsToWork(elements, fp32 ? int64_t{1} << 14 : int64_t{1} << 18, ctx, spec);
  }
  if (!layout.empty()) {
    SY_ASSIGN_OR_RETURN(Tag tag, TagFor(layout, full.size()));
    SY_ASSIGN_OR_RETURN(Dt dt, ToDnnl(ctx.input_dtypes[0]));
    spec.params["output_bytes"] = {static_cast<int64_t>(memory::desc(Dims(full), dt, tag).get_size())};
  }
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateBinary(const StepView& view) {
  const DataType type = view.input_dtypes.empty() ? DataType::kFloat : view.input_dtypes[0];
  if (type != DataType::kFloat && type != DataType::kBfloat16) {
    return ops::NodeError(view.node, std::string("binary of ") + DataTypeName(type) + " is not supported");
  }
  return std::unique_ptr<Kernel>(new BinaryKernel(view.node, view.params.value("layout", ""), type));
}

}  // namespace

SY_REGISTER_CPU_IMPLS(OnednnBinary) {
  for (const char* op : {"Add", "Mul", "Sub"}) {
    reg.Register({"onednn", "", op, "", SupportsBinary, PrepareBinary, CreateBinary});
  }
}

}  // namespace switchyard::onednn
