// mixed: fast first (the base route and every one-knob change); then the full product
// over only the knob values whose single change beat the base latency by more than
// `min_improvement`, each such knob ranging over its base value plus its improving
// values, every other knob at the base. Finds interactions between helpful knobs (two
// fusions that are each good and better together) at a fraction of full's cost, and
// never re-proposes a route already measured. When the base route fails there is
// nothing to compare against, and the search ends after the fast phase.
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
      return true;
    }
    if (phase_ == 2) {
      EnqueueCombinations();
      return true;
    }
    return false;
  }

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
    if (dims.size() < 2) return;  // one improving knob: fast already measured it all
    std::vector<size_t> radices;
    for (const auto& v : values) radices.push_back(v.size());
    Point idx(dims.size(), 0);
    do {
      Point p = BasePoint();
      for (size_t i = 0; i < dims.size(); ++i) p[dims[i]] = values[i][idx[i]];
      Enqueue(RouteOf(p), options_.repeats);  // skips measured and incompatible routes
    } while (Step(&idx, radices));
  }

  int phase_ = 0;
};

}  // namespace
}  // namespace search

std::unique_ptr<SearchStrategy> MakeMixedStrategy(const SearchSpace& space,
                                                  const StrategyOptions& options) {
  return std::make_unique<search::MixedStrategy>(space, options);
}

}  // namespace switchyard
