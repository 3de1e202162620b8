// Pass simplify_layout (always on): rewrites of Transposes that change no values and move
// no more data than before, so that the fusions after it see through layout shuffles.
// PyTorch 2.x exports nn.MultiheadAttention (batch_first) as: Transpose [B,S,E] -> [S,B,E]
// (a size-1 move at B = 1), the in-projection, Unsqueeze + Transpose + Squeeze + three
// Gathers for q/k/v, a Transpose per head split followed by a Reshape to [B,H,S,D], and
// Transposes back at the end: eight copies per layer, 5 of BERT-base's 42 ms at 16
// threads. After this pass the head Transposes meet the Attention and become its layout
// perms (fuse_attention), and the rest are Reshapes (views).
//  * A Transpose that moves only size-1 axes (the others keep their order) is a Reshape.
//  * Transpose(Transpose(x)), the inner one read only there, is one Transpose.
//  * A Reshape, Squeeze or Unsqueeze of a Transpose (read only there) that only splits
//    axes and adds or drops size-1 axes goes first: Transpose(Reshape(x)).
//  * A Reshape, Squeeze or Unsqueeze of another (read only there) is one Reshape: the
//    GEMM epilogue fusion sees through one Reshape to a residual Add (ViT's attention
//    output went Reshape, then a Transpose of a size-1 axis, before its Add).
//  * Gather of one constant index (a scalar) from a Transpose gathers from the
//    Transpose's input, then transposes the smaller result.
// Static shapes only; the ops are the default domain's.
#include <algorithm>
#include <numeric>

#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

// The Transpose's perm (reversed axes when absent), if it is a permutation of `rank`.
bool PermOf(const Node& n, int64_t rank, std::vector<int64_t>* perm) {
  if (n.Has("perm")) {
    *perm = n.GetInts("perm");
  } else {
    perm->resize(static_cast<size_t>(rank));
    std::iota(perm->rbegin(), perm->rend(), 0);
  }
  if (static_cast<int64_t>(perm->size()) != rank) return false;
  std::vector<char> seen(static_cast<size_t>(rank), 0);
  for (int64_t a : *perm) {
    if (a < 0 || a >= rank || seen[static_cast<size_t>(a)]) return false;
    seen[static_cast<size_t>(a)] = 1;
  }
  return true;
}

Node ReshapeTo(Rewriter& rw, const std::string& name, ValueId x, const std::vector<int64_t>& shape, ValueId out) {
  const ValueId s = rw.NewConstant(name + "_shape", Tensor::FromInt64(shape, {static_cast<int64_t>(shape.size())}));
  return MakeNode("Reshape", "", name, {x, s}, {out});
}

Node TransposeOf(const std::string& name, ValueId x, std::vector<int64_t> perm, ValueId out) {
  Node t = MakeNode("Transpose", "", name, {x}, {out});
  SetInts(t, "perm", std::move(perm));
  return t;
}

// Whether the non-1 axes of x keep their order under perm.
bool MovesOnlyUnitAxes(const std::vector<int64_t>& xs, const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (int64_t a : perm) {
    if (xs[static_cast<size_t>(a)] == 1) continue;
    if (a < last) return false;
    last = a;
  }
  return true;
}

