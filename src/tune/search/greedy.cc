// greedy: coordinate descent from the base route. For each knob in turn, every other
// value is tried with all other knobs at the current best; the search moves to the
// fastest of them when it beats the current best by more than `min_improvement`. Rounds
// over all knobs repeat until a full round moves nothing or `max_rounds` rounds are done.
// Routes measured in an earlier round are not proposed again (their results are reused).
// Finds the best route when knobs act independently; can stop at a local optimum when
// only a combination of changes helps.
#include "tune/search/common.h"

namespace switchyard {
namespace search {
namespace {

class GreedyStrategy final : public StrategyBase {
 public:
  GreedyStrategy(const SearchSpace& space, const StrategyOptions& options)
      : StrategyBase(space, options), current_(BasePoint()) {
    Start();
  }
  std::string name() const override { return "greedy"; }
  size_t Planned() const override {
    // This round's remaining knobs; later rounds are unknown until this one ends.
    size_t rest = 0;
    for (size_t d = dim_ + 1; d < space_.dims.size(); ++d) rest += space_.dims[d].second.size() - 1;
    return StrategyBase::Planned() + (started_ ? rest : 0);
  }

 private:
  bool Advance() override {
    if (!started_) {
      started_ = true;
      Enqueue(RouteOf(current_), options_.repeats);
      dim_ = SIZE_MAX;  // the next Advance starts knob 0 (SIZE_MAX + 1 wraps to 0)
      return true;
    }
    if (dim_ != SIZE_MAX) Resolve(dim_);
    if (space_.dims.empty()) return false;
    ++dim_;
    if (dim_ == space_.dims.size()) {
      ++rounds_;
      if (!moved_ || rounds_ >= options_.max_rounds) return false;
      moved_ = false;
      dim_ = 0;
    }
    for (size_t v = 0; v < space_.dims[dim_].second.size(); ++v) {
      if (v == current_[dim_]) continue;
      Point p = current_;
      p[dim_] = v;
      Enqueue(RouteOf(p), options_.repeats);  // known routes are skipped, their results reused
    }
    return true;
  }

  // Moves along knob `d` to its fastest value if that beats the current best enough.
  void Resolve(size_t d) {
    const std::optional<double> here = LatencyOf(RouteOf(current_));
    std::optional<double> best;
    size_t best_v = current_[d];
    for (size_t v = 0; v < space_.dims[d].second.size(); ++v) {
      if (v == current_[d]) continue;
      Point p = current_;
      p[d] = v;
      const std::optional<double> lat = LatencyOf(RouteOf(p));
      if (lat && (!best || *lat < *best)) {
        best = lat;
        best_v = v;
      }
    }
    if (best && (!here || *best < *here * (1.0 - options_.min_improvement))) {
      current_[d] = best_v;
      moved_ = true;
    }
  }

  Point current_;
  bool started_ = false;
  size_t dim_ = SIZE_MAX;  // knob whose values are being measured; SIZE_MAX: the base
  int rounds_ = 0;
  bool moved_ = false;
};

}  // namespace
}  // namespace search

std::unique_ptr<SearchStrategy> MakeGreedyStrategy(const SearchSpace& space,
                                                   const StrategyOptions& options) {
  return std::make_unique<search::GreedyStrategy>(space, options);
}

}  // namespace switchyard
