// Memory planning: places every intermediate tensor in one arena from plain usage
// records (first step that writes it, last step that reads it, bytes). Two tensors may
// share bytes only when their lifetimes do not overlap. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/status.h"

namespace switchyard {

struct UsageRecord {
  int first = 0;  // step index that produces the tensor
  int last = 0;   // last step index that reads it (>= first)
  int64_t bytes = 0;
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // per record, 64-byte aligned
  int64_t arena_bytes = 0;
};

inline constexpr int64_t kArenaAlignment = 64;

// strategy: "greedy_by_size" (largest first, lowest non-conflicting offset),
// "linear_scan" (in order of first use, first fit in freed blocks), "none" (no reuse).
Result<MemoryPlan> PlanMemory(const std::vector<UsageRecord>& records, const std::string& strategy);

}  // namespace switchyard
