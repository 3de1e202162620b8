// Native kernels beyond the harness: one kernel reused across runtime shapes (dynamic
// dims), shape-carrying inputs at run time, concurrent Run calls, and bad inputs that
// must come back as errors naming the node.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "backends/cpu/native/avx512_exp.h"
#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/gemm.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/op_impl.h"
#include "backends/cpu/single_op.h"
#include "ir/dtype.h"
#include "kernel_harness.h"

namespace switchyard {
namespace {

const CpuOpImpl& Native(const std::string& domain, const std::string& op) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("native", domain, op);
  EXPECT_NE(impl, nullptr) << op;
  return *impl;
}

Node MakeNode(const std::string& op, int since, size_t n_in, size_t n_out = 1) {
  Node n;
  n.name = "n_" + op;
  n.op_type = op;
  n.since_version = since;
  for (size_t i = 0; i < n_in; ++i) n.inputs.push_back(static_cast<ValueId>(i));
  for (size_t i = 0; i < n_out; ++i) n.outputs.push_back(static_cast<ValueId>(10 + i));
  return n;
}

TensorRef Ref(Tensor& t) { return TensorRef{t.dtype(), t.shape(), t.raw(), ""}; }

// Creates a kernel as the runtime would for a model with dynamic dims (-1 at build time).
std::unique_ptr<Kernel> CreateDynamic(const CpuOpImpl& impl, const Node& n, size_t n_in) {
  const nlohmann::json params = nlohmann::json::object();
  StepView v{n, params, {}, std::vector<std::vector<int64_t>>(n_in, {-1, -1}), {{-1, -1}},
             std::vector<DataType>(n_in, DataType::kFloat), {DataType::kFloat}, {}, {}};
  auto k = impl.create(v);
  EXPECT_TRUE(k.ok()) << k.status().ToString();
  return std::move(*k);
}

// The native 1x1 convolution shares a layer between threads as pixel ranges times
// column-group ranges (conv_1x1.cc's ChooseSplit), splitting the columns too where a
// thread has few pixels. Every split computes each output with the same sums, so the
// outputs at 2, 3, 4 and 8 threads equal the one-thread run's bit for bit (which the
// kernel harness checks against the reference). 64 -> 144 channels (64-, 64- and 16-wide
// column groups) with bias, residual and Relu: 200 pixels at 4 threads split 2 x 2; 49
// pixels (a last group of 1) at 4 threads 2 x 2, at 3 threads 1 x 3; 12 pixels at 2
// threads 1 x 2; 9 pixels at 8 threads 2 x 1 (fewer pixel groups than threads).
TEST(NativeKernels, Conv1x1SplitsOfPixelsAndColumnsGiveTheOneThreadResult) {
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512: the native 1x1 kernel is AVX-512 only";
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("native", "switchyard", "FusedConv", "nhwc_1x1");
  ASSERT_NE(impl, nullptr);
  Node n = MakeNode("FusedConv", 1, 4);
  n.domain = "switchyard";
  n.attrs["activation"] = harness::Str("Relu");
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto filled = [&](std::vector<int64_t> shape, float scale) {
    Tensor t(DataType::kFloat, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = scale * u(rng);
    return t;
  };
  Tensor w = filled({144, 64, 1, 1}, 0.2f), b = filled({144}, 1.f);
  for (const auto& [h, wd, threads] : std::vector<std::array<int64_t, 3>>{{10, 20, 4}, {7, 7, 4}, {7, 7, 3}, {3, 4, 2}, {3, 3, 8}}) {
    Tensor x = filled({1, 64, h, wd}, 1.f), z = filled({1, 144, h, wd}, 1.f);
    SingleOpOptions opt;
    opt.layout = "nhwc";
    opt.constant_inputs = {false, true, true, false};
    auto one = RunSingleOp(*impl, n, 13, {&x, &w, &b, &z}, opt);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    opt.threads = static_cast<int>(threads);
    auto many = RunSingleOp(*impl, n, 13, {&x, &w, &b, &z}, opt);
    ASSERT_TRUE(many.ok()) << many.status().ToString();
    const Tensor& want = (*one)[0];
    const Tensor& got = (*many)[0];
    ASSERT_EQ(got.shape(), want.shape());
    int64_t differ = 0;
    for (int64_t i = 0; i < want.numel(); ++i) differ += got.data<float>()[i] != want.data<float>()[i];
    EXPECT_EQ(differ, 0) << h << "x" << wd << " pixels at " << threads << " threads";
  }
}

// The automatic F(2x2) Winograd (native/winograd_f23_auto) takes a layer only with 8 or more
// 2x2 output tiles per thread (conv_winograd.cc's kAutoMinTilesPerThread): a 64 -> 64 3x3
// layer at 14x14 (49 tiles) at 1, 2 and 6 threads but not 7 or 16; at 28x28 (196 tiles) at
// 16 threads. Where it takes the layer, its outputs equal the one-thread run's.
TEST(NativeKernels, WinogradF23AutoNeedsEightTilesPerThread) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("native", "", "Conv", "winograd_f23_auto");
  ASSERT_NE(impl, nullptr);
  if (!CpuImplRegistry::Global().Available(*impl)) {
    GTEST_SKIP() << "not an Intel CPU with AVX-512: the automatic F(2x2) is not taken here";
  }
  Node n = MakeNode("Conv", 1, 2);
  n.attrs["pads"] = harness::Ints({1, 1, 1, 1});
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto filled = [&](std::vector<int64_t> shape, float scale) {
    Tensor t(DataType::kFloat, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = scale * u(rng);
    return t;
  };
  Tensor w = filled({64, 64, 3, 3}, 0.1f);
  for (const auto& [hw, threads, taken] : std::vector<std::array<int64_t, 3>>{
           {14, 1, 1}, {14, 2, 1}, {14, 6, 1}, {14, 7, 0}, {14, 16, 0}, {28, 16, 1}}) {
    Tensor x = filled({1, 64, hw, hw}, 1.f);
    SingleOpOptions opt;
    opt.layout = "nhwc";
    opt.constant_inputs = {false, true};
    opt.threads = static_cast<int>(threads);
    auto got = RunSingleOp(*impl, n, 13, {&x, &w}, opt);
    const std::string label = std::to_string(hw) + "x" + std::to_string(hw) + " at " + std::to_string(threads) + " threads";
    if (!taken) {
      EXPECT_EQ(got.status().code(), StatusCode::kUnsupported) << label;
      continue;
    }
    ASSERT_TRUE(got.ok()) << label << ": " << got.status().ToString();
    opt.threads = 1;
    auto one = RunSingleOp(*impl, n, 13, {&x, &w}, opt);
    ASSERT_TRUE(one.ok()) << label << ": " << one.status().ToString();
    int64_t differ = 0;
    for (int64_t i = 0; i < one->at(0).numel(); ++i) differ += got->at(0).data<float>()[i] != one->at(0).data<float>()[i];
    EXPECT_EQ(differ, 0) << label;
  }
}

// FastExp and the ops built on it (Sigmoid, SiLU, tanh GELU) against fp64 formulas over
// [-100, 100] in steps of 1/64, through the span function the kernels call: FastExp's
// relative error below 4e-7; the activations' below 1e-5 (absolute where the value is
// under 1e-30); NaN stays NaN.
TEST(NativeKernels, FastExpAndTheActivationsOnItAreAccurate) {
  std::vector<float> x;
  for (int i = -6400; i <= 6400; ++i) x.push_back(static_cast<float>(i) / 64.f);
  x.push_back(std::nanf(""));
  const int64_t n = static_cast<int64_t>(x.size());
  double worst_exp = 0;
  for (int64_t i = 0; i + 1 < n; ++i) {
    if (x[i] < -87.f || x[i] > 88.f) continue;
    const double want = std::exp(static_cast<double>(x[i]));
    worst_exp = std::max(worst_exp, std::fabs(native::FastExp(x[i]) - want) / want);
  }
  EXPECT_LT(worst_exp, 4e-7);
  EXPECT_TRUE(std::isnan(native::FastExp(std::nanf(""))));
  struct Case {
    native::UnaryOp op;
    double (*f)(double);
  };
  const Case cases[] = {
      {native::UnaryOp::kSigmoid, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
      {native::UnaryOp::kSiLU, [](double v) { return v / (1.0 + std::exp(-v)); }},
      // 0.5 v (1 + tanh u) as v / (1 + e^-2u): the same function without fp64's
      // cancellation in 1 + tanh u for u < -19.
      {native::UnaryOp::kGeluTanh,
       [](double v) { return v / (1.0 + std::exp(-2.0 * std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))); }},
  };
  for (const Case& c : cases) {
    std::vector<float> y(x.size());
    native::ApplyUnary(c.op, {}, x.data(), y.data(), n);
    double worst = 0;
    for (int64_t i = 0; i + 1 < n; ++i) {
      const double want = c.f(x[i]);
      const double err = std::fabs(y[i] - want);
      worst = std::max(worst, std::fabs(want) > 1e-30 ? err / std::fabs(want) : err);
      ASSERT_TRUE(std::isfinite(y[i])) << static_cast<int>(c.op) << " at " << x[i];
    }
    // 1e-5: for GELU's far negative tail the float argument of e^(-2u) (|2u| up to 88)
    // carries ~5e-6 of relative rounding error itself.
    EXPECT_LT(worst, 1e-5) << "op " << static_cast<int>(c.op);
    EXPECT_TRUE(std::isnan(y.back())) << "op " << static_cast<int>(c.op);
  }
  // The erf GELU goes through A&S 7.1.26 (absolute error of erf below 1.5e-7): bounded in
  // absolute terms, scaled by |x| (measured 1.9e-7 over [-100, 100]).
  std::vector<float> y(x.size());
  native::ApplyUnary(native::UnaryOp::kGelu, {}, x.data(), y.data(), n);
  double worst_gelu = 0;
  for (int64_t i = 0; i + 1 < n; ++i) {
    const double v = x[i], want = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    worst_gelu = std::max(worst_gelu, std::fabs(y[i] - want) / std::max(1.0, std::fabs(v)));
  }
  EXPECT_LT(worst_gelu, 3e-7);
  EXPECT_TRUE(std::isnan(y.back()));
}

// No denormals out of FastExp or the softmax: e^-inf and e^x below ln(FLT_MIN) are 0, and
// a softmax row gives exact zeros for -inf (a causal mask) and for terms more than 80 below
// the max, and normal numbers otherwise (denormal operands cost Intel cores a microcode
// assist per instruction: GPT-2-small's causal attention ran 15x slower).
TEST(NativeKernels, FastExpAndSoftmaxGiveNoDenormals) {
  EXPECT_EQ(native::FastExp(-INFINITY), 0.f);
  EXPECT_EQ(native::FastExp(-87.5f), 0.f);
  EXPECT_EQ(native::FastExp(-1000.f), 0.f);
  for (float x = -90.f; x < -80.f; x += 1.f / 256) {
    const float y = native::FastExp(x);
    EXPECT_TRUE(y == 0.f || std::fpclassify(y) == FP_NORMAL) << "FastExp(" << x << ") = " << y;
    if (x >= -87.f) EXPECT_NEAR(y / std::exp(static_cast<double>(x)), 1.0, 4e-7) << x;
  }
  std::vector<float> row = {0.f, -INFINITY, -10.f, -79.f, -81.f, -86.f, -200.f, -INFINITY};
  for (int i = 0; i < 120; ++i) row.push_back(-79.5f);  // a long row: sum > 1
  std::vector<float> p(row.size());
  native::SoftmaxRow(row.data(), p.data(), static_cast<int64_t>(row.size()), /*log=*/false);
  double sum = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    EXPECT_TRUE(p[i] == 0.f || std::fpclassify(p[i]) == FP_NORMAL) << i << ": " << p[i];
    sum += p[i];
  }
  EXPECT_EQ(p[1], 0.f);
  EXPECT_EQ(p[4], 0.f);
  EXPECT_EQ(p[7], 0.f);
  EXPECT_GT(p[3], 0.f);
  EXPECT_NEAR(p[2] / p[0], std::exp(-10.0), 1e-6 * std::exp(-10.0));
  EXPECT_NEAR(sum, 1.0, 1e-6);
}

// PackB of a B stored by columns (element (k, n) at b[k + n*cs], attention's Kᵀ) gives
// 16-column panels [N/16][K][16], zero padded, at every K and N remainder.
TEST(NativeKernels, PackBOfColumnsIsThePanelLayout) {
  for (int64_t K : {1, 5, 16, 17, 40, 64}) {
    for (int64_t N : {1, 7, 16, 21, 33}) {
      const int64_t cs = K + 3;  // a row stride larger than K, as a strided view has
      std::vector<float> b(static_cast<size_t>(N * cs));
      for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.5f - 7.f;
      std::vector<float> packed(static_cast<size_t>(native::PackedBSize(K, N)), -1.f);
      native::PackB(b.data(), K, N, 1, cs, packed.data());
      for (int64_t n = 0; n < (N + 15) / 16 * 16; ++n) {
        for (int64_t k = 0; k < K; ++k) {
          const float want = n < N ? b[static_cast<size_t>(k + n * cs)] : 0.f;
          ASSERT_EQ(packed[static_cast<size_t>((n / 16) * K * 16 + k * 16 + n % 16)], want)
              << "K " << K << " N " << N << " k " << k << " n " << n;
        }
      }
    }
  }
}

TEST(NativeKernels, MatMulKernelServesManyShapes) {
  const Node n = MakeNode("MatMul", 13, 2);
  auto kernel = CreateDynamic(Native("", "MatMul"), n, 2);
  for (int64_t m : {1, 5, 13}) {
    Tensor a(DataType::kFloat, {m, 3}), b(DataType::kFloat, {3, 2});
    for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = static_cast<float>(i);
    for (int64_t i = 0; i < 6; ++i) b.data<float>()[i] = static_cast<float>(i % 3 - 1);
    TensorRef ra = Ref(a), rb = Ref(b);
    auto shapes = kernel->OutputShapes({&ra, &rb});
    ASSERT_TRUE(shapes.ok());
    ASSERT_EQ((*shapes)[0], (std::vector<int64_t>{m, 2}));
    Tensor y(DataType::kFloat, (*shapes)[0]);
    TensorRef ry = Ref(y);
    ASSERT_TRUE(kernel->Run(KernelIO{{&ra, &rb}, {&ry}, 2}).ok());
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < 2; ++c) {
        double want = 0;
        for (int64_t k = 0; k < 3; ++k) want += a.data<float>()[r * 3 + k] * b.data<float>()[k * 2 + c];
        EXPECT_FLOAT_EQ(y.data<float>()[r * 2 + c], static_cast<float>(want));
      }
    }
  }
}

