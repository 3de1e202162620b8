// Pass fuse_gelu (knob fuse.gelu): the exported GELU subgraphs become switchyard.Gelu:
//   erf form:  x * (1 + erf(x / sqrt 2)) * 0.5   (x * 1/sqrt 2 also accepted)
//   tanh form: x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) * 0.5   (x^3 as Pow or Muls)
// with the final "* 0.5" in any of the three places exporters put it. Constants must
// match to fp32 precision; every intermediate must have one consumer.
#include <cmath>

#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

constexpr double kTol = 1e-6;

// The other operand of binary node `n` if `v` is one operand and the other is a constant
// scalar close to `want`.
bool BinaryWithScalar(const Graph& g, const Node& n, const char* op, ValueId v, double want) {
  return IsOp(n, op) && OtherInput(n, v) != kNoValue && ConstantScalarIs(g, OtherInput(n, v), want, kTol);
}

// From `act` (erf / tanh output), matches (1 + act) * x * 0.5 in its three orders.
// Appends the matched nodes; returns the output value or kNoValue.
ValueId MatchTail(const Rewriter& rw, ValueId act, ValueId x, std::vector<NodeId>* nodes) {
  const Graph& g = rw.graph();
  const NodeId a1 = rw.SoleConsumer(act);
  if (a1 < 0 || !BinaryWithScalar(g, rw.node(a1), "Add", act, 1.0)) return kNoValue;
  const ValueId one_plus = rw.node(a1).outputs[0];
  const NodeId m1 = rw.SoleConsumer(one_plus);
  if (m1 < 0 || !IsOp(rw.node(m1), "Mul")) return kNoValue;
  const ValueId p = OtherInput(rw.node(m1), one_plus);
  const ValueId m1_out = rw.node(m1).outputs[0];
  nodes->insert(nodes->end(), {a1, m1});
  if (p == x) {  // (x * (1 + act)) * 0.5
    const NodeId m2 = rw.SoleConsumer(m1_out);
    if (m2 < 0 || !BinaryWithScalar(g, rw.node(m2), "Mul", m1_out, 0.5)) return kNoValue;
    nodes->push_back(m2);
    return rw.node(m2).outputs[0];
  }
  if (ConstantScalarIs(g, p, 0.5)) {  // x * ((1 + act) * 0.5)
    const NodeId m2 = rw.SoleConsumer(m1_out);
    if (m2 < 0 || !IsOp(rw.node(m2), "Mul") || OtherInput(rw.node(m2), m1_out) != x) return kNoValue;
    nodes->push_back(m2);
    return rw.node(m2).outputs[0];
  }
  const NodeId h = rw.Producer(p);  // (x * 0.5) * (1 + act)
  if (h >= 0 && rw.SoleConsumer(p) == m1 && BinaryWithScalar(g, rw.node(h), "Mul", x, 0.5)) {
    nodes->insert(nodes->begin(), h);
    return m1_out;
  }
  return kNoValue;
}

// erf(x / sqrt 2): returns x.
ValueId MatchErfInput(const Rewriter& rw, const Node& erf, std::vector<NodeId>* nodes) {
  const Graph& g = rw.graph();
  const ValueId in = erf.inputs[0];
  const NodeId d = rw.Producer(in);
  if (d < 0 || rw.SoleConsumer(in) < 0) return kNoValue;
  const Node& dn = rw.node(d);
  if (dn.inputs.size() != 2) return kNoValue;
  const ValueId x = dn.inputs[0];
  const bool ok = (IsOp(dn, "Div") && ConstantScalarIs(g, dn.inputs[1], std::sqrt(2.0), 1e-5)) ||
                  (IsOp(dn, "Mul") && ConstantScalarIs(g, dn.inputs[1], std::sqrt(0.5), 1e-6));
  if (!ok) return kNoValue;
  nodes->push_back(d);
  return x;
}

