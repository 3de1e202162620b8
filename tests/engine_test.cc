// End-to-end engine tests: every route of the fast space (the default plus each single
// knob moved to each other value) of the test models builds, runs, and matches the
// reference executor; rebuilds are byte-identical; damaged engines are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <thread>

#include "build/builder.h"
#include "engine_test_util.h"
#include "engine/engine.h"
#include "io/npy.h"
#include "io/sha256.h"
#include "onnx/importer.h"
#include "passes_test_util.h"
#include "reference/executor.h"
#include "runtime/session.h"
#include "switchyard/version.h"
#include "tune/accuracy.h"

namespace switchyard {
namespace {
using namespace engine_test;  // NOLINT: the engine tests' shared helpers

// A residual convolution writes its output over Z only when Z dies at that step and is not
// also the convolution's input: conv(a)+a keeps its own bytes, conv(d1)+c is written over c,
// conv(e)+d1 with d1 read afterwards keeps its own bytes. Outputs equal the reference's.
TEST(EngineInPlace, ResidualConvWritesOverAZThatDiesThereOnly) {
  using testing::Filled;
  testing::GraphBuilder gb;
  const ValueId x = gb.Input("x", {1, 8, 10, 10});
  auto conv = [&](ValueId in, uint32_t seed) {
    const ValueId w = gb.Const("w" + std::to_string(seed), Filled(DataType::kFloat, {8, 8, 3, 3}, seed, -0.2, 0.2));
    return gb.Op("Conv", {in, w}, [](Node& n) { n.attrs["pads"] = testing::IntsAttr({1, 1, 1, 1}); });
  };
  const ValueId a = gb.Op("Relu", {x});
  const ValueId c = gb.Op("Add", {conv(a, 1), a});        // Z is also X: own bytes
  const ValueId d1 = gb.Op("Relu", {conv(c, 2)});
  const ValueId e = gb.Op("Add", {conv(d1, 3), c});       // c dies here: in place
  const ValueId f = gb.Op("Add", {conv(e, 4), d1});       // d1 read below: own bytes
  gb.Output(gb.Op("Mul", {f, d1}));
  const Graph g = gb.Finish();
  const TensorMap inputs = {{"x", Filled(DataType::kFloat, {1, 8, 10, 10}, 9)}};
  for (const char* layout : {"nhwc", "nchw", "blocked"}) {
    auto b = BuildRoute(g, std::string("layout.activations=") + layout, FixedShapes(inputs));
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    int residual = 0, over_z = 0;
    for (const EngineStep& st : b->engine.steps) {
      if (!st.params.contains("inplace")) continue;
      ++residual;
      const int z = st.inputs[st.params["inplace"].get<size_t>()];
      over_z += b->engine.tensors[static_cast<size_t>(z)].offset == b->engine.tensors[static_cast<size_t>(st.outputs[0])].offset;
    }
    EXPECT_EQ(residual, 3) << layout;
    EXPECT_EQ(over_z, 1) << layout;
    EXPECT_EQ(b->report.inplace, 1) << layout;
    ExpectMatchesReference(g, b->engine, inputs, 1e-5, layout);
  }
}

// Graph outputs are computed straight into the tensors a run returns: an output that later
// steps also read, and outputs of consecutive runs, are each the run's own values.
TEST(EngineOutputs, OutputsAreWrittenInPlaceAndStayTheRunsOwn) {
  using testing::Filled;
  testing::GraphBuilder gb;
  const ValueId x = gb.Input("x", {2, 3, 16});
  const ValueId a = gb.Op("Relu", {x});
  const ValueId b = gb.Op("Mul", {a, a});
  const ValueId c = gb.Op("Add", {b, gb.Op("Sigmoid", {a})});
  gb.Output(a);  // also read by the Mul and the Sigmoid
  gb.Output(c);
  const Graph g = gb.Finish();
  auto built = BuildRoute(g, "", FixedShapes({{"x", Filled(DataType::kFloat, {2, 3, 16}, 1)}}));
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  auto loaded = LoadedEngine::Create(built->engine);
  ASSERT_TRUE(loaded.ok());
  auto ref = ReferenceExecutor::Create(g);
  ASSERT_TRUE(ref.ok());
  Session session(*loaded);
  std::vector<TensorMap> runs;
  for (uint32_t seed : {2u, 3u}) {
    const TensorMap in = {{"x", Filled(DataType::kFloat, {2, 3, 16}, seed)}};
    auto got = session.Run(in);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    auto want = ref->Run(in);
    ASSERT_TRUE(want.ok());
    for (const auto& [name, t] : *want) EXPECT_LE(RelativeL2(got->at(name), t), 1e-6) << name << " seed " << seed;
    runs.push_back(std::move(*got));
  }
  // The first run's tensors were not overwritten by the second.
  const TensorMap first = {{"x", Filled(DataType::kFloat, {2, 3, 16}, 2)}};
  auto again = ref->Run(first);
  ASSERT_TRUE(again.ok());
  for (const auto& [name, t] : *again) EXPECT_LE(RelativeL2(runs[0].at(name), t), 1e-6) << name;
}

// Threads of this process (the entries of /proc/self/task).
int64_t ProcessThreads() {
  return std::distance(fs::directory_iterator("/proc/self/task"), fs::directory_iterator());
}

// The OpenMP threads a run adds to the process when it starts on a thread of its own: a
// team of N makes libgomp start N - 1 workers for that thread (kept while it lives).
int64_t TeamThreadsOfARun(const std::shared_ptr<const LoadedEngine>& engine, const TensorMap& in) {
  int64_t added = -1;
  std::thread runner([&] {
    const int64_t before = ProcessThreads();
    Session session(engine);
    for (int i = 0; i < 2; ++i) {
      auto out = session.Run(in);
      EXPECT_TRUE(out.ok()) << out.status().ToString();
    }
    added = ProcessThreads() - before;
  });
  runner.join();
  return added;
}

// An engine built for threads=1 runs on the calling thread only, its oneDNN convolutions
// included: oneDNN fixes a primitive's thread count when the primitive is created, and
// the kernels create theirs lazily (in OutputShapes too), so the run, not only each
// kernel's Run, holds the engine's count. Before that, the conv stack at threads=1 ran its
// convolutions on two threads on a 2-CPU machine (1.0 or 2.6 ms by thread placement).
TEST(EngineThreads, AThreadsOneEngineAddsNoTeamThreads) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one CPU: every team has one thread anyway";
  auto g = ImportModel(kModels + "conv_stack.onnx");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const TensorMap in = {{"image", testing::Filled(DataType::kFloat, {1, 3, 40, 40}, 5)}};
  for (const std::string threads : {"1", "2"}) {
    auto built = BuildRoute(*g, "threads=" + threads, FixedShapes(in));
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    auto loaded = LoadedEngine::Create(built->engine);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    // threads=2 shows that the count sees a team's workers at all.
    EXPECT_EQ(TeamThreadsOfARun(*loaded, in), std::stoi(threads) - 1) << "threads=" << threads;
  }
}

class ModelEngineTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelEngineTest, FastSpaceMatchesReference) {
  const std::string name = GetParam();
  auto g = ImportModel(kModels + name + ".onnx");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const TensorMap inputs = LoadInputs(kModels + name + ".inputs");
  const RouteSpace space = RouteSpace::For(*g, Target::HostCpu());
  std::vector<std::string> routes = {""};
  for (const Knob& k : space.knobs()) {
    for (const std::string& v : k.allowed_values) {
      if (v != k.default_value) routes.push_back(k.option + "=" + v);
    }
  }
  int built = 0;
  for (const std::string& r : routes) {
    auto b = BuildRoute(*g, r);
    if (!b.ok() && b.status().message().find("impossible route") != std::string::npos) {
      continue;  // a single knob whose value conflicts with a default (reported, not built)
    }
    ASSERT_TRUE(b.ok()) << name << " route '" << r << "': " << b.status().ToString();
    const bool reduced = r.find("bf16") != std::string::npos || r.find("int8") != std::string::npos;
    // Without VNNI/AMX oneDNN 2.6's u8s8 kernels saturate 16-bit pair sums (int8 routes of
    // these models: rel L2 0.06-0.19 on an AVX2 EPYC): still far from garbage, gate-judged.
    const CpuFeatures host = Target::HostCpu().features;
    const bool saturating_int8 = r.find("int8") != std::string::npos && !host.avx512_vnni && !host.amx_int8;
    ExpectMatchesReference(*g, b->engine, inputs, saturating_int8 ? 0.3 : reduced ? 5e-2 : 1e-4,
                           name + " route '" + r + "'");
    ++built;
  }
  EXPECT_GE(built, 2) << name;
}

