// The tuning loop (DESIGN.md "Tuning loop"): baseline, search, selection, long-tail
// validation, outputs.
#include "tune/tuner.h"

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "build/target.h"
#include "io/npy.h"
#include "io/sha256.h"
#include "onnx/importer.h"
#include "switchyard/version.h"
#include "tune/database.h"
#include "tune/process.h"
#include "tune/tuner_internal.h"

namespace switchyard {

Result<double> ParseDuration(const std::string& text) {
  if (text.empty()) return Status::Invalid("empty duration (use e.g. 90s, 10m, 1h)");
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string unit(end);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "m" || unit == "min") scale = 60;
  else if (unit == "h") scale = 3600;
  if (end == text.c_str() || scale == 0 || !std::isfinite(v) || v < 0) {
    return Status::Invalid("duration '" + text + "': expected a number with s, m or h (90s, 10m, 1h)");
  }
  return v * scale;
}

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string Fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

std::string RouteLabel(const std::string& r) { return r.empty() ? "(default)" : r; }

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json InterleaveJson(const InterleaveOptions& m) {
  return {{"warmup", m.warmup},
          {"block", m.block},
          {"min_rounds", m.min_rounds},
          {"max_rounds", m.max_rounds},
          {"target_rel_ci", m.target_rel_ci},
          {"max_seconds", m.max_seconds}};
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
      j["p50_ms"] = c.measurement.value("p50_ms", 0.0);
      j["rounds"] = rounds;
    }
    if (!c.accuracy.empty()) j["accuracy"] = c.accuracy;
    j["build_s"] = c.build_s;
    j["accuracy_s"] = c.accuracy_s;
    j["measure_s"] = c.measure_s;
    return j;
  }
};

class Tuner {
 public:
  explicit Tuner(const TuneOptions& o) : o_(o) {}
  Result<ojson> Run();

 private:
  void Say(const std::string& line) const {
    if (o_.progress) o_.progress(line);
  }
  // Runs one worker job in a child; a missing result becomes a crash/timeout result.
  json RunJob(json job, const std::string& tag);
  json BaseJob(const std::string& phase, const std::string& route) const;
  Result<Outcome> Evaluate(const Proposal& p);
  Outcome FromResult(const std::string& route, const json& r) const;
  Feedback FeedbackFor(const Outcome& oc) const;
  bool BudgetLeft(std::string* why) const;
  std::string ProgressLine(const Outcome& oc) const;
  Status WriteOutputs(ojson& record);

  const TuneOptions& o_;
  std::string out_, work_, worker_;
  Graph graph_;
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
};

json Tuner::BaseJob(const std::string& phase, const std::string& route) const {
  return {{"phase", phase},
          {"model", fs::absolute(o_.model).string()},
          {"model_sha256", model_sha_},
          {"route", route},
          {"shapes", o_.shapes},
          {"sets", data_.worker_sets},
          {"accuracy", o_.accuracy.ToJson()}};
}

json Tuner::RunJob(json job, const std::string& tag) {
  const std::string n = std::to_string(job_counter_++);
  const std::string job_path = work_ + "/job-" + n + ".json", result_path = work_ + "/result-" + n + ".json";
  const std::string log_path = work_ + "/log-" + n + ".txt";
  std::error_code ec;
  fs::remove(result_path, ec);
  Status w = WriteFileAtomic(job_path, job.dump());
  if (!w.ok()) return {{"status", "crashed"}, {"error", w.ToString()}};
  ChildOptions co;
  co.argv = {worker_, "__worker", job_path, result_path};
  co.timeout_s = o_.candidate_timeout_s;
  co.memory_limit_bytes = o_.candidate_memory_bytes;
  co.log_path = log_path;
  auto cr = RunChild(co);
  if (!cr.ok()) return {{"status", "crashed"}, {"error", cr.status().ToString()}};
  json result;
  auto text = ReadFileBytes(result_path, int64_t{1} << 26);
  if (text.ok()) result = json::parse(*text, nullptr, false);
  fs::remove(job_path, ec);
  fs::remove(result_path, ec);
  if (cr->exit_code == 0 && result.is_object() && result.contains("status")) {
    fs::remove(log_path, ec);
    return result;
  }
  std::string tail = cr->log_tail;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  if (tail.size() > 400) tail = "..." + tail.substr(tail.size() - 400);
  const std::string status = cr->timed_out ? "timeout" : "crashed";
  json f = {{"status", status},
            {"error", tag + ": worker " + cr->Describe() + (tail.empty() ? "" : "; its last output: " + tail)},
            {"build_s", cr->wall_s}};
  fs::remove(log_path, ec);
  return f;
}

