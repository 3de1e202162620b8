// Unit tests of each graph pass on small hand-built graphs (a positive case proved exact
// against the reference executor, and a negative case that must not fire). The fused
// ops' own kernels are tested in fused_ops_test.cc.
#include <cmath>
#include <limits>

#include "passes_test_util.h"
#include "reference/op_registry.h"
#include "route/route.h"

namespace switchyard::testing {
namespace {

TEST(PassPipeline, OrderAndKnobs) {
  std::vector<std::string> names;
  for (const Pass& p : PassPipeline()) names.push_back(p.name);
  const std::vector<std::string> want = {"constant_folding", "dead_code", "simplify_layout", "fold_pad", "fuse_conv_bn",
                                         "fuse_gelu",
                                         "fuse_layernorm", "fuse_attention", "fuse_gemm_epilogue",
                                         "fuse_conv_act", "fuse_conv_scale", "fuse_elementwise", "fuse_slice",
                                         "constant_folding", "dead_code"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(PassPipeline()[0].knob, nullptr);
  EXPECT_EQ(PassPipeline()[2].knob, nullptr);
  EXPECT_EQ(PassPipeline()[3].knob, nullptr);
  EXPECT_STREQ(PassPipeline()[9].knob, "fuse.conv_act");
  EXPECT_STREQ(PassPipeline()[10].knob, "fuse.conv_scale");
}

TEST(ConstantFolding, FoldsShapeSubgraphsAndConstantNodes) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {2, 3, 4});
  const ValueId shape = b.Op("Shape", {x});
  const ValueId idx = b.Const("idx", Tensor::FromInt64({0}, {1}));
  const ValueId d0 = b.Op("Gather", {shape, idx}, [](Node& n) { n.attrs["axis"] = IntAttr(0); });
  const ValueId m1 = b.Const("m1", Tensor::FromInt64({-1}, {1}));
  const ValueId target = b.Op("Concat", {d0, m1}, [](Node& n) { n.attrs["axis"] = IntAttr(0); });
  const ValueId r = b.Op("Reshape", {x, target});
  const ValueId c = b.Op("Add", {b.Const("a", Filled(DataType::kFloat, {12}, 3)), b.Const("b", Filled(DataType::kFloat, {12}, 4))});
  b.Output(b.Op("Add", {r, c}));
  Graph g = b.Finish();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {}, &opt);
  EXPECT_EQ(Fired(rep, "constant_folding"), 4);  // Shape, Gather, Concat, Add of constants
  EXPECT_EQ(opt.nodes.size(), 2u);
  EXPECT_EQ(CountOps(opt, "Shape"), 0);
  EXPECT_GE(Fired(rep, "dead_code"), 1);  // the orphaned constants
}

TEST(ConstantFolding, KernelErrorsNameThePassAndTheNode) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {3});
  // Too large for shape inference's side evaluation, so the fold happens in the pass.
  Tensor idx = Tensor::FromInt64(std::vector<int64_t>(70000, 0), {70000});
  idx.SetInt64(5, 99);  // out of range
  // Indices computed by a node, so shape inference cannot check their values.
  const ValueId computed = b.Op("Add", {b.Const("idx", idx), b.Const("zero", Tensor::FromInt64({0}, {1}))});
  const ValueId g = b.Op("Gather", {b.Const("data", Filled(DataType::kFloat, {10}, 1)), computed});
  b.Output(b.Op("Add", {g, b.Op("ReduceSum", {x}, [](Node& n) { n.attrs["keepdims"] = IntAttr(0); })}));
  Graph graph = b.Finish();
  auto rep = Optimize(graph, {});
  ASSERT_FALSE(rep.ok());
  EXPECT_NE(rep.status().message().find("pass constant_folding"), std::string::npos) << rep.status().ToString();
  EXPECT_NE(rep.status().message().find("Gather"), std::string::npos) << rep.status().ToString();
}

