// Internal to the tuner (tuner*.cc, record.cc): the prepared evaluation data, the pieces
// of the release record, and the Tuner class whose phases live in several files. Not a
// public interface.
#pragma once

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "build/target.h"
#include "ir/graph.h"
#include "tune/eval_data.h"
#include "tune/database.h"
#include "tune/tuner.h"

namespace switchyard::tuner {

struct PreparedData {
  std::vector<EvalSet> sets;       // every set with its reference
  nlohmann::json worker_sets;      // [{name, inputs: {NAME: file}, reference: {NAME: file}}]
  nlohmann::ordered_json record;   // "data" of record.json (sources, hashes, shapes)
  std::string input_profile;       // the database key part (hash of data, shapes, policies)
  double reference_s = 0;          // time spent computing references
};

// Loads or generates the evaluation sets, computes missing references with the reference
// executor, writes every tensor under work_dir (for the workers) and hashes it all.
Result<PreparedData> PrepareData(const TuneOptions& options, const Graph& graph,
                                 const std::string& work_dir);

// The target section of the record: CPU model, cores, features, library versions; for a
// cuda target also the GPU (name, compute capability, SMs, memory, driver, CUDA runtime,
// cuBLASLt and cuDNN versions). docs/record-format.md.
nlohmann::ordered_json TargetJson(const Target& target);

// record.md from record.json (the same facts, for people).
std::string RenderRecordMarkdown(const nlohmann::ordered_json& record);


// ---- the tuner itself (tuner.cc: setup, baseline, search; tuner_select.cc: selection and
// validation; tuner_record.cc: record.json, outputs, summary) ----

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

inline double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

inline std::string Fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

// A number a worker wrote, or `fallback` where the key is missing or not a number: JSON has
// no infinity or NaN, so nlohmann writes them as null (a one-pair measurement's upper bound
// is infinite: stats.cc), and json::value() throws on a null where it expects a number.
inline double JsonNum(const json& j, const char* key, double fallback = 0.0) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}
// A measurement's upper 95% bound: null where it was infinite (fewer than two pairs).
inline double CiHigh(const json& m) {
  return m.is_object() && m.contains("ci_high") ? JsonNum(m, "ci_high", std::numeric_limits<double>::infinity()) : 0.0;
}

inline std::string RouteLabel(const std::string& r) { return r.empty() ? "(default)" : r; }

inline std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

inline nlohmann::json InterleaveJson(const InterleaveOptions& m) {
  return {{"warmup", m.warmup},
          {"block", m.block},
          {"min_rounds", m.min_rounds},
          {"max_rounds", m.max_rounds},
          {"target_rel_ci", m.target_rel_ci},
          {"max_seconds", m.max_seconds},
          {"slower_rounds", m.slower_rounds},
          {"slower_than", m.slower_than}};
}

// One evaluated route, as the record and the strategy see it.
struct Outcome {
  Route route;
  CandidateResult c;
  bool reused = false;
  std::string duplicate_of;  // route whose engine this one's equals
  double speedup = 0, ci_low = 0, ci_high = 0;
  int rounds = 0;
  bool is_baseline = false;

  bool passed() const { return c.status == "passed"; }
  ojson ToJson() const {
    ojson j = {{"route", c.route}, {"status", c.status}, {"engine_sha256", c.engine_sha256}};
    if (!c.error.empty()) j["error"] = c.error;
    if (c.status == "duplicate") j["duplicate_of"] = duplicate_of;
    j["reused"] = reused;
    if (passed() && speedup > 0) {
      j["speedup"] = speedup;
      j["speedup_ci95"] = {ci_low, ci_high};
      j["p50_ms"] = JsonNum(c.measurement, "p50_ms");
      j["rounds"] = rounds;
    }
    if (!c.accuracy.empty()) j["accuracy"] = c.accuracy;
    j["build_s"] = c.build_s;
    j["accuracy_s"] = c.accuracy_s;
    j["measure_s"] = c.measure_s;
    return j;
  }
};

// speedup, ci_low, ci_high and rounds from oc->c.measurement (a worker's result or a stored
// one; an infinite ci_high comes back from its JSON null).
void FillSpeedup(Outcome* oc);

class Tuner {
 public:
  explicit Tuner(const TuneOptions& o) : o_(o) {}
  Result<ojson> Run();

