// Pass dead_code (always on): removes nodes none of whose outputs is read by a live node
// or is a graph output, then constants nobody reads. One backward walk over the nodes.
#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {

Status RunDeadCode(Graph& g, PassContext& ctx) {
  std::vector<char> needed(g.values.size(), 0);
  for (ValueId o : g.outputs) needed[static_cast<size_t>(o)] = 1;
  std::vector<char> live(g.nodes.size(), 0);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    for (ValueId o : n.outputs) live[i] |= (o != kNoValue && needed[static_cast<size_t>(o)]);
    if (!live[i]) continue;
    for (ValueId in : n.inputs) {
      if (in != kNoValue) needed[static_cast<size_t>(in)] = 1;
    }
  }
  int removed = 0;
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (live[i]) kept.push_back(std::move(g.nodes[i])); else ++removed;
  }
  g.nodes = std::move(kept);
  for (auto it = g.constants.begin(); it != g.constants.end();) {
    if (!needed[static_cast<size_t>(it->first)]) {
      it = g.constants.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  g.RebuildProducers();
  if (removed) ctx.report.fired["dead_code"] += removed;
  return Status::Ok();
}

}  // namespace switchyard::passes
