// StrategyBase: proposal bookkeeping and stage driving shared by every search strategy.
#include "tune/search/common.h"

#include <algorithm>
#include <limits>
#include <random>

namespace switchyard::search {

bool Step(Point* p, const std::vector<size_t>& radices) {
  for (size_t d = p->size(); d-- > 0;) {
    if (++(*p)[d] < radices[d]) return true;
    (*p)[d] = 0;
  }
  return false;
}

uint64_t SatMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) {
    return std::numeric_limits<uint64_t>::max();
  }
  return a * b;
}

StrategyBase::StrategyBase(const SearchSpace& space, const StrategyOptions& options)
    : space_(space), options_(options) {}

Route StrategyBase::RouteOf(const Point& p) const {
  Route r = space_.base;
  for (size_t d = 0; d < space_.dims.size(); ++d) {
    const auto& [key, values] = space_.dims[d];
    const std::string& v = values[p[d]];
    auto def = space_.defaults.find(key);
    const bool is_default = def != space_.defaults.end()
                                ? v == def->second
                                : (p[d] == 0 && !space_.base.values().count(key));
    if (is_default) {
      r.Erase(key);
    } else {
      r.Set(key, v);
    }
  }
  return r;
}

std::vector<size_t> StrategyBase::Radices() const {
  std::vector<size_t> radices;
  for (const auto& dim : space_.dims) radices.push_back(dim.second.size());
  return radices;
}

bool StrategyBase::Compatible(const Route& route) const {
  return !space_.compatible || space_.compatible(route);
}

bool StrategyBase::Seen(const Route& route) const {
  const std::string key = route.Canonical();
  return proposed_.count(key) || queued_.count(key) || results_.count(key);
}

bool StrategyBase::Enqueue(const Route& route, int repeats) {
  if (Seen(route) || !Compatible(route)) return false;
  queued_.insert(route.Canonical());
  queue_.push_back({Proposal{route, repeats}, false});
  return true;
}

void StrategyBase::EnqueueBaseAndOneChanges(int repeats) {
  Enqueue(RouteOf(BasePoint()), repeats);
  for (size_t d = 0; d < space_.dims.size(); ++d) {
    for (size_t v = 1; v < space_.dims[d].second.size(); ++v) {
      Point p = BasePoint();
      p[d] = v;
      Enqueue(RouteOf(p), repeats);
    }
  }
}

std::vector<Route> StrategyBase::SampleRoutes(size_t n, uint64_t seed) const {
  std::mt19937_64 rng(seed);
  const std::vector<size_t> radices = Radices();
  const std::string base = RouteOf(BasePoint()).Canonical();
  std::vector<Route> picked;
  if (space_.ProductSize() <= kEnumerateLimit) {
    std::vector<Route> pool;
    Point p = BasePoint();
    while (Step(&p, radices)) {  // every point after the base
      Route r = RouteOf(p);
      if (Compatible(r)) pool.push_back(std::move(r));
    }
    n = std::min(n, pool.size());
    for (size_t i = 0; i < n; ++i) {  // partial Fisher-Yates
      const size_t j = i + static_cast<size_t>(rng() % (pool.size() - i));
      std::swap(pool[i], pool[j]);
      picked.push_back(pool[i]);
    }
    return picked;
  }
  std::set<std::string> seen = {base};
  for (size_t attempt = 0; picked.size() < n && attempt < 100 * n + 1000; ++attempt) {
    Point p(radices.size());
    for (size_t d = 0; d < radices.size(); ++d) p[d] = static_cast<size_t>(rng() % radices[d]);
    Route r = RouteOf(p);
    if (seen.insert(r.Canonical()).second && Compatible(r)) picked.push_back(std::move(r));
  }
  return picked;
}

void StrategyBase::EnqueueRemeasure(const Route& route, int repeats) {
  queue_.push_back({Proposal{route, repeats}, true});
}

const Feedback* StrategyBase::ResultOf(const Route& route) const {
  auto it = results_.find(route.Canonical());
  return it == results_.end() ? nullptr : &it->second;
}

std::optional<double> StrategyBase::LatencyOf(const Route& route) const {
  const Feedback* f = ResultOf(route);
  if (!f || !f->ok) return std::nullopt;
  return f->latency_ms;
}

std::optional<Feedback> StrategyBase::Best() const {
  std::optional<Feedback> best;
  for (const auto& [key, f] : results_) {
    if (f.ok && (!best || f.latency_ms < best->latency_ms)) best = f;
  }
  return best;
}

void StrategyBase::Pump() {
  while (queue_.empty() && outstanding_.empty() && !finished_) {
    if (!Advance()) finished_ = true;
  }
}

void StrategyBase::FailOutstanding() {
  std::vector<Feedback> failed;
  for (const auto& [key, route] : outstanding_) failed.push_back(Feedback{route, false, 0, 0, 0});
  if (!failed.empty()) Tell(failed);
}

std::vector<Proposal> StrategyBase::Next(size_t max) {
  if (max == 0) max = 1;
  FailOutstanding();
  std::vector<Proposal> batch;
  while (batch.size() < max) {
    if (queue_.empty()) {
      if (!outstanding_.empty()) break;  // the rest depends on this batch's results
      Pump();
      if (queue_.empty()) break;
    }
    Queued q = std::move(queue_.front());
    queue_.pop_front();
    const std::string key = q.proposal.route.Canonical();
    if (!q.remeasure) {
      queued_.erase(key);
      // Told meanwhile (a resumed database): known, so not proposed again.
      if (proposed_.count(key) || results_.count(key)) continue;
    } else if (outstanding_.count(key)) {
      continue;  // the same route twice in one batch would be one measurement
    }
    proposed_.insert(key);
    outstanding_.emplace(key, q.proposal.route);
    batch.push_back(std::move(q.proposal));
  }
  return batch;
}

void StrategyBase::Tell(const std::vector<Feedback>& results) {
  for (const Feedback& f : results) {
    const std::string key = f.route.Canonical();
    results_[key] = f;
    outstanding_.erase(key);
  }
  Pump();
}

}  // namespace switchyard::search