TEST(NativeKernels, ReshapeReadsShapeAtRunTime) {
  const Node n = MakeNode("Reshape", 14, 2);
  auto kernel = CreateDynamic(Native("", "Reshape"), n, 2);
  Tensor x(DataType::kFloat, {2, 6});
  for (auto [shape, want] : {std::pair{std::vector<int64_t>{3, -1}, std::vector<int64_t>{3, 4}},
                             std::pair{std::vector<int64_t>{0, 3, 2}, std::vector<int64_t>{2, 3, 2}}}) {
    Tensor s = Tensor::FromInt64(shape, {static_cast<int64_t>(shape.size())});
    TensorRef rx = Ref(x), rs = Ref(s);
    auto shapes = kernel->OutputShapes({&rx, &rs});
    ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
    EXPECT_EQ((*shapes)[0], want);
  }
  Tensor bad = Tensor::FromInt64({5, -1}, {2});
  TensorRef rx = Ref(x), rb = Ref(bad);
  auto shapes = kernel->OutputShapes({&rx, &rb});
  ASSERT_FALSE(shapes.ok());
  EXPECT_NE(shapes.status().message().find("n_Reshape"), std::string::npos);
}

TEST(NativeKernels, SoftmaxRunIsThreadSafe) {
  Node n = MakeNode("Softmax", 13, 1);
  auto kernel = CreateDynamic(Native("", "Softmax"), n, 1);
  Tensor x(DataType::kFloat, {64, 128});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.1f * i);
  TensorRef rx = Ref(x);
  Tensor want(DataType::kFloat, {64, 128});
  TensorRef rw = Ref(want);
  ASSERT_TRUE(kernel->Run(KernelIO{{&rx}, {&rw}, 1}).ok());
  std::vector<std::thread> threads;
  std::vector<int> same(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      Tensor y(DataType::kFloat, {64, 128});
      TensorRef ry = Ref(y);
      for (int rep = 0; rep < 20; ++rep) {
        if (!kernel->Run(KernelIO{{&rx}, {&ry}, 2}).ok()) return;
      }
      same[t] = y == want;
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_TRUE(same[t]) << "thread " << t;
}

