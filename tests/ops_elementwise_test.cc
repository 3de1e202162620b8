// Unit tests of the elementwise reference ops: unary, binary, logical, variadic,
// activation, cast and Dropout, on small hand-computed data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/graph.h"
#include "reference/op_registry.h"

namespace switchyard {
namespace {

Node MakeNode(const std::string& op, size_t outputs = 1) {
  Node n;
  n.name = "x";
  n.op_type = op;
  for (size_t i = 0; i < outputs; ++i) n.outputs.push_back(static_cast<ValueId>(i));
  return n;
}

Result<std::vector<Tensor>> RunOp(const Node& n, int64_t opset, std::vector<const Tensor*> in) {
  const OpSchema* s = OpRegistry::Global().Find("", n.op_type, opset);
  if (!s) return Status::NotFound("no schema for " + n.op_type);
  Node copy = n;
  copy.since_version = s->since_version;
  return s->run(KernelContext{copy, opset, std::move(in)});
}

Result<std::vector<TensorType>> Infer(const Node& n, int64_t opset,
                                      std::vector<const TensorType*> in) {
  const OpSchema* s = OpRegistry::Global().Find("", n.op_type, opset);
  if (!s) return Status::NotFound("no schema for " + n.op_type);
  Node copy = n;
  copy.since_version = s->since_version;
  std::vector<const Tensor*> consts(in.size(), nullptr);
  return s->infer(InferContext{copy, opset, std::move(in), std::move(consts)});
}

template <typename T>
Tensor Make(DataType dt, std::vector<int64_t> shape, const std::vector<T>& v) {
  Tensor t(dt, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_integral_v<T>) {
      t.SetInt64(static_cast<int64_t>(i), static_cast<int64_t>(v[i]));
    } else {
      t.SetDouble(static_cast<int64_t>(i), static_cast<double>(v[i]));
    }
  }
  return t;
}

TEST(ElementwiseBinary, AddBroadcastsFloat) {
  Tensor a = Make<float>(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Make<float>(DataType::kFloat, {3}, {10, 20, 30});
  auto r = RunOp(MakeNode("Add"), 17, {&a, &b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Tensor& o = (*r)[0];
  EXPECT_EQ(o.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(o.ToDoubleVector(), (std::vector<double>{11, 22, 33, 14, 25, 36}));
}

TEST(ElementwiseBinary, MulBroadcastsBothSides) {
  Tensor a = Make<float>(DataType::kFloat, {2, 1}, {2, 3});
  Tensor b = Make<float>(DataType::kFloat, {1, 3}, {1, 10, 100});
  auto r = RunOp(MakeNode("Mul"), 14, {&a, &b});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].ToDoubleVector(), (std::vector<double>{2, 20, 200, 3, 30, 300}));
}

TEST(ElementwiseBinary, Int64IsExact) {
  const int64_t big = (int64_t{1} << 60) + 1;  // not representable in double
  Tensor a = Make<int64_t>(DataType::kInt64, {2}, {big, -7});
  Tensor b = Make<int64_t>(DataType::kInt64, {2}, {2, 2});
  auto add = RunOp(MakeNode("Add"), 14, {&a, &b});
  ASSERT_TRUE(add.ok());
  EXPECT_EQ((*add)[0].ToInt64Vector(), (std::vector<int64_t>{big + 2, -5}));
  auto div = RunOp(MakeNode("Div"), 14, {&a, &b});
  ASSERT_TRUE(div.ok());
  EXPECT_EQ((*div)[0].ToInt64Vector(), (std::vector<int64_t>{big / 2, -3}));  // truncates
}

TEST(ElementwiseBinary, IntegerDivisionByZeroIsAnError) {
  Tensor a = Make<int32_t>(DataType::kInt32, {2}, {1, 2});
  Tensor b = Make<int32_t>(DataType::kInt32, {2}, {1, 0});
  auto r = RunOp(MakeNode("Div"), 14, {&a, &b});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'x'"), std::string::npos);
}

TEST(ElementwiseBinary, MismatchedTypesAndShapesAreErrors) {
  Tensor a = Make<float>(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Make<int64_t>(DataType::kInt64, {3}, {1, 2, 3});
  EXPECT_FALSE(RunOp(MakeNode("Sub"), 14, {&a, &b}).ok());
  Tensor c = Make<float>(DataType::kFloat, {2}, {1, 2});
  EXPECT_FALSE(RunOp(MakeNode("Sub"), 14, {&a, &c}).ok());
}

TEST(ElementwiseBinary, ModSignRules) {
  Tensor a = Make<int32_t>(DataType::kInt32, {4}, {-4, 7, 5, -5});
  Tensor b = Make<int32_t>(DataType::kInt32, {4}, {3, -3, 3, -3});
  auto py = RunOp(MakeNode("Mod"), 13, {&a, &b});
  ASSERT_TRUE(py.ok());
  EXPECT_EQ((*py)[0].ToInt64Vector(), (std::vector<int64_t>{2, -2, 2, -2}));  // sign of divisor
  Node f = MakeNode("Mod");
  f.attrs["fmod"].i = 1;
  auto c = RunOp(f, 13, {&a, &b});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].ToInt64Vector(), (std::vector<int64_t>{-1, 1, 2, -2}));  // sign of dividend
  Tensor x = Make<float>(DataType::kFloat, {1}, {1.5});
  EXPECT_FALSE(RunOp(MakeNode("Mod"), 13, {&x, &x}).ok());  // floats need fmod=1
}

TEST(ElementwiseBinary, PowMixedTypes) {
  Tensor base = Make<int32_t>(DataType::kInt32, {3}, {2, 3, -2});
  Tensor e = Make<int64_t>(DataType::kInt64, {3}, {10, 3, 3});
  auto r = RunOp(MakeNode("Pow"), 15, {&base, &e});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].dtype(), DataType::kInt32);
  EXPECT_EQ((*r)[0].ToInt64Vector(), (std::vector<int64_t>{1024, 27, -8}));
  Tensor fb = Make<float>(DataType::kFloat, {2}, {4, 9});
  Tensor fe = Make<float>(DataType::kFloat, {}, {0.5});
  auto s = RunOp(MakeNode("Pow"), 15, {&fb, &fe});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].ToDoubleVector(), (std::vector<double>{2, 3}));
}

