// Pass prune_rows (knob prune.rows): computes only the rows a Gather keeps. A classifier
// that reads one token of a transformer's last layer (ViT's class token: Gather(x, 0,
// axis 1) before the head; a BERT pooler) has the whole layer computed for every token,
// then drops all rows but one. Here the Gather moves above each op that computes its
// output rows independently along the gathered axis, so that op runs on the kept rows
// only: elementwise ops (broadcast operands that lack the axis are left alone),
// reductions and Softmax over other axes, LayerNormalization over later axes, MatMul and
// Gemm rows, Transpose, Reshape-like ops that keep the axis whole or split or merge it
// with the axes after it, Concat and Slice along other axes. It stops at a value another
// node reads in full (the keys and values of the last attention need every token), so
// the Gathers of all readers of a value must agree before it moves past that value's
// producer; they then become one. Values are unchanged: each kept row is computed by the
// same op on the same inputs (a smaller GEMM may sum in another order: fp32 rounding).
//  * Gather of a scalar index: becomes a one-index Gather and a Reshape dropping the axis,
//    where the Gather can move.
//  * Gather of sorted distinct indices (fewer than the axis has), all readers of its
//    input alike: the input's producer reads Gathers of its own inputs instead.
// Static shapes only; default-domain ops, before the fusions, and once more after them
// for switchyard.FusedMatMul (fuse.slice's part GEMMs of packed q/k/v: the last layer's
// q projection then computes the kept rows only).
#include <algorithm>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
Status RunConstantFolding(Graph& graph, PassContext& ctx);

namespace {

// Rows kept along one axis: sorted distinct indices.
struct Pick {
  int64_t axis = 0;
  std::vector<int64_t> idx;
  bool operator==(const Pick& o) const { return axis == o.axis && idx == o.idx; }
};

int64_t Product(const std::vector<int64_t>& s, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e; ++i) p *= s[i];
  return p;
}

// Normalised axes of a Reduce* node (attribute, or constant input 1 from opset 18 and
// ReduceSum 13); empty when unknown or "all axes".
bool ReduceAxes(const Graph& g, const Node& n, int64_t rank, std::vector<int64_t>* axes) {
  std::vector<int64_t> a;
  if (n.Has("axes")) {
    a = n.GetInts("axes");
  } else if (n.HasInput(1)) {
    if (!ConstantInts(g, n.inputs[1], &a)) return false;
  }
  if (a.empty()) return false;  // all axes (or none with noop_with_empty_axes): no row survives alone
  for (int64_t& x : a) {
    if (x < 0) x += rank;
    if (x < 0 || x >= rank) return false;
  }
  *axes = a;
  return true;
}

const std::set<std::string>& UnaryOps() {
  static const std::set<std::string> k = {
      "Abs",  "Neg",   "Exp",     "Log",       "Sqrt",     "Reciprocal", "Relu",  "Sigmoid", "Tanh",
      "Erf",  "Cast",  "Identity", "LeakyRelu", "Elu",      "Selu",       "Celu",  "Softplus", "Softsign",
      "HardSigmoid", "HardSwish", "Clip", "Not", "Sign", "Floor", "Ceil", "Round", "Sin", "Cos", "Gelu",
      "Mish", "ThresholdedRelu"};
  return k;
}

const std::set<std::string>& BroadcastOps() {
  static const std::set<std::string> k = {"Add",  "Sub",     "Mul",     "Div",  "Pow",          "Max",
                                          "Min",  "Sum",     "Mean",    "Where", "Equal",       "Less",
                                          "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
                                          "PRelu", "Mod"};
  return k;
}

// The Pick of input `x` (static shape xs) that gives output rows `out` of an output of
// rank `r` under multidirectional broadcasting: none where x lacks the axis or
// broadcasts it (size 1).
bool BroadcastPick(const std::vector<int64_t>& xs, int64_t r, const Pick& out, int64_t out_dim,
                   std::optional<Pick>* in) {
  const int64_t ai = out.axis - (r - static_cast<int64_t>(xs.size()));
  if (ai < 0 || xs[static_cast<size_t>(ai)] == 1) {
    in->reset();
    return true;
  }
  if (xs[static_cast<size_t>(ai)] != out_dim) return false;
  *in = Pick{ai, out.idx};
  return true;
}

