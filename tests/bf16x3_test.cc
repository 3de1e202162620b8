// precision=bf16x3: convolutions as three bf16 products of f32 data split in high and low
// halves. The split itself (native::SplitBf16x3), the knob (offered with AMX only, scoped
// overrides), and whole engines against the reference: group-1 convolutions run as bf16x3,
// depthwise ones stay fp32, and the outputs land far closer to fp32 than precision=bf16's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "backends/cpu/native/native.h"
#include "engine_test_util.h"
#include "ir/dtype.h"
#include "onnx/importer.h"

namespace switchyard::engine_test {
namespace {

// The host CPU as if it had AMX (bf16x3 is offered there only); its kernels run on
// AVX512_BF16, which the tests need.
Target AmxTarget() {
  Target t = Target::HostCpu();
  t.features.amx_bf16 = true;
  return t;
}

Result<Built> BuildFor(const Graph& g, const Target& target, const std::string& route_text, const BuildOptions& opt) {
  const RouteSpace space = RouteSpace::For(g, target);
  SY_ASSIGN_OR_RETURN(Route route, space.Parse(route_text));
  Built b;
  SY_ASSIGN_OR_RETURN(b.engine, BuildEngine(g, space, route, target, opt, &b.report));
  return b;
}

TEST(Bf16x3, SplitGivesHighHighLowAndRecoversSixteenBits) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1000.f, 1000.f);
  for (int64_t c : {1, 16, 19, 64}) {
    const int64_t rows = 37;
    std::vector<float> x(static_cast<size_t>(rows * c));
    for (float& v : x) v = u(rng) * std::pow(2.f, static_cast<float>(static_cast<int>(rng() % 40) - 20));
    x[0] = std::numeric_limits<float>::infinity();
    x[1 % x.size()] = -3.f;  // exact in bf16: lo 0
    std::vector<uint16_t> y(static_cast<size_t>(3 * rows * c), 0xffff);
    native::SplitBf16x3(x.data(), y.data(), rows, c, 2);
    double worst = 0;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < c; ++j) {
        const float v = x[r * c + j];
        const uint16_t* row = y.data() + r * 3 * c;
        ASSERT_EQ(row[j], FloatToBfloat16(v)) << "c " << c << " row " << r << " channel " << j;
        ASSERT_EQ(row[c + j], row[j]) << "c " << c << " row " << r << " channel " << j;
        const float lo = Bfloat16ToFloat(row[2 * c + j]);
        if (!std::isfinite(v)) {
          EXPECT_EQ(lo, 0.f);
          continue;
        }
        if (Bfloat16ToFloat(row[j]) == v) EXPECT_EQ(lo, 0.f) << v;
        const double sum = static_cast<double>(Bfloat16ToFloat(row[j])) + lo;
        worst = std::max(worst, std::fabs(sum - v) / std::fabs(v));
      }
    }
    EXPECT_LE(worst, std::ldexp(1.0, -16)) << "c " << c;  // bf16's own: 2^-9
  }
}

TEST(Bf16x3, OfferedWithAmxOnlyAndAsAScopedOverride) {
  auto g = ImportModel(kModels + "resnet_tiny.onnx");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Target plain = Target::HostCpu();
  plain.features.amx_bf16 = false;
  plain.features.avx512_bf16 = true;
  const RouteSpace without = RouteSpace::For(*g, plain);
  auto refused = without.Parse("precision=bf16x3");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("allowed: fp32|bf16"), std::string::npos) << refused.status().ToString();
  const std::string conv = g->nodes[0].name;
  auto scoped = without.Parse("precision=bf16 precision@" + conv + "=bf16x3");
  ASSERT_FALSE(scoped.ok());
  EXPECT_NE(scoped.status().ToString().find("allowed: fp32"), std::string::npos) << scoped.status().ToString();

  const RouteSpace with = RouteSpace::For(*g, AmxTarget());
  EXPECT_TRUE(with.Parse("precision=bf16x3").ok());
  EXPECT_TRUE(with.Parse("precision=bf16 precision@" + conv + "=bf16x3").ok());
  EXPECT_TRUE(with.Parse("precision=bf16 precision@" + conv + "=fp32").ok());
  EXPECT_TRUE(with.Parse("precision@" + conv + "=bf16x3").ok()) << "one node bf16x3 in an fp32 route";
  auto same = with.Parse("precision=bf16x3 precision@" + conv + "=bf16x3");
  ASSERT_FALSE(same.ok());
  EXPECT_NE(same.status().ToString().find("has no effect"), std::string::npos) << same.status().ToString();
  auto wino = with.Parse("precision=bf16x3 kernel.conv=winograd");
  ASSERT_FALSE(wino.ok());
  EXPECT_NE(wino.status().ToString().find("Winograd"), std::string::npos) << wino.status().ToString();
}

