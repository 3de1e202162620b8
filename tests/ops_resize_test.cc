// Resize, Upsample and GridSample reference ops.
#include <gtest/gtest.h>

#include "reference/op_registry.h"

namespace switchyard {
namespace {

Node MakeNode(const std::string& op) {
  Node n;
  n.name = "r";
  n.op_type = op;
  n.outputs = {0};
  return n;
}

void SetString(Node& n, const std::string& name, std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  n.attrs[name] = a;
}

Result<std::vector<Tensor>> RunOp(const Node& n, int opset, std::vector<const Tensor*> in) {
  const OpSchema* s = OpRegistry::Global().Find("", n.op_type, opset);
  if (!s) return Status::NotFound(n.op_type);
  return s->run(KernelContext{n, opset, std::move(in)});
}

TEST(OpsResize, NearestUpsampleByScales) {
  Node n = MakeNode("Resize");
  n.since_version = 13;
  Tensor x = Tensor::FromFloat({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor scales = Tensor::FromFloat({1, 1, 2, 2}, {4});
  auto r = RunOp(n, 13, {&x, nullptr, &scales});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ((*r)[0].shape(), (std::vector<int64_t>{1, 1, 4, 4}));
  const float row1[] = {1, 1, 2, 2};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ((*r)[0].data<float>()[4 + i], row1[i]);
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[15], 4);
}

TEST(OpsResize, LinearAlignCornersBySizes) {
  Node n = MakeNode("Resize");
  n.since_version = 13;
  SetString(n, "mode", "linear");
  SetString(n, "coordinate_transformation_mode", "align_corners");
  Tensor x = Tensor::FromFloat({0, 10}, {1, 2});
  Tensor sizes = Tensor::FromInt64({1, 5}, {2});
  auto r = RunOp(n, 13, {&x, nullptr, nullptr, &sizes});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const float want[] = {0, 2.5f, 5, 7.5f, 10};
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ((*r)[0].data<float>()[i], want[i]);
}

TEST(OpsResize, SizesWithAxesOpset18) {
  Node n = MakeNode("Resize");
  n.since_version = 18;
  Attribute axes;
  axes.kind = Attribute::Kind::kInts;
  axes.ints = {-1};
  n.attrs["axes"] = axes;
  Tensor x = Tensor::FromFloat({1, 2, 3, 4}, {2, 2});
  Tensor sizes = Tensor::FromInt64({4}, {1});
  auto r = RunOp(n, 18, {&x, nullptr, nullptr, &sizes});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 4}));
}

TEST(OpsResize, RejectsBothScalesAndSizesAndBadMode) {
  Node n = MakeNode("Resize");
  n.since_version = 13;
  Tensor x = Tensor::FromFloat({1, 2}, {1, 2});
  Tensor scales = Tensor::FromFloat({1, 2}, {2});
  Tensor sizes = Tensor::FromInt64({1, 4}, {2});
  EXPECT_FALSE(RunOp(n, 13, {&x, nullptr, &scales, &sizes}).ok());
  Tensor bad_scales = Tensor::FromFloat({2}, {1});
  EXPECT_FALSE(RunOp(n, 13, {&x, nullptr, &bad_scales}).ok());
  SetString(n, "mode", "bogus");
  EXPECT_FALSE(RunOp(n, 13, {&x, nullptr, &scales}).ok());
}

TEST(OpsResize, UpsampleOpset9Nearest) {
  Node n = MakeNode("Upsample");
  n.since_version = 9;
  Tensor x = Tensor::FromFloat({1, 2}, {1, 2});
  Tensor scales = Tensor::FromFloat({1, 3}, {2});
  auto r = RunOp(n, 9, {&x, &scales});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const float want[] = {1, 1, 1, 2, 2, 2};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ((*r)[0].data<float>()[i], want[i]);
}

TEST(OpsResize, IntegerInputStaysExact) {
  Node n = MakeNode("Resize");
  n.since_version = 13;
  Tensor x(DataType::kUint8, {1, 2});
  x.data<uint8_t>()[0] = 7;
  x.data<uint8_t>()[1] = 250;
  Tensor scales = Tensor::FromFloat({1, 2}, {2});
  auto r = RunOp(n, 13, {&x, nullptr, &scales});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].data<uint8_t>()[3], 250);
}

TEST(OpsResize, GridSampleIdentityGridAlignCorners) {
  Node n = MakeNode("GridSample");
  Attribute ac;
  ac.kind = Attribute::Kind::kInt;
  ac.i = 1;
  n.attrs["align_corners"] = ac;
  Tensor x = Tensor::FromFloat({1, 2, 3, 4}, {1, 1, 2, 2});
  // Output (0,0) samples the centre; (0,1) samples the top-right pixel.
  Tensor grid = Tensor::FromFloat({0, 0, 1, -1}, {1, 1, 2, 2});
  auto r = RunOp(n, 16, {&x, &grid});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[0], 2.5f);
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[1], 2.0f);
  Tensor bad_grid = Tensor::FromFloat({0, 0, 0}, {1, 1, 1, 3});
  EXPECT_FALSE(RunOp(n, 16, {&x, &bad_grid}).ok());
}

}  // namespace
}  // namespace switchyard
