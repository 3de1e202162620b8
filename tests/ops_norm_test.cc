// Unit tests for the normalization ops (BatchNorm, InstanceNorm, LayerNorm, GroupNorm,
// LpNorm, MeanVarianceNormalization, LRN).
#include <gtest/gtest.h>

#include <cmath>

#include "reference/op_registry.h"
#include "reference/ops/common.h"

namespace switchyard {
namespace {

Node MakeNode(const std::string& op, size_t outputs = 1) {
  Node n;
  n.name = "norm";
  n.op_type = op;
  for (size_t i = 0; i < outputs; ++i) n.outputs.push_back(static_cast<ValueId>(i));
  return n;
}
void SetInt(Node& n, const std::string& k, int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  n.attrs[k] = a;
}
void SetFloat(Node& n, const std::string& k, float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  n.attrs[k] = a;
}

Result<std::vector<Tensor>> RunOp(const Node& n, int opset, std::vector<const Tensor*> in) {
  const OpSchema* s = OpRegistry::Global().Find("", n.op_type, opset);
  if (!s) return Status::NotFound("no schema");
  return s->run(KernelContext{n, opset, std::move(in)});
}

TEST(NormOps, BatchNormInference) {
  // x [1, 2, 2]: channel 0 = {1, 3}, channel 1 = {2, 4}.
  Tensor x = Tensor::FromFloat({1, 3, 2, 4}, {1, 2, 2});
  Tensor scale = Tensor::FromFloat({2, 1}, {2}), b = Tensor::FromFloat({0, 1}, {2});
  Tensor mean = Tensor::FromFloat({1, 0}, {2}), var = Tensor::FromFloat({4, 1}, {2});
  Node n = MakeNode("BatchNormalization");
  SetFloat(n, "epsilon", 0);
  auto r = RunOp(n, 15, {&x, &scale, &b, &mean, &var});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<double> want = {0, 2, 3, 5};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR((*r)[0].GetDouble(i), want[static_cast<size_t>(i)], 1e-6);
}

TEST(NormOps, BatchNormTrainingModeOutputs) {
  Tensor x = Tensor::FromFloat({1, 3}, {2, 1});  // N=2, C=1: batch mean 2, var 1
  Tensor one = Tensor::FromFloat({1}, {1}), zero = Tensor::FromFloat({0}, {1});
  Node n = MakeNode("BatchNormalization", 3);
  SetInt(n, "training_mode", 1);
  SetFloat(n, "epsilon", 0);
  SetFloat(n, "momentum", 0.5f);
  auto r = RunOp(n, 15, {&x, &one, &zero, &zero, &one});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR((*r)[0].GetDouble(0), -1, 1e-6);
  EXPECT_NEAR((*r)[0].GetDouble(1), 1, 1e-6);
  EXPECT_NEAR((*r)[1].GetDouble(0), 1.0, 1e-6);  // 0*0.5 + 2*0.5
  EXPECT_NEAR((*r)[2].GetDouble(0), 1.0, 1e-6);  // 1*0.5 + 1*0.5
}

TEST(NormOps, BatchNormWrongParamSizeIsError) {
  Tensor x = Tensor::FromFloat({1, 3, 2, 4}, {1, 2, 2});
  Tensor p3 = Tensor::FromFloat({1, 1, 1}, {3});
  auto r = RunOp(MakeNode("BatchNormalization"), 15, {&x, &p3, &p3, &p3, &p3});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'norm'"), std::string::npos);
}

TEST(NormOps, LayerNormWithStatsAndNegativeAxis) {
  Tensor x = Tensor::FromFloat({1, 3, 5, 5}, {2, 2});
  Tensor scale = Tensor::FromFloat({1, 2}, {2}), b = Tensor::FromFloat({0, 1}, {2});
  Node n = MakeNode("LayerNormalization", 3);
  SetInt(n, "axis", -1);
  SetFloat(n, "epsilon", 0);
  auto r = RunOp(n, 17, {&x, &scale, &b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR((*r)[0].GetDouble(0), -1, 1e-6);
  EXPECT_NEAR((*r)[0].GetDouble(1), 3, 1e-6);
  EXPECT_EQ((*r)[1].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_NEAR((*r)[1].GetDouble(0), 2, 1e-6);
  EXPECT_NEAR((*r)[2].GetDouble(0), 1, 1e-6);
  EXPECT_NEAR((*r)[1].GetDouble(1), 5, 1e-6);
}

TEST(NormOps, LayerNormInferSymbolic) {
  Node n = MakeNode("LayerNormalization", 2);
  TensorType x(DataType::kFloat16, {Dim::Symbol("B"), Dim::Symbol("S"), Dim(768)});
  TensorType s(DataType::kFloat16, {Dim(768)});
  const OpSchema* schema = OpRegistry::Global().Find("", "LayerNormalization", 17);
  ASSERT_NE(schema, nullptr);
  auto r = schema->infer(InferContext{n, 17, {&x, &s}, {nullptr, nullptr}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].dims[1].symbol, "S");
  EXPECT_EQ((*r)[1].dtype, DataType::kFloat);  // stash_type default float
  EXPECT_EQ((*r)[1].dims[0].symbol, "B");
  EXPECT_EQ((*r)[1].dims[2].value, 1);
}

TEST(NormOps, InstanceAndGroupNorm) {
  // x [1, 2, 2]; instance norm per channel gives {-1, 1} for each channel.
  Tensor x = Tensor::FromFloat({0, 2, 10, 20}, {1, 2, 2});
  Tensor one = Tensor::FromFloat({1, 1}, {2}), zero = Tensor::FromFloat({0, 0}, {2});
  Node in = MakeNode("InstanceNormalization");
  SetFloat(in, "epsilon", 0);
  auto r = RunOp(in, 17, {&x, &one, &zero});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR((*r)[0].GetDouble(0), -1, 1e-6);
  EXPECT_NEAR((*r)[0].GetDouble(3), 1, 1e-6);
  // Group norm with one group normalises all four values together; opset 21 has
  // per-channel scale: channel 1 scaled by 2.
  Node gn = MakeNode("GroupNormalization");
  SetInt(gn, "num_groups", 1);
  SetFloat(gn, "epsilon", 0);
  Tensor s21 = Tensor::FromFloat({1, 2}, {2});
  auto g = RunOp(gn, 21, {&x, &s21, &zero});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const double mean = 8, sd = std::sqrt((64 + 36 + 4 + 144) / 4.0);
  EXPECT_NEAR((*g)[0].GetDouble(0), (0 - mean) / sd, 1e-6);
  EXPECT_NEAR((*g)[0].GetDouble(3), 2 * (20 - mean) / sd, 1e-6);
  SetInt(gn, "num_groups", 3);  // does not divide C = 2
  EXPECT_FALSE(RunOp(gn, 21, {&x, &s21, &zero}).ok());
}

TEST(NormOps, LpNormAndMvnAndLrn) {
  Tensor x = Tensor::FromFloat({3, 4, 0, 0}, {2, 2});
  Node lp = MakeNode("LpNormalization");
  auto r = RunOp(lp, 17, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR((*r)[0].GetDouble(0), 0.6, 1e-6);
  EXPECT_NEAR((*r)[0].GetDouble(1), 0.8, 1e-6);
  EXPECT_EQ((*r)[0].GetDouble(2), 0);  // zero slice stays zero
  SetInt(lp, "p", 3);
  EXPECT_FALSE(RunOp(lp, 17, {&x}).ok());

  Tensor m = Tensor::FromFloat({1, 3, 5, 7}, {1, 1, 2, 2});
  auto mv = RunOp(MakeNode("MeanVarianceNormalization"), 13, {&m});
  ASSERT_TRUE(mv.ok());
  const double sd = std::sqrt(5.0);
  EXPECT_NEAR((*mv)[0].GetDouble(0), -3 / sd, 1e-6);

  // LRN size 1: y = x / (bias + alpha * x^2)^beta.
  Node lrn = MakeNode("LRN");
  SetInt(lrn, "size", 1);
  SetFloat(lrn, "alpha", 1);
  SetFloat(lrn, "beta", 1);
  SetFloat(lrn, "bias", 1);
  Tensor l = Tensor::FromFloat({1, 2}, {1, 2});
  auto lr = RunOp(lrn, 13, {&l});
  ASSERT_TRUE(lr.ok());
  EXPECT_NEAR((*lr)[0].GetDouble(1), 2.0 / 5.0, 1e-6);
}

}  // namespace
}  // namespace switchyard
