#include "backends/cpu/single_op.h"

#include <algorithm>
#include <cstring>

#include "ir/shape_inference.h"
#include "reference/op_registry.h"
#include "runtime/device_backend.h"

namespace switchyard {
namespace {

// Copies a 4-D tensor's bytes between NCHW order and nhwc order (to_nhwc false: back).
void Relayout(const Tensor& t, void* dst, const void* src, bool to_nhwc) {
  const auto& s = t.shape();
  const int64_t n = s[0], c = s[1], hw = s[2] * s[3];
  const size_t es = DataTypeSize(t.dtype());
  const char* in = static_cast<const char*>(src);
  char* out = static_cast<char*>(dst);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ci = 0; ci < c; ++ci) {
      for (int64_t p = 0; p < hw; ++p) {
        const int64_t nchw = (b * c + ci) * hw + p, nhwc = (b * hw + p) * c + ci;
        std::memcpy(out + es * (to_nhwc ? nhwc : nchw), in + es * (to_nhwc ? nchw : nhwc), es);
      }
    }
  }
}

std::string Declared(const nlohmann::json& params, const char* key, size_t i) {
  if (!params.contains(key) || !params[key].is_array() || i >= params[key].size()) return "";
  return params[key][i].get<std::string>();
}

}  // namespace

