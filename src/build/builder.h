// The builder: Graph + Route + Target -> Engine. Deterministic: it never times anything
// and its output depends only on the model, the route, the target and the tool version.
// Steps: fix input shapes (--shapes), run the passes the route enables, choose a kernel
// implementation per node (kernel table), let each pre-pack its constants, insert layout
// reorders at boundaries, plan intermediate memory in one arena, and assemble the engine.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "build/target.h"
#include "engine/engine.h"
#include "ir/graph.h"
#include "passes/pass.h"
#include "route/route.h"
#include "switchyard/status.h"

namespace switchyard {

struct BuildOptions {
  // Input name -> per-dimension range. A fixed size has min == opt == max. Inputs not
  // named keep the model's dims (symbolic dims stay dynamic, allocated per run).
  std::map<std::string, std::vector<DimRange>> shapes;
  std::string model_sha256;
};

// Parses "--shapes" values: "x=1x3x224x224" or "x=1x3x[32..640]x[32..640]" or with an
// opt size "[32..224..640]".
Status ParseShapeArg(const std::string& arg, std::map<std::string, std::vector<DimRange>>* out);

// `model` is taken by value: the passes rewrite it, so a caller that is done with its graph
// moves it in and saves a copy of every weight (ResNet-50: 100 MB, a tenth of its build).
Result<Engine> BuildEngine(Graph model, const RouteSpace& space, const Route& route,
                           const Target& target, const BuildOptions& options, BuildReport* report);

// "fuse.conv_act: 17 fusions" lines, kernels per op class, arena and constant bytes.
std::string FormatBuildReport(const BuildReport& report);

}  // namespace switchyard