// t = Transpose(x, perm) reshaped to rs, where rs only splits t's axes and adds or drops
// size-1 axes: the shape x' to reshape x to and the perm p' with Transpose(x', p') = rs.
// x' holds one size-1 axis per size-1 axis of rs, first, then x's non-1 axes in order,
// each split into its factors (so the reshape of x keeps the element order).
bool SinkReshape(const std::vector<int64_t>& xs, const std::vector<int64_t>& perm,
                 const std::vector<int64_t>& rs, std::vector<int64_t>* x2, std::vector<int64_t>* p2) {
  std::vector<int64_t> tn, tn_axis;  // t's non-1 axes and the x axis each comes from
  for (int64_t a : perm) {
    if (xs[static_cast<size_t>(a)] != 1) {
      tn.push_back(xs[static_cast<size_t>(a)]);
      tn_axis.push_back(a);
    }
  }
  std::vector<std::vector<size_t>> groups(tn.size());  // rs positions of each t axis's factors
  size_t gi = 0;
  int64_t prod = 1;
  for (size_t j = 0; j < rs.size(); ++j) {
    if (rs[j] == 1) continue;
    if (gi >= tn.size()) return false;
    prod *= rs[j];
    if (tn[gi] % prod != 0) return false;
    groups[gi].push_back(j);
    if (prod == tn[gi]) {
      ++gi;
      prod = 1;
    }
  }
  if (gi != tn.size() || prod != 1) return false;
  std::vector<int64_t> pos(rs.size(), -1);
  x2->clear();
  for (size_t j = 0; j < rs.size(); ++j) {
    if (rs[j] == 1) {
      pos[j] = static_cast<int64_t>(x2->size());
      x2->push_back(1);
    }
  }
  for (int64_t a = 0; a < static_cast<int64_t>(xs.size()); ++a) {
    if (xs[static_cast<size_t>(a)] == 1) continue;
    const size_t g = static_cast<size_t>(std::find(tn_axis.begin(), tn_axis.end(), a) - tn_axis.begin());
    for (size_t j : groups[g]) {
      pos[j] = static_cast<int64_t>(x2->size());
      x2->push_back(rs[j]);
    }
  }
  *p2 = pos;
  return true;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool IsReshapeLike(const Node& n) {
  return n.domain.empty() && (n.op_type == "Reshape" || n.op_type == "Squeeze" || n.op_type == "Unsqueeze");
}

Status SimplifyLayoutSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  for (NodeId ni = 0; ni < static_cast<NodeId>(g.nodes.size()); ++ni) {
    if (rw.Touched(ni)) continue;
    const Node& n = rw.node(ni);
    if (!n.domain.empty() || n.inputs.empty() || n.outputs.size() != 1) continue;
    std::vector<int64_t> xs, perm, os;
    if (n.op_type == "Transpose") {
      if (!StaticShape(g, n.inputs[0], &xs) || !PermOf(n, static_cast<int64_t>(xs.size()), &perm)) continue;
      if (!StaticShape(g, n.outputs[0], &os)) continue;
      // Transpose(Transpose(x)): one Transpose. Output axis i is t's perm[i], x's inner[perm[i]].
      const NodeId tp = rw.Producer(n.inputs[0]);
      std::vector<int64_t> inner, x0s;
      if (tp >= 0 && IsOp(rw.node(tp), "Transpose") && rw.SoleConsumer(n.inputs[0]) == ni &&
          StaticShape(g, rw.node(tp).inputs[0], &x0s) &&
          PermOf(rw.node(tp), static_cast<int64_t>(x0s.size()), &inner)) {
        std::vector<int64_t> c;
        for (int64_t a : perm) c.push_back(inner[static_cast<size_t>(a)]);
        const ValueId x0 = rw.node(tp).inputs[0];
        rw.Remove(tp);
        rw.Replace(ni, MovesOnlyUnitAxes(x0s, c) ? ReshapeTo(rw, n.name, x0, os, n.outputs[0])
                                                 : TransposeOf(n.name, x0, c, n.outputs[0]));
        rw.CountChange();
        continue;
      }
      if (MovesOnlyUnitAxes(xs, perm)) {
        rw.Replace(ni, ReshapeTo(rw, n.name, n.inputs[0], os, n.outputs[0]));
        rw.CountChange();
      }
      continue;
    }
    const bool reshape = IsReshapeLike(n);
    if (!reshape && n.op_type != "Gather") continue;
    const NodeId tp = rw.Producer(n.inputs[0]);
    if (reshape && tp >= 0 && !rw.Touched(tp) && IsReshapeLike(rw.node(tp)) && rw.SoleConsumer(n.inputs[0]) == ni &&
        !rw.IsGraphOutput(n.inputs[0]) && StaticShape(g, n.outputs[0], &os)) {
      const ValueId x0 = rw.node(tp).inputs[0];
      rw.Remove(tp);
      rw.Replace(ni, ReshapeTo(rw, n.name, x0, os, n.outputs[0]));
      rw.CountChange();
      continue;
    }
    if (tp < 0 || !IsOp(rw.node(tp), "Transpose")) continue;
    const ValueId x = rw.node(tp).inputs[0];
    if (!StaticShape(g, x, &xs) || !PermOf(rw.node(tp), static_cast<int64_t>(xs.size()), &perm)) continue;
    if (!StaticShape(g, n.outputs[0], &os)) continue;
    if (reshape) {
      std::vector<int64_t> x2, p2;
      if (rw.SoleConsumer(n.inputs[0]) != ni || !SinkReshape(xs, perm, os, &x2, &p2)) continue;
      rw.Remove(tp);
      if (IsIdentity(p2)) {
        rw.Replace(ni, ReshapeTo(rw, n.name, x, os, n.outputs[0]));
      } else {
        const ValueId pre = rw.NewValue(n.name + "_before_transpose", TensorType::FromShape(g.value(x).type.dtype, x2));
        rw.InsertBefore(ni, ReshapeTo(rw, n.name + "_before_transpose", x, x2, pre));
        rw.Replace(ni, TransposeOf(n.name, pre, p2, n.outputs[0]));
      }
      rw.CountChange();
      continue;
    }
    // Gather(Transpose(x, perm), scalar index, axis a) = Transpose(Gather(x, index,
    // perm[a]), perm without a). The Transpose stays for its other readers, if any.
    const Tensor* idx = g.Constant(n.inputs.size() > 1 ? n.inputs[1] : kNoValue);
    if (!idx || idx->rank() != 0) continue;
    const int64_t r = static_cast<int64_t>(xs.size());
    int64_t a = n.GetInt("axis", 0);
    if (a < 0) a += r;
    if (a < 0 || a >= r) continue;
    const int64_t xa = perm[static_cast<size_t>(a)];
    std::vector<int64_t> rest;
    for (int64_t i = 0; i < r; ++i) {
      const int64_t p = perm[static_cast<size_t>(i)];
      if (i != a) rest.push_back(p > xa ? p - 1 : p);
    }
    std::vector<int64_t> ps = xs;
    ps.erase(ps.begin() + xa);
    const ValueId picked = rw.NewValue(n.name + "_from_input", TensorType::FromShape(g.value(x).type.dtype, ps));
    Node gather = MakeNode("Gather", "", n.name + "_from_input", {x, n.inputs[1]}, {picked});
    SetInt(gather, "axis", xa);
    rw.InsertBefore(ni, std::move(gather));
    rw.Replace(ni, TransposeOf(n.name, picked, rest, n.outputs[0]));
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

Status RunSimplifyLayout(Graph& graph, PassContext& ctx) {
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, SimplifyLayoutSweep));
  if (n) ctx.report.fired["simplify_layout"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
