// The IR verifier: structural invariants every Graph must keep after import and after
// every pass. A failure is our bug (or a malformed import), reported with the node.
#pragma once

#include "ir/graph.h"
#include "switchyard/status.h"

namespace switchyard {

// Checks: value ids in range; each value produced at most once and never both produced
// and constant or a graph input; nodes in topological order; graph outputs defined.
Status VerifyGraph(const Graph& graph);

}  // namespace switchyard