// sqrt(2/pi) * (x + 0.044715 * x^3): returns x.
ValueId MatchTanhInput(const Rewriter& rw, const Node& tanh, std::vector<NodeId>* nodes) {
  const Graph& g = rw.graph();
  const ValueId in = tanh.inputs[0];
  const NodeId s = rw.Producer(in);
  if (s < 0 || rw.SoleConsumer(in) < 0 || !IsOp(rw.node(s), "Mul")) return kNoValue;
  const Node& sn = rw.node(s);
  const double k = std::sqrt(2.0 / M_PI);
  ValueId inner = kNoValue;
  if (ConstantScalarIs(g, sn.inputs[0], k, 1e-6)) inner = sn.inputs[1];
  else if (ConstantScalarIs(g, sn.inputs[1], k, 1e-6)) inner = sn.inputs[0];
  const NodeId add = rw.Producer(inner);
  if (add < 0 || rw.SoleConsumer(inner) != s || !IsOp(rw.node(add), "Add")) return kNoValue;
  // One Add operand is 0.044715 * cube, the other is x.
  for (int side = 0; side < 2; ++side) {
    const ValueId kc = rw.node(add).inputs[static_cast<size_t>(side)];
    const ValueId x = rw.node(add).inputs[static_cast<size_t>(1 - side)];
    const NodeId cm = rw.Producer(kc);
    if (cm < 0 || rw.SoleConsumer(kc) != add || !IsOp(rw.node(cm), "Mul")) continue;
    const Node& cn = rw.node(cm);
    ValueId cube = kNoValue;
    if (ConstantScalarIs(g, cn.inputs[0], 0.044715, 1e-7)) cube = cn.inputs[1];
    else if (ConstantScalarIs(g, cn.inputs[1], 0.044715, 1e-7)) cube = cn.inputs[0];
    const NodeId c1 = rw.Producer(cube);
    if (c1 < 0 || rw.SoleConsumer(cube) != cm) continue;
    const Node& c1n = rw.node(c1);
    std::vector<NodeId> cube_nodes = {c1};
    if (IsOp(c1n, "Pow")) {
      if (c1n.inputs[0] != x || !ConstantScalarIs(g, c1n.inputs[1], 3.0)) continue;
    } else if (IsOp(c1n, "Mul")) {  // x * (x * x) or (x * x) * x
      const ValueId sq = OtherInput(c1n, x);
      const NodeId c0 = rw.Producer(sq);
      if (sq == kNoValue || c0 < 0 || rw.SoleConsumer(sq) != c1) continue;
      const Node& c0n = rw.node(c0);
      if (!IsOp(c0n, "Mul") || c0n.inputs[0] != x || c0n.inputs[1] != x) continue;
      cube_nodes.insert(cube_nodes.begin(), c0);
    } else {
      continue;
    }
    nodes->insert(nodes->end(), cube_nodes.begin(), cube_nodes.end());
    nodes->insert(nodes->end(), {cm, add, s});
    return x;
  }
  return kNoValue;
}

Status FuseGeluSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  for (NodeId ti = 0; ti < static_cast<NodeId>(g.nodes.size()); ++ti) {
    const Node& t = g.nodes[static_cast<size_t>(ti)];
    const bool erf = IsOp(t, "Erf");
    if (rw.Touched(ti) || (!erf && !IsOp(t, "Tanh")) || !IsFloatValue(g, t.outputs[0])) continue;
    std::vector<NodeId> nodes;
    const ValueId x = erf ? MatchErfInput(rw, t, &nodes) : MatchTanhInput(rw, t, &nodes);
    if (x == kNoValue) continue;
    nodes.push_back(ti);
    const ValueId out = MatchTail(rw, t.outputs[0], x, &nodes);
    if (out == kNoValue) continue;
    bool clean = true;
    for (NodeId n : nodes) clean &= !rw.Touched(n);
    if (!clean) continue;
    // The node producing `out` is the last in graph order among the matched ones.
    NodeId last = nodes[0];
    for (NodeId n : nodes) last = std::max(last, n);
    Node gelu = MakeNode("Gelu", kSwitchyardDomain, t.name, {x}, {out});
    SetString(gelu, "approximate", erf ? "none" : "tanh");
    for (NodeId n : nodes) {
      if (n != last) rw.Remove(n);
    }
    rw.Replace(last, std::move(gelu));
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

Status RunFuseGelu(Graph& graph, PassContext& ctx) {
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, FuseGeluSweep));
  if (n) ctx.report.fired["fuse.gelu"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
