// schedule.batch_split=auto (engine/batch_split.h, build/batch_split.h): the build marks a
// segment of per-image steps from the start, shrinks its internal tensors to one chunk and
// keeps its boundary tensors whole over the segment; the session runs it chunk by chunk.
// Outputs equal the unsplit engine's, the arena shrinks, chunks never overwrite a boundary
// tensor, and malformed segments are refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "batch_split_test_util.h"
#include "engine/batch_split.h"
#include "runtime/layout.h"

namespace switchyard {
namespace {
using namespace engine_test;  // NOLINT: the engine tests' shared helpers
using namespace batch_split_test;  // NOLINT: ConvNet, Inputs, Compare, ExpectSameOutputs
using testing::Filled;

// ConvNet at batch 4 built with the knob off and auto, shared by the tests below.
struct Pair {
  Graph g;
  Built off, split;
};
Pair MakePair(bool side) {
  Pair q{ConvNet(4, side), {}, {}};
  const BuildOptions opt = FixedShapes(Inputs(4, 1));
  auto off = BuildRoute(q.g, kOff, opt);
  auto split = BuildRoute(q.g, kSplit, opt);
  EXPECT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_TRUE(split.ok()) << split.status().ToString();
  if (off.ok()) q.off = std::move(*off);
  if (split.ok()) q.split = std::move(*split);
  return q;
}
const Pair& Batch4(bool side = false) {
  static const Pair plain = MakePair(false), with_side = MakePair(true);
  return side ? with_side : plain;
}

// At batch 4 auto declares one segment from step 0 that stops before the classifier
// (Flatten/Gemm), reports it, shrinks the arena, and runs to the unsplit engine's outputs
// (and the reference's) without any heap buffer: a runtime that ignored the segment would
// put the chunk-sized internal tensors on the heap, one that ignored its views would
// compute or place the wrong rows.
TEST(BatchSplit, AutoSplitsTheConvStackAndKeepsItsOutputs) {
  const Pair& p = Batch4();
  const Engine& e = p.split.engine;
  ASSERT_FALSE(e.steps.empty());
  auto segs = ReadBatchSegments(e);
  ASSERT_TRUE(segs.ok()) << segs.status().ToString();
  ASSERT_EQ(segs->size(), 1u);
  const BatchSegment& seg = segs->front();
  EXPECT_EQ(seg.first, 0);
  EXPECT_GE(seg.end, 4);  // at least the three convolutions
  EXPECT_LT(seg.end, static_cast<int>(e.steps.size()));
  EXPECT_EQ(seg.chunk, 1);
  int convs = 0;
  for (int s = seg.first; s < seg.end; ++s) {
    const EngineStep& st = e.steps[static_cast<size_t>(s)];
    std::printf("[split] segment step %s (%s)\n", st.name.c_str(), st.op_type.c_str());
    convs += st.op_type == "Conv" || st.op_type == "FusedConv";
    EXPECT_TRUE(st.op_type != "Flatten" && st.op_type != "Gemm" && st.op_type.find("MatMul") == std::string::npos)
        << "segment includes " << st.name << " (" << st.op_type << ")";
  }
  EXPECT_EQ(convs, 3);
  EXPECT_TRUE(HasNote(p.split.report, "batch split: steps")) << "no batch split note";
  EXPECT_EQ(p.split.report.fired.count("schedule.batch_split") ? p.split.report.fired.at("schedule.batch_split") : 0, 1);
  // The route with the knob off declares nothing.
  auto none = ReadBatchSegments(p.off.engine);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(HasNote(p.off.report, "batch split:"));
  std::printf("[split] arena: off %lld bytes, auto %lld bytes\n", static_cast<long long>(p.off.engine.arena_bytes),
              static_cast<long long>(e.arena_bytes));
  EXPECT_LT(e.arena_bytes, p.off.engine.arena_bytes);

  const TensorMap in = Inputs(4, 7);
  auto loaded = LoadedEngine::Create(e);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->batch_segments().size(), 1u);
  Session session(*loaded);
  auto got = session.Run(in);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(session.peak_bytes(), e.arena_bytes) << "heap buffers beside the arena";
  ExpectSameOutputs(*got, RunEngine(p.off.engine, in), "auto vs off");
  ExpectMatchesReference(p.g, e, in, 1e-5, "batch split");
}

// Where the run ends: small steps inside it (a squeeze-excite block's pooled [n,32,1,1]
// tensors, far under 512 KiB per image) cost less than the large convolution after them
// gains, so the run goes on through them and takes that convolution (a run that stopped at
// the first small step had one 3x3 convolution); a 3x3 convolution on a 4x4 map (32 KiB per
// image, 576 KiB of weights read again per image) ends it.
TEST(BatchSplit, TheRunEndsWhereItsGainPeaks) {
  testing::GraphBuilder gb;
  const ValueId x = gb.Input("x", {4, 16, 128, 128});
  auto conv = [&](ValueId in, int64_t cin, int64_t cout, int64_t k, int64_t stride, uint32_t seed) {
    const ValueId w = gb.Const("w" + std::to_string(seed), Filled(DataType::kFloat, {cout, cin, k, k}, seed, -0.1, 0.1));
    const ValueId b = gb.Const("b" + std::to_string(seed), Filled(DataType::kFloat, {cout}, seed + 100, -0.1, 0.1));
    const int64_t p = k / 2;
    return gb.Op("Conv", {in, w, b}, [p, stride](Node& node) {
      node.attrs["pads"] = testing::IntsAttr({p, p, p, p});
      node.attrs["strides"] = testing::IntsAttr({stride, stride});
    });
  };
  const ValueId r1 = gb.Op("Relu", {conv(x, 16, 32, 3, 1, 1)});
  const ValueId se = gb.Op("Sigmoid", {conv(gb.Op("Relu", {conv(gb.Op("GlobalAveragePool", {r1}), 32, 8, 1, 1, 2)}),
                                            8, 32, 1, 1, 3)});
  const ValueId big = gb.Op("Relu", {conv(gb.Op("Mul", {r1, se}), 32, 32, 3, 1, 4)});  // 8 MiB
  const ValueId small = gb.Op("MaxPool", {big}, [](Node& node) {
    node.attrs["kernel_shape"] = testing::IntsAttr({32, 32});
    node.attrs["strides"] = testing::IntsAttr({32, 32});
  });  // [4,32,4,4]
  const ValueId heavy = gb.Op("Relu", {conv(small, 32, 512, 3, 1, 5)});  // 576 KiB of weights, 32 KiB per image
  const ValueId wg = gb.Const("wg", Filled(DataType::kFloat, {10, 512}, 6, -0.1, 0.1));
  gb.Output(gb.Op("Gemm", {gb.Op("Flatten", {gb.Op("GlobalAveragePool", {heavy})}), wg},
                  [](Node& node) { node.attrs["transB"] = testing::IntAttr(1); }));
  const Graph g = gb.Finish();
  const TensorMap in = Inputs(4, 11);
  auto b = BuildRoute(g, kSplit, FixedShapes(in));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto segs = ReadBatchSegments(b->engine);
  ASSERT_TRUE(segs.ok()) << segs.status().ToString();
  ASSERT_EQ(segs->size(), 1u);
  int big_convs = 0;
  bool heavy_inside = false, pooled_inside = false;
  for (int s = segs->front().first; s < segs->front().end; ++s) {
    const EngineStep& st = b->engine.steps[static_cast<size_t>(s)];
    std::printf("[peak] segment step %s (%s)\n", st.name.c_str(), st.op_type.c_str());
    const auto& w = st.input_shapes.size() > 1 ? st.input_shapes[1] : std::vector<int64_t>{};
    if ((st.op_type == "Conv" || st.op_type == "FusedConv") && w.size() == 4) {
      big_convs += w[0] == 32 && w[2] == 3;
      heavy_inside |= w[0] == 512;
    }
    pooled_inside |= st.op_type == "GlobalAveragePool";
  }
  EXPECT_TRUE(pooled_inside) << "the squeeze-excite block's steps are not in the run";
  EXPECT_EQ(big_convs, 2) << "the run stopped before the convolution after the small steps";
  EXPECT_FALSE(heavy_inside) << "the weight-heavy convolution is in the run";
  ExpectSameOutputs(RunEngine(b->engine, in), RunEngine(BuildRoute(g, kOff, FixedShapes(in))->engine, in), "peak");
}

// An operand whose dim 0 equals the batch but is not the batch (y [4,1,1], a second input,
// broadcast over the channels of a [4,4,128,128] output) keeps its step out of the run:
// sliced by images it would add image i's channel value to every channel.
TEST(BatchSplit, AnOperandOfAnotherRankIsNotSlicedByImages) {
  testing::GraphBuilder gb;
  const ValueId x = gb.Input("x", {4, 16, 128, 128});
  const ValueId y = gb.Input("y", {4, 1, 1});
  auto conv = [&](ValueId in, int64_t cin, int64_t cout, uint32_t seed) {
    const ValueId w = gb.Const("w" + std::to_string(seed), Filled(DataType::kFloat, {cout, cin, 3, 3}, seed, -0.2, 0.2));
    return gb.Op("Conv", {in, w}, [](Node& node) { node.attrs["pads"] = testing::IntsAttr({1, 1, 1, 1}); });
  };
  const ValueId big = gb.Op("Relu", {conv(x, 16, 32, 1)});                    // 8 MiB
  const ValueId added = gb.Op("Add", {gb.Op("Relu", {conv(big, 32, 4, 2)}), y});  // y per channel
  gb.Output(gb.Op("GlobalAveragePool", {conv(added, 4, 8, 3)}));
  const Graph g = gb.Finish();
  TensorMap in = Inputs(4, 5);
  in["y"] = Filled(DataType::kFloat, {4, 1, 1}, 9, -3.0, 3.0);
  auto b = BuildRoute(g, kSplit, FixedShapes(in));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto segs = ReadBatchSegments(b->engine);
  ASSERT_TRUE(segs.ok()) << segs.status().ToString();
  ASSERT_EQ(segs->size(), 1u) << "the convolution in front of the Add makes a run";
  for (const BatchSegment& seg : *segs) {
    for (int s = seg.first; s < seg.end; ++s) {
      const EngineStep& st = b->engine.steps[static_cast<size_t>(s)];
      for (size_t i = 0; i < st.input_shapes.size(); ++i) {
        EXPECT_FALSE(st.inputs[i] >= 0 && st.input_shapes[i] == (std::vector<int64_t>{4, 1, 1}))
            << st.name << " reads y inside the run";
      }
    }
  }
  ExpectMatchesReference(g, b->engine, in, 1e-5, "rank");
}

// At batch 1 there is nothing to split: no segment, the note says none, no knob fired.
TEST(BatchSplit, BatchOneDeclaresNoSegment) {
  const Graph g = ConvNet(1);
  auto b = BuildRoute(g, kSplit, FixedShapes(Inputs(1, 1)));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto segs = ReadBatchSegments(b->engine);
  ASSERT_TRUE(segs.ok()) << segs.status().ToString();
  EXPECT_TRUE(segs->empty());
  EXPECT_TRUE(HasNote(b->report, "batch split: none"));
  EXPECT_FALSE(HasNote(b->report, "batch split: steps"));
  EXPECT_EQ(b->report.fired.count("schedule.batch_split"), 0u);
  for (const EngineStep& st : b->engine.steps) EXPECT_FALSE(st.params.contains("batch_split")) << st.name;
  ExpectMatchesReference(g, b->engine, Inputs(1, 3), 1e-5, "batch 1");
}

// The plan keeps chunks apart: every planned boundary tensor of the segment lies in arena
// bytes that no other tensor produced inside the segment shares (else a later chunk would
// overwrite rows an earlier one wrote), and each internal tensor holds one image. With
// the side output, the Sigmoid's whole-batch tensor is written late in the segment, where
// the early internal tensors are dead; the split engine's outputs equal the unsplit's.
TEST(BatchSplit, BoundaryTensorsShareNoBytesWithTheSegmentsTensors) {
  for (bool side : {false, true}) {
    SCOPED_TRACE(side ? "with the side output" : "plain");
    const Pair& p = Batch4(side);
    const Engine& e = p.split.engine;
    auto segs = ReadBatchSegments(e);
    ASSERT_TRUE(segs.ok() && segs->size() == 1u);
    const BatchSegment& seg = segs->front();
    std::vector<int> boundary, inside;
    int64_t largest_boundary = 0;
    for (size_t t = 0; t < e.tensors.size(); ++t) {
      if (!seg.boundary[t] || e.tensors[t].offset < 0) continue;
      boundary.push_back(static_cast<int>(t));
      largest_boundary = std::max(largest_boundary, e.tensors[t].bytes);
    }
    for (int s = seg.first; s < seg.end; ++s) {
      for (int t : e.steps[static_cast<size_t>(s)].outputs) {
        if (t >= 0) inside.push_back(t);
      }
    }
    ASSERT_FALSE(boundary.empty());
    if (side) EXPECT_GE(largest_boundary, 8 << 20) << "no whole-batch tensor leaves the segment";
    int internal = 0;
    for (int t : inside) {
      const EngineTensor& et = e.tensors[static_cast<size_t>(t)];
      if (seg.boundary[static_cast<size_t>(t)]) continue;
      ++internal;
      auto whole = LayoutBytes(et.layout, et.shape, et.dtype);
      ASSERT_TRUE(whole.ok()) << et.name;
      EXPECT_EQ(et.bytes * 4, *whole) << et.name << ": not one image of 4";
      EXPECT_GE(et.offset, 0) << et.name << " is not in the arena";
    }
    EXPECT_GE(internal, 3);
    for (int b : boundary) {
      const EngineTensor& bt = e.tensors[static_cast<size_t>(b)];
      for (int t : inside) {
        const EngineTensor& it = e.tensors[static_cast<size_t>(t)];
        if (t == b || it.offset < 0) continue;
        const bool disjoint = bt.offset + bt.bytes <= it.offset || it.offset + it.bytes <= bt.offset;
        EXPECT_TRUE(disjoint) << "boundary " << bt.name << " [" << bt.offset << ", " << bt.offset + bt.bytes
                              << ") overlaps " << it.name << " [" << it.offset << ", " << it.offset + it.bytes << ")";
      }
    }
    const TensorMap in = Inputs(4, 21);
    ExpectSameOutputs(RunEngine(e, in), RunEngine(p.off.engine, in), side ? "side: auto vs off" : "auto vs off");
  }
}

// Damaged batch_split params are refused when the engine loads, with the step and the
// param named: not an object, missing or non-integer fields, steps out of range, chunk 0,
// and a second segment starting inside the first.
TEST(BatchSplit, MalformedSegmentsAreRefusedByName) {
  const Engine& good = Batch4().split.engine;
  ASSERT_FALSE(good.steps.empty());
  ASSERT_TRUE(good.steps[0].params.contains("batch_split"));
  const std::string first = good.steps[0].name;
  const nlohmann::json bad[] = {
      {{"steps", 0}, {"chunk", 1}}, {{"steps", 99999}, {"chunk", 1}}, {{"steps", -3}, {"chunk", 1}},
      {{"steps", 2}, {"chunk", 0}}, {{"steps", 2}, {"chunk", -1}},    {{"steps", 2}},
      {{"steps", 1.5}, {"chunk", 1}}, {{"steps", "2"}, {"chunk", 1}}, nlohmann::json("all"),
      nlohmann::json(3),           nlohmann::json::array({2, 1}),     nullptr};
  for (const nlohmann::json& v : bad) {
    Engine e = good;
    e.steps[0].params["batch_split"] = v;
    auto segs = ReadBatchSegments(e);
    EXPECT_FALSE(segs.ok()) << v.dump();
    auto loaded = LoadedEngine::Create(e);
    ASSERT_FALSE(loaded.ok()) << v.dump();
    const std::string msg = loaded.status().ToString();
    EXPECT_NE(msg.find("step '" + first + "'"), std::string::npos) << v.dump() << ": " << msg;
    EXPECT_NE(msg.find("batch_split"), std::string::npos) << v.dump() << ": " << msg;
  }
  // A second segment that starts inside the first one, named by its own step.
  const int steps = good.steps[0].params["batch_split"]["steps"].get<int>();
  ASSERT_GE(steps, 2);
  Engine e = good;
  e.steps[1].params["batch_split"] = {{"steps", 1}, {"chunk", 1}};
  auto loaded = LoadedEngine::Create(e);
  ASSERT_FALSE(loaded.ok());
  const std::string msg = loaded.status().ToString();
  EXPECT_NE(msg.find("step '" + e.steps[1].name + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("batch_split"), std::string::npos) << msg;
}

// A segment grafted onto an engine planned without it (the unsplit engine, whose plan lets
// later tensors reuse the bytes of dead ones) is refused at load, naming the tensors that
// would share bytes across chunks: run, later chunks overwrote earlier chunks' rows (0.25 to
// 0.8 relative error before the check).
TEST(BatchSplit, ASegmentThePlanDoesNotKeepApartIsRefused) {
  const Engine& split = Batch4().split.engine;
  ASSERT_TRUE(split.steps[0].params.contains("batch_split"));
  Engine e = Batch4().off.engine;
  ASSERT_EQ(e.steps.size(), split.steps.size());
  e.steps[0].params["batch_split"] = split.steps[0].params["batch_split"];
  ASSERT_TRUE(ReadBatchSegments(e).ok());
  auto loaded = LoadedEngine::Create(e);
  ASSERT_FALSE(loaded.ok());
  const std::string msg = loaded.status().ToString();
  EXPECT_NE(msg.find("step '" + e.steps[0].name + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("arena bytes"), std::string::npos) << msg;
  // The split engine itself passes the same check.
  EXPECT_TRUE(CheckBatchSegmentsPlan(split, *ReadBatchSegments(split)).ok());
}

// The chunk loop leaves nothing behind: repeated runs of one session and runs of other
// sessions of the same loaded engine give bitwise the same outputs, on two inputs in turn.
TEST(BatchSplit, RepeatedRunsAndSessionsAgree) {
  const Engine& e = Batch4().split.engine;
  auto loaded = LoadedEngine::Create(e);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const TensorMap in[2] = {Inputs(4, 11), Inputs(4, 12)};
  TensorMap first[2];
  Session a(*loaded);
  for (int i = 0; i < 2; ++i) {
    auto out = a.Run(in[i]);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    first[i] = *out;
  }
  // The two inputs give different outputs (else the comparisons below prove nothing).
  EXPECT_FALSE(Compare(first[0].begin()->second, first[1].begin()->second).bitwise);
  Session b(*loaded), c(*loaded);
  for (int round = 0; round < 3; ++round) {
    for (Session* s : {&a, &b, &c}) {
      for (int i = 0; i < 2; ++i) {
        auto out = s->Run(in[(i + round) % 2]);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        for (const auto& [name, t] : first[(i + round) % 2]) {
          ASSERT_TRUE(out->count(name)) << name;
          EXPECT_TRUE(Compare(out->at(name), t).bitwise) << name << " round " << round << " input " << (i + round) % 2;
        }
      }
    }
  }
}

// The runtime takes any chunk the engine declares: 2 images (two chunks), 3 (a last chunk
// of 1) or the whole batch, each larger than the one image the internal tensors were
// planned for (those go to per-run buffers), give the unsplit engine's outputs.
TEST(BatchSplit, OtherChunkSizesKeepTheOutputs) {
  const Pair& p = Batch4();
  const TensorMap in = Inputs(4, 31);
  const TensorMap want = RunEngine(p.off.engine, in);
  for (int chunk : {2, 3, 4}) {
    Engine e = p.split.engine;
    ASSERT_TRUE(e.steps[0].params.contains("batch_split"));
    e.steps[0].params["batch_split"]["chunk"] = chunk;
    ExpectSameOutputs(RunEngine(e, in), want, "chunk " + std::to_string(chunk));
  }
}

// A bf16 engine starts with the Cast of its f32 input to bf16 (precision=bf16): the run
// starts there too, and so covers the bf16 convolutions after it (before, the Cast ended
// it at step 0, and no bf16 engine had a run: ResNet-50 b8 bf16 on 2 Zen 5 cores 86.9-91.9
// ms against 95.1-97.4 without). Outputs are bitwise equal to the unsplit bf16 engine's.
TEST(BatchSplit, ABf16EngineSplitsFromItsInputCast) {
  if (!Target::HostCpu().features.HasBf16()) GTEST_SKIP() << "no AVX512_BF16/AMX: the CPU offers no precision=bf16";
  // Batch 8: the bf16 tensors are half the f32 ones, and r1 must reach 8 MiB.
  const Graph g = ConvNet(8);
  const BuildOptions opt = FixedShapes(Inputs(8, 1));
  auto off = BuildRoute(g, std::string(kOff) + " precision=bf16", opt);
  auto split = BuildRoute(g, std::string(kSplit) + " precision=bf16", opt);
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  const Engine& e = split->engine;
  ASSERT_FALSE(e.steps.empty());
  EXPECT_EQ(e.steps[0].op_type, "Cast");
  auto segs = ReadBatchSegments(e);
  ASSERT_TRUE(segs.ok()) << segs.status().ToString();
  ASSERT_EQ(segs->size(), 1u) << "no run in the bf16 engine";
  EXPECT_EQ(segs->front().first, 0);
  int convs = 0;
  for (int s = segs->front().first; s < segs->front().end; ++s) {
    const std::string& op = e.steps[static_cast<size_t>(s)].op_type;
    convs += op == "Conv" || op == "FusedConv";
  }
  EXPECT_EQ(convs, 3);
  EXPECT_LT(e.arena_bytes, off->engine.arena_bytes);
  const TensorMap in = Inputs(8, 11);
  const TensorMap want = RunEngine(off->engine, in);
  const TensorMap got = RunEngine(e, in);
  ExpectSameOutputs(got, want, "bf16 auto vs off");
  for (const auto& [name, t] : want) {
    EXPECT_TRUE(Compare(got.at(name), t).bitwise) << name;
  }
}

}  // namespace
}  // namespace switchyard
