#include "reference/op_registry.h"

#include <algorithm>

namespace switchyard {

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry();  // never destroyed: used by static registrars
  return *registry;
}

void OpRegistry::Register(OpSchema schema) { schemas_.push_back(std::move(schema)); }

const OpSchema* OpRegistry::Find(const std::string& domain, const std::string& op_type,
                                 int64_t opset) const {
  const OpSchema* best = nullptr;
  for (const OpSchema& s : schemas_) {
    if (s.op_type != op_type || s.domain != domain || s.since_version > opset) continue;
    if (!best || s.since_version > best->since_version) best = &s;
  }
  return best;
}

bool OpRegistry::Knows(const std::string& domain, const std::string& op_type) const {
  return std::any_of(schemas_.begin(), schemas_.end(), [&](const OpSchema& s) {
    return s.domain == domain && s.op_type == op_type;
  });
}

std::vector<const OpSchema*> OpRegistry::All() const {
  std::vector<const OpSchema*> out;
  for (const OpSchema& s : schemas_) out.push_back(&s);
  std::sort(out.begin(), out.end(), [](const OpSchema* a, const OpSchema* b) {
    return std::tie(a->domain, a->op_type, a->since_version) <
           std::tie(b->domain, b->op_type, b->since_version);
  });
  return out;
}

std::string NodeLabel(const Node& node) {
  std::string op = node.domain.empty() ? node.op_type : node.domain + "." + node.op_type;
  if (node.since_version > 0) op += "-" + std::to_string(node.since_version);
  return op + " node '" + node.name + "'";
}

}  // namespace switchyard
