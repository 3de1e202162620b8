#include "ir/graph.h"

namespace switchyard {

std::string Dim::ToString() const {
  if (is_static()) return std::to_string(value);
  return symbol.empty() ? "?" : symbol;
}

TensorType TensorType::FromShape(DataType t, const std::vector<int64_t>& shape) {
  std::vector<Dim> dims(shape.begin(), shape.end());
  return TensorType(t, std::move(dims));
}

bool TensorType::is_static() const {
  if (!has_shape) return false;
  for (const Dim& d : dims) {
    if (!d.is_static()) return false;
  }
  return true;
}

std::vector<int64_t> TensorType::StaticShape() const {
  std::vector<int64_t> s;
  for (const Dim& d : dims) s.push_back(d.is_static() ? d.value : -1);
  return s;
}

std::string TensorType::ToString() const {
  std::string s = DataTypeName(dtype);
  if (!has_shape) return s + "[*]";
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += dims[i].ToString();
  }
  return s + "]";
}

const Attribute* Node::Find(const std::string& a) const {
  auto it = attrs.find(a);
  return it == attrs.end() ? nullptr : &it->second;
}

int64_t Node::GetInt(const std::string& a, int64_t def) const {
  const Attribute* at = Find(a);
  return at ? at->i : def;
}

float Node::GetFloat(const std::string& a, float def) const {
  const Attribute* at = Find(a);
  return at ? at->f : def;
}

std::string Node::GetString(const std::string& a, const std::string& def) const {
  const Attribute* at = Find(a);
  return at ? at->s : def;
}

std::vector<int64_t> Node::GetInts(const std::string& a, std::vector<int64_t> def) const {
  const Attribute* at = Find(a);
  return at ? at->ints : def;
}

std::vector<float> Node::GetFloats(const std::string& a, std::vector<float> def) const {
  const Attribute* at = Find(a);
  return at ? at->floats : def;
}

size_t Node::NumInputs() const {
  size_t n = inputs.size();
  while (n > 0 && inputs[n - 1] == kNoValue) --n;
  return n;
}

ValueId Graph::AddValue(std::string name, TensorType type) {
  const ValueId id = static_cast<ValueId>(values.size());
  if (!name.empty()) by_name_[name] = id;
  values.push_back(Value{std::move(name), std::move(type), -1});
  return id;
}

ValueId Graph::FindValue(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? kNoValue : it->second;
}

const Tensor* Graph::Constant(ValueId id) const {
  auto it = constants.find(id);
  return it == constants.end() ? nullptr : &it->second;
}

int64_t Graph::Opset(const std::string& domain) const {
  auto it = opsets.find(domain);
  return it == opsets.end() ? 0 : it->second;
}

void Graph::RebuildProducers() {
  for (Value& v : values) v.producer = -1;
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId o : nodes[n].outputs) {
      if (o != kNoValue) values[static_cast<size_t>(o)].producer = static_cast<NodeId>(n);
    }
  }
}

std::vector<std::vector<NodeId>> Graph::Consumers() const {
  std::vector<std::vector<NodeId>> c(values.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId i : nodes[n].inputs) {
      if (i != kNoValue) c[static_cast<size_t>(i)].push_back(static_cast<NodeId>(n));
    }
  }
  return c;
}

}  // namespace switchyard
