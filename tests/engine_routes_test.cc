// End-to-end engines of particular routes: Switchyard's and oneDNN's Winograd
// (kernel.conv=winograd), bf16 activations between the CPU's convolutions (precision=bf16),
// small oneDNN steps on fewer threads than the route's.
#include <gtest/gtest.h>

#include "engine_test_util.h"
#include "onnx/importer.h"
#include "passes_test_util.h"

namespace switchyard::engine_test {
namespace {

// kernel.conv=winograd on nhwc: Switchyard's own F(4x4,3x3) where a 3x3 stride-1 layer has
// at least 16 output tiles over the batch (the conv stack's 40x40 layers: 100 per image, the
// first with 3 input channels too; resnet_tiny's 8x8 layers at batch 4: 4 x 4), its own
// F(2x2,3x3) where only the 2x2 tiles reach 16 (resnet_tiny's 8x8 layers at batch 2: 2 x 16),
// within the fp32 gate of the reference. (oneDNN's Winograd runs the layers where neither
// does, fewer than 16 tiles of 2x2: none of these models has one; EngineWinograd.
// OnednnWinogradServesAnotherBatch runs it on nchw and blocked activations.) Without
// AVX-512 the same kernels' AVX2 build runs them (winograd_f43_avx2, winograd_f23_avx2).
TEST(EngineWinograd, OwnWinogradRunsWhereItHasTilesAndMatchesTheReference) {
  const auto& cpu = Target::HostCpu().features;
  if (!cpu.avx512f && !(cpu.avx2 && cpu.fma)) GTEST_SKIP() << "neither AVX-512 nor AVX2: no native Winograd";
  const std::string suffix = cpu.avx512f ? "" : "_avx2";
  struct Row {
    const char* model;
    int64_t batch, hw;
    int f43_convs, f23_convs, onednn_winograd_convs;
  };
  for (const Row& r : {Row{"conv_stack", 2, 40, 4, 0, 0}, Row{"resnet_tiny", 2, 32, 0, 2, 0},
                       Row{"resnet_tiny", 4, 32, 2, 0, 0}, Row{"resnet_tiny", 1, 32, 0, 2, 0}}) {
    auto g = ImportModel(kModels + r.model + ".onnx");
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    const TensorMap in = {{"image", testing::Filled(DataType::kFloat, {r.batch, 3, r.hw, r.hw}, 11)}};
    auto b = BuildRoute(*g, "kernel.conv=winograd", FixedShapes(in));
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    int f43 = 0, f23 = 0, onednn = 0;
    for (const EngineStep& st : b->engine.steps) {
      f43 += st.provider == "native" && st.variant == "winograd_f43" + suffix;
      f23 += st.provider == "native" && st.variant == "winograd_f23" + suffix;
      onednn += st.provider == "onednn" && st.variant == "winograd";
    }
    const std::string label = std::string(r.model) + " batch " + std::to_string(r.batch);
    EXPECT_EQ(f43, r.f43_convs) << label;
    EXPECT_EQ(f23, r.f23_convs) << label;
    EXPECT_EQ(onednn, r.onednn_winograd_convs) << label;
    ExpectMatchesReference(*g, b->engine, in, 1e-5, "winograd " + label);
  }
}

// kernel.conv=native runs every nhwc 1x1 stride-1 layer with a multiple of 16 outputs on
// Switchyard's own 1x1 kernel (native/nhwc_1x1), within the fp32 gate of the reference, at batch 2
// (resnet_tiny: 2*4*4 = 32 pixels, a last tile of 2); auto and onednn leave these small
// layers on oneDNN.
TEST(EngineConv1x1, NativeRouteRunsOneByOneLayersOnTheOwnKernel) {
  if (!Target::HostCpu().features.avx512f) GTEST_SKIP() << "no AVX-512: the native 1x1 kernel is AVX-512 only";
  struct Row {
    const char* model;
    int64_t hw;
    int native_1x1;
  };
  for (const Row& r : {Row{"resnet_tiny", 32, 1}, Row{"mobilenetv2_tiny", 64, 22}, Row{"mobilenetv3_tiny", 64, 19}}) {
    auto g = ImportModel(kModels + r.model + ".onnx");
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    const TensorMap in = {{"image", testing::Filled(DataType::kFloat, {2, 3, r.hw, r.hw}, 5)}};
    for (const std::string value : {"auto", "onednn", "native"}) {
      auto b = BuildRoute(*g, "kernel.conv=" + value, FixedShapes(in));
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      int native_1x1 = 0, residual = 0;
      for (const EngineStep& st : b->engine.steps) {
        native_1x1 += st.provider == "native" && st.variant == "nhwc_1x1";
        residual += st.provider == "native" && st.variant == "nhwc_1x1_residual";
      }
      EXPECT_EQ(native_1x1, value == "native" ? r.native_1x1 : 0) << r.model << " " << value;
      EXPECT_EQ(residual, 0) << r.model << " " << value;
      ExpectMatchesReference(*g, b->engine, in, 1e-5, std::string(r.model) + " kernel.conv=" + value);
    }
  }
}

// On Intel CPUs with AVX-512 and without AMX the automatic choice runs a 1x1 stride-1 layer
// with at most 64 pixels over the batch, 1 MiB of weights or more and no activation, Relu or
// Clip on Switchyard's own 1x1 kernel (native/nhwc_1x1_small); more pixels, smaller weights, another
// activation and kernel.conv=onednn stay on oneDNN. One 1x1 convolution 1024 -> 256 (1 MiB):
// 7x7 at batch 1 (49 pixels: 7-pixel tiles), with Relu, Clip(0, 6) or Sigmoid, at batch 2
// (98 pixels); 512 -> 256 (0.5 MiB); kernel.conv=native at 5x10 (50 pixels: 6-pixel tiles and
// a last tile of 2) runs it on nhwc_1x1. Outputs within the fp32 gate of the reference.
TEST(EngineConv1x1, AutoTakesTheNativeKernelForSmallLayersOnIntelAvx512) {
  struct Row {
    int64_t c, h, w, batch;
    std::string act, route;
    int small, native;
  };
  const auto& f = Target::HostCpu().features;
  const int intel = f.avx512f && !f.amx_bf16 && __builtin_cpu_is("intel") ? 1 : 0;
  const int avx512 = f.avx512f ? 1 : 0;
  for (const Row& r : {Row{1024, 7, 7, 1, "", "threads=2", intel, 0}, Row{1024, 7, 7, 1, "Relu", "threads=2", intel, 0},
                       Row{1024, 7, 7, 1, "Clip", "threads=1", intel, 0},
                       Row{1024, 7, 7, 1, "Sigmoid", "threads=2", 0, 0}, Row{1024, 7, 7, 2, "Relu", "threads=2", 0, 0},
                       Row{512, 7, 7, 1, "Relu", "threads=2", 0, 0},
                       Row{1024, 7, 7, 1, "Relu", "threads=2 kernel.conv=onednn", 0, 0},
                       Row{1024, 5, 10, 1, "Relu", "threads=2 kernel.conv=native", 0, avx512}}) {
    testing::GraphBuilder b;
    const ValueId x = b.Input("x", {-1, r.c, r.h, r.w});
    const ValueId w = b.Const("w", testing::Filled(DataType::kFloat, {256, r.c, 1, 1}, 3, -0.05, 0.05));
    const ValueId bias = b.Const("b", testing::Filled(DataType::kFloat, {256}, 4));
    ValueId y = b.Op("Conv", {x, w, bias});
    if (r.act == "Clip") {
      y = b.Op("Clip", {y, b.Scalar(0.0), b.Scalar(6.0)});
    } else if (!r.act.empty()) {
      y = b.Op(r.act, {y});
    }
    b.Output(y);
    const Graph g = b.Finish();
    const TensorMap in = {{"x", testing::Filled(DataType::kFloat, {r.batch, r.c, r.h, r.w}, 9)}};
    auto built = BuildRoute(g, r.route, FixedShapes(in));
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    int small = 0, native = 0;
    for (const EngineStep& st : built->engine.steps) {
      small += st.provider == "native" && st.variant == "nhwc_1x1_small";
      native += st.provider == "native" && st.variant == "nhwc_1x1";
    }
    const std::string label = "[" + r.route + "] " + std::to_string(r.c) + " channels " + std::to_string(r.h) + "x" +
                              std::to_string(r.w) + " batch " + std::to_string(r.batch) + " " + r.act;
    EXPECT_EQ(small, r.small) << label;
    EXPECT_EQ(native, r.native) << label;
    ExpectMatchesReference(g, built->engine, in, 1e-5, label);
  }
  if (!intel) GTEST_SKIP() << "not an Intel CPU with AVX-512 and without AMX: the automatic choice leaves these "
                              "layers to oneDNN (checked above against the reference)";
}

// On Intel CPUs with AVX-512 the automatic choice runs a network's first layer, 3x3 with 32
// outputs over the plain image, on Switchyard's stem kernel (native/nchw_stem_auto), which
// reads the image in place and writes nhwc: no reorder of the image. 16 outputs, a 7x7
// kernel and kernel.conv=onednn keep the reorder and oneDNN; kernel.conv=native takes the
// stem kernel (native/nchw_stem) for those too. The stem (stride 2, pads 1, Clip or SiLU)
// feeds a 3x3 layer; outputs within the fp32 gate of the reference, batch 1 and 2.
TEST(EngineConvStem, AutoReadsThePlainImageInTheFirstLayerOnIntelAvx512) {
  struct Row {
    int64_t m, k, batch;
    std::string act, route;
    int stem_auto, stem, reorders;
  };
  const int intel = Target::HostCpu().features.avx512f && __builtin_cpu_is("intel") ? 1 : 0;
  const int avx512 = Target::HostCpu().features.avx512f ? 1 : 0;
  for (const Row& r : {Row{32, 3, 1, "Clip", "threads=2", intel, 0, 1 - intel},
                       Row{32, 3, 2, "SiLU", "threads=2", intel, 0, 1 - intel},
                       Row{16, 3, 1, "Clip", "threads=2", 0, 0, 1}, Row{32, 7, 1, "Clip", "threads=2", 0, 0, 1},
                       Row{32, 3, 1, "Clip", "threads=2 kernel.conv=onednn", 0, 0, 1},
                       Row{16, 7, 1, "Clip", "threads=2 kernel.conv=native", 0, avx512, 1 - avx512}}) {
    testing::GraphBuilder b;
    const ValueId x = b.Input("x", {-1, 3, 30, 27});
    const ValueId w = b.Const("w", testing::Filled(DataType::kFloat, {r.m, 3, r.k, r.k}, 3, -0.3, 0.3));
    const ValueId bias = b.Const("b", testing::Filled(DataType::kFloat, {r.m}, 4));
    ValueId y = b.Op("Conv", {x, w, bias}, [&](Node& n) {
      n.attrs["pads"] = testing::IntsAttr({r.k / 2, r.k / 2, r.k / 2, r.k / 2});
      n.attrs["strides"] = testing::IntsAttr({2, 2});
    });
    y = r.act == "Clip" ? b.Op("Clip", {y, b.Scalar(0.0), b.Scalar(6.0)}) : b.Op("Mul", {y, b.Op("Sigmoid", {y})});
    const ValueId w2 = b.Const("w2", testing::Filled(DataType::kFloat, {16, r.m, 3, 3}, 5, -0.1, 0.1));
    b.Output(b.Op("Conv", {y, w2}, [](Node& n) { n.attrs["pads"] = testing::IntsAttr({1, 1, 1, 1}); }));
    const Graph g = b.Finish();
    const TensorMap in = {{"x", testing::Filled(DataType::kFloat, {r.batch, 3, 30, 27}, 9)}};
    auto built = BuildRoute(g, r.route, FixedShapes(in));
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    int stem_auto = 0, stem = 0, reorders = 0;
    for (const EngineStep& st : built->engine.steps) {
      stem_auto += st.provider == "native" && st.variant == "nchw_stem_auto";
      stem += st.provider == "native" && st.variant == "nchw_stem";
      reorders += st.op_type == "Reorder" && st.name.rfind("x/", 0) == 0;
    }
    const std::string label = "[" + r.route + "] " + std::to_string(r.m) + " outputs " + std::to_string(r.k) + "x" +
                              std::to_string(r.k) + " " + r.act + " batch " + std::to_string(r.batch);
    EXPECT_EQ(stem_auto, r.stem_auto) << label;
    EXPECT_EQ(stem, r.stem) << label;
    EXPECT_EQ(reorders, r.reorders) << label;
    ExpectMatchesReference(g, built->engine, in, 1e-5, label);
  }
  if (!intel) GTEST_SKIP() << "not an Intel CPU with AVX-512: the automatic choice reorders the image for oneDNN "
                              "(checked above against the reference)";
}

// fuse.conv_pool on whole engines: a depthwise SiLU conv pooled and scaled by a
// squeeze-excite block, and a 1x1 SiLU head pooled: the default (nhwc fp32) route computes
// both pools in oneDNN's convolution steps (two outputs, no pooling step), also where
// kernel.conv=native would take the 1x1 head and at batch 3 (images split over the
// threads, not pixels); the routes that keep the pooling steps (the knob off, nchw, blocked)
// give the same outputs.
TEST(EngineConvPool, SiluConvolutionsWriteTheChannelMeans) {
  testing::GraphBuilder b;
  const ValueId x = b.Input("x", {-1, 24, 20, 20});
  auto silu = [&](ValueId y) { return b.Op("Mul", {y, b.Op("Sigmoid", {y})}); };
  const ValueId a = silu(b.Op("Conv",
                              {x, b.Const("wd", testing::Filled(DataType::kFloat, {24, 1, 3, 3}, 5, -0.4, 0.4)),
                               b.Const("bd", testing::Filled(DataType::kFloat, {24}, 6))},
                              [](Node& n) {
                                n.attrs["group"] = testing::IntAttr(24);
                                n.attrs["pads"] = testing::IntsAttr({1, 1, 1, 1});
                              }));
  const ValueId fc = b.Op("Conv", {b.Op("GlobalAveragePool", {a}),
                                   b.Const("w1", testing::Filled(DataType::kFloat, {24, 24, 1, 1}, 7, -0.3, 0.3))});
  const ValueId proj = b.Op("Conv", {b.Op("Mul", {a, b.Op("Sigmoid", {fc})}),
                                     b.Const("w2", testing::Filled(DataType::kFloat, {32, 24, 1, 1}, 8, -0.3, 0.3))});
  const ValueId head = silu(b.Op("Conv", {proj, b.Const("w3", testing::Filled(DataType::kFloat, {80, 32, 1, 1}, 9, -0.3, 0.3)),
                                          b.Const("b3", testing::Filled(DataType::kFloat, {80}, 10))}));
  b.Output(b.Op("Flatten", {b.Op("GlobalAveragePool", {head})}));
  const Graph g = b.Finish();
  struct Row {
    std::string route;
    int64_t batch;
    int pooled_convs, pool_steps;
  };
  for (const Row& r : {Row{"threads=2", 1, 2, 0}, Row{"threads=2", 3, 2, 0}, Row{"threads=1", 1, 2, 0},
                       Row{"threads=2 kernel.conv=native", 1, 2, 0}, Row{"threads=2 fuse.conv_pool=off", 1, 0, 2},
                       Row{"threads=2 layout.activations=nchw", 1, 0, 2},
                       Row{"threads=2 layout.activations=blocked", 1, 0, 2}}) {
    const TensorMap in = {{"x", testing::Filled(DataType::kFloat, {r.batch, 24, 20, 20}, 11)}};
    auto built = BuildRoute(g, r.route, FixedShapes(in));
    ASSERT_TRUE(built.ok()) << r.route << ": " << built.status().ToString();
    int pooled = 0, pools = 0;
    for (const EngineStep& st : built->engine.steps) {
      pooled += st.op_type == "FusedConv" && st.outputs.size() == 2 && st.provider == "onednn";
      pools += st.op_type == "GlobalAveragePool";
    }
    const std::string label = "[" + r.route + "] batch " + std::to_string(r.batch);
    EXPECT_EQ(pooled, r.pooled_convs) << label;
    EXPECT_EQ(pools, r.pool_steps) << label;
    ExpectMatchesReference(g, built->engine, in, 1e-5, label);
  }
}

// On AMD CPUs the automatic choice runs a 1x1 stride-1 layer with a residual, 64 or more
// input channels and at least 192 pixels in each thread's pixel range on the native
// kernel (native/nhwc_1x1_residual), where oneDNN's sum post-op is slow; elsewhere, with
// fewer pixels per range, a 1x1 layer without a residual and kernel.conv=onednn oneDNN
// runs it. y = Relu(Conv1x1(x) + Conv1x1'(x)), 64 -> 256 channels, as ResNet's bottleneck
// with its downsample. 8192 pixels (a last tile of 2) on 2 threads: 2 pixel ranges of
// 4096. 196 pixels: the split takes the columns apart (1 range of 196 pixels), so the
// native kernel runs; 256 pixels: split by pixels (2 of 128), so oneDNN does.
TEST(EngineConv1x1, AutoTakesTheNativeKernelForLargeResiduals) {
  if (!Target::HostCpu().features.avx512f) GTEST_SKIP() << "no AVX-512: the native 1x1 kernel is AVX-512 only";
  testing::GraphBuilder b;
  const ValueId x = b.Input("x", {-1, 64, -1, -1});
  auto conv = [&](uint32_t seed) {
    const ValueId w =
        b.Const("w" + std::to_string(seed), testing::Filled(DataType::kFloat, {256, 64, 1, 1}, seed, -0.2, 0.2));
    const ValueId bias = b.Const("b" + std::to_string(seed), testing::Filled(DataType::kFloat, {256}, seed + 1));
    return b.Op("Conv", {x, w, bias});
  };
  const ValueId down = conv(3);
  b.Output(b.Op("Relu", {b.Op("Add", {conv(5), down})}));
  const Graph g = b.Finish();
  struct Row {
    std::vector<int64_t> shape;
    std::string route;
    int residual;
  };
  const bool amd = __builtin_cpu_is("amd");
  for (const Row& r : {Row{{2, 64, 64, 64}, "threads=2", amd}, Row{{1, 64, 14, 14}, "threads=2", amd},
                       Row{{1, 64, 16, 16}, "threads=2", 0}, Row{{2, 64, 64, 64}, "threads=2 kernel.conv=onednn", 0}}) {
    const TensorMap in = {{"x", testing::Filled(DataType::kFloat, r.shape, 9)}};
    auto built = BuildRoute(g, r.route, FixedShapes(in));
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    int residual = 0, onednn = 0;
    for (const EngineStep& st : built->engine.steps) {
      residual += st.provider == "native" && st.variant == "nhwc_1x1_residual";
      onednn += st.provider == "onednn" && (st.op_type == "Conv" || st.op_type == "FusedConv");
    }
    const std::string label = "[" + r.route + "] " + ShapeToString(r.shape);
    EXPECT_EQ(residual, r.residual) << label;
    EXPECT_EQ(onednn, 2 - r.residual) << label;
    ExpectMatchesReference(g, built->engine, in, 1e-5, label);
  }
}

// x [N, c, hw, hw] -> Relu(Conv3x3(x)) with m outputs, pads 1, the given stride, weights
// uniform in [-scale, scale].
Graph Conv3x3Relu(int64_t c, int64_t m, int64_t hw, int64_t stride, double scale) {
  testing::GraphBuilder b;
  const ValueId x = b.Input("x", {-1, c, hw, hw});
  const ValueId w = b.Const("w", testing::Filled(DataType::kFloat, {m, c, 3, 3}, 3, -scale, scale));
  const ValueId bias = b.Const("b", testing::Filled(DataType::kFloat, {m}, 4));
  const ValueId y = b.Op("Conv", {x, w, bias}, [&](Node& n) {
    n.attrs["pads"] = testing::IntsAttr({1, 1, 1, 1});
    n.attrs["strides"] = testing::IntsAttr({stride, stride});
  });
  b.Output(b.Op("Relu", {y}));
  return b.Finish();
}

// On AMD CPUs the automatic choice runs a strided layer with 2 MiB of weights or more on the
// native pixel-tile kernel (native/nhwc_taps_strided), where oneDNN 2.6 is slow with few
// pixels, and on Intel CPUs with AVX-512 and without AMX one with 4 MiB or more; a smaller or
// unstrided layer, and kernel.conv=onednn, stay on oneDNN. One 3x3 stride-2 convolution with
// Relu: 256 -> 256 channels (2.25 MiB) and 512 -> 512 (9 MiB) at 14x14, at batch 1 and 2;
// 128 -> 128 (0.56 MiB); 256 -> 256 and 512 -> 512 at stride 1.
TEST(EngineConvTaps, AutoTakesTheNativeKernelForLargeStridedLayers) {
  if (!Target::HostCpu().features.avx512f) GTEST_SKIP() << "no AVX-512: the native tap kernel is AVX-512 only";
  struct Row {
    int64_t c, stride, batch;
    std::string route;
    int native;
  };
  // Intel CPUs without AMX: from 4 MiB of weights (512 channels: 9 MiB; 256: 2.25 MiB).
  const int amd = __builtin_cpu_is("amd") ? 1 : 0;
  const int big = amd || (__builtin_cpu_is("intel") && !Target::HostCpu().features.amx_bf16) ? 1 : 0;
  for (const Row& r : {Row{256, 2, 1, "threads=2", amd}, Row{256, 2, 2, "threads=2", amd},
                       Row{512, 2, 1, "threads=2", big}, Row{512, 2, 2, "threads=2", big},
                       Row{128, 2, 1, "threads=2", 0}, Row{256, 1, 1, "threads=2", 0}, Row{512, 1, 1, "threads=2", 0},
                       Row{256, 2, 1, "threads=2 kernel.conv=onednn", 0}}) {
    const Graph g = Conv3x3Relu(r.c, r.c, 14, r.stride, 0.05);
    const TensorMap in = {{"x", testing::Filled(DataType::kFloat, {r.batch, r.c, 14, 14}, 9)}};
    auto built = BuildRoute(g, r.route, FixedShapes(in));
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    int native = 0;
    for (const EngineStep& st : built->engine.steps) native += st.provider == "native" && st.variant == "nhwc_taps_strided";
    const std::string label = "[" + r.route + "] c " + std::to_string(r.c) + " stride " + std::to_string(r.stride) +
                              " batch " + std::to_string(r.batch);
    EXPECT_EQ(native, r.native) << label;
    ExpectMatchesReference(g, built->engine, in, 1e-5, label);
  }
}

// On Intel CPUs with AVX-512 the automatic choice runs a stride-1 3x3 layer with 64 or more
// input channels, 16 or more outputs, 16 2x2 tiles over the batch and 8 per thread on
// Switchyard's own F(2x2) Winograd (native/winograd_f23_auto); fewer input channels, a
// strided layer, too few
// tiles, and kernel.conv=onednn stay on oneDNN. Elsewhere oneDNN (or the AMD choices) run
// them all. One 3x3 convolution with Relu, within the fp32 gate of the reference: 64 -> 24
// channels at 14x14 (49 tiles) at batch 1 and 2, 32 -> 64, stride 2, 6x6 (9 tiles) at
// batch 1 and at batch 2 (18: 9 per thread), 4x4 at batch 4 (16 tiles, 8 per thread: the
// least; NativeKernels.WinogradF23AutoNeedsEightTilesPerThread checks more threads).
TEST(EngineWinograd, AutoTakesOwnF23ForStrideOne3x3LayersOnIntelAvx512) {
  struct Row {
    int64_t c, m, hw, stride, batch;
    std::string route;
    int f23;
  };
  const int intel = Target::HostCpu().features.avx512f && __builtin_cpu_is("intel") ? 1 : 0;
  for (const Row& r : {Row{64, 24, 14, 1, 1, "threads=2", intel}, Row{64, 24, 14, 1, 2, "threads=2", intel},
                       Row{32, 64, 14, 1, 1, "threads=2", 0}, Row{64, 64, 14, 2, 1, "threads=2", 0},
                       Row{64, 64, 6, 1, 1, "threads=2", 0}, Row{64, 64, 6, 1, 2, "threads=2", intel},
                       Row{64, 64, 4, 1, 4, "threads=2", intel},
                       Row{64, 24, 14, 1, 1, "threads=2 kernel.conv=onednn", 0}}) {
    const Graph g = Conv3x3Relu(r.c, r.m, r.hw, r.stride, 0.1);
    const TensorMap in = {{"x", testing::Filled(DataType::kFloat, {r.batch, r.c, r.hw, r.hw}, 9)}};
    auto built = BuildRoute(g, r.route, FixedShapes(in));
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    int f23 = 0;
    for (const EngineStep& st : built->engine.steps) f23 += st.provider == "native" && st.variant == "winograd_f23_auto";
    const std::string label = "[" + r.route + "] " + std::to_string(r.c) + " -> " + std::to_string(r.m) + " at " +
                              std::to_string(r.hw) + " stride " + std::to_string(r.stride) + " batch " +
                              std::to_string(r.batch);
    EXPECT_EQ(f23, r.f23) << label;
    ExpectMatchesReference(g, built->engine, in, 1e-5, label);
  }
  if (!intel) GTEST_SKIP() << "not an Intel CPU with AVX-512: the automatic choice leaves these layers to oneDNN "
                              "(checked above against the reference)";
}

// On AMD CPUs with AVX2 and no AVX-512 the automatic choice runs every convolution with
// more than one tap on the native tap kernel's AVX2 tile (native/nhwc_taps_avx2, 16-wide
// column groups), where oneDNN 2.6's AVX2 direct kernel is slow; 1x1 layers and
// kernel.conv=onednn stay on oneDNN. The MaxPool between them runs on the native nhwc
// pooling there (native/nhwc_preferred), whatever kernel.conv says. A 3x3 (stride 1 and 2,
// 64 -> 80 channels: five 16-wide groups) with Relu, a 3x3 stride-2 MaxPool, then a 1x1,
// at batch 1 and 3.
TEST(EngineConvTaps, AutoTakesTheAvx2TileForLayersWithTapsOnAmdAvx2Cpus) {
  const auto& f = Target::HostCpu().features;
  if (f.avx512f || !f.avx2 || !__builtin_cpu_is("amd")) {
    GTEST_SKIP() << "not an AMD CPU with AVX2 and without AVX-512: the automatic choice keeps oneDNN there";
  }
  struct Row {
    int64_t stride, batch;
    std::string route;
    int native;
  };
  for (const Row& r : {Row{1, 1, "threads=2", 1}, Row{2, 3, "threads=2", 1}, Row{1, 1, "threads=1", 1},
                       Row{1, 1, "threads=2 kernel.conv=onednn", 0}}) {
    testing::GraphBuilder b;
    const ValueId x = b.Input("x", {-1, 64, 13, 11});
    const ValueId w = b.Const("w", testing::Filled(DataType::kFloat, {80, 64, 3, 3}, 3, -0.05, 0.05));
    const ValueId bias = b.Const("b", testing::Filled(DataType::kFloat, {80}, 4));
    const ValueId y = b.Op("Conv", {x, w, bias}, [&](Node& n) {
      n.attrs["pads"] = testing::IntsAttr({1, 1, 1, 1});
      n.attrs["strides"] = testing::IntsAttr({r.stride, r.stride});
    });
    const ValueId w2 = b.Const("w2", testing::Filled(DataType::kFloat, {32, 80, 1, 1}, 5, -0.1, 0.1));
    const ValueId pooled = b.Op("MaxPool", {b.Op("Relu", {y})}, [](Node& n) {
      n.attrs["kernel_shape"] = testing::IntsAttr({3, 3});
      n.attrs["pads"] = testing::IntsAttr({1, 1, 1, 1});
      n.attrs["strides"] = testing::IntsAttr({2, 2});
    });
    b.Output(b.Op("Conv", {pooled, w2}));
    const Graph g = b.Finish();
    const TensorMap in = {{"x", testing::Filled(DataType::kFloat, {r.batch, 64, 13, 11}, 9)}};
    auto built = BuildRoute(g, r.route, FixedShapes(in));
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    int native = 0, pool = 0;
    for (const EngineStep& st : built->engine.steps) {
      native += st.provider == "native" && st.variant == "nhwc_taps_avx2";
      pool += st.provider == "native" && st.variant == "nhwc_preferred" && st.op_type == "MaxPool";
    }
    const std::string label = "[" + r.route + "] stride " + std::to_string(r.stride) + " batch " + std::to_string(r.batch);
    EXPECT_EQ(native, r.native) << label;
    EXPECT_EQ(pool, 1) << label;
    ExpectMatchesReference(g, built->engine, in, 1e-5, label);
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

// A oneDNN convolution with under 256K multiply-adds, or a broadcast fp32 binary with under
// 32K elements (squeeze-excite FCs and scales), runs on one thread instead of the route's: its
// step says so in params.threads, the loaded engine runs it on one, the larger convolutions
// keep both, and the outputs match the reference. A
// damaged params.threads is refused at load, naming the step; one above the route's
// threads is clamped.
TEST(EngineThreads, SmallOnednnStepsRunOnFewerThreads) {
  if (Target::HostCpu().cores < 2) GTEST_SKIP() << "one CPU: every step runs on one thread anyway";
  auto g = ImportModel(kModels + "efficientnet_tiny.onnx");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  // A batch of 8 at fixed shapes (the work is known at build time): the stem has 885K
  // multiply-adds, the squeeze-excite FCs a few hundred.
  TensorMap in = LoadInputs(kModels + "efficientnet_tiny.inputs");
  const std::vector<int64_t> s0 = in.at("image").shape();
  in["image"] = testing::Filled(DataType::kFloat, {8, s0[1], s0[2], s0[3]}, 7);
  auto b = BuildRoute(*g, "threads=2", FixedShapes(in));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto loaded = LoadedEngine::Create(b->engine);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  int limited = 0, full = 0;
  for (size_t s = 0; s < b->engine.steps.size(); ++s) {
    const EngineStep& st = b->engine.steps[s];
    if (st.provider != "onednn" || (st.op_type != "Conv" && st.op_type != "FusedConv")) continue;
    const auto& y = st.output_shapes[0];
    const auto& w = st.input_shapes[1];
    const int64_t macs = y[0] * y[1] * y[2] * y[3] * w[1] * w[2] * w[3];
    const int want = macs < 2 * (int64_t{1} << 17) ? 1 : 2;
    EXPECT_EQ(st.params.value("threads", 2), want) << st.name << ": " << macs << " multiply-adds";
    EXPECT_EQ((*loaded)->step_threads(s), want) << st.name;
    (want == 1 ? limited : full) += 1;
  }
  std::printf("[threads] efficientnet_tiny: %d convolutions on 1 thread, %d on 2\n", limited, full);
  EXPECT_GT(limited, 0);
  EXPECT_GT(full, 0);
  // Broadcast fp32 binaries (the squeeze-excite scales): one thread under 32K elements.
  int binaries = 0, binaries_limited = 0;
  for (size_t s = 0; s < b->engine.steps.size(); ++s) {
    const EngineStep& st = b->engine.steps[s];
    if (st.provider != "onednn" || st.op_type != "Mul" || st.input_shapes[0] == st.input_shapes[1]) continue;
    int64_t elements = 1;
    for (int64_t d : st.output_shapes[0]) elements *= d;
    const int want = elements < 2 * (int64_t{1} << 14) ? 1 : 2;
    EXPECT_EQ((*loaded)->step_threads(s), want) << st.name << ": " << elements << " elements";
    ++binaries;
    binaries_limited += want == 1;
  }
  std::printf("[threads] efficientnet_tiny: %d broadcast Muls, %d on 1 thread\n", binaries, binaries_limited);
  EXPECT_GT(binaries, 0);
  ExpectMatchesReference(*g, b->engine, in, 1e-4, "efficientnet_tiny");
  size_t small = 0;
  while (small < b->engine.steps.size() && !b->engine.steps[small].params.contains("threads")) ++small;
  ASSERT_LT(small, b->engine.steps.size());
  Engine damaged = b->engine;
  damaged.steps[small].params["threads"] = "two";
  auto refused = LoadedEngine::Create(damaged);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(damaged.steps[small].name), std::string::npos) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("params.threads"), std::string::npos) << refused.status().ToString();
  damaged.steps[small].params["threads"] = 64;
  auto clamped = LoadedEngine::Create(damaged);
  ASSERT_TRUE(clamped.ok()) << clamped.status().ToString();
  EXPECT_EQ((*clamped)->step_threads(small), 2);
}

}  // namespace
}  // namespace switchyard::engine_test
