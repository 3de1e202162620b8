// Regression: engines built for different activation layouts of the same graph, run in
// one process, must each match the reference executor. oneDNN 2.6's primitive cache
// treated a conv on nchw input and one on nhwc input as the same primitive when the
// layouts differ only in the strides of size-1 dims (C == 1 stems, H == W == 1
// squeeze-excite convs), so the nhwc engine ran the nchw route's primitive with weights
// packed for another implementation (text_recognizer_tiny, efficientnet_tiny and
// mobilenetv3_tiny failed FastSpaceMatchesReference on layout.activations=nhwc only).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "build/builder.h"
#include "passes_test_util.h"
#include "runtime/session.h"

namespace switchyard::testing {
namespace {

// Builds `g` for `route`, runs it on `inputs` and returns the worst output rel L2 against
// the reference executor.
double RouteError(const Graph& g, const std::string& route_text, const TensorMap& inputs) {
  const Target target = Target::HostCpu();
  const RouteSpace space = RouteSpace::For(g, target);
  auto route = space.Parse(route_text);
  EXPECT_TRUE(route.ok()) << route.status().ToString();
  if (!route.ok()) return 1e9;
  BuildReport report;
  auto engine = BuildEngine(g, space, *route, target, {}, &report);
  EXPECT_TRUE(engine.ok()) << route_text << ": " << engine.status().ToString();
  if (!engine.ok()) return 1e9;
  auto loaded = LoadedEngine::Create(*engine);
  EXPECT_TRUE(loaded.ok()) << route_text << ": " << loaded.status().ToString();
  if (!loaded.ok()) return 1e9;
  Session session(*loaded);
  auto out = session.Run(inputs);
  EXPECT_TRUE(out.ok()) << route_text << ": " << out.status().ToString();
  auto ref_exec = ReferenceExecutor::Create(g);
  EXPECT_TRUE(ref_exec.ok());
  auto ref = ref_exec->Run(inputs);
  EXPECT_TRUE(ref.ok());
  if (!out.ok() || !ref.ok()) return 1e9;
  double worst = 0;
  for (const auto& [name, want] : *ref) worst = std::max(worst, RelL2(out->at(name), want));
  return worst;
}

ValueId Conv(GraphBuilder& b, ValueId x, int64_t m, int64_t c, int64_t k, uint32_t seed) {
  const ValueId w = b.Const("w" + std::to_string(seed), Filled(DataType::kFloat, {m, c, k, k}, seed));
  const ValueId bias = b.Const("b" + std::to_string(seed), Filled(DataType::kFloat, {m}, seed + 1));
  const int64_t p = k / 2;
  return b.Op("Conv", {x, w, bias}, [&](Node& n) {
    n.attrs["kernel_shape"] = IntsAttr({k, k});
    n.attrs["pads"] = IntsAttr({p, p, p, p});
  });
}

// Builds and runs the blocked (default) and nchw routes first, so their primitives exist
// when the nhwc engine creates its own. (Blocked puts a C == 1 stem conv on plain input
// with nhwc output; nchw puts a squeeze-excite conv on plain [N, C, 1, 1].)
void ExpectAllLayoutsMatch(const Graph& g) {
  TensorMap inputs;
  for (ValueId id : g.inputs) inputs[g.value(id).name] = Filled(DataType::kFloat, g.value(id).type.StaticShape(), 7);
  for (const char* route : {"", "layout.activations=nchw", "layout.activations=nhwc"}) {
    EXPECT_LE(RouteError(g, route, inputs), 1e-5) << "route '" << route << "'";
  }
}

TEST(LayoutRegression, SingleChannelStemConvAfterOtherLayouts) {
  GraphBuilder b;
  const ValueId x = b.Input("image", {1, 1, 16, 32});
  b.Output(b.Op("Relu", {Conv(b, x, 16, 1, 3, 11)}));
  ExpectAllLayoutsMatch(b.Finish());
}

TEST(LayoutRegression, SqueezeExciteConvAfterOtherLayouts) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {1, 16, 6, 6});
  const ValueId pooled = b.Op("GlobalAveragePool", {x});  // [1, 16, 1, 1]
  const ValueId reduce = b.Op("Relu", {Conv(b, pooled, 8, 16, 1, 21)});
  const ValueId scale = b.Op("Sigmoid", {Conv(b, reduce, 16, 8, 1, 31)});
  b.Output(b.Op("Mul", {x, scale}));
  ExpectAllLayoutsMatch(b.Finish());
}

