// The input Cast of a precision=bf16 engine writes nhwc itself (native/elementwise.cc,
// CastsToNhwc; native::ConvertToBf16Nhwc) when its tensor is a plain image of at most
// kMaxNhwcCastChannels channels read only by convolutions: one pass instead of the Cast
// and a Reorder. The conversion gives the bits of the plain conversion, transposed; the
// engine has no Reorder of the image and matches the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/native/native.h"
#include "engine_test_util.h"
#include "ir/dtype.h"
#include "passes_test_util.h"

namespace switchyard {
namespace {
using namespace engine_test;  // NOLINT: the engine tests' shared helpers
using testing::Filled;

// Every channel count the kernel takes, pixel counts with and without a tail of fewer than
// 16, 1 and 2 threads: each bf16 value equals the plain conversion's (ConvertToBf16, whose
// bits the Cast gave before) of the same element, transposed. The values include NaN,
// infinities, a denormal (flushed to zero by both), -0 and ties of the rounding.
TEST(NhwcCast, ConvertsAndTransposesToThePlainConversionsBits) {
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 1e-40f, -0.f, 1.00390625f, 1.01171875f};
  for (int64_t c = 1; c <= native::kMaxNhwcCastChannels; ++c) {
    for (int64_t pixels : {int64_t{16}, int64_t{37}, int64_t{1024 + 16 * 3 + 5}, int64_t{3000}}) {
      for (int threads : {1, 2}) {
        const int64_t images = 2, n = images * c * pixels;
        Tensor x = Filled(DataType::kFloat, {n}, static_cast<uint32_t>(c * 1000 + pixels), -3, 3);
        float* xs = x.data<float>();
        for (size_t k = 0; k < std::size(specials); ++k) xs[(k * 131) % n] = specials[k];
        std::vector<uint16_t> plain(n), got(n, 0xdead);
        native::ConvertToBf16(xs, plain.data(), n, 1);
        native::ConvertToBf16Nhwc(xs, got.data(), images, c, pixels, threads);
        int64_t wrong = 0;
        for (int64_t b = 0; b < images; ++b) {
          for (int64_t ch = 0; ch < c; ++ch) {
            for (int64_t p = 0; p < pixels; ++p) {
              const uint16_t want = plain[(b * c + ch) * pixels + p];
              const uint16_t have = got[(b * pixels + p) * c + ch];
              if (want != have && wrong++ < 3) {
                ADD_FAILURE() << "c " << c << ", pixels " << pixels << ", threads " << threads << ": image " << b
                              << " channel " << ch << " pixel " << p << " is " << have << ", want " << want;
              }
            }
          }
        }
        EXPECT_EQ(wrong, 0) << "c " << c << ", pixels " << pixels << ", threads " << threads;
      }
    }
  }
}

// x [2, C, 24, 24] -> Conv 3x3 (C -> 16) + Relu -> Conv 1x1 -> GlobalAveragePool.
Graph SmallNet(int64_t channels) {
  testing::GraphBuilder gb;
  const ValueId x = gb.Input("x", {2, channels, 24, 24});
  auto conv = [&](ValueId in, int64_t cin, int64_t cout, int64_t k, uint32_t seed) {
    const ValueId w = gb.Const("w" + std::to_string(seed), Filled(DataType::kFloat, {cout, cin, k, k}, seed, -0.3, 0.3));
    const ValueId b = gb.Const("b" + std::to_string(seed), Filled(DataType::kFloat, {cout}, seed + 100, -0.1, 0.1));
    const int64_t p = k / 2;
    return gb.Op("Conv", {in, w, b}, [p](Node& node) { node.attrs["pads"] = testing::IntsAttr({p, p, p, p}); });
  };
  const ValueId r = gb.Op("Relu", {conv(x, channels, 16, 3, 1)});
  gb.Output(gb.Op("GlobalAveragePool", {conv(r, 16, 16, 1, 2)}));
  return gb.Finish();
}

// The engine's steps that read the graph input's Cast, and that Cast's step.
struct CastUse {
  const EngineStep* cast = nullptr;
  std::vector<const EngineStep*> readers;
};
CastUse FindInputCast(const Engine& e) {
  CastUse u;
  const int in = e.inputs.at(0);
  for (const EngineStep& st : e.steps) {
    if (st.op_type == "Cast" && !st.inputs.empty() && st.inputs[0] == in) u.cast = &st;
  }
  if (!u.cast) return u;
  for (const EngineStep& st : e.steps) {
    for (int t : st.inputs) {
      if (t == u.cast->outputs[0]) u.readers.push_back(&st);
    }
  }
  return u;
}

// 3 channels: the Cast writes nhwc, the first convolution reads it directly (no Reorder step
// in the engine at all), and the outputs match the reference at the bf16 bound. 8 channels
// (over the kernel's limit): the Cast stays plain and a Reorder to nhwc follows it.
TEST(NhwcCast, TheImageCastOfABf16EngineWritesNhwcForItsConvolution) {
  if (!Target::HostCpu().features.HasBf16()) GTEST_SKIP() << "no AVX512_BF16/AMX: the CPU offers no precision=bf16";
  for (int64_t channels : {3, 8}) {
    const Graph g = SmallNet(channels);
    const TensorMap in = {{"x", Filled(DataType::kFloat, {2, channels, 24, 24}, 9)}};
    auto b = BuildRoute(g, "threads=2 precision=bf16 layout.activations=nhwc", FixedShapes(in));
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    const CastUse u = FindInputCast(b->engine);
    ASSERT_NE(u.cast, nullptr) << channels << " channels: no Cast of the input";
    ASSERT_EQ(u.readers.size(), 1u) << channels << " channels";
    const std::string out_layout = u.cast->params.value("output_layouts", nlohmann::json::array({""}))[0];
    const std::string reader = u.readers[0]->op_type;
    std::printf("[nhwc cast] %lld channels: Cast output layout '%s', read by %s\n", static_cast<long long>(channels),
                out_layout.c_str(), reader.c_str());
    // Reorders of the image, at either dtype (the GlobalAveragePool's [2,16,1,1] output has
    // one of its own, a view).
    int reorders = 0;
    for (const EngineStep& st : b->engine.steps) {
      reorders += st.op_type == "Reorder" && st.output_shapes.at(0) == std::vector<int64_t>{2, channels, 24, 24};
    }
    if (channels <= native::kMaxNhwcCastChannels) {
      EXPECT_EQ(out_layout, "nhwc");
      EXPECT_TRUE(reader == "Conv" || reader == "FusedConv") << reader;
      EXPECT_EQ(reorders, 0) << "a Reorder of the image remains";
    } else {
      EXPECT_EQ(out_layout, "");
      EXPECT_EQ(reader, "Reorder");
      EXPECT_EQ(reorders, 1);
    }
    ExpectMatchesReference(g, b->engine, in, 2e-2, std::to_string(channels) + " channels");
  }
}

}  // namespace
}  // namespace switchyard