Result<std::vector<Tensor>> RunSingleOp(const CpuOpImpl& impl, const Node& node_in, int64_t opset,
                                        const std::vector<const Tensor*>& inputs,
                                        const SingleOpOptions& options) {
  Graph g;
  g.opsets[""] = opset;
  g.opsets["switchyard"] = 1;
  Node node = node_in;
  if (node.name.empty()) node.name = node.op_type;
  node.inputs.clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    const Tensor& t = *inputs[i];
    const ValueId id = g.AddValue("in" + std::to_string(i), TensorType::FromShape(t.dtype(), t.shape()));
    const bool is_const = i < options.constant_inputs.size() && options.constant_inputs[i];
    if (is_const) g.constants.emplace(id, t); else g.inputs.push_back(id);
    node.inputs.push_back(id);
  }
  const size_t n_out = node_in.outputs.empty() ? 1 : node_in.outputs.size();
  node.outputs.clear();
  for (size_t i = 0; i < n_out; ++i) {
    const ValueId id = g.AddValue("out" + std::to_string(i));
    node.outputs.push_back(id);
    g.outputs.push_back(id);
  }
  g.nodes.push_back(node);
  g.RebuildProducers();
  SY_RETURN_IF_ERROR(InferShapes(g));
  const Node& n = g.nodes[0];

  SY_ASSIGN_OR_RETURN(const Target target, Target::ForName(options.target));
  const Route route;
  const RouteSpace space;
  KernelBuildContext ctx{g, target, route, space};
  ctx.precision = options.precision;
  ctx.quant_weights = options.quant_weights;
  ctx.variant = impl.variant;
  ctx.threads = options.threads;
  ctx.layout = options.layout;
  for (ValueId id : n.inputs) {
    if (id == kNoValue) {
      ctx.input_shapes.push_back({});
      ctx.input_dtypes.push_back(DataType::kUndefined);
      ctx.constants.push_back(nullptr);
      continue;
    }
    ctx.input_shapes.push_back(g.value(id).type.StaticShape());
    ctx.input_dtypes.push_back(g.value(id).type.dtype);
    ctx.constants.push_back(g.Constant(id));
    const bool nhwc_in = options.layout == "nhwc" && !options.plain_inputs && ctx.input_shapes.back().size() == 4 &&
                         !g.Constant(id);
    ctx.input_layouts.push_back(nhwc_in ? "nhwc" : "");
  }
  if (options.layout != "nchw" && options.layout != "nhwc") {
    return Status::Invalid("single op: layout '" + options.layout + "' (nchw|nhwc)");
  }
  if (!impl.supports(n, ctx)) {
    return Status::Unsupported(impl.provider + " " + impl.op_type +
                               (impl.variant.empty() ? "" : "/" + impl.variant) +
                               " does not support " + NodeLabel(n));
  }
  StepSpec spec;
  SY_RETURN_IF_ERROR(impl.prepare(n, ctx, spec));
  StepView view{n, spec.params, {}, ctx.input_shapes, {}, ctx.input_dtypes, {}, {}, {}};
  for (const Tensor& t : spec.packed) view.packed.push_back(&t);
  for (ValueId id : n.outputs) {
    view.output_shapes.push_back(g.value(id).type.StaticShape());
    view.output_dtypes.push_back(g.value(id).type.dtype);
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) view.input_layouts.push_back(Declared(spec.params, "input_layouts", i));
  for (size_t i = 0; i < n.outputs.size(); ++i) view.output_layouts.push_back(Declared(spec.params, "output_layouts", i));
  auto is_nhwc = [](const std::string& l, size_t rank) {
    return l == "nhwc" && rank == 4;
  };
  for (size_t i = 0; i < view.input_layouts.size(); ++i) {
    const std::string& l = view.input_layouts[i];
    if (!l.empty() && !(is_nhwc(l, ctx.input_shapes[i].size()))) {
      return Status::Unsupported("single op: input layout '" + l + "' is not run here");
    }
  }
  SY_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, impl.create(view));

  std::vector<TensorRef> in_refs(inputs.size());
  std::vector<Tensor> relaid(inputs.size());
  std::vector<const TensorRef*> in_ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool consumed = std::find(spec.consumed_inputs.begin(), spec.consumed_inputs.end(),
                                    static_cast<int>(i)) != spec.consumed_inputs.end();
    if (!inputs[i] || consumed) {
      in_ptrs.push_back(nullptr);
      continue;
    }
    void* data = const_cast<void*>(inputs[i]->raw());
    if (!view.input_layouts[i].empty()) {  // nhwc bytes of the NCHW tensor
      relaid[i] = Tensor(inputs[i]->dtype(), inputs[i]->shape());
      Relayout(*inputs[i], relaid[i].raw(), inputs[i]->raw(), true);
      data = relaid[i].raw();
    }
    in_refs[i] = TensorRef{inputs[i]->dtype(), inputs[i]->shape(), data, view.input_layouts[i]};
    in_ptrs.push_back(&in_refs[i]);
  }
  SY_ASSIGN_OR_RETURN(auto shapes, kernel->OutputShapes(in_ptrs));
  std::vector<Tensor> outs;
  std::vector<TensorRef> out_refs(n.outputs.size());
  KernelIO io;
  io.inputs = in_ptrs;
  io.threads = options.threads;
  outs.reserve(n.outputs.size());
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const DataType dt = g.value(n.outputs[i]).type.dtype;
    outs.emplace_back(dt, i < shapes.size() ? shapes[i] : std::vector<int64_t>{});
  }
  std::vector<Tensor> nhwc_outs(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string& l = view.output_layouts[i];
    void* data = outs[i].raw();
    if (!l.empty()) {
      if (!is_nhwc(l, outs[i].shape().size())) return Status::Unsupported("single op: output layout '" + l + "' is not run here");
      nhwc_outs[i] = Tensor(outs[i].dtype(), outs[i].shape());
      data = nhwc_outs[i].raw();
    }
    out_refs[i] = TensorRef{outs[i].dtype(), outs[i].shape(), data, l};
    io.outputs.push_back(&out_refs[i]);
  }
  if (target.name == "cpu") {
    SY_RETURN_IF_ERROR(kernel->Run(io));
  } else {
    const DeviceBackend* backend = FindDeviceBackend(target.name);
    if (!backend) return Status::Unsupported("no runtime for target '" + target.name + "'");
    SY_RETURN_IF_ERROR(backend->run_single(*kernel, io));
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (nhwc_outs[i].defined()) Relayout(outs[i], outs[i].raw(), nhwc_outs[i].raw(), false);
  }
  return outs;
}

}  // namespace switchyard
