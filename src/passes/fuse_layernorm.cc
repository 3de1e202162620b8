// Pass fuse_layernorm (knob fuse.layernorm): the exported layer-norm subgraph
//   d = x - ReduceMean(x); y = d / Sqrt(ReduceMean(d^2) + eps) [* scale] [+ bias]
// (d^2 as Pow(d, 2) or Mul(d, d); ReduceMean axes a trailing range, by attribute or
// constant input) and ONNX LayerNormalization without its extra outputs become
// switchyard.LayerNorm. Scale and bias must be constants varying only along normalized
// dims; every intermediate must have no reader outside the pattern.
#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

// ReduceMean(keepdims=1) over a trailing range of axes of `in`; returns the first axis.
bool TrailingMean(const Rewriter& rw, const Node& n, ValueId in, int64_t* first) {
  if (!IsOp(n, "ReduceMean") || n.inputs.empty() || n.inputs[0] != in || n.GetInt("keepdims", 1) != 1) return false;
  std::vector<int64_t> axes = n.GetInts("axes");
  if (n.HasInput(1) && !ConstantInts(rw.graph(), n.inputs[1], &axes)) return false;
  const int64_t r = rw.graph().value(in).type.rank();
  if (r <= 0 || axes.empty()) return false;
  std::vector<char> seen(static_cast<size_t>(r), 0);
  for (int64_t a : axes) {
    if (a < 0) a += r;
    if (a < 0 || a >= r || seen[static_cast<size_t>(a)]) return false;
    seen[static_cast<size_t>(a)] = 1;
  }
  *first = r - static_cast<int64_t>(axes.size());
  for (int64_t a = *first; a < r; ++a) {
    if (!seen[static_cast<size_t>(a)]) return false;
  }
  return true;
}

// A constant that only varies along dims [axis, rank) of a rank-`rank` tensor.
bool AffineParam(const Graph& g, ValueId c, int64_t axis, int64_t rank, DataType dtype) {
  const Tensor* t = g.Constant(c);
  if (!t || t->dtype() != dtype || t->rank() > rank) return false;
  for (int64_t i = 0; i < t->rank(); ++i) {
    const int64_t dim_of_x = rank - t->rank() + i;
    if (dim_of_x < axis && t->dim(i) != 1) return false;
  }
  return true;
}

