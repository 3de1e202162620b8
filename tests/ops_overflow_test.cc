// Regressions for integer-overflow findings of the fuzzers in the reference ops: hostile
// attributes (dilations 2^62, blocksize 2^62, scale 1e30, repeats 2^62, huge dims) must
// give a node error naming the attribute, never signed overflow or an out-of-range cast.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "reference/op_registry.h"
#include "op_test_util.h"

namespace switchyard {
namespace {

using optest::InferOp;
using optest::Int;
using optest::Ints;
using optest::MakeNode;
using optest::RunOp;
using optest::Vec;

constexpr int64_t k2p40 = int64_t{1} << 40;
constexpr int64_t k2p62 = int64_t{1} << 62;

// The status is an error whose message contains every one of `words`.
void ExpectErrorNaming(const Status& st, std::initializer_list<std::string> words) {
  ASSERT_FALSE(st.ok()) << "expected an error";
  for (const std::string& w : words) {
    EXPECT_NE(st.ToString().find(w), std::string::npos) << st.ToString() << " lacks '" << w << "'";
  }
}

Tensor Floats(std::vector<int64_t> shape) {
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

Attribute Str(std::string s) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(s);
  return a;
}

TEST(OpsOverflow, TileRepeatsOverflowIsError) {
  Node n = MakeNode("Tile", 2);
  Tensor reps = Vec({k2p62, 1});
  Tensor x = Floats({2, 3});
  ExpectErrorNaming(RunOp(n, 13, {&x, &reps}).status(), {"repeats[0]", "overflows"});
  TensorType xt(DataType::kFloat, {k2p40, 3});
  TensorType rt(DataType::kInt64, {2});
  Tensor reps2 = Vec({k2p40, 1});
  ExpectErrorNaming(InferOp(n, 13, {&xt, &rt}, {nullptr, &reps2}).status(),
                    {"repeats[0]", "overflows"});
  // A sane product still infers.
  Tensor ok_reps = Vec({2, 1});
  auto ok = InferOp(n, 13, {&xt, &rt}, {nullptr, &ok_reps});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)[0].dims[0].value, 2 * k2p40);
}

TEST(OpsOverflow, ConvHugeDilationsStridesPadsAreErrors) {
  Tensor x = Floats({1, 1, 5, 5});
  Tensor w = Floats({1, 1, 3, 3});
  TensorType xt(DataType::kFloat, {1, 1, 5, 5});
  TensorType wt(DataType::kFloat, {1, 1, 3, 3});
  for (const char* attr : {"dilations", "strides"}) {
    Node n = MakeNode("Conv", 2);
    n.attrs[attr] = Ints({k2p62, 1});
    ExpectErrorNaming(RunOp(n, 11, {&x, &w}).status(), {std::string(attr) + "[0]", "out of range"});
    ExpectErrorNaming(InferOp(n, 11, {&xt, &wt}, {}).status(), {std::string(attr) + "[0]"});
  }
  Node p = MakeNode("Conv", 2);
  p.attrs["pads"] = Ints({0, 0, k2p62, k2p62});
  ExpectErrorNaming(RunOp(p, 11, {&x, &w}).status(), {"pads[2]", "out of range"});
  // Pooling shares the window rules.
  Node m = MakeNode("MaxPool", 1);
  m.attrs["kernel_shape"] = Ints({2, 2});
  m.attrs["dilations"] = Ints({1, k2p62});
  ExpectErrorNaming(RunOp(m, 12, {&x}).status(), {"dilations[1]"});
  // Just below the bound is accepted by the window check and then refused honestly.
  Node big = MakeNode("Conv", 2);
  big.attrs["dilations"] = Ints({(int64_t{1} << 31) - 1, 1});
  ExpectErrorNaming(RunOp(big, 11, {&x, &w}).status(), {"smaller than the dilated kernel"});
}

TEST(OpsOverflow, ConvTransposeHugeOutputPaddingAndShapeAreErrors) {
  Tensor x = Floats({1, 1, 3, 3});
  Tensor w = Floats({1, 1, 3, 3});
  TensorType xt(DataType::kFloat, {1, 1, 3, 3});
  TensorType wt(DataType::kFloat, {1, 1, 3, 3});
  Node pad = MakeNode("ConvTranspose", 2);
  pad.attrs["strides"] = Ints({2, 2});
  pad.attrs["output_padding"] = Ints({k2p62, 0});
  ExpectErrorNaming(RunOp(pad, 11, {&x, &w}).status(), {"output_padding", "2^31"});
  ExpectErrorNaming(InferOp(pad, 11, {&xt, &wt}, {}).status(), {"output_padding"});
  Node shape = MakeNode("ConvTranspose", 2);
  shape.attrs["output_shape"] = Ints({k2p62, 5});
  ExpectErrorNaming(RunOp(shape, 11, {&x, &w}).status(), {"output_shape", "2^31"});
  // A sane output_padding still works (stride 2: 2*(3-1)+1+3 = 8).
  Node ok = MakeNode("ConvTranspose", 2);
  ok.attrs["strides"] = Ints({2, 2});
  ok.attrs["output_padding"] = Ints({1, 1});
  auto out = RunOp(ok, 11, {&x, &w});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{1, 1, 8, 8}));
}

