// Unit tests for Softmax, LogSoftmax and Hardmax (reference kernels and inference).
#include <gtest/gtest.h>

#include <cmath>

#include "reference/op_registry.h"
#include "reference/ops/common.h"

namespace switchyard {
namespace {

Node MakeNode(const std::string& op, std::optional<int64_t> axis = std::nullopt) {
  Node n;
  n.name = "sm";
  n.op_type = op;
  n.outputs = {0};
  if (axis) {
    Attribute a;
    a.kind = Attribute::Kind::kInt;
    a.i = *axis;
    n.attrs["axis"] = a;
  }
  return n;
}

Result<std::vector<Tensor>> RunOp(const Node& n, int opset, const Tensor& x) {
  const OpSchema* s = OpRegistry::Global().Find("", n.op_type, opset);
  if (!s) return Status::NotFound("no schema");
  return s->run(KernelContext{n, opset, {&x}});
}

TEST(SoftmaxOp, PerAxisOpset13) {
  // [2, 2]: softmax over axis 0 (columns).
  Tensor x = Tensor::FromFloat({0, 1, 0, 3}, {2, 2});
  auto r = RunOp(MakeNode("Softmax", 0), 13, x);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Tensor& y = (*r)[0];
  EXPECT_NEAR(y.GetDouble(0), 0.5, 1e-6);
  EXPECT_NEAR(y.GetDouble(2), 0.5, 1e-6);
  EXPECT_NEAR(y.GetDouble(1), 1 / (1 + std::exp(2.0)), 1e-6);
  EXPECT_NEAR(y.GetDouble(3), 1 / (1 + std::exp(-2.0)), 1e-6);
}

TEST(SoftmaxOp, Coerced2DBeforeOpset13) {
  // Opset 11, axis 1 on [1, 2, 2]: one softmax over all four elements.
  Tensor x = Tensor::FromFloat({1, 1, 1, 1}, {1, 2, 2});
  auto r = RunOp(MakeNode("Softmax", 1), 11, x);
  ASSERT_TRUE(r.ok());
  for (int i = 0; i < 4; ++i) EXPECT_NEAR((*r)[0].GetDouble(i), 0.25, 1e-6);
  // Opset 13 default axis -1: softmax over pairs.
  auto r13 = RunOp(MakeNode("Softmax"), 13, x);
  ASSERT_TRUE(r13.ok());
  for (int i = 0; i < 4; ++i) EXPECT_NEAR((*r13)[0].GetDouble(i), 0.5, 1e-6);
}

TEST(SoftmaxOp, LogSoftmaxLargeNumbersAndDouble) {
  Tensor x(DataType::kDouble, {3});
  x.SetDouble(0, 1000);
  x.SetDouble(1, 1000);
  x.SetDouble(2, 1000);
  auto r = RunOp(MakeNode("LogSoftmax", -1), 13, x);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].dtype(), DataType::kDouble);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR((*r)[0].GetDouble(i), -std::log(3.0), 1e-9);
}

TEST(SoftmaxOp, HardmaxFirstMaxWins) {
  Tensor x = Tensor::FromFloat({3, 1, 3, 2, 2, 2}, {2, 3});
  auto r = RunOp(MakeNode("Hardmax", -1), 13, x);
  ASSERT_TRUE(r.ok());
  const std::vector<double> want = {1, 0, 0, 1, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ((*r)[0].GetDouble(i), want[static_cast<size_t>(i)]);
}

TEST(SoftmaxOp, InferKeepsSymbolicDims) {
  Node n = MakeNode("Softmax", -1);
  TensorType t(DataType::kFloat, {Dim::Symbol("batch"), Dim(10)});
  const OpSchema* s = OpRegistry::Global().Find("", "Softmax", 13);
  ASSERT_NE(s, nullptr);
  auto r = s->infer(InferContext{n, 13, {&t}, {nullptr}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].dims[0].symbol, "batch");
  EXPECT_EQ((*r)[0].dims[1].value, 10);
}

TEST(SoftmaxOp, BadAxisAndIntInputAreErrors) {
  Tensor x = Tensor::FromFloat({1, 2}, {2});
  auto r = RunOp(MakeNode("Softmax", 3), 13, x);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'sm'"), std::string::npos);
  Tensor xi = Tensor::FromInt64({1, 2}, {2});
  EXPECT_FALSE(RunOp(MakeNode("Softmax"), 13, xi).ok());
}

}  // namespace
}  // namespace switchyard
