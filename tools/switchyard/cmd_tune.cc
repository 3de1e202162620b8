// `switchyard tune MODEL --out DIR [...]`: the accuracy-gated global tuner (docs/tuner.md),
// and the hidden `__worker JOB RESULT` verb that runs one candidate in a child process.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "commands.h"
#include "io/npy.h"
#include "io/sha256.h"
#include "release/audit.h"
#include "tune/tuner.h"
#include "tune/worker.h"

namespace switchyard::cli {
namespace {

struct TuneArgs {
  std::string model, out, db, search = "mixed", sweep, budget, data, reference, target = "cpu";
  std::vector<std::string> input_specs, shapes, per_output;
  int64_t max_candidates = 0;
  uint64_t seed = 1;
  bool resume = false, json = false, retain_data = false;
  std::string metric = "l2";
  double atol = 1e-5, rtol = 1e-3;
  double threshold = -1;  // < 0: the metric's default
  int topk = 5;
  std::string min_improvement = "2%";
  std::string candidate_timeout = "10m";
  int64_t candidate_memory_mb = 0;
  int min_rounds = 10, max_rounds = 60, confirm_rounds = 200, warmup = 3, slower_rounds = 4;
  double target_ci = 1.0;  // percent
  int validate_sessions = 8;
  std::string repair = "auto";
  int repair_max_evals = 40;
  double repair_share = 0.35;
  std::string command_line;
};

Result<double> ParsePercent(const std::string& text, const std::string& flag) {
  std::string s = text;
  if (!s.empty() && s.back() == '%') s.pop_back();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v >= 0)) {
    return Status::Invalid(flag + " '" + text + "': expected a percentage such as 2 or 2%");
  }
  return v / 100.0;
}

Result<TuneOptions> ToOptions(const TuneArgs& a) {
  TuneOptions o;
  o.model = a.model;
  o.out_dir = a.out;
  o.db_path = a.db;
  o.target = a.target;
  o.resume = a.resume;
  o.search = a.search;
  o.sweep = a.sweep;
  if (!a.budget.empty()) {
    auto b = ParseDuration(a.budget);
    if (!b.ok()) return b.status().WithContext("--budget");
    o.budget_s = *b;
  }
  if (a.max_candidates < 0) return Status::Invalid("--max-candidates must not be negative");
  o.max_candidates = a.max_candidates;
  o.data_dir = a.data;
  o.input_specs = a.input_specs;
  o.seed = a.seed;
  o.shapes = a.shapes;
  o.reference_dir = a.reference;
  SY_ASSIGN_OR_RETURN(o.accuracy, PolicyFromFlags(a.metric, a.atol, a.rtol, a.topk, a.threshold, a.per_output));
  SY_ASSIGN_OR_RETURN(o.min_improvement, ParsePercent(a.min_improvement, "--min-improvement"));
  auto t = ParseDuration(a.candidate_timeout);
  if (!t.ok()) return t.status().WithContext("--candidate-timeout");
  o.candidate_timeout_s = *t;
  o.candidate_memory_bytes = a.candidate_memory_mb * (int64_t{1} << 20);
  if (a.min_rounds < 2 || a.max_rounds < a.min_rounds || a.confirm_rounds < a.min_rounds) {
    return Status::Invalid("measurement rounds: need 2 <= --min-rounds <= --max-rounds and --confirm-rounds");
  }
  if (a.slower_rounds < 0) return Status::Invalid("--slower-rounds: need 0 (never) or more rounds");
  SY_ASSIGN_OR_RETURN(double ci, ParsePercent(std::to_string(a.target_ci), "--target-ci"));
  o.measure.warmup = a.warmup;
  o.measure.slower_rounds = a.slower_rounds;
  o.measure.min_rounds = a.min_rounds;
  o.measure.max_rounds = a.max_rounds;
  o.measure.target_rel_ci = ci;
  o.measure.max_seconds = 20;
  o.final_measure = o.measure;
  o.final_measure.min_rounds = std::max(a.min_rounds, 20);
  o.final_measure.max_rounds = a.confirm_rounds;
  o.final_measure.target_rel_ci = ci / 2;
  o.final_measure.max_seconds = 60;
  o.validate_sessions = a.validate_sessions;
  o.retain_data = a.retain_data;
  if (a.repair != "auto" && a.repair != "on" && a.repair != "off") {
    return Status::Invalid("--repair '" + a.repair + "': expected auto, on or off");
  }
  o.repair = a.repair;
  o.repair_max_evals = a.repair_max_evals;
  if (!(a.repair_share >= 0 && a.repair_share < 1)) {
    return Status::Invalid("--repair-share " + std::to_string(a.repair_share) + ": expected a fraction in [0, 1)");
  }
  o.repair_share = a.repair_share;
  o.command_line = a.command_line;
  if (!a.json) {
    o.progress = [](const std::string& line) { std::cout << line << std::endl; };
  }
  return o;
}