TEST(DeadCode, RemovesUnreadNodesAndConstants) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {4});
  b.Op("Relu", {b.Op("Neg", {x})});  // never read
  b.Const("unused", Filled(DataType::kFloat, {4}, 2));
  b.Output(b.Op("Sigmoid", {x}));
  Graph g = b.Finish();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {}, &opt);
  EXPECT_EQ(opt.nodes.size(), 1u);
  EXPECT_TRUE(opt.constants.empty());
  EXPECT_EQ(Fired(rep, "dead_code"), 3);
}

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
  for (const SeOptions& o : {SeOptions{}, SeOptions{.n = 2, .swapped = true}}) {
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
      EXPECT_EQ(opt.value(n.inputs[4]).type.StaticShape(), (std::vector<int64_t>{o.n, 8, 1, 1}));
    }
    EXPECT_EQ(scaled, 1);
  }
}

TEST(FuseConvScale, NotWhereTheWeightsOutweighTheImageOrTheShapeDoesNotFit) {
  // 2 * M * KH * KW > H * W: scaling the weights would cost more than the Mul.
  // A Mul also read elsewhere, a constant scale (nothing to do per call), a grouped conv.
  for (const SeOptions& o : {SeOptions{.m = 40}, SeOptions{.mul_read_twice = true}, SeOptions{.const_scale = true},
                             SeOptions{.group = 2}}) {
    Graph g = SqueezeExcite(o);
    Graph opt;
    const BuildReport rep = ExpectExact(g, In(g), AllFuseKnobs(), &opt);
    EXPECT_EQ(Fired(rep, "fuse.conv_scale"), 0) << o.m << o.mul_read_twice << o.const_scale << o.group;
    EXPECT_EQ(CountOps(opt, "Mul") + CountOps(opt, "FusedElementwise"), 1);
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

TEST(FuseGemmEpilogue, MatMulBiasResidualGelu) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {2, 3, 8});
  const ValueId r = b.Input("r", {2, 3, 5});
  const ValueId mm = b.Op("MatMul", {x, b.Const("w", Filled(DataType::kFloat, {8, 5}, 2))});
  const ValueId bias = b.Op("Add", {b.Const("bias", Filled(DataType::kFloat, {5}, 3)), mm});
  const ValueId res = b.Op("Add", {bias, r});
  b.Output(b.Op("Relu", {res}));
  Graph g = b.Finish();
  Graph opt;
  ExpectExact(g, In(g), {"fuse.gemm_epilogue"}, &opt);
  ASSERT_EQ(opt.nodes.size(), 1u);
  EXPECT_EQ(opt.nodes[0].op_type, "FusedMatMul");
  EXPECT_EQ(opt.nodes[0].NumInputs(), 4u);
  EXPECT_EQ(opt.nodes[0].GetString("activation", ""), "Relu");
}

TEST(FuseGemmEpilogue, GemmWithTransposeAlphaBeta) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {4, 6});
  b.Output(b.Op("Gemm", {x, b.Const("w", Filled(DataType::kFloat, {3, 6}, 2)),
                         b.Const("c", Filled(DataType::kFloat, {1, 3}, 4))},
                [](Node& n) {
                  n.attrs["transB"] = IntAttr(1);
                  n.attrs["alpha"] = FloatAttr(0.5f);
                  n.attrs["beta"] = FloatAttr(2.0f);
                }));
  Graph g = b.Finish();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {"fuse.gemm_epilogue"}, &opt);
  EXPECT_EQ(Fired(rep, "fuse.gemm_epilogue"), 1);
  ASSERT_EQ(opt.nodes.size(), 1u);
  EXPECT_EQ(opt.nodes[0].GetInt("trans_b", 0), 1);
}

