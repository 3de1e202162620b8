// Rewriter and the small matchers shared by the passes.
#include "passes/pattern.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "passes/pass.h"

namespace switchyard::passes {

Rewriter::Rewriter(Graph& graph) : g_(graph) {
  g_.RebuildProducers();
  consumers_ = g_.Consumers();
  is_output_.assign(g_.values.size(), 0);
  for (ValueId o : g_.outputs) is_output_[static_cast<size_t>(o)] = 1;
  touched_.assign(g_.nodes.size(), 0);
  removed_.assign(g_.nodes.size(), 0);
}

bool Rewriter::SingleUse(ValueId v) const {
  return v != kNoValue && !IsGraphOutput(v) && Consumers(v).size() == 1;
}

NodeId Rewriter::Producer(ValueId v) const {
  if (v == kNoValue || static_cast<size_t>(v) >= consumers_.size()) return -1;
  const NodeId p = g_.value(v).producer;
  return p < 0 || Touched(p) ? -1 : p;
}

NodeId Rewriter::SoleConsumer(ValueId v) const {
  if (!SingleUse(v)) return -1;
  const NodeId c = Consumers(v)[0];
  return Touched(c) ? -1 : c;
}

void Rewriter::Remove(NodeId n) {
  touched_[static_cast<size_t>(n)] = 1;
  removed_[static_cast<size_t>(n)] = 1;
}

void Rewriter::Replace(NodeId n, Node node) {
  if (node.domain == kSwitchyardDomain) g_.opsets[kSwitchyardDomain] = 1;
  touched_[static_cast<size_t>(n)] = 1;
  removed_[static_cast<size_t>(n)] = 1;
  replacements_.emplace_back(n, std::move(node));
}

void Rewriter::InsertBefore(NodeId n, Node node) {
  if (node.domain == kSwitchyardDomain) g_.opsets[kSwitchyardDomain] = 1;
  inserts_.emplace_back(n, std::move(node));
}

ValueId Rewriter::NewValue(const std::string& base, TensorType type) {
  std::string name = base;
  for (int i = 1; g_.FindValue(name) != kNoValue; ++i) name = base + "_" + std::to_string(i);
  const ValueId id = g_.AddValue(name, std::move(type));
  consumers_.emplace_back();
  is_output_.push_back(0);
  return id;
}

ValueId Rewriter::NewConstant(const std::string& base, Tensor t) {
  const ValueId id = NewValue(base, TensorType::FromShape(t.dtype(), t.shape()));
  g_.constants[id] = std::move(t);
  return id;
}

void Rewriter::Commit() {
  // Stable: inserts and replacements keep the order in which they were made.
  std::vector<std::vector<Node>> before(g_.nodes.size()), at(g_.nodes.size());
  for (auto& [n, node] : inserts_) before[static_cast<size_t>(n)].push_back(std::move(node));
  for (auto& [n, node] : replacements_) at[static_cast<size_t>(n)].push_back(std::move(node));
  std::vector<Node> out;
  out.reserve(g_.nodes.size() + inserts_.size());
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    for (Node& n : before[i]) out.push_back(std::move(n));
    for (Node& n : at[i]) out.push_back(std::move(n));
    if (!removed_[i]) out.push_back(std::move(g_.nodes[i]));
  }
  g_.nodes = std::move(out);
  g_.RebuildProducers();
  inserts_.clear();
  replacements_.clear();
}

Result<int> RunSweeps(Graph& graph, const std::function<Status(Rewriter&)>& sweep, int max_sweeps) {
  int total = 0;
  // Each sweep either changes something or stops; the bound only guards against a pass
  // that keeps rewriting its own output.
  for (int round = 0; round < max_sweeps; ++round) {
    Rewriter rw(graph);
    SY_RETURN_IF_ERROR(sweep(rw));
    rw.Commit();
    if (rw.changes() == 0) return total;
    total += rw.changes();
  }
  return Status::Internal("a pass did not reach a fixed point after " + std::to_string(max_sweeps) + " sweeps");
}

bool StaticShape(const Graph& g, ValueId v, std::vector<int64_t>* s) {
  if (v == kNoValue) return false;
  const TensorType& t = g.value(v).type;
  if (!t.is_static()) return false;
  *s = t.StaticShape();
  return std::none_of(s->begin(), s->end(), [](int64_t d) { return d == 0; });
}