// One line in DIR/audit.jsonl per tune run that got as far as creating DIR (docs/release-store.md).
void AuditTune(const TuneArgs& a, const Result<nlohmann::ordered_json>& summary) {
  namespace fs = std::filesystem;
  if (a.out.empty() || !fs::is_directory(a.out)) return;
  nlohmann::json e = release::AuditBase("tune", a.command_line);
  auto sha = Sha256File(a.model);
  e["model_sha256"] = sha.ok() ? *sha : "";
  auto text = ReadFileBytes(a.out + "/record.json", int64_t{1} << 28);
  nlohmann::json rec = text.ok() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (rec.is_object()) {
    e["data_sha256"] = rec["data"].value("input_profile", "");
    e["proposed"] = rec["selected"].is_object() ? nlohmann::json(rec["selected"].value("route", "")) : nlohmann::json(nullptr);
    e["reason"] = rec["decision"].value("reason", "");
  }
  if (summary.ok()) {
    e["executed"] = "wrote selected.engine, baseline.engine, record.json, record.md";
    e["outcome"] = (*summary)["selected"]["route"] == (*summary)["baseline"]["route"] ? "baseline kept" : "selected";
  } else {
    e["executed"] = rec.is_object() ? "wrote record.json" : "nothing";
    e["outcome"] = rec.is_object() && rec.value("status", "") == "interrupted" ? "interrupted" : "error";
    e["reason"] = summary.status().ToString();
  }
  Status s = release::AppendAudit(a.out + "/audit.jsonl", e);
  if (!s.ok()) std::cerr << "warning: audit log: " << s.ToString() << "\n";
}

int Tune(const TuneArgs& a) {
  auto o = ToOptions(a);
  if (!o.ok()) return ReportError(o.status());
  auto summary = switchyard::Tune(*o);
  AuditTune(a, summary);
  if (!summary.ok()) return ReportError(summary.status());
  if (a.json) {
    std::cout << summary->dump() << "\n";
  } else {
    const auto& s = *summary;
    std::cout << "\nselected: " << (s["selected"]["route"].get<std::string>().empty() ? "(default)" : s["selected"]["route"].get<std::string>())
              << "  p50 " << s["selected"]["p50_ms"] << " ms, speedup " << s["selected"]["speedup"] << "x\n"
              << "why: " << s["reason"].get<std::string>() << "\n"
              << "candidates " << s["candidates"] << " (unique engines " << s["unique_engines"] << ", reused "
              << s["reused"] << ", rejected for accuracy " << s["rejected_accuracy"] << ", failed " << s["failed"]
              << ")\nwrote " << s["out"].get<std::string>() << "/{selected.engine,baseline.engine,record.json,record.md}\n";
  }
  return 0;
}

}  // namespace