TEST_P(ModelEngineTest, DynamicShapesWithoutShapesArg) {
  const std::string name = GetParam();
  auto g = ImportModel(kModels + name + ".onnx");
  ASSERT_TRUE(g.ok());
  auto b = BuildRoute(*g, "");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const std::string second = kModels + name + ".inputs2";
  if (!fs::exists(second)) GTEST_SKIP() << "no second input set";
  ExpectMatchesReference(*g, b->engine, LoadInputs(second), 1e-4, name + " (second input set)");
}

TEST_P(ModelEngineTest, RebuildIsByteIdentical) {
  const std::string name = GetParam();
  auto g = ImportModel(kModels + name + ".onnx");
  ASSERT_TRUE(g.ok());
  auto a = BuildRoute(*g, "");
  auto b = BuildRoute(*g, "");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Sha256Hex(SerializeEngine(a->engine)), Sha256Hex(SerializeEngine(b->engine)));
}

INSTANTIATE_TEST_SUITE_P(Models, ModelEngineTest,
                         ::testing::Values("resnet_tiny", "mobilenetv2_tiny", "mobilenetv3_tiny",
                                           "efficientnet_tiny", "bert_tiny_op13", "bert_tiny_op17",
                                           "gpt2_tiny", "vit_tiny", "text_detector_tiny",
                                           "text_recognizer_tiny"));

