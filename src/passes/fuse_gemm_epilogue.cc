// Pass fuse_gemm_epilogue (knob fuse.gemm_epilogue): MatMul or Gemm with what follows it
// becomes one switchyard.FusedMatMul computing act(alpha·A·B + bias + z):
//   MatMul(A, B) [+ constant bias along the last dim] [+ residual z] [activation]
// (an activation behind a Reshape of the result too: the Reshape then follows the fused node;
// likewise a residual Add behind that Reshape, the residual reshaped to the GEMM's shape)
// (a MatMul with nothing to absorb is left alone), and every Gemm: its C becomes the bias
// when C is constant and broadcasts along the last dim only (scaled by beta in fp64),
// the residual z when beta = 1 otherwise. Intermediates must have one consumer.
#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

// A constant that only varies along the last dim of `out` ([N], [1,..,1,N] or one
// element), as a 1-D [N] tensor (scaled by `beta`).
bool BiasAlongLastDim(const Graph& g, ValueId c, const TensorType& out, double beta, Tensor* bias) {
  const Tensor* t = g.Constant(c);
  if (!t || !out.has_shape || out.rank() < 1 || t->rank() > out.rank()) return false;
  if (t->dtype() != out.dtype) return false;
  const Dim& nd = out.dims.back();
  int64_t n;
  if (t->numel() == 1) {
    if (!nd.is_static()) return false;
    n = nd.value;
  } else {
    for (int64_t i = 0; i + 1 < t->rank(); ++i) {
      if (t->dim(i) != 1) return false;
    }
    n = t->shape().back();
    if (!nd.is_static() || nd.value != n) return false;
  }
  Tensor b(t->dtype(), {n});
  for (int64_t i = 0; i < n; ++i) b.SetDouble(i, beta * t->GetDouble(t->numel() == 1 ? 0 : i));
  *bias = std::move(b);
  return true;
}

