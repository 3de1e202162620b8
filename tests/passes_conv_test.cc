// Pass tests of the convolution fusions: fuse_conv_bn, fuse_conv_act (with the two-node
// and Keras forms of the activations), fold_pad, fuse_conv_scale and fuse_conv_pool on hand-built graphs,
// each proved exact against the reference executor, and the cases that must not fire.
#include <cmath>
#include <limits>

#include "engine_test_util.h"
#include "passes_test_util.h"
#include "route/route.h"

namespace switchyard::testing {
namespace {
// Conv(x, W, B) -> BatchNormalization, with the conv output optionally read elsewhere.
Graph ConvBn(bool extra_consumer, bool transposed = false) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {1, 4, 6, 6});
  const ValueId w = transposed ? b.Const("w", Filled(DataType::kFloat, {4, 3, 3, 3}, 5))
                               : b.Const("w", Filled(DataType::kFloat, {6, 2, 3, 3}, 5));
  const int64_t m = transposed ? 6 : 6;
  const ValueId bias = b.Const("b", Filled(DataType::kFloat, {m}, 6));
  const ValueId y = b.Op(transposed ? "ConvTranspose" : "Conv", {x, w, bias}, [](Node& n) {
    n.attrs["group"] = IntAttr(2);
    n.attrs["pads"] = IntsAttr({1, 1, 1, 1});
  });
  const ValueId bn = b.Op("BatchNormalization",
                          {y, b.Const("s", Filled(DataType::kFloat, {m}, 7, 0.5, 2)),
                           b.Const("bb", Filled(DataType::kFloat, {m}, 8)),
                           b.Const("mu", Filled(DataType::kFloat, {m}, 9)),
                           b.Const("var", Filled(DataType::kFloat, {m}, 10, 0.2, 2))},
                          [](Node& n) { n.attrs["epsilon"] = FloatAttr(1e-3f); });
  b.Output(bn);
  if (extra_consumer) b.Output(b.Op("Relu", {y}));
  return b.Finish();
}

TEST(FuseConvBn, FoldsIntoConvAndConvTranspose) {
  for (bool transposed : {false, true}) {
    Graph g = ConvBn(false, transposed);
    Graph opt;
    const BuildReport rep = ExpectExact(g, In(g), {"fuse.conv_bn"}, &opt);
    EXPECT_EQ(Fired(rep, "fuse.conv_bn"), 1) << transposed;
    EXPECT_EQ(CountOps(opt, "BatchNormalization"), 0);
  }
}

TEST(FuseConvBn, NotWhenConvOutputHasAnotherReader) {
  Graph g = ConvBn(true);
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), AllFuseKnobs(), &opt);
  EXPECT_EQ(Fired(rep, "fuse.conv_bn"), 0);
  EXPECT_EQ(CountOps(opt, "BatchNormalization"), 1);
}

// relu(conv(x) + y), or with `extra` the sum is also a graph output.
Graph ConvAddRelu(bool extra) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {1, 3, 5, 5});
  const ValueId r = b.Input("r", {1, 4, 5, 5});
  const ValueId y = b.Op("Conv", {x, b.Const("w", Filled(DataType::kFloat, {4, 3, 3, 3}, 3))},
                         [](Node& n) { n.attrs["pads"] = IntsAttr({1, 1, 1, 1}); });
  const ValueId s = b.Op("Add", {y, r});
  b.Output(b.Op("Relu", {s}));
  if (extra) b.Output(s);
  return b.Finish();
}

TEST(FuseConvAct, ResidualThenActivation) {
  Graph g = ConvAddRelu(false);
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {"fuse.conv_act"}, &opt);
  EXPECT_EQ(Fired(rep, "fuse.conv_act"), 1);
  ASSERT_EQ(opt.nodes.size(), 1u);
  EXPECT_EQ(opt.nodes[0].op_type, "FusedConv");
  EXPECT_EQ(opt.nodes[0].GetString("activation", ""), "Relu");
  EXPECT_EQ(opt.nodes[0].NumInputs(), 4u);
  EXPECT_EQ(opt.opsets.at(kSwitchyardDomain), 1);
}

