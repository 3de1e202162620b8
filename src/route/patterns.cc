// Graph pattern detectors behind the fusion knobs (see patterns.h): the convolution
// fusions, the GEMM epilogue, elementwise chains, row pruning and the node lists; the
// transformer ones (LayerNorm, GELU, attention) are in patterns_transformer.cc.
#include "route/patterns.h"

#include "passes/pass.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace switchyard::route {
namespace {

bool OneOf(const Node* n, std::initializer_list<const char*> ops) {
  if (!n || !(n->domain.empty() || n->domain == "switchyard")) return false;
  for (const char* op : ops) {
    if (n->op_type == op) return true;
  }
  return false;
}

// v * (1/6) or v / 6 as the only reader of v.
const Node* SixthOf(const GraphIndex& g, ValueId v) {
  const Node* n = g.SoleConsumer(v);
  if (GraphIndex::Is(n, "Mul") && g.ScalarNear(GraphIndex::Other(*n, v), 1.0 / 6)) return n;
  if (GraphIndex::Is(n, "Div") && n->inputs.size() == 2 && n->inputs[0] == v && g.ScalarNear(n->inputs[1], 6)) {
    return n;
  }
  return nullptr;
}

// Keras' hard activations as tf2onnx writes them (passes/pattern.cc): relu6(x + 3) / 6 and
// x * relu6(x + 3) / 6, relu6 = Clip(·, 0, 6), the division by 6 before or after the Mul.
bool MatchKerasHardActivation(const GraphIndex& g, ValueId v, std::set<std::string>& nodes) {
  const auto& cons = g.Consumers(v);
  for (size_t k = 0; k < cons.size() && cons.size() <= 2; ++k) {
    const Node* add = &g.graph().nodes[static_cast<size_t>(cons[k])];
    if (!GraphIndex::Is(add, "Add") || !g.ScalarNear(GraphIndex::Other(*add, v), 3)) continue;
    const Node* clip = g.SoleConsumer(add->outputs[0]);
    if (!GraphIndex::Is(clip, "Clip") || clip->inputs.size() != 3 || !g.ScalarNear(clip->inputs[2], 6) ||
        g.Scalar(clip->inputs[1]) != 0.0) {
      return false;
    }
    std::vector<const Node*> found = {add, clip};
    const ValueId relu6 = clip->outputs[0];
    if (cons.size() == 1) {
      found.push_back(SixthOf(g, relu6));
    } else {
      const Node* mul = &g.graph().nodes[static_cast<size_t>(cons[1 - k])];
      if (!GraphIndex::Is(mul, "Mul")) return false;
      const Node* six = SixthOf(g, relu6);
      if (six && g.SoleConsumer(six->outputs[0]) == mul && GraphIndex::Other(*mul, six->outputs[0]) == v) {
        found.insert(found.end(), {six, mul});
      } else if (g.SoleConsumer(relu6) == mul && GraphIndex::Other(*mul, relu6) == v) {
        found.insert(found.end(), {mul, SixthOf(g, mul->outputs[0])});
      } else {
        return false;
      }
    }
    if (std::find(found.begin(), found.end(), nullptr) != found.end()) return false;
    for (const Node* n : found) nodes.insert(n->name);
    return true;
  }
  return false;
}

// The activation epilogue reading `v`, if any: a single activation op, x*Sigmoid(x)
// (SiLU), x*HardSigmoid(x) with alpha 1/6, beta 1/2 (HardSwish), or Keras' forms of
// HardSigmoid and HardSwish (above). Adds its nodes.
bool MatchActivation(const GraphIndex& g, ValueId v, std::set<std::string>& nodes) {
  if (!g.IsGraphOutput(v) && MatchKerasHardActivation(g, v, nodes)) return true;
  if (const Node* c = g.SoleConsumer(v)) {
    if (OneOf(c, {"Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Gelu"})) {
      nodes.insert(c->name);
      return true;
    }
    if (GraphIndex::Is(c, "Clip")) {
      // Bounds become kernel attributes: they must be known at build time.
      for (size_t i = 1; i < c->inputs.size(); ++i) {
        if (c->inputs[i] != kNoValue && !g.IsConst(c->inputs[i])) return false;
      }
      nodes.insert(c->name);
      return true;
    }
    return false;
  }
  const auto& cons = g.Consumers(v);
  if (cons.size() != 2 || g.IsGraphOutput(v)) return false;
  const Node* a = &g.graph().nodes[static_cast<size_t>(cons[0])];
  const Node* b = &g.graph().nodes[static_cast<size_t>(cons[1])];
  if (GraphIndex::Is(a, "Mul")) std::swap(a, b);
  if (!GraphIndex::Is(b, "Mul")) return false;
  const bool silu = GraphIndex::Is(a, "Sigmoid");
  const bool hswish = GraphIndex::Is(a, "HardSigmoid") &&
                      std::abs(a->GetFloat("alpha", 0.2f) - 1.0 / 6) < 1e-3 &&
                      std::abs(a->GetFloat("beta", 0.5f) - 0.5) < 1e-3;
  if (!(silu || hswish) || g.SoleConsumer(a->outputs[0]) != b ||
      GraphIndex::Other(*b, v) != a->outputs[0]) {
    return false;
  }
  nodes.insert(a->name);
  nodes.insert(b->name);
  return true;
}

// A BatchNormalization reading `v` whose parameters are constants (foldable).
const Node* FoldableBn(const GraphIndex& g, ValueId v) {
  const Node* bn = g.SoleConsumer(v);
  if (!GraphIndex::Is(bn, "BatchNormalization") || bn->inputs.size() < 5 || bn->inputs[0] != v ||
      bn->outputs.size() != 1) {
    return nullptr;
  }
  for (size_t i = 1; i < 5; ++i) {
    if (!g.IsConst(bn->inputs[i])) return nullptr;
  }
  return bn;
}

bool IsConv(const Node& n) { return OneOf(&n, {"Conv", "FusedConv"}); }

// A Mul, Div, Add or Sub of `v` by a constant (the constant second for Div and Sub) that
// is v's only reader: fuse.conv_bn folds it into the conv producing or reading v where the
// constant has one value per channel.
const Node* ConstAffine(const GraphIndex& g, const Node* c, ValueId v) {
  if (!OneOf(c, {"Mul", "Div", "Add", "Sub"}) || c->NumInputs() != 2 || c->outputs.size() != 1) return nullptr;
  const ValueId k = GraphIndex::Other(*c, v);
  if (k == kNoValue || k == v || !g.IsConst(k) || !g.IsFloat(v)) return nullptr;
  if (OneOf(c, {"Div", "Sub"}) && c->inputs[1] != k) return nullptr;
  return c;
}

// Past the BatchNormalizations and constant affine maps after a conv's output `y` that
// fuse.conv_bn folds into it (adding their names to *names when given): the value the
// folded conv will produce.
ValueId PastFolded(const GraphIndex& g, ValueId y, std::set<std::string>* names) {
  for (;;) {
    const Node* f = FoldableBn(g, y);
    std::set<std::string> act;
    if (!f && !MatchActivation(g, y, act)) f = ConstAffine(g, g.SoleConsumer(y), y);
    if (!f) return y;
    if (names) names->insert(f->name);
    y = f->outputs[0];
  }
}

}  // namespace