// Whole engines: every group-1 convolution of the route runs as oneDNN bf16x3 (the steps
// say so, and the build report counts them), the depthwise ones and those with an input
// scale as fp32; the outputs
// within 1e-4 of the reference and at least 20 times closer than precision=bf16's.
TEST(EngineBf16x3, ConvolutionsRunAsThreeBf16ProductsNearFp32) {
  if (!Target::HostCpu().features.avx512_bf16) GTEST_SKIP() << "no AVX512_BF16: bf16x3 runs on no kernel here";
  const Target target = AmxTarget();
  for (const char* model : {"resnet_tiny", "mobilenetv2_tiny", "efficientnet_tiny"}) {
    auto g = ImportModel(kModels + model + ".onnx");
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    const TensorMap in = LoadInputs(kModels + model + ".inputs");
    auto ref_exec = ReferenceExecutor::Create(*g);
    ASSERT_TRUE(ref_exec.ok()) << ref_exec.status().ToString();
    auto ref = ref_exec->Run(in);
    ASSERT_TRUE(ref.ok()) << ref.status().ToString();
    double err[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const std::string route = k == 0 ? "precision=bf16x3 threads=2" : "precision=bf16 threads=2";
      auto b = BuildFor(*g, target, route, FixedShapes(in));
      ASSERT_TRUE(b.ok()) << model << " " << route << ": " << b.status().ToString();
      if (k == 0) {
        int x3 = 0, depthwise_fp32 = 0;
        for (const EngineStep& st : b->engine.steps) {
          if (st.op_type != "Conv" && st.op_type != "FusedConv") continue;
          const bool depthwise = st.attrs.contains("group") && st.attrs["group"].value("i", int64_t{1}) != 1;
          const std::string p = st.params.value("precision", "fp32");
          // An input scale (fuse.conv_scale's squeeze-excite product) scales the weights per
          // call: such a projection stays fp32 too.
          const bool scaled = st.inputs.size() > 4 && st.inputs[4] >= 0;
          if (depthwise || scaled) {
            depthwise_fp32 += p == "fp32";
            EXPECT_NE(p, "bf16x3") << model << " " << st.name;
          } else {
            x3 += p == "bf16x3";
            EXPECT_EQ(p, "bf16x3") << model << " " << st.name << " (" << st.provider << "/" << st.variant << ")";
          }
        }
        EXPECT_GT(x3, 0) << model;
        EXPECT_EQ(b->report.fired["precision.bf16x3_nodes"], x3) << model;
        if (std::string(model) != "resnet_tiny") EXPECT_GT(depthwise_fp32, 0) << model;
      }
      const TensorMap out = RunEngine(b->engine, in);
      for (const auto& [name, want] : *ref) {
        ASSERT_TRUE(out.count(name)) << model << ": missing " << name;
        err[k] = std::max(err[k], RelativeL2(out.at(name), want));
      }
    }
    EXPECT_LE(err[0], 1e-4) << model;
    EXPECT_LE(err[0] * 20, err[1]) << model << ": bf16x3 " << err[0] << ", bf16 " << err[1];
    std::printf("[bf16x3] %s: rel L2 bf16x3 %.3g, bf16 %.3g\n", model, err[0], err[1]);
  }
}

// A bf16 route with one scope in bf16x3 (the repair's form): those convolutions run as
// bf16x3 on f32 activations, Casts at their boundaries, the rest bf16.
TEST(EngineBf16x3, ScopedInsideABf16Route) {
  if (!Target::HostCpu().features.avx512_bf16) GTEST_SKIP() << "no AVX512_BF16: bf16x3 runs on no kernel here";
  auto g = ImportModel(kModels + "resnet_tiny.onnx");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const TensorMap in = LoadInputs(kModels + "resnet_tiny.inputs");
  std::string first;
  for (const Node& n : g->nodes) {
    if (n.op_type == "Conv") {
      first = n.name;
      break;
    }
  }
  ASSERT_FALSE(first.empty());
  auto b = BuildFor(*g, AmxTarget(), "precision=bf16 precision@" + first + "=bf16x3", FixedShapes(in));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  int x3 = 0, bf16 = 0;
  for (const EngineStep& st : b->engine.steps) {
    if (st.op_type != "Conv" && st.op_type != "FusedConv") continue;
    const std::string p = st.params.value("precision", "fp32");
    x3 += p == "bf16x3";
    bf16 += p == "bf16";
  }
  EXPECT_EQ(x3, 1);
  EXPECT_GT(bf16, 0);
  ExpectMatchesReference(*g, b->engine, in, 5e-2, "resnet_tiny bf16 with one bf16x3 conv");
}

}  // namespace
}  // namespace switchyard::engine_test
