// Switchyard-domain transformer ops: LayerNorm, Gelu and Attention, written plainly in
// fp64 from their textbook definitions (see the passes that produce them).
#include <cmath>
#include <limits>

#include "passes/pass.h"
#include "reference/ops/attention_layout.h"
#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

// --- LayerNorm: (x - mean) / sqrt(var + epsilon) * scale + bias over dims [axis, rank) ---
Result<std::vector<TensorType>> InferLayerNorm(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(DataType t, SameDtype(ctx, {0, 1, 2}));
  const TensorType* x = ctx.input(0);
  if (t != DataType::kUndefined && !IsFloatType(t)) return NodeError(ctx.node, "X must be floating-point");
  if (x->has_shape) {
    SY_RETURN_IF_ERROR(NormalizeAxis(ctx.node, ctx.node.GetInt("axis", -1), x->rank()).status());
    for (size_t i : {size_t{1}, size_t{2}}) {
      const TensorType* p = ctx.input(i);
      if (p && p->has_shape && p->rank() > x->rank()) {
        return NodeError(ctx.node, "scale/bias rank exceeds the rank of X");
      }
    }
  }
  return std::vector<TensorType>{*x};
}

Result<std::vector<Tensor>> RunLayerNorm(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (!IsFloatType(x->dtype())) return NodeError(ctx.node, "X must be floating-point");
  SY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node, ctx.node.GetInt("axis", -1), x->rank()));
  const double eps = ctx.node.GetFloat("epsilon", 1e-5f);
  int64_t inner = 1;
  for (int64_t d = axis; d < x->rank(); ++d) inner *= x->dim(d);
  const int64_t outer = inner == 0 ? 0 : x->numel() / inner;
  std::vector<double> v = x->ToDoubleVector();
  for (int64_t o = 0; o < outer; ++o) {
    double* row = v.data() + o * inner;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i) mean += row[i];
    mean /= static_cast<double>(inner);
    for (int64_t i = 0; i < inner; ++i) var += (row[i] - mean) * (row[i] - mean);
    var /= static_cast<double>(inner);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i) row[i] = (row[i] - mean) * inv;
  }
  for (size_t k : {size_t{1}, size_t{2}}) {
    const Tensor* p = ctx.input(k);
    if (!p) continue;
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> bs, BroadcastShapes(ctx.node, {x->shape(), p->shape()}));
    if (bs != x->shape()) return NodeError(ctx.node, "scale/bias would enlarge the output");
    const std::vector<int64_t> idx = BroadcastIndex(p->shape(), x->shape());
    const std::vector<double> pv = p->ToDoubleVector();
    for (size_t e = 0; e < v.size(); ++e) {
      v[e] = k == 1 ? v[e] * pv[static_cast<size_t>(idx[e])] : v[e] + pv[static_cast<size_t>(idx[e])];
    }
  }
  Tensor y(x->dtype(), x->shape());
  for (int64_t e = 0; e < y.numel(); ++e) y.SetDouble(e, v[static_cast<size_t>(e)]);
  return std::vector<Tensor>{std::move(y)};
}

// --- Gelu: 0.5 x (1 + erf(x / sqrt 2)), or the tanh approximation ---------------------
Result<std::vector<TensorType>> InferGelu(const InferContext& ctx) {
  const std::string a = ctx.node.GetString("approximate", "none");
  if (a != "none" && a != "tanh") return NodeError(ctx.node, "approximate must be 'none' or 'tanh'");
  if (ctx.input(0)->dtype != DataType::kUndefined && !IsFloatType(ctx.input(0)->dtype)) {
    return NodeError(ctx.node, "X must be floating-point");
  }
  return InferSameAsInput(ctx);
}

Result<std::vector<Tensor>> RunGelu(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (!IsFloatType(x->dtype())) return NodeError(ctx.node, "X must be floating-point");
  const std::string a = ctx.node.GetString("approximate", "none");
  if (a != "none" && a != "tanh") return NodeError(ctx.node, "approximate must be 'none' or 'tanh'");
  const bool tanh_approx = a == "tanh";
  const double k = std::sqrt(2.0 / M_PI);
  Tensor y(x->dtype(), x->shape());
  for (int64_t i = 0; i < x->numel(); ++i) {
    const double v = x->GetDouble(i);
    const double g = tanh_approx ? 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)))
                                 : 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    y.SetDouble(i, g);
  }
  return std::vector<Tensor>{std::move(y)};
}

// --- Attention: softmax(Q Kᵀ scale + mask) V ------------------------------------------
// Q [..., S, D], K [..., S_kv, D], V [..., S_kv, Dv]; batch dims broadcast numpy-style.
// causal=1 masks key j for query i when j > i (top-left aligned, as torch.tril(ones)).
// Optional layout attributes (set by fuse_attention): q_perm / k_perm / v_perm — the
// operand is Transpose(input, perm); out_perm — the output is Transpose(O, out_perm). Each
// keeps the last axis last.

