// Search strategies: which routes the tuner builds and measures next. A strategy proposes
// routes, the tuner measures them and tells it the results (TVM meta_schedule / tinygrad
// style); it never builds or times anything itself. Strategies are single-threaded
// objects driven by one tuner: not thread-safe. SearchSpace is a value, safe to copy.
//
// Protocol, one batch at a time:
//   while (!s->Done()) { auto batch = s->Next(n); measure batch; s->Tell(results); }
// Every proposal of a batch should be told (ok=false when it could not be measured); the
// next Next() counts proposals still untold as failed, so a strategy never waits forever.
// Next() returns an empty batch only when Done() is true.
//
// Guarantees of every strategy: no route that `SearchSpace::compatible` rejects is ever
// proposed; no canonical route is proposed twice (halving re-measures its survivors, each
// time with more `repeats`); the sequence of proposals is a function of the space, the
// options (seed included) and the feedback, nothing else.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "route/route.h"
#include "switchyard/status.h"

namespace switchyard {

// The knobs being searched, each with its candidate values; the first value of every
// dimension is the base route's value for that knob, so "all first values" is `base`.
struct SearchSpace {
  std::vector<std::pair<std::string, std::vector<std::string>>> dims;
  // Where the search starts (and the baseline): usually the default route "".
  Route base;
  // The knobs' default values. A route never stores a knob at its default (canonical
  // form); a dimension missing here treats its first value as the default unless
  // `base` sets it explicitly.
  std::map<std::string, std::string> defaults;
  // Whether a route can be built at all (RouteSpace::CheckCompatible); empty = always.
  std::function<bool(const Route&)> compatible;

  // Number of routes in the Cartesian product (saturates at UINT64_MAX).
  uint64_t ProductSize() const;
};

// Search order of a knob without a sweep: precision, layout.activations, kernel.conv,
// kernel.gemm, cuda.graphs, threads, quant.weights, then the fusions, then the rest.
int KnobPriority(const std::string& knob);

// Search order of a knob's non-default values without a sweep (lower first; stable): for
// kernel.conv winograd, direct, native, im2col_gemm, then onednn (auto's own choice);
// other knobs keep their allowed order.
int ValuePriority(const std::string& knob, const std::string& value);

// The space of `space`: with an empty `sweep_expr`, every knob with more than one value
// (default first, then the other allowed values in ValuePriority order), knobs in
// KnobPriority order. A sweep "key=[a|b] other=x"
// restricts the search to the listed knobs and values: a single value pins that knob in
// the base route; a list that leaves out the knob's default starts from its first value.
// Errors name the offending token (unknown knob or value, bad brackets, a knob twice),
// or say that the sweep pins everything to one impossible route.
Result<SearchSpace> SearchSpaceFrom(const RouteSpace& space, const std::string& sweep_expr);

// What the tuner learned about one proposed route.
struct Feedback {
  Route route;
  bool ok = false;              // false: build, run or accuracy failed; never "best"
  double latency_ms = 0;        // valid when ok (the tuner's latency statistic, e.g. p50)
  double ci_half_width_ms = 0;  // 95% confidence half-width of latency_ms, when known
  int repeats = 0;              // measured runs behind latency_ms
};

struct Proposal {
  Route route;
  // Measurement effort hint: runs to time. Halving asks for few first, more for the
  // survivors; the other strategies ask for StrategyOptions::repeats.
  int repeats = 0;
};

struct StrategyOptions {
  uint64_t seed = 0;               // random, halving (sampling): same seed, same proposals
  int repeats = 10;                // measurement hint for every strategy but halving
  // mixed: a knob value joins the combined phase when its single change beats the base
  // latency by more than this fraction. greedy: a move must beat the current best by
  // more than this fraction (keeps noise from dragging the descent around).
  double min_improvement = 0.02;
  size_t samples = 32;             // random: samples besides the base route
  int max_rounds = 4;              // greedy: full passes over the knobs at most
  size_t halving_pool = 64;        // halving: larger spaces are sampled down to this
  int halving_r0 = 3;              // halving: repeats in the first round
  int halving_eta = 3;             // halving: keep the best 1/eta, repeats *= eta
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  SearchStrategy() = default;
  SearchStrategy(const SearchStrategy&) = delete;
  SearchStrategy& operator=(const SearchStrategy&) = delete;

  // Up to `max` new proposals (max 0 is read as 1). Empty only when Done().
  virtual std::vector<Proposal> Next(size_t max) = 0;
  // Results for proposed routes, any order; results for routes never proposed are kept
  // as knowledge (e.g. from a resumed database: such routes are not proposed again).
  virtual void Tell(const std::vector<Feedback>& results) = 0;
  // True when no proposal will ever follow.
  virtual bool Done() const = 0;
  // Estimate of the total number of proposals (for progress); may change as it learns.
  virtual size_t Planned() const = 0;
  // The fastest route told so far that was ok (halving: its survivor once done).
  virtual std::optional<Feedback> Best() const = 0;
  virtual std::string name() const = 0;
};

// name: fast | full | mixed | random | greedy | halving. Unknown names are an error that
// lists these; so are options out of range (eta < 2, r0 < 1, ...).
Result<std::unique_ptr<SearchStrategy>> MakeStrategy(const std::string& name,
                                                     const SearchSpace& space,
                                                     const StrategyOptions& options);

// The strategies, one file each (factory.cc validates options before calling these).
std::unique_ptr<SearchStrategy> MakeFastStrategy(const SearchSpace&, const StrategyOptions&);
std::unique_ptr<SearchStrategy> MakeFullStrategy(const SearchSpace&, const StrategyOptions&);
std::unique_ptr<SearchStrategy> MakeMixedStrategy(const SearchSpace&, const StrategyOptions&);
std::unique_ptr<SearchStrategy> MakeRandomStrategy(const SearchSpace&, const StrategyOptions&);
std::unique_ptr<SearchStrategy> MakeGreedyStrategy(const SearchSpace&, const StrategyOptions&);
std::unique_ptr<SearchStrategy> MakeHalvingStrategy(const SearchSpace&, const StrategyOptions&);

}  // namespace switchyard