TEST(FuseConvAct, SumReadElsewhereKeepsActivationSeparate) {
  Graph g = ConvAddRelu(true);
  Graph opt;
  ExpectExact(g, In(g), {"fuse.conv_act"}, &opt);
  // The residual still fuses (the conv output has one reader) but the Relu cannot.
  EXPECT_EQ(CountOps(opt, "Relu"), 1);
  ASSERT_EQ(CountOps(opt, "FusedConv"), 1);
}

TEST(FuseConvAct, SiLUAndHardSwishPatterns) {
  for (const char* gate : {"Sigmoid", "HardSigmoid"}) {
    GraphBuilder b;
    const ValueId x = b.Input("x", {1, 2, 4, 4});
    const ValueId y = b.Op("Conv", {x, b.Const("w", Filled(DataType::kFloat, {3, 2, 1, 1}, 3, -3, 3))});
    const ValueId s = b.Op(gate, {y}, [gate](Node& n) {
      if (std::string(gate) == "HardSigmoid") n.attrs["alpha"] = FloatAttr(1.0f / 6);
    });
    b.Output(b.Op("Mul", {y, s}));
    Graph g = b.Finish();
    Graph opt;
    ExpectExact(g, In(g), {"fuse.conv_act"}, &opt);
    ASSERT_EQ(opt.nodes.size(), 1u) << gate;
    EXPECT_EQ(opt.nodes[0].GetString("activation", ""), std::string(gate) == "Sigmoid" ? "SiLU" : "HardSwish");
  }
}

// Keras' hard activations as tf2onnx writes them: relu6(x + 3) / 6 (HardSigmoid) and
// x * relu6(x + 3) / 6 with the division after or before the Mul (HardSwish), relu6 a Clip.
TEST(FuseConvAct, KerasHardSigmoidAndHardSwishForms) {
  enum Form { kSigmoid, kSwishDivideLast, kSwishDivideGate };
  auto graph = [](Form form, bool div, float add) {
    GraphBuilder b;
    const ValueId x = b.Input("x", {1, 2, 4, 4});
    const ValueId y = b.Op("Conv", {x, b.Const("w", Filled(DataType::kFloat, {3, 2, 1, 1}, 3, -3, 3))});
    auto scalar = [&](const char* name, float v) { return b.Const(name, Tensor::FromFloat({v}, {1})); };
    const ValueId relu6 = b.Op("Clip", {b.Op("Add", {scalar("three", add), y}), scalar("lo", 0), scalar("hi", 6)});
    auto sixth = [&](ValueId v) {
      return div ? b.Op("Div", {v, scalar("six", 6)}) : b.Op("Mul", {v, scalar("sixth", 1.0f / 6)});
    };
    if (form == kSigmoid) b.Output(sixth(relu6));
    if (form == kSwishDivideLast) b.Output(sixth(b.Op("Mul", {y, relu6})));
    if (form == kSwishDivideGate) b.Output(b.Op("Mul", {sixth(relu6), y}));
    return b.Finish();
  };
  for (Form form : {kSigmoid, kSwishDivideLast, kSwishDivideGate}) {
    for (bool div : {false, true}) {
      Graph g = graph(form, div, 3);
      Graph opt;
      const BuildReport rep = ExpectExact(g, In(g), {"fuse.conv_act"}, &opt);
      EXPECT_EQ(Fired(rep, "fuse.conv_act"), 1) << form << div;
      ASSERT_EQ(opt.nodes.size(), 1u) << form << div;
      EXPECT_EQ(opt.nodes[0].GetString("activation", ""), form == kSigmoid ? "HardSigmoid" : "HardSwish");
      // The route space says fuse.conv_act applies to these nodes (route/patterns.cc).
      const RouteSpace space = RouteSpace::For(g, Target::HostCpu());
      ASSERT_NE(space.Find("fuse.conv_act"), nullptr) << form << div;
      EXPECT_EQ(space.Find("fuse.conv_act")->nodes.size(), form == kSigmoid ? 4u : 5u) << form << div;
    }
  }
  // Not Keras' form: relu6(x + 2) / 6 stays an elementwise chain.
  Graph g = graph(kSigmoid, false, 2);
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {"fuse.conv_act"}, &opt);
  EXPECT_EQ(Fired(rep, "fuse.conv_act"), 0);
  EXPECT_EQ(CountOps(opt, "Clip"), 1);
}

