// fuse.conv_bn's constant affine maps (paddle2onnx's learnable affine blocks): Mul, Div,
// Add and Sub by a scalar or per-channel constant after a Conv or ConvTranspose fold into
// its weights and bias; a Mul or Div in front of a Conv folds into its weights, an Add or
// Sub only where the Conv reads no padding. Each case proved against the reference
// executor on the original graph, and the cases that must stay.
#include "engine_test_util.h"
#include "passes_test_util.h"
#include "route/route.h"

namespace switchyard::testing {
namespace {

// Conv(x) (group 2, 6 outputs, 3x3 with `pads`) or ConvTranspose, then `after` ops, each
// with the constant made by `constant(i)`.
struct AffineOp {
  const char* op;
  std::vector<int64_t> shape;  // of the constant
  bool constant_first = false;
};

Graph ConvThen(const std::vector<AffineOp>& after, bool transposed = false, bool with_bias = true) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {1, 4, 6, 6});
  const ValueId w = transposed ? b.Const("w", Filled(DataType::kFloat, {4, 3, 3, 3}, 5))
                               : b.Const("w", Filled(DataType::kFloat, {6, 2, 3, 3}, 5));
  std::vector<ValueId> in = {x, w};
  if (with_bias) in.push_back(b.Const("b", Filled(DataType::kFloat, {6}, 6)));
  ValueId y = b.Op(transposed ? "ConvTranspose" : "Conv", in, [](Node& n) {
    n.attrs["group"] = IntAttr(2);
    n.attrs["pads"] = IntsAttr({1, 1, 1, 1});
  });
  uint32_t seed = 20;
  for (const AffineOp& a : after) {
    const ValueId k = b.Const("k" + std::to_string(seed), Filled(DataType::kFloat, a.shape, seed, 0.5, 2));
    ++seed;
    y = b.Op(a.op, a.constant_first ? std::vector<ValueId>{k, y} : std::vector<ValueId>{y, k});
  }
  b.Output(y);
  return b.Finish();
}

TEST(FuseConvAffine, ScalarAndPerChannelAfterConvFold) {
  const std::vector<std::vector<AffineOp>> cases = {
      {{"Mul", {1}, true}, {"Add", {1}}},                 // paddle2onnx: Mul(C, x), Add(x, C)
      {{"Mul", {6, 1, 1}}, {"Sub", {1, 6, 1, 1}}},        // per channel, both spellings
      {{"Div", {}}, {"Add", {6, 1, 1}, true}},            // a 0-D divisor, a constant-first Add
  };
  for (bool transposed : {false, true}) {
    for (bool bias : {false, true}) {
      for (const auto& c : cases) {
        Graph g = ConvThen(c, transposed, bias);
        Graph opt;
        const BuildReport rep = ExpectExact(g, In(g), {"fuse.conv_bn"}, &opt, 1e-6);
        EXPECT_EQ(Fired(rep, "fuse.conv_bn"), 2) << c[0].op << " transposed " << transposed;
        ASSERT_EQ(opt.nodes.size(), 1u);
        EXPECT_EQ(opt.nodes[0].op_type, transposed ? "ConvTranspose" : "Conv");
      }
    }
  }
}

TEST(FuseConvAffine, ConstantsThatDoNotBroadcastPerChannelStay) {
  // Per pixel ([1, 1, 6, 6]), a divisor before the conv output (C / x), a higher rank.
  for (const AffineOp& a : {AffineOp{"Mul", {1, 1, 6, 6}}, AffineOp{"Div", {1}, true},
                            AffineOp{"Sub", {1}, true}, AffineOp{"Add", {1, 1, 6, 1, 1}}}) {
    Graph g = ConvThen({a});
    Graph opt;
    const BuildReport rep = ExpectExact(g, In(g), {"fuse.conv_bn"}, &opt);
    EXPECT_EQ(Fired(rep, "fuse.conv_bn"), 0) << a.op;
    EXPECT_EQ(opt.nodes.size(), 2u) << a.op;
  }
}

// A BatchNormalization after a ConvTranspose's separate bias Add (PP-OCRv4's head).
TEST(FuseConvAffine, BiasAddThenBatchNormBothFold) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {1, 4, 5, 5});
  ValueId y = b.Op("ConvTranspose", {x, b.Const("w", Filled(DataType::kFloat, {4, 3, 2, 2}, 1))},
                   [](Node& n) { n.attrs["strides"] = IntsAttr({2, 2}); });
  y = b.Op("Add", {y, b.Const("b", Filled(DataType::kFloat, {3, 1, 1}, 2))});
  y = b.Op("BatchNormalization", {y, b.Const("s", Filled(DataType::kFloat, {3}, 3, 0.5, 2)),
                                  b.Const("bb", Filled(DataType::kFloat, {3}, 4)),
                                  b.Const("mu", Filled(DataType::kFloat, {3}, 5)),
                                  b.Const("var", Filled(DataType::kFloat, {3}, 6, 0.2, 2))});
  b.Output(b.Op("Relu", {y}));
  Graph g = b.Finish();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), {"fuse.conv_bn"}, &opt);
  EXPECT_EQ(Fired(rep, "fuse.conv_bn"), 2);
  EXPECT_EQ(CountOps(opt, "BatchNormalization"), 0);
  EXPECT_EQ(CountOps(opt, "Add"), 0);
}