// Reshape-like steps whose input and output are plain intermediates share the input's
// bytes: same offset, the input's group kept alive until the view's last reader, no two
// live groups overlapping, and the same outputs as an engine where every tensor has its
// own bytes (memory.plan=none, which shares nothing).
TEST(EngineViews, ReshapeOutputsShareTheirInputsBytes) {
  auto g = ImportModel(kModels + "gpt2_tiny.onnx");
  ASSERT_TRUE(g.ok());
  const TensorMap inputs = LoadInputs(kModels + "gpt2_tiny.inputs");
  const BuildOptions opt = FixedShapes(inputs);
  auto b = BuildRoute(*g, "", opt);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const Engine& e = b->engine;
  EXPECT_GT(b->report.views, 0);
  EXPECT_NE(FormatBuildReport(b->report).find("views: " + std::to_string(b->report.views)), std::string::npos);
  // Group every tensor with the tensors that share its bytes through view steps.
  std::vector<int> group(e.tensors.size());
  for (size_t t = 0; t < group.size(); ++t) group[t] = static_cast<int>(t);
  // In-place steps (a residual sum written over its dying Z) join Z's group the same way.
  int shared = 0, inplace = 0;
  for (const EngineStep& st : e.steps) {
    const bool view = st.params.value("view", false);
    const int k = st.params.contains("inplace") ? st.params["inplace"].get<int>() : -1;
    if (!view && k < 0) continue;
    const int src = st.inputs[view ? 0 : static_cast<size_t>(k)];
    if (src < 0) continue;
    const EngineTensor& in = e.tensors[static_cast<size_t>(src)];
    const EngineTensor& out = e.tensors[static_cast<size_t>(st.outputs[0])];
    if (out.offset >= 0 && out.offset == in.offset) {
      group[static_cast<size_t>(st.outputs[0])] = group[static_cast<size_t>(src)];
      ++(view ? shared : inplace);
    }
  }
  EXPECT_EQ(shared, b->report.views);
  EXPECT_EQ(inplace, b->report.inplace);
  EXPECT_GT(b->report.inplace, 0);  // the residual Adds folded into FusedMatMul
  // Lifetimes per group; no two live groups may overlap in the arena.
  std::map<int, std::pair<int, int>> life;
  for (size_t s = 0; s < e.steps.size(); ++s) {
    for (const auto* list : {&e.steps[s].inputs, &e.steps[s].outputs}) {
      for (int t : *list) {
        if (t < 0 || e.tensors[static_cast<size_t>(t)].offset < 0) continue;
        auto [it, fresh] = life.try_emplace(group[static_cast<size_t>(t)], int(s), int(s));
        it->second.second = static_cast<int>(s);
        if (!fresh) it->second.first = std::min(it->second.first, static_cast<int>(s));
      }
    }
  }
  for (const auto& [ga, la] : life) {
    for (const auto& [gb, lb] : life) {
      if (ga >= gb || la.second < lb.first || lb.second < la.first) continue;
      const EngineTensor& x = e.tensors[static_cast<size_t>(ga)];
      const EngineTensor& y = e.tensors[static_cast<size_t>(gb)];
      const bool overlap = x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
      EXPECT_FALSE(overlap && x.bytes > 0 && y.bytes > 0) << x.name << " and " << y.name << " share live bytes";
    }
  }
  auto none = BuildRoute(*g, "memory.plan=none", opt);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->report.views, 0);
  EXPECT_EQ(none->report.inplace, 0);
  const TensorMap with_views = RunEngine(e, inputs), without = RunEngine(none->engine, inputs);
  ASSERT_FALSE(with_views.empty());
  for (const auto& [name, t] : without) {
    ASSERT_TRUE(with_views.count(name));
    EXPECT_EQ(RelativeL2(with_views.at(name), t), 0.0) << name;
  }
}