Status FuseGemmEpilogueSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  for (NodeId mi = 0; mi < static_cast<NodeId>(g.nodes.size()); ++mi) {
    const Node& mm = g.nodes[static_cast<size_t>(mi)];
    const bool gemm = IsOp(mm, "Gemm");
    if (rw.Touched(mi) || (!gemm && !IsOp(mm, "MatMul")) || mm.outputs.size() != 1) continue;
    const ValueId y = mm.outputs[0];
    const TensorType& at = g.value(mm.inputs[0]).type;
    const TensorType& bt = g.value(mm.inputs[1]).type;
    if (!IsFloatValue(g, y) || at.rank() < 2 || bt.rank() < 2) continue;
    Node fused = MakeNode("FusedMatMul", kSwitchyardDomain, mm.name, {mm.inputs[0], mm.inputs[1]}, {});
    ValueId bias = kNoValue, z = kNoValue, cur = y;
    std::vector<NodeId> absorbed;
    if (gemm) {
      SetInt(fused, "trans_a", mm.GetInt("transA", 0));
      SetInt(fused, "trans_b", mm.GetInt("transB", 0));
      SetFloat(fused, "alpha", mm.GetFloat("alpha", 1.0f));
      const double beta = mm.GetFloat("beta", 1.0f);
      if (mm.HasInput(2)) {
        Tensor b;
        if (BiasAlongLastDim(g, mm.inputs[2], g.value(y).type, beta, &b)) {
          bias = rw.NewConstant(mm.name + "_bias", std::move(b));
        } else if (beta == 1.0 && CompatibleDims(g.value(mm.inputs[2]).type, g.value(y).type)) {
          z = mm.inputs[2];
        } else {
          continue;
        }
      }
    }
    // Constant bias Add.
    if (bias == kNoValue && z == kNoValue) {
      const NodeId ai = rw.SoleConsumer(cur);
      if (ai >= 0 && IsOp(g.nodes[static_cast<size_t>(ai)], "Add")) {
        const Node& add = g.nodes[static_cast<size_t>(ai)];
        Tensor b;
        const ValueId c = OtherInput(add, cur);
        if (c != kNoValue && BiasAlongLastDim(g, c, g.value(cur).type, 1.0, &b)) {
          bias = rw.NewConstant(mm.name + "_bias", std::move(b));
          absorbed.push_back(ai);
          cur = add.outputs[0];
        }
      }
    }
    // Residual Add of the same shape.
    if (z == kNoValue) {
      const NodeId ai = MatchResidualAdd(rw, cur, /*exact_dims=*/false, &z);
      if (ai >= 0) {
        absorbed.push_back(ai);
        cur = g.nodes[static_cast<size_t>(ai)].outputs[0];
      }
    }
    ActivationMatch act;
    bool has_act = MatchActivation(rw, cur, &act);
    // act(Reshape(y)) = Reshape(act(y)) for an elementwise activation: the activation
    // behind a Reshape (a 2-D Gemm between two Reshapes, as exporters write Linear layers
    // of 3-D activations: GPT-2's MLP) moves into the epilogue; the Reshape stays after.
    NodeId reshape = -1;
    if (!has_act && !rw.IsGraphOutput(cur)) {
      const NodeId ri = rw.SoleConsumer(cur);
      if (ri >= 0 && !rw.Touched(ri) && IsOp(g.nodes[static_cast<size_t>(ri)], "Reshape") &&
          g.nodes[static_cast<size_t>(ri)].inputs[0] == cur &&
          MatchActivation(rw, g.nodes[static_cast<size_t>(ri)].outputs[0], &act)) {
        has_act = true;
        reshape = ri;
      }
    }
    // Reshape(y) + r = Reshape(y + Reshape(r, y's shape)): a residual Add behind the
    // Reshape of a 2-D Gemm (GPT-2's attention and MLP projections) moves into the
    // epilogue, r reshaped to the GEMM's output shape (a view where the target has them).
    NodeId residual_add = -1;
    ValueId residual = kNoValue;
    if (!has_act && z == kNoValue && !rw.IsGraphOutput(cur) && g.value(cur).type.is_static()) {
      const NodeId ri = rw.SoleConsumer(cur);
      if (ri >= 0 && IsOp(g.nodes[static_cast<size_t>(ri)], "Reshape") && g.nodes[static_cast<size_t>(ri)].inputs[0] == cur) {
        residual_add = MatchResidualAdd(rw, g.nodes[static_cast<size_t>(ri)].outputs[0], /*exact_dims=*/true, &residual);
        if (residual_add >= 0) reshape = ri;
      }
    }
    if (!has_act && !gemm && absorbed.empty() && residual_add < 0) continue;
    fused.inputs = {mm.inputs[0], mm.inputs[1], bias, z};
    while (fused.inputs.back() == kNoValue) fused.inputs.pop_back();
    SetString(fused, "activation", has_act ? act.name : "");
    SetFloats(fused, "activation_params", has_act ? act.params : std::vector<float>{});
    if (residual_add >= 0) {
      // Reshape(r) -> z; FusedMatMul(..., z) -> y'; the Reshape maps y' to the Add's output.
      // All three go where the Add was (the residual is computed by then).
      const TensorType y_type = g.value(cur).type;
      const std::vector<int64_t> dims = y_type.StaticShape();
      const Node& add = g.nodes[static_cast<size_t>(residual_add)];
      const ValueId shape = rw.NewConstant(mm.name + "_residual_shape",
                                           Tensor::FromInt64(dims, {static_cast<int64_t>(dims.size())}));
      const ValueId zr = rw.NewValue(mm.name + "_residual", y_type);
      Node zrs = MakeNode("Reshape", "", mm.name + "_residual_reshape", {residual, shape}, {zr});
      fused.inputs = {mm.inputs[0], mm.inputs[1], bias, zr};  // an omitted bias stays omitted
      Node rs = g.nodes[static_cast<size_t>(reshape)];
      const ValueId pre = rw.NewValue(mm.name + "_sum", y_type);
      rs.inputs[0] = pre;
      rs.outputs = {add.outputs[0]};
      fused.outputs = {pre};
      rw.Remove(mi);
      for (NodeId a : absorbed) rw.Remove(a);
      rw.Remove(reshape);
      rw.Replace(residual_add, std::move(zrs));
      rw.Replace(residual_add, std::move(fused));
      rw.Replace(residual_add, std::move(rs));
      rw.CountChange();
      continue;
    }
    if (reshape >= 0) {
      // FusedMatMul -> y' (y's type); the Reshape now maps y' to the activation's output.
      const TensorType y_type = g.value(cur).type;
      Node rs = g.nodes[static_cast<size_t>(reshape)];
      const ValueId pre = rw.NewValue(mm.name + "_act", y_type);
      rs.inputs[0] = pre;
      rs.outputs = {act.out};
      fused.outputs = {pre};
      rw.Replace(reshape, std::move(rs));
      for (NodeId a : act.nodes) rw.Remove(a);
    } else {
      if (has_act) {
        absorbed.insert(absorbed.end(), act.nodes.begin(), act.nodes.end());
        cur = act.out;
      }
      fused.outputs = {cur};
    }
    // The fused node takes the place of the last node it absorbs before any Reshape (its
    // inputs, a residual included, are all computed by then).
    if (absorbed.empty()) {
      rw.Replace(mi, std::move(fused));
    } else {
      rw.Remove(mi);
      for (size_t k = 0; k + 1 < absorbed.size(); ++k) rw.Remove(absorbed[k]);
      rw.Replace(absorbed.back(), std::move(fused));
    }
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

Status RunFuseGemmEpilogue(Graph& graph, PassContext& ctx) {
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, FuseGemmEpilogueSweep));
  if (n) ctx.report.fired["fuse.gemm_epilogue"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
