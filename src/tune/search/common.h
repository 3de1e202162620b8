// Internal to src/tune/search/: the machinery every strategy shares. StrategyBase keeps
// the bookkeeping that makes the guarantees of strategy.h hold in one place (no
// incompatible route, no duplicate, untold proposals count as failed) and drives a
// strategy as a sequence of stages: a stage is a batch of queued proposals, and the next
// stage is planned (Advance) only once every proposal of the current one is told.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tune/search/strategy.h"

namespace switchyard::search {

// One value index per dimension of a SearchSpace; all zeros is the base route.
using Point = std::vector<size_t>;

// Turns `p` to the next point of the product with the given radices, last dimension
// fastest; returns false (and leaves all zeros) after the last point.
bool Step(Point* p, const std::vector<size_t>& radices);

// a * b saturating at UINT64_MAX.
uint64_t SatMul(uint64_t a, uint64_t b);

class StrategyBase : public SearchStrategy {
 public:
  StrategyBase(const SearchSpace& space, const StrategyOptions& options);

  std::vector<Proposal> Next(size_t max) final;
  void Tell(const std::vector<Feedback>& results) final;
  bool Done() const final { return finished_; }
  size_t Planned() const override { return proposed_.size() + queue_.size(); }
  std::optional<Feedback> Best() const override;

 protected:
  // Plans the next stage by queueing proposals; called when the queue is empty and every
  // proposal so far is told. Returns false when the search is over. A stage may queue
  // nothing (everything it wanted is known); Advance is then called again, so a strategy
  // must make progress towards returning false on every call.
  virtual bool Advance() = 0;

  // Derived constructors call this last: plans the first stage.
  void Start() { Pump(); }

  Route RouteOf(const Point& p) const;
  Point BasePoint() const { return Point(space_.dims.size(), 0); }
  std::vector<size_t> Radices() const;
  bool Compatible(const Route& route) const;
  // Queues a route never proposed, queued or told and compatible; returns whether it did.
  bool Enqueue(const Route& route, int repeats);
  // Queues the base route, then every one-knob change of it (knob by knob, values in
  // order): the fast strategy's list, also mixed's first phase.
  void EnqueueBaseAndOneChanges(int repeats);
  // Up to `n` distinct compatible routes other than the base, drawn uniformly without
  // replacement with a seeded std::mt19937_64 (whose output the standard fixes; indices
  // are taken by modulo rather than a library distribution, so a seed gives the same
  // routes with every compiler). Spaces up to kEnumerateLimit routes are enumerated and
  // shuffled (never short when enough routes exist); larger ones are sampled by
  // rejection with a bounded number of draws.
  std::vector<Route> SampleRoutes(size_t n, uint64_t seed) const;
  static constexpr uint64_t kEnumerateLimit = 100000;
  // Queues a re-measurement of an already proposed route with more repeats (halving).
  void EnqueueRemeasure(const Route& route, int repeats);
  // Whether the route was proposed, is queued, or has a result.
  bool Seen(const Route& route) const;
  // The latest result told for `route`, nullptr if none.
  const Feedback* ResultOf(const Route& route) const;
  // Latency of an ok result, nullopt when failed or unknown.
  std::optional<double> LatencyOf(const Route& route) const;
  size_t proposed_count() const { return proposed_.size(); }
  size_t queued_count() const { return queue_.size(); }

  const SearchSpace space_;
  const StrategyOptions options_;

 private:
  struct Queued {
    Proposal proposal;
    bool remeasure = false;
  };
  void Pump();             // Advance until something is queued or the search is over
  void FailOutstanding();  // untold proposals of the last batch count as failed

  std::deque<Queued> queue_;
  std::set<std::string> queued_;                 // canonical routes of new proposals queued
  std::map<std::string, Route> outstanding_;     // proposed, not yet told
  std::set<std::string> proposed_;               // every canonical route ever proposed
  std::map<std::string, Feedback> results_;      // latest feedback per canonical route
  bool finished_ = false;
};

}  // namespace switchyard::search