 private:
  // The phases of Run(), in order (tuner.cc, tuner_select.cc, tuner_record.cc).
  Status Setup();
  Status RunBaseline();
  Status Search();
  // The mixed-precision repair (tuner_repair.cc). RepairBase: the plainest rejected
  // reduced-precision route, or null. WeighRepair, after each search step: once such a
  // route exists, measure it (what a repair could reach at most); while that beats the best
  // passing candidate, RepairReserve() keeps --repair-share of the budget from the search.
  // Repair, after the search: skips when the failing route is no faster than the best
  // passing one, else searches the fewest nodes to keep in fp32.
  bool RepairOn() const;
  const Outcome* RepairBase() const;
  void WeighRepair();
  // Measures `base` (rejected) against the baseline: repair_potential_ and its outcome's
  // measurement; false when that failed.
  bool MeasureRepairBase(const Route& base);
  double RepairReserve() const;
  double BestPassingSpeedup() const;
  void Repair();
  void SelectAndValidate();
  ojson Record();
  ojson Scope() const;  // what the evidence covers and what it does not (record "scope")
  Result<ojson> Finish(ojson& record);
  // SIGINT/SIGTERM arrived: writes record.json with status "interrupted" (what was done,
  // what remains), keeps DIR/.work for --continue, and returns the error to report.
  Status Interrupted();
  bool StopRequested() const;

  void Say(const std::string& line) const {
    if (o_.progress) o_.progress(line);
  }
  // Runs one worker job in a child; a missing result becomes a crash/timeout result.
  json RunJob(json job, const std::string& tag);
  json BaseJob(const std::string& phase, const std::string& route) const;
  Result<Outcome> Evaluate(const Proposal& p);
  // Builds, gates and (with `measure`) measures one route in a child and stores the result
  // (`replace`: over a stored row of the same key). measure_rejected: measure even when the
  // gate fails (the repair's "speed given up").
  Result<Outcome> RunCandidate(const Route& route, const InterleaveOptions* measure, bool measure_rejected,
                               bool replace);
  Outcome FromResult(const std::string& route, const json& r) const;
  Feedback FeedbackFor(const Outcome& oc) const;
  bool BudgetLeft(std::string* why) const;
  std::string ProgressLine(const Outcome& oc) const;
  Status WriteOutputs(ojson& record);

  const TuneOptions& o_;
  std::string out_, work_, worker_;
  Graph graph_;
  Target target_;  // Target::ForName(o_.target), resolved in Setup
  std::string model_sha_;
  tuner::PreparedData data_;
  CandidateKey key_;
  std::unique_ptr<TuningDatabase> db_;
  int64_t run_id_ = 0;
  Clock::time_point start_;
  int job_counter_ = 0;

  Outcome baseline_;
  double base_p50_ = 0;          // baseline p50 of its solo profile: the latency scale
  json baseline_profile_;
  std::vector<Outcome> outcomes_;  // in evaluation order
  std::map<std::string, std::string> engines_;  // engine sha -> first route with it
  std::map<std::string, size_t> by_route_;      // route -> index in outcomes_
  std::unique_ptr<SearchStrategy> strategy_;
  double build_s_ = 0, accuracy_s_ = 0, measure_s_ = 0, validate_s_ = 0;
  std::vector<std::string> notes_;

  SearchSpace search_space_;
  std::optional<RouteSpace> space_;
  ojson repair_ = nullptr;  // what the mixed-precision repair did (record "repair")
  std::string repair_base_;      // the route WeighRepair measured ("" = none yet)
  double repair_potential_ = 0;  // that route's speedup over the baseline (0 = unknown)
  std::string base_route_, db_path_;
  json profile_job_;                 // solo-profile settings shared by baseline and winner
  std::string stopped_by_ = "space covered";
  bool covered_ = false;
  ojson demoted_ = ojson::array();   // winners that failed validation or confirmation
  std::optional<size_t> winner_;     // index into outcomes_
  json winner_validation_, winner_profile_;
};

// Set by the SIGINT/SIGTERM handler Tune() installs for its duration (tuner.cc).
extern std::atomic<bool> g_stop_requested;
extern std::atomic<int> g_stop_signal;

}  // namespace switchyard::tuner
