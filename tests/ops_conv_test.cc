// Conv, ConvTranspose, pooling, quantized conv and depth/space reference ops.
#include <gtest/gtest.h>

#include <chrono>

#include "reference/op_registry.h"

namespace switchyard {
namespace {

Node MakeNode(const std::string& op, size_t outputs = 1) {
  Node n;
  n.name = "n";
  n.op_type = op;
  for (size_t i = 0; i < outputs; ++i) n.outputs.push_back(static_cast<ValueId>(i));
  return n;
}

void SetInts(Node& n, const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  n.attrs[name] = a;
}
void SetInt(Node& n, const std::string& name, int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  n.attrs[name] = a;
}
void SetString(Node& n, const std::string& name, std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  n.attrs[name] = a;
}

Tensor Iota(std::vector<int64_t> shape, float start = 0) {
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + static_cast<float>(i);
  return t;
}

Result<std::vector<Tensor>> RunOp(const Node& n, int opset, std::vector<const Tensor*> in) {
  const OpSchema* s = OpRegistry::Global().Find("", n.op_type, opset);
  if (!s) return Status::NotFound(n.op_type);
  return s->run(KernelContext{n, opset, std::move(in)});
}

Result<std::vector<TensorType>> InferOp(const Node& n, int opset,
                                      std::vector<const TensorType*> in) {
  const OpSchema* s = OpRegistry::Global().Find("", n.op_type, opset);
  if (!s) return Status::NotFound(n.op_type);
  std::vector<const Tensor*> consts(in.size(), nullptr);
  return s->infer(InferContext{n, opset, std::move(in), consts});
}

TEST(OpsConv, Conv2dPaddedAllOnesKernel) {
  Node n = MakeNode("Conv");
  SetInts(n, "pads", {1, 1, 1, 1});
  Tensor x = Iota({1, 1, 3, 3});
  Tensor w(DataType::kFloat, {1, 1, 3, 3});
  for (int i = 0; i < 9; ++i) w.data<float>()[i] = 1;
  auto r = RunOp(n, 11, {&x, &w});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Tensor& y = (*r)[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 3, 3}));
  // Centre sums all 0..8 = 36; corner (0,0) sums 0+1+3+4 = 8.
  EXPECT_FLOAT_EQ(y.data<float>()[4], 36);
  EXPECT_FLOAT_EQ(y.data<float>()[0], 8);
}

TEST(OpsConv, DepthwiseStridedWithBias) {
  Node n = MakeNode("Conv");
  SetInt(n, "group", 2);
  SetInts(n, "strides", {2});
  Tensor x = Iota({1, 2, 5});                       // ch0: 0..4, ch1: 5..9
  Tensor w = Tensor::FromFloat({1, -1, 2, 0}, {2, 1, 2});
  Tensor b = Tensor::FromFloat({10, 20}, {2});
  auto r = RunOp(n, 11, {&x, &w, &b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Tensor& y = (*r)[0];
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_FLOAT_EQ(y.data<float>()[0], 9);    // 0-1+10
  EXPECT_FLOAT_EQ(y.data<float>()[1], 9);    // 2-3+10
  EXPECT_FLOAT_EQ(y.data<float>()[2], 30);   // 2*5+20
  EXPECT_FLOAT_EQ(y.data<float>()[3], 34);   // 2*7+20
}

TEST(OpsConv, InferKeepsSymbolicBatchAndValidatesChannels) {
  Node n = MakeNode("Conv");
  SetInts(n, "strides", {2, 2});
  SetString(n, "auto_pad", "SAME_UPPER");
  TensorType x(DataType::kFloat, {Dim::Symbol("N"), 3, 224, 224});
  TensorType w(DataType::kFloat, {64, 3, 7, 7});
  auto r = InferOp(n, 11, {&x, &w});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].ToString(), "float32[N,64,112,112]");
  TensorType bad_w(DataType::kFloat, {64, 4, 7, 7});
  auto bad = InferOp(n, 11, {&x, &bad_w});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("channels"), std::string::npos);
}

TEST(OpsConv, RunRejectsChannelMismatch) {
  Node n = MakeNode("Conv");
  Tensor x = Iota({1, 3, 4, 4});
  Tensor w = Iota({2, 2, 3, 3});
  auto r = RunOp(n, 11, {&x, &w});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'n'"), std::string::npos);
}

TEST(OpsConv, ConvTransposeStride2) {
  Node n = MakeNode("ConvTranspose");
  SetInts(n, "strides", {2});
  Tensor x = Tensor::FromFloat({1, 2}, {1, 1, 2});
  Tensor w = Tensor::FromFloat({1, 1, 1}, {1, 1, 3});
  auto r = RunOp(n, 11, {&x, &w});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Tensor& y = (*r)[0];
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 5}));
  const float want[] = {1, 1, 3, 2, 2};
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], want[i]);
}

