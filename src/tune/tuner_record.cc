// The tuner's outputs: record.json (docs/record-format.md), record.md, the engines, and
// the --json summary.
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "io/npy.h"
#include "io/sha256.h"
#include "switchyard/version.h"
#include "tune/tuner_internal.h"

namespace switchyard::tuner {

ojson Tuner::Record() {
  ojson rec;
  rec["format"] = "switchyard.record";
  rec["format_version"] = 1;
  rec["status"] = "complete";
  rec["created_at"] = UtcNow();
  rec["command"] = o_.command_line;
  rec["tool"] = {{"name", "switchyard"}, {"version", SWITCHYARD_VERSION}, {"commit", SWITCHYARD_GIT_COMMIT}};
  ojson inputs = ojson::array(), outputs = ojson::array();
  for (ValueId v : graph_.inputs) inputs.push_back({{"name", graph_.value(v).name}, {"type", graph_.value(v).type.ToString()}});
  for (ValueId v : graph_.outputs) outputs.push_back({{"name", graph_.value(v).name}, {"type", graph_.value(v).type.ToString()}});
  rec["model"] = {{"path", fs::absolute(o_.model).string()}, {"sha256", model_sha_}, {"inputs", inputs}, {"outputs", outputs}};
  rec["target"] = tuner::TargetJson(target_);
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
      {"threads", target_.IsCuda() ? "none: the cuda target has no threads knob" : "as the route's threads knob"},
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
                      for (const auto& [name, values] : search_space_.dims) k[name] = values;
                      return k;
                    }()},
                   {"space_size", search_space_.ProductSize()},
                   {"budget_s", o_.budget_s},
                   {"max_candidates", o_.max_candidates},
                   {"covered", covered_},
                   {"stopped_by", stopped_by_},
                   {"database", fs::absolute(db_path_).string()},
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
  auto stats = [](const json& measured) {
    // Null until measured (a run interrupted before its baseline was timed).
    const json profile = measured.is_object() ? measured : json::object();
    return ojson{{"p50_ms", JsonNum(profile, "p50_ms")},
                 {"p95_ms", JsonNum(profile, "p95_ms")},
                 {"p99_ms", JsonNum(profile, "p99_ms")},
                 {"throughput_per_s", JsonNum(profile, "throughput_per_s")},
                 {"peak_memory_bytes", profile.value("peak_memory_bytes", 0)}};
  };
  ojson base = {{"route", base_route_}, {"engine_sha256", baseline_.c.engine_sha256}, {"passed_gate", baseline_.passed()}};
  base.update(stats(baseline_profile_));
  base["accuracy"] = baseline_.c.accuracy;
  if (!baseline_.passed()) base["gate_failure"] = baseline_.c.error;
  rec["baseline"] = base;
  ojson sel;
  std::string reason;
  if (winner_) {
    const Outcome& w = outcomes_[*winner_];
    const json& m = winner_validation_.at("measurement");
    sel = {{"route", w.c.route}, {"engine_sha256", w.c.engine_sha256}, {"is_baseline", false}};
    sel.update(stats(winner_profile_));
    sel["accuracy"] = winner_validation_.value("accuracy", json::object());
    if (baseline_.passed()) {
      sel["speedup"] = JsonNum(m, "speedup");
      sel["speedup_ci95"] = {JsonNum(m, "ci_low"), CiHigh(m)};
      sel["confirming_rounds"] = m.value("rounds", 0);
      sel["search_speedup"] = w.speedup;
      sel["search_speedup_ci95"] = {w.ci_low, w.ci_high};
      reason = "fastest of " + std::to_string(passed) + " candidates that passed the accuracy gate; its speedup " +
               Fixed(JsonNum(m, "speedup"), 3) + "x has a 95% interval [" + Fixed(JsonNum(m, "ci_low"), 3) +
               ", " + Fixed(CiHigh(m), 3) + "] above the required " + Fixed(1 + o_.min_improvement, 3) +
               "x, confirmed after validation" +
               (demoted_.empty() ? "" : "; " + std::to_string(demoted_.size()) + " faster candidate(s) were demoted");
    } else {
      reason = "the baseline fails the accuracy gate (" + baseline_.c.error +
               "); this is the fastest candidate that passes it and the long-tail validation";
    }
  } else if (baseline_.passed()) {
    sel = {{"route", base_route_}, {"engine_sha256", baseline_.c.engine_sha256}, {"is_baseline", true}, {"speedup", 1.0},
           {"speedup_ci95", {1.0, 1.0}}};
    sel.update(stats(baseline_profile_));
    sel["accuracy"] = baseline_.c.accuracy;
    const int64_t evaluated =
        std::count_if(outcomes_.begin(), outcomes_.end(), [](const Outcome& oc) { return !oc.is_baseline; });
    if (evaluated == 0 && stopped_by_ != "space covered") {
      // Not a verdict on any route: the search ended before it tried one (a budget that the
      // baseline's build, reference outputs and measurement used up, say).
      reason = "baseline kept: no other candidate was evaluated; the search stopped (" + stopped_by_ + ")" +
               (stopped_by_ == "budget" ? " when the baseline had used the " + Fixed(o_.budget_s, o_.budget_s < 1 ? 3 : 1) + " s budget" : "");
    } else if (passed == 0) {
      reason = "baseline kept: no candidate other than the baseline passed the accuracy gate";
    } else if (!demoted_.empty()) {
      reason = "baseline kept: every faster candidate was demoted at validation";
    } else {
      reason = "baseline kept: no candidate beat the baseline by more than " + Fixed(o_.min_improvement * 100, 1) +
               "% with 95% confidence";
    }
  }
  rec["selected"] = sel.empty() ? ojson(nullptr) : sel;
  rec["decision"] = {{"reason", reason.empty() ? "no route passes the accuracy gate" : reason},
                     {"kept_baseline", !winner_},
                     {"demoted", demoted_}};
  ojson validation = {{"engine", winner_ ? "selected" : "baseline"}};
  if (winner_validation_.is_object()) {
    validation["passed"] = winner_validation_.value("status", "") == "passed";
    validation["checks"] = winner_validation_.value("checks", json::array());
    if (winner_validation_.contains("error")) validation["error"] = winner_validation_.at("error");
  } else {
    validation["passed"] = false;
  }
  rec["validation"] = validation;
  rec["scope"] = Scope();
  rec["repair"] = repair_;
  rec["notes"] = notes_;
  rec["candidates"] = cands;

  return rec;
}