std::vector<std::string> MatchConvBn(const GraphIndex& g) {
  std::set<std::string> names;
  for (const Node& n : g.graph().nodes) {
    if (!(GraphIndex::Is(&n, "Conv") || GraphIndex::Is(&n, "ConvTranspose")) ||
        n.inputs.size() < 2 || !g.IsConst(n.inputs[1])) {
      continue;
    }
    std::set<std::string> found;
    PastFolded(g, n.outputs[0], &found);
    // A constant scale (or, unpadded, shift) in front of a Conv: folded after fuse.conv_act.
    if (GraphIndex::Is(&n, "Conv")) {
      const Node* p = g.Producer(n.inputs[0]);
      if (p && p->NumInputs() == 2 && g.SoleConsumer(n.inputs[0]) == &n) {
        const ValueId x = g.IsConst(p->inputs[0]) ? p->inputs[1] : p->inputs[0];
        if (ConstAffine(g, p, x)) found.insert(p->name);
      }
    }
    if (!found.empty()) {
      names.insert(n.name);
      names.insert(found.begin(), found.end());
    }
  }
  return SortedNames(std::move(names));
}

namespace {

// The chain of Mul/Div/Add/Sub by one-element constants (the constant second for Div and
// Sub) reading `v`, each its value's only reader.
void AddPostAffine(const GraphIndex& g, ValueId v, std::set<std::string>& names) {
  for (const Node* p = g.SoleConsumer(v); p && OneOf(p, {"Mul", "Div", "Add", "Sub"}) && p->NumInputs() == 2;
       p = g.SoleConsumer(v)) {
    const ValueId k = GraphIndex::Other(*p, v);
    if (k == kNoValue || !g.Scalar(k) || (OneOf(p, {"Div", "Sub"}) && p->inputs[1] != k)) return;
    names.insert(p->name);
    v = p->outputs[0];
  }
}

}  // namespace