// x -> Mul(s) -> Add(t) -> Conv(pads) -> out.
Graph AffineThenConv(std::vector<int64_t> pads, const char* first, const char* second, int64_t group = 1) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {1, 4, 6, 6});
  ValueId y = b.Op(first, {x, b.Const("s", Filled(DataType::kFloat, {4, 1, 1}, 2, 0.5, 2))});
  y = b.Op(second, {y, b.Const("t", Filled(DataType::kFloat, {1}, 3))});
  const int64_t m = group == 1 ? 6 : 4;
  y = b.Op("Conv", {y, b.Const("w", Filled(DataType::kFloat, {m, 4 / group, 3, 3}, 4)),
                    b.Const("b", Filled(DataType::kFloat, {m}, 5))},
           [&](Node& n) {
             n.attrs["pads"] = IntsAttr(pads);
             n.attrs["group"] = IntAttr(group);
           });
  b.Output(y);
  return b.Finish();
}

TEST(FuseConvAffine, ScaleAndShiftInFrontOfAnUnpaddedConvFold) {
  for (int64_t group : {1, 2, 4}) {
    Graph g = AffineThenConv({0, 0, 0, 0}, "Mul", "Add", group);
    Graph opt;
    const BuildReport rep = ExpectExact(g, In(g), {"fuse.conv_bn"}, &opt, 1e-6);
    EXPECT_EQ(Fired(rep, "fuse.conv_bn"), 2) << group;
    EXPECT_EQ(opt.nodes.size(), 1u) << group;
  }
  Graph g = AffineThenConv({0, 0, 0, 0}, "Div", "Sub");
  Graph opt;
  EXPECT_EQ(Fired(ExpectExact(g, In(g), {"fuse.conv_bn"}, &opt, 1e-6), "fuse.conv_bn"), 2);
}

TEST(FuseConvAffine, ShiftInFrontOfAPaddedConvStays) {
  // The shift would also reach the zero padding: the Add stays, and so does the Mul before
  // it (the Add, not the conv, reads it).
  Graph g = AffineThenConv({1, 1, 1, 1}, "Mul", "Add");
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), AllFuseKnobs(), &opt);
  EXPECT_EQ(Fired(rep, "fuse.conv_bn"), 0);
  // A scale alone folds at any padding (s * 0 = 0).
  Graph g2 = AffineThenConv({1, 1, 1, 1}, "Add", "Mul");
  Graph opt2;
  EXPECT_EQ(Fired(ExpectExact(g2, In(g2), {"fuse.conv_bn"}, &opt2, 1e-6), "fuse.conv_bn"), 1);
  EXPECT_EQ(CountOps(opt2, "Mul"), 0);
  EXPECT_EQ(CountOps(opt2, "Add"), 1);
}

// Keras' HardSwish (x * relu6(x + 3) / 6) between two convs: fuse.conv_act takes the "/ 6"
// into the first conv's activation before the input fold could take it into the second,
// and the scale after it as the first conv's post_affine.
TEST(FuseConvAffine, HardSwishDivisorStaysWithTheActivation) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {1, 4, 6, 6});
  const ValueId y = b.Op("Conv", {x, b.Const("w", Filled(DataType::kFloat, {4, 4, 1, 1}, 1))});
  const ValueId a = b.Op("Add", {y, b.Const("three", Tensor::Scalar(DataType::kFloat, 3.))});
  const ValueId r = b.Op("Clip", {a, b.Const("lo", Tensor::Scalar(DataType::kFloat, 0.)), b.Const("hi", Tensor::Scalar(DataType::kFloat, 6.))});
  const ValueId m = b.Op("Mul", {y, r});
  const ValueId d = b.Op("Div", {m, b.Const("six", Tensor::Scalar(DataType::kFloat, 6.))});
  const ValueId s = b.Op("Mul", {b.Const("s", Tensor::Scalar(DataType::kFloat, 0.5)), d});
  b.Output(b.Op("Conv", {s, b.Const("w2", Filled(DataType::kFloat, {3, 4, 1, 1}, 2))}));
  Graph g = b.Finish();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), AllFuseKnobs(), &opt, 1e-6);
  EXPECT_EQ(Fired(rep, "fuse.conv_act"), 1);
  ASSERT_EQ(opt.nodes.size(), 2u);
  EXPECT_EQ(opt.nodes[0].GetString("activation", ""), "HardSwish");
  EXPECT_EQ(opt.nodes[0].GetFloats("post_affine"), (std::vector<float>{0.5f, 0.f}));
}