Outcome Tuner::FromResult(const std::string& route, const json& r) const {
  Outcome oc;
  oc.c.key = key_;
  oc.c.run_id = run_id_;
  oc.c.route = route;
  oc.c.status = r.value("status", "crashed");
  oc.c.error = r.value("error", "");
  oc.c.engine_sha256 = r.value("engine_sha256", "");
  if (r.contains("accuracy")) oc.c.accuracy = r.at("accuracy");
  if (r.contains("measurement")) oc.c.measurement = r.at("measurement");
  oc.c.build_s = r.value("build_s", 0.0);
  oc.c.accuracy_s = r.value("accuracy_s", 0.0);
  oc.c.measure_s = r.value("measure_s", 0.0);
  if (oc.c.status == "duplicate") {
    oc.duplicate_of = r.value("duplicate_of", "");
    oc.c.error = "same engine as route '" + RouteLabel(oc.duplicate_of) + "'";
    oc.c.measurement = {{"duplicate_of", oc.duplicate_of}};
  }
  return oc;
}

// Stored results carry their speedup in the measurement object.
void FillSpeedup(Outcome* oc) {
  const json& m = oc->c.measurement;
  oc->speedup = m.value("speedup", 0.0);
  oc->ci_low = m.value("ci_low", 0.0);
  oc->ci_high = m.value("ci_high", 0.0);
  oc->rounds = m.value("rounds", 0);
}

Feedback Tuner::FeedbackFor(const Outcome& oc) const {
  Feedback f;
  f.route = oc.route;
  f.ok = oc.passed() && oc.speedup > 0;
  if (f.ok) {
    // Latency on one scale for every candidate: the baseline's solo p50 divided by the
    // candidate's interleaved speedup, so drifts between candidates cancel out.
    f.latency_ms = base_p50_ / oc.speedup;
    f.ci_half_width_ms = oc.ci_low > 0 && std::isfinite(oc.ci_high)
                             ? (base_p50_ / oc.ci_low - base_p50_ / oc.ci_high) / 2
                             : f.latency_ms;
    f.repeats = oc.rounds;
  }
  return f;
}

bool Tuner::BudgetLeft(std::string* why) const {
  if (o_.budget_s > 0 && Since(start_) >= o_.budget_s) {
    *why = "budget";
    return false;
  }
  if (o_.max_candidates > 0 && static_cast<int64_t>(outcomes_.size()) >= o_.max_candidates) {
    *why = "max_candidates";
    return false;
  }
  return true;
}

std::string Tuner::ProgressLine(const Outcome& oc) const {
  std::ostringstream os;
  os << "[" << outcomes_.size() << "/" << std::max(outcomes_.size(), strategy_->Planned()) << "] "
     << std::left << std::setw(18) << (oc.c.status + (oc.reused ? " (db)" : "")) << " ";
  if (oc.passed() && oc.speedup > 0) {
    os << Fixed(oc.speedup, 3) << "x [" << Fixed(oc.ci_low, 3) << ", " << Fixed(oc.ci_high, 3) << "] ";
  }
  os << RouteLabel(oc.c.route);
  if (!oc.passed() && !oc.c.error.empty()) os << " - " << oc.c.error.substr(0, 160);
  if (auto best = strategy_->Best()) {
    os << " | best " << Fixed(base_p50_ / best->latency_ms, 3) << "x " << RouteLabel(best->route.Canonical());
  }
  os << " | " << Fixed(Since(start_), 1) << " s";
  if (o_.budget_s > 0) os << ", " << Fixed(std::max(0.0, o_.budget_s - Since(start_)), 1) << " s budget left";
  return os.str();
}

