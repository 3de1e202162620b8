// Pass fuse_attention (knob fuse.attention): scaled dot-product attention
//   P = Softmax(MatMul([Q * c1], [Kt * c0]) [* c2 | / c2]... [+ mask | Where(cond, -inf, .)], last axis)
//   out = MatMul(P, V)
// becomes switchyard.Attention(Q, K, V[, mask]) with all scalar factors folded into
// `scale`. Kt produced by a Transpose (PyTorch's k.transpose(-2, -1), possibly merged
// with a head permutation) is undone by permuting that Transpose's input directly; any
// other Kt gets a Transpose of its last two dims. A boolean Where mask with -inf fill
// becomes the additive mask Where(cond, -inf, 0); a constant one that is exactly the
// causal pattern becomes causal=1 instead. Intermediates must have one consumer.
// Transposes around the fused node that keep the head dim last are then absorbed into its
// layout attributes (q_perm, k_perm, v_perm, out_perm): the kernels read strided operands.
#include <cmath>
#include <limits>

#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

// For Mul/Div of a non-constant value by a constant scalar: that value, with *scale
// multiplied by the factor. kNoValue otherwise.
ValueId ScalarFactor(const Graph& g, const Node& n, double* scale) {
  double c;
  if (n.inputs.size() != 2) return kNoValue;
  const ValueId a = n.inputs[0], b = n.inputs[1];
  if (IsOp(n, "Mul")) {
    if (!g.IsConstant(a) && ConstantScalar(g, b, &c)) return *scale *= c, a;
    if (!g.IsConstant(b) && ConstantScalar(g, a, &c)) return *scale *= c, b;
  } else if (IsOp(n, "Div") && !g.IsConstant(a) && ConstantScalar(g, b, &c) && c != 0) {
    return *scale /= c, a;
  }
  return kNoValue;
}

// Whether `v` is a MatMul output, possibly through scalar factors.
bool LeadsToMatMul(const Rewriter& rw, ValueId v) {
  for (int guard = 0; guard < 8; ++guard) {
    const NodeId p = rw.Producer(v);
    if (p < 0) return false;
    if (IsOp(rw.node(p), "MatMul")) return true;
    double f = 1;
    v = ScalarFactor(rw.graph(), rw.node(p), &f);
    if (v == kNoValue) return false;
  }
  return false;
}

bool IsNegInf(const Graph& g, ValueId v) {
  double c;
  return ConstantScalar(g, v, &c) && std::isinf(c) && c < 0;
}

// A constant bool [S, S_kv] that is true exactly where j > i.
bool IsCausalCondition(const Graph& g, ValueId cond, const TensorType& scores) {
  const Tensor* t = g.Constant(cond);
  if (!t || t->dtype() != DataType::kBool || t->rank() != 2 || !scores.has_shape || scores.rank() < 2) return false;
  const Dim& s = scores.dims[scores.dims.size() - 2];
  const Dim& skv = scores.dims.back();
  if (!s.is_static() || !skv.is_static() || t->dim(0) != s.value || t->dim(1) != skv.value) return false;
  for (int64_t i = 0; i < t->dim(0); ++i) {
    for (int64_t j = 0; j < t->dim(1); ++j) {
      if ((t->GetInt64(i * t->dim(1) + j) != 0) != (j > i)) return false;
    }
  }
  return true;
}