TEST(OpsConv, MaxPoolWithIndicesAndCeil) {
  Node n = MakeNode("MaxPool", 2);
  SetInts(n, "kernel_shape", {2, 2});
  SetInts(n, "strides", {2, 2});
  SetInt(n, "ceil_mode", 1);
  Tensor x = Iota({1, 1, 3, 3});
  auto r = RunOp(n, 12, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ((*r)[0].shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[0], 4);
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[3], 8);
  EXPECT_EQ((*r)[1].dtype(), DataType::kInt64);
  EXPECT_EQ((*r)[1].data<int64_t>()[1], 5);
}

TEST(OpsConv, MaxPoolUint8) {
  Node n = MakeNode("MaxPool");
  SetInts(n, "kernel_shape", {2});
  Tensor x(DataType::kUint8, {1, 1, 3});
  x.data<uint8_t>()[0] = 200;
  x.data<uint8_t>()[1] = 7;
  x.data<uint8_t>()[2] = 255;
  auto r = RunOp(n, 12, {&x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].data<uint8_t>()[0], 200);
  EXPECT_EQ((*r)[0].data<uint8_t>()[1], 255);
}

TEST(OpsConv, AveragePoolCountIncludePad) {
  Node n = MakeNode("AveragePool");
  SetInts(n, "kernel_shape", {3});
  SetInts(n, "pads", {1, 1});
  Tensor x = Tensor::FromFloat({3, 6, 9}, {1, 1, 3});
  auto r = RunOp(n, 11, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[0], 4.5f);  // (3+6)/2
  SetInt(n, "count_include_pad", 1);
  r = RunOp(n, 11, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[0], 3.0f);  // (0+3+6)/3
}

TEST(OpsConv, GlobalAveragePoolInferAndRun) {
  Node n = MakeNode("GlobalAveragePool");
  TensorType t(DataType::kFloat, {Dim::Symbol("B"), 8, 7, 7});
  auto inf = InferOp(n, 11, {&t});
  ASSERT_TRUE(inf.ok());
  EXPECT_EQ((*inf)[0].ToString(), "float32[B,8,1,1]");
  Tensor x = Iota({1, 2, 2, 2});
  auto r = RunOp(n, 11, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[1], 5.5f);
}

TEST(OpsConv, PoolRejectsKernelRankMismatch) {
  Node n = MakeNode("MaxPool");
  SetInts(n, "kernel_shape", {2, 2});
  Tensor x = Iota({1, 1, 4});
  EXPECT_FALSE(RunOp(n, 12, {&x}).ok());
}

TEST(OpsConv, ConvIntegerWithZeroPoint) {
  Node n = MakeNode("ConvInteger");
  Tensor x(DataType::kUint8, {1, 1, 3});
  for (int i = 0; i < 3; ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(10 + i);
  Tensor w(DataType::kUint8, {1, 1, 2});
  w.data<uint8_t>()[0] = 1;
  w.data<uint8_t>()[1] = 2;
  Tensor xz(DataType::kUint8, {});
  xz.data<uint8_t>()[0] = 10;
  auto r = RunOp(n, 10, {&x, &w, &xz});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].dtype(), DataType::kInt32);
  EXPECT_EQ((*r)[0].data<int32_t>()[0], 2);  // 0*1 + 1*2
  EXPECT_EQ((*r)[0].data<int32_t>()[1], 5);  // 1*1 + 2*2
}

TEST(OpsConv, DepthToSpaceCrdRoundTrip) {
  Node d2s = MakeNode("DepthToSpace");
  SetInt(d2s, "blocksize", 2);
  SetString(d2s, "mode", "CRD");
  Tensor x = Iota({1, 4, 1, 1});
  auto r = RunOp(d2s, 13, {&x});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ((*r)[0].shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[1], 1);
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[2], 2);
  Node s2d = MakeNode("SpaceToDepth");
  SetInt(s2d, "blocksize", 2);
  auto back = RunOp(s2d, 13, {&(*r)[0]});
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->at(0) == x);
  SetInt(s2d, "blocksize", 3);
  EXPECT_FALSE(RunOp(s2d, 13, {&(*r)[0]}).ok());
}

// A ResNet-50 stage-2 3x3 conv and the stem must finish quickly (guards the fp64 core).
TEST(OpsConv, ResNetSizedConvIsFast) {
  Node n = MakeNode("Conv");
  SetInts(n, "pads", {1, 1, 1, 1});
  Tensor x(DataType::kFloat, {1, 64, 56, 56});
  Tensor w(DataType::kFloat, {64, 64, 3, 3});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 7) * 0.1f;
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = static_cast<float>(i % 5) * 0.01f;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = RunOp(n, 11, {&x, &w});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok());
  EXPECT_LT(s, 1.0) << "231 MMAC conv took " << s << " s";
}

}  // namespace
}  // namespace switchyard