void AddTuneCommand(CLI::App& app, int* exit_code, const std::string& command_line) {
  auto* cmd = app.add_subcommand("tune", "Search routes, gate accuracy, measure, and ship the winner with a record");
  auto a = std::make_shared<TuneArgs>();
  a->command_line = command_line;
  cmd->add_option("MODEL", a->model, "ONNX model")->required();
  cmd->add_option("--out,-o", a->out, "output folder (selected.engine, baseline.engine, record.json, record.md)")
      ->required();
  cmd->add_option("--db", a->db, "tuning database (default DIR/tuning.db)");
  cmd->add_option("--target", a->target, "target to tune for: cpu or cuda (builds with CUDA support; needs the GPU)")
      ->capture_default_str();
  cmd->add_flag("--continue", a->resume, "resume an interrupted run in DIR (stored candidates are reused)");
  cmd->add_flag("--json", a->json, "print only one summary JSON object");
  cmd->add_option("--search", a->search, "fast|full|mixed|random|greedy|halving")->capture_default_str();
  cmd->add_option("--sweep", a->sweep, "restrict the space: 'knob=[a|b] other=x'");
  cmd->add_option("--budget", a->budget, "time budget, e.g. 90s or 10m (the candidate in flight finishes)");
  cmd->add_option("--max-candidates", a->max_candidates, "stop after this many candidates (0 = no limit)");
  cmd->add_option("--data", a->data, "evaluation data folder (docs/evaluation-data.md)");
  cmd->add_option("--input-spec", a->input_specs, "NAME:float32[1,3,224,224]~uniform(0,1), one per input");
  cmd->add_option("--seed", a->seed, "seed for generated inputs and sampling strategies")->capture_default_str();
  cmd->add_option("--shapes", a->shapes, "input shapes as for build: x=1x3x224x224 or x=[1..8]x3x224x224");
  cmd->add_option("--reference", a->reference, "reference outputs laid out like --data (default: computed)");
  cmd->add_option("--metric", a->metric, "l0|l1|l2|linf|cos|topk")->capture_default_str();
  cmd->add_option("--atol", a->atol, "l0: elementwise absolute tolerance")->capture_default_str();
  cmd->add_option("--rtol", a->rtol, "l0: elementwise relative tolerance")->capture_default_str();
  cmd->add_option("--threshold", a->threshold, "gate threshold (default per metric, docs/tuner.md)");
  cmd->add_option("--topk", a->topk, "topk: k")->capture_default_str();
  cmd->add_option("--per-output", a->per_output, "NAME:metric=l2,threshold=1e-3 overrides");
  cmd->add_option("--min-improvement", a->min_improvement, "required speedup over the baseline, percent")
      ->capture_default_str();
  cmd->add_option("--candidate-timeout", a->candidate_timeout, "per candidate process")->capture_default_str();
  cmd->add_option("--candidate-memory-mb", a->candidate_memory_mb, "address-space limit per candidate (0 = none)");
  cmd->add_option("--warmup", a->warmup, "untimed runs before measuring")->capture_default_str();
  cmd->add_option("--min-rounds", a->min_rounds, "interleaved rounds per candidate, at least")->capture_default_str();
  cmd->add_option("--max-rounds", a->max_rounds, "interleaved rounds per candidate, at most")->capture_default_str();
  cmd->add_option("--slower-rounds", a->slower_rounds,
                  "stop measuring a candidate after this many rounds once it is surely (95%) 1% or more slower "
                  "than the baseline (0 = never)")
      ->capture_default_str();
  cmd->add_option("--confirm-rounds", a->confirm_rounds, "rounds of the winner's confirming measurement, at most")
      ->capture_default_str();
  cmd->add_option("--target-ci", a->target_ci, "stop measuring when the 95% interval is within +-this percent")
      ->capture_default_str();
  cmd->add_option("--validate-sessions", a->validate_sessions, "concurrent sessions in the long-tail check")
      ->capture_default_str();
  cmd->add_option("--repair", a->repair,
                  "mixed-precision repair of a failing bf16 route: auto (for --search mixed, when the failing route "
                  "measures faster than every passing candidate), on (always), off")
      ->capture_default_str();
  cmd->add_option("--repair-max-evals", a->repair_max_evals, "accuracy-only builds the repair may spend")
      ->capture_default_str();
  cmd->add_option("--repair-share", a->repair_share,
                  "share of --budget the search leaves to the repair once a failing reduced-precision route "
                  "(within 100x the tolerance) measures faster than every passing candidate")
      ->capture_default_str();
  cmd->add_flag("--retain-data", a->retain_data,
                "keep the evaluation tensors in DIR/retained-data (default: hashes and shapes only)");
  cmd->callback([=] { *exit_code = Tune(*a); });

  // The child side of candidate isolation; not for people.
  auto* worker = app.add_subcommand("__worker", "");
  worker->group("");
  auto paths = std::make_shared<std::pair<std::string, std::string>>();
  worker->add_option("JOB", paths->first)->required();
  worker->add_option("RESULT", paths->second)->required();
  worker->callback([=] {
    Status s = RunWorkerJob(paths->first, paths->second);
    *exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace switchyard::cli
