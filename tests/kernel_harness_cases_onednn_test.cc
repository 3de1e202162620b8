// Harness rows for the oneDNN and OpenBLAS providers: ResNet/MobileNet-like convolutions
// (3x3, 1x1, 7x7 stride 2, depthwise, grouped, 1-D), every fused activation, residuals,
// MatMul/Gemm/FusedMatMul in 2-D, batched and broadcast forms, pooling and binary ops.
// Every provider that supports a row runs it (fp32, bf16, and int8 where marked).
#include "kernel_harness.h"

namespace switchyard::harness {
namespace {

constexpr DataType F = DataType::kFloat;

std::vector<HarnessCase> ConvCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("dnn_conv3x3_64", "", "Conv").Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {1, 64, 14, 14}).In(F, {64, 64, 3, 3}, true).In(F, {64}, true).Int8());
  c.push_back(Case("dnn_conv7x7_s2", "", "Conv").Attr("pads", Ints({3, 3, 3, 3})).Attr("strides", Ints({2, 2}))
                  .In(F, {1, 3, 32, 32}).In(F, {16, 3, 7, 7}, true).In(F, {16}, true).Int8());
  c.push_back(Case("dnn_conv1x1", "", "Conv").In(F, {2, 32, 14, 14}).In(F, {64, 32, 1, 1}, true).Int8());
  c.push_back(Case("dnn_conv1x1_s2", "", "Conv").Attr("strides", Ints({2, 2}))
                  .In(F, {1, 32, 14, 14}).In(F, {48, 32, 1, 1}, true).In(F, {48}, true));
  c.push_back(Case("dnn_conv_dw3x3", "", "Conv").Attr("group", Int(32)).Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {1, 32, 14, 14}).In(F, {32, 1, 3, 3}, true).In(F, {32}, true).Int8());
  c.push_back(Case("dnn_conv_grouped_s2", "", "Conv").Attr("group", Int(4)).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("strides", Ints({2, 2})).In(F, {1, 16, 10, 10}).In(F, {32, 4, 3, 3}, true));
  c.push_back(Case("dnn_conv_same_upper", "", "Conv").Attr("auto_pad", Str("SAME_UPPER")).Attr("strides", Ints({2, 2}))
                  .In(F, {1, 8, 9, 9}).In(F, {8, 8, 3, 3}, true));
  c.push_back(Case("dnn_conv_dilated", "", "Conv").Attr("dilations", Ints({2, 2})).Attr("pads", Ints({2, 2, 2, 2}))
                  .In(F, {1, 8, 12, 12}).In(F, {16, 8, 3, 3}, true));
  c.push_back(Case("dnn_conv1d", "", "Conv").Attr("pads", Ints({1, 1}))
                  .In(F, {2, 8, 20}).In(F, {12, 8, 3}, true).In(F, {12}, true));
  c.push_back(Case("dnn_conv_odd_ch", "", "Conv").Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {1, 20, 7, 7}).In(F, {24, 20, 3, 3}, true).In(F, {24}, true));
  // Output channels that are not a multiple of 16 (DBNet's 96 -> 24 smoothing layer), a
  // strided 5x5 with asymmetric pads, and a 1-wide input whose pixels are all edges: run
  // by every conv implementation, native/nhwc_rows in the nhwc mode.
  c.push_back(Case("conv3x3_oc24", "", "Conv").Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {1, 96, 9, 11}).In(F, {24, 96, 3, 3}, true).In(F, {24}, true));
  c.push_back(Case("conv5x5_s2_asym", "", "Conv").Attr("pads", Ints({2, 1, 1, 2})).Attr("strides", Ints({2, 2}))
                  .In(F, {2, 7, 13, 12}).In(F, {20, 7, 5, 5}, true));
  c.push_back(Case("conv3x3_w1", "", "Conv").Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {1, 5, 4, 1}).In(F, {8, 5, 3, 3}, true).In(F, {8}, true));
  // 3x3 stride 1 with at least 16 output tiles: native/winograd_f43 runs these in the nhwc
  // mode. Channel counts off the 16 lanes (20 in, 24 out), a batch of 2, odd sizes whose
  // last tiles hang over the edge, asymmetric pads, 80 outputs (a 64-column and a 16-column
  // block), a residual with an activation applied after the transform (HardSwish), and
  // 144 channels, whose transformed weights (2.8 MiB) take the three-phase path.
  c.push_back(Case("conv3x3_wino_odd", "", "Conv").Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {2, 20, 13, 17}).In(F, {24, 20, 3, 3}, true).In(F, {24}, true));
  c.push_back(Case("conv3x3_wino_asym", "", "Conv").Attr("pads", Ints({0, 2, 1, 0}))
                  .In(F, {1, 16, 18, 15}).In(F, {80, 16, 3, 3}, true));
  c.push_back(Case("fconv3x3_wino_wide_res", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("activation", Str("Relu"))
                  .In(F, {1, 144, 16, 16}).In(F, {144, 144, 3, 3}, true).In(F, {144}, true).In(F, {1, 144, 16, 16}));
  c.push_back(Case("fconv3x3_wino_res_hswish", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("activation", Str("HardSwish"))
                  .In(F, {1, 32, 16, 16}).In(F, {48, 32, 3, 3}, true).In(F, {48}, true).In(F, {1, 48, 16, 16}));
  // Fewer than 16 tiles of 4x4 but 16 or more of 2x2: native/winograd_f23 runs these. A 7x7
  // map with a residual and Relu and 144 channels (transformed weights 1.3 MiB: the
  // three-phase path, 3 groups of tiles, the last of 4), and a 5x6 map of a batch of 2 with
  // 20 -> 24 channels (odd edges, the fused path).
  c.push_back(Case("fconv3x3_wino23_res", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("activation", Str("Relu"))
                  .In(F, {1, 144, 7, 7}).In(F, {144, 144, 3, 3}, true).In(F, {144}, true).In(F, {1, 144, 7, 7}));
  c.push_back(Case("conv3x3_wino23_odd", "", "Conv").Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {2, 20, 5, 6}).In(F, {24, 20, 3, 3}, true).In(F, {24}, true));
  // Strided and other non-1x1 layers with 32 or more input channels and a multiple of 16
  // outputs: native/nhwc_taps runs these in the nhwc mode. Two images of odd sizes (60
  // output pixels, a 64-wide and a 16-wide column group), a residual with Relu and 160
  // channels (two K blocks of taps; 16 pixels, a last group of 4), a 5x5 of stride 1, and
  // a strided 1x1 with 2 MiB of weights and a strided 3x3 with 2.25 MiB and HardSwish:
  // native/nhwc_taps_strided (the automatic choice on AMD CPUs) runs those two too; on Intel
  // CPUs without AMX (from 4 MiB) a strided 1x1 with 4 MiB and a strided 3x3 with 5.1 MiB and
  // a residual.
  c.push_back(Case("conv3x3_s2_taps", "", "Conv").Attr("pads", Ints({1, 1, 1, 1})).Attr("strides", Ints({2, 2}))
                  .In(F, {2, 40, 9, 11}).In(F, {80, 40, 3, 3}, true).In(F, {80}, true));
  c.push_back(Case("fconv3x3_s2_taps_res", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("strides", Ints({2, 2})).Attr("activation", Str("Relu"))
                  .In(F, {1, 160, 7, 7}).In(F, {48, 160, 3, 3}, true).In(F, {48}, true).In(F, {1, 48, 4, 4}));
  c.push_back(Case("conv1x1_s2_taps", "", "Conv").Attr("strides", Ints({2, 2}))
                  .In(F, {1, 512, 7, 7}).In(F, {1024, 512, 1, 1}, true));
  c.push_back(Case("conv1x1_s2_taps_4mib", "", "Conv").Attr("strides", Ints({2, 2}))
                  .In(F, {1, 1024, 3, 3}).In(F, {1024, 1024, 1, 1}, true));
  c.push_back(Case("fconv3x3_s2_taps_5mib_res", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("strides", Ints({2, 2})).Attr("activation", Str("Relu"))
                  .In(F, {1, 384, 5, 5}).In(F, {384, 384, 3, 3}, true).In(F, {384}, true).In(F, {1, 384, 3, 3}));
  c.push_back(Case("conv5x5_taps", "", "Conv").Attr("pads", Ints({2, 1, 2, 1}))
                  .In(F, {1, 32, 6, 7}).In(F, {16, 32, 5, 5}, true).In(F, {16}, true));
  c.push_back(Case("fconv3x3_s2_taps_wide", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("strides", Ints({2, 2})).Attr("activation", Str("HardSwish"))
                  .In(F, {1, 256, 9, 9}).In(F, {256, 256, 3, 3}, true).In(F, {256}, true));
  // 512 input channels: with 16-wide column groups (native/nhwc_taps16, the AVX2 tile; and
  // nhwc_taps on CPUs without AVX-512) the 9 taps take two K blocks of 5 and 4, partial sums
  // waiting in Y, the residual added in the first and Relu applied in the last; 32 outputs.
  c.push_back(Case("fconv3x3_taps16_blocks", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("activation", Str("Relu"))
                  .In(F, {1, 512, 4, 5}).In(F, {32, 512, 3, 3}, true).In(F, {32}, true).In(F, {1, 32, 4, 5}));
  // 1x1 stride 1 on nhwc: native/nhwc_1x1 runs these. 70 pixels (a last group of 4 of the
  // 6-pixel tile), 80 outputs (a 64-wide and a 16-wide column group), a residual with Relu
  // applied in registers, HardSwish applied after the store, no bias, and 160 input
  // channels. native/nhwc_1x1_residual (the automatic choice on AMD CPUs: a residual, 64
  // input channels or more, 192 pixels or more per thread's range) runs the 64x64 one: 4096
  // pixels (a last group of 4), 96 outputs.
  c.push_back(Case("fconv1x1_res_relu_tail", "switchyard", "FusedConv", 1).Attr("activation", Str("Relu"))
                  .In(F, {2, 40, 5, 7}).In(F, {80, 40, 1, 1}, true).In(F, {80}, true).In(F, {2, 80, 5, 7}));
  c.push_back(Case("fconv1x1_res_hswish_nobias", "switchyard", "FusedConv", 1).Attr("activation", Str("HardSwish"))
                  .In(F, {1, 24, 6, 6}).In(F, {48, 24, 1, 1}, true).Omitted().In(F, {1, 48, 6, 6}));
  c.push_back(Case("fconv1x1_res_wide", "switchyard", "FusedConv", 1).Attr("activation", Str("Relu"))
                  .In(F, {1, 64, 64, 64}).In(F, {96, 64, 1, 1}, true).In(F, {96}, true)
                  .In(F, {1, 96, 64, 64}));
  c.push_back(Case("conv1x1_c160_m32", "", "Conv")
                  .In(F, {1, 160, 3, 3}).In(F, {32, 160, 1, 1}, true).In(F, {32}, true));
  // Few pixels and 1 MiB of weights or more: native/nhwc_1x1_small (the automatic choice on
  // Intel CPUs with AVX-512) and nhwc_1x1 run these with 7-pixel tiles and the next column
  // group's weights prefetched. 49 pixels, 1024 -> 256; 35 pixels (5x7), 2048 -> 144 (two
  // 64-wide column groups and a 16-wide one) with a residual and Clip.
  c.push_back(Case("conv1x1_small_7x7", "", "Conv")
                  .In(F, {1, 1024, 7, 7}).In(F, {256, 1024, 1, 1}, true).In(F, {256}, true));
  c.push_back(Case("fconv1x1_small_res_clip", "switchyard", "FusedConv", 1).Attr("activation", Str("Clip"))
                  .Attr("activation_params", Floats({0.f, 6.f}))
                  .In(F, {1, 2048, 5, 7}).In(F, {144, 2048, 1, 1}, true).In(F, {144}, true).In(F, {1, 144, 5, 7}));
  // Five 64-wide column groups over two threads: nhwc_1x1 splits the columns (fewer pixels
  // than outputs) and shares the 25 or 35 tiles evenly, cutting the third group by pixels;
  // 25 pixels leave a last group of 1 (6-pixel tiles), 49 make seven of 7 (with Clip).
  c.push_back(Case("conv1x1_cols5_tail", "", "Conv")
                  .In(F, {1, 64, 5, 5}).In(F, {320, 64, 1, 1}, true).In(F, {320}, true));
  c.push_back(Case("fconv1x1_cols5_clip", "switchyard", "FusedConv", 1).Attr("activation", Str("Clip"))
                  .Attr("activation_params", Floats({0.f, 6.f}))
                  .In(F, {1, 96, 7, 7}).In(F, {320, 96, 1, 1}, true).In(F, {320}, true));
  // A SiLU after the layer: native/nhwc_1x1_silu (the automatic choice on Intel CPUs with
  // AVX-512 and without AMX) applies it in the tile's registers. 63 pixels (10 groups of 6
  // and a last one of 3), 24 -> 144 (64, 64 and 16 wide column groups); two images of 12x12,
  // 16 -> 96 without a bias.
  c.push_back(Case("fconv1x1_silu_tail", "switchyard", "FusedConv", 1).Attr("activation", Str("SiLU"))
                  .In(F, {1, 24, 7, 9}).In(F, {144, 24, 1, 1}, true).In(F, {144}, true));
  c.push_back(Case("fconv1x1_silu_nobias", "switchyard", "FusedConv", 1).Attr("activation", Str("SiLU"))
                  .In(F, {2, 16, 12, 12}).In(F, {96, 16, 1, 1}, true));
  // Stems: 3 or 4 plain input channels, nhwc output: native/nchw_stem (kernel.conv=native) runs
  // these, native/nchw_stem_auto (the automatic choice on Intel CPUs with AVX-512) the 3x3
  // ones with 32 outputs. A 3x3 stride-2 layer over two odd-sized images (edge tiles at
  // both ends), the same with SiLU and with Clip, a 7x7 stride-2 one with 64 outputs, and a
  // 5x5 stride-1 one with asymmetric pads, 4 channels, 16 outputs and Relu.
  c.push_back(Case("conv3x3_stem_s2", "", "Conv").Attr("pads", Ints({1, 1, 1, 1})).Attr("strides", Ints({2, 2}))
                  .In(F, {2, 3, 15, 17}).In(F, {32, 3, 3, 3}, true).In(F, {32}, true));
  c.push_back(Case("fconv3x3_stem_silu", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("strides", Ints({2, 2})).Attr("activation", Str("SiLU"))
                  .In(F, {1, 3, 20, 33}).In(F, {32, 3, 3, 3}, true).In(F, {32}, true));
  c.push_back(Case("fconv3x3_stem_clip", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("strides", Ints({2, 2})).Attr("activation", Str("Clip"))
                  .Attr("activation_params", Floats({0.f, 6.f}))
                  .In(F, {1, 3, 32, 32}).In(F, {32, 3, 3, 3}, true).In(F, {32}, true));
  c.push_back(Case("conv7x7_stem", "", "Conv").Attr("pads", Ints({3, 3, 3, 3})).Attr("strides", Ints({2, 2}))
                  .In(F, {1, 3, 30, 29}).In(F, {64, 3, 7, 7}, true).In(F, {64}, true));
  c.push_back(Case("fconv5x5_stem_relu", "switchyard", "FusedConv", 1).Attr("pads", Ints({2, 1, 2, 3}))
                  .Attr("activation", Str("Relu"))
                  .In(F, {1, 4, 9, 40}).In(F, {16, 4, 5, 5}, true).In(F, {16}, true));
  // FusedConv: residual + activation, and every activation the passes fuse.
  c.push_back(Case("dnn_fconv_res_relu", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("activation", Str("Relu"))
                  .In(F, {1, 32, 14, 14}).In(F, {32, 32, 3, 3}, true).In(F, {32}, true).In(F, {1, 32, 14, 14})
                  .Int8());
  struct Act {
    const char* name;
    std::vector<float> params;
  };
  for (const Act& a : {Act{"Relu", {}}, Act{"LeakyRelu", {0.1f}}, Act{"Clip", {0.f, 6.f}}, Act{"Sigmoid", {}},
                       Act{"HardSigmoid", {0.2f, 0.5f}}, Act{"HardSwish", {}}, Act{"Tanh", {}},
                       Act{"SiLU", {}}, Act{"Gelu", {}}}) {
    HarnessCase k = Case(std::string("dnn_fconv_") + a.name, "switchyard", "FusedConv", 1)
                        .Attr("pads", Ints({1, 1, 1, 1})).Attr("activation", Str(a.name))
                        .In(F, {1, 16, 8, 8}).In(F, {16, 16, 3, 3}, true).In(F, {16}, true);
    if (!a.params.empty()) k.Attr("activation_params", Floats(a.params));
    c.push_back(k);
  }
  c.push_back(Case("dnn_fconv_dw_clip", "switchyard", "FusedConv", 1).Attr("group", Int(24))
                  .Attr("pads", Ints({1, 1, 1, 1})).Attr("strides", Ints({2, 2}))
                  .Attr("activation", Str("Clip")).Attr("activation_params", Floats({0.f, 6.f}))
                  .In(F, {1, 24, 15, 15}).In(F, {24, 1, 3, 3}, true).In(F, {24}, true));
  c.push_back(Case("dnn_fconv_res_nobias", "switchyard", "FusedConv", 1)
                  .In(F, {1, 16, 6, 6}).In(F, {16, 16, 1, 1}, true).Omitted().In(F, {1, 16, 6, 6}));
  // An input scale S (input 4, fuse.conv_scale: a squeeze-excite scale): one for all images,
  // one per image (the kernel runs image by image) beside a residual and an activation,
  // and a 3x3 kernel with channel counts off the 16 lanes (padding of the packed weights).
  c.push_back(Case("fconv1x1_in_scale", "switchyard", "FusedConv", 1)
                  .In(F, {1, 48, 14, 14}).In(F, {16, 48, 1, 1}, true).In(F, {16}, true).Omitted()
                  .In(F, {1, 48, 1, 1}).Range(0.0, 1.0));
  c.push_back(Case("fconv1x1_in_scale_per_image", "switchyard", "FusedConv", 1).Attr("activation", Str("Relu"))
                  .In(F, {3, 20, 9, 9}).In(F, {12, 20, 1, 1}, true).Omitted().In(F, {3, 12, 9, 9})
                  .In(F, {3, 20, 1, 1}).Range(0.0, 1.0));
  c.push_back(Case("fconv3x3_in_scale_shared", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {2, 18, 10, 10}).In(F, {10, 18, 3, 3}, true).In(F, {10}, true).Omitted()
                  .In(F, {1, 18, 1, 1}).Range(-1.0, 1.0));
  return c;
}

std::vector<HarnessCase> MatMulCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("dnn_mm_2d", "", "MatMul").In(F, {64, 128}).In(F, {128, 96}, true).Int8());
  c.push_back(Case("dnn_mm_3d_w", "", "MatMul").In(F, {2, 16, 64}).In(F, {64, 48}, true).Int8());
  c.push_back(Case("dnn_mm_attn", "", "MatMul").In(F, {2, 4, 16, 32}).In(F, {2, 4, 32, 16}));
  c.push_back(Case("dnn_mm_bcast", "", "MatMul").In(F, {3, 1, 5, 8}).In(F, {4, 8, 6}));
  c.push_back(Case("dnn_mm_vec", "", "MatMul").In(F, {8}).In(F, {8, 5}, true));
  c.push_back(Case("dnn_mm_odd", "", "MatMul").In(F, {7, 33}).In(F, {33, 17}));
  c.push_back(Case("dnn_gemm_tb_bias", "", "Gemm").Attr("transB", Int(1)).Attr("alpha", Float(0.5f))
                  .Attr("beta", Float(2.f)).In(F, {32, 64}).In(F, {48, 64}, true).In(F, {48}, true).Int8());
  c.push_back(Case("dnn_gemm_c_full", "", "Gemm").Attr("transA", Int(1)).Attr("beta", Float(0.5f))
                  .In(F, {16, 12}).In(F, {16, 20}, true).In(F, {12, 20}));
  c.push_back(Case("dnn_gemm_c_col", "", "Gemm").In(F, {6, 10}).In(F, {10, 9}, true).In(F, {6, 1}, true));
  c.push_back(Case("dnn_fmm_bias_gelu", "switchyard", "FusedMatMul", 1).Attr("activation", Str("Gelu"))
                  .In(F, {2, 8, 64}).In(F, {64, 128}, true).In(F, {128}, true).Int8());
  c.push_back(Case("dnn_fmm_bias_gelu_tanh", "switchyard", "FusedMatMul", 1)
                  .Attr("activation", Str("GeluTanh")).In(F, {2, 9, 32}).In(F, {32, 20}, true)
                  .In(F, {20}, true).Range(-3, 3));
  c.push_back(Case("dnn_fmm_tb_res", "switchyard", "FusedMatMul", 1).Attr("trans_b", Int(1))
                  .Attr("alpha", Float(0.25f)).In(F, {3, 10, 32}).In(F, {24, 32}, true).In(F, {24}, true)
                  .In(F, {3, 10, 24}));
  c.push_back(Case("dnn_fmm_runtime_b", "switchyard", "FusedMatMul", 1).Attr("trans_b", Int(1))
                  .Attr("alpha", Float(0.125f)).In(F, {2, 2, 9, 16}).In(F, {2, 2, 11, 16}));
  return c;
}

std::vector<HarnessCase> OtherCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("dnn_maxpool3s2", "", "MaxPool").Attr("kernel_shape", Ints({3, 3}))
                  .Attr("strides", Ints({2, 2})).Attr("pads", Ints({1, 1, 1, 1})).In(F, {1, 16, 28, 28}));
  c.push_back(Case("dnn_maxpool_ceil", "", "MaxPool").Attr("kernel_shape", Ints({3, 3}))
                  .Attr("strides", Ints({2, 2})).Attr("ceil_mode", Int(1)).In(F, {1, 8, 10, 10}));
  c.push_back(Case("dnn_avgpool2s2", "", "AveragePool").Attr("kernel_shape", Ints({2, 2}))
                  .Attr("strides", Ints({2, 2})).In(F, {2, 16, 14, 14}));
  c.push_back(Case("dnn_avgpool_excl", "", "AveragePool").Attr("kernel_shape", Ints({3, 3}))
                  .Attr("pads", Ints({1, 1, 1, 1})).In(F, {1, 8, 9, 9}));
  c.push_back(Case("dnn_avgpool_incl", "", "AveragePool").Attr("kernel_shape", Ints({3, 3}))
                  .Attr("pads", Ints({1, 1, 1, 1})).Attr("count_include_pad", Int(1)).In(F, {1, 8, 9, 9}));
  c.push_back(Case("dnn_gap", "", "GlobalAveragePool").In(F, {2, 32, 7, 7}));
  // nhwc mode: Switchyard's channel sums (pixel ranges per thread, blocks of 64 rows): one
  // image of 35,260 floats split over both threads (odd channels, ranges of 881 and 882
  // pixels, a partial last block); 3 images, one per thread.
  c.push_back(Case("dnn_gap_split", "", "GlobalAveragePool").In(F, {1, 20, 41, 43}));
  c.push_back(Case("dnn_gap_batch3", "", "GlobalAveragePool").In(F, {3, 24, 30, 30}));
  c.push_back(Case("dnn_gmp", "", "GlobalMaxPool").In(F, {2, 24, 5, 5}));
  c.push_back(Case("dnn_add_same4d", "", "Add").In(F, {1, 32, 14, 14}).In(F, {1, 32, 14, 14}));
  c.push_back(Case("dnn_mul_se", "", "Mul").In(F, {1, 32, 14, 14}).In(F, {1, 32, 1, 1}));
  c.push_back(Case("dnn_mul_se_swapped", "", "Mul").In(F, {1, 32, 1, 1}).In(F, {1, 32, 14, 14}));
  // Per-image scales over more channels than the bf16 path's 1024-float chunk.
  c.push_back(Case("dnn_mul_se_wide_batch", "", "Mul").In(F, {2, 1100, 5, 3}).In(F, {2, 1100, 1, 1}));
  c.push_back(Case("dnn_sub_row", "", "Sub").In(F, {4, 5}).In(F, {5}));
  c.push_back(Case("dnn_reorder_plain", "switchyard", "Reorder", 1).Attr("from", Str(""))
                  .Attr("to", Str("")).In(F, {1, 5, 3, 3}));
  return c;
}

const bool kRegistered = [] {
  AddHarnessCases(ConvCases());
  AddHarnessCases(MatMulCases());
  AddHarnessCases(OtherCases());
  return true;
}();

}  // namespace
}  // namespace switchyard::harness