// Rows `out` of y = Reshape(x) (x of static shape xs, y of ys) as rows of one axis of x:
// the same axis, or one that the reshape splits into out.axis and the axes after it
// (each kept row becomes k consecutive rows of x), or one it merges from out.axis and
// axes after it (the kept rows must then be whole blocks of k).
bool ReshapePick(const std::vector<int64_t>& xs, const std::vector<int64_t>& ys, const Pick& out, Pick* in) {
  const size_t a = static_cast<size_t>(out.axis);
  const int64_t p = Product(ys, 0, a), d = ys[a], s = Product(ys, a + 1, ys.size());
  for (size_t ai = 0; ai < xs.size(); ++ai) {
    const int64_t p2 = Product(xs, 0, ai), d2 = xs[ai], s2 = Product(xs, ai + 1, xs.size());
    if (p2 != p || d2 == 1) continue;
    if (d2 == d && s2 == s) {
      *in = Pick{static_cast<int64_t>(ai), out.idx};
      return true;
    }
    if (s2 > 0 && s % s2 == 0 && d2 == d * (s / s2)) {  // x's axis holds k = s / s2 rows per y row
      const int64_t k = s / s2;
      in->axis = static_cast<int64_t>(ai);
      in->idx.clear();
      for (int64_t i : out.idx) {
        for (int64_t j = 0; j < k; ++j) in->idx.push_back(i * k + j);
      }
      return true;
    }
    if (s > 0 && s2 % s == 0 && d == d2 * (s2 / s)) {  // one x row per k = s2 / s y rows
      const int64_t k = s2 / s;
      if (out.idx.size() % static_cast<size_t>(k) != 0) continue;
      in->axis = static_cast<int64_t>(ai);
      in->idx.clear();
      bool whole = true;
      for (size_t b = 0; b < out.idx.size() && whole; b += static_cast<size_t>(k)) {
        whole = out.idx[b] % k == 0;
        for (int64_t j = 1; j < k && whole; ++j) whole = out.idx[b + static_cast<size_t>(j)] == out.idx[b] + j;
        in->idx.push_back(out.idx[b] / k);
      }
      if (whole) return true;
    }
  }
  return false;
}

