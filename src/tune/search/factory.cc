// MakeStrategy: search strategies by name, with their options checked.
#include "tune/search/strategy.h"

namespace switchyard {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<SearchStrategy> (*make)(const SearchSpace&, const StrategyOptions&);
};

// The order is the one users see in error messages and help text.
const Entry kStrategies[] = {
    {"fast", MakeFastStrategy},     {"full", MakeFullStrategy},
    {"mixed", MakeMixedStrategy},   {"random", MakeRandomStrategy},
    {"greedy", MakeGreedyStrategy}, {"halving", MakeHalvingStrategy},
};

Status CheckOptions(const std::string& name, const StrategyOptions& o) {
  auto bad = [&](const std::string& what) {
    return Status::Invalid("search strategy '" + name + "': " + what);
  };
  if (o.repeats < 1) return bad("repeats must be at least 1, got " + std::to_string(o.repeats));
  if (!(o.min_improvement >= 0 && o.min_improvement < 1)) {
    return bad("min_improvement must be in [0, 1), got " + std::to_string(o.min_improvement));
  }
  if (o.max_rounds < 1) return bad("max_rounds must be at least 1");
  if (o.halving_pool < 1) return bad("halving_pool must be at least 1");
  if (o.halving_r0 < 1) return bad("halving_r0 must be at least 1");
  if (o.halving_eta < 2) return bad("halving_eta must be at least 2, got " +
                                    std::to_string(o.halving_eta));
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<SearchStrategy>> MakeStrategy(const std::string& name,
                                                     const SearchSpace& space,
                                                     const StrategyOptions& options) {
  for (const Entry& e : kStrategies) {
    if (name != e.name) continue;
    SY_RETURN_IF_ERROR(CheckOptions(name, options));
    for (const auto& [key, values] : space.dims) {
      if (values.empty()) {
        return Status::Invalid("search space dimension '" + key + "' has no values");
      }
    }
    return e.make(space, options);
  }
  std::string names;
  for (const Entry& e : kStrategies) names += (names.empty() ? "" : "|") + std::string(e.name);
  return Status::Invalid("unknown search strategy '" + name + "'; choose one of " + names);
}

}  // namespace switchyard