// A 4-D activation combined with a non-constant operand of lower rank (a second graph
// input): the operand is stored plain whatever the route's layout. The nhwc route declared
// a per-channel [C,1,1] operand nhwc (its padded [1,C,1,1] dims match the channel rule) and
// failed to build ("layout 'nhwc' needs rank 4, got rank 3"); the blocked route declared a
// [C,H,W] operand, whose padded dims equal the activation's, in the blocked layout.
TEST(LayoutRegression, LowerRankOperandOfFourDimensionalActivation) {
  const std::vector<std::vector<int64_t>> operands = {{16, 1, 1}, {16, 6, 6}, {6, 6}, {6}, {1, 16, 1, 1}};
  for (const std::vector<int64_t>& shape : operands) {
    for (const char* op : {"Add", "Mul", "Sub"}) {
      for (bool operand_first : {false, true}) {
        GraphBuilder b;
        const ValueId x = b.Input("x", {1, 16, 6, 6});
        const ValueId y = b.Input("y", shape);
        const ValueId act = b.Op("Relu", {Conv(b, x, 16, 16, 3, 41)});
        const ValueId sum = operand_first ? b.Op(op, {y, act}) : b.Op(op, {act, y});
        b.Output(b.Op("Relu", {Conv(b, sum, 8, 16, 1, 51)}));
        SCOPED_TRACE(std::string(op) + " of an operand of rank " + std::to_string(shape.size()) +
                     (operand_first ? ", operand first" : ""));
        ExpectAllLayoutsMatch(b.Finish());
      }
    }
  }
}

// A constant operand of the activation's own shape: constants are stored plain, so a step
// that reads one in nhwc or blocked gets a Reorder of it. Before, the builder handed the
// plain bytes to an Add/Mul/Sub (or a conv's fused residual) declared nhwc or blocked:
// rel L2 0.4-0.6 on the default route (found by tests/route_differential_test.cc).
TEST(LayoutRegression, ConstantOperandOfTheActivationsShape) {
  for (const int64_t n : {1, 4}) {
    for (const char* op : {"Add", "Mul", "Sub"}) {
      for (bool constant_first : {false, true}) {
        GraphBuilder b;
        const ValueId x = b.Input("x", {n, 3, 12, 12});
        const ValueId k = b.Const("k", Filled(DataType::kFloat, {n, 24, 6, 6}, 61));
        const ValueId act = b.Op("Conv", {x, b.Const("w", Filled(DataType::kFloat, {24, 3, 1, 1}, 71))},
                                 [](Node& nd) { nd.attrs["strides"] = IntsAttr({2, 2}); });
        const ValueId out = constant_first ? b.Op(op, {k, act}) : b.Op(op, {act, k});
        b.Output(b.Op("Relu", {Conv(b, out, 8, 24, 3, 81)}));
        SCOPED_TRACE(std::string(op) + " at batch " + std::to_string(n) + (constant_first ? ", constant first" : ""));
        ExpectAllLayoutsMatch(b.Finish());
      }
    }
  }
}

// An elementwise chain between two nhwc convs (fuse.elementwise: a squeeze-excite gate,
// a per-channel constant, a scalar and a residual of the conv's own output) runs on the
// nhwc bytes: no Reorder feeds it, and every layout computes the reference's values.
// Before, such chains ran plain with a Reorder on each side (paddle2onnx's affine blocks:
// 71 Reorders in PP-OCRv4's detector).
TEST(LayoutRegression, ElementwiseChainBetweenConvsStaysNhwc) {
  for (const int64_t n : {1, 2}) {
    GraphBuilder b;
    const ValueId x = b.Input("x", {n, 16, 6, 6});
    const ValueId y = Conv(b, x, 16, 16, 3, 91);
    const ValueId gate = b.Op("Sigmoid", {b.Op("GlobalAveragePool", {y})});
    ValueId z = b.Op("Mul", {y, gate});
    z = b.Op("Mul", {b.Const("k", Filled(DataType::kFloat, {16, 1, 1}, 92)), z});
    z = b.Op("Add", {z, b.Const("s", Tensor::FromFloat({0.25f}, {1}))});
    z = b.Op("Add", {z, y});
    b.Output(b.Op("Relu", {Conv(b, z, 8, 16, 3, 93)}));
    const Graph g = b.Finish();
    SCOPED_TRACE("batch " + std::to_string(n));
    ExpectAllLayoutsMatch(g);
    const Target target = Target::HostCpu();
    const RouteSpace space = RouteSpace::For(g, target);
    auto route = space.Parse("layout.activations=nhwc");
    ASSERT_TRUE(route.ok());
    auto engine = BuildEngine(g, space, *route, target, {}, nullptr);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    std::map<int64_t, std::string> producer;
    for (const EngineStep& st : engine->steps) {
      for (int64_t t : st.outputs) producer[t] = st.op_type;
    }
    int chains = 0;
    for (const EngineStep& st : engine->steps) {
      if (st.op_type != "FusedElementwise") continue;
      ++chains;
      EXPECT_EQ(st.params.value("output_layouts", std::vector<std::string>{}), std::vector<std::string>{"nhwc"});
      for (int64_t t : st.inputs) EXPECT_NE(producer[t], "Reorder") << "an input of " << st.name;
    }
    EXPECT_EQ(chains, 1);
  }
}

}  // namespace
}  // namespace switchyard::testing