NodeId MatchResidualAdd(const Rewriter& rw, ValueId v, bool exact_dims, ValueId* other) {
  const Graph& g = rw.graph();
  const NodeId ai = rw.SoleConsumer(v);
  if (ai < 0 || !IsOp(rw.node(ai), "Add")) return -1;
  const Node& add = rw.node(ai);
  const ValueId o = OtherInput(add, v);
  if (o == kNoValue || o == v || g.value(o).type.dtype != g.value(v).type.dtype) return -1;
  const auto same = [&](const TensorType& a) {
    return exact_dims ? SameDims(a, g.value(v).type) : CompatibleDims(a, g.value(v).type);
  };
  if (!same(g.value(o).type) || !same(g.value(add.outputs[0]).type)) return -1;
  *other = o;
  return ai;
}

bool ConstantScalar(const Graph& g, ValueId v, double* out) {
  if (v == kNoValue) return false;
  const Tensor* t = g.Constant(v);
  if (!t || t->numel() != 1 || t->dtype() == DataType::kString) return false;
  *out = t->GetDouble(0);
  return true;
}

bool ConstantScalarIs(const Graph& g, ValueId v, double want, double tol) {
  double x;
  return ConstantScalar(g, v, &x) && std::fabs(x - want) <= tol;
}

bool ConstantInts(const Graph& g, ValueId v, std::vector<int64_t>* out) {
  if (v == kNoValue) return false;
  const Tensor* t = g.Constant(v);
  if (!t || !IsIntegerType(t->dtype())) return false;
  *out = t->ToInt64Vector();
  return true;
}

bool IsFloatValue(const Graph& g, ValueId v) {
  return v != kNoValue && IsFloatType(g.value(v).type.dtype);
}

bool SameDims(const TensorType& a, const TensorType& b) {
  if (!a.has_shape || !b.has_shape || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    const Dim &x = a.dims[i], &y = b.dims[i];
    if (x.is_static() != y.is_static()) return false;
    if (x.is_static() ? x.value != y.value : (x.symbol.empty() || x.symbol != y.symbol)) return false;
  }
  return true;
}

bool CompatibleDims(const TensorType& a, const TensorType& b) {
  if (!a.has_shape || !b.has_shape || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    const Dim &x = a.dims[i], &y = b.dims[i];
    if (x.is_static() != y.is_static()) return false;
    if (x.is_static() && x.value != y.value) return false;
    if (!x.is_static() && !x.symbol.empty() && !y.symbol.empty() && x.symbol != y.symbol) return false;
  }
  return true;
}

bool BroadcastsInto(const TensorType& mask, const TensorType& target) {
  if (!mask.has_shape || !target.has_shape || mask.rank() > target.rank()) return false;
  const size_t off = target.dims.size() - mask.dims.size();
  for (size_t i = 0; i < mask.dims.size(); ++i) {
    const Dim &m = mask.dims[i], &t = target.dims[off + i];
    if (m.is_static() && m.value != 1 && t.is_static() && m.value != t.value) return false;
  }
  return true;
}

bool IsOp(const Node& n, const char* op_type) { return n.domain.empty() && n.op_type == op_type; }

ValueId OtherInput(const Node& n, ValueId v) {
  if (n.inputs.size() != 2) return kNoValue;
  if (n.inputs[0] == v) return n.inputs[1];
  if (n.inputs[1] == v) return n.inputs[0];
  return kNoValue;
}

Node MakeNode(const std::string& op_type, const std::string& domain, const std::string& name,
              std::vector<ValueId> inputs, std::vector<ValueId> outputs) {
  Node n;
  n.op_type = op_type;
  n.domain = domain;
  n.name = name;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

void SetInt(Node& n, const std::string& a, int64_t v) {
  Attribute& at = n.attrs[a] = Attribute{};
  at.kind = Attribute::Kind::kInt;
  at.i = v;
}
void SetFloat(Node& n, const std::string& a, float v) {
  Attribute& at = n.attrs[a] = Attribute{};
  at.kind = Attribute::Kind::kFloat;
  at.f = v;
}
void SetString(Node& n, const std::string& a, const std::string& v) {
  Attribute& at = n.attrs[a] = Attribute{};
  at.kind = Attribute::Kind::kString;
  at.s = v;
}
void SetInts(Node& n, const std::string& a, std::vector<int64_t> v) {
  Attribute& at = n.attrs[a] = Attribute{};
  at.kind = Attribute::Kind::kInts;
  at.ints = std::move(v);
}
void SetFloats(Node& n, const std::string& a, std::vector<float> v) {
  Attribute& at = n.attrs[a] = Attribute{};
  at.kind = Attribute::Kind::kFloats;
  at.floats = std::move(v);
}
void SetStrings(Node& n, const std::string& a, std::vector<std::string> v) {
  Attribute& at = n.attrs[a] = Attribute{};
  at.kind = Attribute::Kind::kStrings;
  at.strings = std::move(v);
}

bool ActivationOf(const Graph& g, const Node& n, ActivationMatch* m) {
  if ((n.domain == kSwitchyardDomain && n.op_type == "Gelu") || IsOp(n, "Gelu")) {
    const std::string approx = n.GetString("approximate", "none");
    if (approx != "none" && approx != "tanh") return false;
    m->name = approx == "tanh" ? "GeluTanh" : "Gelu";
    return true;
  }
  if (!n.domain.empty()) return false;
  const std::string& op = n.op_type;
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish") {
    m->name = op;
    return true;
  }
  if (op == "LeakyRelu") {
    m->name = op;
    m->params = {n.GetFloat("alpha", 0.01f)};
    return true;
  }
  if (op == "HardSigmoid") {
    m->name = op;
    m->params = {n.GetFloat("alpha", 0.2f), n.GetFloat("beta", 0.5f)};
    return true;
  }
  if (op == "Clip") {
    double lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (n.since_version < 11) {
      lo = n.GetFloat("min", static_cast<float>(lo));
      hi = n.GetFloat("max", static_cast<float>(hi));
    } else {
      if (n.HasInput(1) && !ConstantScalar(g, n.inputs[1], &lo)) return false;
      if (n.HasInput(2) && !ConstantScalar(g, n.inputs[2], &hi)) return false;
    }
    m->name = op;
    m->params = {static_cast<float>(lo), static_cast<float>(hi)};
    return true;
  }
  return false;
}