TEST(ElementwiseBinary, InferKeepsSymbolicDims) {
  TensorType a(DataType::kFloat, {Dim::Symbol("N"), Dim(1), Dim(4)});
  TensorType b(DataType::kFloat, {Dim(3), Dim(1)});
  auto r = Infer(MakeNode("Add"), 17, {&a, &b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].ToString(), "float32[N,3,4]");
  TensorType c(DataType::kInt64, {Dim(4)});
  EXPECT_FALSE(Infer(MakeNode("Add"), 17, {&a, &c}).ok());
  auto cmp = Infer(MakeNode("Less"), 13, {&a, &b});
  ASSERT_TRUE(cmp.ok());
  EXPECT_EQ((*cmp)[0].dtype, DataType::kBool);
}

TEST(ElementwiseUnary, MathAndIntegers) {
  Tensor x = Make<float>(DataType::kFloat, {4}, {-1.5, 0.5, 2.5, 4});
  auto r = RunOp(MakeNode("Round"), 11, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].ToDoubleVector(), (std::vector<double>{-2, 0, 2, 4}));  // half to even
  auto s = RunOp(MakeNode("Sqrt"), 13, {&x});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(std::isnan((*s)[0].GetDouble(0)));
  EXPECT_DOUBLE_EQ((*s)[0].GetDouble(3), 2.0);
  Tensor i = Make<int64_t>(DataType::kInt64, {3}, {-5, 0, 7});
  auto a = RunOp(MakeNode("Abs"), 13, {&i});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)[0].ToInt64Vector(), (std::vector<int64_t>{5, 0, 7}));
  auto sg = RunOp(MakeNode("Sign"), 13, {&i});
  ASSERT_TRUE(sg.ok());
  EXPECT_EQ((*sg)[0].ToInt64Vector(), (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_FALSE(RunOp(MakeNode("Exp"), 13, {&i}).ok());  // Exp takes floats only
}

TEST(ElementwiseUnary, IsInfAttributes) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = Make<double>(DataType::kFloat, {3}, {-inf, 1.0, inf});
  Node n = MakeNode("IsInf");
  n.attrs["detect_negative"].i = 0;
  auto r = RunOp(n, 10, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].dtype(), DataType::kBool);
  EXPECT_EQ((*r)[0].ToInt64Vector(), (std::vector<int64_t>{0, 0, 1}));
}