// tf2onnx's explicit padding: a zero Pad in front of Convs becomes their pads.
TEST(FoldPad, ZeroPadBecomesTheConvsPadding) {
  auto graph = [](const std::vector<int64_t>& pads, float value, const char* mode, bool other_reader) {
    GraphBuilder b;
    const ValueId x = b.Input("x", {1, 3, 8, 7});
    const ValueId p = b.Op("Pad", {x, b.Const("pads", Tensor::FromInt64(pads, {8})),
                                   b.Const("value", Tensor::FromFloat({value}, {}))},
                           [mode](Node& n) { n.attrs["mode"] = StringAttr(mode); });
    const ValueId w = b.Const("w", Filled(DataType::kFloat, {4, 3, 3, 3}, 3));
    b.Output(b.Op("Conv", {p, w}, [](Node& n) {
      n.attrs["strides"] = IntsAttr({2, 2});
      n.attrs["pads"] = IntsAttr({1, 0, 0, 1});
    }));
    b.Output(b.Op("Conv", {p, w}));
    if (other_reader) b.Output(b.Op("Relu", {p}));
    return b.Finish();
  };
  {
    Graph g = graph({0, 0, 0, 1, 0, 0, 1, 0}, 0.f, "constant", false);
    Graph opt;
    const BuildReport rep = ExpectExact(g, In(g), {}, &opt, 0);
    EXPECT_EQ(Fired(rep, "fold_pad"), 1);
    EXPECT_EQ(CountOps(opt, "Pad"), 0);
    ASSERT_EQ(CountOps(opt, "Conv"), 2);
    EXPECT_EQ(opt.nodes[0].GetInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
    EXPECT_EQ(opt.nodes[1].GetInts("pads"), (std::vector<int64_t>{0, 1, 1, 0}));
  }
  // A non-zero value, another mode, batch padding or another reader keep the Pad.
  for (int variant = 0; variant < 4; ++variant) {
    Graph g = graph(variant == 2 ? std::vector<int64_t>{1, 0, 0, 1, 0, 0, 1, 0} : std::vector<int64_t>{0, 0, 0, 1, 0, 0, 1, 0},
                    variant == 0 ? 1.f : 0.f, variant == 1 ? "reflect" : "constant", variant == 3);
    Graph opt;
    const BuildReport rep = ExpectExact(g, In(g), {}, &opt, 0);
    EXPECT_EQ(Fired(rep, "fold_pad"), 0) << variant;
    EXPECT_EQ(CountOps(opt, "Pad"), 1) << variant;
  }
}

TEST(FuseConvAct, NotWhenConvOutputHasAnotherReader) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {1, 3, 5, 5});
  const ValueId y = b.Op("Conv", {x, b.Const("w", Filled(DataType::kFloat, {4, 3, 3, 3}, 3))});
  b.Output(b.Op("Relu", {y}));
  b.Output(b.Op("Sigmoid", {y}));
  Graph g = b.Finish();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), AllFuseKnobs(), &opt);
  EXPECT_EQ(Fired(rep, "fuse.conv_act"), 0);
  EXPECT_EQ(CountOps(opt, "Conv"), 1);
}

