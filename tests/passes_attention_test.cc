// Pass tests of attention: fuse_attention on hand-built graphs (scales, masks, the causal
// flag, head Transposes as layout perms) and simplify_layout on PyTorch 2's export of
// nn.MultiheadAttention, each proved exact against the reference executor.
#include <cmath>
#include <limits>

#include "passes_test_util.h"

namespace switchyard::testing {
namespace {

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

}  // namespace
}  // namespace switchyard::testing
