// `switchyard compare OLD NEW [...]`: canary comparison of two engines (or models built
// for routes) of one model, with a promote/hold verdict (docs/compare.md). Exit codes: 0
// promote, 3 hold, 1 error. Also the hidden `__compare_memory` verb: the child process
// that measures one engine's peak memory alone.
#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "commands.h"
#include "engine_loader.h"
#include "io/npy.h"
#include "io/sha256.h"
#include "onnx/importer.h"
#include "tune/compare.h"
#include "tune/process.h"

namespace switchyard::cli {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

struct CompareArgs {
  std::string old_path, new_path, route_old, route_new, model, data, concurrency = "1,4,16";
  std::string target;  // for sides that are models ("": cpu); engines run on their own
  std::vector<std::string> inputs, per_output;
  double duration = 2;
  int blocks = 4;
  uint64_t seed = 1;
  std::string metric = "l2";
  double atol = 1e-5, rtol = 1e-3, threshold = -1;
  int topk = 5;
  double max_p95 = 5, max_throughput = 5, max_memory = 10;
  bool json = false;
};

// One side: the engine, where it came from, and its model's sha256 ("" if unknown).
struct Side {
  std::string path, kind, route, model_sha256;
  EngineSource src;
};

Result<Side> LoadSide(const std::string& path, const std::string& route, const std::string& target,
                      const char* which) {
  if (!fs::exists(path)) return Status::NotFound(std::string(which) + " '" + path + "' does not exist");
  Side s;
  s.path = path;
  auto src = LoadOrBuild(path, route, {}, target);
  if (!src.ok()) return src.status().WithContext(which);
  s.src = std::move(*src);
  s.kind = s.src.built ? "model" : "engine";
  s.route = s.src.engine->engine().header.route;
  if (s.src.built) {
    SY_ASSIGN_OR_RETURN(s.model_sha256, Sha256File(path));
  } else {
    s.model_sha256 = s.src.engine->engine().header.model_sha256;
  }
  return s;
}

// Names and dtypes of an engine's inputs and outputs: the interface both sides must share.
std::string Interface(const Engine& e) {
  std::ostringstream os;
  for (int t : e.inputs) os << "in " << e.tensors[static_cast<size_t>(t)].name << ":" << DataTypeName(e.tensors[static_cast<size_t>(t)].dtype) << " ";
  for (int t : e.outputs) os << "out " << e.tensors[static_cast<size_t>(t)].name << ":" << DataTypeName(e.tensors[static_cast<size_t>(t)].dtype) << " ";
  return os.str();
}

Result<std::vector<int>> ParseLevels(const std::string& text) {
  std::vector<int> levels;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 1024) {
      return Status::Invalid("--concurrency '" + text + "': expected a list like 1,4,16 of integers in [1, 1024]");
    }
    levels.push_back(static_cast<int>(v));
  }
  if (levels.empty()) return Status::Invalid("--concurrency is empty");
  return levels;
}

Result<CompareOptions> ToOptions(const CompareArgs& a) {
  CompareOptions o;
  SY_ASSIGN_OR_RETURN(o.concurrency, ParseLevels(a.concurrency));
  if (!(a.duration > 0)) return Status::Invalid("--duration must be positive");
  if (a.blocks < 1) return Status::Invalid("--blocks must be at least 1");
  o.duration_s = a.duration;
  o.blocks = a.blocks;
  for (double v : {a.max_p95, a.max_throughput, a.max_memory}) {
    if (!(v >= 0)) return Status::Invalid("regression tolerances are non-negative percentages");
  }
  o.max_p95_regression = a.max_p95 / 100;
  o.max_throughput_regression = a.max_throughput / 100;
  o.max_memory_regression = a.max_memory / 100;
  SY_ASSIGN_OR_RETURN(o.policy, PolicyFromFlags(a.metric, a.atol, a.rtol, a.topk, a.threshold, a.per_output));
  return o;
}

