// Channels-last on the cuda target (layout.activations=nhwc, docs/cuda.md): a hand-built
// CNN block that exercises every channels-last kernel (cuDNN NHWC convs with bias, ReLU,
// asymmetric pads and a broadcast residual; NHWC MaxPool/AveragePool with pads and
// count_include_pad; BatchNormalization; global pools; squeeze-excite and bias broadcasts
// through the elementwise kernels) at channel counts that take the 16-byte vector paths
// and ones that do not. Without a GPU the build half runs (layouts, reorder count, KRSC
// weights); with one every route is compared with the reference executor.
#include <gtest/gtest.h>

#include <cstdio>

#include "build/builder.h"
#include "passes_test_util.h"
#include "route/route.h"
#include "runtime/session.h"

namespace switchyard::testing {
namespace {

ValueId ConvOp(GraphBuilder& b, ValueId x, int64_t m, int64_t c, int64_t k, uint32_t seed,
               std::vector<int64_t> pads) {
  const ValueId w = b.Const("w" + std::to_string(seed), Filled(DataType::kFloat, {m, c, k, k}, seed, -0.5, 0.5));
  const ValueId bias = b.Const("b" + std::to_string(seed), Filled(DataType::kFloat, {m}, seed + 1));
  return b.Op("Conv", {x, w, bias}, [&](Node& n) {
    n.attrs["kernel_shape"] = IntsAttr({k, k});
    n.attrs["pads"] = IntsAttr(pads);
  });
}

// x [2, cin, 17, 19] -> (res [2, c + 8, 9, 10], pooled [2, c + 8, 1, 1], fused [2, c + 8, 9, 10]).
Graph Block(int64_t cin, int64_t c) {
  GraphBuilder b;
  b.g.opsets["switchyard"] = 1;
  const ValueId x = b.Input("x", {2, cin, 17, 19});
  const ValueId c1 = b.Op("Relu", {ConvOp(b, x, c, cin, 3, 11, {1, 1, 1, 1})});
  const ValueId mp = b.Op("MaxPool", {c1}, [](Node& n) {
    n.attrs["kernel_shape"] = IntsAttr({3, 3});
    n.attrs["strides"] = IntsAttr({2, 2});
    n.attrs["pads"] = IntsAttr({1, 1, 1, 1});
  });  // [2, c, 9, 10]
  const ValueId ap = b.Op("AveragePool", {mp}, [](Node& n) {
    n.attrs["kernel_shape"] = IntsAttr({3, 2});
    n.attrs["pads"] = IntsAttr({1, 1, 1, 0});
    n.attrs["count_include_pad"] = IntAttr(1);
  });  // [2, c, 9, 10]
  const ValueId bn = b.Op("BatchNormalization",
                          {ap, b.Const("g", Filled(DataType::kFloat, {c}, 21, 0.5, 1.5)),
                           b.Const("be", Filled(DataType::kFloat, {c}, 22)),
                           b.Const("mu", Filled(DataType::kFloat, {c}, 23, -0.2, 0.2)),
                           b.Const("var", Filled(DataType::kFloat, {c}, 24, 0.5, 1.5))});
  const ValueId c2 = ConvOp(b, bn, c, c, 2, 31, {0, 1, 1, 0});  // asymmetric pads: [2, c, 9, 10]
  // Squeeze-excite: x * sigmoid(conv(relu(conv(gap(x))))), then a constant channel bias.
  const ValueId gap = b.Op("GlobalAveragePool", {c2});
  const ValueId se = b.Op("Sigmoid", {ConvOp(b, b.Op("Relu", {ConvOp(b, gap, 4, c, 1, 41, {0, 0, 0, 0})}), c, 4, 1,
                                             51, {0, 0, 0, 0})});
  const ValueId scaled = b.Op("Mul", {c2, se});
  const ValueId biased = b.Op("Add", {scaled, b.Const("cb", Filled(DataType::kFloat, {1, c, 1, 1}, 61))});
  // A 1x1 conv plus a broadcast [2, c2, 1, 1] residual from a global-max branch.
  const int64_t c2out = c + 8;
  const ValueId branch = ConvOp(b, b.Op("GlobalMaxPool", {biased}), c2out, c, 1, 71, {0, 0, 0, 0});
  const ValueId res = b.Op("Relu", {b.Op("Add", {ConvOp(b, biased, c2out, c, 1, 81, {0, 0, 0, 0}), branch})});
  b.Output(res);
  b.Output(b.Op("GlobalMaxPool", {res}));
  // A FusedConv as the fusion passes never make it: a broadcast residual and an activation
  // outside cuDNN's fused call (the epilogue with the channel innermost).
  const ValueId fw = b.Const("fw", Filled(DataType::kFloat, {c2out, c, 3, 3}, 91, -0.5, 0.5));
  const ValueId fb = b.Const("fb", Filled(DataType::kFloat, {c2out}, 92));
  b.Output(b.Op("FusedConv", {biased, fw, fb, branch}, [](Node& n) {
    n.domain = "switchyard";
    n.attrs["kernel_shape"] = IntsAttr({3, 3});
    n.attrs["pads"] = IntsAttr({1, 1, 1, 1});
    Attribute act;
    act.kind = Attribute::Kind::kString;
    act.s = "Sigmoid";
    n.attrs["activation"] = act;
  }));
  return b.Finish();
}

struct Built {
  Engine engine;
  BuildReport report;
};

Result<Built> BuildFor(const Graph& g, const Target& target, const std::string& route_text) {
  const RouteSpace space = RouteSpace::For(g, target);
  SY_ASSIGN_OR_RETURN(Route route, space.Parse(route_text));
  BuildOptions opt;
  for (ValueId id : g.inputs) {
    std::vector<DimRange> dims;
    for (int64_t d : g.value(id).type.StaticShape()) dims.push_back({d, d, d});
    opt.shapes[g.value(id).name] = dims;
  }
  Built b;
  SY_ASSIGN_OR_RETURN(b.engine, BuildEngine(g, space, route, target, opt, &b.report));
  return b;
}

int Reorders(const Engine& e) {
  int n = 0;
  for (const EngineStep& st : e.steps) n += st.op_type == "Reorder";
  return n;
}

TEST(CudaLayout, ChannelsLastBlockBuildsWithFewReordersAndKrscWeights) {
  auto target = Target::ForName("cuda");
  if (!target.ok()) GTEST_SKIP() << "cuda target not built: " << target.status().message();
  for (int64_t c : {16, 12, 6}) {
    const Graph g = Block(3, c);
    for (const char* r : {"layout.activations=nhwc", "layout.activations=nhwc precision=fp16"}) {
      auto b = BuildFor(g, *target, r);
      ASSERT_TRUE(b.ok()) << "c " << c << " [" << r << "]: " << b.status().ToString();
      const Engine& e = b->engine;
      // One reorder at the input, one per 4-D output to hand it back plain; the global
      // pools tag their [N, C, 1, 1] for their readers, so neither the squeeze-excite convs
      // nor the pooled output need one.
      EXPECT_EQ(Reorders(e), 3) << "c " << c << " [" << r << "]";
      for (const EngineStep& st : e.steps) {
        const std::string out_layout =
            st.outputs.empty() || st.outputs[0] < 0 ? "" : e.tensors[static_cast<size_t>(st.outputs[0])].layout;
        std::printf("[nhwc] c %2lld %-40s %-18s %-10s -> %s\n", static_cast<long long>(c), r, st.op_type.c_str(),
                    st.provider.c_str(), out_layout.empty() ? "plain" : out_layout.c_str());
        if (st.op_type == "Reorder") {
          EXPECT_EQ(st.provider, "cuda");
          EXPECT_EQ(st.params["output_bytes"][0].get<int64_t>(), e.tensors[static_cast<size_t>(st.outputs[0])].bytes);
          continue;
        }
        if (st.provider == "cudnn") {
          EXPECT_EQ(out_layout, "nhwc") << st.name;
          ASSERT_FALSE(st.packed.empty());
          const Tensor& w = e.constants[static_cast<size_t>(st.packed[0])];
          ASSERT_EQ(w.shape().size(), 4u);
          // KRSC: the input channels last.
          EXPECT_EQ(w.shape()[0], st.input_shapes[1][0]) << st.name;
          EXPECT_EQ(w.shape()[3], st.input_shapes[1][1]) << st.name;
          EXPECT_EQ(w.shape()[1], st.input_shapes[1][2]) << st.name;
        }
        if (st.op_type == "MaxPool" || st.op_type == "AveragePool" || st.op_type == "BatchNormalization") {
          EXPECT_EQ(out_layout, "nhwc") << st.name;
        }
        if (st.op_type == "GlobalAveragePool" || st.op_type == "GlobalMaxPool") {
          // [N, C, 1, 1]: tagged nhwc for a squeeze-excite conv, plain towards an output.
          bool conv_reader = false;
          for (const EngineStep& r2 : e.steps) {
            conv_reader = conv_reader || (r2.provider == "cudnn" && r2.inputs[0] == st.outputs[0]);
          }
          EXPECT_EQ(out_layout, conv_reader ? "nhwc" : "") << st.name;
          EXPECT_EQ(e.tensors[static_cast<size_t>(st.inputs[0])].layout, "nhwc") << st.name;
        }
      }
      EXPECT_EQ(b->report.fired["layout.reorders"], 3);
    }
    // The default route stays NCHW with no reorders.
    auto plain = BuildFor(g, *target, "");
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();
    EXPECT_EQ(Reorders(plain->engine), 0);
    for (const EngineTensor& t : plain->engine.tensors) EXPECT_EQ(t.layout, "") << t.name;
  }
}

double Tolerance(const std::string& route) {
  if (route.find("bf16") != std::string::npos) return 5e-2;
  if (route.find("fp16") != std::string::npos) return 2e-2;
  return 1e-4;
}

TEST(CudaLayout, ChannelsLastBlockMatchesTheReferenceOnTheGpu) {
  auto target = Target::ForName("cuda");
  if (!target.ok()) GTEST_SKIP() << "cuda target not built: " << target.status().message();
  if (!target->gpu.present) GTEST_SKIP() << "GPU tests not run: no CUDA device (" << target->gpu.error << ")";
  for (int64_t c : {16, 12, 6}) {
    const Graph g = Block(3, c);
    TensorMap inputs;
    for (ValueId id : g.inputs) inputs[g.value(id).name] = Filled(DataType::kFloat, g.value(id).type.StaticShape(), 5);
    auto ref = RunReference(g, inputs);
    ASSERT_TRUE(ref.ok()) << ref.status().ToString();
    for (const char* r : {"", "layout.activations=nhwc", "layout.activations=nhwc cuda.graphs=off",
                          "layout.activations=nhwc precision=tf32", "layout.activations=nhwc precision=fp16",
                          "layout.activations=nhwc precision=bf16", "layout.activations=nhwc kernel.conv=rank1"}) {
      auto b = BuildFor(g, *target, r);
      ASSERT_TRUE(b.ok()) << "c " << c << " [" << r << "]: " << b.status().ToString();
      auto le = LoadedEngine::Create(std::move(b->engine));
      ASSERT_TRUE(le.ok()) << "c " << c << " [" << r << "]: " << le.status().ToString();
      Session session(*le);
      for (int rep = 0; rep < 2; ++rep) {
        auto out = session.Run(inputs);
        ASSERT_TRUE(out.ok()) << "c " << c << " [" << r << "]: " << out.status().ToString();
        for (const auto& [name, want] : *ref) {
          ASSERT_TRUE(out->count(name)) << name;
          const double err = RelL2(out->at(name), want);
          std::printf("[nhwc] c %2lld %-44s %-20s rel L2 %.3g\n", static_cast<long long>(c), r[0] ? r : "(default)",
                      name.c_str(), err);
          const double tol = std::string(r).find("tf32") != std::string::npos ? 1e-2 : Tolerance(r);
          EXPECT_LE(err, tol) << "c " << c << " [" << r << "] output " << name;
        }
      }
    }
  }
}

}  // namespace
}  // namespace switchyard::testing
