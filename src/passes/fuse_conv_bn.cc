// Pass fuse_conv_bn (knob fuse.conv_bn): folds constant per-channel affine maps into the
// weights and bias of the Conv (or ConvTranspose) next to them, computed in fp64 and stored
// once in the weights' dtype:
// - an inference-mode BatchNormalization after the conv: W' = W * s, B' = (B - mean) * s +
//   beta with s = gamma / sqrt(var + eps) per output channel;
// - a Mul, Div, Add or Sub by a constant after the conv (paddle2onnx's learnable affine
//   blocks, TensorFlow's unfolded batch norms), the constant a scalar or one value per
//   output channel (shape [M, 1, ...] or [1, M, 1, ...] right-aligned): W' = W * s,
//   B' = B * s + t;
// - (pass fold_conv_input, after fuse_conv_act, so that the "/ 6" of a HardSwish has
//   become part of the conv's activation first) a Mul or Div by such a constant per input
//   channel in front of a Conv: W'[:, c] = W[:, c] * s[c], exact at the zero padding too
//   (s * 0 = 0); an Add or Sub in front of a Conv without padding: B' = B + sum over c and
//   taps of W[:, c] * t[c] (with padding it would also add t at the padded border, so it
//   stays).
// The folded node must be the conv's only reader (after) or have the conv as its only
// reader (in front), and not the start of an activation fuse_conv_act takes whole (the
// "+ 3" of Keras' relu6(x + 3) / 6).
#include <algorithm>
#include <cmath>

#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

int64_t OutputChannels(const Node& conv, const Tensor& w) {
  // W is [M, C/g, k...] for Conv, [C, M/g, k...] for ConvTranspose.
  return IsOp(conv, "ConvTranspose") ? w.dim(1) * conv.GetInt("group", 1) : w.dim(0);
}

// The conv with W' = W * s and B' = B * s + shift per output channel, writing `out`.
Node ScaleOutputs(Rewriter& rw, const Node& conv, const Tensor& w, const std::vector<double>& s,
                  const std::vector<double>& shift, ValueId out, const char* tag) {
  Graph& g = rw.graph();
  const bool transposed = IsOp(conv, "ConvTranspose");
  const int64_t group = conv.GetInt("group", 1);
  Tensor nw(w.dtype(), w.shape());
  const int64_t per = w.numel() / (w.dim(0) * w.dim(1));  // kernel elements
  const int64_t m_per_g = transposed ? w.dim(1) : 0, c_per_g = transposed ? w.dim(0) / group : 0;
  for (int64_t i0 = 0; i0 < w.dim(0); ++i0) {
    for (int64_t i1 = 0; i1 < w.dim(1); ++i1) {
      const int64_t oc = transposed ? (i0 / c_per_g) * m_per_g + i1 : i0;
      const int64_t base = (i0 * w.dim(1) + i1) * per;
      for (int64_t k = 0; k < per; ++k) nw.SetDouble(base + k, w.GetDouble(base + k) * s[oc]);
    }
  }
  Tensor nb(w.dtype(), {static_cast<int64_t>(s.size())});
  for (size_t c = 0; c < s.size(); ++c) nb.SetDouble(static_cast<int64_t>(c), shift[c]);
  Node fused = conv;
  fused.inputs.resize(3);
  fused.inputs[1] = rw.NewConstant(g.value(conv.inputs[1]).name + tag, std::move(nw));
  fused.inputs[2] = rw.NewConstant(conv.name + tag + "_bias", std::move(nb));
  fused.outputs = {out};
  return fused;
}

// Conv or ConvTranspose with constant float weights (rank >= 3), a constant bias or none,
// and a valid group: its weights and bias in *w and *b.
bool FoldableConv(const Graph& g, const Node& conv, const Tensor** w, const Tensor** b) {
  const bool transposed = IsOp(conv, "ConvTranspose");
  if ((!IsOp(conv, "Conv") && !transposed) || conv.NumInputs() < 2 || conv.outputs.size() != 1) return false;
  *w = g.Constant(conv.inputs[1]);
  *b = conv.HasInput(2) ? g.Constant(conv.inputs[2]) : nullptr;
  if (!*w || (conv.HasInput(2) && !*b) || !IsFloatType((*w)->dtype()) || (*w)->rank() < 3) return false;
  const int64_t group = conv.GetInt("group", 1);
  if (group <= 0 || (transposed && (*w)->dim(0) % group != 0)) return false;
  return !*b || (*b)->numel() == OutputChannels(conv, **w);
}

// A Mul/Div/Add/Sub by a channel constant after the conv (its only reader).
Status FoldAffineAfterSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  for (NodeId ci = 0; ci < static_cast<NodeId>(g.nodes.size()); ++ci) {
    const Node& conv = g.nodes[static_cast<size_t>(ci)];
    const Tensor *w = nullptr, *b = nullptr;
    if (rw.Touched(ci) || !FoldableConv(g, conv, &w, &b)) continue;
    const NodeId ai = rw.SoleConsumer(conv.outputs[0]);
    if (ai < 0) continue;
    const Node& op = g.nodes[static_cast<size_t>(ai)];
    const int64_t m = OutputChannels(conv, *w);
    std::vector<double> s, t;
    if (!ConstantAffine(g, op, conv.outputs[0], w->rank(), m, &s, &t)) continue;
    // The "+ 3" of Keras' relu6(x + 3) / 6 is an activation's: fuse.conv_act takes it whole.
    ActivationMatch act;
    if (MatchActivation(rw, conv.outputs[0], &act)) continue;
    for (int64_t c = 0; c < m; ++c) t[c] += (b ? b->GetDouble(c) : 0.0) * s[c];
    Node fused = ScaleOutputs(rw, conv, *w, s, t, op.outputs[0], "_affine");
    rw.Remove(ci);
    rw.Replace(ai, std::move(fused));
    rw.CountChange();
  }
  return Status::Ok();
}

