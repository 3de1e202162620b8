// GraphIndex: producers, consumers and small constant values of a graph (patterns.h).
#include <cmath>

#include "reference/op_registry.h"
#include "route/patterns.h"

namespace switchyard::route {
namespace {

// Largest constant (sum of input elements) evaluated here: scalars and small vectors
// are all a pattern ever needs to read.
constexpr int64_t kMaxEvalElements = 4096;

const std::vector<NodeId> kNoConsumers;

}  // namespace

GraphIndex::GraphIndex(const Graph& graph) : graph_(graph) {
  producer_.assign(graph.values.size(), -1);
  consumers_.assign(graph.values.size(), {});
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    for (ValueId o : n.outputs) {
      if (o != kNoValue) producer_[static_cast<size_t>(o)] = static_cast<NodeId>(i);
    }
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      auto& c = consumers_[static_cast<size_t>(in)];
      // A node reading one value twice (x*x) is still one consumer.
      if (c.empty() || c.back() != static_cast<NodeId>(i)) c.push_back(static_cast<NodeId>(i));
    }
  }
  outputs_.insert(graph.outputs.begin(), graph.outputs.end());
  // One forward pass (nodes are in topological order): a node's outputs are constant
  // when its op is deterministic, has no subgraph, and every given input is constant.
  const_.assign(graph.values.size(), false);
  for (const auto& [id, t] : graph.constants) {
    if (static_cast<size_t>(id) < const_.size()) const_[static_cast<size_t>(id)] = true;
  }
  for (const Node& n : graph.nodes) {
    const OpSchema* s = OpRegistry::Global().Find(n.domain, n.op_type, graph.Opset(n.domain));
    bool is_const = s && s->deterministic;
    for (const auto& [name, attr] : n.attrs) {
      if (attr.kind == Attribute::Kind::kGraph || attr.kind == Attribute::Kind::kGraphs) {
        is_const = false;  // may read outer-scope values
      }
    }
    for (ValueId in : n.inputs) {
      if (in != kNoValue && !IsConst(in)) is_const = false;
    }
    for (ValueId o : n.outputs) {
      if (o != kNoValue && is_const) const_[static_cast<size_t>(o)] = true;
    }
  }
}

const Node* GraphIndex::Producer(ValueId v) const {
  if (v == kNoValue || static_cast<size_t>(v) >= producer_.size()) return nullptr;
  const NodeId p = producer_[static_cast<size_t>(v)];
  return p < 0 ? nullptr : &graph_.nodes[static_cast<size_t>(p)];
}

const std::vector<NodeId>& GraphIndex::Consumers(ValueId v) const {
  if (v == kNoValue || static_cast<size_t>(v) >= consumers_.size()) return kNoConsumers;
  return consumers_[static_cast<size_t>(v)];
}

const Node* GraphIndex::SoleConsumer(ValueId v) const {
  const auto& c = Consumers(v);
  if (c.size() != 1 || IsGraphOutput(v)) return nullptr;
  return &graph_.nodes[static_cast<size_t>(c[0])];
}

bool GraphIndex::IsConst(ValueId v) const {
  return v != kNoValue && static_cast<size_t>(v) < const_.size() && const_[static_cast<size_t>(v)];
}

std::optional<Tensor> GraphIndex::ConstValue(ValueId v) const {
  if (const Tensor* c = graph_.Constant(v)) {
    if (c->numel() <= kMaxEvalElements) return *c;
    return std::nullopt;
  }
  if (!IsConst(v)) return std::nullopt;
  auto it = value_memo_.find(v);
  if (it != value_memo_.end()) return it->second;
  value_memo_[v] = std::nullopt;
  const Node* p = Producer(v);
  const OpSchema* s = OpRegistry::Global().Find(p->domain, p->op_type, graph_.Opset(p->domain));
  std::vector<Tensor> ins;
  ins.reserve(p->inputs.size());
  int64_t elements = 0;
  for (ValueId in : p->inputs) {
    if (in == kNoValue) {
      ins.emplace_back();
      continue;
    }
    std::optional<Tensor> t = ConstValue(in);
    if (!t) return std::nullopt;
    elements += t->numel();
    ins.push_back(std::move(*t));
  }
  if (elements > kMaxEvalElements) return std::nullopt;
  KernelContext ctx{*p, graph_.Opset(p->domain), {}};
  for (size_t i = 0; i < ins.size(); ++i) {
    ctx.inputs.push_back(p->inputs[i] == kNoValue ? nullptr : &ins[i]);
  }
  auto outs = s->run(ctx);
  if (!outs.ok()) return std::nullopt;  // a bad constant is the importer's business
  for (size_t i = 0; i < p->outputs.size() && i < outs->size(); ++i) {
    if (p->outputs[i] != kNoValue) value_memo_[p->outputs[i]] = (*outs)[i];
  }
  return value_memo_[v];
}

std::optional<double> GraphIndex::Scalar(ValueId v) const {
  std::optional<Tensor> t = ConstValue(v);
  if (!t || t->numel() != 1) return std::nullopt;
  return t->GetDouble(0);
}

bool GraphIndex::ScalarNear(ValueId v, double expected) const {
  std::optional<double> s = Scalar(v);
  return s && std::abs(*s - expected) <= 1e-3 * std::abs(expected);
}

ValueId GraphIndex::Other(const Node& n, ValueId v) {
  if (n.inputs.size() != 2) return kNoValue;
  if (n.inputs[0] == v) return n.inputs[1];
  if (n.inputs[1] == v) return n.inputs[0];
  return kNoValue;
}

bool GraphIndex::IsFloat(ValueId v) const {
  const DataType t = graph_.value(v).type.dtype;
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBfloat16 ||
         t == DataType::kDouble;
}

}  // namespace switchyard::route
