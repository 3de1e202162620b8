// End-to-end engines of particular routes: Switchyard's and oneDNN's Winograd
// (kernel.conv=winograd), bf16 activations between the CPU's convolutions (precision=bf16).
#include <gtest/gtest.h>

#include "engine_test_util.h"
#include "onnx/importer.h"
#include "passes_test_util.h"

namespace switchyard::engine_test {
namespace {

// kernel.conv=winograd on nhwc: Switchyard's own F(4x4,3x3) where a 3x3 stride-1 layer has
// at least 16 output tiles per image (the conv stack's 40x40 layers: 100, the first with
// 3 input channels too), within the fp32 gate of the reference; oneDNN's Winograd where
// there are fewer (resnet_tiny's 8x8 layers: 4).
TEST(EngineWinograd, OwnWinogradRunsWhereItHasTilesAndMatchesTheReference) {
  if (!Target::HostCpu().features.avx512f) GTEST_SKIP() << "no AVX-512: the native Winograd is AVX-512 only";
  struct Row {
    const char* model;
    int64_t hw;
    int native_convs, onednn_winograd_convs;
  };
  for (const Row& r : {Row{"conv_stack", 40, 4, 0}, Row{"resnet_tiny", 32, 0, 2}}) {
    auto g = ImportModel(kModels + r.model + ".onnx");
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    const TensorMap in = {{"image", testing::Filled(DataType::kFloat, {2, 3, r.hw, r.hw}, 11)}};
    auto b = BuildRoute(*g, "kernel.conv=winograd", FixedShapes(in));
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    int native = 0, onednn = 0;
    for (const EngineStep& st : b->engine.steps) {
      native += st.provider == "native" && st.variant == "winograd_f43";
      onednn += st.provider == "onednn" && st.variant == "winograd";
    }
    EXPECT_EQ(native, r.native_convs) << r.model;
    EXPECT_EQ(onednn, r.onednn_winograd_convs) << r.model;
    ExpectMatchesReference(*g, b->engine, in, 1e-5, std::string("winograd ") + r.model);
  }
}

// oneDNN's Winograd weights go into the engine plain: oneDNN reorders into its Winograd
// format but not out of it, and at threads=1 a batch other than the first one's wants
// another variant of it. Before, resnet_tiny's second input set (batch 3) failed with
// "could not create a primitive descriptor for a reorder primitive".
TEST(EngineWinograd, OnednnWinogradServesAnotherBatch) {
  if (!Target::HostCpu().features.avx512f) GTEST_SKIP() << "no AVX-512: oneDNN 2.6 has no Winograd here";
  auto g = ImportModel(kModels + "resnet_tiny.onnx");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  for (const std::string layout : {"nchw", "blocked"}) {
    const std::string route = "kernel.conv=winograd layout.activations=" + layout + " threads=1";
    auto b = BuildRoute(*g, route);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    int winograd = 0;
    for (const EngineStep& st : b->engine.steps) winograd += st.provider == "onednn" && st.variant == "winograd";
    EXPECT_GT(winograd, 0) << route;
    for (const char* set : {".inputs", ".inputs2"}) {
      ExpectMatchesReference(*g, b->engine, LoadInputs(kModels + "resnet_tiny" + set), 1e-4, route + " " + set);
    }
  }
}

// precision=bf16 on the CPU stores the activations of the convolutions (and of the pooling,
// Add/Mul and data movement between them) in bf16: every convolution step reads and writes
// bf16, Casts stand only where bf16 meets float32 (the image, the classifier, the graph
// outputs), the arena shrinks, and the outputs stay within the bf16 bound of the reference
// on both input sets (the second at other dynamic sizes). precision@<conv>=fp32 keeps that
// convolution in float32, with Casts around it.
TEST(EngineBf16, ConvolutionActivationsAreStoredInBf16) {
  if (!Target::HostCpu().features.HasBf16()) GTEST_SKIP() << "no AVX512_BF16/AMX: the CPU offers no precision=bf16";
  for (const char* name : {"mobilenetv2_tiny", "efficientnet_tiny", "text_detector_tiny"}) {
    auto g = ImportModel(kModels + name + ".onnx");
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    const TensorMap in = LoadInputs(kModels + name + ".inputs");
    auto b = BuildRoute(*g, "precision=bf16");
    ASSERT_TRUE(b.ok()) << name << ": " << b.status().ToString();
    int convs = 0, bf16_convs = 0, casts = 0;
    std::string first_conv;
    for (const EngineStep& st : b->engine.steps) {
      if (st.op_type == "Conv" || st.op_type == "FusedConv") {
        ++convs;
        const bool bf16 = st.input_dtypes[0] == static_cast<int>(DataType::kBfloat16) &&
                          st.output_dtypes[0] == static_cast<int>(DataType::kBfloat16);
        bf16_convs += bf16;
        if (first_conv.empty()) first_conv = st.name;
      }
      casts += st.op_type == "Cast";
    }
    EXPECT_GT(convs, 0) << name;
    EXPECT_EQ(bf16_convs, convs) << name;
    EXPECT_GE(casts, 2) << name;  // the image in, an output out at least
    EXPECT_LT(casts, convs) << name;
    EXPECT_EQ(b->report.fired["precision.casts"], casts) << name;
    for (const char* set : {".inputs", ".inputs2"}) {
      ExpectMatchesReference(*g, b->engine, LoadInputs(kModels + name + set), 5e-2, std::string(name) + set);
    }
    // Half the bytes between the convolutions: a smaller arena at the same shapes (MobileNetV2, a
    // batch of 4, where the convolutions' activations dominate the arena).
    if (std::string(name) == "mobilenetv2_tiny") {
      TensorMap big = in;
      const std::vector<int64_t> s = in.at("image").shape();
      big["image"] = testing::Filled(DataType::kFloat, {4, s[1], s[2], s[3]}, 5);
      auto fp32 = BuildRoute(*g, "", FixedShapes(big));
      auto bf16 = BuildRoute(*g, "precision=bf16", FixedShapes(big));
      ASSERT_TRUE(fp32.ok() && bf16.ok()) << name;
      std::printf("[bf16] %s arena at batch 4: fp32 %lld bytes, bf16 %lld bytes\n", name,
                  static_cast<long long>(fp32->engine.arena_bytes), static_cast<long long>(bf16->engine.arena_bytes));
      EXPECT_LT(bf16->engine.arena_bytes, fp32->engine.arena_bytes * 3 / 4) << name;
    }

    auto scoped = BuildRoute(*g, "precision=bf16 precision@" + first_conv + "=fp32");
    ASSERT_TRUE(scoped.ok()) << name << ": " << scoped.status().ToString();
    bool found = false;
    for (const EngineStep& st : scoped->engine.steps) {
      if (st.name != first_conv) continue;
      found = true;
      EXPECT_EQ(st.input_dtypes[0], static_cast<int>(DataType::kFloat)) << name;
      EXPECT_EQ(st.output_dtypes[0], static_cast<int>(DataType::kFloat)) << name;
    }
    EXPECT_TRUE(found) << name << ": " << first_conv;
    ExpectMatchesReference(*g, scoped->engine, in, 5e-2, std::string(name) + " scoped");
  }
}

}  // namespace
}  // namespace switchyard::engine_test