TEST(NativeKernels, GatherOutOfRangeIsAnError) {
  Node n = MakeNode("Gather", 13, 2);
  Tensor data(DataType::kFloat, {3, 2});
  Tensor idx = Tensor::FromInt64({0, 3}, {2});
  auto r = RunSingleOp(Native("", "Gather"), n, 13, {&data, &idx});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("out of range"), std::string::npos) << r.status().ToString();
}

TEST(NativeKernels, MatMulInnerMismatchIsAnError) {
  const Node n = MakeNode("MatMul", 13, 2);
  auto kernel = CreateDynamic(Native("", "MatMul"), n, 2);
  Tensor a(DataType::kFloat, {2, 3}), b(DataType::kFloat, {4, 2});
  TensorRef ra = Ref(a), rb = Ref(b);
  auto shapes = kernel->OutputShapes({&ra, &rb});
  ASSERT_FALSE(shapes.ok());
  EXPECT_NE(shapes.status().message().find("inner dimensions"), std::string::npos);
}

TEST(NativeKernels, IntegerDivisionByZeroIsAnError) {
  Node n = MakeNode("Div", 14, 2);
  Tensor a = Tensor::FromInt64({4, 6}, {2}), b = Tensor::FromInt64({2, 0}, {2});
  auto r = RunSingleOp(Native("", "Div"), n, 14, {&a, &b});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("division by zero"), std::string::npos);
}

