// Gemm, MatMul, MatMulInteger and (de)quantization reference ops.
#include <gtest/gtest.h>

#include <random>

#include "reference/op_registry.h"
#include "reference/ops/conv_common.h"

namespace switchyard {
namespace {

Node MakeNode(const std::string& op, size_t outputs = 1) {
  Node n;
  n.name = "g";
  n.op_type = op;
  for (size_t i = 0; i < outputs; ++i) n.outputs.push_back(static_cast<ValueId>(i));
  return n;
}

void SetInt(Node& n, const std::string& name, int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  n.attrs[name] = a;
}
void SetFloat(Node& n, const std::string& name, float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  n.attrs[name] = a;
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

TEST(OpsGemm, GemmTransposesAlphaBetaAndBroadcastBias) {
  Node n = MakeNode("Gemm");
  SetInt(n, "transA", 1);
  SetFloat(n, "alpha", 2.0f);
  SetFloat(n, "beta", 0.5f);
  Tensor a = Tensor::FromFloat({1, 3, 2, 4}, {2, 2});  // A^T = [[1,2],[3,4]]
  Tensor b = Tensor::FromFloat({1, 0, 0, 1}, {2, 2});
  Tensor c = Tensor::FromFloat({10, 20}, {2});          // broadcast over rows
  auto r = RunOp(n, 13, {&a, &b, &c});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const float want[] = {2 + 5, 4 + 10, 6 + 5, 8 + 10};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ((*r)[0].data<float>()[i], want[i]);
}

TEST(OpsGemm, GemmRejectsBadBiasAndInnerDims) {
  Node n = MakeNode("Gemm");
  Tensor a = Tensor::FromFloat({1, 2, 3, 4}, {2, 2});
  Tensor c = Tensor::FromFloat({1, 2, 3}, {3});
  EXPECT_FALSE(RunOp(n, 13, {&a, &a, &c}).ok());
  Tensor b = Tensor::FromFloat({1, 2, 3}, {3, 1});
  EXPECT_FALSE(RunOp(n, 13, {&a, &b}).ok());
}

TEST(OpsGemm, MatMulBatchBroadcastAnd1D) {
  Node n = MakeNode("MatMul");
  Tensor a = Tensor::FromFloat({1, 2, 3, 4, 5, 6, 7, 8}, {2, 1, 2, 2});
  Tensor b = Tensor::FromFloat({1, 1}, {2});  // 1-D: row sums
  auto r = RunOp(n, 13, {&a, &b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[3], 15);
  Tensor eye = Tensor::FromFloat({1, 0, 0, 1, 2, 0, 0, 2, 3, 0, 0, 3}, {3, 2, 2});
  r = RunOp(n, 13, {&a, &eye});  // [2,1,2,2] x [3,2,2] -> [2,3,2,2]
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 3, 2, 2}));
  EXPECT_FLOAT_EQ((*r)[0].data<float>()[4 * 5 + 3], 24);  // batch 1, scale 3: 8*3
}

TEST(OpsGemm, MatMulInt64Exact) {
  Node n = MakeNode("MatMul");
  Tensor a = Tensor::FromInt64({3, -4}, {1, 2});
  Tensor b = Tensor::FromInt64({5, 6}, {2, 1});
  auto r = RunOp(n, 13, {&a, &b});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].data<int64_t>()[0], -9);
}

TEST(OpsGemm, MatMulInferSymbolicAndMismatch) {
  Node n = MakeNode("MatMul");
  TensorType a(DataType::kFloat, {Dim::Symbol("B"), Dim::Symbol("S"), 768});
  TensorType b(DataType::kFloat, {768, 3072});
  auto r = InferOp(n, 13, {&a, &b});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].ToString(), "float32[B,S,3072]");
  TensorType bad(DataType::kFloat, {767, 3072});
  EXPECT_FALSE(InferOp(n, 13, {&a, &bad}).ok());
  Tensor x = Tensor::FromFloat({1, 2, 3}, {1, 3});
  EXPECT_FALSE(RunOp(n, 13, {&x, &x}).ok());
}

TEST(OpsGemm, MatMulIntegerPerColumnZeroPoint) {
  Node n = MakeNode("MatMulInteger");
  Tensor a(DataType::kUint8, {1, 2});
  a.data<uint8_t>()[0] = 3;
  a.data<uint8_t>()[1] = 4;
  Tensor b(DataType::kInt8, {2, 2});
  const int8_t bv[] = {1, 2, 3, 4};
  for (int i = 0; i < 4; ++i) b.data<int8_t>()[i] = bv[i];
  Tensor bz(DataType::kInt8, {2});
  bz.data<int8_t>()[0] = 1;
  bz.data<int8_t>()[1] = 0;
  auto r = RunOp(n, 10, {&a, &b, nullptr, &bz});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].data<int32_t>()[0], 3 * 0 + 4 * 2);
  EXPECT_EQ((*r)[0].data<int32_t>()[1], 3 * 2 + 4 * 4);
}

