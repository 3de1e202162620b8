// random: the base route, then `samples` routes drawn uniformly without replacement from
// the compatible routes of the space with a seeded generator (StrategyBase::SampleRoutes):
// the same seed proposes the same routes, another seed others. A cheap baseline for
// spaces too large for full, and unbiased by the order of the knobs.
#include "tune/search/common.h"

namespace switchyard {
namespace search {
namespace {

class RandomStrategy final : public StrategyBase {
 public:
  RandomStrategy(const SearchSpace& space, const StrategyOptions& options)
      : StrategyBase(space, options) {
    Start();
  }
  std::string name() const override { return "random"; }

 private:
  bool Advance() override {
    if (planned_) return false;
    planned_ = true;
    Enqueue(RouteOf(BasePoint()), options_.repeats);
    for (const Route& r : SampleRoutes(options_.samples, options_.seed)) {
      Enqueue(r, options_.repeats);
    }
    return true;
  }

  bool planned_ = false;
};

}  // namespace
}  // namespace search

std::unique_ptr<SearchStrategy> MakeRandomStrategy(const SearchSpace& space,
                                                   const StrategyOptions& options) {
  return std::make_unique<search::RandomStrategy>(space, options);
}

}  // namespace switchyard
