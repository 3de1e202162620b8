#include "ir/verifier.h"

#include "reference/op_registry.h"

namespace switchyard {

Status VerifyGraph(const Graph& g) {
  const size_t nv = g.values.size();
  std::vector<char> defined(nv, 0);
  std::vector<int> producer(nv, -1);
  for (ValueId id : g.inputs) {
    if (id < 0 || static_cast<size_t>(id) >= nv) return Status::Internal("graph input id out of range");
    if (g.IsConstant(id)) {
      return Status::Internal("value '" + g.value(id).name + "' is both an input and a constant");
    }
    defined[static_cast<size_t>(id)] = 1;
  }
  for (const auto& [id, t] : g.constants) {
    if (id < 0 || static_cast<size_t>(id) >= nv) return Status::Internal("constant id out of range");
    defined[static_cast<size_t>(id)] = 1;
  }
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      if (in < 0 || static_cast<size_t>(in) >= nv) {
        return Status::Internal(NodeLabel(node) + ": input id out of range");
      }
      if (!defined[static_cast<size_t>(in)]) {
        return Status::Internal(NodeLabel(node) + ": reads '" + g.value(in).name +
                                "' before it is produced");
      }
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      if (out < 0 || static_cast<size_t>(out) >= nv) {
        return Status::Internal(NodeLabel(node) + ": output id out of range");
      }
      if (defined[static_cast<size_t>(out)]) {
        return Status::Internal(NodeLabel(node) + ": output '" + g.value(out).name +
                                "' is already defined elsewhere");
      }
      defined[static_cast<size_t>(out)] = 1;
      producer[static_cast<size_t>(out)] = static_cast<int>(n);
    }
  }
  for (ValueId o : g.outputs) {
    if (o < 0 || static_cast<size_t>(o) >= nv || !defined[static_cast<size_t>(o)]) {
      return Status::Internal("graph output is never produced");
    }
  }
  return Status::Ok();
}

}  // namespace switchyard
