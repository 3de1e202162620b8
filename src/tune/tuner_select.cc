// The tuner's selection (the fastest candidate beating the baseline with 95% confidence)
// and the long-tail validation that can demote it.
#include "tune/tuner_internal.h"

namespace switchyard::tuner {

void Tuner::SelectAndValidate() {
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
  demoted_ = ojson::array();
  const auto tv = Clock::now();
  for (size_t i : order) {
    if (demoted_.size() >= 3 || StopRequested()) break;
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
      if (!(JsonNum(m, "ci_low") > bar)) {
        reason = "the confirming measurement did not beat the baseline by more than " +
                 Fixed(o_.min_improvement * 100, 1) + "% with 95% confidence (speedup " +
                 Fixed(JsonNum(m, "speedup"), 3) + ", interval [" + Fixed(JsonNum(m, "ci_low"), 3) + ", " +
                 Fixed(CiHigh(m), 3) + "])";
      }
    }
    json profile;
    if (reason.empty()) {
      // Solo runs, each engine in its own process, back to back (winner, baseline; twice if
      // needed, so that a change of machine load between two runs cannot decide): the
      // winner must not be slower. Guards against interference between the two engines of
      // the interleaved measurement.
      auto solo = [&](const std::string& route, const std::string& engine, json* out) -> std::string {
        json job = BaseJob("profile", route);
        job["engine_in"] = engine;
        job["profile"] = profile_job_;
        const json p = RunJob(job, "solo profile");
        if (p.value("status", "") != "passed") return "profiling failed: " + p.value("error", "?");
        *out = p.at("profile");
        return "";
      };
      int slower = 0;
      std::string detail;
      for (int pair = 0; pair < 2 && reason.empty(); ++pair) {
        json w, b;
        reason = solo(oc.c.route, work_ + "/selected.engine", &w);
        if (reason.empty() && baseline_.passed()) reason = solo(base_route_, work_ + "/baseline.engine", &b);
        if (!reason.empty()) break;
        if (pair == 0) profile = w;
        if (!baseline_.passed()) break;
        const double wp = JsonNum(w, "p50_ms"), bp = JsonNum(b, "p50_ms");
        if (!(wp > 0 && bp > 0 && wp > bp)) break;  // not slower: agreed
        ++slower;
        detail += (detail.empty() ? "" : "; ") + Fixed(wp, 4) + " ms vs " + Fixed(bp, 4) + " ms";
      }
      if (reason.empty() && slower == 2) {
        reason = "run alone in its own process it was slower than the baseline twice (p50 " + detail +
                 "), contradicting the interleaved measurement";
      }
    }
    if (!reason.empty()) {
      demoted_.push_back({{"route", oc.c.route}, {"reason", reason}});
      Say("demoted " + RouteLabel(oc.c.route) + ": " + reason);
      continue;
    }
    winner_ = i;
    winner_validation_ = v;
    winner_profile_ = profile;
    break;
  }
  // A kept baseline is validated on the long tail too (without a head-to-head).
  if (!winner_ && baseline_.passed() && !StopRequested()) {
    Say("validating the baseline on the long tail");
    json vj = BaseJob("validate", base_route_);
    vj["engine_out"] = work_ + "/selected.engine";
    vj["expect_sha256"] = baseline_.c.engine_sha256;
    vj["validate"] = {{"sessions", o_.validate_sessions}, {"rounds", 2}, {"seed", o_.seed + 7}};
    vj["measure"] = json::object();
    winner_validation_ = RunJob(vj, "validation");
  }
  validate_s_ = Since(tv);

}

}  // namespace switchyard::tuner
