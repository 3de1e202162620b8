// Unit tests for Einsum and the misc math ops (Det, windows, DFT, random generators).
#include <gtest/gtest.h>

#include <cmath>

#include "reference/op_registry.h"
#include "reference/ops/common.h"

namespace switchyard {
namespace {

Node MakeNode(const std::string& op, const std::string& equation = "") {
  Node n;
  n.name = "e";
  n.op_type = op;
  n.outputs = {0};
  if (!equation.empty()) {
    Attribute a;
    a.kind = Attribute::Kind::kString;
    a.s = equation;
    n.attrs["equation"] = a;
  }
  return n;
}

Result<std::vector<Tensor>> RunOp(const Node& n, int opset, std::vector<const Tensor*> in) {
  const OpSchema* s = OpRegistry::Global().Find("", n.op_type, opset);
  if (!s) return Status::NotFound("no schema");
  return s->run(KernelContext{n, opset, std::move(in)});
}

TEST(EinsumOp, MatmulExplicitAndImplicit) {
  Tensor a = Tensor::FromFloat({1, 2, 3, 4}, {2, 2});
  Tensor b = Tensor::FromFloat({5, 6, 7, 8}, {2, 2});
  auto r = RunOp(MakeNode("Einsum", "ij,jk->ik"), 12, {&a, &b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<double> want = {19, 22, 43, 50};
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*r)[0].GetDouble(i), want[static_cast<size_t>(i)]);
  // Implicit output "ik" (labels used once, alphabetical).
  auto imp = RunOp(MakeNode("Einsum", "ij, jk"), 12, {&a, &b});
  ASSERT_TRUE(imp.ok());
  EXPECT_EQ((*imp)[0], (*r)[0]);
  // Implicit "ba" → output labels sorted: "ab" is a transpose.
  auto tr = RunOp(MakeNode("Einsum", "ba"), 12, {&a});
  ASSERT_TRUE(tr.ok());
  EXPECT_EQ((*tr)[0].GetDouble(1), 3);
}

TEST(EinsumOp, DiagonalTraceEllipsisAndInt64) {
  Tensor a = Tensor::FromInt64({1, 2, 3, 4}, {2, 2});
  auto trace = RunOp(MakeNode("Einsum", "ii->"), 12, {&a});
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ((*trace)[0].dtype(), DataType::kInt64);
  EXPECT_EQ((*trace)[0].GetInt64(0), 5);
  auto diag = RunOp(MakeNode("Einsum", "ii->i"), 12, {&a});
  ASSERT_TRUE(diag.ok());
  EXPECT_EQ((*diag)[0].GetInt64(1), 4);
  // Batched matmul over an ellipsis with broadcasting of the batch dims.
  Tensor x = Tensor::FromFloat({1, 2, 3, 4, 5, 6, 7, 8}, {2, 1, 2, 2});
  Tensor y = Tensor::FromFloat({1, 0, 0, 1}, {1, 2, 2});
  auto bm = RunOp(MakeNode("Einsum", "...ij,...jk->...ik"), 12, {&x, &y});
  ASSERT_TRUE(bm.ok()) << bm.status().ToString();
  EXPECT_EQ((*bm)[0].shape(), (std::vector<int64_t>{2, 1, 2, 2}));
  EXPECT_EQ((*bm)[0].GetDouble(7), 8);
}

TEST(EinsumOp, InferSymbolicAndErrors) {
  const OpSchema* s = OpRegistry::Global().Find("", "Einsum", 12);
  ASSERT_NE(s, nullptr);
  Node n = MakeNode("Einsum", "bij,bjk->bik");
  TensorType a(DataType::kFloat, {Dim::Symbol("B"), Dim(2), Dim(3)});
  TensorType b(DataType::kFloat, {Dim::Symbol("B"), Dim(3), Dim(4)});
  auto r = s->infer(InferContext{n, 12, {&a, &b}, {nullptr, nullptr}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].dims[0].symbol, "B");
  EXPECT_EQ((*r)[0].dims[2].value, 4);
  TensorType bad(DataType::kFloat, {Dim::Symbol("B"), Dim(5), Dim(4)});
  EXPECT_FALSE(s->infer(InferContext{n, 12, {&a, &bad}, {nullptr, nullptr}}).ok());
  // Wrong number of subscripts for the rank, and a malformed equation, at run time.
  Tensor t = Tensor::FromFloat({1, 2}, {2});
  EXPECT_FALSE(RunOp(MakeNode("Einsum", "ij->i"), 12, {&t}).ok());
  EXPECT_FALSE(RunOp(MakeNode("Einsum", "i.->i"), 12, {&t}).ok());
  EXPECT_FALSE(RunOp(MakeNode("Einsum", "i->j"), 12, {&t}).ok());
}

TEST(MiscMathOps, DetWindowsDft) {
  Tensor m = Tensor::FromFloat({1, 2, 3, 4, 2, 0, 0, 3}, {2, 2, 2});
  auto det = RunOp(MakeNode("Det"), 17, {&m});
  ASSERT_TRUE(det.ok()) << det.status().ToString();
  EXPECT_NEAR((*det)[0].GetDouble(0), -2, 1e-6);
  EXPECT_NEAR((*det)[0].GetDouble(1), 6, 1e-6);
  Tensor sq = Tensor::FromFloat({1, 2, 3}, {1, 3});
  EXPECT_FALSE(RunOp(MakeNode("Det"), 17, {&sq}).ok());

  Tensor size = Tensor::FromInt64({4}, {});
  auto hann = RunOp(MakeNode("HannWindow"), 17, {&size});
  ASSERT_TRUE(hann.ok());
  EXPECT_NEAR((*hann)[0].GetDouble(2), 1.0, 1e-6);  // periodic: sin^2(pi*2/4)
  EXPECT_NEAR((*hann)[0].GetDouble(1), 0.5, 1e-6);

  // DFT of a real [1, 4, 1] signal {1, 0, 0, 0} is all ones.
  Tensor x = Tensor::FromFloat({1, 0, 0, 0}, {1, 4, 1});
  auto dft = RunOp(MakeNode("DFT"), 17, {&x});
  ASSERT_TRUE(dft.ok()) << dft.status().ToString();
  EXPECT_EQ((*dft)[0].shape(), (std::vector<int64_t>{1, 4, 2}));
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR((*dft)[0].GetDouble(2 * k), 1, 1e-6);
    EXPECT_NEAR((*dft)[0].GetDouble(2 * k + 1), 0, 1e-6);
  }
}

TEST(MiscMathOps, RandomOpsAreNotDeterministic) {
  const OpSchema* s = OpRegistry::Global().Find("", "RandomNormal", 17);
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(s->deterministic);
  Node n = MakeNode("RandomNormal");
  Attribute shape;
  shape.kind = Attribute::Kind::kInts;
  shape.ints = {2, 3};
  n.attrs["shape"] = shape;
  Attribute seed;
  seed.kind = Attribute::Kind::kFloat;
  seed.f = 3;
  n.attrs["seed"] = seed;
  auto a = s->run(KernelContext{n, 17, {}});
  auto b = s->run(KernelContext{n, 17, {}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*a)[0], (*b)[0]);  // same seed, same stream
  // Bernoulli with probabilities 0/1 is computable; other probabilities are refused.
  Tensor p = Tensor::FromFloat({0, 1}, {2});
  auto ok = RunOp(MakeNode("Bernoulli"), 17, {&p});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)[0].GetDouble(1), 1);
  Tensor half = Tensor::FromFloat({0.5f}, {1});
  auto refused = RunOp(MakeNode("Bernoulli"), 17, {&half});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace switchyard