std::vector<std::string> MatchConvAct(const GraphIndex& g) {
  std::set<std::string> names;
  for (const Node& n : g.graph().nodes) {
    if (!IsConv(n)) continue;
    // Look through what fuse.conv_bn folds into the conv: after it, that is gone.
    ValueId y = PastFolded(g, n.outputs[0], nullptr);
    std::set<std::string> found;
    const Node* c = g.SoleConsumer(y);
    const bool residual = GraphIndex::Is(c, "Add") && !g.IsConst(GraphIndex::Other(*c, y));
    if (residual) found.insert(c->name);  // residual input Z of FusedConv
    std::set<std::string> act;
    if (MatchActivation(g, residual ? c->outputs[0] : y, act)) {
      found.insert(act.begin(), act.end());
      // Scalar-constant Mul/Div/Add/Sub after the activation's last node: the FusedConv's
      // post_affine (CPU targets).
      for (const Node& a : g.graph().nodes) {
        const Node* next = act.count(a.name) ? g.SoleConsumer(a.outputs[0]) : nullptr;
        if (act.count(a.name) && !(next && act.count(next->name))) AddPostAffine(g, a.outputs[0], found);
      }
    }
    if (!found.empty()) {
      names.insert(n.name);
      names.insert(found.begin(), found.end());
    }
  }
  return SortedNames(std::move(names));
}

std::vector<std::string> MatchConvScale(const GraphIndex& g) {
  std::set<std::string> names;
  const Graph& graph = g.graph();
  for (const Node& n : graph.nodes) {
    if (!GraphIndex::Is(&n, "Mul") || n.NumInputs() != 2 || n.outputs.size() != 1) continue;
    // No reader (a graph output) or several: nothing to fuse (found by fuzz: onnx_import).
    const Node* c = g.SoleConsumer(n.outputs[0]);
    if (!c || !IsConv(*c) || c->inputs.size() < 2 || c->inputs[0] != n.outputs[0] || c->HasInput(4) ||
        c->GetInt("group", 1) != 1) {
      continue;
    }
    if (c->HasInput(3) && c->inputs[3] == n.outputs[0]) continue;
    if (!g.IsConst(c->inputs[1]) || g.IsConst(n.inputs[0]) || g.IsConst(n.inputs[1])) continue;
    const TensorType& wt = graph.value(c->inputs[1]).type;
    if (!wt.is_static()) continue;
    const TensorType& out = graph.value(n.outputs[0]).type;
    const TensorType &a = graph.value(n.inputs[0]).type, &b = graph.value(n.inputs[1]).type;
    if (ConvScaleFits(out, a, b, wt.StaticShape()) || ConvScaleFits(out, b, a, wt.StaticShape())) {
      names.insert(n.name);
      names.insert(c->name);
    }
  }
  return SortedNames(std::move(names));
}

std::vector<std::string> MatchConvPool(const GraphIndex& g) {
  std::set<std::string> names;
  for (const Node& n : g.graph().nodes) {
    if (!IsConv(n) || n.outputs.empty()) continue;
    const ValueId y = PastFolded(g, n.outputs[0], nullptr);
    std::set<std::string> act;
    if (!MatchActivation(g, y, act) || act.size() != 2) continue;
    // x * Sigmoid(x): the Mul's output is the activation's.
    const Node* mul = nullptr;
    bool sigmoid = false;
    for (const Node& a : g.graph().nodes) {
      if (!act.count(a.name)) continue;
      if (GraphIndex::Is(&a, "Mul")) mul = &a;
      sigmoid = sigmoid || GraphIndex::Is(&a, "Sigmoid");
    }
    if (!mul || !sigmoid) continue;
    for (NodeId c : g.Consumers(mul->outputs[0])) {
      const Node& pool = g.graph().nodes[static_cast<size_t>(c)];
      if (GraphIndex::Is(&pool, "GlobalAveragePool") && pool.inputs.size() == 1 && g.graph().value(pool.inputs[0]).type.rank() == 4) {
        names.insert(n.name);
        names.insert(pool.name);
      }
    }
  }
  return SortedNames(std::move(names));
}

