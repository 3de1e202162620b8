// `switchyard run MODEL|ENGINE --input NAME=FILE ... --outputs DIR [--route STR] [--target cpu|cuda]`:
// compute outputs and write one .npy per graph output. A model runs on the reference
// executor (the accuracy oracle) unless --route or --target asks for an engine built
// in-process (for the --target given, else cpu); an engine file runs on its own target.
#include <filesystem>
#include <iostream>
#include <set>

#include "commands.h"
#include "engine_loader.h"
#include "io/npy.h"
#include "onnx/importer.h"
#include "reference/executor.h"

namespace switchyard::cli {
namespace fs = std::filesystem;
namespace {

struct RunArgs {
  std::string path, route, out, target;  // target "": cpu, or an engine's own
  std::vector<std::string> inputs, shapes;
  bool has_route = false;
};

// Writes outputs in `order`. Distinct names can sanitize to the same file ("a/b", "a:b"):
// suffix "_2", "_3"... instead of silently overwriting an earlier output.
int WriteOutputs(const std::vector<std::string>& order, const TensorMap& outputs,
                 const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return ReportError(Status::IoError("cannot create output folder '" + out_dir + "'"));
  std::set<std::string> used;
  for (const std::string& name : order) {
    const std::string base = SanitizeFileName(name);
    std::string file = base;
    for (int k = 2; !used.insert(file).second; ++k) file = base + "_" + std::to_string(k);
    const std::string path = (fs::path(out_dir) / (file + ".npy")).string();
    const Tensor& t = outputs.at(name);
    Status s = WriteNpy(path, t);
    if (!s.ok()) return ReportError(s);
    std::cout << name << ": " << DataTypeName(t.dtype()) << ShapeToString(t.shape()) << " -> "
              << path << "\n";
  }
  return 0;
}

int RunReference(const RunArgs& a) {
  auto graph = ImportModel(a.path);
  if (!graph.ok()) return ReportError(graph.status());
  std::vector<std::string> names, order;
  for (ValueId id : graph->inputs) names.push_back(graph->value(id).name);
  for (ValueId id : graph->outputs) order.push_back(graph->value(id).name);
  auto inputs = LoadInputArgs(names, a.inputs);
  if (!inputs.ok()) return ReportError(inputs.status());
  auto exec = ReferenceExecutor::Create(*graph);
  if (!exec.ok()) return ReportError(exec.status());
  auto outputs = exec->Run(*inputs);
  if (!outputs.ok()) return ReportError(outputs.status());
  return WriteOutputs(order, *outputs, a.out);
}

int RunEngine(const RunArgs& a) {
  auto src = LoadOrBuild(a.path, a.route, a.shapes, a.target);
  if (!src.ok()) return ReportError(src.status());
  const Engine& e = src->engine->engine();
  std::vector<std::string> names, order;
  for (int t : e.inputs) names.push_back(e.tensors[static_cast<size_t>(t)].name);
  for (int t : e.outputs) order.push_back(e.tensors[static_cast<size_t>(t)].name);
  auto inputs = LoadInputArgs(names, a.inputs);
  if (!inputs.ok()) return ReportError(inputs.status());
  Session session(src->engine);
  auto outputs = session.Run(*inputs);
  if (!outputs.ok()) return ReportError(outputs.status());
  return WriteOutputs(order, *outputs, a.out);
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("run", "Compute outputs of a model (reference) or an engine");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("PATH", a->path, "ONNX model or engine file")->required();
  cmd->add_option("--input,-i", a->inputs, "NAME=FILE (.npy or TensorProto .pb); repeatable");
  cmd->add_option("--outputs,-o", a->out, "folder for one .npy per graph output")->required();
  auto* route = cmd->add_option("--route", a->route,
                                "build the model for this route and run the engine "
                                "(\"\" = default route) instead of the reference executor");
  cmd->add_option("--shapes", a->shapes, "input shapes when building with --route");
  auto* target = cmd->add_option("--target", a->target,
                                 "build the model for this target (cpu or cuda; default route unless "
                                 "--route) and run the engine; an engine runs on its own target");
  cmd->callback([=] {
    a->has_route = route->count() > 0;
    const bool engine = a->has_route || target->count() > 0 || LooksLikeEngine(a->path);
    *exit_code = engine ? RunEngine(*a) : RunReference(*a);
  });
}

}  // namespace switchyard::cli