Result<ojson> Tuner::Finish(ojson& rec) {
  const ojson& sel = rec["selected"];
  const ojson& validation = rec["validation"];
  const ojson& counts = rec["counts"];
  const bool have_selected = !sel.is_null() && validation.value("passed", false);
  Status ws = WriteOutputs(rec);
  (void)db_->FinishRun(run_id_, have_selected ? "finished" : "no_selection");
  SY_RETURN_IF_ERROR(ws);
  if (!have_selected) {
    if (sel.is_null()) {
      return Status::FailedPrecondition("no route passes the accuracy gate (the baseline fails it: " +
                                        baseline_.c.error + "); record.json lists every verdict; " +
                                        "selected.engine was not written");
    }
    return Status::FailedPrecondition("the selected engine failed the long-tail validation: " +
                                      validation.value("error", std::string("?")) +
                                      "; record.json has the checks; selected.engine was not written");
  }

  ojson summary = {{"candidates", counts["candidates"]},
                   {"unique_engines", counts["unique_engines"]},
                   {"reused", counts["reused"]},
                   {"duplicates", counts["duplicates"]},
                   {"rejected_accuracy", counts["rejected_accuracy"]},
                   {"failed", counts["failed"]},
                   {"covered", covered_},
                   {"stopped_by", stopped_by_},
                   {"baseline", {{"route", base_route_}, {"p50_ms", rec["baseline"]["p50_ms"]}}},
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
  record["data"]["retained"] = o_.retain_data ? "retained-data/ (--retain-data: the evaluation inputs and references "
                                                "as .npy files, named <set index>_<k>.npy)"
                                              : "no";
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
  if (o_.retain_data) {
    fs::remove_all(out_ + "/retained-data", ec);
    fs::rename(work_ + "/sets", out_ + "/retained-data", ec);
    if (ec) return Status::IoError("cannot keep the evaluation data in '" + out_ + "/retained-data': " + ec.message());
  }
  fs::remove_all(work_, ec);
  return Status::Ok();
}

ojson Tuner::Scope() const {
  ojson sets = ojson::array();
  for (const auto& s : data_.record.value("sets", ojson::array())) {
    ojson shapes = ojson::object();
    for (const auto& i : s.value("inputs", ojson::array())) shapes[i.value("name", "")] = i["shape"];
    sets.push_back({{"name", s.value("name", "")}, {"shapes", shapes}});
  }
  ojson precisions = ojson::array();
  for (const auto& [knob, values] : search_space_.dims) {
    if (knob == "precision") precisions = values;
  }
  if (precisions.empty()) precisions.push_back("fp32 (precision not searched)");
  return {
      {"covered",
       {{"input_sets", sets},
        {"declared_shapes", o_.shapes},
        {"edge_shapes", "validated at the min and max of every dimension declared with a range in --shapes"},
        {"measured_concurrency", 1},
        {"validated_concurrent_sessions", o_.validate_sessions},
        {"precisions_searched", precisions},
        {"target", key_.target_fingerprint}}},
      {"not_covered",
       {"input shapes other than the sets' and the declared range edges",
        "inputs from other distributions than the evaluation sets",
        "latency under concurrency above 1 (only output identity was checked with several sessions)",
        target_.IsCuda() ? "other GPUs, compute capabilities, drivers or CUDA/cuBLASLt/cuDNN versions than the target above"
                         : "other machines, CPU models or library versions than the target above",
        "other tool versions (engines are refused by another version)"}}};
}

Status Tuner::Interrupted() {
  const int sig = g_stop_signal.load();
  ojson rec;
  try {
    rec = Record();
  } catch (const nlohmann::json::exception& e) {  // never lose the interruption to a rendering bug
    rec = {{"record_error", e.what()}};
  }
  rec["status"] = "interrupted";
  rec["selected"] = nullptr;
  const size_t planned = strategy_ ? std::max(strategy_->Planned(), outcomes_.size()) : 0;
  const std::string what = "interrupted by signal " + std::to_string(sig) + " (" + strsignal(sig) + ") after " +
                           std::to_string(outcomes_.size()) + " of about " + std::to_string(planned) +
                           " planned candidates";
  rec["decision"] = {{"reason", what + "; no engine was selected"}, {"kept_baseline", false}, {"demoted", demoted_}};
  rec["unfinished"] = {
      {"signal", sig},
      {"candidates_done", outcomes_.size()},
      {"candidates_planned", planned},
      {"search_finished", strategy_ && strategy_->Done()},
      {"remaining", "the rest of the search (the candidate in flight was abandoned, not stored), selection, "
                    "long-tail validation and the engines; run the same command with --continue to finish"}};
  std::string md;
  try {
    md = RenderRecordMarkdown(rec);
  } catch (const nlohmann::json::exception& e) {
    md = std::string("# Tuning record\n\n(interrupted; rendering failed: ") + e.what() + ")\n";
  }
  Status w1 = WriteFileAtomic(out_ + "/record.json", rec.dump(2) + "\n");
  Status w2 = WriteFileAtomic(out_ + "/record.md", md);
  ::chmod((out_ + "/record.json").c_str(), 0600);
  ::chmod((out_ + "/record.md").c_str(), 0600);
  if (db_) (void)db_->FinishRun(run_id_, "interrupted");
  SY_RETURN_IF_ERROR(w1);
  SY_RETURN_IF_ERROR(w2);
  return Status::FailedPrecondition(what + "; the database keeps every finished candidate, record.json says what "
                                    "remains; resume with --continue");
}

}  // namespace switchyard::tuner
