// `switchyard run MODEL --input NAME=FILE ... --outputs DIR`: compute a model's outputs
// with the reference executor and write one .npy per graph output.
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

// Resolves "--input" arguments against the model's inputs: NAME=FILE, or a lone FILE for
// a single-input model. A FILE may itself contain '='.
Result<TensorMap> LoadInputs(const Graph& g, const std::vector<std::string>& args) {
  TensorMap inputs;
  for (const std::string& a : args) {
    std::string name, file;
    const size_t eq = a.find('=');
    if (eq != std::string::npos && g.FindValue(a.substr(0, eq)) != kNoValue) {
      name = a.substr(0, eq);
      file = a.substr(eq + 1);
    } else if (eq != std::string::npos && !fs::exists(a)) {
      std::string names;
      for (ValueId id : g.inputs) names += (names.empty() ? "" : ", ") + g.value(id).name;
      return Status::NotFound("--input " + a + ": the model has no input named '" +
                              a.substr(0, eq) + "'; its inputs are: " + names);
    } else {
      if (g.inputs.size() != 1) {
        return Status::Invalid("--input " + a + ": the model has " +
                               std::to_string(g.inputs.size()) +
                               " inputs; name each as --input NAME=FILE");
      }
      name = g.value(g.inputs[0]).name;
      file = a;
    }
    if (inputs.count(name)) return Status::Invalid("--input: '" + name + "' is given twice");
    auto t = ReadTensorFile(file);
    if (!t.ok()) return t.status().WithContext("--input " + name);
    inputs[name] = std::move(*t);
  }
  return inputs;
}

namespace {

int Run(const std::string& model, const std::vector<std::string>& input_args,
        const std::string& out_dir) {
  auto graph = ImportModel(model);
  if (!graph.ok()) return ReportError(graph.status());
  auto inputs = LoadInputs(*graph, input_args);
  if (!inputs.ok()) return ReportError(inputs.status());
  auto exec = ReferenceExecutor::Create(*graph);
  if (!exec.ok()) return ReportError(exec.status());
  auto outputs = exec->Run(*inputs);
  if (!outputs.ok()) return ReportError(outputs.status());
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return ReportError(Status::IoError("cannot create output folder '" + out_dir + "'"));
  // Distinct output names can sanitize to the same file ("a/b", "a:b"): suffix "_2",
  // "_3"... instead of silently overwriting an earlier output.
  std::set<std::string> used;
  for (ValueId id : graph->outputs) {
    const std::string& name = graph->value(id).name;
    const std::string base = SanitizeFileName(name);
    std::string file = base;
    for (int k = 2; !used.insert(file).second; ++k) file = base + "_" + std::to_string(k);
    const std::string path = (fs::path(out_dir) / (file + ".npy")).string();
    Status s = WriteNpy(path, outputs->at(name));
    if (!s.ok()) return ReportError(s);
    const Tensor& t = outputs->at(name);
    std::cout << name << ": " << DataTypeName(t.dtype()) << ShapeToString(t.shape()) << " -> "
              << path << "\n";
  }
  return 0;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("run", "Compute a model's outputs for given inputs");
  auto model = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("MODEL", *model, "ONNX model file")->required();
  cmd->add_option("--input,-i", *inputs, "NAME=FILE (.npy or TensorProto .pb); repeatable");
  cmd->add_option("--outputs,-o", *out, "folder for one .npy per graph output")->required();
  cmd->callback([=] { *exit_code = Run(*model, *inputs, *out); });
}

}  // namespace switchyard::cli