// Transpose(x, perm) (x itself when perm is empty).
Tensor TransposedCopy(const Tensor& x, const std::vector<int64_t>& perm) {
  if (perm.empty()) return x;
  const std::vector<int64_t>& in = x.shape();
  Tensor y(x.dtype(), Permuted(in, perm));
  std::vector<int64_t> stride(in.size(), 1);
  for (size_t d = in.size(); d-- > 1;) stride[d - 1] = stride[d] * in[d];
  std::vector<int64_t> idx(in.size(), 0);
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += idx[d] * stride[static_cast<size_t>(perm[d])];
    y.SetDouble(i, x.GetDouble(src));
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < y.dim(static_cast<int64_t>(d))) break;
      idx[d] = 0;
    }
  }
  return y;
}

Result<std::vector<TensorType>> InferAttention(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(DataType t, SameDtype(ctx, {0, 1, 2}));
  if (t != DataType::kUndefined && !IsFloatType(t)) return NodeError(ctx.node, "Q, K, V must be floating-point");
  const TensorType *q_in = ctx.input(0), *k_in = ctx.input(1), *v_in = ctx.input(2);
  if (!q_in->has_shape || !k_in->has_shape || !v_in->has_shape) return std::vector<TensorType>{TensorType::Unranked(t)};
  TensorType qt = *q_in, kt = *k_in, vt = *v_in;
  for (auto [x, name] : {std::pair{&qt, "q_perm"}, std::pair{&kt, "k_perm"}, std::pair{&vt, "v_perm"}}) {
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> perm, AttentionLayoutPerm(ctx.node, name, x->dims.size()));
    x->dims = Permuted(x->dims, perm);
  }
  const TensorType *q = &qt, *k = &kt, *v = &vt;
  if (q->rank() < 2 || k->rank() < 2 || v->rank() < 2) return NodeError(ctx.node, "Q, K, V need rank >= 2");
  auto batch = [](const TensorType* x) { return std::vector<Dim>(x->dims.begin(), x->dims.end() - 2); };
  SY_ASSIGN_OR_RETURN(std::vector<Dim> out, BroadcastDims(ctx.node, {batch(q), batch(k), batch(v)}));
  const Dim& dq = q->dims.back();
  const Dim& dk = k->dims.back();
  if (dq.is_static() && dk.is_static() && dq.value != dk.value) {
    return NodeError(ctx.node, "Q and K head sizes differ: " + q->ToString() + " vs " + k->ToString());
  }
  out.push_back(q->dims[q->dims.size() - 2]);
  out.push_back(v->dims.back());
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> out_perm, AttentionLayoutPerm(ctx.node, "out_perm", out.size()));
  return std::vector<TensorType>{TensorType(t, Permuted(out, out_perm))};
}

Result<std::vector<Tensor>> RunAttention(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* q_in, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* k_in, RequireInput(ctx, 1));
  SY_ASSIGN_OR_RETURN(const Tensor* v_in, RequireInput(ctx, 2));
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> q_perm, AttentionLayoutPerm(ctx.node, "q_perm", q_in->shape().size()));
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> k_perm, AttentionLayoutPerm(ctx.node, "k_perm", k_in->shape().size()));
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> v_perm, AttentionLayoutPerm(ctx.node, "v_perm", v_in->shape().size()));
  const Tensor qp = TransposedCopy(*q_in, q_perm), kp = TransposedCopy(*k_in, k_perm),
               vp = TransposedCopy(*v_in, v_perm);
  const Tensor *q = &qp, *k = &kp, *v = &vp;
  if (!IsFloatType(q->dtype()) || k->dtype() != q->dtype() || v->dtype() != q->dtype()) {
    return NodeError(ctx.node, "Q, K, V must share a floating-point dtype");
  }
  if (q->rank() < 2 || k->rank() < 2 || v->rank() < 2) return NodeError(ctx.node, "Q, K, V need rank >= 2");
  const int64_t s = q->dim(q->rank() - 2), d = q->dim(q->rank() - 1);
  const int64_t skv = k->dim(k->rank() - 2), dv = v->dim(v->rank() - 1);
  if (k->dim(k->rank() - 1) != d || v->dim(v->rank() - 2) != skv) {
    return NodeError(ctx.node, "shapes do not match: Q " + ShapeToString(q->shape()) + ", K " +
                                   ShapeToString(k->shape()) + ", V " + ShapeToString(v->shape()));
  }
  auto batch = [](const Tensor* x) { return std::vector<int64_t>(x->shape().begin(), x->shape().end() - 2); };
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> bshape, BroadcastShapes(ctx.node, {batch(q), batch(k), batch(v)}));
  const std::vector<int64_t> qi = BroadcastIndex(batch(q), bshape), ki = BroadcastIndex(batch(k), bshape),
                             vi = BroadcastIndex(batch(v), bshape);
  std::vector<int64_t> sshape = bshape;
  sshape.push_back(s);
  sshape.push_back(skv);
  const Tensor* mask = ctx.input(3);
  std::vector<int64_t> mi;
  std::vector<double> mv;
  if (mask) {
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> ms, BroadcastShapes(ctx.node, {sshape, mask->shape()}));
    if (ms != sshape) return NodeError(ctx.node, "mask " + ShapeToString(mask->shape()) + " does not broadcast to " + ShapeToString(sshape));
    mi = BroadcastIndex(mask->shape(), sshape);
    mv = mask->ToDoubleVector();
  }
  const double scale = ctx.node.GetFloat("scale", 1.0f / std::sqrt(static_cast<float>(d)));
  const bool causal = ctx.node.GetInt("causal", 0) != 0;
  const std::vector<double> qd = q->ToDoubleVector(), kd = k->ToDoubleVector(), vd = v->ToDoubleVector();
  std::vector<int64_t> oshape = bshape;
  oshape.push_back(s);
  oshape.push_back(dv);
  Tensor out(q->dtype(), oshape);
  const int64_t nb = static_cast<int64_t>(qi.size());
  std::vector<double> row(static_cast<size_t>(skv)), acc(static_cast<size_t>(dv));
  for (int64_t b = 0; b < nb; ++b) {
    const double* qb = qd.data() + qi[b] * s * d;
    const double* kb = kd.data() + ki[b] * skv * d;
    const double* vb = vd.data() + vi[b] * skv * dv;
    for (int64_t i = 0; i < s; ++i) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < skv; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) dot += qb[i * d + c] * kb[j * d + c];
        double sc = dot * scale;
        if (mask) sc += mv[static_cast<size_t>(mi[(b * s + i) * skv + j])];
        if (causal && j > i) sc = -std::numeric_limits<double>::infinity();
        row[j] = sc;
        mx = std::max(mx, sc);
      }
      double sum = 0;
      for (int64_t j = 0; j < skv; ++j) sum += (row[j] = std::exp(row[j] - mx));
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < skv; ++j) {
        const double p = row[j] / sum;
        for (int64_t c = 0; c < dv; ++c) acc[c] += p * vb[j * dv + c];
      }
      for (int64_t c = 0; c < dv; ++c) out.SetDouble((b * s + i) * dv + c, acc[c]);
    }
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> out_perm, AttentionLayoutPerm(ctx.node, "out_perm", oshape.size()));
  return std::vector<Tensor>{TransposedCopy(out, out_perm)};
}

}  // namespace