// Not a benchmark: a guard that the blocked GEMM is far from a naive loop (a 256^3
// product must take well under 50 ms even on a loaded 2-core machine).
TEST(NativeKernels, GemmIsBlocked) {
  const Node n = MakeNode("MatMul", 13, 2);
  Tensor a(DataType::kFloat, {256, 256}), b(DataType::kFloat, {256, 256});
  for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = b.data<float>()[i] = 0.001f * (i % 97);
  SingleOpOptions opt;
  opt.constant_inputs = {false, true};
  auto r = RunSingleOp(Native("", "MatMul"), n, 13, {&a, &b}, opt);  // warm-up
  ASSERT_TRUE(r.ok());
  const auto t0 = std::chrono::steady_clock::now();
  r = RunSingleOp(Native("", "MatMul"), n, 13, {&a, &b}, opt);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok());
  EXPECT_LT(ms, 50.0);
  std::printf("[native] 256^3 MatMul via RunSingleOp: %.2f ms (%.1f GFLOP/s incl. setup)\n", ms,
              2.0 * 256 * 256 * 256 / ms / 1e6);
}

// The vectorized e^x (softmax rows) over its whole input range: 3e-7 relative where the
// result is normal, 0 and inf far out (before, only n was clamped: e^-1e6 was 4e-6 and
// e^-1e9 inf), NaN stays NaN.
__attribute__((target("avx512f"))) static void ExpLanes(const float* x, float* y) {
  _mm512_storeu_ps(y, native::ExpAvx512(_mm512_loadu_ps(x)));
}
TEST(NativeKernels, ExpAvx512CoversTheWholeRange) {
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 on this CPU: ExpAvx512 is not used";
  double worst = 0;
  for (int i = -87 * 64; i <= 88 * 64; i += 16) {
    float x[16], y[16];
    for (int k = 0; k < 16; ++k) x[k] = static_cast<float>(i + k) / 64.f;
    ExpLanes(x, y);
    for (int k = 0; k < 16; ++k) worst = std::max(worst, std::fabs(y[k] / std::exp(double{x[k]}) - 1));
  }
  EXPECT_LT(worst, 3e-7);
  const float far[16] = {-3.4e38f, -1e9f, -1e6f, -1e4f, -200.f, -110.f, 89.f, 100.f, 1e4f, 3.4e38f,
                         std::nanf(""), -INFINITY, INFINITY, 0.f, 1.f, -1.f};
  float y[16];
  ExpLanes(far, y);
  for (int k = 0; k < 6; ++k) EXPECT_EQ(y[k], 0.f) << "e^" << far[k];
  for (int k = 6; k < 10; ++k) EXPECT_EQ(y[k], INFINITY) << "e^" << far[k];
  EXPECT_TRUE(std::isnan(y[10]));
  EXPECT_EQ(y[11], 0.f);
  EXPECT_EQ(y[12], INFINITY);
  EXPECT_EQ(y[13], 1.f);
}