// A 2-D Gemm between Reshapes (how exporters write Linear on 3-D activations, GPT-2's
// MLP): the activation behind the Reshape moves into the epilogue, the Reshape follows.
TEST(FuseGemmEpilogue, ActivationBehindAReshape) {
  for (const bool silu : {false, true}) {
    GraphBuilder b;
    const ValueId x = b.Input("x", {6, 8});
    const ValueId gemm = b.Op("Gemm", {x, b.Const("w", Filled(DataType::kFloat, {8, 5}, 2)),
                                       b.Const("c", Filled(DataType::kFloat, {5}, 4))});
    const ValueId shape = b.Const("shape", Tensor::FromInt64({2, 3, 5}, {3}));
    const ValueId r = b.Op("Reshape", {gemm, shape});
    b.Output(silu ? b.Op("Mul", {r, b.Op("Sigmoid", {r})}) : b.Op("Relu", {r}));
    Graph g = b.Finish();
    Graph opt;
    const BuildReport rep = ExpectExact(g, In(g), {"fuse.gemm_epilogue"}, &opt);
    EXPECT_EQ(Fired(rep, "fuse.gemm_epilogue"), 1);
    ASSERT_EQ(opt.nodes.size(), 2u) << silu;
    EXPECT_EQ(opt.nodes[0].op_type, "FusedMatMul");
    EXPECT_EQ(opt.nodes[0].GetString("activation", ""), silu ? "SiLU" : "Relu");
    EXPECT_EQ(opt.nodes[1].op_type, "Reshape");
    EXPECT_EQ(opt.value(opt.nodes[1].outputs[0]).type.rank(), 3);
  }
}

// GPT-2's projections: 2-D Gemm between Reshapes, then the residual Add on the 3-D side.
// The residual moves into the epilogue (reshaped to the Gemm's [6, 5]); the Reshape now
// produces the Add's output. Also with the residual computed after the Gemm, and not
// when the residual would broadcast. Variant 3 is like ViT's out-projection: Reshape to
// [3, 1, 2, 5], a Transpose that moves only the size-1 axis, a Squeeze: simplify_layout
// makes the chain one Reshape, which the fusion sees through.
TEST(FuseGemmEpilogue, ResidualAddBehindAReshape) {
  for (const int variant : {0, 1, 2, 3}) {
    GraphBuilder b;
    const ValueId x = b.Input("x", {6, 8});
    const ValueId res_in = b.Input("res", variant == 2 ? std::vector<int64_t>{1, 3, 5} : std::vector<int64_t>{2, 3, 5});
    const ValueId gemm = b.Op("Gemm", {x, b.Const("w", Filled(DataType::kFloat, {8, 5}, 2)),
                                       b.Const("c", Filled(DataType::kFloat, {5}, 4))});
    // variant 1: the residual is computed after the Gemm (a later node in graph order).
    const ValueId res = variant == 1 ? b.Op("Neg", {res_in}) : res_in;
    ValueId r = b.Op("Reshape", {gemm, b.Const("shape", Tensor::FromInt64({2, 3, 5}, {3}))});
    if (variant == 3) {
      r = b.Op("Reshape", {gemm, b.Const("shape", Tensor::FromInt64({3, 1, 2, 5}, {4}))});
      r = b.Op("Transpose", {r}, [](Node& n) { n.attrs["perm"] = IntsAttr({1, 0, 2, 3}); });
      r = b.Op("Squeeze", {r, b.Const("axes", Tensor::FromInt64({0}, {1}))});
    }
    b.Output(b.Op("Add", {variant == 3 ? b.Op("Reshape", {res, b.Const("rs", Tensor::FromInt64({3, 2, 5}, {3}))}) : res, r}));
    Graph g = b.Finish();
    Graph opt;
    ExpectExact(g, In(g), {"fuse.gemm_epilogue"}, &opt);
    if (variant == 2) {
      EXPECT_EQ(CountOps(opt, "Add"), 1) << "a broadcast residual stays an Add";
      continue;
    }
    EXPECT_EQ(CountOps(opt, "Add"), 0) << variant;
    ASSERT_EQ(CountOps(opt, "FusedMatMul"), 1) << variant;
    if (variant == 3) EXPECT_EQ(CountOps(opt, "Transpose") + CountOps(opt, "Squeeze"), 0);
    for (const Node& n : opt.nodes) {
      if (n.op_type != "FusedMatMul") continue;
      ASSERT_EQ(n.NumInputs(), 4u);
      EXPECT_EQ(opt.value(n.inputs[3]).type.StaticShape(), (std::vector<int64_t>{6, 5})) << variant;
      EXPECT_EQ(opt.value(n.outputs[0]).type.StaticShape(), (std::vector<int64_t>{6, 5})) << variant;
    }
  }
}