namespace {

// v * (1/6) or v / 6 as the only reader of v: that node, else -1.
NodeId SixthOf(const Rewriter& rw, ValueId v) {
  const NodeId c = rw.SoleConsumer(v);
  if (c < 0) return -1;
  const Node& n = rw.node(c);
  const Graph& g = rw.graph();
  if (IsOp(n, "Mul") && ConstantScalarIs(g, OtherInput(n, v), 1.0 / 6, 1e-6)) return c;
  if (IsOp(n, "Div") && n.inputs.size() == 2 && n.inputs[0] == v && ConstantScalarIs(g, n.inputs[1], 6)) return c;
  return -1;
}

// Keras' relu6(x + 3) as tf2onnx writes it: `add` = Add(in, 3) read only by Clip(·, 0, 6).
// Returns the Clip, else -1.
NodeId Relu6Plus3(const Rewriter& rw, NodeId add, ValueId in) {
  const Node& a = rw.node(add);
  if (rw.Touched(add) || !IsOp(a, "Add") || a.outputs.size() != 1 ||
      !ConstantScalarIs(rw.graph(), OtherInput(a, in), 3)) {
    return -1;
  }
  const NodeId c = rw.SoleConsumer(a.outputs[0]);
  ActivationMatch clip;
  if (c < 0 || !IsOp(rw.node(c), "Clip") || !ActivationOf(rw.graph(), rw.node(c), &clip) ||
      clip.params != std::vector<float>{0.f, 6.f}) {
    return -1;
  }
  return c;
}

// The hard activations in Keras' form: HardSigmoid = relu6(x + 3) / 6 (one reader of x), and
// HardSwish = x * relu6(x + 3) / 6 as (x * relu6(x + 3)) / 6 or x * (relu6(x + 3) / 6).
// The kernels compute them as HardSigmoid(x; 1/6, 1/2) and HardSwish: fp32 rounding only.
bool MatchKerasHardActivation(const Rewriter& rw, ValueId in, ActivationMatch* m) {
  const std::vector<NodeId>& cons = rw.Consumers(in);
  for (size_t k = 0; k < cons.size(); ++k) {
    const NodeId add = cons[k];
    const NodeId clip = Relu6Plus3(rw, add, in);
    if (clip < 0) continue;
    const ValueId relu6 = rw.node(clip).outputs[0];
    std::vector<NodeId> nodes;
    if (cons.size() == 1) {  // relu6(x + 3) / 6
      const NodeId six = SixthOf(rw, relu6);
      if (six < 0) return false;
      *m = ActivationMatch{"HardSigmoid", {1.f / 6, 0.5f}, {add, clip, six}, rw.node(six).outputs[0]};
    } else if (cons.size() == 2) {
      const NodeId mul = cons[1 - k];
      const Node& mn = rw.node(mul);
      if (rw.Touched(mul) || !IsOp(mn, "Mul") || mn.outputs.size() != 1) return false;
      const NodeId six_of_relu6 = SixthOf(rw, relu6), six_of_mul = SixthOf(rw, mn.outputs[0]);
      if (rw.SoleConsumer(relu6) == mul && OtherInput(mn, relu6) == in && six_of_mul >= 0) {
        nodes = {add, clip, mul, six_of_mul};  // (x * relu6(x + 3)) / 6
      } else if (six_of_relu6 >= 0 && rw.SoleConsumer(rw.node(six_of_relu6).outputs[0]) == mul &&
                 OtherInput(mn, rw.node(six_of_relu6).outputs[0]) == in) {
        nodes = {add, clip, six_of_relu6, mul};  // x * (relu6(x + 3) / 6)
      } else {
        return false;
      }
      *m = ActivationMatch{"HardSwish", {}, nodes, rw.node(nodes.back()).outputs[0]};
    } else {
      return false;
    }
    // A constant of higher rank than x would broadcast the result to another shape.
    return SameDims(rw.graph().value(in).type, rw.graph().value(m->out).type);
  }
  return false;
}

// The values of a constant `v` that broadcasts over axis 1 of a rank-`rank` tensor with
// `channels` channels: a scalar, or a shape of rank <= `rank` whose right-aligned dims are
// all 1 but the channel axis (1 or `channels`). One value per channel in *out.
bool ChannelConstant(const Graph& g, ValueId v, int64_t rank, int64_t channels, std::vector<double>* out) {
  const Tensor* t = g.Constant(v);
  if (!t || !IsFloatType(t->dtype()) || t->rank() > rank) return false;
  const int64_t lead = rank - t->rank();
  for (int64_t d = 0; d < t->rank(); ++d) {
    const int64_t size = t->dim(d);
    if (size != 1 && !(lead + d == 1 && size == channels)) return false;
  }
  out->resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) out->at(static_cast<size_t>(c)) = t->GetDouble(t->numel() == 1 ? 0 : c);
  return true;
}

}  // namespace

