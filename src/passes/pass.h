// Graph passes: one rewrite per file, each switched by its knob (nullptr knob = always
// on). The pipeline runs them in a fixed order; after each, types are re-inferred and the
// IR verifier runs. Passes count what they changed in the BuildReport
// ("fuse.conv_act: 17 fusions"). Passes never time anything.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "build/target.h"
#include "ir/graph.h"
#include "switchyard/status.h"

namespace switchyard {

// Domain of Switchyard's internal fused ops (FusedConv, FusedMatMul, ...).
inline constexpr const char* kSwitchyardDomain = "switchyard";

struct BuildReport {
  std::map<std::string, int> fired;  // knob (or pass) -> rewrites
  std::map<std::string, std::map<std::string, int>> kernels;  // op class -> provider -> nodes
  std::vector<std::string> notes;    // e.g. "kernel.conv=winograd: 3 of 20 convs unsupported"
  int64_t arena_bytes = 0;
  int64_t constant_bytes = 0;
  int steps = 0;
  int views = 0;  // view steps whose output shares its input's arena bytes (no copy)
  int inplace = 0;  // steps that write their output over an input dying there (no copy)
  double build_seconds = 0;  // measured by the CLI around Build, not inside the engine
};

struct PassContext {
  // Whether a knob is on for this build ("fuse.conv_act" -> true). Knobs absent from the
  // route space count as off.
  std::function<bool(const std::string& knob)> enabled;
  const Target& target;
  BuildReport& report;
};

struct Pass {
  const char* name;  // "fuse_conv_act"
  const char* knob;  // "fuse.conv_act", or nullptr when always on
  Status (*run)(Graph& graph, PassContext& ctx);
};

// All passes in pipeline order.
const std::vector<Pass>& PassPipeline();
// Runs every enabled pass; InferShapes + VerifyGraph after each. Errors name the pass.
Status RunPasses(Graph& graph, PassContext& ctx);

}  // namespace switchyard
