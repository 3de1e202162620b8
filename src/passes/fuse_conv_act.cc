// Pass fuse_conv_act (knob fuse.conv_act): Conv / FusedConv followed by a residual Add
// and/or an activation becomes one switchyard.FusedConv computing act(conv(x) + z). The
// residual must come after the conv and before the activation (relu(conv(x) + y)); an
// Add after the activation is left alone. Every intermediate must have one consumer.
// On CPU targets, scalar-constant Mul/Div/Add/Sub after the activation (paddle2onnx's
// affine blocks: hardswish(y) * s + t in front of a padded depthwise conv, where
// fuse.conv_bn cannot fold the shift) become the FusedConv's post_affine [scale, shift],
// oneDNN's eltwise_linear post-op.
#include <algorithm>
#include <vector>

#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

bool IsConvAnchor(const Node& n) {
  if (IsOp(n, "Conv")) return true;
  return n.domain == kSwitchyardDomain && n.op_type == "FusedConv" && !n.HasInput(3) &&
         n.GetString("activation", "").empty();
}

// Whether some output position of `conv` may read only padding: a begin or end pad at
// least the kernel's extent along its axis (a 1x1 layer with any pad). oneDNN 2.6's
// brgconv (AVX-512) adds a fused residual wrongly in such layers, and crashes with an
// activation after it: a 1x1 stride-2 convolution with pads [1,0,0,1] gave rel L2 0.20
// against conv + z on an AMD EPYC, also when called directly (found by
// tests/route_differential_test.cc). Their residual Add stays a step of its own.
bool PaddingOnlyOutputs(const Graph& g, const Node& conv) {
  const std::vector<int64_t> pads = conv.GetInts("pads");
  if (pads.empty() || conv.inputs.size() < 2) return false;
  std::vector<int64_t> kernel = conv.GetInts("kernel_shape");
  if (kernel.empty()) {
    const TensorType& w = g.value(conv.inputs[1]).type;
    if (!w.has_shape) return true;  // unknown extent: assume the worst
    const std::vector<int64_t> ws = w.StaticShape();
    kernel.assign(ws.begin() + std::min<size_t>(2, ws.size()), ws.end());
  }
  const size_t axes = pads.size() / 2;
  const std::vector<int64_t> dil = conv.GetInts("dilations", std::vector<int64_t>(axes, 1));
  for (size_t i = 0; i < axes && i < kernel.size(); ++i) {
    const int64_t extent = (kernel[i] - 1) * (i < dil.size() ? dil[i] : 1) + 1;
    if (kernel[i] < 0 || pads[i] >= extent || pads[i + axes] >= extent) return true;
  }
  return false;
}

// The scalar-constant Mul/Div/Add/Sub chain reading `v` (each node its value's only
// reader; ConstantAffine with one channel) as one affine map x * scale + shift; its nodes in
// order. False when there is none.
bool MatchPostAffine(const Rewriter& rw, ValueId v, double* scale, double* shift, std::vector<NodeId>* nodes) {
  const Graph& g = rw.graph();
  *scale = 1.0;
  *shift = 0.0;
  std::vector<double> s, t;
  for (NodeId ni = rw.SoleConsumer(v); ni >= 0; ni = rw.SoleConsumer(v)) {
    const Node& n = rw.node(ni);
    if (!ConstantAffine(g, n, v, g.value(v).type.rank(), 1, &s, &t)) break;
    *scale *= s[0];
    *shift = *shift * s[0] + t[0];
    nodes->push_back(ni);
    v = n.outputs[0];
  }
  return !nodes->empty();
}

Status FuseConvActSweep(Rewriter& rw, bool post_affine) {
  Graph& g = rw.graph();
  for (NodeId ci = 0; ci < static_cast<NodeId>(g.nodes.size()); ++ci) {
    const Node& conv = g.nodes[static_cast<size_t>(ci)];
    if (rw.Touched(ci) || !IsConvAnchor(conv) || conv.outputs.size() != 1) continue;
    const ValueId y = conv.outputs[0];
    if (!IsFloatValue(g, y)) continue;
    std::vector<NodeId> absorbed;
    ValueId cur = y, z = kNoValue;
    // Residual: Add(conv_out, other) of the same shape and dtype.
    const NodeId ai = PaddingOnlyOutputs(g, conv) ? -1 : MatchResidualAdd(rw, y, /*exact_dims=*/false, &z);
    if (ai >= 0) {
      absorbed.push_back(ai);
      cur = g.nodes[static_cast<size_t>(ai)].outputs[0];
    }
    ActivationMatch act;
    const bool has_act = MatchActivation(rw, cur, &act);
    if (has_act) absorbed.insert(absorbed.end(), act.nodes.begin(), act.nodes.end());
    if (absorbed.empty()) continue;
    double scale = 1, shift = 0;
    std::vector<NodeId> affine;
    const bool has_post = has_act && post_affine && MatchPostAffine(rw, act.out, &scale, &shift, &affine);
    if (has_post) absorbed.insert(absorbed.end(), affine.begin(), affine.end());
    Node fused = conv;
    fused.op_type = "FusedConv";
    fused.domain = kSwitchyardDomain;
    fused.inputs.resize(4, kNoValue);
    fused.inputs[3] = z;
    while (!fused.inputs.empty() && fused.inputs.back() == kNoValue) fused.inputs.pop_back();
    SetString(fused, "activation", has_act ? act.name : "");
    SetFloats(fused, "activation_params", has_act ? act.params : std::vector<float>{});
    if (has_post) SetFloats(fused, "post_affine", {static_cast<float>(scale), static_cast<float>(shift)});
    fused.outputs = {has_post ? g.nodes[static_cast<size_t>(affine.back())].outputs[0] : has_act ? act.out : cur};
    rw.Remove(ci);
    for (size_t k = 0; k + 1 < absorbed.size(); ++k) rw.Remove(absorbed[k]);
    rw.Replace(absorbed.back(), std::move(fused));
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

Status RunFuseConvAct(Graph& graph, PassContext& ctx) {
  const bool post_affine = !ctx.target.IsCuda();
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, [post_affine](Rewriter& rw) { return FuseConvActSweep(rw, post_affine); }));
  if (n) ctx.report.fired["fuse.conv_act"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