// A reorder between layouts that place every byte alike (nhwc and plain of the pooled
// [1,C,1,1] tensor before MobileNetV2's classifier, or of squeeze-excite tensors) is a
// view: its output has its input's offset, and the engine computes what an engine with
// every tensor in its own bytes computes.
TEST(EngineViews, ByteIdenticalReordersShareTheirInputsBytes) {
  auto g = ImportModel(kModels + "mobilenetv2_tiny.onnx");
  ASSERT_TRUE(g.ok());
  const TensorMap inputs = LoadInputs(kModels + "mobilenetv2_tiny.inputs");
  const BuildOptions opt = FixedShapes(inputs);
  auto b = BuildRoute(*g, "layout.activations=nhwc", opt);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const Engine& e = b->engine;
  int identical = 0, shared = 0;
  for (const EngineStep& st : e.steps) {
    if (st.op_type != "Reorder") continue;
    const EngineTensor& in = e.tensors[static_cast<size_t>(st.inputs[0])];
    const EngineTensor& out = e.tensors[static_cast<size_t>(st.outputs[0])];
    const auto& shape = st.input_shapes[0];
    const bool one_pixel = shape.size() == 4 && shape[2] * shape[3] == 1;
    EXPECT_EQ(st.params.value("view", false), one_pixel) << st.name;
    if (one_pixel) ++identical;
    if (one_pixel && out.offset == in.offset) ++shared;
  }
  EXPECT_GT(identical, 0) << "the pooled features should be reordered as [1,C,1,1]";
  EXPECT_EQ(shared, identical);
  ExpectMatchesReference(*g, e, inputs, 1e-4, "nhwc with reorder views");
  auto none = BuildRoute(*g, "layout.activations=nhwc memory.plan=none", opt);
  ASSERT_TRUE(none.ok());
  const TensorMap viewed = RunEngine(e, inputs), separate = RunEngine(none->engine, inputs);
  ASSERT_FALSE(viewed.empty());
  for (const auto& [name, t] : separate) EXPECT_EQ(RelativeL2(viewed.at(name), t), 0.0) << name;
}