TEST(OpsOverflow, DepthSpaceHugeBlocksizeIsError) {
  Tensor x = Floats({1, 4, 2, 2});
  TensorType xt(DataType::kFloat, {1, 4, 2, 2});
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
    Node n = MakeNode(op, 1);
    n.attrs["blocksize"] = Int(k2p62);
    ExpectErrorNaming(RunOp(n, 13, {&x}).status(), {"blocksize", std::to_string(k2p62)});
    ExpectErrorNaming(InferOp(n, 13, {&xt}, {}).status(), {"blocksize"});
  }
  // Channel and spatial products are checked too when blocksize itself is in range.
  Node s2d = MakeNode("SpaceToDepth", 1);
  s2d.attrs["blocksize"] = Int(int64_t{1} << 30);
  TensorType huge_c(DataType::kFloat, {1, k2p40, int64_t{1} << 30, int64_t{1} << 30});
  ExpectErrorNaming(InferOp(s2d, 13, {&huge_c}, {}).status(), {"blocksize", "overflows"});
  Node d2s = MakeNode("DepthToSpace", 1);
  d2s.attrs["blocksize"] = Int(2);
  TensorType huge_hw(DataType::kFloat, {1, 4, k2p62, 1});
  ExpectErrorNaming(InferOp(d2s, 13, {&huge_hw}, {}).status(), {"blocksize", "overflows"});
}

TEST(OpsOverflow, ResizeHugeScaleIsError) {
  Node n = MakeNode("Resize", 3);
  n.since_version = 13;
  Tensor x = Floats({1, 1, 2, 2});
  Tensor scales = Tensor::FromFloat({1, 1, 1e30f, 1}, {4});
  ExpectErrorNaming(RunOp(n, 13, {&x, nullptr, &scales}).status(), {"scales[2]", "out of range"});
  TensorType st(DataType::kFloat, {4});
  TensorType xt(DataType::kFloat, {1, 1, 2, 2});
  ExpectErrorNaming(InferOp(n, 13, {&xt, nullptr, &st}, {nullptr, nullptr, &scales}).status(),
                    {"scales[2]"});
  // Symbolic batch takes the per-axis inference path.
  TensorType xs(DataType::kFloat, {Dim::Symbol("N"), 1, 2, 2});
  ExpectErrorNaming(InferOp(n, 13, {&xs, nullptr, &st}, {nullptr, nullptr, &scales}).status(),
                    {"scales[2]"});
  // Infinity is refused too (float max * 2 would round to inf).
  Tensor inf_scales = Tensor::FromFloat({1, 1, 1, std::numeric_limits<float>::infinity()}, {4});
  ExpectErrorNaming(RunOp(n, 13, {&x, nullptr, &inf_scales}).status(), {"scales[3]"});
}

TEST(OpsOverflow, ResizeNotSmallerHugeSizesIsError) {
  Node n = MakeNode("Resize", 4);
  n.since_version = 18;
  n.attrs["axes"] = Ints({2, 3});
  n.attrs["keep_aspect_ratio_policy"] = Str("not_smaller");
  Tensor x = Floats({1, 1, 1, 1000});
  Tensor sizes = Vec({k2p62, 1});
  ExpectErrorNaming(RunOp(n, 18, {&x, nullptr, nullptr, &sizes}).status(),
                    {"sizes", "not_smaller", "out of range"});
}

TEST(OpsOverflow, FlattenDimProductOverflowIsError) {
  Node n = MakeNode("Flatten", 1);
  n.attrs["axis"] = Int(3);
  TensorType xt(DataType::kFloat, {k2p40, k2p40, 2, 5});
  ExpectErrorNaming(InferOp(n, 13, {&xt}, {}).status(), {"product of input dims", "overflows"});
  // A zero dim makes the product 0, whatever the huge dims around it.
  TensorType zero(DataType::kFloat, {k2p40, 0, k2p40, 5});
  auto r = InferOp(n, 13, {&zero}, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].dims[0].value, 0);
  EXPECT_EQ((*r)[0].dims[1].value, 5);
}

}  // namespace
}  // namespace switchyard