std::vector<std::string> MatchGemmEpilogue(const GraphIndex& g) {
  std::set<std::string> names;
  for (const Node& n : g.graph().nodes) {
    if (!OneOf(&n, {"MatMul", "Gemm", "FusedMatMul"})) continue;
    ValueId y = n.outputs[0];
    std::set<std::string> found;
    const Node* c = g.SoleConsumer(y);
    if (GraphIndex::Is(c, "Add") && g.IsConst(GraphIndex::Other(*c, y))) {
      found.insert(c->name);
      y = c->outputs[0];
      c = g.SoleConsumer(y);
    }
    // A residual Add (input Z of FusedMatMul), as after attention and FFN projections.
    const ValueId other = c ? GraphIndex::Other(*c, y) : kNoValue;
    if (GraphIndex::Is(c, "Add") && other != kNoValue && other != y && !g.IsConst(other)) {
      found.insert(c->name);
      y = c->outputs[0];
    }
    MatchActivation(g, y, found);
    // The pass turns every Gemm into FusedMatMul (C becomes the bias or residual input),
    // so a Gemm is affected even with nothing after it.
    if (!found.empty() || GraphIndex::Is(&n, "Gemm")) {
      names.insert(n.name);
      names.insert(found.begin(), found.end());
    }
  }
  return SortedNames(std::move(names));
}

namespace {

bool IsElementwise(const GraphIndex& g, const Node& n) {
  static const std::set<std::string> kUnary = {
      "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Sqrt", "Neg", "Abs", "Reciprocal",
      "HardSwish", "HardSigmoid", "LeakyRelu", "Clip", "Gelu"};
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  if (!n.domain.empty() || n.outputs.size() != 1 || !g.IsFloat(n.outputs[0])) return false;
  // All-constant nodes are folded away, not fused.
  if (g.IsConst(n.outputs[0])) return false;
  if (kUnary.count(n.op_type)) return true;
  return kBinary.count(n.op_type) && n.NumInputs() == 2;
}

}  // namespace

std::vector<std::string> MatchElementwise(const GraphIndex& g) {
  std::set<std::string> names;
  for (const Node& n : g.graph().nodes) {
    if (!IsElementwise(g, n)) continue;
    const Node* c = g.SoleConsumer(n.outputs[0]);
    if (c && IsElementwise(g, *c)) {
      names.insert(n.name);
      names.insert(c->name);
    }
  }
  return SortedNames(std::move(names));
}

std::vector<std::string> MatchPruneRows(const GraphIndex& g) {
  std::set<std::string> names;
  for (const Node& n : g.graph().nodes) {
    if (!GraphIndex::Is(&n, "Gather") || n.inputs.size() != 2 || g.IsGraphOutput(n.inputs[0])) continue;
    const std::optional<Tensor> indices = g.ConstValue(n.inputs[1]);
    if (passes::GatherMayMoveUp(n, indices ? &*indices : nullptr, g.Producer(n.inputs[0]))) names.insert(n.name);
  }
  return SortedNames(std::move(names));
}

std::vector<std::string> NodesOfType(const GraphIndex& g, const std::vector<std::string>& op_types) {
  std::set<std::string> names;
  for (const Node& n : g.graph().nodes) {
    if (!(n.domain.empty() || n.domain == "switchyard")) continue;
    if (std::find(op_types.begin(), op_types.end(), n.op_type) != op_types.end()) {
      names.insert(n.name);
    }
  }
  return SortedNames(std::move(names));
}

std::vector<std::string> NodesWithConstWeight(const GraphIndex& g,
                                              const std::vector<std::string>& op_types) {
  std::set<std::string> names;
  for (const Node& n : g.graph().nodes) {
    if (!(n.domain.empty() || n.domain == "switchyard")) continue;
    if (std::find(op_types.begin(), op_types.end(), n.op_type) == op_types.end()) continue;
    if (n.inputs.size() >= 2 && g.IsConst(n.inputs[1])) names.insert(n.name);
  }
  return SortedNames(std::move(names));
}

}  // namespace switchyard::route
