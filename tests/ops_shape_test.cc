// Unit tests for the shape, concat/split/slice/pad and constant reference ops: kernels on
// small hand-computed data and symbolic-shape inference.
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

TEST(ShapeOps, ReshapeZeroAndMinusOne) {
  Node n = MakeNode("Reshape", 2);
  Tensor x = Iota({2, 3, 4});
  Tensor s = Vec({0, -1});
  auto r = RunOp(n, 14, {&x, &s});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(I64((*r)[0]), I64(x));
  // allowzero: a 0 stays 0 and the element count must then match.
  n.attrs["allowzero"] = Int(1);
  Tensor s2 = Vec({0, 24});
  EXPECT_FALSE(RunOp(n, 14, {&x, &s2}).ok());
}

TEST(ShapeOps, ReshapeBadCountIsErrorNamingNode) {
  Node n = MakeNode("Reshape", 2);
  Tensor x = Iota({2, 3});
  Tensor s = Vec({4, -1});
  auto r = RunOp(n, 13, {&x, &s});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'n1'"), std::string::npos) << r.status().ToString();
  Tensor s2 = Vec({-1, -1});
  EXPECT_FALSE(RunOp(n, 13, {&x, &s2}).ok());
}

TEST(ShapeOps, ReshapeInferSymbolic) {
  Node n = MakeNode("Reshape", 2);
  // [batch, seq, 768] -> [0, 0, 12, 64] keeps both symbols.
  TensorType x(DataType::kFloat, {Dim::Symbol("batch"), Dim::Symbol("seq"), Dim(768)});
  TensorType st(DataType::kInt64, {Dim(4)});
  Tensor s = Vec({0, 0, 12, 64});
  auto r = InferOp(n, 14, {&x, &st}, {nullptr, &s});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].ToString(), "float32[batch,seq,12,64]");
  // [batch, seq, 12, 64] -> [0, -1, 768]: -1 resolves to the leftover symbol.
  TensorType x2(DataType::kFloat, {Dim::Symbol("batch"), Dim::Symbol("seq"), Dim(12), Dim(64)});
  Tensor s2 = Vec({0, -1, 768});
  auto r2 = InferOp(n, 14, {&x2, &st}, {nullptr, &s2});
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ((*r2)[0].ToString(), "float32[batch,seq,768]");
  // Non-constant shape of static length 3: rank 3, dims unknown.
  TensorType st3(DataType::kInt64, {Dim(3)});
  auto r3 = InferOp(n, 14, {&x2, &st3}, {});
  ASSERT_TRUE(r3.ok());
  EXPECT_EQ((*r3)[0].ToString(), "float32[?,?,?]");
  // Static mismatch is an error.
  TensorType xs(DataType::kFloat, {Dim(2), Dim(3)});
  Tensor bad = Vec({5});
  EXPECT_FALSE(InferOp(n, 14, {&xs, &st}, {nullptr, &bad}).ok());
}

TEST(ShapeOps, FlattenNegativeAxis) {
  Node n = MakeNode("Flatten", 1);
  n.attrs["axis"] = Int(-1);
  Tensor x = Iota({2, 3, 4});
  auto r = RunOp(n, 13, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{6, 4}));
  TensorType xt(DataType::kFloat, {Dim::Symbol("N"), Dim(3), Dim(4)});
  n.attrs["axis"] = Int(1);
  auto t = InferOp(n, 13, {&xt}, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].ToString(), "float32[N,12]");
}