TEST(ElementwiseUnary, ClipInputsAttributesAndIntegers) {
  Tensor x = Make<float>(DataType::kFloat, {4}, {-3, -1, 1, 3});
  Tensor lo = Make<float>(DataType::kFloat, {}, {-2});
  auto r = RunOp(MakeNode("Clip"), 13, {&x, &lo, nullptr});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].ToDoubleVector(), (std::vector<double>{-2, -1, 1, 3}));
  Node old = MakeNode("Clip");
  old.attrs["max"].f = 0.5f;
  old.attrs["max"].kind = Attribute::Kind::kFloat;
  auto o = RunOp(old, 7, {&x});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ((*o)[0].ToDoubleVector(), (std::vector<double>{-3, -1, 0.5, 0.5}));
  Tensor xi = Make<int8_t>(DataType::kInt8, {3}, {-100, 5, 100});
  Tensor mi = Make<int8_t>(DataType::kInt8, {}, {-10});
  Tensor ma = Make<int8_t>(DataType::kInt8, {}, {10});
  auto ri = RunOp(MakeNode("Clip"), 13, {&xi, &mi, &ma});
  ASSERT_TRUE(ri.ok());
  EXPECT_EQ((*ri)[0].ToInt64Vector(), (std::vector<int64_t>{-10, 5, 10}));
  Tensor bad = Make<float>(DataType::kFloat, {2}, {0, 1});
  EXPECT_FALSE(RunOp(MakeNode("Clip"), 13, {&x, &bad, nullptr}).ok());  // non-scalar bound
}

TEST(ElementwiseLogical, ComparisonsAndWhere) {
  Tensor a = Make<int64_t>(DataType::kInt64, {2, 2}, {1, 5, 3, 4});
  Tensor b = Make<int64_t>(DataType::kInt64, {2}, {3, 4});
  auto lt = RunOp(MakeNode("Less"), 13, {&a, &b});
  ASSERT_TRUE(lt.ok());
  EXPECT_EQ((*lt)[0].dtype(), DataType::kBool);
  EXPECT_EQ((*lt)[0].ToInt64Vector(), (std::vector<int64_t>{1, 0, 0, 0}));
  auto ge = RunOp(MakeNode("GreaterOrEqual"), 16, {&a, &b});
  ASSERT_TRUE(ge.ok());
  EXPECT_EQ((*ge)[0].ToInt64Vector(), (std::vector<int64_t>{0, 1, 1, 1}));
  Tensor c = Make<bool>(DataType::kBool, {2, 1}, {true, false});
  Tensor x = Make<float>(DataType::kFloat, {2}, {1, 2});
  Tensor y = Make<float>(DataType::kFloat, {}, {-1});
  auto w = RunOp(MakeNode("Where"), 16, {&c, &x, &y});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ((*w)[0].ToDoubleVector(), (std::vector<double>{1, 2, -1, -1}));
  EXPECT_FALSE(RunOp(MakeNode("Where"), 16, {&x, &x, &y}).ok());  // condition not bool
}

TEST(ElementwiseLogical, BoolAndBitwise) {
  Tensor a = Make<bool>(DataType::kBool, {4}, {true, true, false, false});
  Tensor b = Make<bool>(DataType::kBool, {4}, {true, false, true, false});
  auto x = RunOp(MakeNode("Xor"), 7, {&a, &b});
  ASSERT_TRUE(x.ok());
  EXPECT_EQ((*x)[0].ToInt64Vector(), (std::vector<int64_t>{0, 1, 1, 0}));
  auto n = RunOp(MakeNode("Not"), 7, {&a});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ((*n)[0].ToInt64Vector(), (std::vector<int64_t>{0, 0, 1, 1}));
  Tensor u = Make<uint8_t>(DataType::kUint8, {3}, {1, 255, 16});
  Tensor s = Make<uint8_t>(DataType::kUint8, {3}, {3, 1, 9});
  Node shl = MakeNode("BitShift");
  shl.attrs["direction"].s = "LEFT";
  shl.attrs["direction"].kind = Attribute::Kind::kString;
  auto l = RunOp(shl, 11, {&u, &s});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ((*l)[0].ToInt64Vector(), (std::vector<int64_t>{8, 254, 0}));
  EXPECT_FALSE(RunOp(MakeNode("BitShift"), 11, {&u, &s}).ok());  // missing direction
  EXPECT_FALSE(RunOp(MakeNode("And"), 7, {&u, &s}).ok());        // And takes bools only
}

