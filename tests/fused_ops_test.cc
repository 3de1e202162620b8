// The switchyard-domain fused ops' reference kernels on hand-computed values, and their
// refusal of bad attributes.
#include <cmath>

#include "passes_test_util.h"
#include "reference/op_registry.h"

namespace switchyard::testing {
namespace {

TEST(FusedOps, FusedElementwiseHandComputed) {
  const OpSchema* s = OpRegistry::Global().Find(kSwitchyardDomain, "FusedElementwise", 1);
  ASSERT_NE(s, nullptr);
  Node n;
  n.name = "fe";
  n.op_type = "FusedElementwise";
  n.domain = kSwitchyardDomain;
  n.outputs = {0};
  Attribute ops;
  ops.kind = Attribute::Kind::kStrings;
  ops.strings = {"Sub", "Clip", "Mul"};  // (2 - x) clipped to [0, 1.5], times y
  n.attrs["ops"] = ops;
  n.attrs["operands"] = IntsAttr({1, -1, 2});
  n.attrs["swap"] = IntsAttr({1, 0, 0});
  Attribute params;
  params.kind = Attribute::Kind::kFloats;
  params.floats = {0.0f, 1.5f};
  n.attrs["params"] = params;
  n.attrs["param_offsets"] = IntsAttr({0, 0, 0});
  const Tensor x = Tensor::FromFloat({0.0f, 1.0f, 3.0f}, {3});
  const Tensor two = Tensor::FromFloat({2.0f}, {1});
  const Tensor y = Tensor::FromFloat({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {2, 3});
  auto out = s->run(KernelContext{n, 1, {&x, &two, &y}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<float> want = {1.5f, 2.0f, 0.0f, 6.0f, 5.0f, 0.0f};
  ASSERT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], want[static_cast<size_t>(i)]);
}

TEST(FusedOps, BadAttributesAreErrorsNamingTheNode) {
  const OpSchema* s = OpRegistry::Global().Find(kSwitchyardDomain, "FusedMatMul", 1);
  ASSERT_NE(s, nullptr);
  Node n;
  n.name = "fm";
  n.op_type = "FusedMatMul";
  n.domain = kSwitchyardDomain;
  n.outputs = {0};
  Attribute act;
  act.kind = Attribute::Kind::kString;
  act.s = "Swish";
  n.attrs["activation"] = act;
  const Tensor a = Filled(DataType::kFloat, {2, 3}, 1), b = Filled(DataType::kFloat, {3, 2}, 2);
  auto out = s->run(KernelContext{n, 1, {&a, &b}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("fm"), std::string::npos) << out.status().ToString();
  act.s = "LeakyRelu";  // needs one parameter
  n.attrs["activation"] = act;
  EXPECT_FALSE(s->run(KernelContext{n, 1, {&a, &b}}).ok());
}

Node AttentionNode(float scale) {
  Node n;
  n.name = "att";
  n.op_type = "Attention";
  n.domain = kSwitchyardDomain;
  n.outputs = {0};
  n.attrs["scale"] = FloatAttr(scale);
  return n;
}

TEST(FusedOps, AttentionMatchesHandComputedSoftmax) {
  const OpSchema* s = OpRegistry::Global().Find(kSwitchyardDomain, "Attention", 1);
  ASSERT_NE(s, nullptr);
  Node n = AttentionNode(1.0f);
  n.attrs["causal"] = IntAttr(1);
  // One query row each; keys [1,0] and [0,1]; values 10 and 20.
  const Tensor q = Tensor::FromFloat({1, 0, 0, 1}, {2, 2});
  const Tensor k = Tensor::FromFloat({1, 0, 0, 1}, {2, 2});
  const Tensor v = Tensor::FromFloat({10, 20}, {2, 1});
  auto out = s->run(KernelContext{n, 1, {&q, &k, &v}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[0], 10.0f);  // row 0 sees key 0 only
  const double e = std::exp(1.0);
  EXPECT_NEAR((*out)[0].data<float>()[1], (10.0 + 20.0 * e) / (1.0 + e), 1e-5);
}

// q_perm / k_perm / v_perm / out_perm read the operands (and write the output) through
// transposes: the same numbers as explicit Transposes around the plain op.
TEST(FusedOps, AttentionLayoutPermsEqualExplicitTransposes) {
  const OpSchema* att = OpRegistry::Global().Find(kSwitchyardDomain, "Attention", 1);
  const OpSchema* tr = OpRegistry::Global().Find("", "Transpose", 13);
  ASSERT_NE(att, nullptr);
  ASSERT_NE(tr, nullptr);
  Node t;
  t.name = "t";
  t.op_type = "Transpose";
  t.outputs = {0};
  t.attrs["perm"] = IntsAttr({0, 2, 1, 3});
  auto transpose = [&](const Tensor& x) { return tr->run(KernelContext{t, 13, {&x}}).value()[0]; };
  const Tensor q = Filled(DataType::kFloat, {2, 5, 3, 4}, 1), k = Filled(DataType::kFloat, {2, 5, 3, 4}, 2),
               v = Filled(DataType::kFloat, {2, 5, 3, 6}, 3);
  const Node plain = AttentionNode(0.5f);
  const Tensor qt = transpose(q), kt = transpose(k), vt = transpose(v);
  auto want = att->run(KernelContext{plain, 1, {&qt, &kt, &vt}});
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  Node strided = plain;
  for (const char* a : {"q_perm", "k_perm", "v_perm", "out_perm"}) strided.attrs[a] = IntsAttr({0, 2, 1, 3});
  auto got = att->run(KernelContext{strided, 1, {&q, &k, &v}});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const Tensor want_stored = transpose((*want)[0]);
  ASSERT_EQ((*got)[0].shape(), (std::vector<int64_t>{2, 5, 3, 6}));
  EXPECT_LE(RelL2((*got)[0], want_stored), 1e-12);
  // A perm that moves the head dim is refused, naming the node and the attribute.
  strided.attrs["k_perm"] = IntsAttr({0, 1, 3, 2});
  auto bad = att->run(KernelContext{strided, 1, {&q, &k, &v}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("att"), std::string::npos) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("k_perm"), std::string::npos) << bad.status().ToString();
}

}  // namespace
}  // namespace switchyard::testing