// The SiLU that oneDNN convolutions apply after the primitive: fp32 within 4e-7 relative of
// the fp64 function over [-100, 100] (absolute under 1e-30), bf16 within one bf16 step of
// the correctly rounded value and on it for 98% of the inputs; NaN stays NaN; overflowing
// and underflowing e^-x and +inf (fp32); an odd
// length (masked tails) over 2 threads.
TEST(NativeKernels, SiluInPlaceMatchesTheFunction) {
  std::vector<float> x;
  for (int i = -6400; i <= 6400; ++i) x.push_back(static_cast<float>(i) / 64.f);
  x.push_back(std::nanf(""));
  const int64_t n = static_cast<int64_t>(x.size());
  ASSERT_NE(n % 16, 0);
  const auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  std::vector<float> y = x;
  native::SiluInPlace(y.data(), false, y.size() * sizeof(float), 2);
  double worst = 0;
  for (int64_t i = 0; i + 1 < n; ++i) {
    const double want = silu(x[i]), err = std::fabs(y[i] - want);
    worst = std::max(worst, std::fabs(want) > 1e-30 ? err / std::fabs(want) : err);
  }
  EXPECT_LT(worst, 4e-7);
  EXPECT_TRUE(std::isnan(y.back()));
  // Far out, where e^-x overflows or underflows (the fp32 path has no clamp): x itself
  // above, -0 below (the true values are under 1e-40), +inf stays +inf.
  std::vector<float> far = {1e30f, 3e6f, 200.f, 89.f, -89.f, -200.f, -3e6f, -1e30f, INFINITY};
  native::SiluInPlace(far.data(), false, far.size() * sizeof(float), 1);
  EXPECT_EQ(far[0], 1e30f);
  EXPECT_EQ(far[1], 3e6f);
  EXPECT_EQ(far[2], 200.f);
  EXPECT_EQ(far[3], 89.f);
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(far[i] == 0.f && std::signbit(far[i])) << i << ": " << far[i];
  EXPECT_EQ(far[8], INFINITY);
  std::vector<uint16_t> h(x.size());
  for (size_t i = 0; i < x.size(); ++i) h[i] = FloatToBfloat16(x[i]);
  const std::vector<uint16_t> in = h;
  native::SiluInPlace(h.data(), true, h.size() * sizeof(uint16_t), 2);
  int64_t off = 0;
  for (int64_t i = 0; i + 1 < n; ++i) {
    const float v = Bfloat16ToFloat(in[i]), want = static_cast<float>(silu(v)), got = Bfloat16ToFloat(h[i]);
    // One bf16 step: 2^-7 relative of the value, or 1e-30 absolute near zero.
    ASSERT_LE(std::fabs(got - want), std::max(std::fabs(want) / 128.f, 1e-30f)) << "at x = " << v;
    off += std::fabs(want) > 1e-30f && h[i] != FloatToBfloat16(want);  // the vector path flushes denormals
  }
  EXPECT_LT(off, (n - 1) / 50) << off << " of " << n - 1 << " off the correctly rounded bf16";
  EXPECT_TRUE(std::isnan(Bfloat16ToFloat(h.back())));
  // The 32-value steps take two bf16 per 32-bit lane: NaN in an even and in an odd place of
  // one stays NaN, and its neighbours keep their own values.
  std::vector<uint16_t> pair(64, FloatToBfloat16(2.f));
  pair[6] = pair[37] = FloatToBfloat16(std::nanf(""));
  native::SiluInPlace(pair.data(), true, pair.size() * sizeof(uint16_t), 1);
  for (size_t i = 0; i < pair.size(); ++i) {
    if (i == 6 || i == 37) {
      EXPECT_TRUE(std::isnan(Bfloat16ToFloat(pair[i]))) << i;
    } else {
      EXPECT_NEAR(Bfloat16ToFloat(pair[i]), silu(2.0), 2.0 / 128) << i;
    }
  }
}