// An engine step keeps its omitted optional inputs omitted when loaded. A bias-less 2-D
// Gemm whose Reshape feeds a residual Add becomes FusedMatMul(A, B, <no bias>, residual)
// (GPT-2 as PyTorch's dynamo exporter writes it); loading used to mark every input present,
// so the kernels read a bias that was not there (on cuda: "all inputs must share one
// dtype" at load; found on the H200).
TEST(EngineLoad, OmittedOptionalInputsStayOmitted) {
  testing::GraphBuilder b;
  const ValueId x = b.Input("x", {6, 8});
  const ValueId res = b.Input("res", {2, 3, 5});
  const ValueId mm = b.Op("Gemm", {x, b.Const("w", testing::Filled(DataType::kFloat, {8, 5}, 2))});
  const ValueId r = b.Op("Reshape", {mm, b.Const("shape", Tensor::FromInt64({2, 3, 5}, {3}))});
  b.Output(b.Op("Add", {r, res}));
  const Graph g = b.Finish();
  const TensorMap inputs = {{"x", testing::Filled(DataType::kFloat, {6, 8}, 3)},
                            {"res", testing::Filled(DataType::kFloat, {2, 3, 5}, 4)}};
  for (const std::string route : {"", "kernel.gemm=native", "kernel.gemm=openblas"}) {
    auto built = BuildRoute(g, route);
    ASSERT_TRUE(built.ok()) << route << ": " << built.status().ToString();
    int fused = 0;
    for (const EngineStep& st : built->engine.steps) {
      if (st.op_type != "FusedMatMul") continue;
      ++fused;
      ASSERT_EQ(st.inputs.size(), 4u) << route;
      EXPECT_EQ(st.input_dtypes[2], 0) << route << ": the bias is omitted";
      EXPECT_GE(st.inputs[3], 0) << route << ": the residual is a run-time input";
    }
    EXPECT_EQ(fused, 1) << route << [&] { std::string s; for (const EngineStep& st : built->engine.steps) s += " " + st.op_type; return s; }();
    auto again = DeserializeEngine(SerializeEngine(built->engine), "test");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    ExpectMatchesReference(g, *again, inputs, 1e-5, "route '" + route + "'");
  }
}

class EngineFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto g = ImportModel(std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/model.onnx");
    ASSERT_TRUE(g.ok());
    BuildOptions opt;
    ASSERT_TRUE(ParseShapeArg("input=1x3x32x32", &opt.shapes).ok());
    auto b = BuildRoute(*g, "", opt);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    bytes_ = SerializeEngine(b->engine);
  }
  // Replaces the trailing checksum so a deliberate edit passes the integrity check.
  static std::string Reseal(std::string b) {
    b.resize(b.size() - 32);
    return b + Sha256Raw(b.data(), b.size());
  }
  std::string bytes_;
};

TEST_F(EngineFileTest, RoundTripsAndRuns) {
  auto e = DeserializeEngine(bytes_, "mem");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(SerializeEngine(*e), bytes_);
  EXPECT_EQ(e->input_ranges[0][2], (DimRange{32, 32, 32}));
}

