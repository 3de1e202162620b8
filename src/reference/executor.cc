#include "reference/executor.h"

#include <unordered_map>

namespace switchyard {

Status ValidateInputs(const Graph& graph, const TensorMap& inputs) {
  std::string names;
  for (ValueId id : graph.inputs) names += (names.empty() ? "" : ", ") + graph.value(id).name;
  for (const auto& [name, t] : inputs) {
    const ValueId id = graph.FindValue(name);
    bool is_input = false;
    for (ValueId in : graph.inputs) is_input |= (in == id);
    if (!is_input) {
      return Status::NotFound("the model has no input named '" + name + "'; its inputs are: " +
                              (names.empty() ? "(none)" : names));
    }
  }
  std::unordered_map<std::string, int64_t> symbols;
  for (ValueId id : graph.inputs) {
    const Value& v = graph.value(id);
    auto it = inputs.find(v.name);
    if (it == inputs.end()) {
      return Status::NotFound("input '" + v.name + "' (" + v.type.ToString() +
                              ") was not given");
    }
    const Tensor& t = it->second;
    const std::string where = "input '" + v.name + "'";
    if (v.type.dtype != DataType::kUndefined && t.dtype() != v.type.dtype) {
      return Status::Invalid(where + " must be " + DataTypeName(v.type.dtype) + " but " +
                             DataTypeName(t.dtype()) + " was given");
    }
    if (!v.type.has_shape) continue;
    if (t.rank() != v.type.rank()) {
      return Status::Invalid(where + " must have shape " + v.type.ToString() + " (rank " +
                             std::to_string(v.type.rank()) + ") but " +
                             ShapeToString(t.shape()) + " was given");
    }
    for (size_t i = 0; i < v.type.dims.size(); ++i) {
      const Dim& d = v.type.dims[i];
      const int64_t got = t.shape()[i];
      if (d.is_static() && d.value != got) {
        return Status::Invalid(where + " must have shape " + v.type.ToString() + " but " +
                               ShapeToString(t.shape()) + " was given (dimension " +
                               std::to_string(i) + ")");
      }
      if (!d.is_static() && !d.symbol.empty()) {
        auto [s, inserted] = symbols.emplace(d.symbol, got);
        if (!inserted && s->second != got) {
          return Status::Invalid(where + ": dimension '" + d.symbol + "' is " +
                                 std::to_string(got) + " here but " + std::to_string(s->second) +
                                 " in another input");
        }
      }
    }
  }
  return Status::Ok();
}

Result<ReferenceExecutor> ReferenceExecutor::Create(const Graph& graph) {
  ReferenceExecutor ex(graph);
  const OpRegistry& reg = OpRegistry::Global();
  std::string missing;
  for (const Node& n : graph.nodes) {
    const OpSchema* s = reg.Find(n.domain, n.op_type, graph.Opset(n.domain));
    if (!s) missing += (missing.empty() ? "" : ", ") + NodeLabel(n);
    ex.schemas_.push_back(s);
  }
  if (!missing.empty()) {
    return Status::Unsupported("the reference executor has no kernel for: " + missing);
  }
  ex.last_use_.assign(graph.values.size(), -1);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (ValueId in : graph.nodes[i].inputs) {
      if (in != kNoValue) ex.last_use_[static_cast<size_t>(in)] = static_cast<int>(i);
    }
  }
  for (ValueId o : graph.outputs) ex.last_use_[static_cast<size_t>(o)] = INT32_MAX;
  return ex;
}

Result<TensorMap> ReferenceExecutor::Run(const TensorMap& inputs,
                                         const ReferenceRunOptions& options) const {
  const Graph& g = *graph_;
  SY_RETURN_IF_ERROR(ValidateInputs(g, inputs));
  std::vector<Tensor> slots(g.values.size());
  std::vector<bool> ready(g.values.size(), false);
  for (ValueId id : g.inputs) {
    slots[static_cast<size_t>(id)] = inputs.at(g.value(id).name);
    ready[static_cast<size_t>(id)] = true;
  }
  TensorMap out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    KernelContext ctx{node, g.Opset(node.domain), {}};
    for (ValueId in : node.inputs) {
      if (in == kNoValue) {
        ctx.inputs.push_back(nullptr);
      } else if (const Tensor* c = g.Constant(in)) {
        ctx.inputs.push_back(c);
      } else if (ready[static_cast<size_t>(in)]) {
        ctx.inputs.push_back(&slots[static_cast<size_t>(in)]);
      } else {
        return Status::Internal(NodeLabel(node) + ": input '" + g.value(in).name +
                                "' has not been computed");
      }
    }
    auto result = schemas_[i]->run(ctx);
    if (!result.ok()) return result.status();
    std::vector<Tensor>& outs = result.value();
    size_t needed = node.outputs.size();
    while (needed > 0 && node.outputs[needed - 1] == kNoValue) --needed;
    if (outs.size() < needed) {
      return Status::Internal(NodeLabel(node) + ": kernel returned " +
                              std::to_string(outs.size()) + " outputs, expected " +
                              std::to_string(needed));
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const ValueId o = node.outputs[k];
      if (o == kNoValue) continue;
      slots[static_cast<size_t>(o)] = std::move(outs[k]);
      ready[static_cast<size_t>(o)] = true;
      if (options.keep_intermediates) out[g.value(o).name] = slots[static_cast<size_t>(o)];
    }
    // Free values whose last reader was this node.
    for (ValueId in : node.inputs) {
      if (in != kNoValue && last_use_[static_cast<size_t>(in)] == static_cast<int>(i) &&
          !options.keep_intermediates) {
        slots[static_cast<size_t>(in)] = Tensor();
      }
    }
  }
  for (ValueId o : g.outputs) {
    const std::string& name = g.value(o).name;
    if (const Tensor* c = g.Constant(o)) {
      out[name] = *c;
    } else if (ready[static_cast<size_t>(o)]) {
      out[name] = slots[static_cast<size_t>(o)];
    } else {
      return Status::Internal("graph output '" + name + "' was never computed");
    }
  }
  return out;
}

}  // namespace switchyard