TEST(ElementwiseVariadic, SumMaxMeanBroadcast) {
  Tensor a = Make<float>(DataType::kFloat, {2, 2}, {1, 2, 3, 4});
  Tensor b = Make<float>(DataType::kFloat, {2}, {10, -10});
  Tensor c = Make<float>(DataType::kFloat, {}, {1});
  auto s = RunOp(MakeNode("Sum"), 13, {&a, &b, &c});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].ToDoubleVector(), (std::vector<double>{12, -7, 14, -5}));
  auto m = RunOp(MakeNode("Max"), 13, {&a, &b});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)[0].ToDoubleVector(), (std::vector<double>{10, 2, 10, 4}));
  auto mean = RunOp(MakeNode("Mean"), 13, {&a, &b});
  ASSERT_TRUE(mean.ok());
  EXPECT_EQ((*mean)[0].ToDoubleVector(), (std::vector<double>{5.5, -4, 6.5, -3}));
  auto one = RunOp(MakeNode("Min"), 13, {&a});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)[0].ToDoubleVector(), a.ToDoubleVector());
  Tensor i = Make<uint64_t>(DataType::kUint64, {1}, {~uint64_t{0}});
  Tensor j = Make<uint64_t>(DataType::kUint64, {1}, {1});
  auto mx = RunOp(MakeNode("Max"), 13, {&i, &j});
  ASSERT_TRUE(mx.ok());
  EXPECT_EQ((*mx)[0].data<uint64_t>()[0], ~uint64_t{0});
  Tensor d = Make<int64_t>(DataType::kInt64, {1}, {1});
  EXPECT_FALSE(RunOp(MakeNode("Sum"), 13, {&a, &d}).ok());
}

TEST(ElementwiseActivation, ReluFamily) {
  Tensor x = Make<float>(DataType::kFloat, {4}, {-2, -0.5, 0, 3});
  auto r = RunOp(MakeNode("Relu"), 14, {&x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].ToDoubleVector(), (std::vector<double>{0, 0, 0, 3}));
  Node lr = MakeNode("LeakyRelu");
  lr.attrs["alpha"].f = 0.5f;
  lr.attrs["alpha"].kind = Attribute::Kind::kFloat;
  auto l = RunOp(lr, 16, {&x});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ((*l)[0].ToDoubleVector(), (std::vector<double>{-1, -0.25, 0, 3}));
  Tensor xi = Make<int32_t>(DataType::kInt32, {2}, {-3, 3});
  auto ri = RunOp(MakeNode("Relu"), 14, {&xi});
  ASSERT_TRUE(ri.ok());
  EXPECT_EQ((*ri)[0].ToInt64Vector(), (std::vector<int64_t>{0, 3}));
  EXPECT_FALSE(RunOp(MakeNode("Relu"), 13, {&xi}).ok());  // ints only from Relu-14
  Tensor slope = Make<float>(DataType::kFloat, {1}, {0.1f});
  auto p = RunOp(MakeNode("PRelu"), 16, {&x, &slope});
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR((*p)[0].GetDouble(0), -0.2, 1e-6);
  Tensor big = Make<float>(DataType::kFloat, {2, 4}, {0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_FALSE(RunOp(MakeNode("PRelu"), 16, {&x, &big}).ok());  // slope larger than X
}

TEST(ElementwiseActivation, SmoothFunctions) {
  Tensor x = Make<double>(DataType::kDouble, {3}, {-1000, 0, 1});
  auto s = RunOp(MakeNode("Sigmoid"), 13, {&x});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].GetDouble(0), 0.0);
  EXPECT_DOUBLE_EQ((*s)[0].GetDouble(1), 0.5);
  auto g = RunOp(MakeNode("Gelu"), 20, {&x});
  ASSERT_TRUE(g.ok());
  EXPECT_NEAR((*g)[0].GetDouble(2), 0.8413447460685429, 1e-12);
  Node gt = MakeNode("Gelu");
  gt.attrs["approximate"].s = "tanh";
  gt.attrs["approximate"].kind = Attribute::Kind::kString;
  auto t = RunOp(gt, 20, {&x});
  ASSERT_TRUE(t.ok());
  EXPECT_NEAR((*t)[0].GetDouble(2), 0.8411919906082768, 1e-12);
  gt.attrs["approximate"].s = "fast";
  EXPECT_FALSE(RunOp(gt, 20, {&x}).ok());
  EXPECT_EQ(OpRegistry::Global().Find("", "Gelu", 17), nullptr);  // Gelu starts at opset 20
  Tensor h = Make<float>(DataType::kFloat16, {2}, {-4, 1});
  auto hs = RunOp(MakeNode("HardSwish"), 14, {&h});
  ASSERT_TRUE(hs.ok());
  EXPECT_EQ((*hs)[0].dtype(), DataType::kFloat16);
  EXPECT_NEAR((*hs)[0].GetDouble(1), 1.0 * (1.0 / 6 + 0.5), 1e-3);
  EXPECT_EQ((*hs)[0].GetDouble(0), 0.0);
}

