// Pass fuse_elementwise (knob fuse.elementwise): maximal chains of floating-point
// elementwise ops, where each link feeds only the next, become one
// switchyard.FusedElementwise (attrs ops / operands / swap / params / param_offsets;
// see src/reference/ops/fused.cc). A chain needs at least two ops. Binary links take
// their other operand as an extra input (same dtype; it broadcasts against the chain).
#include <map>

#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

bool IsBinaryName(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" || op == "Max" ||
         op == "Min";
}

// The chain op name and params of a unary node, or false.
bool UnaryLink(const Rewriter& rw, const Node& n, std::string* name, std::vector<float>* params) {
  static const char* kPlain[] = {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Neg",
                                 "Abs", "Reciprocal", "HardSwish"};
  params->clear();
  if (n.inputs.size() != 1 && !IsOp(n, "Clip")) return false;
  if (n.domain.empty()) {
    for (const char* p : kPlain) {
      if (n.op_type == p) return *name = p, true;
    }
  }
  if (n.domain == kSwitchyardDomain && n.op_type == "Gelu") {
    if (n.GetString("approximate", "none") != "none") return false;
    return *name = "Gelu", true;
  }
  // Parameterised activations, read as the fused ops read them.
  if (IsOp(n, "LeakyRelu") || IsOp(n, "HardSigmoid") || IsOp(n, "Clip") || IsOp(n, "Gelu")) {
    ActivationMatch m;
    // The tanh form of GELU is an epilogue activation, not a chain step.
    if (!ActivationOf(rw.graph(), n, &m) || m.name == "GeluTanh") return false;
    *name = m.name;
    *params = m.params;
    return true;
  }
  return false;
}

struct Chain {
  std::vector<ValueId> inputs;  // input 0 is the chain's start
  std::vector<std::string> ops;
  std::vector<int64_t> operands, swap, offsets;
  std::vector<float> params;
  std::vector<NodeId> nodes;
  ValueId out = kNoValue;
};

// Adds node `ni` (reading chain value `v`) as the next link; false if it is not a link.
bool AddLink(const Rewriter& rw, NodeId ni, ValueId v, Chain* c) {
  const Graph& g = rw.graph();
  const Node& n = rw.node(ni);
  if (rw.Touched(ni) || n.outputs.size() != 1 || !IsFloatValue(g, n.outputs[0])) return false;
  const DataType dt = g.value(n.outputs[0]).type.dtype;
  std::string name;
  std::vector<float> params;
  if (n.domain.empty() && IsBinaryName(n.op_type) && n.inputs.size() == 2) {
    if (n.inputs[0] == n.inputs[1]) return false;  // x op x is not a chain link
    const bool swap = n.inputs[1] == v;
    const ValueId other = swap ? n.inputs[0] : n.inputs[1];
    if (g.value(other).type.dtype != dt || g.value(v).type.dtype != dt) return false;
    int64_t idx = -1;
    for (size_t i = 0; i < c->inputs.size(); ++i) {
      if (c->inputs[i] == other) idx = static_cast<int64_t>(i);
    }
    if (idx < 0) {
      idx = static_cast<int64_t>(c->inputs.size());
      c->inputs.push_back(other);
    }
    c->ops.push_back(n.op_type);
    c->operands.push_back(idx);
    c->swap.push_back(swap ? 1 : 0);
    c->offsets.push_back(static_cast<int64_t>(c->params.size()));
  } else if (UnaryLink(rw, n, &name, &params)) {
    if (n.inputs[0] != v || g.value(v).type.dtype != dt) return false;
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      if (n.inputs[k] == v) return false;
    }
    c->ops.push_back(name);
    c->operands.push_back(-1);
    c->swap.push_back(0);
    c->offsets.push_back(static_cast<int64_t>(c->params.size()));
    c->params.insert(c->params.end(), params.begin(), params.end());
  } else {
    return false;
  }
  c->nodes.push_back(ni);
  c->out = n.outputs[0];
  return true;
}

Status FuseElementwiseSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  for (NodeId si = 0; si < static_cast<NodeId>(g.nodes.size()); ++si) {
    const Node& s = g.nodes[static_cast<size_t>(si)];
    if (rw.Touched(si) || s.inputs.empty() || s.inputs[0] == kNoValue) continue;
    // A chain starts at a link whose input is not itself the single-use output of a link
    // (that node would start a longer chain).
    Chain c;
    c.inputs = {s.inputs[0]};
    if (!AddLink(rw, si, s.inputs[0], &c)) {
      // For a binary start, try the chain through its second operand.
      if (s.inputs.size() != 2) continue;
      c = Chain{};
      c.inputs = {s.inputs[1]};
      if (!AddLink(rw, si, s.inputs[1], &c)) continue;
    }
    while (true) {
      const NodeId next = rw.SoleConsumer(c.out);
      if (next < 0 || !AddLink(rw, next, c.out, &c)) break;
    }
    if (c.ops.size() < 2) continue;
    // Every operand must be defined before the last link, where the fused node goes;
    // operands produced inside the chain are impossible (each link has one consumer).
    Node fused = MakeNode("FusedElementwise", kSwitchyardDomain, s.name, c.inputs, {c.out});
    SetStrings(fused, "ops", c.ops);
    SetInts(fused, "operands", c.operands);
    SetInts(fused, "swap", c.swap);
    SetFloats(fused, "params", c.params);
    SetInts(fused, "param_offsets", c.offsets);
    for (size_t k = 0; k + 1 < c.nodes.size(); ++k) rw.Remove(c.nodes[k]);
    rw.Replace(c.nodes.back(), std::move(fused));
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

Status RunFuseElementwise(Graph& graph, PassContext& ctx) {
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, FuseElementwiseSweep));
  if (n) ctx.report.fired["fuse.elementwise"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