TEST(OpsGemm, QuantizeRoundsHalfToEvenAndSaturates) {
  Node n = MakeNode("QuantizeLinear");
  Tensor x = Tensor::FromFloat({2.5f, 3.5f, 1000.0f, -1000.0f}, {4});
  Tensor s = Tensor::FromFloat({1.0f}, {});
  Tensor z(DataType::kInt8, {});
  auto r = RunOp(n, 13, {&x, &s, &z});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const int8_t want[] = {2, 4, 127, -128};
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*r)[0].data<int8_t>()[i], want[i]);
}

TEST(OpsGemm, DequantizePerAxisNegativeAxis) {
  Node n = MakeNode("DequantizeLinear");
  SetInt(n, "axis", -1);
  Tensor x(DataType::kUint8, {2, 2});
  for (int i = 0; i < 4; ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(10 * (i + 1));
  Tensor s = Tensor::FromFloat({0.5f, 2.0f}, {2});
  Tensor z(DataType::kUint8, {2});
  z.data<uint8_t>()[0] = 10;
  z.data<uint8_t>()[1] = 0;
  auto r = RunOp(n, 13, {&x, &s, &z});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const float want[] = {0, 40, 10, 80};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ((*r)[0].data<float>()[i], want[i]);
  Tensor s3 = Tensor::FromFloat({1, 2, 3}, {3});
  EXPECT_FALSE(RunOp(n, 13, {&x, &s3}).ok());
}

// The fp64 GEMM core behind MatMul, Gemm and Conv: tiles, ragged edges (rows not a
// multiple of 4, columns not of 16, k over one 256 block, leading dimensions wider than
// the matrices) and C accumulated into, against a plain triple loop; a product large
// enough to share its rows among threads gives the same bits as its rows computed
// apart, so a reference does not depend on the thread count.
TEST(OpsGemm, GemmCoreMatchesAPlainLoopWhateverTheThreads) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  struct Case { int64_t m, n, k; };
  for (const Case cs : {Case{1, 1, 1}, Case{5, 17, 3}, Case{37, 83, 600}, Case{203, 161, 300}}) {
    const int64_t lda = cs.k + 3, ldb = cs.n + 5, ldc = cs.n + 2;
    std::vector<double> a(static_cast<size_t>(cs.m * lda)), b(static_cast<size_t>(cs.k * ldb)),
        c(static_cast<size_t>(cs.m * ldc));
    for (double& v : a) v = u(rng);
    for (double& v : b) v = u(rng);
    for (double& v : c) v = u(rng);
    std::vector<double> want = c;
    for (int64_t i = 0; i < cs.m; ++i) {
      for (int64_t j = 0; j < cs.n; ++j) {
        long double s = want[i * ldc + j];
        for (int64_t kk = 0; kk < cs.k; ++kk) s += static_cast<long double>(a[i * lda + kk]) * b[kk * ldb + j];
        want[i * ldc + j] = static_cast<double>(s);
      }
    }
    std::vector<double> got = c;
    ops::GemmAccumulate(a.data(), lda, b.data(), ldb, got.data(), ldc, cs.m, cs.n, cs.k);
    for (int64_t i = 0; i < cs.m; ++i) {
      for (int64_t j = 0; j < ldc; ++j) {
        const size_t at = static_cast<size_t>(i * ldc + j);
        if (j >= cs.n) {
          ASSERT_EQ(got[at], c[at]) << "wrote past column " << cs.n;  // the padding is left alone
          continue;
        }
        ASSERT_NEAR(got[at], want[at], 1e-12 * static_cast<double>(cs.k)) << cs.m << "x" << cs.n << "x" << cs.k
                                                                          << " at " << i << "," << j;
      }
    }
    if (cs.m < 200) continue;
    // Rows [0, 100) and [100, m) apart: each call small enough for one thread.
    std::vector<double> apart = c;
    ops::GemmAccumulate(a.data(), lda, b.data(), ldb, apart.data(), ldc, 100, cs.n, cs.k);
    ops::GemmAccumulate(a.data() + 100 * lda, lda, b.data(), ldb, apart.data() + 100 * ldc, ldc, cs.m - 100, cs.n,
                        cs.k);
    EXPECT_EQ(apart, got);
  }
}

}  // namespace
}  // namespace switchyard
