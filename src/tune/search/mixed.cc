// mixed: fast first (the base route and every one-knob change); then, while the best
// route so far keeps improving (at most kMaxPolishRounds rounds), every one-knob change
// of the best: a knob that only helps once another is set is found there (on an H200,
// layout nhwc alone made ResNet-50 4% slower at fp32 but halved the bf16 engine's
// latency); then the full product over only the knob values whose single change beat
// the base latency by more than `min_improvement` (each such knob over its base value
// plus its improving values, every other knob at the base), which finds interactions
// the polish walked past; when no single change improved, the product instead spans the
// best value of the (at most four) knobs whose single change came closest to the base,
// since two changes that are each neutral or slower can win together; then polish again
// around any new best. Polish comes before the
// product because under a budget it reaches the good routes first: a 50 s H200 tune of
// ResNet-50 spent its budget on the product of noise-level gains and never tried bf16
// with nhwc (0.81 ms chosen; 0.34 ms existed). No route is proposed twice. When the base
// route fails there is nothing to compare against, and the search ends after the fast
// phase.
#include <algorithm>

#include "tune/search/common.h"

namespace switchyard {
namespace search {
namespace {

class MixedStrategy final : public StrategyBase {
 public:
  MixedStrategy(const SearchSpace& space, const StrategyOptions& options)
      : StrategyBase(space, options) {
    Start();
  }
  std::string name() const override { return "mixed"; }

 private:
  bool Advance() override {
    ++phase_;
    if (phase_ == 1) {
      EnqueueBaseAndOneChanges(options_.repeats);
      tried_.push_back(BasePoint());
      for (size_t d = 0; d < space_.dims.size(); ++d) {
        for (size_t v = 1; v < space_.dims[d].second.size(); ++v) {
          Point p = BasePoint();
          p[d] = v;
          tried_.push_back(p);
        }
      }
      return true;
    }
    if (Polish()) return true;
    if (!combined_) {
      combined_ = true;
      EnqueueCombinations();
      return true;
    }
    return false;
  }

  // One-knob changes around the best point so far, if it is new and better than the
  // last polished one by more than min_improvement.
  bool Polish() {
    if (polish_rounds_ >= kMaxPolishRounds) return false;
    std::optional<Point> best;
    std::optional<double> best_lat;
    for (const Point& p : tried_) {
      const std::optional<double> lat = LatencyOf(RouteOf(p));
      if (lat && (!best_lat || *lat < *best_lat)) best = p, best_lat = lat;
    }
    if (!best || *best == BasePoint()) return false;
    // Only around a real gain: over the base first, then over the last polished best.
    const std::optional<double> base_lat = LatencyOf(RouteOf(BasePoint()));
    const std::optional<double> bar = polished_lat_ ? polished_lat_ : base_lat;
    if (!bar || *best_lat >= *bar * (1.0 - options_.min_improvement)) return false;
    ++polish_rounds_;
    polished_lat_ = best_lat;
    for (size_t d = 0; d < space_.dims.size(); ++d) {
      for (size_t v = 0; v < space_.dims[d].second.size(); ++v) {
        if (v == (*best)[d]) continue;
        Point p = *best;
        p[d] = v;
        Track(p);
      }
    }
    return true;
  }

  void Track(const Point& p) {
    tried_.push_back(p);
    Enqueue(RouteOf(p), options_.repeats);  // skips measured and incompatible routes
  }

  static constexpr int kMaxPolishRounds = 3;
  static constexpr size_t kFallbackKnobs = 4;
  static constexpr double kFallbackSlack = 0.15;
  std::vector<Point> tried_;  // every point this strategy queued (or found measured)
  int polish_rounds_ = 0;
  std::optional<double> polished_lat_;

  void EnqueueCombinations() {
    const std::optional<double> base = LatencyOf(RouteOf(BasePoint()));
    if (!base) return;
    const double bar = *base * (1.0 - options_.min_improvement);
    // Per dimension, the value indices the combined phase ranges over: the base's
    // value (index 0) plus every value whose single change improved.
    std::vector<size_t> dims;
    std::vector<std::vector<size_t>> values;
    for (size_t d = 0; d < space_.dims.size(); ++d) {
      std::vector<size_t> good = {0};
      for (size_t v = 1; v < space_.dims[d].second.size(); ++v) {
        Point p = BasePoint();
        p[d] = v;
        const std::optional<double> lat = LatencyOf(RouteOf(p));
        if (lat && *lat < bar) good.push_back(v);
      }
      if (good.size() > 1) {
        dims.push_back(d);
        values.push_back(std::move(good));
      }
    }
    if (dims.empty()) {
      // No single change clears the bar, yet two together may (MobileNetV2 on 2 Zen 4
      // cores: bf16 alone and threads=1 alone were slower, together 1.28x; with direct
      // convolutions and the blocked layout 1.31x). Combine the best value of each of the
      // kFallbackKnobs knobs whose best single change came closest to the base (within
      // kFallbackSlack of it): at most 2^4 - 5 = 11 new routes.
      std::vector<std::pair<double, std::pair<size_t, size_t>>> near;  // latency, (dim, value)
      for (size_t d = 0; d < space_.dims.size(); ++d) {
        std::optional<std::pair<double, size_t>> best;
        for (size_t v = 1; v < space_.dims[d].second.size(); ++v) {
          Point p = BasePoint();
          p[d] = v;
          const std::optional<double> lat = LatencyOf(RouteOf(p));
          if (lat && (!best || *lat < best->first)) best = std::make_pair(*lat, v);
        }
        if (best && best->first <= *base * (1.0 + kFallbackSlack)) near.push_back({best->first, {d, best->second}});
      }
      std::sort(near.begin(), near.end());
      if (near.size() > kFallbackKnobs) near.resize(kFallbackKnobs);
      for (const auto& [lat, dv] : near) {
        dims.push_back(dv.first);
        values.push_back({0, dv.second});
      }
    }
    if (dims.size() < 2) return;  // one knob: fast already measured it all
    std::vector<size_t> radices;
    for (const auto& v : values) radices.push_back(v.size());
    Point idx(dims.size(), 0);
    do {
      Point p = BasePoint();
      for (size_t i = 0; i < dims.size(); ++i) p[dims[i]] = values[i][idx[i]];
      Track(p);
    } while (Step(&idx, radices));
  }

  int phase_ = 0;
  bool combined_ = false;
};

}  // namespace
}  // namespace search

std::unique_ptr<SearchStrategy> MakeMixedStrategy(const SearchSpace& space,
                                                  const StrategyOptions& options) {
  return std::make_unique<search::MixedStrategy>(space, options);
}

}  // namespace switchyard
