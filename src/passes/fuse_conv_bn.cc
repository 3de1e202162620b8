// Pass fuse_conv_bn (knob fuse.conv_bn): folds an inference-mode BatchNormalization into
// the Conv (or ConvTranspose) before it: W' = W * s, B' = (B - mean) * s + beta with
// s = gamma / sqrt(var + eps) per output channel, computed in fp64 and stored once in
// the weights' dtype. The conv output must feed only the BatchNormalization.
#include <cmath>

#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

Status FuseConvBnSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  for (NodeId bi = 0; bi < static_cast<NodeId>(g.nodes.size()); ++bi) {
    const Node& bn = g.nodes[static_cast<size_t>(bi)];
    if (rw.Touched(bi) || !IsOp(bn, "BatchNormalization") || bn.NumInputs() != 5) continue;
    if (bn.GetInt("training_mode", 0) != 0) continue;
    bool extra_outputs = false;
    for (size_t k = 1; k < bn.outputs.size(); ++k) extra_outputs |= bn.outputs[k] != kNoValue;
    if (extra_outputs) continue;
    const NodeId ci = rw.Producer(bn.inputs[0]);
    if (ci < 0 || rw.SoleConsumer(bn.inputs[0]) != bi) continue;
    const Node& conv = g.nodes[static_cast<size_t>(ci)];
    const bool transposed = IsOp(conv, "ConvTranspose");
    if (!IsOp(conv, "Conv") && !transposed) continue;
    const Tensor* w = g.Constant(conv.inputs[1]);
    const Tensor* b = conv.HasInput(2) ? g.Constant(conv.inputs[2]) : nullptr;
    if (!w || (conv.HasInput(2) && !b) || !IsFloatType(w->dtype()) || w->rank() < 3) continue;
    const Tensor *gamma = g.Constant(bn.inputs[1]), *beta = g.Constant(bn.inputs[2]),
                 *mean = g.Constant(bn.inputs[3]), *var = g.Constant(bn.inputs[4]);
    if (!gamma || !beta || !mean || !var) continue;
    const int64_t group = conv.GetInt("group", 1);
    // Output channels: W is [M, C/g, k...] for Conv, [C, M/g, k...] for ConvTranspose.
    const int64_t m = transposed ? w->dim(1) * group : w->dim(0);
    if (gamma->numel() != m || beta->numel() != m || mean->numel() != m || var->numel() != m ||
        (b && b->numel() != m) || group <= 0 || (transposed && w->dim(0) % group != 0)) {
      continue;
    }
    const double eps = bn.GetFloat("epsilon", 1e-5f);
    std::vector<double> s(static_cast<size_t>(m)), shift(static_cast<size_t>(m));
    for (int64_t c = 0; c < m; ++c) {
      s[c] = gamma->GetDouble(c) / std::sqrt(var->GetDouble(c) + eps);
      shift[c] = ((b ? b->GetDouble(c) : 0.0) - mean->GetDouble(c)) * s[c] + beta->GetDouble(c);
    }
    Tensor nw(w->dtype(), w->shape());
    const int64_t per = w->numel() / (w->dim(0) * w->dim(1));  // kernel elements
    const int64_t m_per_g = transposed ? w->dim(1) : 0, c_per_g = transposed ? w->dim(0) / group : 0;
    for (int64_t i0 = 0; i0 < w->dim(0); ++i0) {
      for (int64_t i1 = 0; i1 < w->dim(1); ++i1) {
        const int64_t oc = transposed ? (i0 / c_per_g) * m_per_g + i1 : i0;
        const int64_t base = (i0 * w->dim(1) + i1) * per;
        for (int64_t k = 0; k < per; ++k) nw.SetDouble(base + k, w->GetDouble(base + k) * s[oc]);
      }
    }
    Tensor nb(w->dtype(), {m});
    for (int64_t c = 0; c < m; ++c) nb.SetDouble(c, shift[c]);
    Node fused = conv;
    fused.inputs.resize(3);
    fused.inputs[1] = rw.NewConstant(g.value(conv.inputs[1]).name + "_bn", std::move(nw));
    fused.inputs[2] = rw.NewConstant(conv.name + "_bn_bias", std::move(nb));
    fused.outputs = {bn.outputs[0]};
    rw.Remove(ci);
    rw.Replace(bi, std::move(fused));
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

Status RunFuseConvBn(Graph& graph, PassContext& ctx) {
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, FuseConvBnSweep));
  if (n) ctx.report.fired["fuse.conv_bn"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
