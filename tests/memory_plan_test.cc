#include <gtest/gtest.h>

#include <random>

#include "build/builder.h"
#include "build/memory_plan.h"

namespace switchyard {
namespace {

// No two records whose lifetimes overlap may share bytes.
void ExpectValid(const std::vector<UsageRecord>& r, const MemoryPlan& p) {
  ASSERT_EQ(p.offsets.size(), r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(p.offsets[i] % kArenaAlignment, 0);
    EXPECT_LE(p.offsets[i] + r[i].bytes, p.arena_bytes);
    for (size_t j = i + 1; j < r.size(); ++j) {
      const bool live_together = r[i].first <= r[j].last && r[j].first <= r[i].last;
      const bool share = p.offsets[i] < p.offsets[j] + r[j].bytes && p.offsets[j] < p.offsets[i] + r[i].bytes;
      EXPECT_FALSE(live_together && share && r[i].bytes > 0 && r[j].bytes > 0)
          << "records " << i << " and " << j << " overlap";
    }
  }
}

TEST(MemoryPlan, ChainReusesMemory) {
  // A chain a->b->c->d: each tensor dies when the next is made, so two buffers suffice.
  std::vector<UsageRecord> r = {{0, 1, 1000}, {1, 2, 1000}, {2, 3, 1000}, {3, 4, 1000}};
  for (const char* s : {"greedy_by_size", "linear_scan"}) {
    auto p = PlanMemory(r, s);
    ASSERT_TRUE(p.ok()) << s;
    ExpectValid(r, *p);
    EXPECT_EQ(p->arena_bytes, 2 * 1024) << s;
  }
  auto none = PlanMemory(r, "none");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->arena_bytes, 4 * 1024);
}

TEST(MemoryPlan, RandomLifetimesNeverOverlap) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<UsageRecord> r;
    for (int i = 0; i < 40; ++i) {
      const int first = static_cast<int>(rng() % 60);
      r.push_back({first, first + static_cast<int>(rng() % 15), static_cast<int64_t>(rng() % 5000)});
    }
    for (const char* s : {"greedy_by_size", "linear_scan", "none"}) {
      auto p = PlanMemory(r, s);
      ASSERT_TRUE(p.ok());
      ExpectValid(r, *p);
    }
  }
}

TEST(MemoryPlan, UnknownStrategyIsAnError) {
  auto p = PlanMemory({}, "best");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("greedy_by_size|linear_scan|none"), std::string::npos);
}

TEST(ShapeArg, FixedRangesAndErrors) {
  std::map<std::string, std::vector<DimRange>> m;
  ASSERT_TRUE(ParseShapeArg("x=1x3x224x224", &m).ok());
  EXPECT_EQ(m["x"].size(), 4u);
  EXPECT_EQ(m["x"][2], (DimRange{224, 224, 224}));
  ASSERT_TRUE(ParseShapeArg("img=1x3x[32..640]x[32..224..640]", &m).ok());
  EXPECT_EQ(m["img"][2], (DimRange{32, 640, 640}));
  EXPECT_EQ(m["img"][3], (DimRange{32, 224, 640}));
  EXPECT_FALSE(ParseShapeArg("x=1x3x224x224", &m).ok());  // twice
  EXPECT_FALSE(ParseShapeArg("y=1xax2", &m).ok());
  EXPECT_FALSE(ParseShapeArg("y=1x[5..2]", &m).ok());
  EXPECT_FALSE(ParseShapeArg("y=1x[5..", &m).ok());
  EXPECT_FALSE(ParseShapeArg("noequals", &m).ok());
}

}  // namespace
}  // namespace switchyard