Result<std::vector<int64_t>> AttentionLayoutPerm(const Node& node, const char* name, size_t rank) {
  if (!node.Has(name)) return std::vector<int64_t>{};
  std::vector<int64_t> perm = node.GetInts(name);
  std::vector<char> seen(rank, 0);
  bool ok = perm.size() == rank && rank >= 2 && perm.back() == static_cast<int64_t>(rank) - 1;
  for (int64_t a : perm) {
    ok = ok && a >= 0 && a < static_cast<int64_t>(rank) && !seen[static_cast<size_t>(a)];
    if (ok) seen[static_cast<size_t>(a)] = 1;
  }
  if (!ok) {
    return NodeError(node, std::string(name) + " must permute the " + std::to_string(rank) +
                               " axes and keep the last one last");
  }
  return perm;
}

namespace {
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> st(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) st[d - 1] = st[d] * dims[d];
  return st;
}
}  // namespace

Result<AttentionOperand> AttentionOperandView(const Node& node, const char* perm_attr,
                                              const std::vector<int64_t>& stored) {
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> perm, AttentionLayoutPerm(node, perm_attr, stored.size()));
  return AttentionOperand{Permuted(stored, perm), Permuted(ContiguousStrides(stored), perm)};
}

Result<std::vector<int64_t>> AttentionOutputStrides(const Node& node, const std::vector<int64_t>& logical) {
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> perm, AttentionLayoutPerm(node, "out_perm", logical.size()));
  const std::vector<int64_t> stored = ContiguousStrides(Permuted(logical, perm));
  if (perm.empty()) return stored;
  std::vector<int64_t> st(logical.size(), 0);
  for (size_t i = 0; i < perm.size(); ++i) st[static_cast<size_t>(perm[i])] = stored[i];
  return st;
}

bool AttentionBatchStrides(const AttentionOperand& x, const std::vector<int64_t>& batch, int64_t* out) {
  const size_t r = x.dims.size() - 2, nb = batch.size();
  if (r > nb) return false;
  for (size_t d = 0; d < nb; ++d) {
    out[d] = 0;
    if (d < nb - r) continue;
    const size_t sd = d - (nb - r);
    if (x.dims[sd] == batch[d]) {
      out[d] = batch[d] == 1 ? 0 : x.strides[sd];
    } else if (x.dims[sd] != 1) {
      return false;
    }
  }
  return true;
}

SY_REGISTER_OPS(FusedTransformerOps) {
  reg.Register({kSwitchyardDomain, "LayerNorm", 1, 1, 3, 1, 1, InferLayerNorm, RunLayerNorm});
  reg.Register({kSwitchyardDomain, "Gelu", 1, 1, 1, 1, 1, InferGelu, RunGelu});
  reg.Register({kSwitchyardDomain, "Attention", 1, 3, 4, 1, 1, InferAttention, RunAttention});
}

}  // namespace switchyard::ops