// hardswish(conv(x)) * s + t in front of a padded depthwise conv (PP-OCRv4's blocks):
// fuse.conv_bn cannot fold the shift into the padded conv, so on CPU targets fuse.conv_act
// takes the Mul and Add as the FusedConv's post_affine; the CUDA target keeps them.
Graph HardSwishAffineDepthwise() {
  GraphBuilder b;
  const ValueId x = b.Input("x", {1, 8, 7, 7});
  const ValueId y = b.Op("Conv", {x, b.Const("w", Filled(DataType::kFloat, {8, 8, 1, 1}, 1)),
                                  b.Const("b", Filled(DataType::kFloat, {8}, 2))});
  const ValueId a = b.Op("Add", {y, b.Const("three", Tensor::Scalar(DataType::kFloat, 3))});
  const ValueId r = b.Op("Clip", {a, b.Const("lo", Tensor::Scalar(DataType::kFloat, 0)),
                                  b.Const("hi", Tensor::Scalar(DataType::kFloat, 6))});
  const ValueId h = b.Op("Div", {b.Op("Mul", {y, r}), b.Const("six", Tensor::Scalar(DataType::kFloat, 6))});
  ValueId z = b.Op("Mul", {b.Const("s", Tensor::FromFloat({0.75f}, {1})), h});
  z = b.Op("Sub", {z, b.Const("t", Tensor::FromFloat({0.125f}, {1}))});
  b.Output(b.Op("Conv", {z, b.Const("dw", Filled(DataType::kFloat, {8, 1, 3, 3}, 3))}, [](Node& n) {
    n.attrs["group"] = IntAttr(8);
    n.attrs["pads"] = IntsAttr({1, 1, 1, 1});
  }));
  return b.Finish();
}

TEST(FuseConvAffine, ScalarAffineAfterTheActivationBecomesPostAffineOnCpu) {
  Graph g = HardSwishAffineDepthwise();
  Graph opt;
  const BuildReport rep = ExpectExact(g, In(g), AllFuseKnobs(), &opt, 1e-6);
  EXPECT_EQ(Fired(rep, "fuse.conv_act"), 1);
  ASSERT_EQ(opt.nodes.size(), 2u);
  EXPECT_EQ(opt.nodes[0].GetString("activation", ""), "HardSwish");
  EXPECT_EQ(opt.nodes[0].GetFloats("post_affine"), (std::vector<float>{0.75f, -0.125f}));
  // The route space lists the Mul and Sub among fuse.conv_act's nodes.
  const RouteSpace space = RouteSpace::For(g, Target::HostCpu());
  ASSERT_NE(space.Find("fuse.conv_act"), nullptr);
  EXPECT_EQ(space.Find("fuse.conv_act")->nodes.size(), 7u);
  // Every CPU conv kernel route computes it: oneDNN's post-op (the native and OpenBLAS
  // kernels leave such a conv to oneDNN).
  const TensorMap in = In(g);
  for (const char* route : {"", "kernel.conv=native", "kernel.conv=im2col_gemm", "layout.activations=nchw"}) {
    auto built = engine_test::BuildRoute(g, route);
    ASSERT_TRUE(built.ok()) << route << ": " << built.status().ToString();
    engine_test::ExpectMatchesReference(g, built->engine, in, 1e-5, route);
  }
}

TEST(FuseConvAffine, NoPostAffineForCuda) {
  Graph g = HardSwishAffineDepthwise();
  Target cuda = Target::HostCpu();
  cuda.name = "cuda";
  Graph opt;
  ExpectExact(g, In(g), AllFuseKnobs(), &opt, 1e-6, &cuda);
  for (const Node& n : opt.nodes) EXPECT_FALSE(n.Has("post_affine")) << n.name;
  EXPECT_EQ(CountOps(opt, "FusedElementwise") + CountOps(opt, "Mul"), 1);
}

TEST(FuseConvAffine, MalformedPostAffineIsRefusedByName) {
  Graph g = HardSwishAffineDepthwise();
  Graph opt = g;
  ASSERT_TRUE(Optimize(opt, AllFuseKnobs()).ok());
  ASSERT_TRUE(opt.nodes[0].Has("post_affine"));
  Attribute three;
  three.kind = Attribute::Kind::kFloats;
  three.floats = {1.f, 2.f, 3.f};
  opt.nodes[0].attrs["post_affine"] = three;
  auto r = RunReference(opt, In(g));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("post_affine takes [scale, shift]"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace switchyard::testing