TEST(ShapeOps, SqueezeUnsqueezeAttrAndInput) {
  Tensor x = Iota({1, 3, 1});
  Node sq11 = MakeNode("Squeeze", 1);
  sq11.attrs["axes"] = Ints({-1});
  auto r = RunOp(sq11, 11, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{1, 3}));
  Node sq13 = MakeNode("Squeeze", 1);  // no axes: all 1s
  r = RunOp(sq13, 13, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{3}));
  Node bad = MakeNode("Squeeze", 2);
  Tensor ax1 = Vec({1});
  EXPECT_FALSE(RunOp(bad, 13, {&x, &ax1}).ok());  // axis 1 has size 3

  Node un = MakeNode("Unsqueeze", 2);
  Tensor y = Iota({3});
  Tensor axes = Vec({0, -1});
  r = RunOp(un, 13, {&y, &axes});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{1, 3, 1}));
  TensorType yt(DataType::kInt64, {Dim::Symbol("S")});
  TensorType at(DataType::kInt64, {Dim(2)});
  auto t = InferOp(un, 13, {&yt, &at}, {nullptr, &axes});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].ToString(), "int64[1,S,1]");
}

TEST(ShapeOps, TransposeDefaultAndPerm) {
  Tensor x = Iota({2, 3});
  Node n = MakeNode("Transpose", 1);
  auto r = RunOp(n, 13, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  n.attrs["perm"] = Ints({0, 0});
  EXPECT_FALSE(RunOp(n, 13, {&x}).ok());
  n.attrs["perm"] = Ints({1, 0});
  TensorType xt(DataType::kFloat, {Dim::Symbol("B"), Dim(7)});
  auto t = InferOp(n, 13, {&xt}, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].ToString(), "float32[7,B]");
}

TEST(ShapeOps, ShapeStartEndAndSize) {
  Tensor x = Iota({2, 3, 4, 5});
  Node n = MakeNode("Shape", 1);
  n.attrs["start"] = Int(-3);
  n.attrs["end"] = Int(-1);
  auto r = RunOp(n, 15, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{3, 4}));
  Node s = MakeNode("Size", 1);
  r = RunOp(s, 13, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].GetInt64(0), 120);
  EXPECT_EQ((*r)[0].rank(), 0);
}

TEST(ShapeOps, ExpandAndTile) {
  Tensor x = Iota({3, 1});
  Tensor shape = Vec({2, 1, 2});
  Node e = MakeNode("Expand", 2);
  auto r = RunOp(e, 13, {&x, &shape});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  Tensor bad = Vec({2, 4});
  EXPECT_FALSE(RunOp(e, 13, {&x, &bad}).ok());

  Node t = MakeNode("Tile", 2);
  Tensor y = Iota({2});
  Tensor reps = Vec({3});
  r = RunOp(t, 13, {&y, &reps});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{0, 1, 0, 1, 0, 1}));
}

TEST(ConcatSplit, ConcatNegativeAxisAndSymbolicInference) {
  Tensor a = Iota({2, 1}), b = Iota({2, 2});
  Node n = MakeNode("Concat", 2);
  n.attrs["axis"] = Int(-1);
  auto r = RunOp(n, 13, {&a, &b});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{0, 0, 1, 1, 2, 3}));
  TensorType ta(DataType::kInt64, {Dim::Symbol("N"), Dim(1)});
  TensorType tb(DataType::kInt64, {Dim::Symbol("N"), Dim(2)});
  auto t = InferOp(n, 13, {&ta, &tb}, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].ToString(), "int64[N,3]");
  Tensor c = Iota({3, 1});
  EXPECT_FALSE(RunOp(n, 13, {&a, &c}).ok());
}

TEST(ConcatSplit, SplitInputAndNumOutputs) {
  Tensor x = Iota({5});
  Node n = MakeNode("Split", 2, 2);
  Tensor sp = Vec({2, 3});
  auto r = RunOp(n, 13, {&x, &sp});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[1]), (std::vector<int64_t>{2, 3, 4}));
  Node n18 = MakeNode("Split", 1, 3);
  n18.attrs["num_outputs"] = Int(3);
  r = RunOp(n18, 18, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ((*r)[2].shape(), (std::vector<int64_t>{1}));
  Node bad = MakeNode("Split", 1, 2);  // 5 does not split evenly in two before opset 18
  EXPECT_FALSE(RunOp(bad, 13, {&x}).ok());
}

