// `switchyard inspect MODEL [--json]`: what a model is, before anything is built.
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "io/sha256.h"
#include "onnx/importer.h"

namespace switchyard::cli {
namespace {

nlohmann::json TypeJson(const Value& v) {
  nlohmann::json shape = nlohmann::json::array();
  for (const Dim& d : v.type.dims) {
    if (d.is_static()) shape.push_back(d.value);
    else shape.push_back(d.symbol.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.symbol));
  }
  return {{"name", v.name},
          {"dtype", DataTypeName(v.type.dtype)},
          {"shape", v.type.has_shape ? shape : nlohmann::json(nullptr)}};
}

int Inspect(const std::string& path, bool json) {
  ImportOptions opt;
  opt.allow_unsupported = true;
  auto graph = ImportModel(path, opt);
  if (!graph.ok()) return ReportError(graph.status());
  const Graph& g = *graph;
  auto sha = Sha256File(path);
  std::map<std::string, int> histogram;
  for (const Node& n : g.nodes) histogram[(n.domain.empty() ? "" : n.domain + ".") + n.op_type]++;
  const std::vector<UnsupportedOp> unsupported = UnsupportedOps(g);

  nlohmann::json j;
  j["model"] = path;
  j["sha256"] = sha.ok() ? *sha : "";
  j["ir_version"] = g.ir_version;
  j["producer"] = {{"name", g.producer_name}, {"version", g.producer_version}};
  j["opsets"] = nlohmann::json::object();
  for (const auto& [d, v] : g.opsets) j["opsets"][d.empty() ? "ai.onnx" : d] = v;
  j["inputs"] = nlohmann::json::array();
  for (ValueId id : g.inputs) j["inputs"].push_back(TypeJson(g.value(id)));
  j["outputs"] = nlohmann::json::array();
  for (ValueId id : g.outputs) j["outputs"].push_back(TypeJson(g.value(id)));
  j["nodes"] = g.nodes.size();
  j["initializers"] = g.constants.size();
  int64_t params = 0;
  for (const auto& [id, t] : g.constants) params += t.numel();
  j["parameters"] = params;
  j["op_histogram"] = histogram;
  j["unsupported_ops"] = nlohmann::json::array();
  for (const auto& u : unsupported) {
    j["unsupported_ops"].push_back(
        {{"domain", u.domain.empty() ? "ai.onnx" : u.domain}, {"op_type", u.op_type},
         {"opset", u.opset}, {"nodes", u.count}});
  }
  if (json) {
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << "model:     " << path << "\n"
            << "sha256:    " << j["sha256"].get<std::string>() << "\n"
            << "producer:  " << g.producer_name << " " << g.producer_version
            << " (ir_version " << g.ir_version << ")\n"
            << "opsets:   ";
  for (const auto& [d, v] : g.opsets) std::cout << " " << (d.empty() ? "ai.onnx" : d) << "=" << v;
  std::cout << "\ninputs:\n";
  for (ValueId id : g.inputs) std::cout << "  " << g.value(id).name << ": " << g.value(id).type.ToString() << "\n";
  std::cout << "outputs:\n";
  for (ValueId id : g.outputs) std::cout << "  " << g.value(id).name << ": " << g.value(id).type.ToString() << "\n";
  std::cout << "nodes:     " << g.nodes.size() << " (" << g.constants.size() << " initializers, "
            << params << " parameters)\nops:\n";
  std::vector<std::pair<int, std::string>> ops;
  for (const auto& [k, v] : histogram) ops.push_back({-v, k});
  std::sort(ops.begin(), ops.end());
  for (const auto& [c, k] : ops) std::cout << "  " << k << ": " << -c << "\n";
  if (unsupported.empty()) {
    std::cout << "unsupported ops: none\n";
  } else {
    std::cout << "unsupported ops:";
    for (const auto& u : unsupported) std::cout << " " << u.op_type << " (" << u.count << ")";
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

void AddInspectCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("inspect", "Show a model's inputs, outputs, opsets and ops");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("MODEL", *path, "ONNX model file")->required();
  cmd->add_flag("--json", *json, "print one JSON object");
  cmd->callback([=] { *exit_code = Inspect(*path, *json); });
}

}  // namespace switchyard::cli