// Whether a Conv reads no padding: every pad 0, auto_pad NOTSET or VALID.
bool Unpadded(const Node& conv) {
  const std::string auto_pad = conv.GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  for (int64_t p : conv.GetInts("pads")) {
    if (p != 0) return false;
  }
  return true;
}

// A Mul/Div (any Conv) or Add/Sub (an unpadded Conv) by a channel constant whose only
// reader is the Conv's X.
Status FoldAffineBeforeSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  for (NodeId ci = 0; ci < static_cast<NodeId>(g.nodes.size()); ++ci) {
    const Node& conv = g.nodes[static_cast<size_t>(ci)];
    const Tensor *w = nullptr, *b = nullptr;
    if (rw.Touched(ci) || !IsOp(conv, "Conv") || !FoldableConv(g, conv, &w, &b)) continue;
    const NodeId ai = rw.Producer(conv.inputs[0]);
    if (ai < 0 || rw.Touched(ai) || rw.SoleConsumer(conv.inputs[0]) != ci) continue;
    const Node& op = g.nodes[static_cast<size_t>(ai)];
    const int64_t group = conv.GetInt("group", 1), cg = w->dim(1), m = w->dim(0);
    if (m % group != 0 || op.NumInputs() != 2) continue;
    const ValueId x = g.Constant(op.inputs[0]) ? op.inputs[1] : op.inputs[0];
    std::vector<double> s, t;
    if (!ConstantAffine(g, op, x, w->rank(), cg * group, &s, &t)) continue;
    const bool shifts = std::any_of(t.begin(), t.end(), [](double v) { return v != 0.0; });
    if (shifts && !Unpadded(conv)) continue;
    // W[o, j] reads input channel (o / (M / g)) * (C / g) + j.
    Tensor nw(w->dtype(), w->shape());
    std::vector<double> bias(static_cast<size_t>(m));
    const int64_t per = w->numel() / (m * cg);
    for (int64_t o = 0; o < m; ++o) {
      double acc = b ? b->GetDouble(o) : 0.0;
      for (int64_t j = 0; j < cg; ++j) {
        const size_t c = static_cast<size_t>((o / (m / group)) * cg + j);
        const int64_t base = (o * cg + j) * per;
        for (int64_t k = 0; k < per; ++k) {
          const double v = w->GetDouble(base + k);
          nw.SetDouble(base + k, v * s[c]);
          acc += v * t[c];
        }
      }
      bias[static_cast<size_t>(o)] = acc;
    }
    Tensor nb(w->dtype(), {m});
    for (int64_t o = 0; o < m; ++o) nb.SetDouble(o, bias[static_cast<size_t>(o)]);
    Node fused = conv;
    fused.inputs.resize(3);
    fused.inputs[0] = x;
    fused.inputs[1] = rw.NewConstant(g.value(conv.inputs[1]).name + "_in_affine", std::move(nw));
    fused.inputs[2] = rw.NewConstant(conv.name + "_in_affine_bias", std::move(nb));
    rw.Remove(ai);
    rw.Replace(ci, std::move(fused));
    rw.CountChange();
  }
  return Status::Ok();
}

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
    const Tensor *w = nullptr, *b = nullptr;
    if (!FoldableConv(g, conv, &w, &b)) continue;
    const Tensor *gamma = g.Constant(bn.inputs[1]), *beta = g.Constant(bn.inputs[2]),
                 *mean = g.Constant(bn.inputs[3]), *var = g.Constant(bn.inputs[4]);
    if (!gamma || !beta || !mean || !var) continue;
    const int64_t m = OutputChannels(conv, *w);
    if (gamma->numel() != m || beta->numel() != m || mean->numel() != m || var->numel() != m) continue;
    const double eps = bn.GetFloat("epsilon", 1e-5f);
    std::vector<double> s(static_cast<size_t>(m)), shift(static_cast<size_t>(m));
    for (int64_t c = 0; c < m; ++c) {
      s[c] = gamma->GetDouble(c) / std::sqrt(var->GetDouble(c) + eps);
      shift[c] = ((b ? b->GetDouble(c) : 0.0) - mean->GetDouble(c)) * s[c] + beta->GetDouble(c);
    }
    Node fused = ScaleOutputs(rw, conv, *w, s, shift, bn.outputs[0], "_bn");
    rw.Remove(ci);
    rw.Replace(bi, std::move(fused));
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

Status RunFuseConvBn(Graph& graph, PassContext& ctx) {
  // One sweep takes both: a bias Add folded into a ConvTranspose lets the BatchNormalization
  // after it fold next (PP-OCRv4's detection head).
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, [](Rewriter& rw) {
                        SY_RETURN_IF_ERROR(FuseConvBnSweep(rw));
                        return FoldAffineAfterSweep(rw);
                      }));
  if (n) ctx.report.fired["fuse.conv_bn"] += n;
  return Status::Ok();
}

Status RunFoldConvInput(Graph& graph, PassContext& ctx) {
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, FoldAffineBeforeSweep));
  if (n) ctx.report.fired["fuse.conv_bn"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