Status FuseAttentionSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  for (NodeId si = 0; si < static_cast<NodeId>(g.nodes.size()); ++si) {
    const Node& sm = g.nodes[static_cast<size_t>(si)];
    if (rw.Touched(si) || !IsOp(sm, "Softmax")) continue;
    const TensorType& st = g.value(sm.inputs[0]).type;
    if (!st.has_shape || st.rank() < 2 || !IsFloatValue(g, sm.inputs[0])) continue;
    int64_t axis = sm.GetInt("axis", sm.since_version >= 13 ? -1 : 1);
    if (axis < 0) axis += st.rank();
    if (axis != st.rank() - 1) continue;
    // Forward: P feeds only MatMul(P, V).
    const NodeId pv = rw.SoleConsumer(sm.outputs[0]);
    if (pv < 0 || !IsOp(rw.node(pv), "MatMul") || rw.node(pv).inputs[0] != sm.outputs[0]) continue;
    const ValueId v = rw.node(pv).inputs[1];
    std::vector<NodeId> nodes = {si, pv};
    // Backward from the softmax input: optional mask, scalar factors, then MatMul.
    ValueId cur = sm.inputs[0], mask_add = kNoValue, where_cond = kNoValue;
    double scale = 1.0;
    bool ok = false, seen_factor = false;
    NodeId qk = -1;
    for (int guard = 0; guard < 8; ++guard) {
      const NodeId p = rw.Producer(cur);
      if (p < 0 || rw.SoleConsumer(cur) < 0) break;
      const Node& n = rw.node(p);
      if (IsOp(n, "MatMul")) {
        qk = p;
        ok = true;
        break;
      }
      const bool mask_allowed = mask_add == kNoValue && where_cond == kNoValue && !seen_factor;
      if (mask_allowed && IsOp(n, "Add") && n.inputs.size() == 2) {
        const int side = LeadsToMatMul(rw, n.inputs[0]) ? 0 : LeadsToMatMul(rw, n.inputs[1]) ? 1 : -1;
        if (side < 0) break;
        mask_add = n.inputs[static_cast<size_t>(1 - side)];
        cur = n.inputs[static_cast<size_t>(side)];
        nodes.push_back(p);
        continue;
      }
      // Where(cond, -inf, scores); the mirrored form would need a Not, so it is skipped.
      if (mask_allowed && IsOp(n, "Where") && n.inputs.size() == 3 &&
          g.value(n.inputs[0]).type.dtype == DataType::kBool && IsNegInf(g, n.inputs[1])) {
        where_cond = n.inputs[0];
        cur = n.inputs[2];
        nodes.push_back(p);
        continue;
      }
      const ValueId src = ScalarFactor(g, n, &scale);
      if (src == kNoValue) break;
      seen_factor = true;
      cur = src;
      nodes.push_back(p);
    }
    if (!ok) continue;
    nodes.push_back(qk);
    // The scores must not be enlarged by the mask.
    if (mask_add != kNoValue && !BroadcastsInto(g.value(mask_add).type, g.value(cur).type)) continue;
    if (where_cond != kNoValue && !BroadcastsInto(g.value(where_cond).type, g.value(cur).type)) continue;
    ValueId q = rw.node(qk).inputs[0], kt = rw.node(qk).inputs[1];
    // Scalar factor on Q.
    if (const NodeId qs = rw.Producer(q); qs >= 0 && rw.SoleConsumer(q) == qk) {
      const ValueId src = ScalarFactor(g, rw.node(qs), &scale);
      if (src != kNoValue) {
        q = src;
        nodes.push_back(qs);
      }
    }
    // Scalar factor on Kt (PyTorch 2's scaled_dot_product_attention export multiplies
    // both q and k.transpose(-2, -1) by sqrt(scale)).
    NodeId kt_reader = qk;
    if (const NodeId ks = rw.Producer(kt); ks >= 0 && rw.SoleConsumer(kt) == qk) {
      const ValueId src = ScalarFactor(g, rw.node(ks), &scale);
      if (src != kNoValue) {
        kt = src;
        kt_reader = ks;
        nodes.push_back(ks);
      }
    }
    const TensorType& qt = g.value(q).type;
    const TensorType& ktt = g.value(kt).type;
    const TensorType& vt = g.value(v).type;
    if (qt.rank() < 2 || qt.rank() != ktt.rank() || qt.rank() != vt.rank()) continue;
    bool clean = true;
    for (NodeId n : nodes) clean &= !rw.Touched(n);
    if (!clean) continue;
    // K from Kt.
    const int64_t r = ktt.rank();
    ValueId k = kNoValue;
    const NodeId tp = rw.Producer(kt);
    Node k_node;
    bool insert_k = true;
    std::vector<int64_t> perm;
    if (tp >= 0 && IsOp(rw.node(tp), "Transpose")) {
      perm = rw.node(tp).GetInts("perm");
      if (static_cast<int64_t>(perm.size()) == r) {
        std::swap(perm[r - 1], perm[r - 2]);
        bool identity = true;
        for (int64_t i = 0; i < r; ++i) identity &= perm[i] == i;
        const ValueId src = rw.node(tp).inputs[0];
        if (identity) {
          k = src;
          insert_k = false;
        } else {
          k_node = MakeNode("Transpose", "", rw.node(tp).name + "_k", {src}, {});
        }
        if (rw.SoleConsumer(kt) == kt_reader) nodes.push_back(tp);
      } else {
        perm.clear();
      }
    }
    if (k == kNoValue && perm.empty()) {
      perm.resize(static_cast<size_t>(r));
      for (int64_t i = 0; i < r; ++i) perm[i] = i;
      std::swap(perm[r - 1], perm[r - 2]);
      k_node = MakeNode("Transpose", "", rw.node(qk).name + "_k", {kt}, {});
    }
    const NodeId last = pv;  // MatMul(P, V) produces the output; everything else is earlier
    if (insert_k) {
      k = rw.NewValue(g.value(kt).name + "_untransposed");
      k_node.outputs = {k};
      SetInts(k_node, "perm", perm);
      rw.InsertBefore(last, std::move(k_node));
    }
    ValueId mask = mask_add;
    int64_t causal = 0;
    if (where_cond != kNoValue) {
      if (IsCausalCondition(g, where_cond, g.value(cur).type)) {
        causal = 1;
      } else {
        const DataType dt = g.value(cur).type.dtype;
        const ValueId ninf = rw.NewConstant(rw.node(si).name + "_mask_fill",
                                            Tensor::Scalar(dt, -std::numeric_limits<double>::infinity()));
        const ValueId zero = rw.NewConstant(rw.node(si).name + "_mask_zero", Tensor::Scalar(dt, 0.0));
        mask = rw.NewValue(rw.node(si).name + "_additive_mask");
        rw.InsertBefore(last, MakeNode("Where", "", rw.node(si).name + "_mask", {where_cond, ninf, zero}, {mask}));
      }
    }
    Node att = MakeNode("Attention", kSwitchyardDomain, rw.node(si).name, {q, k, v}, {rw.node(pv).outputs[0]});
    if (mask != kNoValue) att.inputs.push_back(mask);
    SetFloat(att, "scale", static_cast<float>(scale));
    SetInt(att, "causal", causal);
    for (NodeId n : nodes) {
      if (n != last) rw.Remove(n);
    }
    rw.Replace(last, std::move(att));
    rw.CountChange();
  }
  return Status::Ok();
}

