// Unit tests for the gather/scatter and index reference ops: kernels on small
// hand-computed data, symbolic-shape inference and bad-index errors.
#include <gtest/gtest.h>

#include <limits>

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


Attribute Str(std::string s) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(s);
  return a;
}

TEST(GatherScatterOps, GatherNegativeIndexAndBounds) {
  Tensor x = Iota({3, 2});
  Tensor ind = Tensor::FromInt64({-1, 0}, {2});
  Node n = MakeNode("Gather", 2);
  auto r = RunOp(n, 13, {&x, &ind});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{4, 5, 0, 1}));
  // Scalar index on axis 1 removes the axis.
  n.attrs["axis"] = Int(1);
  Tensor one = Tensor::FromInt64({1}, {});
  r = RunOp(n, 13, {&x, &one});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{1, 3, 5}));
  Tensor bad = Tensor::FromInt64({2}, {1});
  auto e = RunOp(n, 13, {&x, &bad});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("'n1'"), std::string::npos);
  // Inference keeps symbols: data [B, 768] gathered by ids [S, T] on axis 0.
  n.attrs.erase("axis");
  TensorType xt(DataType::kFloat, {Dim::Symbol("V"), Dim(768)});
  TensorType it(DataType::kInt64, {Dim::Symbol("S"), Dim::Symbol("T")});
  auto t = InferOp(n, 13, {&xt, &it}, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].ToString(), "float32[S,T,768]");
}

TEST(GatherScatterOps, GatherElementsAndND) {
  Tensor x = Iota({2, 2});
  Tensor ind = Tensor::FromInt64({1, 0, 0, -1}, {2, 2});
  Node n = MakeNode("GatherElements", 2);
  n.attrs["axis"] = Int(1);
  auto r = RunOp(n, 13, {&x, &ind});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{1, 0, 2, 3}));
  // GatherND with batch_dims=1: data [2,2,2], indices [2,1] -> rows per batch.
  Tensor d = Iota({2, 2, 2});
  Tensor nd = Tensor::FromInt64({1, 0}, {2, 1});
  Node g = MakeNode("GatherND", 2);
  g.attrs["batch_dims"] = Int(1);
  r = RunOp(g, 13, {&d, &nd});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{2, 3, 4, 5}));
  Tensor oob = Tensor::FromInt64({2, 0}, {2, 1});
  EXPECT_FALSE(RunOp(g, 13, {&d, &oob}).ok());
}

TEST(GatherScatterOps, ScatterElementsReductionsAndScatterND) {
  Tensor x = Tensor::FromFloat({1, 2, 3, 4}, {4});
  Tensor ind = Tensor::FromInt64({1, 1, -1}, {3});
  Tensor upd = Tensor::FromFloat({10, 20, 30}, {3});
  Node n = MakeNode("ScatterElements", 3);
  n.attrs["reduction"] = Str("add");
  auto r = RunOp(n, 16, {&x, &ind, &upd});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->at(0).ToDoubleVector(), (std::vector<double>{1, 32, 3, 34}));
  n.attrs["reduction"] = Str("max");
  EXPECT_FALSE(RunOp(n, 16, {&x, &ind, &upd}).ok());  // max arrives in opset 18
  r = RunOp(n, 18, {&x, &ind, &upd});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->at(0).ToDoubleVector(), (std::vector<double>{1, 20, 3, 30}));

  Tensor d = Iota({2, 2});
  Tensor ndi = Tensor::FromInt64({1}, {1, 1});
  Tensor ndu = Tensor::FromInt64({7, 8}, {1, 2});
  Node s = MakeNode("ScatterND", 3);
  r = RunOp(s, 13, {&d, &ndi, &ndu});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{0, 1, 7, 8}));
  Tensor bad = Tensor::FromInt64({5}, {1, 1});
  EXPECT_FALSE(RunOp(s, 13, {&d, &bad, &ndu}).ok());
}

TEST(GatherScatterOps, OneHotAndCompress) {
  Tensor ind = Tensor::FromInt64({0, -1, 5}, {3});
  Tensor depth = Tensor::FromInt64({3}, {});
  Tensor vals = Tensor::FromFloat({0, 1}, {2});
  Node n = MakeNode("OneHot", 3);
  auto r = RunOp(n, 11, {&ind, &depth, &vals});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->at(0).shape(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(r->at(0).ToDoubleVector(), (std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0, 0}));

  Tensor x = Iota({2, 3});
  Tensor cond(DataType::kBool, {3});
  cond.SetInt64(0, 1);
  cond.SetInt64(2, 1);
  Node c = MakeNode("Compress", 2);
  c.attrs["axis"] = Int(1);
  r = RunOp(c, 11, {&x, &cond});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{0, 2, 3, 5}));
}