TEST(ElementwiseCast, NumericStringAndHalf) {
  Tensor f = Make<float>(DataType::kFloat, {4}, {-1.7f, 2.5f, 1e10f, 0.1f});
  Node c = MakeNode("Cast");
  c.attrs["to"].i = static_cast<int64_t>(DataType::kInt32);
  auto i = RunOp(c, 13, {&f});
  ASSERT_TRUE(i.ok());
  EXPECT_EQ((*i)[0].ToInt64Vector(),
            (std::vector<int64_t>{-1, 2, std::numeric_limits<int32_t>::max(), 0}));
  c.attrs["to"].i = static_cast<int64_t>(DataType::kString);
  auto s = RunOp(c, 13, {&f});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].strings()[0], "-1.7");
  EXPECT_EQ((*s)[0].strings()[3], "0.1");
  c.attrs["to"].i = static_cast<int64_t>(DataType::kFloat);
  auto back = RunOp(c, 13, {&(*s)[0]});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)[0].ToDoubleVector(), f.ToDoubleVector());
  c.attrs["to"].i = static_cast<int64_t>(DataType::kFloat16);
  auto h = RunOp(c, 13, {&f});
  ASSERT_TRUE(h.ok());
  EXPECT_DOUBLE_EQ((*h)[0].GetDouble(1), 2.5);
  EXPECT_TRUE(std::isinf((*h)[0].GetDouble(2)));  // 1e10 overflows half
  Tensor bad(DataType::kString, {1});
  bad.strings()[0] = "abc";
  c.attrs["to"].i = static_cast<int64_t>(DataType::kFloat);
  EXPECT_FALSE(RunOp(c, 13, {&bad}).ok());
  c.attrs["to"].i = 999;
  EXPECT_FALSE(RunOp(c, 13, {&f}).ok());
  Tensor big = Make<int64_t>(DataType::kInt64, {1}, {(int64_t{1} << 60) + 1});
  c.attrs["to"].i = static_cast<int64_t>(DataType::kUint64);
  auto u = RunOp(c, 13, {&big});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ((*u)[0].data<uint64_t>()[0], (uint64_t{1} << 60) + 1);  // exact
}

TEST(ElementwiseCast, InferenceKeepsShape) {
  Node c = MakeNode("Cast");
  c.attrs["to"].i = static_cast<int64_t>(DataType::kInt64);
  TensorType t(DataType::kFloat, {Dim::Symbol("B"), Dim(3)});
  auto r = Infer(c, 13, {&t});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].ToString(), "int64[B,3]");
  TensorType like(DataType::kFloat16, {Dim(1)});
  auto l = Infer(MakeNode("CastLike"), 15, {&t, &like});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ((*l)[0].dtype, DataType::kFloat16);
}

TEST(ElementwiseDropout, InferenceIsIdentity) {
  Tensor x = Make<float>(DataType::kFloat, {3}, {1, 2, 3});
  auto r = RunOp(MakeNode("Dropout", 2), 13, {&x});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0], x);
  EXPECT_EQ((*r)[1].dtype(), DataType::kBool);
  EXPECT_EQ((*r)[1].ToInt64Vector(), (std::vector<int64_t>{1, 1, 1}));
  Tensor ratio = Make<float>(DataType::kFloat, {}, {0.5});
  Tensor train = Make<bool>(DataType::kBool, {}, {true});
  auto t = RunOp(MakeNode("Dropout"), 13, {&x, &ratio, &train});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace switchyard
