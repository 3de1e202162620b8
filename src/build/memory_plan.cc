#include "build/memory_plan.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace switchyard {
namespace {

int64_t Align(int64_t v) { return (v + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool Overlap(const UsageRecord& a, const UsageRecord& b) {
  return a.first <= b.last && b.first <= a.last;
}

MemoryPlan GreedyBySize(const std::vector<UsageRecord>& r) {
  std::vector<size_t> order(r.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by first use then index, so the plan is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (r[a].bytes != r[b].bytes) return r[a].bytes > r[b].bytes;
    return r[a].first < r[b].first;
  });
  MemoryPlan plan;
  plan.offsets.assign(r.size(), 0);
  std::vector<size_t> placed;
  for (size_t i : order) {
    // Conflicting placed intervals, sorted by offset; take the first gap that fits.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t p : placed) {
      if (Overlap(r[i], r[p])) busy.push_back({plan.offsets[p], plan.offsets[p] + Align(r[p].bytes)});
    }
    std::sort(busy.begin(), busy.end());
    int64_t off = 0;
    const int64_t need = Align(r[i].bytes);
    for (const auto& [lo, hi] : busy) {
      if (off + need <= lo) break;
      off = std::max(off, hi);
    }
    plan.offsets[i] = off;
    plan.arena_bytes = std::max(plan.arena_bytes, off + need);
    placed.push_back(i);
  }
  return plan;
}

MemoryPlan LinearScan(const std::vector<UsageRecord>& r) {
  std::vector<size_t> order(r.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r[a].first < r[b].first; });
  MemoryPlan plan;
  plan.offsets.assign(r.size(), 0);
  std::map<int64_t, int64_t> free_blocks;  // offset -> size
  std::vector<size_t> live;
  int64_t top = 0;
  for (size_t i : order) {
    // Release every tensor whose last use is before this one's first use.
    for (auto it = live.begin(); it != live.end();) {
      if (r[*it].last < r[i].first) {
        int64_t off = plan.offsets[*it], size = Align(r[*it].bytes);
        auto next = free_blocks.lower_bound(off);
        if (next != free_blocks.end() && off + size == next->first) {
          size += next->second;
          free_blocks.erase(next);
        }
        auto prev = free_blocks.lower_bound(off);
        if (prev != free_blocks.begin()) {
          --prev;
          if (prev->first + prev->second == off) {
            off = prev->first;
            size += prev->second;
            free_blocks.erase(prev);
          }
        }
        free_blocks[off] = size;
        it = live.erase(it);
      } else {
        ++it;
      }
    }
    const int64_t need = Align(r[i].bytes);
    auto fit = std::find_if(free_blocks.begin(), free_blocks.end(),
                            [&](const auto& b) { return b.second >= need; });
    if (fit != free_blocks.end()) {
      plan.offsets[i] = fit->first;
      const int64_t rest = fit->second - need, rest_off = fit->first + need;
      free_blocks.erase(fit);
      if (rest > 0) free_blocks[rest_off] = rest;
    } else {
      plan.offsets[i] = top;
      top += need;
    }
    live.push_back(i);
  }
  plan.arena_bytes = top;
  return plan;
}

}  // namespace

Result<MemoryPlan> PlanMemory(const std::vector<UsageRecord>& records, const std::string& strategy) {
  for (const UsageRecord& r : records) {
    if (r.bytes < 0 || r.last < r.first) return Status::Internal("bad usage record");
  }
  if (strategy == "greedy_by_size") return GreedyBySize(records);
  if (strategy == "linear_scan") return LinearScan(records);
  if (strategy == "none") {
    MemoryPlan plan;
    for (const UsageRecord& r : records) {
      plan.offsets.push_back(plan.arena_bytes);
      plan.arena_bytes += Align(r.bytes);
    }
    return plan;
  }
  return Status::Invalid("unknown memory.plan strategy '" + strategy +
                         "'; allowed: greedy_by_size|linear_scan|none");
}

}  // namespace switchyard