bool MatchDecomposed(Rewriter& rw, NodeId r1) {
  const Graph& g = rw.graph();
  const Node& mean = rw.node(r1);
  if (mean.inputs.empty()) return false;
  const ValueId x = mean.inputs[0];
  int64_t axis;
  if (!IsFloatValue(g, x) || !TrailingMean(rw, mean, x, &axis)) return false;
  const NodeId sub = rw.SoleConsumer(mean.outputs[0]);
  if (sub < 0 || !IsOp(rw.node(sub), "Sub") || rw.node(sub).inputs[0] != x) return false;
  const ValueId d = rw.node(sub).outputs[0];
  const std::vector<NodeId>& dc = rw.Consumers(d);
  if (rw.IsGraphOutput(d) || dc.size() < 2 || dc.size() > 3) return false;
  NodeId sq = -1, div = -1;
  for (NodeId c : dc) {
    const Node& n = rw.node(c);
    if (rw.Touched(c)) return false;
    if (IsOp(n, "Pow") && n.inputs[0] == d && ConstantScalarIs(g, n.inputs[1], 2.0)) sq = c;
    else if (IsOp(n, "Mul") && n.inputs[0] == d && n.inputs[1] == d) sq = c;
    else if (IsOp(n, "Div") && n.inputs[0] == d) div = c;
    else return false;
  }
  // Mul(d, d) lists the node twice: 2 or 3 readers, all accounted for.
  if (sq < 0 || div < 0 || dc.size() != (IsOp(rw.node(sq), "Mul") ? 3u : 2u)) return false;
  int64_t axis2;
  const NodeId r2 = rw.SoleConsumer(rw.node(sq).outputs[0]);
  if (r2 < 0 || !TrailingMean(rw, rw.node(r2), rw.node(sq).outputs[0], &axis2) || axis2 != axis) return false;
  const NodeId add = rw.SoleConsumer(rw.node(r2).outputs[0]);
  double eps;
  if (add < 0 || !IsOp(rw.node(add), "Add") ||
      !ConstantScalar(g, OtherInput(rw.node(add), rw.node(r2).outputs[0]), &eps)) {
    return false;
  }
  const NodeId sqrt = rw.SoleConsumer(rw.node(add).outputs[0]);
  if (sqrt < 0 || !IsOp(rw.node(sqrt), "Sqrt") || rw.SoleConsumer(rw.node(sqrt).outputs[0]) != div ||
      rw.node(div).inputs[1] != rw.node(sqrt).outputs[0]) {
    return false;
  }
  std::vector<NodeId> nodes = {r1, sub, sq, r2, add, sqrt, div};
  ValueId out = rw.node(div).outputs[0], scale = kNoValue, bias = kNoValue;
  const int64_t rank = g.value(x).type.rank();
  const DataType dt = g.value(x).type.dtype;
  if (const NodeId m = rw.SoleConsumer(out); m >= 0 && IsOp(rw.node(m), "Mul")) {
    const ValueId c = OtherInput(rw.node(m), out);
    if (c != kNoValue && AffineParam(g, c, axis, rank, dt)) {
      scale = c;
      nodes.push_back(m);
      out = rw.node(m).outputs[0];
    }
  }
  if (const NodeId a = rw.SoleConsumer(out); a >= 0 && IsOp(rw.node(a), "Add")) {
    const ValueId c = OtherInput(rw.node(a), out);
    if (c != kNoValue && AffineParam(g, c, axis, rank, dt)) {
      bias = c;
      nodes.push_back(a);
      out = rw.node(a).outputs[0];
    }
  }
  NodeId last = nodes[0];
  for (NodeId n : nodes) {
    if (rw.Touched(n)) return false;
    last = std::max(last, n);
  }
  Node ln = MakeNode("LayerNorm", kSwitchyardDomain, rw.node(r1).name, {x, scale, bias}, {out});
  while (ln.inputs.back() == kNoValue) ln.inputs.pop_back();
  SetInt(ln, "axis", axis);
  SetFloat(ln, "epsilon", static_cast<float>(eps));
  for (NodeId n : nodes) {
    if (n != last) rw.Remove(n);
  }
  rw.Replace(last, std::move(ln));
  rw.CountChange();
  return true;
}

// ONNX LayerNormalization (stash_type 1) whose Mean / InvStdDev outputs nobody reads.
bool MatchOnnx(Rewriter& rw, NodeId li) {
  const Node& n = rw.node(li);
  if (!IsOp(n, "LayerNormalization") || n.GetInt("stash_type", 1) != 1) return false;
  for (size_t k = 1; k < n.outputs.size(); ++k) {
    const ValueId o = n.outputs[k];
    if (o != kNoValue && (rw.IsGraphOutput(o) || !rw.Consumers(o).empty())) return false;
  }
  if (!IsFloatValue(rw.graph(), n.outputs[0])) return false;
  Node ln = MakeNode("LayerNorm", kSwitchyardDomain, n.name, n.inputs, {n.outputs[0]});
  SetInt(ln, "axis", n.GetInt("axis", -1));
  SetFloat(ln, "epsilon", n.GetFloat("epsilon", 1e-5f));
  rw.Replace(li, std::move(ln));
  rw.CountChange();
  return true;
}

Status FuseLayernormSweep(Rewriter& rw) {
  for (NodeId i = 0; i < static_cast<NodeId>(rw.graph().nodes.size()); ++i) {
    if (rw.Touched(i)) continue;
    if (!MatchDecomposed(rw, i)) MatchOnnx(rw, i);
  }
  return Status::Ok();
}

}  // namespace

Status RunFuseLayerNorm(Graph& graph, PassContext& ctx) {
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, FuseLayernormSweep));
  if (n) ctx.report.fired["fuse.layernorm"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
