#include "ir/shape_inference.h"

#include <unordered_map>

#include "ir/shape_values.h"
#include "reference/op_registry.h"

namespace switchyard {
namespace {

// Merges an inferred type into a declared one; errors on contradictions.
Result<TensorType> Merge(const Node& node, const Value& v, const TensorType& declared,
                         const TensorType& inferred) {
  TensorType out = inferred;
  if (declared.dtype != DataType::kUndefined && inferred.dtype != DataType::kUndefined &&
      declared.dtype != inferred.dtype) {
    return Status::Invalid(NodeLabel(node) + ": output '" + v.name + "' is declared " +
                           DataTypeName(declared.dtype) + " but the op produces " +
                           DataTypeName(inferred.dtype));
  }
  if (out.dtype == DataType::kUndefined) out.dtype = declared.dtype;
  if (!declared.has_shape) return out;
  if (!inferred.has_shape) {
    out.has_shape = true;
    out.dims = declared.dims;
    return out;
  }
  if (declared.dims.size() != inferred.dims.size()) {
    return Status::Invalid(NodeLabel(node) + ": output '" + v.name + "' is declared with rank " +
                           std::to_string(declared.dims.size()) + " (" + declared.ToString() +
                           ") but the op produces rank " + std::to_string(inferred.dims.size()) +
                           " (" + inferred.ToString() + ")");
  }
  for (size_t i = 0; i < declared.dims.size(); ++i) {
    const Dim& d = declared.dims[i];
    Dim& o = out.dims[i];
    if (d.is_static() && o.is_static() && d.value != o.value) {
      return Status::Invalid(NodeLabel(node) + ": output '" + v.name + "' is declared " +
                             declared.ToString() + " but the op produces " + inferred.ToString());
    }
    if (!o.is_static()) {
      if (d.is_static() || o.symbol.empty()) o = d;  // keep the declared name or size
    }
  }
  return out;
}

// Whether no output the schema sized statically exceeds `limit` elements. ConstantOfShape,
// Expand, Tile and friends turn a few input elements into an arbitrarily large output:
// folding one of those would allocate it (a 200-byte model asking for terabytes) just to
// propagate values, so such nodes are left unfolded.
bool SmallOutputs(const std::vector<TensorType>& types, int64_t limit) {
  for (const TensorType& t : types) {
    std::vector<int64_t> dims;
    for (const Dim& d : t.dims) {
      if (d.is_static()) dims.push_back(d.value);
    }
    if (!CheckedNumElements(dims, limit).ok()) return false;
  }
  return true;
}

}  // namespace

Status InferShapes(Graph& graph, const ShapeInferenceOptions& options) {
  const OpRegistry& reg = OpRegistry::Global();
  // Values known on the side: graph constants plus small folded results.
  std::unordered_map<ValueId, Tensor> folded;
  ShapeValues shape_values;
  const ShapeValues::KnownFn known = [&](ValueId id) -> const Tensor* {
    if (const Tensor* c = graph.Constant(id)) return c;
    auto it = folded.find(id);
    return it == folded.end() ? nullptr : &it->second;
  };
  for (Node& node : graph.nodes) {
    const OpSchema* schema = reg.Find(node.domain, node.op_type, graph.Opset(node.domain));
    if (!schema) {
      if (options.allow_unsupported) continue;
      return Status::Unsupported(NodeLabel(node) + ": no implementation of " + node.op_type +
                                 " at opset " + std::to_string(graph.Opset(node.domain)));
    }
    node.since_version = schema->since_version;
    const int n_in = static_cast<int>(node.NumInputs());
    if (n_in < schema->min_inputs || (schema->max_inputs >= 0 && n_in > schema->max_inputs)) {
      return Status::Invalid(NodeLabel(node) + ": has " + std::to_string(n_in) +
                             " inputs, expected " + std::to_string(schema->min_inputs) +
                             (schema->max_inputs < 0 ? " or more"
                                                     : " to " + std::to_string(schema->max_inputs)));
    }
    const int n_out = static_cast<int>(node.outputs.size());
    if (n_out < schema->min_outputs || (schema->max_outputs >= 0 && n_out > schema->max_outputs)) {
      return Status::Invalid(NodeLabel(node) + ": has " + std::to_string(n_out) +
                             " outputs, expected " + std::to_string(schema->min_outputs) +
                             (schema->max_outputs < 0 ? " or more"
                                                      : " to " + std::to_string(schema->max_outputs)));
    }
    InferContext ctx{node, graph.Opset(node.domain), {}, {}};
    bool all_known = true;
    int64_t in_elems = 0;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) {
        ctx.inputs.push_back(nullptr);
        ctx.constants.push_back(nullptr);
        continue;
      }
      ctx.inputs.push_back(&graph.value(in).type);
      const Tensor* k = known(in);
      ctx.constants.push_back(k);
      if (!k) all_known = false; else in_elems += k->numel();
    }
    auto inferred = schema->infer(ctx);
    if (!inferred.ok()) return inferred.status();
    std::vector<TensorType> types = std::move(inferred).value();
    shape_values.Refine(node, graph, known, types);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const ValueId o = node.outputs[i];
      if (o == kNoValue) continue;
      Value& v = graph.value(o);
      const TensorType t = i < types.size() ? types[i] : TensorType{};
      auto merged = Merge(node, v, v.type, t);
      if (!merged.ok()) return merged.status();
      v.type = std::move(merged).value();
    }
    shape_values.Propagate(node, graph, known);
    // Data propagation: Shape of a statically shaped tensor, or small all-known inputs.
    if (node.op_type == "Shape" && node.domain.empty() && ctx.inputs[0] &&
        ctx.inputs[0]->is_static()) {
      std::vector<int64_t> s = ctx.inputs[0]->StaticShape();
      int64_t r = static_cast<int64_t>(s.size());
      int64_t start = node.GetInt("start", 0), end = node.GetInt("end", r);
      if (start < 0) start += r;
      if (end < 0) end += r;
      start = std::clamp<int64_t>(start, 0, r);
      end = std::clamp<int64_t>(end, start, r);
      std::vector<int64_t> part(s.begin() + start, s.begin() + end);
      folded[node.outputs[0]] = Tensor::FromInt64(part, {static_cast<int64_t>(part.size())});
    } else if (all_known && schema->deterministic && in_elems <= options.max_fold_elements &&
               SmallOutputs(types, options.max_fold_elements)) {
      KernelContext kctx{node, ctx.opset, {}};
      for (ValueId in : node.inputs) kctx.inputs.push_back(in == kNoValue ? nullptr : known(in));
      auto outs = schema->run(kctx);
      if (!outs.ok()) return outs.status();
      for (size_t i = 0; i < node.outputs.size() && i < outs->size(); ++i) {
        if (node.outputs[i] == kNoValue) continue;
        Tensor& t = (*outs)[i];
        if (t.numel() > options.max_fold_elements) continue;
        Value& v = graph.value(node.outputs[i]);
        // The value is exact: its type is too.
        if (v.type.dtype == DataType::kUndefined || v.type.dtype == t.dtype()) {
          v.type = TensorType::FromShape(t.dtype(), t.shape());
        }
        folded[node.outputs[i]] = std::move(t);
      }
    }
  }
  return Status::Ok();
}

}  // namespace switchyard