// A 1x1 stride-2 conv with pads [1,0,0,1] has output rows and columns that read only
// padding; oneDNN 2.6's brgconv adds a fused residual wrongly there (and crashes with an
// activation after it), so its Add stays a step of its own; the 3x3 pad-1 conv next to it
// still takes its residual. Both match the reference.
TEST(FuseConvAct, NotTheResidualOfAConvWithPaddingOnlyOutputs) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {4, 3, 19, 13});
  const ValueId y = b.Input("y", {4, 24, 10, 7});
  const ValueId c1 = b.Op("Conv", {x, b.Const("w1", Filled(DataType::kFloat, {24, 3, 1, 1}, 5)),
                                   b.Const("b1", Filled(DataType::kFloat, {24}, 6))},
                          [](Node& n) {
                            n.attrs["strides"] = IntsAttr({2, 2});
                            n.attrs["pads"] = IntsAttr({1, 0, 0, 1});
                          });
  const ValueId a1 = b.Op("HardSwish", {b.Op("Add", {y, c1})});
  const ValueId c2 = b.Op("Conv", {a1, b.Const("w2", Filled(DataType::kFloat, {24, 24, 3, 3}, 7))},
                          [](Node& n) { n.attrs["pads"] = IntsAttr({1, 1, 1, 1}); });
  b.Output(b.Op("Relu", {b.Op("Add", {c2, a1})}));
  Graph g = b.Finish();
  Graph opt;
  ExpectExact(g, In(g), AllFuseKnobs(), &opt);
  int with_residual = 0;
  for (const Node& n : opt.nodes) with_residual += n.op_type == "FusedConv" && n.HasInput(3);
  EXPECT_EQ(with_residual, 1) << "only the 3x3 conv takes its residual";
  EXPECT_EQ(CountOps(opt, "Add") + CountOps(opt, "FusedElementwise"), 1) << "the first Add stays a step";
  const TensorMap in = In(g);
  for (const char* route : {"", "layout.activations=nhwc", "layout.activations=nchw"}) {
    auto built = engine_test::BuildRoute(g, route, engine_test::FixedShapes(in));
    ASSERT_TRUE(built.ok()) << route << ": " << built.status().ToString();
    engine_test::ExpectMatchesReference(g, built->engine, in, 1e-5, std::string("route '") + route + "'");
  }
}

// A squeeze-excite block: x -> GlobalAveragePool -> 1x1 conv -> Relu -> 1x1 conv ->
// Sigmoid = s; then Mul(x, s) (or Mul(s, x)) read by a 1x1 projection conv of `m` outputs.
// `scale_batch`: the scale's batch is x's (per image) or 1 (an Expand-free shared scale).
struct SeOptions {
  int64_t n = 1, c = 8, hw = 8, m = 4, group = 1;
  bool swapped = false, mul_read_twice = false, const_scale = false;
};
Graph SqueezeExcite(const SeOptions& o) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {o.n, o.c, o.hw, o.hw});
  ValueId s;
  if (o.const_scale) {
    s = b.Const("s", Filled(DataType::kFloat, {1, o.c, 1, 1}, 9, 0, 1));
  } else {
    const ValueId p = b.Op("GlobalAveragePool", {x});
    const ValueId f1 = b.Op("Relu", {b.Op("Conv", {p, b.Const("w1", Filled(DataType::kFloat, {4, o.c, 1, 1}, 5))})});
    s = b.Op("Sigmoid", {b.Op("Conv", {f1, b.Const("w2", Filled(DataType::kFloat, {o.c, 4, 1, 1}, 6))})});
  }
  const ValueId scaled = o.swapped ? b.Op("Mul", {s, x}) : b.Op("Mul", {x, s});
  const ValueId w = b.Const("w3", Filled(DataType::kFloat, {o.m, o.c / o.group, 1, 1}, 7));
  b.Output(b.Op("Conv", {scaled, w, b.Const("b3", Filled(DataType::kFloat, {o.m}, 8))},
                [&](Node& n) { n.attrs["group"] = IntAttr(o.group); }));
  if (o.mul_read_twice) b.Output(scaled);
  return b.Finish();
}

