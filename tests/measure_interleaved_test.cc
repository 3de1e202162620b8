// MeasureInterleaved's early stop (tune/measure.h, InterleaveOptions::slower_rounds): a
// candidate surely slower than the baseline stops after `slower_rounds` rounds, before
// `min_rounds`, with stopped_by "slower"; one as fast as the baseline is measured to
// `min_rounds`; slower_rounds = 0 measures every round.
#include <gtest/gtest.h>

#include "engine_test_util.h"
#include "passes_test_util.h"
#include "tune/measure.h"

namespace switchyard {
namespace {
using namespace engine_test;  // NOLINT: the engine tests' shared helpers
using testing::Filled;

// x [96, 96] through `matmuls` MatMuls by constant [96, 96] weights (each one about 0.9M
// multiply-adds), then a Relu: the engine's time grows with `matmuls`.
std::shared_ptr<const LoadedEngine> Chain(int matmuls) {
  testing::GraphBuilder gb;
  ValueId v = gb.Input("x", {96, 96});
  for (int i = 0; i < matmuls; ++i) {
    v = gb.Op("MatMul", {v, gb.Const("w" + std::to_string(i), Filled(DataType::kFloat, {96, 96}, 10 + i, -0.1, 0.1))});
  }
  gb.Output(gb.Op("Relu", {v}));
  const Graph g = gb.Finish();
  auto b = BuildRoute(g, "threads=1", FixedShapes({{"x", Filled(DataType::kFloat, {96, 96}, 1)}}));
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  if (!b.ok()) return nullptr;
  auto loaded = LoadedEngine::Create(std::move(b->engine));
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return loaded.ok() ? *loaded : nullptr;
}

InterleaveOptions Options() {
  InterleaveOptions o;
  o.warmup = 1;
  o.block = 3;
  o.min_rounds = 8;
  o.max_rounds = 8;
  o.max_seconds = 60;
  return o;
}

TEST(MeasureInterleaved, ASurelySlowerCandidateStopsAfterTheSlowerRounds) {
  const auto fast = Chain(1), slow = Chain(40);  // about 40x the work
  ASSERT_TRUE(fast && slow);
  const TensorMap in = {{"x", Filled(DataType::kFloat, {96, 96}, 2)}};
  InterleaveOptions o = Options();
  o.slower_rounds = 4;
  auto m = MeasureInterleaved(fast, slow, in, o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::printf("[slower] rounds %d, stopped by %s, speedup %.3f [%.3f, %.3f]\n", m->rounds, m->stopped_by.c_str(),
              m->speedup.speedup, m->speedup.ci_low, m->speedup.ci_high);
  EXPECT_EQ(m->stopped_by, "slower");
  EXPECT_EQ(m->rounds, 4);
  EXPECT_LT(m->speedup.ci_high, o.slower_than);
  EXPECT_EQ(m->candidate_ms.size(), 4u);

  // Switched off: every round of min_rounds.
  o.slower_rounds = 0;
  auto all = MeasureInterleaved(fast, slow, in, o);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->rounds, 8);
  EXPECT_NE(all->stopped_by, "slower");
}

// The same engine as candidate: never surely 10% slower, so it is measured to min_rounds (a
// threshold of 0.9 keeps this test clear of the machine's noise; the tuner's 0.99 is for
// candidates 1% or more slower).
TEST(MeasureInterleaved, ACandidateAsFastAsTheBaselineIsMeasuredToMinRounds) {
  const auto a = Chain(8);
  ASSERT_TRUE(a);
  const TensorMap in = {{"x", Filled(DataType::kFloat, {96, 96}, 3)}};
  InterleaveOptions o = Options();
  o.slower_rounds = 3;
  o.slower_than = 0.9;
  auto m = MeasureInterleaved(a, a, in, o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::printf("[equal] rounds %d, stopped by %s, speedup %.3f [%.3f, %.3f]\n", m->rounds, m->stopped_by.c_str(),
              m->speedup.speedup, m->speedup.ci_low, m->speedup.ci_high);
  EXPECT_EQ(m->rounds, 8);
  EXPECT_NE(m->stopped_by, "slower");
}

}  // namespace
}  // namespace switchyard
