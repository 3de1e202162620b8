// A batch-split segment on workers (engine/batch_split.h, runtime/worker_pool.h): engines
// of 8 threads or more run every per-image step from the first on workers of 2 threads,
// one image per chunk, at once. Built here for a host of 16 logical CPUs (the threads
// knob's range; this machine may have fewer, which only makes the runs slower). Outputs
// equal the unsplit engine's and the reference's, each worker keeps the segment's internal
// tensors in its own scratch, and malformed worker counts are refused by name.
#include <gtest/gtest.h>

#include <cstdio>
#include <utility>

#include "batch_split_test_util.h"
#include "engine/batch_split.h"

namespace switchyard {
namespace {
using namespace engine_test;       // NOLINT: the engine tests' shared helpers
using namespace batch_split_test;  // NOLINT: ConvNet, Inputs, Compare, ExpectSameOutputs

constexpr int kCores = 16;
constexpr int64_t kHw = 32;  // small images: the runs stay short on a 2-core machine

struct Workers {
  Graph g;
  Built off, split;
};
Workers MakeWorkers() {
  Workers q{ConvNet(8, false, kHw), {}, {}};
  const BuildOptions opt = FixedShapes(Inputs(8, 1, kHw));
  auto off = BuildRoute(q.g, "threads=16 schedule.batch_split=off", opt, kCores);
  auto split = BuildRoute(q.g, "threads=16", opt, kCores);  // auto is the default
  EXPECT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_TRUE(split.ok()) << split.status().ToString();
  if (off.ok()) q.off = std::move(*off);
  if (split.ok()) q.split = std::move(*split);
  return q;
}
const Workers& Batch8() {
  static const Workers w = MakeWorkers();
  return w;
}

// threads=16 at batch 8: one segment from step 0 through the pooling, on 8 workers of 2
// threads; every step of the loaded engine runs on at most 2; the session holds the arena
// and 7 workers' scratch and nothing else; outputs as the unsplit engine's and the
// reference's, with the step profile on.
TEST(BatchSplitWorkers, SixteenThreadsRunTheImagesOnEightWorkersOfTwo) {
  const Workers& w = Batch8();
  const Engine& e = w.split.engine;
  auto segs = ReadBatchSegments(e);
  ASSERT_TRUE(segs.ok()) << segs.status().ToString();
  ASSERT_EQ(segs->size(), 1u);
  const BatchSegment& seg = segs->front();
  EXPECT_EQ(seg.first, 0);
  EXPECT_EQ(seg.workers, 8);
  EXPECT_EQ(seg.chunk, 1);
  int convs = 0;
  for (int s = seg.first; s < seg.end; ++s) {
    const std::string& op = e.steps[static_cast<size_t>(s)].op_type;
    convs += op == "Conv" || op == "FusedConv";
    EXPECT_TRUE(op != "Flatten" && op != "Gemm") << op << " in the segment";
  }
  EXPECT_EQ(convs, 3);
  EXPECT_TRUE(HasNote(w.split.report, "batch split: steps")) << "no batch split note";
  bool workers_note = false;
  for (const std::string& n : w.split.report.notes) workers_note |= n.find("on 8 workers of 2 threads") != std::string::npos;
  EXPECT_TRUE(workers_note);
  EXPECT_GT(seg.scratch_bytes, 0);
  EXPECT_LT(seg.scratch_bytes, e.arena_bytes);

  auto loaded = LoadedEngine::Create(e);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->worker_threads(), 2);
  for (size_t s = 0; s < e.steps.size(); ++s) EXPECT_LE((*loaded)->step_threads(s), 2) << e.steps[s].name;
  Session session(*loaded);
  session.set_step_timing(true);
  const TensorMap in = Inputs(8, 7, kHw);
  auto got = session.Run(in);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(session.peak_bytes(), e.arena_bytes + 7 * seg.scratch_bytes) << "heap buffers beside arena and scratch";
  double seconds = 0;
  for (double s : session.step_seconds()) seconds += s;
  EXPECT_GT(seconds, 0.0);
  EXPECT_EQ(session.timed_runs(), 1);
  ExpectSameOutputs(*got, RunEngine(w.off.engine, in), "workers vs off");
  ExpectMatchesReference(w.g, e, in, 1e-5, "workers");
}

// The workers' scratch: the segment's internal arena tensors, packed; two of them share
// bytes there exactly where they share bytes in the arena, and all fit in scratch_bytes.
TEST(BatchSplitWorkers, ScratchKeepsTheArenasSharing) {
  const Engine& e = Batch8().split.engine;
  auto segs = ReadBatchSegments(e);
  ASSERT_TRUE(segs.ok() && segs->size() == 1u);
  const BatchSegment& seg = segs->front();
  std::vector<int> internal;
  for (int s = seg.first; s < seg.end; ++s) {
    for (int t : e.steps[static_cast<size_t>(s)].outputs) {
      if (t >= 0 && !seg.boundary[static_cast<size_t>(t)]) internal.push_back(t);
    }
  }
  ASSERT_GE(internal.size(), 3u);
  for (int a : internal) {
    const EngineTensor& x = e.tensors[static_cast<size_t>(a)];
    const int64_t sa = seg.scratch[static_cast<size_t>(a)];
    ASSERT_GE(sa, 0) << x.name << " has no scratch bytes";
    EXPECT_LE(sa + x.bytes, seg.scratch_bytes) << x.name;
    for (int b : internal) {
      const EngineTensor& y = e.tensors[static_cast<size_t>(b)];
      const int64_t sb = seg.scratch[static_cast<size_t>(b)];
      const bool arena = x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
      const bool scratch = sa < sb + y.bytes && sb < sa + x.bytes;
      EXPECT_EQ(arena, scratch) << x.name << " and " << y.name;
    }
  }
  // Tensors outside the segment and boundary tensors have none.
  for (size_t t = 0; t < e.tensors.size(); ++t) {
    if (seg.boundary[t]) EXPECT_EQ(seg.scratch[t], -1) << e.tensors[t].name;
  }
}

// Other worker counts and chunks than the build's (3 workers: uneven shares of the 8
// images; chunks of 3: larger than the scratch's one image, so on heap buffers), repeated
// runs and a second session: the unsplit engine's outputs, bitwise the same each time.
TEST(BatchSplitWorkers, OtherCountsRepeatedRunsAndSessionsAgree) {
  const Workers& w = Batch8();
  const TensorMap in[2] = {Inputs(8, 41, kHw), Inputs(8, 42, kHw)};
  const TensorMap want[2] = {RunEngine(w.off.engine, in[0]), RunEngine(w.off.engine, in[1])};
  EXPECT_FALSE(Compare(want[0].begin()->second, want[1].begin()->second).bitwise);
  for (auto [workers, chunk] : {std::pair{8, 1}, std::pair{3, 1}, std::pair{2, 3}, std::pair{16, 1}}) {
    const std::string what = std::to_string(workers) + " workers, chunk " + std::to_string(chunk);
    Engine e = w.split.engine;
    e.steps[0].params["batch_split"]["workers"] = workers;
    e.steps[0].params["batch_split"]["chunk"] = chunk;
    auto loaded = LoadedEngine::Create(e);
    ASSERT_TRUE(loaded.ok()) << what << ": " << loaded.status().ToString();
    Session a(*loaded), b(*loaded);
    TensorMap first[2];
    for (int round = 0; round < 2; ++round) {
      for (Session* s : {&a, &b}) {
        for (int i = 0; i < 2; ++i) {
          auto out = s->Run(in[i]);
          ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
          if (first[i].empty()) {
            ExpectSameOutputs(*out, want[i], what);
            first[i] = *out;
            continue;
          }
          for (const auto& [name, t] : first[i]) EXPECT_TRUE(Compare(out->at(name), t).bitwise) << what << " " << name;
        }
      }
    }
  }
}

// Damaged worker counts are refused at load, naming the step and the param: not an
// integer, under 1, more than the engine's threads, and workers in an engine of two
// segments.
TEST(BatchSplitWorkers, MalformedWorkerCountsAreRefusedByName) {
  const Engine& good = Batch8().split.engine;
  ASSERT_TRUE(good.steps[0].params.contains("batch_split"));
  for (const nlohmann::json& v : {nlohmann::json(0), nlohmann::json(-2), nlohmann::json(1.5), nlohmann::json("8"),
                                  nlohmann::json(17), nlohmann::json(nullptr)}) {
    Engine e = good;
    e.steps[0].params["batch_split"]["workers"] = v;
    auto loaded = LoadedEngine::Create(e);
    ASSERT_FALSE(loaded.ok()) << v.dump();
    const std::string msg = loaded.status().ToString();
    EXPECT_NE(msg.find("step '" + good.steps[0].name + "'"), std::string::npos) << v.dump() << ": " << msg;
    EXPECT_NE(msg.find("batch_split.workers"), std::string::npos) << v.dump() << ": " << msg;
  }
  // A second segment after the one on workers.
  Engine e = good;
  const int steps = e.steps[0].params["batch_split"]["steps"].get<int>();
  ASSERT_LT(steps + 1, static_cast<int>(e.steps.size()));
  e.steps[0].params["batch_split"]["steps"] = 1;
  e.steps[static_cast<size_t>(steps)].params["batch_split"] = {{"steps", 1}, {"chunk", 1}};
  auto loaded = LoadedEngine::Create(e);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().ToString().find("only segment"), std::string::npos) << loaded.status().ToString();
}