// The tanh form of GELU (GPT-2's, as fuse_gelu writes it, or ONNX Gelu-20 approximate=tanh)
// is an epilogue activation too: "GeluTanh".
TEST(FuseGemmEpilogue, TanhGeluBecomesGeluTanh) {
  for (const bool onnx_gelu : {false, true}) {
    GraphBuilder b(onnx_gelu ? 20 : 17);
    const ValueId x = b.Input("x", {6, 8});
    const ValueId gemm = b.Op("Gemm", {x, b.Const("w", Filled(DataType::kFloat, {8, 5}, 2)),
                                       b.Const("c", Filled(DataType::kFloat, {5}, 4))});
    const ValueId y = b.Op("Gelu", {gemm}, [onnx_gelu](Node& n) {
      if (!onnx_gelu) n.domain = kSwitchyardDomain;
      Attribute a;
      a.kind = Attribute::Kind::kString;
      a.s = "tanh";
      n.attrs["approximate"] = a;
    });
    if (!onnx_gelu) b.g.opsets[kSwitchyardDomain] = 1;
    b.Output(y);
    Graph g = b.Finish();
    Graph opt;
    const BuildReport rep = ExpectExact(g, In(g), {"fuse.gemm_epilogue"}, &opt);
    EXPECT_EQ(Fired(rep, "fuse.gemm_epilogue"), 1) << onnx_gelu;
    ASSERT_EQ(opt.nodes.size(), 1u) << onnx_gelu;
    EXPECT_EQ(opt.nodes[0].GetString("activation", ""), "GeluTanh");
  }
}

// Not when the Reshape's input has another reader (the activation would change it).
TEST(FuseGemmEpilogue, NotBehindAReshapeWhoseInputIsAlsoRead) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {6, 8});
  const ValueId mm = b.Op("MatMul", {x, b.Const("w", Filled(DataType::kFloat, {8, 5}, 2))});
  const ValueId r = b.Op("Reshape", {mm, b.Const("shape", Tensor::FromInt64({2, 3, 5}, {3}))});
  b.Output(b.Op("Relu", {r}));
  b.Output(b.Op("Neg", {mm}));
  Graph g = b.Finish();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {"fuse.gemm_epilogue"}, &opt);
  EXPECT_EQ(Fired(rep, "fuse.gemm_epilogue"), 0);
}

TEST(FuseGemmEpilogue, NotWhenMatMulOutputHasAnotherReader) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {3, 8});
  const ValueId mm = b.Op("MatMul", {x, b.Const("w", Filled(DataType::kFloat, {8, 5}, 2))});
  b.Output(b.Op("Add", {mm, b.Const("bias", Filled(DataType::kFloat, {5}, 3))}));
  b.Output(mm);
  Graph g = b.Finish();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {"fuse.gemm_epilogue"}, &opt);
  EXPECT_EQ(Fired(rep, "fuse.gemm_epilogue"), 0);
  EXPECT_EQ(CountOps(opt, "MatMul"), 1);
}

TEST(FuseElementwise, ChainWithSwappedOperand) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {2, 5});
  const ValueId y = b.Input("y", {5});
  const ValueId s = b.Op("Sigmoid", {x});
  const ValueId one_minus = b.Op("Sub", {b.Scalar(1.0), s});
  const ValueId p = b.Op("Mul", {one_minus, y});
  b.Output(b.Op("LeakyRelu", {p}, [](Node& n) { n.attrs["alpha"] = FloatAttr(0.3f); }));
  Graph g = b.Finish();
  Graph opt;
  ExpectExact(g, In(g), {"fuse.elementwise"}, &opt);
  ASSERT_EQ(opt.nodes.size(), 1u);
  const Node& f = opt.nodes[0];
  EXPECT_EQ(f.op_type, "FusedElementwise");
  EXPECT_EQ(f.Find("ops")->strings, (std::vector<std::string>{"Sigmoid", "Sub", "Mul", "LeakyRelu"}));
  EXPECT_EQ(f.GetInts("swap"), (std::vector<int64_t>{0, 1, 0, 0}));
}