// A Transpose that keeps the last axis last, its perm in *perm.
bool HeadDimStaysLast(const Node& n, std::vector<int64_t>* perm) {
  if (!IsOp(n, "Transpose") || !n.Has("perm")) return false;
  *perm = n.GetInts("perm");
  return perm->size() >= 2 && perm->back() == static_cast<int64_t>(perm->size()) - 1;
}

// The attention kernels read strided operands: a Transpose feeding Q, K or V
// (read by the Attention alone) becomes its q_perm / k_perm / v_perm, and a Transpose that
// is the only reader of the output becomes out_perm, so the head split and merge around
// attention ([B,S,H,D] <-> [B,H,S,D]) cost no copies. Perms compose when a layout
// attribute is already set.
Status AbsorbTransposesSweep(Rewriter& rw) {
  const Graph& g = rw.graph();
  for (NodeId ni = 0; ni < static_cast<NodeId>(g.nodes.size()); ++ni) {
    const Node& n = rw.node(ni);
    if (rw.Touched(ni) || n.op_type != "Attention" || n.domain != kSwitchyardDomain) continue;
    Node att = n;
    std::vector<NodeId> removed;
    const char* names[3] = {"q_perm", "k_perm", "v_perm"};
    for (size_t i = 0; i < 3; ++i) {
      const NodeId tp = rw.Producer(n.inputs[i]);
      std::vector<int64_t> perm;
      if (tp < 0 || rw.SoleConsumer(n.inputs[i]) != ni || !HeadDimStaysLast(rw.node(tp), &perm)) continue;
      if (att.Has(names[i])) {  // logical = T(T(x, perm), prev): axis j is x's perm[prev[j]]
        std::vector<int64_t> prev = att.GetInts(names[i]), c;
        if (prev.size() != perm.size()) continue;
        for (int64_t a : prev) c.push_back(perm[static_cast<size_t>(a)]);
        perm = c;
      }
      SetInts(att, names[i], perm);
      att.inputs[i] = rw.node(tp).inputs[0];
      removed.push_back(tp);
    }
    const NodeId out_tp = rw.SoleConsumer(n.outputs[0]);
    std::vector<int64_t> perm;
    if (out_tp >= 0 && HeadDimStaysLast(rw.node(out_tp), &perm)) {
      if (att.Has("out_perm")) {  // stored = T(T(O, prev), perm): axis j is O's prev[perm[j]]
        const std::vector<int64_t> prev = att.GetInts("out_perm");
        std::vector<int64_t> c;
        for (int64_t a : perm) c.push_back(a < static_cast<int64_t>(prev.size()) ? prev[static_cast<size_t>(a)] : -1);
        perm = prev.size() == c.size() ? c : std::vector<int64_t>{};
      }
      if (!perm.empty()) {
        SetInts(att, "out_perm", perm);
        att.outputs[0] = rw.node(out_tp).outputs[0];
        removed.push_back(out_tp);
      }
    }
    if (removed.empty()) continue;
    for (NodeId r : removed) rw.Remove(r);
    rw.Replace(ni, std::move(att));
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

Status RunFuseAttention(Graph& graph, PassContext& ctx) {
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, FuseAttentionSweep));
  if (n) ctx.report.fired["fuse.attention"] += n;
  if (n) {
    SY_ASSIGN_OR_RETURN(int absorbed, RunSweeps(graph, AbsorbTransposesSweep));
    if (absorbed) ctx.report.fired["attention_transposes"] += absorbed;
  }
  return Status::Ok();
}

}  // namespace switchyard::passes