// Whether node n computes the rows `out` of its output (static shape ys) from rows of its
// inputs alone: then (*ins)[i] is the Pick of input i (none: read whole).
bool MapThrough(const Graph& g, const Node& n, const std::vector<int64_t>& ys, const Pick& out,
                std::vector<std::optional<Pick>>* ins) {
  const bool fused_matmul = n.domain == kSwitchyardDomain && n.op_type == "FusedMatMul";
  if ((!n.domain.empty() && !fused_matmul) || n.outputs.size() != 1 || n.inputs.empty()) return false;
  const int64_t r = static_cast<int64_t>(ys.size());
  const int64_t dim = ys[static_cast<size_t>(out.axis)];
  ins->assign(n.inputs.size(), std::nullopt);
  std::vector<int64_t> xs;
  if (!StaticShape(g, n.inputs[0], &xs)) return false;
  const std::string& op = n.op_type;
  if (UnaryOps().count(op)) {
    if (static_cast<int64_t>(xs.size()) != r) return false;
    (*ins)[0] = out;
    return true;
  }
  if (BroadcastOps().count(op)) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      std::vector<int64_t> s;
      if (!StaticShape(g, n.inputs[i], &s) || !BroadcastPick(s, r, out, dim, &(*ins)[i])) return false;
    }
    return std::any_of(ins->begin(), ins->end(), [](const auto& p) { return p.has_value(); });
  }
  if (op.rfind("Reduce", 0) == 0 && op != "Reduce") {
    std::vector<int64_t> axes;
    if (!ReduceAxes(g, n, static_cast<int64_t>(xs.size()), &axes)) return false;
    int64_t ai = out.axis;
    if (n.GetInt("keepdims", 1) == 0) {  // output axis i is the i-th axis not reduced
      int64_t seen = -1;
      for (ai = 0; ai < static_cast<int64_t>(xs.size()); ++ai) {
        if (std::count(axes.begin(), axes.end(), ai) == 0 && ++seen == out.axis) break;
      }
    }
    if (ai >= static_cast<int64_t>(xs.size()) || std::count(axes.begin(), axes.end(), ai)) return false;
    (*ins)[0] = Pick{ai, out.idx};
    return true;
  }
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
    int64_t sa = n.GetInt("axis", n.since_version >= 13 ? -1 : 1);
    if (sa < 0) sa += r;
    // Before opset 13 the input is a matrix of the axes before `axis` by those from it.
    if (n.since_version >= 13 ? out.axis == sa : out.axis >= sa) return false;
    (*ins)[0] = out;
    return true;
  }
  if (op == "LayerNormalization") {
    int64_t la = n.GetInt("axis", -1);
    if (la < 0) la += r;
    if (out.axis >= la) return false;
    (*ins)[0] = out;
    return true;
  }
  if (op == "MatMul" || fused_matmul) {
    // Output rows are A's rows (its last axis with trans_a) and batch axes are
    // broadcast; FusedMatMul's bias runs along the columns, its residual Z broadcasts.
    std::vector<int64_t> bs;
    if (!StaticShape(g, n.inputs[1], &bs) || xs.size() < 2 || bs.size() < 2 || out.axis == r - 1) return false;
    if (out.axis == r - 2) {
      (*ins)[0] = Pick{static_cast<int64_t>(xs.size()) - (n.GetInt("trans_a", 0) ? 1 : 2), out.idx};
    } else if (!BroadcastPick(xs, r, out, dim, &(*ins)[0]) || !BroadcastPick(bs, r, out, dim, &(*ins)[1])) {
      return false;
    }
    if (fused_matmul && n.HasInput(3)) {
      std::vector<int64_t> zs;
      if (!StaticShape(g, n.inputs[3], &zs) || !BroadcastPick(zs, r, out, dim, &(*ins)[3])) return false;
    }
    return (*ins)[0] || (*ins)[1];
  }
  if (op == "Gemm") {
    if (out.axis != 0 || xs.size() != 2) return false;
    (*ins)[0] = Pick{n.GetInt("transA", 0) ? 1 : 0, out.idx};
    if (n.HasInput(2)) {
      std::vector<int64_t> cs;
      if (!StaticShape(g, n.inputs[2], &cs)) return false;
      if (cs.size() == 2 && cs[0] == dim) (*ins)[2] = Pick{0, out.idx};
      else if (cs.size() == 2 && cs[0] != 1) return false;
    }
    return true;
  }
  if (op == "Transpose") {
    std::vector<int64_t> perm = n.GetInts("perm");
    if (perm.empty()) {
      perm.resize(static_cast<size_t>(r));
      std::iota(perm.rbegin(), perm.rend(), 0);
    }
    if (static_cast<int64_t>(perm.size()) != r) return false;
    (*ins)[0] = Pick{perm[static_cast<size_t>(out.axis)], out.idx};
    return true;
  }
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") {
    Pick in;
    if (!ReshapePick(xs, ys, out, &in)) return false;
    (*ins)[0] = in;
    return true;
  }
  if (op == "Concat") {
    int64_t ca = n.GetInt("axis", 0);
    if (ca < 0) ca += r;
    if (ca == out.axis) return false;
    for (auto& p : *ins) p = out;
    return true;
  }
  if (op == "Slice") {
    std::vector<int64_t> axes, starts;
    if (n.Has("starts")) {  // Slice-1: attributes
      starts = n.GetInts("starts");
      axes = n.GetInts("axes");
    } else if (!ConstantInts(g, n.inputs.size() > 1 ? n.inputs[1] : kNoValue, &starts) ||
               (n.HasInput(3) && !ConstantInts(g, n.inputs[3], &axes))) {
      return false;
    }
    if (axes.empty()) {
      axes.resize(starts.size());
      std::iota(axes.begin(), axes.end(), 0);
    }
    for (int64_t& a : axes) {
      if (a < 0) a += r;
      if (a == out.axis) return false;
    }
    (*ins)[0] = out;
    return true;
  }
  return false;
}

