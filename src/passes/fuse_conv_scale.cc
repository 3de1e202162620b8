// Pass fuse_conv_scale (knob fuse.conv_scale): a per-channel Mul in front of a Conv, as a
// squeeze-excite block ends (x * sigmoid(fc(pool(x))) read by the 1x1 projection), becomes
// the conv's input scale S (FusedConv input 4): conv(x * s) = conv with W[:, c] * s[c],
// so the kernel scales the weights per call instead of reading and writing x once more.
// Fused where that is clearly less work: 2 * M * KH * KW <= H * W (ConvScaleFits in
// pass.h: weights per input channel against pixels per channel), the large-image blocks.
// The Mul must be the conv's only reader of x * s and feed its X (not Z); S is
// [1 or N, C, 1, 1], non-constant, float32; the conv has group 1 and constant weights.
// With quant.weights=int8 nothing is fused (int8 weights are quantized at build time).
#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

bool IsScaleAnchor(const Node& n) {
  if (IsOp(n, "Conv")) return true;
  return n.domain == kSwitchyardDomain && n.op_type == "FusedConv" && !n.HasInput(4);
}

Status FuseConvScaleSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  for (NodeId mi = 0; mi < static_cast<NodeId>(g.nodes.size()); ++mi) {
    const Node& mul = g.nodes[static_cast<size_t>(mi)];
    if (rw.Touched(mi) || !IsOp(mul, "Mul") || mul.NumInputs() != 2 || mul.outputs.size() != 1) continue;
    const NodeId ci = rw.SoleConsumer(mul.outputs[0]);
    if (ci < 0 || rw.Touched(ci)) continue;
    const Node& conv = g.nodes[static_cast<size_t>(ci)];
    if (!IsScaleAnchor(conv) || conv.inputs[0] != mul.outputs[0] || conv.GetInt("group", 1) != 1) continue;
    if (conv.HasInput(3) && conv.inputs[3] == mul.outputs[0]) continue;
    const Tensor* w = conv.inputs.size() > 1 ? g.Constant(conv.inputs[1]) : nullptr;
    const ValueId in0 = mul.inputs[0], in1 = mul.inputs[1];
    if (!w || w->rank() != 4) continue;
    const TensorType& out = g.value(mul.outputs[0]).type;
    const bool first_is_x = ConvScaleFits(out, g.value(in0).type, g.value(in1).type, w->shape());
    if (!first_is_x && !ConvScaleFits(out, g.value(in1).type, g.value(in0).type, w->shape())) continue;
    const ValueId x = first_is_x ? in0 : in1, s = first_is_x ? in1 : in0;
    if (g.Constant(s) || g.Constant(x)) continue;
    Node fused = conv;
    fused.op_type = "FusedConv";
    fused.domain = kSwitchyardDomain;
    fused.inputs.resize(5, kNoValue);
    fused.inputs[0] = x;
    fused.inputs[4] = s;
    rw.Remove(mi);
    rw.Replace(ci, std::move(fused));
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

Status RunFuseConvScale(Graph& graph, PassContext& ctx) {
  if (ctx.value && ctx.value("quant.weights") == "int8") return Status::Ok();
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, FuseConvScaleSweep));
  if (n) ctx.report.fired["fuse.conv_scale"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