TEST(ConcatSplit, SliceNegativeStepAndClamping) {
  Tensor x = Iota({6});
  Node n = MakeNode("Slice", 5);
  Tensor starts = Vec({-1}), ends = Vec({std::numeric_limits<int64_t>::min()}), axes = Vec({0}),
         steps = Vec({-2});
  auto r = RunOp(n, 13, {&x, &starts, &ends, &axes, &steps});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{5, 3, 1}));
  Tensor s2 = Vec({1}), e2 = Vec({std::numeric_limits<int64_t>::max()});
  r = RunOp(n, 13, {&x, &s2, &e2, nullptr, nullptr});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  Tensor zero = Vec({0});
  EXPECT_FALSE(RunOp(n, 13, {&x, &s2, &e2, &axes, &zero}).ok());
  // Opset 1: attributes.
  Node n1 = MakeNode("Slice", 1);
  n1.attrs["starts"] = Ints({2});
  n1.attrs["ends"] = Ints({4});
  r = RunOp(n1, 9, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{2, 3}));
  // Inference: a full slice keeps a symbolic dim; a sliced static dim is computed.
  TensorType xt(DataType::kInt64, {Dim::Symbol("B"), Dim(10)});
  Tensor st = Vec({0, 2}), en = Vec({std::numeric_limits<int64_t>::max(), -1});
  TensorType vt(DataType::kInt64, {Dim(2)});
  Node n3 = MakeNode("Slice", 3);
  auto t = InferOp(n3, 13, {&xt, &vt, &vt}, {nullptr, &st, &en});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)[0].ToString(), "int64[B,7]");
}

TEST(ConcatSplit, PadModes) {
  Tensor x = Tensor::FromFloat({1, 2, 3}, {3});
  Tensor pads = Vec({2, 1});
  Node n = MakeNode("Pad", 2);
  auto get = [&](const std::string& mode) {
    Attribute m;
    m.kind = Attribute::Kind::kString;
    m.s = mode;
    n.attrs["mode"] = m;
    auto r = RunOp(n, 19, {&x, &pads});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return (*r)[0].ToDoubleVector();
  };
  EXPECT_EQ(get("constant"), (std::vector<double>{0, 0, 1, 2, 3, 0}));
  EXPECT_EQ(get("edge"), (std::vector<double>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(get("reflect"), (std::vector<double>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(get("wrap"), (std::vector<double>{2, 3, 1, 2, 3, 1}));
  // Negative pads crop; a constant_value input fills.
  Tensor crop = Vec({-1, 1});
  Tensor cv = Tensor::FromFloat({9}, {});
  n.attrs.erase("mode");
  auto r = RunOp(n, 13, {&x, &crop, &cv});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->at(0).ToDoubleVector(), (std::vector<double>{2, 3, 9}));
  Tensor bad = Vec({1});
  EXPECT_FALSE(RunOp(n, 13, {&x, &bad}).ok());
}

TEST(ConstantOps, ConstantAndConstantOfShape) {
  Node c = MakeNode("Constant", 0);
  c.attrs["value_ints"] = Ints({4, 5});
  auto r = RunOp(c, 13, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{4, 5}));
  c.attrs["value_int"] = Int(3);  // two value attributes: an error
  EXPECT_FALSE(RunOp(c, 13, {}).ok());

  Node k = MakeNode("ConstantOfShape", 1);
  Attribute v;
  v.kind = Attribute::Kind::kTensor;
  v.t = Tensor::FromInt64({7}, {1});
  k.attrs["value"] = v;
  Tensor shape = Vec({2, 2});
  r = RunOp(k, 9, {&shape});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->at(0).dtype(), DataType::kInt64);
  EXPECT_EQ(I64((*r)[0]), (std::vector<int64_t>{7, 7, 7, 7}));
  Tensor neg = Vec({-2});
  EXPECT_FALSE(RunOp(k, 9, {&neg}).ok());
}

}  // namespace
}  // namespace switchyard
