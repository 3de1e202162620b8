// `switchyard routes MODEL [--target cpu|cuda] [--json] [--sweep EXPR --dry-run]`: the knobs
// that matter for a model on a target, or the concrete routes a sweep expands to.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "build/target.h"
#include "commands.h"
#include "onnx/importer.h"
#include "route/route.h"

namespace switchyard::cli {
namespace {

struct RoutesArgs {
  std::string model;
  std::string target = "cpu";
  std::string sweep;
  bool has_sweep = false;
  bool dry_run = false;
  bool json = false;
};

void PrintKnobs(const RouteSpace& space, const Target& target, const std::string& model) {
  std::cout << "knobs for " << model << " on " << target.Fingerprint() << "\n";
  for (const Knob& k : space.knobs()) {
    std::string values;
    for (size_t i = 0; i < k.allowed_values.size(); ++i) {
      values += (i ? "|" : "") + k.allowed_values[i];
    }
    // A long value list (threads on a big machine) is summarised by its ends.
    if (k.allowed_values.size() > 8) {
      values = k.allowed_values.front() + ".." + k.allowed_values.back();
    }
    std::cout << "\n" << k.option << "=" << values << "  (default " << k.default_value << "; "
              << (k.nodes.empty() ? std::string("whole graph")
                                  : std::to_string(k.nodes.size()) + " nodes")
              << ")\n    " << k.help << "\n";
  }
}

int Routes(const RoutesArgs& a) {
  if (a.dry_run && !a.has_sweep) {
    return ReportError(Status::Invalid("--dry-run goes with --sweep EXPR"));
  }
  if (a.has_sweep && !a.dry_run) {
    return ReportError(Status::Invalid(
        "building every route of a sweep is `switchyard tune`'s job (not yet available); "
        "add --dry-run to list the routes '" + a.sweep + "' expands to"));
  }
  auto target = Target::ForName(a.target);
  if (!target.ok()) return ReportError(target.status().WithContext("--target"));
  auto graph = ImportModel(a.model);
  if (!graph.ok()) return ReportError(graph.status());
  const RouteSpace space = RouteSpace::For(*graph, *target);

  if (a.has_sweep) {
    int skipped = 0;
    auto routes = space.Sweep(a.sweep, &skipped);
    if (!routes.ok()) return ReportError(routes.status().WithContext(a.model));
    if (a.json) {
      nlohmann::ordered_json j;
      j["routes"] = nlohmann::ordered_json::array();
      for (const Route& r : *routes) j["routes"].push_back(r.Canonical());
      j["count"] = routes->size();
      j["skipped"] = skipped;
      std::cout << j.dump() << "\n";
      return 0;
    }
    for (const Route& r : *routes) {
      const std::string c = r.Canonical();
      std::cout << (c.empty() ? "(default)" : c) << "\n";
    }
    std::cout << routes->size() << " routes";
    if (skipped > 0) std::cout << ", " << skipped << " skipped as incompatible";
    std::cout << "\n";
    return 0;
  }

  if (a.json) {
    nlohmann::ordered_json j;
    j["knobs"] = nlohmann::ordered_json::array();
    for (const Knob& k : space.knobs()) {
      j["knobs"].push_back({{"option", k.option},
                            {"allowed_values", k.allowed_values},
                            {"default_value", k.default_value},
                            {"help", k.help},
                            {"nodes", k.nodes}});
    }
    std::cout << j.dump() << "\n";
    return 0;
  }
  PrintKnobs(space, *target, a.model);
  return 0;
}

}  // namespace

void AddRoutesCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "routes", "List the build knobs that matter for a model, or the routes a sweep expands to");
  auto args = std::make_shared<RoutesArgs>();
  cmd->add_option("MODEL", args->model, "ONNX model file")->required();
  cmd->add_option("--target", args->target, "target to build for: cpu or cuda (builds with CUDA support)")
      ->capture_default_str();
  cmd->add_option("--sweep", args->sweep,
                  "sweep expression, e.g. 'kernel.conv=[auto|winograd] precision=bf16'");
  cmd->add_flag("--dry-run", args->dry_run, "with --sweep: list the concrete routes only");
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->callback([=] {
    args->has_sweep = cmd->count("--sweep") > 0;
    *exit_code = Routes(*args);
  });
}

}  // namespace switchyard::cli
