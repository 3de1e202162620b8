// Unit tests for the Reduce* reference ops: axes as attribute or input, keepdims,
// noop_with_empty_axes, empty-set identities, int exactness and symbolic inference.
#include <gtest/gtest.h>

#include <limits>

#include <cmath>

#include "reference/op_registry.h"
#include "reference/ops/common.h"
#include "op_test_util.h"

namespace switchyard {
namespace {

using optest::I64;
using optest::InferOp;
using optest::Int;
using optest::Ints;
using optest::Iota;
using optest::MakeNode;
using optest::RunOp;
using optest::Vec;


TEST(ReduceOps, SumAxesAttributeVsInput) {
  Tensor x = Tensor::FromFloat({1, 2, 3, 4, 5, 6}, {2, 3});
  Node n11 = MakeNode("ReduceSum", 1);
  n11.attrs["axes"] = Ints({-1});
  auto r = RunOp(n11, 11, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(r->at(0).ToDoubleVector(), (std::vector<double>{6, 15}));
  Node n13 = MakeNode("ReduceSum", 2);
  n13.attrs["keepdims"] = Int(0);
  Tensor axes = Vec({0});
  r = RunOp(n13, 13, {&x, &axes});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(r->at(0).ToDoubleVector(), (std::vector<double>{5, 7, 9}));
  // No axes: everything; with noop_with_empty_axes: identity.
  Node all = MakeNode("ReduceSum", 1);
  all.attrs["keepdims"] = Int(0);
  r = RunOp(all, 13, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].rank(), 0);
  EXPECT_EQ((*r)[0].GetDouble(0), 21);
  all.attrs["noop_with_empty_axes"] = Int(1);
  r = RunOp(all, 13, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), x.shape());
  Tensor bad = Vec({2});
  EXPECT_FALSE(RunOp(n13, 13, {&x, &bad}).ok());
}

TEST(ReduceOps, OtherKindsOpset18) {
  Tensor x = Tensor::FromFloat({1, -2, 3, 4}, {2, 2});
  Tensor axes = Vec({1});
  auto reduce = [&](const std::string& op) {
    Node n = MakeNode(op, 2);
    n.attrs["keepdims"] = Int(0);
    auto r = RunOp(n, 18, {&x, &axes});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r->at(0).ToDoubleVector();
  };
  EXPECT_EQ(reduce("ReduceMean"), (std::vector<double>{-0.5, 3.5}));
  EXPECT_EQ(reduce("ReduceMax"), (std::vector<double>{1, 4}));
  EXPECT_EQ(reduce("ReduceMin"), (std::vector<double>{-2, 3}));
  EXPECT_EQ(reduce("ReduceProd"), (std::vector<double>{-2, 12}));
  EXPECT_EQ(reduce("ReduceL1"), (std::vector<double>{3, 7}));
  EXPECT_EQ(reduce("ReduceSumSquare"), (std::vector<double>{5, 25}));
  const auto l2 = reduce("ReduceL2");
  EXPECT_NEAR(l2[1], 5.0, 1e-6);
  const auto lse = reduce("ReduceLogSumExp");
  EXPECT_NEAR(lse[1], std::log(std::exp(3.0) + std::exp(4.0)), 1e-5);
  const auto ls = reduce("ReduceLogSum");
  EXPECT_NEAR(ls[1], std::log(7.0), 1e-6);
  // Opset 13 ReduceMean takes axes as an attribute, so two inputs are not accepted.
  const OpSchema* s = OpRegistry::Global().Find("", "ReduceMean", 13);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->max_inputs, 1);
}

TEST(ReduceOps, EmptySetIdentities) {
  Tensor x(DataType::kFloat, {2, 0});
  Tensor axes = Vec({1});
  auto reduce = [&](const std::string& op) {
    Node n = MakeNode(op, 2);
    auto r = RunOp(n, 18, {&x, &axes});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->at(0).shape(), (std::vector<int64_t>{2, 1}));
    return r->at(0).GetDouble(0);
  };
  EXPECT_EQ(reduce("ReduceSum"), 0);
  EXPECT_EQ(reduce("ReduceProd"), 1);
  EXPECT_EQ(reduce("ReduceMax"), -INFINITY);
  EXPECT_EQ(reduce("ReduceMin"), INFINITY);
  EXPECT_EQ(reduce("ReduceLogSumExp"), -INFINITY);
}

TEST(ReduceOps, Int64IsExact) {
  const int64_t big = (int64_t{1} << 60) + 1;
  Tensor x = Tensor::FromInt64({big, 1}, {2});
  Node n = MakeNode("ReduceSum", 1);
  n.attrs["keepdims"] = Int(0);
  auto r = RunOp(n, 13, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].dtype(), DataType::kInt64);
  EXPECT_EQ((*r)[0].GetInt64(0), big + 1);
}

// Integer reductions wrap around as numpy and ONNX Runtime compute them (two's complement);
// in C++ the overflow was undefined behaviour, found by fuzzing onnx_import (a constant-
// folded ReduceSumSquare; input tests/fuzz_regressions/reduce_sum_square_overflow.onnx,
// replayed under UBSan by scripts/fuzz.sh). Expected values from numpy.
TEST(ReduceOps, Int64OverflowWrapsAround) {
  Tensor x = Tensor::FromInt64({3037000500, (int64_t{1} << 62) + 7}, {2});
  auto reduce = [&](const std::string& op, const Tensor& in) {
    Node n = MakeNode(op, 1);
    n.attrs["keepdims"] = Int(0);
    auto r = RunOp(n, 13, {&in});
    EXPECT_TRUE(r.ok()) << op << ": " << r.status().ToString();
    return r.ok() ? (*r)[0].GetInt64(0) : 0;
  };
  EXPECT_EQ(reduce("ReduceSumSquare", x), 145474241);
  EXPECT_EQ(reduce("ReduceProd", x), 21259003500);
  const Tensor most_negative = Tensor::FromInt64({std::numeric_limits<int64_t>::min()}, {1});
  EXPECT_EQ(reduce("ReduceL1", most_negative), std::numeric_limits<int64_t>::min());
}

TEST(ReduceOps, InferenceKeepsSymbols) {
  Node n = MakeNode("ReduceMean", 1);
  n.attrs["axes"] = Ints({-1});
  TensorType xt(DataType::kFloat, {Dim::Symbol("B"), Dim::Symbol("S"), Dim(768)});
  auto t = InferOp(n, 13, {&xt}, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].ToString(), "float32[B,S,1]");
  // Opset 18, axes not constant, keepdims=0 with static axes length 1: rank 2.
  Node m = MakeNode("ReduceMean", 2);
  m.attrs["keepdims"] = Int(0);
  TensorType at(DataType::kInt64, {Dim(1)});
  t = InferOp(m, 18, {&xt, &at}, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].ToString(), "float32[?,?]");
  n.attrs["axes"] = Ints({3});
  EXPECT_FALSE(InferOp(n, 13, {&xt}, {}).ok());
}

}  // namespace
}  // namespace switchyard
