// Node attributes <-> JSON for engine steps: {"name": {"i": 3}}, {"f": 0.5}, {"s": "..."},
// {"ints": [..]}, {"floats": [..]}, {"strings": [..]}. Floats are stored as their exact
// decimal round-trip form, so a reloaded node has bit-identical attributes.
#include "engine/engine.h"
#include "reference/op_registry.h"

namespace switchyard {

Result<nlohmann::json> AttrsToJson(const Node& node, std::vector<Tensor>* constants) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, a] : node.attrs) {
    switch (a.kind) {
      case Attribute::Kind::kInt: j[name] = {{"i", a.i}}; break;
      case Attribute::Kind::kFloat: j[name] = {{"f", a.f}}; break;
      case Attribute::Kind::kString: j[name] = {{"s", a.s}}; break;
      case Attribute::Kind::kInts: j[name] = {{"ints", a.ints}}; break;
      case Attribute::Kind::kFloats: j[name] = {{"floats", a.floats}}; break;
      case Attribute::Kind::kStrings: j[name] = {{"strings", a.strings}}; break;
      case Attribute::Kind::kTensor:
        if (a.t.dtype() == DataType::kString) {
          return Status::Unsupported(NodeLabel(node) + ": string tensor attribute '" + name +
                                     "' cannot be stored in an engine");
        }
        j[name] = {{"t", constants->size()}};
        constants->push_back(a.t);
        break;
      default:
        return Status::Unsupported(NodeLabel(node) + ": attribute '" + name +
                                   "' (a tensor or graph) cannot be stored in an engine");
    }
  }
  return j;
}

Result<Node> NodeFromStep(const EngineStep& step, const std::vector<Tensor>& constants) {
  Node n;
  n.name = step.name;
  n.op_type = step.op_type;
  n.domain = step.domain;
  n.since_version = step.since_version;
  if (!step.attrs.is_object()) return Status::ParseError("step '" + step.name + "': attrs");
  for (auto entry = step.attrs.begin(); entry != step.attrs.end(); ++entry) {
    const std::string name = entry.key();
    const nlohmann::json& v = entry.value();
    Attribute a;
    if (!v.is_object() || v.size() != 1) {
      return Status::ParseError("step '" + step.name + "': attribute '" + name + "' is malformed");
    }
    const auto it = v.begin();  // one {kind: value} pair
    const std::string kind = it.key();
    const nlohmann::json& val = it.value();
    try {
      if (kind == "i") { a.kind = Attribute::Kind::kInt; a.i = val.get<int64_t>(); }
      else if (kind == "f") { a.kind = Attribute::Kind::kFloat; a.f = val.get<float>(); }
      else if (kind == "s") { a.kind = Attribute::Kind::kString; a.s = val.get<std::string>(); }
      else if (kind == "ints") { a.kind = Attribute::Kind::kInts; a.ints = val.get<std::vector<int64_t>>(); }
      else if (kind == "floats") { a.kind = Attribute::Kind::kFloats; a.floats = val.get<std::vector<float>>(); }
      else if (kind == "strings") { a.kind = Attribute::Kind::kStrings; a.strings = val.get<std::vector<std::string>>(); }
      else if (kind == "t") {
        const size_t idx = val.get<size_t>();
        if (idx >= constants.size()) {
          return Status::ParseError("step '" + step.name + "': attribute '" + name + "' names a missing constant");
        }
        a.kind = Attribute::Kind::kTensor;
        a.t = constants[idx];
      }
      else return Status::ParseError("step '" + step.name + "': attribute kind '" + kind + "'");
    } catch (const nlohmann::json::exception&) {
      return Status::ParseError("step '" + step.name + "': attribute '" + name + "' is malformed");
    }
    n.attrs[name] = std::move(a);
  }
  return n;
}

}  // namespace switchyard