Result<Outcome> Tuner::Evaluate(const Proposal& p) {
  const std::string route = p.route.Canonical();
  if (route == baseline_.c.route) {
    Outcome oc = baseline_;
    oc.is_baseline = true;
    oc.route = p.route;
    return oc;
  }
  SY_ASSIGN_OR_RETURN(auto stored, db_->Find(key_, route));
  if (stored) {
    Outcome oc;
    oc.c = *stored;
    oc.route = p.route;
    oc.reused = true;
    FillSpeedup(&oc);
    if (oc.c.status == "duplicate") oc.duplicate_of = oc.c.measurement.value("duplicate_of", "");
    return oc;
  }
  auto mismatches = db_->FindMismatches(key_, route);
  if (mismatches.ok() && !mismatches->empty() && notes_.size() < 20) {
    notes_.push_back("route '" + RouteLabel(route) + "': " + mismatches->front().Describe());
    Say("note: " + notes_.back());
  }
  json job = BaseJob("candidate", route);
  job["engine_out"] = "";  // candidates' engines are rebuilt (deterministically) if they win
  json known = json::object();
  for (const auto& [sha, r] : engines_) known[sha] = r;
  job["known_engines"] = known;
  InterleaveOptions m = o_.measure;
  if (strategy_->name() == "halving") {
    // Successive halving sets the effort itself: exactly the rounds it asks for.
    m.min_rounds = m.max_rounds = std::max(2, p.repeats);
  }
  json mj = InterleaveJson(m);
  mj["baseline_engine"] = work_ + "/baseline.engine";
  job["measure"] = mj;
  Outcome oc = FromResult(route, RunJob(job, "candidate"));
  oc.route = p.route;
  FillSpeedup(&oc);
  SY_RETURN_IF_ERROR(db_->Put(oc.c).status());
  return oc;
}


