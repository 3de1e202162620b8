// oneDNN switchyard.Reorder: moves a float32 (or bfloat16) tensor between layouts
// ("" plain, "nhwc", "nChw16c", ...). Identity on values; the builder inserts it where a
// producer's layout differs from what a consumer wants.
#include <cstring>

#include "backends/cpu/onednn/common.h"
#include "reference/ops/common.h"

namespace switchyard::onednn {
namespace {

struct ReorderEntry {
  memory::desc src, dst;
  dnnl::reorder prim;
  ArgsKey args_key;
};

class ReorderKernel final : public Kernel {
 public:
  ReorderKernel(const Node& node, std::string from, std::string to, Dt dt)
      : node_(node), from_(std::move(from)), to_(std::move(to)), dt_(dt) {}

  Result<std::vector<std::vector<int64_t>>> OutputShapes(
      const std::vector<const TensorRef*>& inputs) const override {
    if (inputs.empty() || !inputs[0]) return ops::NodeError(node_, "X is required");
    return std::vector<std::vector<int64_t>>{inputs[0]->shape};
  }

  Status Run(const KernelIO& io) const override {
    ThreadScope threads(io.threads);
    const TensorRef* x = io.inputs[0];
    return Guard(node_, "reorder", [&]() -> Status {
      auto made = cache_.Get(x->shape, [&]() -> Result<std::shared_ptr<const ReorderEntry>> {
        auto e = std::make_shared<ReorderEntry>();
        SY_ASSIGN_OR_RETURN(Tag ft, TagFor(from_, x->shape.size()));
        SY_ASSIGN_OR_RETURN(Tag tt, TagFor(to_, x->shape.size()));
        e->src = memory::desc(Dims(x->shape), dt_, ft);
        e->dst = memory::desc(Dims(x->shape), dt_, tt);
        e->prim = dnnl::reorder(dnnl::reorder::primitive_desc(CpuEngine(), e->src, CpuEngine(), e->dst));
        return std::shared_ptr<const ReorderEntry>(std::move(e));
      });
      if (!made.ok()) return made.status();
      const auto& e = made.value();
      // A byte-identical reorder the builder planned as a view shares its input's bytes.
      if (io.outputs[0]->data == x->data) return Status::Ok();
      ExecArgs(e->args_key).Add(DNNL_ARG_FROM, e->src, x->data).Add(DNNL_ARG_TO, e->dst, io.outputs[0]->data).Run(e->prim);
      return Status::Ok();
    });
  }

 private:
  const Node node_;
  const std::string from_, to_;
  const Dt dt_;
  ShapeCache<ReorderEntry> cache_;
};

bool SupportsReorder(const Node& node, const KernelBuildContext& ctx) {
  if (ctx.input_dtypes.empty()) return false;
  const DataType d = ctx.input_dtypes[0];
  if (d != DataType::kFloat && d != DataType::kBfloat16) return false;
  const size_t rank = ctx.input_shapes[0].size();
  return TagFor(node.GetString("from", ""), rank).ok() && TagFor(node.GetString("to", ""), rank).ok();
}

Status PrepareReorder(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  const std::string from = node.GetString("from", ""), to = node.GetString("to", "");
  const auto& shape = ctx.input_shapes[0];
  SY_ASSIGN_OR_RETURN(Tag tt, TagFor(to, shape.size()));
  SY_RETURN_IF_ERROR(TagFor(from, shape.size()).status());
  spec.params["input_layouts"] = {from};
  spec.params["output_layouts"] = {to};
  bool is_static = true;
  for (int64_t d : shape) is_static = is_static && d >= 0;
  if (is_static) {
    SY_ASSIGN_OR_RETURN(Tag ft, TagFor(from, shape.size()));
    SY_ASSIGN_OR_RETURN(Dt dt, ToDnnl(ctx.input_dtypes[0]));
    const memory::desc src(Dims(shape), dt, ft), dst(Dims(shape), dt, tt);
    if (!to.empty()) spec.params["output_bytes"] = {static_cast<int64_t>(dst.get_size())};
    // nchw <-> nhwc of a [N,C,1,1] squeeze-excite tensor, say: the same bytes, so the
    // output may share the input's (the memory plan joins them; Run then moves nothing).
    if (SameBytes(src, dst)) spec.params["view"] = true;
  }
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateReorder(const StepView& view) {
  SY_ASSIGN_OR_RETURN(Dt dt, ToDnnl(view.input_dtypes.at(0)));
  return std::unique_ptr<Kernel>(new ReorderKernel(view.node, view.node.GetString("from", ""),
                                                   view.node.GetString("to", ""), dt));
}

}  // namespace

SY_REGISTER_CPU_IMPLS(OnednnReorder) {
  reg.Register({"onednn", "switchyard", "Reorder", "", SupportsReorder, PrepareReorder, CreateReorder});
}

}  // namespace switchyard::onednn