TEST(FuseElementwise, IntermediateWithAnotherReaderBreaksTheChain) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {4});
  const ValueId a = b.Op("Exp", {x});
  b.Output(b.Op("Neg", {a}));
  b.Output(a);  // a is a graph output: the chain cannot swallow it
  Graph g = b.Finish();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {"fuse.elementwise"}, &opt);
  EXPECT_EQ(Fired(rep, "fuse.elementwise"), 0);
}

// ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div / Mul / Add.
Graph LayerNormGraph(bool extra) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {2, 3, 8});
  auto mean = [&](ValueId v) { return b.Op("ReduceMean", {v}, [](Node& n) { n.attrs["axes"] = IntsAttr({-1}); }); };
  const ValueId d = b.Op("Sub", {x, mean(x)});
  const ValueId var = mean(b.Op("Pow", {d, b.Scalar(2.0)}));
  const ValueId sd = b.Op("Sqrt", {b.Op("Add", {var, b.Scalar(1e-5)})});
  const ValueId y = b.Op("Div", {d, sd});
  const ValueId z = b.Op("Mul", {y, b.Const("gamma", Filled(DataType::kFloat, {8}, 3))});
  b.Output(b.Op("Add", {z, b.Const("beta", Filled(DataType::kFloat, {8}, 4))}));
  if (extra) b.Output(d);
  return b.Finish();
}

TEST(FuseLayerNorm, DecomposedPattern) {
  Graph g = LayerNormGraph(false);
  Graph opt;
  ExpectExact(g, In(g), {"fuse.layernorm"}, &opt);
  ASSERT_EQ(opt.nodes.size(), 1u);
  EXPECT_EQ(opt.nodes[0].op_type, "LayerNorm");
  EXPECT_EQ(opt.nodes[0].GetInt("axis", 0), 2);
  EXPECT_EQ(opt.nodes[0].NumInputs(), 3u);
}

TEST(FuseLayerNorm, NotWhenDeviationIsReadElsewhere) {
  Graph g = LayerNormGraph(true);
  const BuildReport rep = ExpectExact(g, In(g), AllFuseKnobs());
  EXPECT_EQ(Fired(rep, "fuse.layernorm"), 0);
}

Graph GeluGraph(bool tanh, bool extra) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {3, 7});
  ValueId inner;
  if (tanh) {
    const ValueId cube = b.Op("Pow", {x, b.Scalar(3.0)});
    const ValueId t = b.Op("Add", {x, b.Op("Mul", {b.Scalar(0.044715), cube})});
    inner = b.Op("Tanh", {b.Op("Mul", {b.Scalar(std::sqrt(2.0 / M_PI)), t})});
  } else {
    inner = b.Op("Erf", {b.Op("Div", {x, b.Scalar(std::sqrt(2.0))})});
  }
  const ValueId one = b.Op("Add", {inner, b.Scalar(1.0)});
  const ValueId h = b.Op("Mul", {x, b.Scalar(0.5)});
  b.Output(b.Op("Mul", {h, one}));
  if (extra) b.Output(one);
  return b.Finish();
}

TEST(FuseGelu, ErfAndTanhForms) {
  for (bool tanh : {false, true}) {
    Graph g = GeluGraph(tanh, false);
    Graph opt;
    ExpectExact(g, In(g), {"fuse.gelu"}, &opt);
    ASSERT_EQ(opt.nodes.size(), 1u) << tanh;
    EXPECT_EQ(opt.nodes[0].op_type, "Gelu");
    EXPECT_EQ(opt.nodes[0].GetString("approximate", ""), tanh ? "tanh" : "none");
  }
}

TEST(FuseGelu, NotWhenIntermediateIsReadElsewhere) {
  Graph g = GeluGraph(false, true);
  const BuildReport rep = ExpectExact(g, In(g), AllFuseKnobs());
  EXPECT_EQ(Fired(rep, "fuse.gelu"), 0);
}

Graph SlicesGraph(int64_t second_start) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {2, 12});
  auto slice = [&](int64_t s, int64_t e) {
    return b.Op("Slice", {x, b.Const("s" + std::to_string(b.counter++), Tensor::FromInt64({s}, {1})),
                          b.Const("e" + std::to_string(b.counter++), Tensor::FromInt64({e}, {1})),
                          b.Const("a" + std::to_string(b.counter++), Tensor::FromInt64({-1}, {1}))});
  };
  b.Output(b.Op("Relu", {slice(0, 4)}));
  b.Output(b.Op("Neg", {slice(second_start, 8)}));
  b.Output(slice(8, INT64_MAX));
  return b.Finish();
}

