// Unit tests for NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/op_registry.h"
#include "reference/ops/common.h"

namespace switchyard {
namespace {

Node MakeNode(const std::string& op, const std::string& reduction, size_t outputs = 1) {
  Node n;
  n.name = "loss";
  n.op_type = op;
  for (size_t i = 0; i < outputs; ++i) n.outputs.push_back(static_cast<ValueId>(i));
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = reduction;
  n.attrs["reduction"] = a;
  return n;
}
void SetInt(Node& n, const std::string& k, int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  n.attrs[k] = a;
}

Result<std::vector<Tensor>> RunOp(const Node& n, std::vector<const Tensor*> in) {
  const OpSchema* s = OpRegistry::Global().Find("", n.op_type, 13);
  if (!s) return Status::NotFound("no schema");
  return s->run(KernelContext{n, 13, std::move(in)});
}

TEST(LossOps, NllNoneSumMean) {
  // input [2, 3] log-probs, target {2, 0}.
  Tensor x = Tensor::FromFloat({-1, -2, -3, -4, -5, -6}, {2, 3});
  Tensor t = Tensor::FromInt64({2, 0}, {2});
  auto none = RunOp(MakeNode("NegativeLogLikelihoodLoss", "none"), {&x, &t});
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ((*none)[0].shape(), (std::vector<int64_t>{2}));
  EXPECT_NEAR((*none)[0].GetDouble(0), 3, 1e-6);
  EXPECT_NEAR((*none)[0].GetDouble(1), 4, 1e-6);
  auto sum = RunOp(MakeNode("NegativeLogLikelihoodLoss", "sum"), {&x, &t});
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ((*sum)[0].rank(), 0);
  EXPECT_NEAR((*sum)[0].GetDouble(0), 7, 1e-6);
  // Weighted mean divides by the sum of the gathered weights: (3*2 + 4*1) / 3.
  Tensor w = Tensor::FromFloat({1, 0.5f, 2}, {3});
  auto mean = RunOp(MakeNode("NegativeLogLikelihoodLoss", "mean"), {&x, &t, &w});
  ASSERT_TRUE(mean.ok());
  EXPECT_NEAR((*mean)[0].GetDouble(0), 10.0 / 3.0, 1e-6);
}

TEST(LossOps, NllIgnoreIndexAndOutOfRange) {
  Tensor x = Tensor::FromFloat({-1, -2, -3, -4, -5, -6}, {2, 3});
  Tensor t = Tensor::FromInt64({7, 1}, {2});
  Node n = MakeNode("NegativeLogLikelihoodLoss", "mean");
  SetInt(n, "ignore_index", 7);
  auto r = RunOp(n, {&x, &t});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR((*r)[0].GetDouble(0), 5, 1e-6);  // only the second element counts
  // Without ignore_index the target 7 is out of range: an error, not a crash.
  auto bad = RunOp(MakeNode("NegativeLogLikelihoodLoss", "mean"), {&x, &t});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'loss'"), std::string::npos);
}

TEST(LossOps, SoftmaxCrossEntropyWithLogProbAndSpatialDims) {
  // input [1, 2, 2] (N=1, C=2, d1=2) with equal scores: log_prob = -log 2 everywhere.
  Tensor x = Tensor::FromFloat({0, 0, 0, 0}, {1, 2, 2});
  Tensor t(DataType::kInt32, {1, 2});
  t.SetInt64(0, 1);
  t.SetInt64(1, 0);
  auto r = RunOp(MakeNode("SoftmaxCrossEntropyLoss", "none", 2), {&x, &t});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_NEAR((*r)[0].GetDouble(0), std::log(2.0), 1e-6);
  EXPECT_EQ((*r)[1].shape(), x.shape());
  EXPECT_NEAR((*r)[1].GetDouble(3), -std::log(2.0), 1e-6);
}

TEST(LossOps, InferShapesAndErrors) {
  const OpSchema* s = OpRegistry::Global().Find("", "SoftmaxCrossEntropyLoss", 13);
  ASSERT_NE(s, nullptr);
  TensorType x(DataType::kFloat, {Dim::Symbol("N"), Dim(10), Dim(5)});
  TensorType t(DataType::kInt64, {Dim::Symbol("N"), Dim(5)});
  Node none = MakeNode("SoftmaxCrossEntropyLoss", "none", 2);
  auto r = s->infer(InferContext{none, 13, {&x, &t}, {nullptr, nullptr}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].dims[0].symbol, "N");
  EXPECT_EQ((*r)[1].dims[1].value, 10);
  Node mean = MakeNode("SoftmaxCrossEntropyLoss", "mean");
  auto m = s->infer(InferContext{mean, 13, {&x, &t}, {nullptr, nullptr}});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)[0].rank(), 0);
  Node bad = MakeNode("SoftmaxCrossEntropyLoss", "average");
  EXPECT_FALSE(s->infer(InferContext{bad, 13, {&x, &t}, {nullptr, nullptr}}).ok());
  TensorType tf(DataType::kFloat, {Dim::Symbol("N"), Dim(5)});
  EXPECT_FALSE(s->infer(InferContext{mean, 13, {&x, &tf}, {nullptr, nullptr}}).ok());
}

}  // namespace
}  // namespace switchyard
