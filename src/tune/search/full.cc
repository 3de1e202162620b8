// full: the Cartesian product of every dimension's values, base route first (the
// odometer starts at all-first values, last knob turning fastest), incompatible routes
// skipped. Exhaustive, so only sensible for small spaces or with a budget; the product is
// walked lazily, a chunk at a time, so a huge space costs no memory up front.
#include "tune/search/common.h"

namespace switchyard {
namespace search {
namespace {

constexpr size_t kChunk = 1024;

class FullStrategy final : public StrategyBase {
 public:
  FullStrategy(const SearchSpace& space, const StrategyOptions& options)
      : StrategyBase(space, options), point_(BasePoint()), radices_(Radices()),
        total_(space.ProductSize()) {
    Start();
  }
  std::string name() const override { return "full"; }
  size_t Planned() const override {
    const uint64_t left = total_ - skipped_;
    return left > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(left);
  }

 private:
  bool Advance() override {
    if (exhausted_) return false;
    for (size_t n = 0; n < kChunk && !exhausted_; ++n) {
      const Route r = RouteOf(point_);
      if (!Compatible(r)) ++skipped_;
      else Enqueue(r, options_.repeats);
      exhausted_ = !Step(&point_, radices_);
    }
    return true;
  }

  Point point_;
  const std::vector<size_t> radices_;
  const uint64_t total_;
  uint64_t skipped_ = 0;
  bool exhausted_ = false;
};

}  // namespace
}  // namespace search

std::unique_ptr<SearchStrategy> MakeFullStrategy(const SearchSpace& space,
                                                 const StrategyOptions& options) {
  return std::make_unique<search::FullStrategy>(space, options);
}

}  // namespace switchyard
