// fast: the base route, then every single knob moved to each of its other values (one
// change at a time): 1 + sum(values - 1) proposals, minus incompatible ones. Cheap, and
// blind to interactions between knobs (mixed builds on it for those).
#include "tune/search/common.h"

namespace switchyard {
namespace search {
namespace {

class FastStrategy final : public StrategyBase {
 public:
  FastStrategy(const SearchSpace& space, const StrategyOptions& options)
      : StrategyBase(space, options) {
    Start();
  }
  std::string name() const override { return "fast"; }

 private:
  bool Advance() override {
    if (planned_) return false;
    planned_ = true;
    EnqueueBaseAndOneChanges(options_.repeats);
    return true;
  }

  bool planned_ = false;
};

}  // namespace
}  // namespace search

std::unique_ptr<SearchStrategy> MakeFastStrategy(const SearchSpace& space,
                                                 const StrategyOptions& options) {
  return std::make_unique<search::FastStrategy>(space, options);
}

}  // namespace switchyard
