// Node attributes <-> JSON for engine steps: {"name": {"i": 3}}, {"f": 0.5}, {"s": "..."},
// {"ints": [..]}, {"floats": [..]}, {"strings": [..]}. Floats are stored as their exact
// decimal round-trip form, so a reloaded node has bit-identical attributes.
#include "engine/engine.h"
#include "reference/op_registry.h"

namespace switchyard {

Result<nlohmann::json> AttrsToJson(const Node& node) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, a] : node.attrs) {
    switch (a.kind) {
      case Attribute::Kind::kInt: j[name] = {{"i", a.i}}; break;
      case Attribute::Kind::kFloat: j[name] = {{"f", a.f}}; break;
      case Attribute::Kind::kString: j[name] = {{"s", a.s}}; break;
      case Attribute::Kind::kInts: j[name] = {{"ints", a.ints}}; break;
      case Attribute::Kind::kFloats: j[name] = {{"floats", a.floats}}; break;
      case Attribute::Kind::kStrings: j[name] = {{"strings", a.strings}}; break;
      default:
        return Status::Unsupported(NodeLabel(node) + ": attribute '" + name +
                                   "' (a tensor or graph) cannot be stored in an engine");
    }
  }
  return j;
}

Result<Node> NodeFromStep(const EngineStep& step) {
  Node n;
  n.name = step.name;
  n.op_type = step.op_type;
  n.domain = step.domain;
  if (!step.attrs.is_object()) return Status::ParseError("step '" + step.name + "': attrs");
  for (const auto& [name, v] : step.attrs.items()) {
    Attribute a;
    if (!v.is_object() || v.size() != 1) {
      return Status::ParseError("step '" + step.name + "': attribute '" + name + "' is malformed");
    }
    const auto& [kind, val] = *v.items().begin();
    try {
      if (kind == "i") { a.kind = Attribute::Kind::kInt; a.i = val.get<int64_t>(); }
      else if (kind == "f") { a.kind = Attribute::Kind::kFloat; a.f = val.get<float>(); }
      else if (kind == "s") { a.kind = Attribute::Kind::kString; a.s = val.get<std::string>(); }
      else if (kind == "ints") { a.kind = Attribute::Kind::kInts; a.ints = val.get<std::vector<int64_t>>(); }
      else if (kind == "floats") { a.kind = Attribute::Kind::kFloats; a.floats = val.get<std::vector<float>>(); }
      else if (kind == "strings") { a.kind = Attribute::Kind::kStrings; a.strings = val.get<std::vector<std::string>>(); }
      else return Status::ParseError("step '" + step.name + "': attribute kind '" + kind + "'");
    } catch (const nlohmann::json::exception&) {
      return Status::ParseError("step '" + step.name + "': attribute '" + name + "' is malformed");
    }
    n.attrs[name] = std::move(a);
  }
  return n;
}

}  // namespace switchyard