bool MatchActivation(const Rewriter& rw, ValueId in, ActivationMatch* m) {
  const Graph& g = rw.graph();
  if (in == kNoValue || rw.IsGraphOutput(in) || !IsFloatValue(g, in)) return false;
  const std::vector<NodeId>& cons = rw.Consumers(in);
  *m = ActivationMatch{};
  if (MatchKerasHardActivation(rw, in, m)) return true;
  *m = ActivationMatch{};
  if (cons.size() == 1) {
    const NodeId c = cons[0];
    const Node& n = rw.node(c);
    if (rw.Touched(c) || n.inputs.empty() || n.inputs[0] != in || n.outputs.size() != 1) return false;
    if (!ActivationOf(g, n, m)) return false;
    m->nodes = {c};
    m->out = n.outputs[0];
    return true;
  }
  if (cons.size() != 2) return false;
  // x * Sigmoid(x) and x * HardSigmoid(x; 1/6, 1/2).
  for (int k = 0; k < 2; ++k) {
    const NodeId s = cons[static_cast<size_t>(k)], mul = cons[static_cast<size_t>(1 - k)];
    if (rw.Touched(s) || rw.Touched(mul) || s > mul) continue;
    const Node& sn = rw.node(s);
    const Node& mn = rw.node(mul);
    if (!IsOp(mn, "Mul") || sn.inputs.size() != 1 || sn.inputs[0] != in) continue;
    const ValueId gate = sn.outputs[0];
    if (rw.SoleConsumer(gate) != mul || OtherInput(mn, gate) != in) continue;
    if (IsOp(sn, "Sigmoid")) {
      m->name = "SiLU";
    } else if (IsOp(sn, "HardSigmoid") && std::fabs(sn.GetFloat("alpha", 0.2f) - 1.0 / 6) < 1e-6 &&
               sn.GetFloat("beta", 0.5f) == 0.5f) {
      m->name = "HardSwish";
    } else {
      continue;
    }
    m->nodes = {s, mul};
    m->out = mn.outputs[0];
    return true;
  }
  return false;
}

bool ConstantAffine(const Graph& g, const Node& n, ValueId x, int64_t rank, int64_t channels, std::vector<double>* s,
              std::vector<double>* t) {
  const bool mul = IsOp(n, "Mul"), div = IsOp(n, "Div"), add = IsOp(n, "Add"), sub = IsOp(n, "Sub");
  if (!(mul || div || add || sub) || n.NumInputs() != 2 || n.outputs.size() != 1) return false;
  const ValueId c = OtherInput(n, x);
  if (c == kNoValue || c == x || ((div || sub) && n.inputs[1] != c)) return false;
  std::vector<double> k;
  if (!IsFloatValue(g, x) || !ChannelConstant(g, c, rank, channels, &k)) return false;
  if (div && std::any_of(k.begin(), k.end(), [](double v) { return v == 0.0; })) return false;
  s->assign(static_cast<size_t>(channels), 1.0);
  t->assign(static_cast<size_t>(channels), 0.0);
  for (size_t i = 0; i < k.size(); ++i) {
    if (mul) (*s)[i] = k[i];
    if (div) (*s)[i] = 1.0 / k[i];
    if (add) (*t)[i] = k[i];
    if (sub) (*t)[i] = -k[i];
  }
  return true;
}


}  // namespace switchyard::passes
