// Pass fuse_conv_pool (knob fuse.conv_pool): a GlobalAveragePool of a convolution's SiLU
// output (a squeeze-excite block's pooling of its depthwise layer, EfficientNet's head)
// becomes the FusedConv's second output, the channel means of Y. On an nhwc fp32 route
// oneDNN's convolution kernel runs the SiLU after its primitive itself (silu.cc) and adds
// each SiLU result to its channel's sum as it leaves the register, instead of the pooling
// step reading Y again (EfficientNet-B0 b1: 17 pooling steps, 0.2 ms of 5.5 on 2 Xeon cores).
// Only SiLU: with an activation the primitive applies, the means would be a pass of their
// own, and the kernels of Switchyard's own that take such layers (the 1x1 and Winograd
// kernels) write no means. The route must be nhwc fp32 (the means are written for nhwc
// fp32 outputs only; bf16 engines keep their bf16 pooling), without int8 weights.
#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

bool IsSiluConv(const Node& n) {
  return n.domain == kSwitchyardDomain && n.op_type == "FusedConv" && n.outputs.size() == 1 &&
         n.GetString("activation", "") == "SiLU" && !n.Has("post_affine");
}

Status FuseConvPoolSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  for (NodeId ci = 0; ci < static_cast<NodeId>(g.nodes.size()); ++ci) {
    const Node& conv = g.nodes[static_cast<size_t>(ci)];
    if (rw.Touched(ci) || !IsSiluConv(conv)) continue;
    const ValueId y = conv.outputs[0];
    const TensorType& yt = g.value(y).type;
    if (yt.dtype != DataType::kFloat || !yt.has_shape || yt.rank() != 4) continue;
    for (NodeId pi : rw.Consumers(y)) {
      const Node& pool = g.nodes[static_cast<size_t>(pi)];
      if (rw.Touched(pi) || !IsOp(pool, "GlobalAveragePool") || pool.inputs.size() != 1 || pool.outputs.size() != 1) {
        continue;
      }
      Node fused = conv;
      fused.outputs.push_back(pool.outputs[0]);
      rw.Remove(pi);
      rw.Replace(ci, std::move(fused));
      rw.CountChange();
      break;
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunFuseConvPool(Graph& graph, PassContext& ctx) {
  if (ctx.value) {
    if (ctx.value("layout.activations") != "nhwc" || ctx.value("precision") == "bf16" ||
        ctx.value("quant.weights") == "int8") {
      return Status::Ok();
    }
  }
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, FuseConvPoolSweep));
  if (n) ctx.report.fired["fuse.conv_pool"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