Result<ojson> Tuner::Run() {
  start_ = Clock::now();
  if (o_.model.empty()) return Status::Invalid("no model given");
  if (o_.out_dir.empty()) return Status::Invalid("no output folder given (--out DIR)");
  if (!(o_.min_improvement >= 0 && o_.min_improvement < 10)) {
    return Status::Invalid("--min-improvement must be between 0% and 1000%");
  }
  out_ = fs::absolute(o_.out_dir).string();
  work_ = out_ + "/.work";
  std::error_code ec;
  if (fs::exists(out_ + "/record.json") && !o_.resume) {
    return Status::FailedPrecondition("'" + out_ + "' already holds a tuning result (record.json); pass --continue "
                                      "to resume or re-select with its database, or choose another --out");
  }
  if (fs::exists(work_) && !o_.resume) {
    return Status::FailedPrecondition("'" + out_ + "' holds an unfinished tuning run; pass --continue to resume it "
                                      "(stored candidates are reused) or choose another --out");
  }
  SY_ASSIGN_OR_RETURN(graph_, ImportModel(o_.model));
  SY_ASSIGN_OR_RETURN(model_sha_, Sha256File(o_.model));
  if (o_.worker.empty()) {
    SY_ASSIGN_OR_RETURN(worker_, SelfExecutable());
  } else {
    worker_ = o_.worker;
  }
  const Target target = Target::HostCpu();
  const RouteSpace space = RouteSpace::For(graph_, target);
  SY_ASSIGN_OR_RETURN(SearchSpace search_space, SearchSpaceFrom(space, o_.sweep));
  if (search_space.dims.empty()) {
    return Status::Invalid("empty route space: no knob of this model has a second value to try" +
                           std::string(o_.sweep.empty() ? "" : " within --sweep '" + o_.sweep + "'"));
  }
  StrategyOptions so = o_.strategy;
  so.seed = o_.seed;
  so.min_improvement = o_.min_improvement;
  SY_ASSIGN_OR_RETURN(strategy_, MakeStrategy(o_.search, search_space, so));

  fs::create_directories(work_, ec);
  if (ec) return Status::IoError("cannot create '" + work_ + "': " + ec.message());
  ::chmod(out_.c_str(), 0700);
  ::chmod(work_.c_str(), 0700);
  Say("preparing evaluation data");
  SY_ASSIGN_OR_RETURN(data_, tuner::PrepareData(o_, graph_, work_));

  key_.model_sha256 = model_sha_;
  key_.input_profile = data_.input_profile;
  key_.target_fingerprint = target.Fingerprint();
  key_.tool_version = std::string(SWITCHYARD_VERSION) + "+" + SWITCHYARD_GIT_COMMIT;
  const std::string db_path = o_.db_path.empty() ? out_ + "/tuning.db" : o_.db_path;
  SY_ASSIGN_OR_RETURN(db_, TuningDatabase::Open(db_path));
  SY_ASSIGN_OR_RETURN(run_id_, db_->BeginRun(RunInfo{key_, o_.command_line}));

  // The baseline: the default route (with the knobs --sweep pins), built, gated and
  // profiled like any candidate.
  const std::string base_route = search_space.base.Canonical();
  Say("building the baseline " + RouteLabel(base_route));
  json bj = BaseJob("candidate", base_route);
  bj["engine_out"] = work_ + "/baseline.engine";
  bj["measure"] = json::object();
  baseline_ = FromResult(base_route, RunJob(bj, "baseline"));
  baseline_.is_baseline = true;
  if (baseline_.c.status != "passed" && baseline_.c.status != "rejected_accuracy") {
    (void)db_->FinishRun(run_id_, "failed");
    return Status::FailedPrecondition("the baseline " + RouteLabel(base_route) + " failed: " + baseline_.c.error);
  }
  json pj = BaseJob("profile", "");
  pj["engine_in"] = work_ + "/baseline.engine";
  pj["route"] = base_route;
  pj["profile"] = {{"warmup", o_.final_measure.warmup}, {"iterations", std::max(20, o_.final_measure.min_rounds)}};
  const json prof = RunJob(pj, "baseline profile");
  if (prof.value("status", "") != "passed") {
    (void)db_->FinishRun(run_id_, "failed");
    return Status::Internal("profiling the baseline failed: " + prof.value("error", "?"));
  }
  baseline_profile_ = prof.at("profile");
  base_p50_ = baseline_profile_.value("p50_ms", 0.0);
  baseline_.speedup = baseline_.ci_low = baseline_.ci_high = 1;
  baseline_.c.measurement = {{"speedup", 1.0}, {"ci_low", 1.0}, {"ci_high", 1.0}, {"p50_ms", base_p50_}};
  build_s_ += baseline_.c.build_s;
  accuracy_s_ += baseline_.c.accuracy_s;
  measure_s_ += prof.value("measure_s", 0.0);
  if (!baseline_.c.engine_sha256.empty()) engines_[baseline_.c.engine_sha256] = base_route;
  {
    auto stored = db_->Find(key_, base_route);
    if (stored.ok() && !*stored) SY_RETURN_IF_ERROR(db_->Put(baseline_.c).status());
  }
  Say("baseline: " + baseline_.c.status + ", p50 " + Fixed(base_p50_, 3) + " ms" +
      (baseline_.passed() ? "" : " - " + baseline_.c.error));

  // The search.
  std::string stopped_by = "space covered";
  while (!strategy_->Done()) {
    std::string why;
    if (!BudgetLeft(&why)) {
      stopped_by = why;
      break;
    }
    std::vector<Proposal> batch = strategy_->Next(1);
    std::vector<Feedback> told;
    for (const Proposal& p : batch) {
      SY_ASSIGN_OR_RETURN(Outcome oc, Evaluate(p));
      if (oc.c.status == "duplicate") {
        // Same engine, same verdict and speed: inherit the original's result.
        auto it = by_route_.find(oc.duplicate_of);
        if (it != by_route_.end()) {
          const Outcome& orig = outcomes_[it->second];
          oc.speedup = orig.speedup;
          oc.ci_low = orig.ci_low;
          oc.ci_high = orig.ci_high;
          oc.rounds = orig.rounds;
        } else if (oc.duplicate_of == baseline_.c.route) {
          oc.speedup = oc.ci_low = oc.ci_high = 1;
        }
      }
      if (!oc.reused && !oc.is_baseline) {
        build_s_ += oc.c.build_s;
        accuracy_s_ += oc.c.accuracy_s;
        measure_s_ += oc.c.measure_s;
      }
      if (!oc.c.engine_sha256.empty() && oc.c.status != "duplicate") engines_.emplace(oc.c.engine_sha256, oc.c.route);
      Feedback f = FeedbackFor(oc);
      if (oc.c.status == "duplicate") {
        f.ok = oc.speedup > 0;
        if (f.ok) f.latency_ms = base_p50_ / oc.speedup;
      }
      told.push_back(f);
      by_route_[oc.c.route] = outcomes_.size();
      outcomes_.push_back(std::move(oc));
      strategy_->Tell({told.back()});
      Say(ProgressLine(outcomes_.back()));
    }
  }
  const bool covered = strategy_->Done();

  // Selection: the fastest passing candidate whose 95% lower bound beats the baseline by
  // more than the minimum improvement, confirmed by the long-tail validation.
  const double bar = 1 + o_.min_improvement;
  std::vector<size_t> order;
  for (size_t i = 0; i < outcomes_.size(); ++i) {
    const Outcome& oc = outcomes_[i];
    if (oc.is_baseline || oc.c.status != "passed" || oc.speedup <= 0) continue;
    if (baseline_.passed() && !(oc.ci_low > bar)) continue;
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return outcomes_[a].speedup > outcomes_[b].speedup; });
  ojson demoted = ojson::array();
  std::optional<size_t> winner;
  json winner_validation, winner_profile;
  const auto tv = Clock::now();
  for (size_t i : order) {
    if (demoted.size() >= 3) break;
    const Outcome& oc = outcomes_[i];
    Say("validating " + RouteLabel(oc.c.route) + " on the long tail");
    json vj = BaseJob("validate", oc.c.route);
    vj["engine_out"] = work_ + "/selected.engine";
    vj["expect_sha256"] = oc.c.engine_sha256;
    vj["validate"] = {{"sessions", o_.validate_sessions}, {"rounds", 2}, {"seed", o_.seed + 7}};
    json mj = InterleaveJson(o_.final_measure);
    mj["baseline_engine"] = baseline_.passed() ? work_ + "/baseline.engine" : "";
    vj["measure"] = mj;
    json v = RunJob(vj, "validation");
    std::string reason;
    if (v.value("status", "") != "passed") {
      reason = "failed validation: " + v.value("error", "?");
    } else if (baseline_.passed()) {
      const json& m = v.at("measurement");
      if (!(m.value("ci_low", 0.0) > bar)) {
        reason = "the confirming measurement did not beat the baseline by more than " +
                 Fixed(o_.min_improvement * 100, 1) + "% with 95% confidence (speedup " +
                 Fixed(m.value("speedup", 0.0), 3) + ", interval [" + Fixed(m.value("ci_low", 0.0), 3) + ", " +
                 Fixed(m.value("ci_high", 0.0), 3) + "])";
      }
    }
    json profile;
    if (reason.empty()) {
      json pj2 = BaseJob("profile", oc.c.route);
      pj2["engine_in"] = work_ + "/selected.engine";
      pj2["profile"] = pj["profile"];
      const json p2 = RunJob(pj2, "selected profile");
      if (p2.value("status", "") != "passed") {
        reason = "profiling failed: " + p2.value("error", "?");
      } else {
        profile = p2.at("profile");
        // A solo run (own process, nothing interleaved) must agree that it is not slower:
        // guards against interference between the two engines of one process.
        const double solo = profile.value("p50_ms", 0.0);
        if (baseline_.passed() && solo > 0 && base_p50_ / solo < 1.0) {
          reason = "its solo measurement (p50 " + Fixed(solo, 4) + " ms) is slower than the baseline's (" +
                   Fixed(base_p50_, 4) + " ms), contradicting the interleaved one";
        }
      }
    }
    if (!reason.empty()) {
      demoted.push_back({{"route", oc.c.route}, {"reason", reason}});
      Say("demoted " + RouteLabel(oc.c.route) + ": " + reason);
      continue;
    }
    winner = i;
    winner_validation = v;
    winner_profile = profile;
    break;
  }
  // A kept baseline is validated on the long tail too (without a head-to-head).
  if (!winner && baseline_.passed()) {
    Say("validating the baseline on the long tail");
    json vj = BaseJob("validate", base_route);
    vj["engine_out"] = work_ + "/selected.engine";
    vj["expect_sha256"] = baseline_.c.engine_sha256;
    vj["validate"] = {{"sessions", o_.validate_sessions}, {"rounds", 2}, {"seed", o_.seed + 7}};
    vj["measure"] = json::object();
    winner_validation = RunJob(vj, "validation");
  }
  validate_s_ = Since(tv);

  // The record.
  ojson rec;
  rec["format"] = "switchyard.record";
  rec["format_version"] = 1;
  rec["created_at"] = UtcNow();
  rec["command"] = o_.command_line;
  rec["tool"] = {{"name", "switchyard"}, {"version", SWITCHYARD_VERSION}, {"commit", SWITCHYARD_GIT_COMMIT}};
  ojson inputs = ojson::array(), outputs = ojson::array();
  for (ValueId v : graph_.inputs) inputs.push_back({{"name", graph_.value(v).name}, {"type", graph_.value(v).type.ToString()}});
  for (ValueId v : graph_.outputs) outputs.push_back({{"name", graph_.value(v).name}, {"type", graph_.value(v).type.ToString()}});
  rec["model"] = {{"path", fs::absolute(o_.model).string()}, {"sha256", model_sha_}, {"inputs", inputs}, {"outputs", outputs}};
  rec["target"] = tuner::TargetJson();
  rec["target"]["fingerprint"] = key_.target_fingerprint;
  rec["data"] = data_.record;
  rec["shapes"] = o_.shapes;
  rec["accuracy_policy"] = o_.accuracy.ToJson();
  rec["measurement_policy"] = {
      {"candidate", InterleaveJson(o_.measure)},
      {"confirmation", InterleaveJson(o_.final_measure)},
      {"method", "candidate and baseline in one worker process, one session each, interleaved in rounds (each "
                 "round: per engine one untimed run then `block` timed runs, order alternating ABBA); speedup = "
                 "median over rounds of baseline/candidate block medians, with a 95% percentile-bootstrap "
                 "interval; p50/p95/p99/throughput/peak memory of the baseline and the selected engine come "
                 "from a solo run of each in its own process"},
      {"min_improvement", o_.min_improvement},
      {"rule", "the winner's 95% lower bound must exceed 1 + min_improvement, at search time and again in a "
               "confirming measurement after validation"},
      {"concurrency", 1},
      {"threads", "as the route's threads knob"},
      {"candidate_timeout_s", o_.candidate_timeout_s},
      {"candidate_memory_bytes", o_.candidate_memory_bytes}};
  int64_t rejected = 0, failed = 0, reused = 0, duplicates = 0, passed = 0;
  std::map<std::string, int64_t> by_status;
  std::set<std::string> unique = {baseline_.c.engine_sha256};
  ojson cands = ojson::array();
  for (const Outcome& oc : outcomes_) {
    ++by_status[oc.c.status];
    if (oc.c.status == "rejected_accuracy") ++rejected;
    if (oc.c.status == "build_failed" || oc.c.status == "crashed" || oc.c.status == "timeout") ++failed;
    if (oc.c.status == "duplicate") ++duplicates;
    if (oc.c.status == "passed") ++passed;
    if (oc.reused) ++reused;
    if (!oc.c.engine_sha256.empty()) unique.insert(oc.c.engine_sha256);
    ojson cj = oc.ToJson();
    if (oc.is_baseline) cj["baseline"] = true;
    cands.push_back(cj);
  }
  unique.erase("");
  rec["search"] = {{"strategy", o_.search},
                   {"sweep", o_.sweep},
                   {"knobs", [&] {
                      ojson k = ojson::object();
                      for (const auto& [name, values] : search_space.dims) k[name] = values;
                      return k;
                    }()},
                   {"space_size", search_space.ProductSize()},
                   {"budget_s", o_.budget_s},
                   {"max_candidates", o_.max_candidates},
                   {"covered", covered},
                   {"stopped_by", stopped_by},
                   {"database", fs::absolute(db_path).string()},
                   {"run_id", run_id_},
                   {"seed", o_.seed}};
  rec["counts"] = {{"candidates", outcomes_.size()}, {"unique_engines", unique.size()},
                   {"duplicates", duplicates},       {"reused", reused},
                   {"passed", passed},               {"rejected_accuracy", rejected},
                   {"failed", failed},               {"build_failed", by_status["build_failed"]},
                   {"crashed", by_status["crashed"]}, {"timeout", by_status["timeout"]}};
  rec["cost"] = {{"wall_s", Since(start_)},
                 {"reference_s", data_.reference_s},
                 {"build_s", build_s_},
                 {"accuracy_s", accuracy_s_},
                 {"measure_s", measure_s_},
                 {"validate_s", validate_s_},
                 {"note", "one-off search cost; the runtime gain is in selected.speedup"}};
  auto stats = [](const json& profile) {
    return ojson{{"p50_ms", profile.value("p50_ms", 0.0)},
                 {"p95_ms", profile.value("p95_ms", 0.0)},
                 {"p99_ms", profile.value("p99_ms", 0.0)},
                 {"throughput_per_s", profile.value("throughput_per_s", 0.0)},
                 {"peak_memory_bytes", profile.value("peak_memory_bytes", 0)}};
  };
  ojson base = {{"route", base_route}, {"engine_sha256", baseline_.c.engine_sha256}, {"passed_gate", baseline_.passed()}};
  base.update(stats(baseline_profile_));
  base["accuracy"] = baseline_.c.accuracy;
  if (!baseline_.passed()) base["gate_failure"] = baseline_.c.error;
  rec["baseline"] = base;
  ojson sel;
  std::string reason;
  if (winner) {
    const Outcome& w = outcomes_[*winner];
    const json& m = winner_validation.at("measurement");
    sel = {{"route", w.c.route}, {"engine_sha256", w.c.engine_sha256}, {"is_baseline", false}};
    sel.update(stats(winner_profile));
    sel["accuracy"] = winner_validation.value("accuracy", json::object());
    if (baseline_.passed()) {
      sel["speedup"] = m.value("speedup", 0.0);
      sel["speedup_ci95"] = {m.value("ci_low", 0.0), m.value("ci_high", 0.0)};
      sel["confirming_rounds"] = m.value("rounds", 0);
      sel["search_speedup"] = w.speedup;
      sel["search_speedup_ci95"] = {w.ci_low, w.ci_high};
      reason = "fastest of " + std::to_string(passed) + " candidates that passed the accuracy gate; its speedup " +
               Fixed(m.value("speedup", 0.0), 3) + "x has a 95% interval [" + Fixed(m.value("ci_low", 0.0), 3) +
               ", " + Fixed(m.value("ci_high", 0.0), 3) + "] above the required " + Fixed(bar, 3) +
               "x, confirmed after validation" +
               (demoted.empty() ? "" : "; " + std::to_string(demoted.size()) + " faster candidate(s) were demoted");
    } else {
      reason = "the baseline fails the accuracy gate (" + baseline_.c.error +
               "); this is the fastest candidate that passes it and the long-tail validation";
    }
  } else if (baseline_.passed()) {
    sel = {{"route", base_route}, {"engine_sha256", baseline_.c.engine_sha256}, {"is_baseline", true}, {"speedup", 1.0},
           {"speedup_ci95", {1.0, 1.0}}};
    sel.update(stats(baseline_profile_));
    sel["accuracy"] = baseline_.c.accuracy;
    if (passed == 0) reason = "baseline kept: no candidate other than the baseline passed the accuracy gate";
    else if (!demoted.empty()) reason = "baseline kept: every faster candidate was demoted at validation";
    else reason = "baseline kept: no candidate beat the baseline by more than " + Fixed(o_.min_improvement * 100, 1) +
                  "% with 95% confidence";
  }
  rec["selected"] = sel.empty() ? ojson(nullptr) : sel;
  rec["decision"] = {{"reason", reason.empty() ? "no route passes the accuracy gate" : reason},
                     {"kept_baseline", !winner},
                     {"demoted", demoted}};
  ojson validation = {{"engine", winner ? "selected" : "baseline"}};
  if (winner_validation.is_object()) {
    validation["passed"] = winner_validation.value("status", "") == "passed";
    validation["checks"] = winner_validation.value("checks", json::array());
    if (winner_validation.contains("error")) validation["error"] = winner_validation.at("error");
  } else {
    validation["passed"] = false;
  }
  rec["validation"] = validation;
  rec["notes"] = notes_;
  rec["candidates"] = cands;

  const bool have_selected = !sel.empty() && validation.value("passed", false);
  Status ws = WriteOutputs(rec);
  (void)db_->FinishRun(run_id_, have_selected ? "finished" : "no_selection");
  SY_RETURN_IF_ERROR(ws);
  if (!have_selected) {
    if (sel.empty()) {
      return Status::FailedPrecondition("no route passes the accuracy gate (the baseline fails it: " +
                                        baseline_.c.error + "); record.json lists every verdict; " +
                                        "selected.engine was not written");
    }
    return Status::FailedPrecondition("the selected engine failed the long-tail validation: " +
                                      validation.value("error", std::string("?")) +
                                      "; record.json has the checks; selected.engine was not written");
  }

  ojson summary = {{"candidates", outcomes_.size()},
                   {"unique_engines", unique.size()},
                   {"reused", reused},
                   {"duplicates", duplicates},
                   {"rejected_accuracy", rejected},
                   {"failed", failed},
                   {"covered", covered},
                   {"stopped_by", stopped_by},
                   {"baseline", {{"route", base_route}, {"p50_ms", rec["baseline"]["p50_ms"]}}},
                   {"selected",
                    {{"route", sel["route"]},
                     {"p50_ms", sel["p50_ms"]},
                     {"speedup", sel.value("speedup", 1.0)},
                     {"speedup_ci95", sel.value("speedup_ci95", ojson::array())}}},
                   {"reason", rec["decision"]["reason"]},
                   {"wall_s", Since(start_)},
                   {"out", out_}};
  return summary;
}