// A temporary folder removed when the object dies (engines and inputs for the memory child).
class WorkDir {
 public:
  WorkDir() {
    const char* t = getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/switchyard_compare_XXXXXX";
    if (mkdtemp(tmpl.data())) path_ = tmpl;
  }
  ~WorkDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Result<std::string> EngineFile(const Side& s, const WorkDir& w, const char* name) {
  if (!s.src.built) return s.path;
  const std::string p = w.path() + "/" + name + ".engine";
  SY_RETURN_IF_ERROR(WriteEngine(p, s.src.engine->engine()));
  return p;
}

void PrintText(const ojson& j, const Side& o, const Side& n) {
  auto route = [](const std::string& r) { return r.empty() ? std::string("(default)") : r; };
  auto target = [](const Side& s) {
    return s.src.target.IsCuda() ? ", target " + s.src.target.Fingerprint() : std::string();
  };
  std::cout << "OLD: " << o.path << " (" << o.kind << ", route " << route(o.route) << target(o) << ")\n"
            << "NEW: " << n.path << " (" << n.kind << ", route " << route(n.route) << target(n) << ")\n\n";
  std::printf("%-11s %-4s %10s %10s %10s %12s %6s %8s %8s\n", "concurrency", "", "p50_ms", "p95_ms", "p99_ms",
              "throughput/s", "failed", "p95 x", "tput x");
  for (const auto& l : j["levels"]) {
    for (const char* side : {"old", "new"}) {
      const auto& s = l[side];
      std::printf("%-11d %-4s %10.3f %10.3f %10.3f %12.1f %6lld", l["concurrency"].get<int>(), side,
                  s["p50_ms"].get<double>(), s["p95_ms"].get<double>(), s["p99_ms"].get<double>(),
                  s["throughput_per_s"].get<double>(), static_cast<long long>(s["failed"].get<int64_t>()));
      if (std::string(side) == "new") {
        std::printf(" %8.3f %8.3f", l["p95_ratio"].get<double>(), l["throughput_ratio"].get<double>());
      }
      std::printf("\n");
    }
  }
  const auto& m = j["memory"];
  std::cout << "\npeak memory (" << m["method"].get<std::string>() << ", concurrency " << m["concurrency"]
            << "): old " << m["old_bytes"] << " bytes, new " << m["new_bytes"] << " bytes\n";
  const auto& acc = j["accuracy"];
  auto gate = [](const ojson& g) {
    if (g.is_null()) return std::string("-");
    return g["passed"].get<bool>() ? std::string("passed") : "FAILED: " + g["first_failure"].get<std::string>();
  };
  std::cout << "accuracy (" << acc["policy"]["metric"].get<std::string>() << " <= " << acc["policy"]["threshold"]
            << "): new vs old " << gate(acc["new_vs_old"]) << "\n  reference: " << acc["reference"].get<std::string>()
            << "\n  new vs reference " << gate(acc["new_vs_reference"]) << "\n  old vs reference "
            << gate(acc["old_vs_reference"]) << "\n";
  std::cout << "\nverdict: " << j["verdict"].get<std::string>() << "\n";
  for (const auto& r : j["reasons"]) std::cout << "  - " << r.get<std::string>() << "\n";
}

int Compare(const CompareArgs& a) {
  auto opt = ToOptions(a);
  if (!opt.ok()) return ReportError(opt.status());
  auto old_side = LoadSide(a.old_path, a.route_old, a.target, "OLD");
  if (!old_side.ok()) return ReportError(old_side.status());
  auto new_side = LoadSide(a.new_path, a.route_new, a.target, "NEW");
  if (!new_side.ok()) return ReportError(new_side.status());
  const Engine& oe = old_side->src.engine->engine();
  const Engine& ne = new_side->src.engine->engine();
  // Same model: by sha256 where both are known, else by interface.
  if (!old_side->model_sha256.empty() && !new_side->model_sha256.empty() &&
      old_side->model_sha256 != new_side->model_sha256) {
    return ReportError(Status::Invalid("OLD and NEW are not of the same model: model sha256 " + old_side->model_sha256 +
                                       " ('" + a.old_path + "') vs " + new_side->model_sha256 + " ('" + a.new_path + "')"));
  }
  if (Interface(oe) != Interface(ne)) {
    return ReportError(Status::Invalid("OLD and NEW have different inputs or outputs: " + Interface(oe) + "vs " +
                                       Interface(ne)));
  }
  // The reference model: NEW's model, else OLD's, else --model (checked against the sha).
  std::string ref_path = new_side->src.built ? a.new_path : old_side->src.built ? a.old_path : a.model;
  if (!a.model.empty()) {
    auto sha = Sha256File(a.model);
    if (!sha.ok()) return ReportError(sha.status().WithContext("--model"));
    const std::string& want = !new_side->model_sha256.empty() ? new_side->model_sha256 : old_side->model_sha256;
    if (!want.empty() && *sha != want) {
      return ReportError(Status::Invalid("--model '" + a.model + "' (sha256 " + *sha +
                                         ") is not the model the engines were built from (" + want + ")"));
    }
  }
  std::optional<Graph> ref_graph;
  if (!ref_path.empty()) {
    auto g = ImportModel(ref_path);
    if (!g.ok()) return ReportError(g.status().WithContext("reference model"));
    ref_graph.emplace(std::move(*g));
  }
  // Evaluation data: --data sets, else --input (one set), else generated inputs.
  std::vector<std::string> in_names, out_names;
  for (int t : ne.inputs) in_names.push_back(ne.tensors[static_cast<size_t>(t)].name);
  for (int t : ne.outputs) out_names.push_back(ne.tensors[static_cast<size_t>(t)].name);
  std::vector<EvalSet> sets;
  if (!a.data.empty()) {
    if (!a.inputs.empty()) return ReportError(Status::Invalid("give --data or --input, not both"));
    auto s = LoadEvalData(a.data, in_names, out_names);
    if (!s.ok()) return ReportError(s.status().WithContext("--data"));
    sets = std::move(*s);
  } else {
    auto in = EngineInputs(ne, a.inputs, a.seed);
    if (!in.ok()) return ReportError(in.status());
    EvalSet s;
    s.name = a.inputs.empty() ? "generated" : "input";
    s.inputs = std::move(*in);
    sets.push_back(std::move(s));
  }
  WorkDir work;
  if (work.path().empty()) return ReportError(Status::IoError("cannot create a temporary folder"));
  auto old_file = EngineFile(*old_side, work, "old");
  if (!old_file.ok()) return ReportError(old_file.status());
  auto new_file = EngineFile(*new_side, work, "new");
  if (!new_file.ok()) return ReportError(new_file.status());

  // Everything that runs an engine runs on a thread of its own, never the initial thread
  // (measure.cc: initial-thread runs were 10-15x slower under load and skewed ratios).
  AccuracyComparison acc;
  std::vector<LevelComparison> levels;
  std::thread t([&] {
    acc = CompareOutputs(old_side->src.engine, new_side->src.engine, sets, ref_graph ? &*ref_graph : nullptr,
                         opt->policy);
    for (int c : opt->concurrency) {
      levels.push_back(CompareAtLevel(old_side->src.engine, new_side->src.engine, sets.front().inputs, c, *opt));
    }
  });
  t.join();
  auto self = SelfExecutable();
  if (!self.ok()) return ReportError(self.status());
  const int max_level = *std::max_element(opt->concurrency.begin(), opt->concurrency.end());
  auto old_mem = MeasureMemoryInChild({*self, "__compare_memory"}, *old_file, oe, sets.front().inputs, work.path(), max_level);
  auto new_mem = MeasureMemoryInChild({*self, "__compare_memory"}, *new_file, ne, sets.front().inputs, work.path(), max_level);
  // A side whose memory run fails is a failed run: hold, with the error as the reason.
  MemoryMeasurement om = old_mem.ok() ? *old_mem : MemoryMeasurement{};
  MemoryMeasurement nm = new_mem.ok() ? *new_mem : MemoryMeasurement{};
  Verdict v = Decide(levels, om, nm, acc, *opt);
  if (!old_mem.ok()) v.promote = false, v.reasons.push_back("OLD memory run failed: " + old_mem.status().ToString());
  if (!new_mem.ok()) v.promote = false, v.reasons.push_back("NEW memory run failed: " + new_mem.status().ToString());
  ojson j = {{"old", {{"path", a.old_path}, {"kind", old_side->kind}, {"route", old_side->route}}},
             {"new", {{"path", a.new_path}, {"kind", new_side->kind}, {"route", new_side->route}}},
             {"model_sha256", new_side->model_sha256.empty() ? old_side->model_sha256 : new_side->model_sha256},
             {"sets", sets.size()},
             {"duration_s", opt->duration_s},
             {"blocks", opt->blocks}};
  if (old_side->src.target.IsCuda()) j["old"]["target"] = old_side->src.target.Fingerprint();
  if (new_side->src.target.IsCuda()) j["new"]["target"] = new_side->src.target.Fingerprint();
  j.update(CompareToJson(levels, om, nm, acc, v, *opt));
  if (a.json) {
    std::cout << j.dump() << "\n";
  } else {
    PrintText(j, *old_side, *new_side);
  }
  return v.promote ? 0 : 3;
}

}  // namespace

void AddCompareCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("compare", "Canary comparison of two engines of one model: promote (exit 0) or hold (exit 3)");
  auto a = std::make_shared<CompareArgs>();
  cmd->add_option("OLD", a->old_path, "engine in service (or a model, with --route-old)")->required();
  cmd->add_option("NEW", a->new_path, "engine to promote (or a model, with --route-new)")->required();
  cmd->add_option("--route-old", a->route_old, "route to build OLD with, when it is a model");
  cmd->add_option("--route-new", a->route_new, "route to build NEW with, when it is a model");
  cmd->add_option("--model", a->model, "the model, for the reference when both are engines");
  cmd->add_option("--target", a->target, "target to build model sides for: cpu (default) or cuda; an engine "
                                         "runs on its own target");
  cmd->add_option("--data", a->data, "evaluation data folder (docs/evaluation-data.md)");
  cmd->add_option("--input,-i", a->inputs, "NAME=FILE; missing inputs are generated");
  cmd->add_option("--seed", a->seed, "seed for generated inputs")->capture_default_str();
  cmd->add_option("--concurrency", a->concurrency, "concurrency levels, comma separated")->capture_default_str();
  cmd->add_option("--duration", a->duration, "timed seconds per engine per level")->capture_default_str();
  cmd->add_option("--blocks", a->blocks, "alternating blocks per engine per level")->capture_default_str();
  cmd->add_option("--metric", a->metric, "l0|l1|l2|linf|cos|topk")->capture_default_str();
  cmd->add_option("--atol", a->atol, "l0: elementwise absolute tolerance")->capture_default_str();
  cmd->add_option("--rtol", a->rtol, "l0: elementwise relative tolerance")->capture_default_str();
  cmd->add_option("--threshold", a->threshold, "accuracy threshold (default per metric, docs/tuner.md)");
  cmd->add_option("--topk", a->topk, "topk: k")->capture_default_str();
  cmd->add_option("--per-output", a->per_output, "NAME:metric=l2,threshold=1e-3 overrides");
  cmd->add_option("--max-p95-regression", a->max_p95, "percent")->capture_default_str();
  cmd->add_option("--max-throughput-regression", a->max_throughput, "percent")->capture_default_str();
  cmd->add_option("--max-memory-regression", a->max_memory, "percent")->capture_default_str();
  cmd->add_flag("--json", a->json, "one JSON object on the last line of stdout");
  cmd->callback([=] { *exit_code = Compare(*a); });

  // The memory child: one engine alone in a process; not for people.
  auto* child = app.add_subcommand("__compare_memory", "");
  child->group("");
  auto c = std::make_shared<std::vector<std::string>>(4);
  child->add_option("ENGINE", (*c)[0])->required();
  child->add_option("INPUT_DIR", (*c)[1])->required();
  child->add_option("CONCURRENCY", (*c)[2])->required();
  child->add_option("RESULT", (*c)[3])->required();
  child->callback([=] {
    Status s = RunMemoryChild((*c)[0], (*c)[1], std::atoi((*c)[2].c_str()), (*c)[3]);
    *exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace switchyard::cli
