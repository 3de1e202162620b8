// The tuning loop (DESIGN.md "Tuning loop"): setup, baseline, search. Selection and
// validation: tuner_select.cc; the record and the outputs: tuner_record.cc.
#include "tune/tuner.h"

#include <signal.h>
#include <sys/stat.h>

#include <cmath>
#include <set>

#include "build/target.h"
#include "io/memory_budget.h"
#include "io/npy.h"
#include "io/sha256.h"
#include "onnx/importer.h"
#include "switchyard/version.h"
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

namespace tuner {

std::atomic<bool> g_stop_requested{false};
std::atomic<int> g_stop_signal{0};

namespace {

extern "C" void OnStopSignal(int sig) {
  g_stop_signal.store(sig);
  g_stop_requested.store(true);
}

// Installs the SIGINT/SIGTERM handler for one Tune() call and restores the previous ones.
class StopSignals {
 public:
  StopSignals() {
    g_stop_requested = false;
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace

bool Tuner::StopRequested() const { return g_stop_requested.load(); }

json Tuner::BaseJob(const std::string& phase, const std::string& route) const {
  return {{"phase", phase},
          {"model", fs::absolute(o_.model).string()},
          {"model_sha256", model_sha_},
          {"target", target_.name},
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
  // --max-memory holds for the candidates too: the worker gets the same budget (its size
  // checks and address-space backstop). Not on cuda, whose runtime maps far more address
  // space than it uses (there --candidate-memory-mb stays the per-child limit).
  if (memory_budget::Limit() > 0 && !target_.IsCuda()) {
    co.argv = {worker_, "--max-memory", std::to_string(memory_budget::Limit()), "__worker", job_path, result_path};
  }
  co.timeout_s = o_.candidate_timeout_s;
  co.memory_limit_bytes = o_.candidate_memory_bytes;
  co.log_path = log_path;
  co.cancel = &g_stop_requested;
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
  oc.c.build_s = JsonNum(r, "build_s");
  oc.c.accuracy_s = JsonNum(r, "accuracy_s");
  oc.c.measure_s = JsonNum(r, "measure_s");
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
  oc->speedup = JsonNum(m, "speedup");
  oc->ci_low = JsonNum(m, "ci_low");
  oc->ci_high = CiHigh(m);
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
  InterleaveOptions m = o_.measure;
  if (strategy_->name() == "halving") {
    // Successive halving sets the effort itself: exactly the rounds it asks for.
    m.min_rounds = m.max_rounds = std::max(2, p.repeats);
    m.slower_rounds = 0;
  }
  return RunCandidate(p.route, &m, /*measure_rejected=*/false, /*replace=*/false);
}

Result<Outcome> Tuner::RunCandidate(const Route& r, const InterleaveOptions* measure, bool measure_rejected,
                                    bool replace) {
  const std::string route = r.Canonical();
  json job = BaseJob("candidate", route);
  job["engine_out"] = "";  // candidates' engines are rebuilt (deterministically) if they win
  json known = json::object();
  for (const auto& [sha, er] : engines_) {
    if (er != route) known[sha] = er;
  }
  job["known_engines"] = known;
  json mj = json::object();
  if (measure) {
    mj = InterleaveJson(*measure);
    mj["baseline_engine"] = work_ + "/baseline.engine";
  }
  job["measure"] = mj;
  job["measure_rejected"] = measure_rejected;
  Outcome oc = FromResult(route, RunJob(job, "candidate"));
  oc.route = r;
  FillSpeedup(&oc);
  build_s_ += oc.c.build_s;  // the search cost, the repair's accuracy-only builds included
  accuracy_s_ += oc.c.accuracy_s;
  measure_s_ += oc.c.measure_s;
  // A candidate abandoned because of SIGINT/SIGTERM is not a result: --continue redoes it.
  if (StopRequested()) return Status::FailedPrecondition("interrupted");
  SY_RETURN_IF_ERROR(db_->Put(oc.c, replace).status());
  return oc;
}


Result<ojson> Tuner::Run() {
  start_ = Clock::now();
  StopSignals signals;
  SY_RETURN_IF_ERROR(Setup());
  if (StopRequested()) return Interrupted();
  Status based = RunBaseline();
  if (StopRequested()) return Interrupted();
  SY_RETURN_IF_ERROR(based);
  Status searched = Search();
  if (StopRequested()) return Interrupted();
  SY_RETURN_IF_ERROR(searched);
  Repair();
  if (StopRequested()) return Interrupted();
  SelectAndValidate();
  if (StopRequested()) return Interrupted();
  ojson record = Record();
  return Finish(record);
}

Status Tuner::Setup() {
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
  {
    auto t = Target::ForName(o_.target);
    if (!t.ok()) return t.status().WithContext("--target");
    target_ = std::move(*t);
  }
  if (target_.IsCuda() && !target_.gpu.present) {
    return Status::Unsupported("target 'cuda': no usable GPU" +
                               (target_.gpu.error.empty() ? std::string() : " (" + target_.gpu.error + ")") +
                               "; tuning builds, runs and measures every candidate on the device");
  }
  SY_ASSIGN_OR_RETURN(graph_, ImportModel(o_.model));
  SY_ASSIGN_OR_RETURN(model_sha_, Sha256File(o_.model));
  if (o_.worker.empty()) {
    SY_ASSIGN_OR_RETURN(worker_, SelfExecutable());
  } else {
    worker_ = o_.worker;
  }
  const RouteSpace space = RouteSpace::For(graph_, target_);
  SY_ASSIGN_OR_RETURN(search_space_, SearchSpaceFrom(space, o_.sweep));
  space_ = space;
  if (search_space_.dims.empty()) {
    return Status::Invalid("empty route space: no knob of this model has a second value to try" +
                           std::string(o_.sweep.empty() ? "" : " within --sweep '" + o_.sweep + "'"));
  }
  StrategyOptions so = o_.strategy;
  so.seed = o_.seed;
  so.min_improvement = o_.min_improvement;
  SY_ASSIGN_OR_RETURN(strategy_, MakeStrategy(o_.search, search_space_, so));

  fs::create_directories(work_, ec);
  if (ec) return Status::IoError("cannot create '" + work_ + "': " + ec.message());
  ::chmod(out_.c_str(), 0700);
  ::chmod(work_.c_str(), 0700);
  Say("preparing evaluation data");
  SY_ASSIGN_OR_RETURN(data_, tuner::PrepareData(o_, graph_, work_));

  key_.model_sha256 = model_sha_;
  key_.input_profile = data_.input_profile;
  key_.target_fingerprint = target_.Fingerprint();
  key_.tool_version = std::string(SWITCHYARD_VERSION) + "+" + SWITCHYARD_GIT_COMMIT;
  db_path_ = o_.db_path.empty() ? out_ + "/tuning.db" : o_.db_path;
  SY_ASSIGN_OR_RETURN(db_, TuningDatabase::Open(db_path_));
  SY_ASSIGN_OR_RETURN(run_id_, db_->BeginRun(RunInfo{key_, o_.command_line}));

  return Status::Ok();
}

Status Tuner::RunBaseline() {
  // The baseline: the default route (with the knobs --sweep pins), built, gated and
  // profiled like any candidate.
  base_route_ = search_space_.base.Canonical();
  Say("building the baseline " + RouteLabel(base_route_));
  json bj = BaseJob("candidate", base_route_);
  bj["engine_out"] = work_ + "/baseline.engine";
  bj["measure"] = json::object();
  baseline_ = FromResult(base_route_, RunJob(bj, "baseline"));
  baseline_.is_baseline = true;
  if (baseline_.c.status != "passed" && baseline_.c.status != "rejected_accuracy") {
    (void)db_->FinishRun(run_id_, "failed");
    return Status::FailedPrecondition("the baseline " + RouteLabel(base_route_) + " failed: " + baseline_.c.error);
  }
  json pj = BaseJob("profile", base_route_);
  pj["engine_in"] = work_ + "/baseline.engine";
  profile_job_ = {{"warmup", o_.final_measure.warmup}, {"iterations", std::max(20, o_.final_measure.min_rounds)}};
  pj["profile"] = profile_job_;
  const json prof = RunJob(pj, "baseline profile");
  if (prof.value("status", "") != "passed") {
    (void)db_->FinishRun(run_id_, "failed");
    return Status::Internal("profiling the baseline failed: " + prof.value("error", "?"));
  }
  baseline_profile_ = prof.at("profile");
  base_p50_ = JsonNum(baseline_profile_, "p50_ms");
  baseline_.speedup = baseline_.ci_low = baseline_.ci_high = 1;
  baseline_.c.measurement = {{"speedup", 1.0}, {"ci_low", 1.0}, {"ci_high", 1.0}, {"p50_ms", base_p50_}};
  build_s_ += baseline_.c.build_s;
  accuracy_s_ += baseline_.c.accuracy_s;
  measure_s_ += JsonNum(prof, "measure_s");
  if (!baseline_.c.engine_sha256.empty()) engines_[baseline_.c.engine_sha256] = base_route_;
  {
    auto stored = db_->Find(key_, base_route_);
    if (stored.ok() && !*stored) SY_RETURN_IF_ERROR(db_->Put(baseline_.c).status());
  }
  Say("baseline: " + baseline_.c.status + ", p50 " + Fixed(base_p50_, 3) + " ms" +
      (baseline_.passed() ? "" : " - " + baseline_.c.error));

  return Status::Ok();
}

Status Tuner::Search() {
  // The search.
  stopped_by_ = "space covered";
  while (!strategy_->Done()) {
    if (StopRequested()) return Status::Ok();
    std::string why;
    if (!BudgetLeft(&why)) {
      stopped_by_ = why;
      break;
    }
    if (const double reserve = RepairReserve(); reserve > 0 && Since(start_) >= o_.budget_s - reserve) {
      stopped_by_ = "budget";
      Say("search: stopped with " + Fixed(o_.budget_s - Since(start_), 1) +
          " s of the budget left to the mixed-precision repair");
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
      WeighRepair();
    }
  }
  covered_ = strategy_->Done();

  return Status::Ok();
}

}  // namespace tuner

Result<nlohmann::ordered_json> Tune(const TuneOptions& options) {
  tuner::Tuner t(options);
  return t.Run();
}

}  // namespace switchyard