// The rows a Gather node keeps of its data input, as a Pick (sorted distinct indices,
// fewer than the axis has); `scalar` tells whether the index is a scalar (the axis drops).
bool GatherPick(const Graph& g, const Node& n, Pick* pick, bool* scalar) {
  if (!IsOp(n, "Gather") || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  std::vector<int64_t> xs;
  const Tensor* t = g.Constant(n.inputs[1]);
  if (!t || t->rank() > 1 || !IsIntegerType(t->dtype()) || !StaticShape(g, n.inputs[0], &xs)) return false;
  const int64_t r = static_cast<int64_t>(xs.size());
  int64_t a = n.GetInt("axis", 0);
  if (a < 0) a += r;
  if (a < 0 || a >= r) return false;
  const int64_t d = xs[static_cast<size_t>(a)];
  std::vector<int64_t> idx = t->ToInt64Vector();
  for (int64_t& i : idx) {
    if (i < 0) i += d;
    if (i < 0 || i >= d) return false;
  }
  if (idx.empty() || static_cast<int64_t>(idx.size()) >= d) return false;
  for (size_t i = 1; i < idx.size(); ++i) {
    if (idx[i] <= idx[i - 1]) return false;
  }
  *pick = Pick{a, std::move(idx)};
  *scalar = t->rank() == 0;
  return true;
}

Tensor IndexTensor(const std::vector<int64_t>& idx) {
  return Tensor::FromInt64(idx, {static_cast<int64_t>(idx.size())});
}

// Whether `gather` can move above `producer` (the node computing its data input, which
// is no graph output): the Gather's Pick and the Picks of the producer's inputs.
bool Movable(const Graph& g, const Node& gather, const Node* producer, Pick* pick, bool* scalar,
             std::vector<std::optional<Pick>>* ins) {
  std::vector<int64_t> xs;
  return producer && GatherPick(g, gather, pick, scalar) && StaticShape(g, gather.inputs[0], &xs) &&
         MapThrough(g, *producer, xs, *pick, ins);
}

// The rewrites; each reader of a Gather's input but the first becomes an Identity of the
// first's output, listed in `aliases` (removed after the sweeps, so that they do not stand
// between the ops the fusions match).
Status PruneRowsSweep(Rewriter& rw, std::vector<ValueId>* aliases) {
  Graph& g = rw.graph();
  for (NodeId ni = 0; ni < static_cast<NodeId>(g.nodes.size()); ++ni) {
    if (rw.Touched(ni)) continue;
    const Node& n = rw.node(ni);  // the node list changes only at Commit
    if (!IsOp(n, "Gather") || n.inputs.empty()) continue;
    const ValueId x = n.inputs[0];
    const NodeId pi = rw.Producer(x);
    Pick pick;
    bool scalar = false;
    std::vector<std::optional<Pick>> ins;
    if (pi < 0 || rw.IsGraphOutput(x) || !Movable(g, n, &rw.node(pi), &pick, &scalar, &ins)) continue;
    // A Slice of a value that others read too (packed q/k/v) stays whole: moving the rows
    // above it saves one copy of the kept rows and keeps fuse.slice from giving each part
    // its own GEMM.
    if (IsOp(rw.node(pi), "Slice") && rw.Consumers(rw.node(pi).inputs[0]).size() > 1) continue;
    std::vector<int64_t> xs;
    StaticShape(g, x, &xs);
    std::vector<int64_t> ps = xs;  // the kept rows' shape
    ps[static_cast<size_t>(pick.axis)] = static_cast<int64_t>(pick.idx.size());
    if (scalar) {  // one-index Gather, then a Reshape that drops the axis
      const ValueId kept = rw.NewValue(n.name + "_rows", TensorType::FromShape(g.value(x).type.dtype, ps));
      Node gather = MakeNode("Gather", "", n.name + "_rows", {x, rw.NewConstant(n.name + "_rows_idx", IndexTensor(pick.idx))},
                             {kept});
      SetInt(gather, "axis", pick.axis);
      std::vector<int64_t> os = xs;
      os.erase(os.begin() + pick.axis);
      const ValueId shape = rw.NewConstant(n.name + "_shape", Tensor::FromInt64(os, {static_cast<int64_t>(os.size())}));
      rw.InsertBefore(ni, std::move(gather));
      rw.Replace(ni, MakeNode("Reshape", "", n.name, {kept, shape}, n.outputs));
      rw.CountChange();
      continue;
    }
    // Every reader of x must keep the same rows; the first (in order) takes the producer's
    // place, the others read its output.
    std::vector<NodeId> readers = rw.Consumers(x);
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    bool alike = true;
    for (NodeId c : readers) {
      Pick other;
      bool other_scalar = false;
      alike = alike && !rw.Touched(c) && rw.node(c).inputs[0] == x &&
              GatherPick(g, rw.node(c), &other, &other_scalar) && !other_scalar && other == pick;
    }
    if (!alike) continue;
    const NodeId first = readers.front();
    Node moved = rw.node(pi);
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!ins[i]) continue;
      const ValueId in = moved.inputs[i];
      std::vector<int64_t> s;
      StaticShape(g, in, &s);
      s[static_cast<size_t>(ins[i]->axis)] = static_cast<int64_t>(ins[i]->idx.size());
      const std::string name = moved.name + "_rows_" + std::to_string(i);
      const ValueId kept = rw.NewValue(name, TensorType::FromShape(g.value(in).type.dtype, s));
      Node gather = MakeNode("Gather", "", name, {in, rw.NewConstant(name + "_idx", IndexTensor(ins[i]->idx))}, {kept});
      SetInt(gather, "axis", ins[i]->axis);
      rw.InsertBefore(first, std::move(gather));
      moved.inputs[i] = kept;
    }
    const ValueId out = rw.node(first).outputs[0];
    if (moved.op_type == "Reshape" || moved.op_type == "Flatten" || moved.op_type == "Squeeze" ||
        moved.op_type == "Unsqueeze") {
      const ValueId shape = rw.NewConstant(moved.name + "_shape", Tensor::FromInt64(ps, {static_cast<int64_t>(ps.size())}));
      moved = MakeNode("Reshape", "", moved.name, {moved.inputs[0], shape}, {out});
    } else {
      moved.outputs = {out};
    }
    rw.Remove(pi);
    rw.Replace(first, std::move(moved));
    for (NodeId c : readers) {
      if (c == first) continue;
      rw.Replace(c, MakeNode("Identity", "", rw.node(c).name, {out}, rw.node(c).outputs));
      aliases->push_back(rw.node(c).outputs[0]);
    }
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

bool GatherMayMoveUp(const Node& gather, const Tensor* t, const Node* producer) {
  static const std::set<std::string> kOthers = {"Softmax", "LogSoftmax", "Hardmax", "LayerNormalization", "MatMul",
                                                "Gemm", "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                                "Concat", "Slice"};
  if (!IsOp(gather, "Gather") || gather.inputs.size() != 2 || !producer || !producer->domain.empty()) return false;
  if (!t || t->rank() > 1 || !IsIntegerType(t->dtype())) return false;
  const std::string& op = producer->op_type;
  return UnaryOps().count(op) || BroadcastOps().count(op) || kOthers.count(op) ||
         (op.rfind("Reduce", 0) == 0 && op != "Reduce");
}

// Readers of each alias read its source instead; the Identity goes unless it is a graph
// output.
void RemoveAliases(Graph& g, const std::vector<ValueId>& aliases) {
  std::unordered_map<ValueId, ValueId> source;
  const std::set<ValueId> outputs(g.outputs.begin(), g.outputs.end());
  for (const Node& n : g.nodes) {  // a subgraph may read an alias by name: keep them all then
    for (const auto& [name, a] : n.attrs) {
      if (a.kind == Attribute::Kind::kGraph || a.kind == Attribute::Kind::kGraphs) return;
    }
  }
  for (const Node& n : g.nodes) {
    if (IsOp(n, "Identity") && n.outputs.size() == 1 && !outputs.count(n.outputs[0]) &&
        std::count(aliases.begin(), aliases.end(), n.outputs[0])) {
      source[n.outputs[0]] = n.inputs[0];
    }
  }
  if (source.empty()) return;
  std::vector<Node> kept;
  for (Node& n : g.nodes) {
    if (IsOp(n, "Identity") && n.outputs.size() == 1 && source.count(n.outputs[0])) continue;
    for (ValueId& in : n.inputs) {
      while (source.count(in)) in = source[in];
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
  g.RebuildProducers();
}

Status RunPruneRows(Graph& graph, PassContext& ctx) {
  std::vector<ValueId> aliases;
  // A Gather moves one op per sweep: as many sweeps as the graph is deep.
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, [&](Rewriter& rw) { return PruneRowsSweep(rw, &aliases); },
                                       static_cast<int>(graph.nodes.size()) + 64));
  if (!n) return Status::Ok();
  RemoveAliases(graph, aliases);
  ctx.report.fired["prune.rows"] += n;
  // Gathers that reached constants (a bias of the rows' shape) become constants.
  return RunConstantFolding(graph, ctx);
}

}  // namespace switchyard::passes
