// Unit tests of each graph pass on small hand-built graphs (a positive case proved exact
// against the reference executor, and a negative case that must not fire). The fused
// ops' own kernels are tested in fused_ops_test.cc.
#include <cmath>
#include <limits>

#include "passes_test_util.h"
#include "reference/op_registry.h"

namespace switchyard::testing {
namespace {

TensorMap In(const Graph& g, uint32_t seed = 1) {
  TensorMap m;
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    m[v.name] = Filled(v.type.dtype, v.type.StaticShape(), seed++);
  }
  return m;
}

int Fired(const BuildReport& r, const std::string& k) {
  auto it = r.fired.find(k);
  return it == r.fired.end() ? 0 : it->second;
}

TEST(PassPipeline, OrderAndKnobs) {
  std::vector<std::string> names;
  for (const Pass& p : PassPipeline()) names.push_back(p.name);
  const std::vector<std::string> want = {"constant_folding", "dead_code", "simplify_layout", "fuse_conv_bn", "fuse_gelu",
                                         "fuse_layernorm", "fuse_attention", "fuse_gemm_epilogue",
                                         "fuse_conv_act", "fuse_elementwise", "fuse_slice",
                                         "constant_folding", "dead_code"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(PassPipeline()[0].knob, nullptr);
  EXPECT_EQ(PassPipeline()[2].knob, nullptr);
  EXPECT_STREQ(PassPipeline()[8].knob, "fuse.conv_act");
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
// when the residual would broadcast.
TEST(FuseGemmEpilogue, ResidualAddBehindAReshape) {
  for (const int variant : {0, 1, 2}) {
    GraphBuilder b;
    const ValueId x = b.Input("x", {6, 8});
    const ValueId res_in = b.Input("res", variant == 2 ? std::vector<int64_t>{1, 3, 5} : std::vector<int64_t>{2, 3, 5});
    const ValueId gemm = b.Op("Gemm", {x, b.Const("w", Filled(DataType::kFloat, {8, 5}, 2)),
                                       b.Const("c", Filled(DataType::kFloat, {5}, 4))});
    // variant 1: the residual is computed after the Gemm (a later node in graph order).
    const ValueId res = variant == 1 ? b.Op("Neg", {res_in}) : res_in;
    const ValueId r = b.Op("Reshape", {gemm, b.Const("shape", Tensor::FromInt64({2, 3, 5}, {3}))});
    b.Output(b.Op("Add", {res, r}));
    Graph g = b.Finish();
    Graph opt;
    ExpectExact(g, In(g), {"fuse.gemm_epilogue"}, &opt);
    if (variant == 2) {
      EXPECT_EQ(CountOps(opt, "Add"), 1) << "a broadcast residual stays an Add";
      continue;
    }
    EXPECT_EQ(CountOps(opt, "Add"), 0) << variant;
    ASSERT_EQ(CountOps(opt, "FusedMatMul"), 1) << variant;
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

// Q [1,2,5,4], K [1,2,5,4] transposed by a Transpose node, Div scale, mask, Softmax, V.
Graph AttentionGraph(bool extra, bool where_mask) {
  GraphBuilder b;
  const ValueId q = b.Input("q", {1, 2, 5, 4});
  const ValueId k = b.Input("k", {1, 5, 2, 4});
  const ValueId v = b.Input("v", {1, 2, 5, 3});
  const ValueId kt = b.Op("Transpose", {k}, [](Node& n) { n.attrs["perm"] = IntsAttr({0, 2, 3, 1}); });
  const ValueId s = b.Op("Div", {b.Op("MatMul", {q, kt}), b.Scalar(2.0)});
  ValueId masked;
  if (where_mask) {
    Tensor cond(DataType::kBool, {5, 5});
    for (int i = 0; i < 5; ++i) for (int j = 0; j < 5; ++j) cond.SetInt64(i * 5 + j, j > i);
    masked = b.Op("Where", {b.Const("cond", cond), b.Scalar(-std::numeric_limits<double>::infinity()), s});
  } else {
    masked = b.Op("Add", {s, b.Input("mask", {1, 1, 1, 5})});
  }
  const ValueId p = b.Op("Softmax", {masked}, [](Node& n) { n.attrs["axis"] = IntAttr(-1); });
  b.Output(b.Op("MatMul", {p, v}));
  if (extra) b.Output(p);
  return b.Finish();
}

TEST(FuseAttention, TransposedKeyScaleAndAdditiveMask) {
  Graph g = AttentionGraph(false, false);
  Graph opt;
  ExpectExact(g, In(g), {"fuse.attention"}, &opt);
  EXPECT_EQ(CountOps(opt, "Softmax"), 0);
  ASSERT_EQ(CountOps(opt, "Attention"), 1);
  for (const Node& n : opt.nodes) {
    if (n.op_type != "Attention") continue;
    EXPECT_FLOAT_EQ(n.GetFloat("scale", 0), 0.5f);
    EXPECT_EQ(n.NumInputs(), 4u);
  }
}

TEST(FuseAttention, ConstantCausalWhereBecomesCausalFlag) {
  Graph g = AttentionGraph(false, true);
  Graph opt;
  ExpectExact(g, In(g), {"fuse.attention"}, &opt);
  ASSERT_EQ(CountOps(opt, "Attention"), 1);
  for (const Node& n : opt.nodes) {
    if (n.op_type == "Attention") {
      EXPECT_EQ(n.GetInt("causal", 0), 1);
      EXPECT_EQ(n.NumInputs(), 3u);
    }
  }
}

TEST(FuseAttention, NotWhenProbabilitiesAreReadElsewhere) {
  Graph g = AttentionGraph(true, false);
  const BuildReport rep = ExpectExact(g, In(g), AllFuseKnobs());
  EXPECT_EQ(Fired(rep, "fuse.attention"), 0);
}

// A cuda target as Target::ForName("cuda") builds it (pass decisions only; no GPU needed).
Target CudaLikeTarget() {
  Target t = Target::HostCpu();
  t.name = "cuda";
  t.gpu.present = true;
  t.gpu.cc_major = 9;
  return t;
}

// Heads split and merged around attention as PyTorch exports them: Q, K, V stored
// [B, S, H, D], each moved to [B, H, S, D] by a Transpose, the output moved back.
Graph HeadSplitAttentionGraph() {
  GraphBuilder b;
  const auto heads = [&](const std::string& name, int64_t d, std::vector<int64_t> perm) {
    return b.Op("Transpose", {b.Input(name, {2, 5, 3, d})}, [perm](Node& n) { n.attrs["perm"] = IntsAttr(perm); });
  };
  const ValueId q = heads("q", 4, {0, 2, 1, 3}), kt = heads("k", 4, {0, 2, 3, 1}), v = heads("v", 6, {0, 2, 1, 3});
  const ValueId s = b.Op("Mul", {b.Op("MatMul", {q, kt}), b.Scalar(0.5)});
  const ValueId p = b.Op("Softmax", {b.Op("Add", {s, b.Input("mask", {2, 1, 1, 5})})},
                         [](Node& n) { n.attrs["axis"] = IntAttr(-1); });
  b.Output(b.Op("Transpose", {b.Op("MatMul", {p, v})}, [](Node& n) { n.attrs["perm"] = IntsAttr({0, 2, 1, 3}); }));
  return b.Finish();
}

TEST(FuseAttention, TheHeadTransposesBecomeLayoutPerms) {
  Graph g = HeadSplitAttentionGraph();
  const Target cuda = CudaLikeTarget();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {"fuse.attention"}, &opt, 1e-6, &cuda);
  EXPECT_EQ(Fired(rep, "fuse.attention"), 1);
  EXPECT_EQ(Fired(rep, "attention_transposes"), 1);
  EXPECT_EQ(CountOps(opt, "Transpose"), 0);
  ASSERT_EQ(CountOps(opt, "Attention"), 1);
  for (const Node& n : opt.nodes) {
    if (n.op_type != "Attention") continue;
    EXPECT_EQ(n.GetInts("q_perm"), (std::vector<int64_t>{0, 2, 1, 3}));
    EXPECT_EQ(n.GetInts("k_perm"), (std::vector<int64_t>{0, 2, 1, 3}));
    EXPECT_EQ(n.GetInts("v_perm"), (std::vector<int64_t>{0, 2, 1, 3}));
    EXPECT_EQ(n.GetInts("out_perm"), (std::vector<int64_t>{0, 2, 1, 3}));
  }
  // The CPU target's native kernel reads them too.
  Graph cpu;
  const BuildReport cpu_rep = ExpectExact(g, In(g), {"fuse.attention"}, &cpu);
  EXPECT_EQ(Fired(cpu_rep, "attention_transposes"), 1);
  EXPECT_EQ(CountOps(cpu, "Transpose"), 0);
}

// nn.MultiheadAttention (batch_first) as PyTorch 2's TorchScript exporter writes it, at
// S = 6, E = 8, 2 heads: x [1,S,E] -> Transpose to [S,1,E], the in-projection, Reshape
// [S,1,3,E], Unsqueeze, Transpose (3 to the front), Squeeze, Gather 0/1/2, per head split
// Reshape [S,H,D] + Transpose [H,S,D] + Reshape [1,H,S,D], q and Kt each times sqrt(scale),
// Softmax, and back: Transpose [S,1,H,D], Reshape [S,E], Reshape [S,1,E], Transpose [1,S,E].
Graph TorchTwoMhaGraph() {
  GraphBuilder b;
  const int64_t S = 6, E = 8, H = 2, D = 4;
  auto ints = [&](std::vector<int64_t> v) {
    return b.Const("i" + std::to_string(b.counter++), Tensor::FromInt64(v, {static_cast<int64_t>(v.size())}));
  };
  auto perm = [](std::vector<int64_t> p) { return [p](Node& n) { n.attrs["perm"] = IntsAttr(p); }; };
  const ValueId x = b.Input("x", {1, S, E});
  const ValueId xs = b.Op("Transpose", {x}, perm({1, 0, 2}));
  const ValueId proj = b.Op("MatMul", {xs, b.Const("w", Filled(DataType::kFloat, {E, 3 * E}, 7))});
  const ValueId packed = b.Op("Reshape", {proj, ints({S, 1, 3, E})});
  const ValueId un = b.Op("Unsqueeze", {packed, ints({0})});
  const ValueId moved = b.Op("Transpose", {un}, perm({3, 1, 2, 0, 4}));
  const ValueId sq = b.Op("Squeeze", {moved, ints({3})});
  auto head = [&](int64_t i) {
    const ValueId t = b.Op("Gather", {sq, b.Const("g" + std::to_string(b.counter++), Tensor::FromInt64({i}, {}))},
                           [](Node& n) { n.attrs["axis"] = IntAttr(0); });
    const ValueId split = b.Op("Transpose", {b.Op("Reshape", {t, ints({S, H, D})})}, perm({1, 0, 2}));
    return b.Op("Reshape", {split, ints({1, H, S, D})});
  };
  const ValueId q = head(0), k = head(1), v = head(2);
  const double c = std::sqrt(1.0 / std::sqrt(static_cast<double>(D)));
  const ValueId kt = b.Op("Mul", {b.Op("Transpose", {k}, perm({0, 1, 3, 2})), b.Scalar(c)});
  const ValueId scores = b.Op("MatMul", {b.Op("Mul", {q, b.Scalar(c)}), kt});
  const ValueId p = b.Op("Softmax", {scores}, [](Node& n) { n.attrs["axis"] = IntAttr(-1); });
  const ValueId o = b.Op("Transpose", {b.Op("MatMul", {p, v})}, perm({2, 0, 1, 3}));
  const ValueId flat = b.Op("Reshape", {o, ints({S, E})});
  const ValueId back = b.Op("Reshape", {b.Op("Relu", {flat}), ints({S, 1, E})});
  b.Output(b.Op("Transpose", {back}, perm({1, 0, 2})));
  return b.Finish();
}

TEST(SimplifyLayout, TorchTwoAttentionLosesEveryTranspose) {
  Graph g = TorchTwoMhaGraph();
  ASSERT_EQ(CountOps(g, "Transpose"), 8);
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {"fuse.attention"}, &opt, 1e-6);
  EXPECT_GT(Fired(rep, "simplify_layout"), 0);
  EXPECT_EQ(Fired(rep, "fuse.attention"), 1);
  EXPECT_EQ(CountOps(opt, "Transpose"), 0);
  EXPECT_EQ(CountOps(opt, "Mul"), 0);  // both sqrt(scale) factors are in the scale
  ASSERT_EQ(CountOps(opt, "Attention"), 1);
  for (const Node& n : opt.nodes) {
    if (n.op_type != "Attention") continue;
    EXPECT_NEAR(n.GetFloat("scale", 0), 0.5f, 1e-6);
    EXPECT_TRUE(n.Has("q_perm") && n.Has("k_perm") && n.Has("v_perm") && n.Has("out_perm"));
  }
  // Without the attention fusion the layout rewrites alone still hold the values.
  Graph plain;
  ExpectExact(g, In(g), {}, &plain, 1e-6);
  EXPECT_LT(CountOps(plain, "Transpose"), 8);
}

TEST(SimplifyLayout, OnlyLayoutPreservingForms) {
  GraphBuilder b;
  auto perm = [](std::vector<int64_t> p) { return [p](Node& n) { n.attrs["perm"] = IntsAttr(p); }; };
  const ValueId x = b.Input("x", {2, 1, 3, 4});
  // Moves the size-1 axis only: a Reshape.
  b.Output(b.Op("Transpose", {x}, perm({1, 0, 2, 3})));
  // Moves real axes, then a Reshape that merges the moved axes: both stay.
  const ValueId t = b.Op("Transpose", {x}, perm({0, 1, 3, 2}));
  b.Output(b.Op("Reshape", {t, b.Const("s", Tensor::FromInt64({2, 12}, {2}))}));
  // Transpose of a Transpose whose perms cancel: a Reshape.
  b.Output(b.Op("Transpose", {b.Op("Transpose", {x}, perm({2, 0, 3, 1}))}, perm({1, 3, 0, 2})));
  Graph g = b.Finish();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {}, &opt, 0);
  EXPECT_EQ(Fired(rep, "simplify_layout"), 2);
  EXPECT_EQ(CountOps(opt, "Transpose"), 1);
  EXPECT_EQ(CountOps(opt, "Reshape"), 3);
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

}  // namespace
}  // namespace switchyard::testing
