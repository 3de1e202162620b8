// `switchyard check ENGINE|MODEL [--route STR] [--target cpu|cuda] [--model MODEL] --data DIR [--reference DIR]
// [--metric ... --threshold ...] [--json]`: layer-wise comparison of a route against the
// reference executor (docs/compare.md). Exit codes: 0 every value within the threshold,
// 3 divergence found, 1 error.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>

#include "build/builder.h"
#include "commands.h"
#include "engine_loader.h"
#include "io/sha256.h"
#include "onnx/importer.h"
#include "route/route.h"
#include "tune/layerwise.h"

namespace switchyard::cli {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

constexpr const char* kFusionNote =
    "every intermediate value is marked as a graph output, which blocks fusions across those values: "
    "the per-value errors are those of the instrumented engine; the final outputs of the engine "
    "as built (fusions included) are gated separately";

struct CheckArgs {
  std::string path, route, model, data, reference;
  std::string target;  // "": cpu, or an engine's own
  bool route_given = false;
  std::vector<std::string> per_output, shapes;
  std::string metric = "l2";
  double atol = 1e-5, rtol = 1e-3, threshold = -1;
  int topk = 5;
  bool json = false;
};

Result<AccuracyPolicy> Policy(const CheckArgs& a) {
  return PolicyFromFlags(a.metric, a.atol, a.rtol, a.topk, a.threshold, a.per_output);
}

ojson Num(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

void PrintTable(const LayerwiseResult& r) {
  std::printf("%4s  %-24s %-18s %-24s %-22s %12s %12s %9s  %s\n", "#", "node", "op", "value", "type", "error",
              "threshold", "growth", "");
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const LayerRow& row = r.rows[i];
    char growth[32] = "-";
    if (row.input_error > 0 && std::isfinite(row.error)) std::snprintf(growth, sizeof growth, "x%.3g", row.error / row.input_error);
    std::printf("%4d  %-24s %-18s %-24s %-22s %12.4g %12.4g %9s  %s%s\n", row.node_index, row.node.c_str(),
                row.op_type.c_str(), row.value.c_str(), row.type.c_str(), row.error, row.threshold, growth,
                row.passed ? "ok" : "OVER", static_cast<int>(i) == r.first_diverging ? "  <- first divergence" : "");
  }
}

int Check(const CheckArgs& a) {
  auto policy = Policy(a);
  if (!policy.ok()) return ReportError(policy.status());
  if (!fs::exists(a.path)) return ReportError(Status::NotFound("'" + a.path + "' does not exist"));
  // An ENGINE gives the route, the model's sha256 and the input shapes; the MODEL (--model)
  // gives the graph, checked against that sha.
  std::string model_path = a.path, route = a.route;
  BuildOptions build;
  std::shared_ptr<const LoadedEngine> served;
  Target target;  // the instrumented build's: the served engine's
  if (LooksLikeEngine(a.path)) {
    if (a.route_given) {
      return ReportError(Status::Invalid("'" + a.path + "' is an engine: its route is fixed in its header; "
                                         "--route applies to a model"));
    }
    if (a.model.empty()) {
      return ReportError(Status::Invalid("checking an engine needs its model: add --model MODEL.onnx"));
    }
    auto e = ReadEngine(a.path);
    if (!e.ok()) return ReportError(e.status());
    auto t = EngineTarget(*e, a.target, "engine '" + a.path + "'");
    if (!t.ok()) return ReportError(t.status());
    Status dev = RequireDevice(*t);
    if (!dev.ok()) return ReportError(dev);
    target = *t;
    auto sha = Sha256File(a.model);
    if (!sha.ok()) return ReportError(sha.status().WithContext("--model"));
    if (!e->header.model_sha256.empty() && *sha != e->header.model_sha256) {
      return ReportError(Status::Invalid("--model '" + a.model + "' (sha256 " + *sha + ") is not the model engine '" +
                                         a.path + "' was built from (sha256 " + e->header.model_sha256 + ")"));
    }
    model_path = a.model;
    route = e->header.route;
    build.model_sha256 = *sha;
    for (size_t i = 0; i < e->inputs.size(); ++i) {
      build.shapes[e->tensors[static_cast<size_t>(e->inputs[i])].name] = e->input_ranges[i];
    }
    auto loaded = LoadedEngine::Create(std::move(*e));
    if (!loaded.ok()) return ReportError(loaded.status());
    served = *loaded;
  } else {
    if (!a.model.empty()) return ReportError(Status::Invalid("--model applies to an ENGINE argument; '" + a.path + "' is a model"));
    auto sha = Sha256File(a.path);
    if (!sha.ok()) return ReportError(sha.status());
    build.model_sha256 = *sha;
    for (const std::string& s : a.shapes) {
      Status st = ParseShapeArg(s, &build.shapes);
      if (!st.ok()) return ReportError(st.WithContext("--shapes"));
    }
    auto src = LoadOrBuild(a.path, a.route, a.shapes, a.target);
    if (!src.ok()) return ReportError(src.status());
    served = src->engine;
    target = src->target;
  }
  auto graph = ImportModel(model_path);
  if (!graph.ok()) return ReportError(graph.status());
  std::vector<std::string> in_names, out_names;
  for (ValueId v : graph->inputs) in_names.push_back(graph->value(v).name);
  for (ValueId v : graph->outputs) out_names.push_back(graph->value(v).name);
  auto sets = LoadEvalData(a.data, in_names, out_names);
  if (!sets.ok()) return ReportError(sets.status().WithContext("--data"));
  if (!a.reference.empty()) {
    Status st = LoadReferenceData(a.reference, out_names, &*sets);
    if (!st.ok()) return ReportError(st.WithContext("--reference"));
  }

  // Engines run on a thread of their own (see measure.cc on the initial thread).
  Result<LayerwiseResult> r = Status::Internal("not run");
  GateResult served_gate, given_gate;
  std::string served_error;
  std::thread t([&] {
    r = CheckLayerwise(*graph, route, build, *sets, *policy, target);
    if (!r.ok()) return;
    Session s(served);
    for (size_t i = 0; i < sets->size(); ++i) {
      const EvalSet& set = (*sets)[i];
      auto out = s.Run(set.inputs);
      if (!out.ok()) {
        served_error = "set '" + set.name + "': " + out.status().ToString();
        return;
      }
      CheckOutputs(*out, r->reference[i], set.name, *policy, &served_gate);
      if (!set.reference.empty()) CheckOutputs(*out, set.reference, set.name, *policy, &given_gate);
    }
  });
  t.join();
  if (!r.ok()) return ReportError(r.status());
  if (!served_error.empty()) return ReportError(Status::Internal("the engine as built failed: " + served_error));
  const bool has_given = !given_gate.checks.empty();
  const bool diverged = r->first_diverging >= 0 || !served_gate.passed || (has_given && !given_gate.passed);

  ojson values = ojson::array();
  for (const LayerRow& row : r->rows) {
    ojson v = {{"index", row.node_index}, {"node", row.node},        {"op", row.op_type},
               {"value", row.value},      {"type", row.type},        {"metric", row.metric},
               {"threshold", row.threshold}, {"error", Num(row.error)}, {"worst_set", row.worst_set},
               {"input_error", Num(row.input_error)}, {"passed", row.passed}, {"graph_output", row.graph_output}};
    if (!row.detail.empty()) v["detail"] = row.detail;
    values.push_back(v);
  }
  ojson first = nullptr;
  if (r->first_diverging >= 0) {
    const LayerRow& row = r->rows[static_cast<size_t>(r->first_diverging)];
    first = {{"node", row.node}, {"op", row.op_type}, {"value", row.value}, {"index", row.node_index},
             {"error", Num(row.error)}, {"threshold", row.threshold}, {"set", row.worst_set}};
  }
  int instrumented_fusions = 0;
  for (const auto& [k, n] : r->instrumented_report.fired) {
    if (k.rfind("fuse.", 0) == 0) instrumented_fusions += n;
  }
  ojson j = {{"model", model_path},
             {"route", route},
             {"model_sha256", build.model_sha256},
             {"sets", sets->size()},
             {"policy", policy->ToJson()},
             {"marked_values", r->marked},
             {"instrumented_fusions", instrumented_fusions},
             {"note", kFusionNote},
             {"values", values},
             {"first_diverging", first},
             {"engine_outputs_vs_reference_executor", served_gate.ToJson(*policy)}};
  if (has_given) j["engine_outputs_vs_given_reference"] = given_gate.ToJson(*policy);
  if (target.IsCuda()) j["target"] = target.Fingerprint();
  j["verdict"] = diverged ? "diverges" : "within threshold";
  if (a.json) {
    std::cout << j.dump() << "\n";
    return diverged ? 3 : 0;
  }
  std::cout << "route: " << (route.empty() ? "(default)" : route) << "\n"
            << (target.IsCuda() ? "target: " + target.Fingerprint() + "\n" : std::string()) << "model: " << model_path << " ("
            << sets->size() << " evaluation set(s), " << r->marked << " intermediate values marked as outputs, "
            << instrumented_fusions << " fusions still fired)\nnote: " << kFusionNote << "\n\n";
  PrintTable(*r);
  std::cout << "\n";
  if (r->first_diverging >= 0) {
    const LayerRow& row = r->rows[static_cast<size_t>(r->first_diverging)];
    std::cout << "first diverging node: " << row.node << " (" << row.op_type << ", #" << row.node_index << "), output '"
              << row.value << "': " << row.metric << " " << row.error << " > threshold " << row.threshold << " on set '"
              << row.worst_set << "'\n";
  } else {
    std::cout << "no intermediate value crosses the threshold\n";
  }
  std::cout << "engine as built, final outputs vs reference executor: "
            << (served_gate.passed ? "passed" : "FAILED: " + served_gate.first_failure) << "\n";
  if (has_given) {
    std::cout << "engine as built, final outputs vs --reference/data: "
              << (given_gate.passed ? "passed" : "FAILED: " + given_gate.first_failure) << "\n";
  }
  std::cout << "verdict: " << (diverged ? "diverges" : "within threshold") << "\n";
  return diverged ? 3 : 0;
}

}  // namespace

void AddCheckCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("check", "Layer-wise accuracy of a route against the reference executor "
                                          "(exit 0 within threshold, 3 divergence)");
  auto a = std::make_shared<CheckArgs>();
  cmd->add_option("PATH", a->path, "ONNX model (with --route) or engine (with --model)")->required();
  auto* route = cmd->add_option("--route", a->route, "route to build the model with (default route if omitted)");
  cmd->add_option("--model", a->model, "the engine's model (its sha256 must match the engine header)");
  cmd->add_option("--shapes", a->shapes, "input shapes for building a model");
  cmd->add_option("--target", a->target, "target to build a model for: cpu (default) or cuda; an engine "
                                         "is checked on its own target");
  cmd->add_option("--data", a->data, "evaluation data folder (docs/evaluation-data.md)")->required();
  cmd->add_option("--reference", a->reference, "reference outputs laid out like --data (final outputs only)");
  cmd->add_option("--metric", a->metric, "l0|l1|l2|linf|cos|topk")->capture_default_str();
  cmd->add_option("--atol", a->atol, "l0: elementwise absolute tolerance")->capture_default_str();
  cmd->add_option("--rtol", a->rtol, "l0: elementwise relative tolerance")->capture_default_str();
  cmd->add_option("--threshold", a->threshold, "threshold per value (default per metric, docs/tuner.md)");
  cmd->add_option("--topk", a->topk, "topk: k")->capture_default_str();
  cmd->add_option("--per-output", a->per_output, "NAME:metric=l2,threshold=1e-3 overrides (any value name)");
  cmd->add_flag("--json", a->json, "one JSON object on the last line of stdout");
  cmd->callback([=] {
    a->route_given = route->count() > 0;
    *exit_code = Check(*a);
  });
}

}  // namespace switchyard::cli
