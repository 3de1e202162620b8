// Pass constant_folding (always on): evaluates every deterministic node whose inputs are
// all constants with its reference kernel, whatever the size, and turns shape queries
// on statically known dimensions into constants (Shape of a static tensor, Size, and
// Gather(Shape(x), const) on static dims) so shape subgraphs vanish when shapes are fixed.
#include <algorithm>

#include "passes/pass.h"
#include "passes/pattern.h"
#include "reference/op_registry.h"

namespace switchyard::passes {
namespace {

// Static dims [start, end) of Shape(x) (attributes of Shape-15), when all are static.
bool StaticShapeSlice(const Node& node, const TensorType& t, std::vector<int64_t>* out) {
  if (!t.has_shape) return false;
  const int64_t r = t.rank();
  int64_t start = node.GetInt("start", 0), end = node.GetInt("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  out->clear();
  for (int64_t i = start; i < end; ++i) {
    if (!t.dims[static_cast<size_t>(i)].is_static()) return false;
    out->push_back(t.dims[static_cast<size_t>(i)].value);
  }
  return true;
}

// Gather(Shape(x), indices) where every indexed dim of x is static.
bool GatherOfStaticDims(const Graph& g, const Node& node, Tensor* out) {
  if (!IsOp(node, "Gather") || node.GetInt("axis", 0) != 0 || node.inputs.size() != 2) return false;
  const NodeId p = g.value(node.inputs[0]).producer;
  const Tensor* idx = g.Constant(node.inputs[1]);
  if (p < 0 || !idx || !IsIntegerType(idx->dtype())) return false;
  const Node& shape = g.nodes[static_cast<size_t>(p)];
  if (!IsOp(shape, "Shape") || shape.Has("start") || shape.Has("end")) return false;
  const TensorType& t = g.value(shape.inputs[0]).type;
  if (!t.has_shape) return false;
  const int64_t r = t.rank();
  std::vector<int64_t> vals;
  for (int64_t i : idx->ToInt64Vector()) {
    if (i < 0) i += r;
    if (i < 0 || i >= r || !t.dims[static_cast<size_t>(i)].is_static()) return false;
    vals.push_back(t.dims[static_cast<size_t>(i)].value);
  }
  *out = Tensor::FromInt64(vals, idx->shape());
  return true;
}

Status FoldConstants(Graph& g, PassContext& ctx) {
  const OpRegistry& reg = OpRegistry::Global();
  std::vector<char> removed(g.nodes.size(), 0);
  int folded = 0;
  // One forward walk: constants created for a node are visible to the nodes after it.
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    std::vector<std::pair<ValueId, Tensor>> results;
    std::vector<int64_t> dims;
    Tensor gathered;
    if (IsOp(node, "Shape") && StaticShapeSlice(node, g.value(node.inputs[0]).type, &dims)) {
      results.emplace_back(node.outputs[0], Tensor::FromInt64(dims, {static_cast<int64_t>(dims.size())}));
    } else if (IsOp(node, "Size") && g.value(node.inputs[0]).type.is_static()) {
      int64_t n = 1;
      for (int64_t d : g.value(node.inputs[0]).type.StaticShape()) n *= d;
      results.emplace_back(node.outputs[0], Tensor::FromInt64({n}, {}));
    } else if (GatherOfStaticDims(g, node, &gathered)) {
      results.emplace_back(node.outputs[0], std::move(gathered));
    } else {
      // Nodes with subgraphs (If, Loop, Scan) may read outer-scope values that are not
      // explicit inputs: never folded.
      bool all_const = true;
      for (const auto& [name, attr] : node.attrs) {
        all_const &= attr.kind != Attribute::Kind::kGraph && attr.kind != Attribute::Kind::kGraphs;
      }
      for (ValueId in : node.inputs) all_const &= (in == kNoValue || g.IsConstant(in));
      if (!all_const) continue;
      const OpSchema* schema = reg.Find(node.domain, node.op_type, g.Opset(node.domain));
      if (!schema || !schema->deterministic) continue;
      KernelContext kctx{node, g.Opset(node.domain), {}};
      for (ValueId in : node.inputs) kctx.inputs.push_back(in == kNoValue ? nullptr : g.Constant(in));
      auto outs = schema->run(kctx);
      if (!outs.ok()) return outs.status();
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        if (node.outputs[k] == kNoValue) continue;
        if (k >= outs->size()) return Status::Internal(NodeLabel(node) + ": missing output when folding");
        results.emplace_back(node.outputs[k], std::move((*outs)[k]));
      }
    }
    for (auto& [v, t] : results) {
      g.value(v).type = TensorType::FromShape(t.dtype(), t.shape());
      g.value(v).producer = -1;
      g.constants[v] = std::move(t);
    }
    removed[i] = 1;
    ++folded;
  }
  if (folded == 0) return Status::Ok();
  std::vector<Node> kept;
  kept.reserve(g.nodes.size() - static_cast<size_t>(folded));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!removed[i]) kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
  g.RebuildProducers();
  ctx.report.fired["constant_folding"] += folded;
  return Status::Ok();
}

}  // namespace

Status RunConstantFolding(Graph& graph, PassContext& ctx) { return FoldConstants(graph, ctx); }

}  // namespace switchyard::passes