TEST(FuseSlice, DisjointContiguousSlicesBecomeSplit) {
  Graph g = SlicesGraph(4);
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {"fuse.slice"}, &opt);
  EXPECT_EQ(Fired(rep, "fuse.slice"), 1);
  EXPECT_EQ(CountOps(opt, "Slice"), 0);
  EXPECT_EQ(CountOps(opt, "Split"), 1);
}

TEST(FuseSlice, OverlappingSlicesStay) {
  Graph g = SlicesGraph(3);
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {"fuse.slice"}, &opt);
  EXPECT_EQ(Fired(rep, "fuse.slice"), 0);
  EXPECT_EQ(CountOps(opt, "Slice"), 3);
}

TEST(FuseSlice, NestedSlicesOnDifferentAxesMerge) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {6, 8});
  const ValueId s1 = b.Op("Slice", {x, b.Const("s1", Tensor::FromInt64({1}, {1})), b.Const("e1", Tensor::FromInt64({5}, {1})),
                                    b.Const("a1", Tensor::FromInt64({0}, {1}))});
  b.Output(b.Op("Slice", {s1, b.Const("s2", Tensor::FromInt64({-6}, {1})), b.Const("e2", Tensor::FromInt64({-1}, {1})),
                          b.Const("a2", Tensor::FromInt64({1}, {1}))}));
  Graph g = b.Finish();
  Graph opt;
  ExpectExact(g, In(g), {"fuse.slice"}, &opt);
  EXPECT_EQ(CountOps(opt, "Slice"), 1);
}

// q/k/v thirds of a packed projection: MatMul + bias (or Gemm with transB), three Slices
// of 64 columns. The Split that fuse_slice makes becomes three FusedMatMuls over the
// weights' column blocks; narrower parts keep the Split.
TEST(FuseSlice, SplitOfAProjectionBecomesOneGemmPerPart) {
  for (const int variant : {0, 1, 2}) {
    const int64_t part = variant == 2 ? 8 : 64;
    GraphBuilder b;
    const ValueId x = b.Input("x", {5, 16});
    ValueId y;
    if (variant == 1) {
      y = b.Op("Gemm", {x, b.Const("w", Filled(DataType::kFloat, {3 * part, 16}, 2)),
                        b.Const("c", Filled(DataType::kFloat, {3 * part}, 4))},
               [](Node& n) { n.attrs["transB"] = IntAttr(1); });
    } else {
      y = b.Op("Add", {b.Op("MatMul", {x, b.Const("w", Filled(DataType::kFloat, {16, 3 * part}, 2))}),
                       b.Const("c", Filled(DataType::kFloat, {3 * part}, 4))});
    }
    auto slice = [&](int64_t s, int64_t e) {
      return b.Op("Slice", {y, b.Const("s" + std::to_string(b.counter++), Tensor::FromInt64({s}, {1})),
                            b.Const("e" + std::to_string(b.counter++), Tensor::FromInt64({e}, {1})),
                            b.Const("a" + std::to_string(b.counter++), Tensor::FromInt64({-1}, {1}))});
    };
    b.Output(b.Op("Relu", {slice(0, part)}));
    b.Output(b.Op("Neg", {slice(part, 2 * part)}));
    b.Output(slice(2 * part, 3 * part));
    Graph g = b.Finish();
    Graph opt;
    ExpectExact(g, In(g), {"fuse.gemm_epilogue", "fuse.slice"}, &opt);
    EXPECT_EQ(CountOps(opt, "Slice"), 0) << variant;
    EXPECT_EQ(CountOps(opt, "Split"), variant == 2 ? 1 : 0) << variant;
    EXPECT_EQ(CountOps(opt, "FusedMatMul"), variant == 2 ? 1 : 3) << variant;
  }
}

}  // namespace
}  // namespace switchyard::testing