TEST_F(EngineFileTest, CorruptTruncatedAndForeignAreRefused) {
  std::string flipped = bytes_;
  flipped[bytes_.size() / 2] ^= 0x5a;
  auto a = DeserializeEngine(flipped, "flipped.engine");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("checksum"), std::string::npos) << a.status().ToString();
  EXPECT_NE(a.status().message().find("flipped.engine"), std::string::npos);

  auto b = DeserializeEngine(bytes_.substr(0, bytes_.size() - 100), "cut.engine");
  ASSERT_FALSE(b.ok());
  EXPECT_FALSE(DeserializeEngine(bytes_.substr(0, 10), "tiny").ok());
  EXPECT_FALSE(DeserializeEngine("", "empty").ok());
  EXPECT_FALSE(DeserializeEngine(std::string(200, 'x'), "garbage").ok());

  std::string version = bytes_;
  version[8] = 9;  // format version 9
  auto c = DeserializeEngine(Reseal(version), "v9.engine");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("format version 9"), std::string::npos) << c.status().ToString();

  std::string tool = bytes_;
  const std::string from = "\"tool_version\":\"" + std::string(SWITCHYARD_VERSION) + "\"";
  const size_t at = tool.find(from);
  ASSERT_NE(at, std::string::npos);
  std::string to = from;
  to[to.size() - 2] = to[to.size() - 2] == '9' ? '8' : '9';  // same length, other version
  tool.replace(at, from.size(), to);
  auto d = DeserializeEngine(Reseal(tool), "old.engine");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("rebuild"), std::string::npos) << d.status().ToString();

  std::string feat = bytes_;
  const size_t f = feat.find("\"required_features\":[");
  ASSERT_NE(f, std::string::npos);
  feat.replace(f, 21, "\"required_features\":[\"amx_fp99\",");
  // The JSON length field must follow the edit.
  const uint64_t len = [&] {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[12 + i])) << (8 * i);
    return v + 11;
  }();
  for (int i = 0; i < 8; ++i) feat[12 + i] = static_cast<char>((len >> (8 * i)) & 0xff);
  auto fe = DeserializeEngine(Reseal(feat), "foreign.engine");
  ASSERT_FALSE(fe.ok());
}

TEST_F(EngineFileTest, WrongInputsAreRefused) {
  auto e = DeserializeEngine(bytes_, "mem");
  ASSERT_TRUE(e.ok());
  auto loaded = LoadedEngine::Create(*e);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  Session s(*loaded);
  TensorMap wrong_dtype = {{"input", Tensor(DataType::kDouble, {1, 3, 32, 32})}};
  auto r1 = s.Run(wrong_dtype);
  ASSERT_FALSE(r1.ok());
  EXPECT_NE(r1.status().message().find("float32"), std::string::npos);
  TensorMap wrong_shape = {{"input", Tensor(DataType::kFloat, {1, 3, 64, 32})}};
  auto r2 = s.Run(wrong_shape);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("built for 32..32"), std::string::npos) << r2.status().ToString();
  TensorMap wrong_name = {{"image", Tensor(DataType::kFloat, {1, 3, 32, 32})}};
  EXPECT_FALSE(s.Run(wrong_name).ok());
}

// Staged I/O on a cpu engine: RunStaged(kHost) gives Run()'s outputs; the device
// placements are refused with a message naming the placement; staging checks the inputs.
TEST_F(EngineFileTest, StagedRunsOnCpuMatchRunAndDevicePlacementsAreRefused) {
  auto e = DeserializeEngine(bytes_, "mem");
  ASSERT_TRUE(e.ok());
  auto loaded = LoadedEngine::Create(*e);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  Session s(*loaded);
  EXPECT_FALSE(s.RunStaged(IoPlacement::kHost).ok());  // before Stage
  Tensor x(DataType::kFloat, {1, 3, 32, 32});
  for (int64_t i = 0; i < x.numel(); ++i) x.SetDouble(i, std::sin(0.37 * static_cast<double>(i)));
  const TensorMap inputs = {{"input", x}};
  auto want = s.Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_TRUE(s.Stage(inputs).ok());
  ASSERT_TRUE(s.RunStaged(IoPlacement::kHost).ok());
  auto got = s.StagedOutputs(IoPlacement::kHost);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, *want);
  for (IoPlacement p : {IoPlacement::kPinned, IoPlacement::kDevice}) {
    Status st = s.RunStaged(p);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(std::string("'") + IoPlacementName(p) + "' needs a device target"), std::string::npos)
        << st.ToString();
  }
  EXPECT_FALSE(s.Stage({{"input", Tensor(DataType::kFloat, {1, 3, 64, 32})}}).ok());
  auto bad = ParseIoPlacement("gpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'gpu'"), std::string::npos);
  EXPECT_EQ(*ParseIoPlacement("pinned"), IoPlacement::kPinned);
}

}  // namespace
}  // namespace switchyard
