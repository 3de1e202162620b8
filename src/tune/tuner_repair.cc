// Mixed-precision repair: a reduced-precision route that fails the accuracy gate gets the
// smallest set of nodes kept in fp32 (precision@NODE=fp32) that makes it pass. First the
// shortest prefix (in topological order) that passes, by binary search; then group
// bisection over what it keeps (drop half of the kept nodes, then quarters, ...) ending in
// a greedy one-node-at-a-time shrink; every step is an accuracy-only build in a child,
// stored in the database (so --continue does not redo it). The repaired route is then
// measured like any candidate and competes in the selection; the record's "repair" lists
// the nodes kept and the speed given up for them.
#include <algorithm>
#include <cmath>
#include <set>

#include "tune/tuner_internal.h"

namespace switchyard::tuner {

bool Tuner::RepairOn() const {
  const bool on = o_.repair == "on" || (o_.repair == "auto" && o_.search == "mixed");
  return on && space_ && space_->Find("precision");
}

const Outcome* Tuner::RepairBase() const {
  // The plainest rejected reduced-precision route (fewest settings, no scoped overrides).
  const Outcome* failed = nullptr;
  for (const Outcome& oc : outcomes_) {
    if (oc.c.status != "rejected_accuracy" || space_->Value(oc.route, "precision") == "fp32") continue;
    bool scoped = false;
    for (const auto& [k, v] : oc.route.values()) scoped = scoped || k.find('@') != std::string::npos;
    if (scoped) continue;
    if (!failed || oc.route.values().size() < failed->route.values().size()) failed = &oc;
  }
  return failed;
}

double Tuner::BestPassingSpeedup() const {
  double best = 1;  // the baseline
  for (const Outcome& oc : outcomes_) {
    if (oc.passed()) best = std::max(best, oc.speedup);
  }
  return best;
}

namespace {

// How far outside the tolerance a rejected candidate's worst output is (error / threshold;
// infinite when an output was not finite or no gate result is stored).
double ToleranceRatio(const json& accuracy) {
  double ratio = 0;
  if (!accuracy.is_object() || !accuracy.contains("outputs")) return INFINITY;
  for (const auto& [name, o] : accuracy.at("outputs").items()) {
    const json& worst = o.value("worst", json());
    const double threshold = o.value("threshold", 0.0);
    if (!worst.is_number() || !(threshold > 0)) return INFINITY;
    ratio = std::max(ratio, worst.get<double>() / threshold);
  }
  return ratio;
}

}  // namespace

void Tuner::WeighRepair() {
  if (!repair_base_.empty() || !RepairOn() || o_.budget_s <= 0) return;
  const Outcome* failed = RepairBase();
  if (!failed) return;
  repair_base_ = failed->route.Canonical();
  // Far outside the tolerance (a bf16 route under a fp32-level gate: l2 ~0.1 against 1e-4)
  // the repair keeps nearly everything in fp32: not worth a share of the search's time.
  const double off = ToleranceRatio(failed->c.accuracy);
  if (!(off <= 100)) return;
  if (!MeasureRepairBase(failed->route)) return;
  Say("repair: " + RouteLabel(repair_base_) + " failed the gate (" + Fixed(off, 1) + "x the tolerance) and runs " +
      Fixed(repair_potential_, 3) + "x; the search leaves " + Fixed(100 * o_.repair_share, 0) +
      "% of the budget to its repair while that beats every passing candidate");
}

bool Tuner::MeasureRepairBase(const Route& base) {
  auto unrepaired = RunCandidate(base, &o_.measure, /*measure_rejected=*/true, /*replace=*/true);
  if (!unrepaired.ok() || !(unrepaired->speedup > 0)) return false;
  repair_potential_ = unrepaired->speedup;
  auto it = by_route_.find(base.Canonical());
  if (it != by_route_.end()) outcomes_[it->second].c.measurement = unrepaired->c.measurement;
  return true;
}

double Tuner::RepairReserve() const {
  if (o_.budget_s <= 0 || !(repair_potential_ > BestPassingSpeedup() * (1 + o_.min_improvement))) return 0;
  return o_.repair_share * o_.budget_s;
}

void Tuner::Repair() {
  if (!RepairOn()) return;
  const Outcome* failed = RepairBase();
  if (!failed) return;
  const Route base = failed->route;
  const std::string base_text = base.Canonical();
  const Knob* knob = space_->Find("precision");
  const std::set<std::string> affected(knob->nodes.begin(), knob->nodes.end());
  std::vector<std::string> nodes;  // topological (graph) order
  for (const Node& n : graph_.nodes) {
    if (affected.count(n.name)) nodes.push_back(n.name);
  }
  repair_ = {{"route", base_text}, {"nodes", nodes.size()}, {"evaluations", 0}};
  // What the failing route runs at bounds what any repair of it can reach: measured during
  // the search (WeighRepair) or now.
  if (base_text != repair_base_ || !(repair_potential_ > 0)) {
    std::string why;
    repair_base_ = base_text;
    repair_potential_ = 0;
    if (BudgetLeft(&why) && !StopRequested()) MeasureRepairBase(base);
  }
  if (repair_potential_ > 0) repair_["unrepaired_speedup"] = repair_potential_;
  if (o_.budget_s > 0) repair_["budget_left_s"] = std::max(0.0, o_.budget_s - Since(start_));
  const double best = BestPassingSpeedup();
  if (o_.repair == "auto" && repair_potential_ > 0 && repair_potential_ <= best * (1 + o_.min_improvement)) {
    repair_["result"] = "skipped: the failing route runs " + Fixed(repair_potential_, 3) +
                        "x, no faster than the best passing candidate (" + Fixed(best, 3) +
                        "x), and keeping nodes in fp32 only slows it";
    Say("repair: " + repair_["result"].get<std::string>());
    return;
  }
  Say("repairing " + RouteLabel(base_text) + ": searching the fewest of its " + std::to_string(nodes.size()) +
      " reduced-precision nodes to keep in fp32");

  auto with_kept = [&](const std::vector<std::string>& keep) {
    Route r = base;
    for (const std::string& n : keep) r.Set(std::string("precision@") + n, "fp32");
    return r;
  };
  int evals = 0;
  std::string stop;
  // Gate only (no measurement); stored results are reused. nullopt = out of budget/error.
  auto passes = [&](const std::vector<std::string>& keep) -> std::optional<bool> {
    std::string why;
    if (StopRequested()) stop = "interrupted";
    else if (!BudgetLeft(&why)) stop = "search budget spent";
    else if (evals >= o_.repair_max_evals) stop = "--repair-max-evals reached";
    if (!stop.empty()) return std::nullopt;
    const Route r = with_kept(keep);
    auto stored = db_->Find(key_, r.Canonical());
    std::string status;
    if (stored.ok() && *stored) {
      status = (*stored)->status;
    } else {
      ++evals;
      auto oc = RunCandidate(r, nullptr, false, false);
      if (!oc.ok()) {
        stop = oc.status().ToString();
        return std::nullopt;
      }
      status = oc->c.status;
    }
    return status == "passed" || status == "duplicate";
  };

  auto all = passes(nodes);
  if (!all || !*all) {
    repair_["evaluations"] = evals;
    repair_["result"] = all ? "none exists: even with every reduced-precision node kept in fp32 the route fails "
                              "the gate"
                            : "not finished: " + stop;
    Say("repair: " + repair_["result"].get<std::string>());
    return;
  }
  // The shortest prefix kept in fp32 that passes (binary search; a non-monotone model
  // still ends on a passing prefix, as hi only ever moves to one). An error made early in a
  // deep network grows on its way to the outputs (each of ResNet-50's random-weight
  // convolutions multiplies the error it receives by 1.2-1.4, docs/benchmarks.md session
  // 35), so the fp32 set that passes is often a prefix: about log2(n) builds find its cut,
  // where the group bisection alone spent its whole --repair-max-evals on MobileNetV2
  // (37 of 53 kept). Where the sensitive nodes sit at the end, it costs those builds and
  // keeps everything for the bisection below.
  auto prefix = [&](size_t len) {
    return std::vector<std::string>(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(len));
  };
  size_t lo = 0, hi = nodes.size();
  while (lo < hi && stop.empty()) {
    const size_t mid = lo + (hi - lo) / 2;
    auto ok = passes(prefix(mid));
    if (!ok) break;
    if (*ok) hi = mid;
    else lo = mid + 1;
  }
  repair_["prefix_kept"] = hi;
  std::vector<std::string> keep = prefix(hi);
  for (size_t chunk = (keep.size() + 1) / 2; chunk >= 1 && stop.empty(); chunk /= 2) {
    for (size_t start = 0; start < keep.size() && stop.empty();) {
      std::vector<std::string> fewer(keep.begin(), keep.begin() + static_cast<std::ptrdiff_t>(start));
      const size_t end = std::min(keep.size(), start + chunk);
      fewer.insert(fewer.end(), keep.begin() + static_cast<std::ptrdiff_t>(end), keep.end());
      auto ok = passes(fewer);
      if (ok && *ok) keep = std::move(fewer);  // these run reduced; try the same position again
      else start += chunk;
    }
    if (chunk == 1) break;
  }
  repair_["evaluations"] = evals;
  repair_["kept_fp32"] = keep;
  repair_["minimal"] = stop.empty() ? "1-minimal: keeping any one node fewer fails the gate" : "not proven: " + stop;

  // Measure the repaired route as a candidate, and what the failing route would have run at.
  const Route repaired = with_kept(keep);
  auto measured = RunCandidate(repaired, &o_.measure, false, /*replace=*/true);
  if (!measured.ok()) {
    repair_["result"] = "measuring the repaired route failed: " + measured.status().ToString();
    return;
  }
  repair_["repaired_route"] = repaired.Canonical();
  repair_["repaired_status"] = measured->c.status;
  repair_["repaired_speedup"] = measured->speedup;
  if (repair_potential_ > 0 && measured->speedup > 0) {
    repair_["speed_given_up"] = 1 - measured->speedup / repair_potential_;
  }
  repair_["result"] = measured->c.status == "passed" ? "repaired" : "the repaired route failed when measured: " +
                                                                        measured->c.error;
  // A passing mixed route can still lose to fp32 (reorders between precisions): say so.
  repair_["faster_than_baseline"] = measured->c.status == "passed" && measured->ci_low > 1 + o_.min_improvement;
  Say("repair: keep " + std::to_string(keep.size()) + " of " + std::to_string(nodes.size()) +
      " nodes in fp32 -> " + measured->c.status + " " + Fixed(measured->speedup, 3) + "x (" + std::to_string(evals) +
      " accuracy builds)");
  if (!measured->c.engine_sha256.empty()) engines_.emplace(measured->c.engine_sha256, measured->c.route);
  by_route_[measured->c.route] = outcomes_.size();
  outcomes_.push_back(std::move(*measured));
}

}  // namespace switchyard::tuner
