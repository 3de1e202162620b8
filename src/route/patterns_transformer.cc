// Graph pattern detectors of the transformer fusions (see patterns.h): LayerNorm, GELU
// (erf and tanh forms) and attention.
#include <cmath>
#include <set>

#include "route/patterns.h"

namespace switchyard::route {

std::vector<std::string> MatchLayerNorm(const GraphIndex& g) {
  std::set<std::string> names;
  // ONNX LayerNormalization becomes the same kernel (when its extra outputs are unused).
  for (const Node& n : g.graph().nodes) {
    if (!GraphIndex::Is(&n, "LayerNormalization")) continue;
    bool extra_used = false;
    for (size_t i = 1; i < n.outputs.size(); ++i) {
      extra_used |= n.outputs[i] != kNoValue &&
                    (!g.Consumers(n.outputs[i]).empty() || g.IsGraphOutput(n.outputs[i]));
    }
    if (!extra_used) names.insert(n.name);
  }
  // Matched backwards from the Div: (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps).
  for (const Node& div : g.graph().nodes) {
    if (!GraphIndex::Is(&div, "Div") || div.inputs.size() != 2) continue;
    const ValueId d = div.inputs[0];
    const Node* sqrt = g.Producer(div.inputs[1]);
    if (!GraphIndex::Is(sqrt, "Sqrt")) continue;
    const Node* add = g.Producer(sqrt->inputs[0]);
    if (!GraphIndex::Is(add, "Add") || add->inputs.size() != 2) continue;
    const Node* var = g.Producer(add->inputs[0]);
    ValueId eps = add->inputs[1];
    if (!GraphIndex::Is(var, "ReduceMean")) {
      var = g.Producer(add->inputs[1]);
      eps = add->inputs[0];
    }
    if (!GraphIndex::Is(var, "ReduceMean") || !g.IsConst(eps)) continue;
    // d^2 as Pow(d, 2) or Mul(d, d).
    const Node* pow = g.Producer(var->inputs[0]);
    const bool square =
        pow && pow->inputs.size() == 2 && pow->inputs[0] == d &&
        ((GraphIndex::Is(pow, "Pow") && g.ScalarNear(pow->inputs[1], 2.0)) ||
         (GraphIndex::Is(pow, "Mul") && pow->inputs[1] == d));
    if (!square) continue;
    const Node* sub = g.Producer(d);
    if (!GraphIndex::Is(sub, "Sub") || sub->inputs.size() != 2) continue;
    const Node* mean = g.Producer(sub->inputs[1]);
    if (!GraphIndex::Is(mean, "ReduceMean") || mean->inputs[0] != sub->inputs[0]) continue;
    std::set<std::string> found = {mean->name, sub->name, pow->name, var->name,
                                   add->name,  sqrt->name, div.name};
    // Optional affine: * scale, + bias (constants).
    ValueId y = div.outputs[0];
    const Node* c = g.SoleConsumer(y);
    if (GraphIndex::Is(c, "Mul") && g.IsConst(GraphIndex::Other(*c, y))) {
      found.insert(c->name);
      y = c->outputs[0];
      c = g.SoleConsumer(y);
    }
    if (GraphIndex::Is(c, "Add") && g.IsConst(GraphIndex::Other(*c, y))) found.insert(c->name);
    names.insert(found.begin(), found.end());
  }
  return SortedNames(std::move(names));
}

namespace {

// Given a = 1 + f(x), matches the product x * 0.5 * a in any association. Adds its nodes.
bool MatchHalfXTimes(const GraphIndex& g, ValueId a, ValueId x, std::set<std::string>& nodes) {
  const Node* m1 = g.SoleConsumer(a);
  if (!GraphIndex::Is(m1, "Mul")) return false;
  const ValueId o = GraphIndex::Other(*m1, a);
  if (o == kNoValue) return false;
  if (o == x || g.ScalarNear(o, 0.5)) {
    // (x * a) * 0.5  or  (a * 0.5) * x; "* 0.5" may also be "/ 2".
    const Node* m2 = g.SoleConsumer(m1->outputs[0]);
    if (!m2 || m2->inputs.size() != 2) return false;
    const ValueId rest = GraphIndex::Other(*m2, m1->outputs[0]);
    bool ok = false;
    if (o == x) {
      ok = (GraphIndex::Is(m2, "Mul") && g.ScalarNear(rest, 0.5)) ||
           (GraphIndex::Is(m2, "Div") && m2->inputs[1] == rest && g.ScalarNear(rest, 2.0));
    } else {
      ok = GraphIndex::Is(m2, "Mul") && rest == x;
    }
    if (!ok) return false;
    nodes.insert({m1->name, m2->name});
    return true;
  }
  // (x * 0.5) * a
  const Node* half = g.Producer(o);
  if (!GraphIndex::Is(half, "Mul") || g.SoleConsumer(o) != m1) return false;
  const ValueId hx = GraphIndex::Other(*half, x);
  if (hx == kNoValue || !g.ScalarNear(hx, 0.5)) return false;
  nodes.insert({half->name, m1->name});
  return true;
}

// The operand of a Mul by a constant near `c` (either side), or kNoValue.
ValueId MulByConst(const GraphIndex& g, const Node* n, double c) {
  if (!GraphIndex::Is(n, "Mul") || n->inputs.size() != 2) return kNoValue;
  if (g.ScalarNear(n->inputs[1], c)) return n->inputs[0];
  if (g.ScalarNear(n->inputs[0], c)) return n->inputs[1];
  return kNoValue;
}

// Whether `v` is x^3, as Pow(x, 3) or x*(x*x) in either order. Adds its nodes.
bool Cube(const GraphIndex& g, ValueId v, ValueId x, std::set<std::string>& nodes) {
  const Node* n = g.Producer(v);
  if (GraphIndex::Is(n, "Pow") && n->inputs.size() == 2 && n->inputs[0] == x &&
      g.ScalarNear(n->inputs[1], 3.0)) {
    nodes.insert(n->name);
    return true;
  }
  if (!GraphIndex::Is(n, "Mul") || n->inputs.size() != 2) return false;
  const ValueId sq = GraphIndex::Other(*n, x);
  const Node* m = g.Producer(sq);
  if (!GraphIndex::Is(m, "Mul") || m->inputs.size() != 2 || m->inputs[0] != x ||
      m->inputs[1] != x) {
    return false;
  }
  nodes.insert({n->name, m->name});
  return true;
}

}  // namespace

std::vector<std::string> MatchGelu(const GraphIndex& g) {
  std::set<std::string> names;
  for (const Node& n : g.graph().nodes) {
    std::set<std::string> found = {n.name};
    ValueId x = kNoValue;
    if (GraphIndex::Is(&n, "Erf")) {
      // Erf(x / sqrt(2)) or Erf(x * (1/sqrt(2))).
      const Node* p = g.Producer(n.inputs[0]);
      if (GraphIndex::Is(p, "Div") && g.ScalarNear(p->inputs[1], std::sqrt(2.0))) {
        x = p->inputs[0];
      } else {
        x = MulByConst(g, p, 1 / std::sqrt(2.0));
      }
      if (x == kNoValue) continue;
      found.insert(p->name);
    } else if (GraphIndex::Is(&n, "Tanh")) {
      // Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)), x^3 as Pow(x, 3) or x*(x*x).
      const Node* p = g.Producer(n.inputs[0]);
      const ValueId u = MulByConst(g, p, std::sqrt(2.0 / M_PI));
      const Node* add = g.Producer(u);
      if (!GraphIndex::Is(add, "Add") || add->inputs.size() != 2) continue;
      for (int side = 0; side < 2 && x == kNoValue; ++side) {
        const Node* cube_mul = g.Producer(add->inputs[static_cast<size_t>(side)]);
        const ValueId other = add->inputs[static_cast<size_t>(1 - side)];
        std::set<std::string> cube;
        if (Cube(g, MulByConst(g, cube_mul, 0.044715), other, cube)) {
          x = other;
          found.insert({p->name, add->name, cube_mul->name});
          found.insert(cube.begin(), cube.end());
        }
      }
      if (x == kNoValue) continue;
    } else {
      continue;
    }
    const Node* one = g.SoleConsumer(n.outputs[0]);
    if (!GraphIndex::Is(one, "Add") || !g.ScalarNear(GraphIndex::Other(*one, n.outputs[0]), 1.0)) {
      continue;
    }
    found.insert(one->name);
    if (MatchHalfXTimes(g, one->outputs[0], x, found)) names.insert(found.begin(), found.end());
  }
  return SortedNames(std::move(names));
}

namespace {

// If `v` is a Div or Mul of `x` by a constant, returns that node (x in *x).
const Node* ScaledByConst(const GraphIndex& g, ValueId v, ValueId* x) {
  const Node* p = g.Producer(v);
  if (!p || p->inputs.size() != 2 || !p->domain.empty()) return nullptr;
  if ((p->op_type == "Div" || p->op_type == "Mul") && g.IsConst(p->inputs[1])) {
    *x = p->inputs[0];
    return p;
  }
  if (p->op_type == "Mul" && g.IsConst(p->inputs[0])) {
    *x = p->inputs[1];
    return p;
  }
  return nullptr;
}

// Q·Kᵀ scores `v`, possibly through a few Div/Mul by constants (each read only by the
// next): adds the MatMul and scale nodes.
bool MatchScores(const GraphIndex& g, ValueId v, std::set<std::string>& nodes) {
  std::set<std::string> found;
  for (int depth = 0; depth < 8; ++depth) {
    const Node* p = g.Producer(v);
    if (GraphIndex::Is(p, "MatMul")) {
      found.insert(p->name);
      // The scale may also sit on Q (PyTorch's MultiheadAttention): Attention absorbs it.
      ValueId q = kNoValue;
      const Node* q_scale = ScaledByConst(g, p->inputs[0], &q);
      if (q_scale && g.SoleConsumer(p->inputs[0]) == p) found.insert(q_scale->name);
      nodes.insert(found.begin(), found.end());
      return true;
    }
    ValueId raw = kNoValue;
    const Node* scale = ScaledByConst(g, v, &raw);
    if (!scale || g.SoleConsumer(raw) != scale) return false;
    found.insert(scale->name);
    v = raw;
  }
  return false;
}

}  // namespace

std::vector<std::string> MatchAttention(const GraphIndex& g) {
  std::set<std::string> names;
  for (const Node& sm : g.graph().nodes) {
    if (!GraphIndex::Is(&sm, "Softmax")) continue;
    // Softmax over the last axis only (the key axis).
    const TensorType& t = g.graph().value(sm.inputs[0]).type;
    const int64_t axis = sm.GetInt("axis", g.graph().Opset() >= 13 ? -1 : 1);
    if (axis != -1 && !(t.has_shape && axis == t.rank() - 1)) continue;
    const Node* out_mm = g.SoleConsumer(sm.outputs[0]);
    if (!GraphIndex::Is(out_mm, "MatMul") || out_mm->inputs[0] != sm.outputs[0]) continue;
    std::set<std::string> found = {sm.name, out_mm->name};
    // Optional mask between the scores and the Softmax: an additive Add, or a Where that
    // fills masked positions (GPT-2's causal mask).
    const ValueId in = sm.inputs[0];
    const Node* mask = g.Producer(in);
    std::vector<ValueId> candidates = {in};
    if (g.SoleConsumer(in) == &sm && GraphIndex::Is(mask, "Add") && mask->inputs.size() == 2) {
      candidates = mask->inputs;
    } else if (g.SoleConsumer(in) == &sm && GraphIndex::Is(mask, "Where") &&
               mask->inputs.size() == 3) {
      candidates = {mask->inputs[1], mask->inputs[2]};  // scores on either side
    } else {
      mask = nullptr;
    }
    bool matched = false;
    for (ValueId c : candidates) {
      if (matched || (mask && g.SoleConsumer(c) != mask)) continue;
      matched = MatchScores(g, c, found);
    }
    if (!matched) continue;
    if (mask) found.insert(mask->name);
    names.insert(found.begin(), found.end());
  }
  return SortedNames(std::move(names));
}

}  // namespace switchyard::route