const Node* FindOp(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes) {
    if (n.op_type == op) return &n;
  }
  return nullptr;
}

TEST(FuseConvScale, SqueezeExciteScaleBecomesTheProjectionsInputScale) {
  // Batch 2 with a scale per image: fused where an image holds kMinScaledImage values (the
  // kernel then calls the convolution image by image).
  for (const SeOptions& o : {SeOptions{}, SeOptions{.n = 2, .c = 64, .hw = 64, .swapped = true}}) {
    Graph g = SqueezeExcite(o);
    Graph opt;
    const BuildReport rep = ExpectExact(g, In(g), AllFuseKnobs(), &opt);
    EXPECT_EQ(Fired(rep, "fuse.conv_scale"), 1) << o.n;
    EXPECT_EQ(CountOps(opt, "Mul"), 0);
    int scaled = 0;
    for (const Node& n : opt.nodes) {
      if (n.op_type != "FusedConv" || !n.HasInput(4)) continue;
      ++scaled;
      EXPECT_EQ(opt.value(n.inputs[0]).name, "x");
      EXPECT_EQ(opt.value(n.inputs[4]).type.StaticShape(), (std::vector<int64_t>{o.n, o.c, 1, 1}));
    }
    EXPECT_EQ(scaled, 1);
  }
}

TEST(FuseConvScale, NotWhereTheWeightsOutweighTheImageOrTheShapeDoesNotFit) {
  // 2 * M * KH * KW > H * W: scaling the weights would cost more than the Mul.
  // A Mul also read elsewhere, a constant scale (folded into the weights at build time by
  // fuse.conv_bn instead), a grouped conv.
  // A batch of 2 whose images hold fewer than kMinScaledImage values (64 x 63 x 63): image by
  // image calls would cost more than the Mul saves.
  for (const SeOptions& o : {SeOptions{.m = 40}, SeOptions{.mul_read_twice = true}, SeOptions{.const_scale = true},
                             SeOptions{.group = 2}, SeOptions{.n = 2, .c = 64, .hw = 63}}) {
    Graph g = SqueezeExcite(o);
    Graph opt;
    const BuildReport rep = ExpectExact(g, In(g), AllFuseKnobs(), &opt);
    EXPECT_EQ(Fired(rep, "fuse.conv_scale"), 0) << o.m << o.mul_read_twice << o.const_scale << o.group;
    EXPECT_EQ(CountOps(opt, "Mul") + CountOps(opt, "FusedElementwise"), o.const_scale ? 0 : 1);
    EXPECT_EQ(Fired(rep, "fuse.conv_bn"), o.const_scale ? 1 : 0);
  }
}

TEST(FuseConvScale, NothingWithInt8Weights) {
  Graph g = SqueezeExcite({});
  const Target host = Target::HostCpu();
  BuildReport report;
  PassContext ctx{[](const std::string&) { return true; }, host, report,
                  [](const std::string& k) { return std::string(k == "quant.weights" ? "int8" : "on"); }};
  ASSERT_TRUE(RunPasses(g, ctx).ok());
  EXPECT_EQ(Fired(report, "fuse.conv_scale"), 0);
  ASSERT_NE(FindOp(g, "Mul"), nullptr);
}

