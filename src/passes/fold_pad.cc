// Pass fold_pad (always on): a zero-valued constant-mode Pad of the spatial axes whose only
// readers are Convs (as their data input, explicit pads) becomes those Convs' own padding.
// TensorFlow's explicit and SAME paddings reach ONNX this way (tf2onnx writes a Pad node in
// front of the Conv), and the Pad was a step of its own copying the whole activation into
// a larger buffer. The values are the same: the convolution reads the same zeros.
#include <algorithm>

#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

// The Pad's pads ([begin per axis..., end per axis...]) when it pads with zeros in constant
// mode over `rank` axes; false otherwise.
bool ZeroPads(const Graph& g, const Node& pad, size_t rank, std::vector<int64_t>* pads) {
  if (pad.GetString("mode", "constant") != "constant") return false;
  if (pad.since_version < 11) {
    *pads = pad.GetInts("pads");
    if (pad.GetFloat("value", 0.f) != 0.f) return false;
  } else {
    if (!pad.HasInput(1) || !ConstantInts(g, pad.inputs[1], pads)) return false;
    double value = 0;
    if (pad.HasInput(2) && (!ConstantScalar(g, pad.inputs[2], &value) || value != 0)) return false;
    if (pad.HasInput(3)) return false;  // axes (opset 18): not taken here
  }
  return pads->size() == 2 * rank;
}

Status FoldPadSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  for (NodeId pi = 0; pi < static_cast<NodeId>(g.nodes.size()); ++pi) {
    const Node& pad = g.nodes[static_cast<size_t>(pi)];
    if (rw.Touched(pi) || !IsOp(pad, "Pad") || pad.inputs.empty() || pad.outputs.size() != 1) continue;
    const ValueId y = pad.outputs[0];
    const TensorType& xt = g.value(pad.inputs[0]).type;
    if (!xt.has_shape || xt.dims.size() < 3 || rw.IsGraphOutput(y) || !IsFloatValue(g, y)) continue;
    const size_t rank = xt.dims.size(), spatial = rank - 2;
    std::vector<int64_t> pads;
    if (!ZeroPads(g, pad, rank, &pads)) continue;
    // Batch and channel axes unpadded, no cropping (negative pads).
    if (pads[0] || pads[1] || pads[rank] || pads[rank + 1] ||
        std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) {
      continue;
    }
    const std::vector<NodeId>& cons = rw.Consumers(y);
    const bool all_convs = !cons.empty() && std::all_of(cons.begin(), cons.end(), [&](NodeId c) {
      const Node& n = rw.node(c);
      return !rw.Touched(c) && IsOp(n, "Conv") && n.inputs[0] == y &&
             std::count(n.inputs.begin(), n.inputs.end(), y) == 1 &&
             n.GetString("auto_pad", "NOTSET") == "NOTSET" &&
             (!n.Has("pads") || n.GetInts("pads").size() == 2 * spatial);
    });
    if (!all_convs) continue;
    for (NodeId c : cons) {
      Node conv = rw.node(c);
      std::vector<int64_t> cp = conv.GetInts("pads", std::vector<int64_t>(2 * spatial, 0));
      for (size_t i = 0; i < spatial; ++i) {
        cp[i] += pads[2 + i];                     // begin of spatial axis i
        cp[spatial + i] += pads[rank + 2 + i];    // its end
      }
      SetInts(conv, "pads", cp);
      conv.inputs[0] = pad.inputs[0];
      rw.Replace(c, std::move(conv));
    }
    rw.Remove(pi);
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

Status RunFoldPad(Graph& graph, PassContext& ctx) {
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, FoldPadSweep));
  if (n) ctx.report.fired["fold_pad"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