TEST(IndexOps, NonZeroAndTopKTies) {
  Tensor x = Tensor::FromInt64({0, 3, 3, 0, 1, 3}, {2, 3});
  Node nz = MakeNode("NonZero", 1);
  auto r = RunOp(nz, 13, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{0, 0, 1, 1, 1, 2, 1, 2}));

  Tensor v = Tensor::FromInt64({1, 3, 3, 2}, {4});
  Tensor k = Tensor::FromInt64({3}, {1});
  Node t = MakeNode("TopK", 2, 2);
  r = RunOp(t, 11, {&v, &k});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{3, 3, 2}));
  EXPECT_EQ(I64((*r)[1]), (std::vector<int64_t>{1, 2, 3}));  // tie: lower index first
  t.attrs["largest"] = Int(0);
  r = RunOp(t, 11, {&v, &k});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[1]), (std::vector<int64_t>{0, 3, 1}));
  Tensor big = Tensor::FromInt64({5}, {1});
  EXPECT_FALSE(RunOp(t, 11, {&v, &big}).ok());
}

TEST(IndexOps, ArgMaxSelectLastAndKeepdims) {
  Tensor x = Tensor::FromFloat({1, 5, 5, 2, 2, 0}, {2, 3});
  Node n = MakeNode("ArgMax", 1);
  n.attrs["axis"] = Int(-1);
  auto r = RunOp(n, 13, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{1, 0}));
  n.attrs["select_last_index"] = Int(1);
  n.attrs["keepdims"] = Int(0);
  r = RunOp(n, 13, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{2, 1}));
  Node m = MakeNode("ArgMin", 1);
  m.attrs["axis"] = Int(2);
  EXPECT_FALSE(RunOp(m, 13, {&x}).ok());
}

TEST(IndexOps, TriluEyeLikeRangeCumSum) {
  Tensor x = Iota({3, 3});
  Tensor k = Tensor::FromInt64({1}, {});
  Node t = MakeNode("Trilu", 2);
  t.attrs["upper"] = Int(0);
  auto r = RunOp(t, 14, {&x, &k});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{0, 1, 0, 3, 4, 5, 6, 7, 8}));

  Node e = MakeNode("EyeLike", 1);
  e.attrs["k"] = Int(-1);
  Tensor z(DataType::kFloat, {2, 3});
  r = RunOp(e, 9, {&z});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->at(0).ToDoubleVector(), (std::vector<double>{0, 0, 0, 1, 0, 0}));

  Node g = MakeNode("Range", 3);
  Tensor s = Tensor::FromInt64({10}, {}), l = Tensor::FromInt64({4}, {}),
         d = Tensor::FromInt64({-3}, {});
  r = RunOp(g, 11, {&s, &l, &d});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{10, 7}));
  Tensor d0 = Tensor::FromInt64({0}, {});
  EXPECT_FALSE(RunOp(g, 11, {&s, &l, &d0}).ok());

  Node c = MakeNode("CumSum", 2);
  c.attrs["exclusive"] = Int(1);
  c.attrs["reverse"] = Int(1);
  Tensor v = Tensor::FromInt64({1, 2, 3}, {3});
  Tensor axis = Tensor::FromInt64({0}, {});
  r = RunOp(c, 14, {&v, &axis});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{5, 3, 0}));
}

TEST(IndexOps, UniqueUnsortedAllOutputs) {
  Tensor x = Tensor::FromInt64({2, 1, 1, 3, 4, 3}, {6});
  Node n = MakeNode("Unique", 1, 4);
  n.attrs["sorted"] = Int(0);
  auto r = RunOp(n, 11, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{2, 1, 3, 4}));
  EXPECT_EQ(I64((*r)[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(I64((*r)[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(I64((*r)[3]), (std::vector<int64_t>{1, 2, 2, 1}));
  n.attrs["sorted"] = Int(1);
  r = RunOp(n, 11, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(I64((*r)[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
}

}  // namespace
}  // namespace switchyard