// A depthwise conv with SiLU (or `act`) whose output a squeeze-excite block pools and
// scales (x -> dw conv -> act = a; GlobalAveragePool(a) -> 1x1 conv -> Sigmoid = s; a * s
// -> 1x1 projection), then a head: 1x1 conv -> act -> GlobalAveragePool -> Flatten.
Graph SiluSqueezeExcite(const std::string& act) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {2, 8, 9, 9});
  auto activate = [&](ValueId y) {
    return act == "SiLU" ? b.Op("Mul", {y, b.Op("Sigmoid", {y})}) : b.Op(act, {y});
  };
  const ValueId a = activate(b.Op("Conv", {x, b.Const("wd", Filled(DataType::kFloat, {8, 1, 3, 3}, 5)),
                                           b.Const("bd", Filled(DataType::kFloat, {8}, 6))},
                                  [](Node& n) {
                                    n.attrs["group"] = IntAttr(8);
                                    n.attrs["pads"] = IntsAttr({1, 1, 1, 1});
                                  }));
  const ValueId p = b.Op("GlobalAveragePool", {a});
  const ValueId s = b.Op("Sigmoid", {b.Op("Conv", {p, b.Const("w1", Filled(DataType::kFloat, {8, 8, 1, 1}, 7))})});
  const ValueId proj = b.Op("Conv", {b.Op("Mul", {a, s}), b.Const("w2", Filled(DataType::kFloat, {16, 8, 1, 1}, 8))});
  const ValueId head = activate(b.Op("Conv", {proj, b.Const("w3", Filled(DataType::kFloat, {12, 16, 1, 1}, 9))}));
  b.Output(b.Op("Flatten", {b.Op("GlobalAveragePool", {head})}));
  return b.Finish();
}

std::set<std::string> WithConvPool() {
  std::set<std::string> k = AllFuseKnobs();
  k.insert("fuse.conv_pool");
  return k;
}

TEST(FuseConvPool, PoolingOfASiluConvBecomesItsSecondOutput) {
  Graph g = SiluSqueezeExcite("SiLU");
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), WithConvPool(), &opt);
  EXPECT_EQ(Fired(rep, "fuse.conv_pool"), 2);
  EXPECT_EQ(CountOps(opt, "GlobalAveragePool"), 0);
  int pooled = 0;
  for (const Node& n : opt.nodes) {
    if (n.op_type != "FusedConv" || n.outputs.size() != 2) continue;
    ++pooled;
    EXPECT_EQ(n.GetString("activation", ""), "SiLU");
    const TensorType& y = opt.value(n.outputs[0]).type;
    EXPECT_EQ(opt.value(n.outputs[1]).type.StaticShape(), (std::vector<int64_t>{2, y.dims[1].value, 1, 1}));
  }
  EXPECT_EQ(pooled, 2);
  // The route space offers the knob for both convs and pools.
  const RouteSpace space = RouteSpace::For(g, Target::HostCpu());
  const Knob* k = space.Find("fuse.conv_pool");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->nodes.size(), 4u);
}

TEST(FuseConvPool, NotForOtherActivationsOrRoutesOtherThanNhwcFp32) {
  for (const char* act : {"Relu", "Sigmoid"}) {
    Graph g = SiluSqueezeExcite(act);
    Graph opt;
    const BuildReport rep = ExpectExact(g, In(g), WithConvPool(), &opt);
    EXPECT_EQ(Fired(rep, "fuse.conv_pool"), 0) << act;
    EXPECT_EQ(CountOps(opt, "GlobalAveragePool"), 2) << act;
    EXPECT_EQ(RouteSpace::For(g, Target::HostCpu()).Find("fuse.conv_pool"), nullptr) << act;
  }
  const Target host = Target::HostCpu();
  for (const auto& [knob, value] : std::vector<std::pair<std::string, std::string>>{
           {"layout.activations", "nchw"}, {"layout.activations", "blocked"}, {"precision", "bf16"},
           {"quant.weights", "int8"}, {"", ""}}) {
    Graph g = SiluSqueezeExcite("SiLU");
    BuildReport report;
    PassContext ctx{[](const std::string&) { return true; }, host, report, [&](const std::string& k) {
                      if (k == knob) return value;
                      if (k == "layout.activations") return std::string("nhwc");
                      return std::string(k == "precision" ? "fp32" : k == "quant.weights" ? "none" : "on");
                    }};
    ASSERT_TRUE(RunPasses(g, ctx).ok());
    EXPECT_EQ(Fired(report, "fuse.conv_pool"), knob.empty() ? 2 : 0) << knob << "=" << value;
  }
}

}  // namespace
}  // namespace switchyard::testing
