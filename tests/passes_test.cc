// Unit tests of each graph pass on small hand-built graphs (a positive case proved exact
// against the reference executor, and a negative case that must not fire). The fused
// ops' own kernels are tested in fused_ops_test.cc; the convolution fusions in
// passes_conv_test.cc, attention in passes_attention_test.cc.
#include <cmath>
#include <limits>

#include "passes_test_util.h"
#include "reference/op_registry.h"

namespace switchyard::testing {
namespace {

TEST(PassPipeline, OrderAndKnobs) {
  std::vector<std::string> names;
  for (const Pass& p : PassPipeline()) names.push_back(p.name);
  const std::vector<std::string> want = {"constant_folding", "dead_code", "simplify_layout", "fold_pad", "prune_rows",
                                         "fuse_conv_bn", "fuse_gelu",
                                         "fuse_layernorm", "fuse_attention", "fuse_gemm_epilogue",
                                         "fuse_conv_act", "fold_conv_input", "fuse_conv_scale", "fuse_conv_pool",
                                         "fuse_elementwise",
                                         "fuse_slice",
                                         "prune_rows", "constant_folding", "dead_code"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(PassPipeline()[0].knob, nullptr);
  EXPECT_EQ(PassPipeline()[2].knob, nullptr);
  EXPECT_EQ(PassPipeline()[3].knob, nullptr);
  EXPECT_STREQ(PassPipeline()[4].knob, "prune.rows");
  EXPECT_STREQ(PassPipeline()[10].knob, "fuse.conv_act");
  EXPECT_STREQ(PassPipeline()[11].knob, "fuse.conv_bn");
  EXPECT_STREQ(PassPipeline()[12].knob, "fuse.conv_scale");
  EXPECT_STREQ(PassPipeline()[13].knob, "fuse.conv_pool");
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
