// halving: successive halving (Jamieson & Talwalkar). The pool is the full product
// (base first, incompatible skipped), or the base plus a seeded sample when the product
// exceeds `halving_pool`. Round 1 measures everyone with `halving_r0` repeats; each
// following round keeps the fastest ceil(n / eta) of the previous round (failed ones are
// dropped) and re-measures them with repeats *= eta, until one survivor remains: it is
// Best(). Short, noisy measurements sort out the clearly slow routes cheaply; the close
// contenders get the long measurements. Total effort is about rounds x pool x r0 runs
// instead of pool x (final repeats).
#include <algorithm>

#include "tune/search/common.h"

namespace switchyard {
namespace search {
namespace {

class HalvingStrategy final : public StrategyBase {
 public:
  HalvingStrategy(const SearchSpace& space, const StrategyOptions& options)
      : StrategyBase(space, options) {
    Start();
  }
  std::string name() const override { return "halving"; }
  size_t Planned() const override { return planned_; }
  std::optional<Feedback> Best() const override {
    if (winner_) {
      const Feedback* f = ResultOf(*winner_);
      if (f && f->ok) return *f;
    }
    return StrategyBase::Best();
  }

 private:
  bool Advance() override {
    if (!started_) {
      started_ = true;
      survivors_ = Pool();
      repeats_ = options_.halving_r0;
      for (const Route& r : survivors_) Enqueue(r, repeats_);
      planned_ = 0;
      const size_t eta = static_cast<size_t>(options_.halving_eta);
      for (size_t m = survivors_.size(); m > 0;) {
        planned_ += m;
        if (m == 1) break;
        m = (m + eta - 1) / eta;
        if (m == 1) break;  // the last cut leaves the winner, measured already
      }
      return true;
    }
    // Rank this round: fastest first, failed ones out; ties keep pool order.
    std::vector<std::pair<double, size_t>> ranked;
    for (size_t i = 0; i < survivors_.size(); ++i) {
      if (std::optional<double> lat = LatencyOf(survivors_[i])) ranked.emplace_back(*lat, i);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (ranked.empty()) return false;  // everything failed: no winner
    const size_t eta = static_cast<size_t>(options_.halving_eta);
    const size_t keep = survivors_.size() <= 1 ? 1 : (survivors_.size() + eta - 1) / eta;
    std::vector<Route> next;
    for (size_t i = 0; i < std::min(keep, ranked.size()); ++i) {
      next.push_back(survivors_[ranked[i].second]);
    }
    survivors_ = std::move(next);
    if (survivors_.size() == 1) {
      winner_ = survivors_.front();
      return false;
    }
    repeats_ *= options_.halving_eta;
    for (const Route& r : survivors_) EnqueueRemeasure(r, repeats_);
    return true;
  }

  // Every compatible route (base first) when the product fits the pool, else the base
  // plus a seeded sample.
  std::vector<Route> Pool() const {
    std::vector<Route> pool;
    if (space_.ProductSize() <= options_.halving_pool) {
      Point p = BasePoint();
      const std::vector<size_t> radices = Radices();
      do {
        Route r = RouteOf(p);
        if (Compatible(r)) pool.push_back(std::move(r));
      } while (Step(&p, radices));
      return pool;
    }
    const Route base = RouteOf(BasePoint());
    if (Compatible(base)) pool.push_back(base);
    const size_t want = options_.halving_pool > pool.size() ? options_.halving_pool - pool.size() : 0;
    for (Route& r : SampleRoutes(want, options_.seed)) pool.push_back(std::move(r));
    return pool;
  }

  bool started_ = false;
  std::vector<Route> survivors_;
  int repeats_ = 0;
  size_t planned_ = 0;
  std::optional<Route> winner_;
};

}  // namespace
}  // namespace search

std::unique_ptr<SearchStrategy> MakeHalvingStrategy(const SearchSpace& space,
                                                    const StrategyOptions& options) {
  return std::make_unique<search::HalvingStrategy>(space, options);
}

}  // namespace switchyard
