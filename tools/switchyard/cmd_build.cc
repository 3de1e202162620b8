// `switchyard build MODEL --route STR [--shapes NAME=1x3x224x224 ...] [--target cpu|cuda] -o FILE`:
// build one engine for one route and print the build report. A cuda engine can be built on a
// machine without a GPU (for the compiled-for compute capability).
#include <chrono>
#include <iostream>

#include "build/builder.h"
#include "commands.h"
#include "io/sha256.h"
#include "onnx/importer.h"

namespace switchyard::cli {
namespace {

struct BuildArgs {
  std::string model, route, out, target = "cpu";
  std::vector<std::string> shapes;
  bool json = false;
};

int Build(const BuildArgs& a) {
  auto target = Target::ForName(a.target);
  if (!target.ok()) return ReportError(target.status().WithContext("--target"));
  const auto t0 = std::chrono::steady_clock::now();
  auto graph = ImportModel(a.model);
  if (!graph.ok()) return ReportError(graph.status());
  BuildOptions opt;
  auto sha = Sha256File(a.model);
  if (!sha.ok()) return ReportError(sha.status());
  opt.model_sha256 = *sha;
  for (const std::string& s : a.shapes) {
    Status st = ParseShapeArg(s, &opt.shapes);
    if (!st.ok()) return ReportError(st);
  }
  const RouteSpace space = RouteSpace::For(*graph, *target);
  auto route = space.Parse(a.route);
  if (!route.ok()) return ReportError(route.status());
  BuildReport report;
  auto engine = BuildEngine(std::move(*graph), space, *route, *target, opt, &report);
  if (!engine.ok()) return ReportError(engine.status());
  Status w = WriteEngine(a.out, *engine);
  if (!w.ok()) return ReportError(w);
  report.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (a.json) {
    nlohmann::json j = {{"engine", a.out},
                        {"route", route->Canonical()},
                        {"fired", report.fired},
                        {"kernels", report.kernels},
                        {"notes", report.notes},
                        {"steps", report.steps},
                        {"arena_bytes", report.arena_bytes},
                        {"constant_bytes", report.constant_bytes},
                        {"build_seconds", report.build_seconds}};
    if (target->IsCuda()) j["target"] = target->Fingerprint();
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << "engine: " << a.out << "\nroute: "
            << (route->Canonical().empty() ? "(default)" : route->Canonical()) << "\n"
            << (target->IsCuda() ? "target: " + target->Fingerprint() + "\n" : std::string())
            << FormatBuildReport(report) << "build time: " << report.build_seconds << " s\n";
  return 0;
}

}  // namespace

void AddBuildCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("build", "Build an engine for one route");
  auto a = std::make_shared<BuildArgs>();
  cmd->add_option("MODEL", a->model, "ONNX model file")->required();
  cmd->add_option("--route", a->route, "route string (\"\" = the default route)");
  cmd->add_option("--shapes", a->shapes,
                  "NAME=1x3x224x224 or NAME=1x3x[32..640]x[32..640]; repeatable");
  cmd->add_option("-o,--output", a->out, "engine file to write")->required();
  cmd->add_option("--target", a->target, "target to build for: cpu or cuda (builds with CUDA support)")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "print the build report as one JSON object");
  cmd->callback([=] { *exit_code = Build(*a); });
}

}  // namespace switchyard::cli