// AddRows (the channel sums of nhwc rows) gives the bits of the plain row-by-row float sum
// for every channel count (64-channel register groups, a masked tail) and row count.
TEST(NativeKernels, AddRowsIsTheRowByRowSum) {
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (int64_t c : {1, 5, 16, 31, 64, 80, 130, 1152}) {
    for (int64_t rows : {1, 2, 7, 64}) {
      std::vector<float> x(static_cast<size_t>(rows * c)), acc(static_cast<size_t>(c)), want;
      for (float& v : x) v = u(gen);
      for (float& v : acc) v = u(gen);
      want = acc;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < c; ++j) want[j] += x[r * c + j];
      }
      native::AddRows(x.data(), rows, c, acc.data());
      for (int64_t j = 0; j < c; ++j) ASSERT_EQ(acc[j], want[j]) << c << " channels, " << rows << " rows, channel " << j;
    }
  }
}

// The SiLU with the channel means of its result in one pass (a convolution's SiLU and the
// GlobalAveragePool folded into it): the SiLU's bits are SiluInPlace's, the means within
// 1e-6 of the fp64 means of those values; batch 1 split over 2 threads, batch 3 by image,
// one pixel, and odd channel counts.
TEST(NativeKernels, SiluChannelMeansAreTheMeansOfTheSilu) {
  std::mt19937 gen(4);
  std::uniform_real_distribution<float> u(-6.f, 6.f);
  struct Case {
    int64_t n, c, pixels;
    int threads;
  };
  for (const Case& k : {Case{1, 32, 112 * 112, 2}, Case{1, 1152, 49, 2}, Case{3, 24, 300, 2}, Case{1, 40, 1, 2},
                        Case{2, 7, 50, 1}, Case{1, 96, 3136, 1}}) {
    std::vector<float> x(static_cast<size_t>(k.n * k.c * k.pixels));
    for (float& v : x) v = u(gen);
    std::vector<float> want = x, y = x, means(static_cast<size_t>(k.n * k.c), -1.f);
    native::SiluInPlace(want.data(), false, want.size() * sizeof(float), 1);
    native::SiluChannelMeansNhwc(y.data(), k.n, k.c, k.pixels, means.data(), k.threads);
    const std::string label = std::to_string(k.n) + "x" + std::to_string(k.c) + "x" + std::to_string(k.pixels);
    ASSERT_EQ(std::memcmp(y.data(), want.data(), y.size() * sizeof(float)), 0) << label;
    for (int64_t b = 0; b < k.n; ++b) {
      for (int64_t j = 0; j < k.c; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k.pixels; ++p) sum += want[(b * k.pixels + p) * k.c + j];
        const double mean = sum / static_cast<double>(k.pixels);
        ASSERT_NEAR(means[b * k.c + j], mean, 1e-6 * std::max(1.0, std::fabs(mean))) << label << " image " << b << " channel " << j;
      }
    }
  }
}

}  // namespace
}  // namespace switchyard