// Which engines take workers: 8 threads (4 workers of 2), not 4 (3 to 7 take no split at
// all), not batch 1, and not a network whose steps after the run hold more than a tenth
// of its tensor bytes.
TEST(BatchSplitWorkers, OnlyEnginesOfEightThreadsOrMoreTakeWorkers) {
  const Graph g = ConvNet(8, false, kHw);
  const BuildOptions opt = FixedShapes(Inputs(8, 1, kHw));
  auto eight = BuildRoute(g, "threads=8", opt, kCores);
  ASSERT_TRUE(eight.ok()) << eight.status().ToString();
  auto segs = ReadBatchSegments(eight->engine);
  ASSERT_TRUE(segs.ok() && segs->size() == 1u);
  EXPECT_EQ(segs->front().workers, 4);
  auto four = BuildRoute(g, "threads=4", opt, kCores);
  ASSERT_TRUE(four.ok()) << four.status().ToString();
  EXPECT_TRUE(ReadBatchSegments(four->engine)->empty());
  EXPECT_TRUE(HasNote(four->report, "batch split: none (engines of 3 to 7 threads"));
  const Graph one = ConvNet(1, false, kHw);
  auto b1 = BuildRoute(one, "threads=16", FixedShapes(Inputs(1, 1, kHw)), kCores);
  ASSERT_TRUE(b1.ok()) << b1.status().ToString();
  EXPECT_TRUE(ReadBatchSegments(b1->engine)->empty());
  // x -> Conv1x1+Relu -> Conv1x1+Relu (the run) -> Transpose -> Mul -> Sigmoid: three
  // tensors of the conv's size after the run, two in it; such a run leaves most of the
  // work on one worker's threads.
  testing::GraphBuilder gb;
  const ValueId x = gb.Input("x", {8, 16, kHw, kHw});
  auto conv = [&](ValueId in, uint32_t seed) {
    const ValueId wc = gb.Const("w" + std::to_string(seed), testing::Filled(DataType::kFloat, {16, 16, 1, 1}, seed, -0.2, 0.2));
    return gb.Op("Relu", {gb.Op("Conv", {in, wc})});
  };
  const ValueId c = conv(conv(x, 3), 4);
  const ValueId t = gb.Op("Transpose", {c}, [](Node& node) { node.attrs["perm"] = testing::IntsAttr({0, 2, 3, 1}); });
  gb.Output(gb.Op("Sigmoid", {gb.Op("Mul", {t, t})}));
  const Graph late = gb.Finish();
  auto lb = BuildRoute(late, "threads=16", opt, kCores);
  ASSERT_TRUE(lb.ok()) << lb.status().ToString();
  EXPECT_TRUE(ReadBatchSegments(lb->engine)->empty()) << "a run before most of the tensor bytes took workers";
  EXPECT_TRUE(HasNote(lb->report, "batch split: none (no run of per-image steps from the first one"));
}

}  // namespace
}  // namespace switchyard