Status Tuner::WriteOutputs(ojson& record) {
  std::error_code ec;
  const bool have_selected = !record["selected"].is_null() && record["validation"].value("passed", false);
  ojson files = ojson::object();
  auto copy = [&](const std::string& from, const std::string& name) -> Status {
    SY_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(from));
    SY_RETURN_IF_ERROR(WriteFileAtomic(out_ + "/" + name, bytes));
    files[name] = Sha256Hex(bytes);
    return Status::Ok();
  };
  SY_RETURN_IF_ERROR(copy(work_ + "/baseline.engine", "baseline.engine"));
  if (have_selected) {
    SY_RETURN_IF_ERROR(copy(work_ + "/selected.engine", "selected.engine"));
  } else {
    fs::remove(out_ + "/selected.engine", ec);
  }
  record["files"] = files;
  SY_RETURN_IF_ERROR(WriteFileAtomic(out_ + "/record.json", record.dump(2) + "\n"));
  std::string md;
  try {
    md = tuner::RenderRecordMarkdown(record);
  } catch (const nlohmann::json::exception& e) {
    return Status::Internal(std::string("rendering record.md: ") + e.what());
  }
  SY_RETURN_IF_ERROR(WriteFileAtomic(out_ + "/record.md", md));
  for (const char* f : {"record.json", "record.md", "baseline.engine", "selected.engine"}) {
    ::chmod((out_ + "/" + f).c_str(), 0600);
  }
  fs::remove_all(work_, ec);
  return Status::Ok();
}

}  // namespace

Result<nlohmann::ordered_json> Tune(const TuneOptions& options) {
  Tuner t(options);
  return t.Run();
}

}  // namespace switchyard
