// Harness rows for the library-backed CUDA providers (cublaslt, cudnn) that the other case
// files do not cover: ResNet-sized convolutions (3x3 at 56x56, 1x1 stride 2, the 7x7
// stride-2 stem on 3 channels, depthwise), 3-D convs, asymmetric pads, FusedConv paths
// (residual + relu in cuDNN's fused call, no-bias relu, broadcast residual, activations
// through the epilogue kernel), attention-shaped batched matmuls, BERT-sized GEMMs with bias + exact Gelu and
// residuals, run-time biases, every FusedMatMul activation, and broadcast batch layouts
// that need strided batches with stride 0 or an outer loop. Every provider that supports
// a row runs it (CPU ones too).
#include "kernel_harness.h"

namespace switchyard::harness {
namespace {

constexpr DataType F = DataType::kFloat;

std::vector<HarnessCase> ConvCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("cu_conv3x3_56", "", "Conv").Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {1, 64, 56, 56}).In(F, {64, 64, 3, 3}, true).In(F, {64}, true));
  c.push_back(Case("cu_conv1x1_s2", "", "Conv").Attr("strides", Ints({2, 2}))
                  .In(F, {2, 64, 56, 56}).In(F, {128, 64, 1, 1}, true));
  c.push_back(Case("cu_conv7x7_s2_stem", "", "Conv").Attr("pads", Ints({3, 3, 3, 3})).Attr("strides", Ints({2, 2}))
                  .In(F, {1, 3, 224, 224}).In(F, {64, 3, 7, 7}, true).In(F, {64}, true));
  c.push_back(Case("cu_conv_dw3x3_s2", "", "Conv").Attr("group", Int(96)).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("strides", Ints({2, 2})).In(F, {2, 96, 28, 28}).In(F, {96, 1, 3, 3}, true).In(F, {96}, true));
  c.push_back(Case("cu_conv_odd", "", "Conv").Attr("pads", Ints({2, 1, 2, 1})).Attr("dilations", Ints({1, 2}))
                  .In(F, {3, 5, 13, 11}).In(F, {7, 5, 5, 3}, true).In(F, {7}, true));
  c.push_back(Case("cu_conv3d", "", "Conv").Attr("pads", Ints({1, 1, 1, 1, 1, 1}))
                  .In(F, {1, 4, 6, 8, 8}).In(F, {8, 4, 3, 3, 3}, true).In(F, {8}, true));
  c.push_back(Case("cu_conv_bias_runtime", "", "Conv").Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {1, 8, 10, 10}).In(F, {12, 8, 3, 3}, true).In(F, {12}));
  // Asymmetric pads (zero-padded copy of X, then cuDNN without padding).
  c.push_back(Case("cu_conv_same_upper_even_s2", "", "Conv").Attr("auto_pad", Str("SAME_UPPER")).Attr("strides", Ints({2, 2}))
                  .In(F, {2, 8, 16, 16}).In(F, {12, 8, 3, 3}, true).In(F, {12}, true));
  c.push_back(Case("cu_conv_same_lower", "", "Conv").Attr("auto_pad", Str("SAME_LOWER")).Attr("strides", Ints({2, 2}))
                  .In(F, {1, 6, 11, 11}).In(F, {6, 6, 4, 4}, true));
  c.push_back(Case("cu_fconv_asym_pads_dw_relu", "switchyard", "FusedConv", 1).Attr("group", Int(16))
                  .Attr("pads", Ints({0, 1, 1, 2})).Attr("activation", Str("Relu"))
                  .In(F, {1, 16, 11, 9}).In(F, {16, 1, 3, 3}, true).In(F, {16}, true));
  c.push_back(Case("cu_conv1d_asym", "", "Conv").Attr("pads", Ints({2, 0}))
                  .In(F, {2, 4, 19}).In(F, {6, 4, 5}, true));
  // FusedConv: cuDNN's fused bias + relu (+ residual), and the epilogue-kernel paths.
  c.push_back(Case("cu_fconv_res_relu_28", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("activation", Str("Relu")).In(F, {1, 64, 28, 28}).In(F, {64, 64, 3, 3}, true)
                  .In(F, {64}, true).In(F, {1, 64, 28, 28}));
  c.push_back(Case("cu_fconv_relu_nobias", "switchyard", "FusedConv", 1).Attr("activation", Str("Relu"))
                  .In(F, {2, 16, 9, 9}).In(F, {24, 16, 1, 1}, true));
  c.push_back(Case("cu_fconv_bias_only", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {1, 16, 12, 12}).In(F, {16, 16, 3, 3}, true).In(F, {16}, true).In(F, {1, 16, 12, 12}));
  c.push_back(Case("cu_fconv_silu_odd", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("activation", Str("SiLU")).In(F, {2, 32, 17, 17}).In(F, {48, 32, 3, 3}, true).In(F, {48}, true));
  c.push_back(Case("cu_fconv_res_bcast_sigmoid", "switchyard", "FusedConv", 1).Attr("activation", Str("Sigmoid"))
                  .In(F, {2, 8, 7, 7}).In(F, {16, 8, 1, 1}, true).In(F, {16}, true).In(F, {16, 1, 1}));
  c.push_back(Case("cu_fconv_dw_hswish_res", "switchyard", "FusedConv", 1).Attr("group", Int(40))
                  .Attr("pads", Ints({2, 2, 2, 2})).Attr("activation", Str("HardSwish"))
                  .In(F, {1, 40, 14, 14}).In(F, {40, 1, 5, 5}, true).In(F, {40}, true).In(F, {1, 40, 14, 14}));
  c.push_back(Case("cu_fconv1d_gelu", "switchyard", "FusedConv", 1).Attr("pads", Ints({1, 1}))
                  .Attr("activation", Str("Gelu")).In(F, {2, 8, 30}).In(F, {12, 8, 3}, true).In(F, {12}, true));
  return c;
}

std::vector<HarnessCase> MatMulCases() {
  std::vector<HarnessCase> c;
  // Attention: Q·K^T and P·V, [B, H, S, D].
  c.push_back(Case("cu_mm_attn_qk", "", "MatMul").In(F, {2, 12, 128, 64}).In(F, {2, 12, 64, 128}));
  c.push_back(Case("cu_mm_attn_pv", "", "MatMul").In(F, {2, 12, 128, 128}).In(F, {2, 12, 128, 64}));
  // 2-D A with batched B (A broadcast: strided batch with stride 0), batched with 1s.
  c.push_back(Case("cu_mm_2d_x_3d", "", "MatMul").In(F, {7, 33}).In(F, {3, 33, 17}));
  c.push_back(Case("cu_mm_bcast_inner", "", "MatMul").In(F, {2, 1, 6, 8}).In(F, {1, 3, 8, 5}));
  c.push_back(Case("cu_mm_bcast_mixed", "", "MatMul").In(F, {4, 1, 3, 5, 8}).In(F, {2, 1, 8, 6}));
  c.push_back(Case("cu_mm_const_batched_b", "", "MatMul").In(F, {3, 20, 24}).In(F, {3, 24, 10}, true));
  // BERT-sized GEMMs: bias + exact Gelu, bias + residual.
  c.push_back(Case("cu_fmm_ffn_gelu", "switchyard", "FusedMatMul", 1).Attr("activation", Str("Gelu"))
                  .In(F, {128, 768}).In(F, {768, 3072}, true).In(F, {3072}, true));
  // GPT-2's MLP: bias + tanh GELU (2-D Gemm between Reshapes).
  c.push_back(Case("cu_fmm_mlp_gelu_tanh", "switchyard", "FusedMatMul", 1).Attr("activation", Str("GeluTanh"))
                  .In(F, {256, 768}).In(F, {768, 3072}, true).In(F, {3072}, true));
  c.push_back(Case("cu_fmm_proj_res", "switchyard", "FusedMatMul", 1)
                  .In(F, {1, 128, 768}).In(F, {768, 768}, true).In(F, {768}, true).In(F, {1, 128, 768}));
  c.push_back(Case("cu_fmm_bias_res_relu", "switchyard", "FusedMatMul", 1).Attr("activation", Str("Relu"))
                  .In(F, {4, 33, 40}).In(F, {40, 50}, true).In(F, {50}, true).In(F, {4, 33, 50}));
  c.push_back(Case("cu_fmm_relu_nobias", "switchyard", "FusedMatMul", 1).Attr("activation", Str("Relu"))
                  .In(F, {9, 31}).In(F, {31, 13}));
  c.push_back(Case("cu_fmm_runtime_bias_relu", "switchyard", "FusedMatMul", 1).Attr("activation", Str("Relu"))
                  .In(F, {2, 9, 32}).In(F, {32, 20}, true).In(F, {20}));
  c.push_back(Case("cu_fmm_scalar_bias_silu", "switchyard", "FusedMatMul", 1).Attr("activation", Str("SiLU"))
                  .In(F, {6, 16}).In(F, {16, 12}, true).In(F, {1}, true));
  c.push_back(Case("cu_fmm_ta_2d_b", "switchyard", "FusedMatMul", 1).Attr("trans_a", Int(1)).Attr("alpha", Float(2.f))
                  .In(F, {3, 32, 10}).In(F, {32, 24}, true).In(F, {24}, true));
  c.push_back(Case("cu_fmm_tb_batched_res_bcast", "switchyard", "FusedMatMul", 1).Attr("trans_b", Int(1))
                  .Attr("activation", Str("Tanh")).In(F, {2, 3, 10, 16}).In(F, {2, 3, 12, 16}).Omitted().In(F, {12}));
  struct Act {
    const char* name;
    std::vector<float> params;
  };
  for (const Act& a : {Act{"LeakyRelu", {0.1f}}, Act{"Sigmoid", {}}, Act{"HardSigmoid", {0.2f, 0.5f}},
                       Act{"HardSwish", {}}, Act{"Tanh", {}}, Act{"SiLU", {}}}) {
    HarnessCase k = Case(std::string("cu_fmm_") + a.name, "switchyard", "FusedMatMul", 1)
                        .Attr("activation", Str(a.name)).In(F, {2, 7, 24}).In(F, {24, 40}, true).In(F, {40}, true);
    if (!a.params.empty()) k.Attr("activation_params", Floats(a.params));
    c.push_back(k);
  }
  // Gemm: C as a run-time row bias (epilogue kernel), constant scalar C, full C in place.
  c.push_back(Case("cu_gemm_c_row_runtime", "", "Gemm").Attr("beta", Float(2.f))
                  .In(F, {6, 20}).In(F, {20, 9}, true).In(F, {1, 9}));
  c.push_back(Case("cu_gemm_c_scalar", "", "Gemm").Attr("transA", Int(1)).Attr("beta", Float(0.5f))
                  .In(F, {20, 6}).In(F, {20, 9}, true).In(F, {1}, true));
  c.push_back(Case("cu_gemm_c_full_tb", "", "Gemm").Attr("transB", Int(1)).Attr("alpha", Float(0.5f))
                  .In(F, {64, 96}).In(F, {80, 96}).In(F, {64, 80}));
  return c;
}

const bool kRegistered = [] {
  AddHarnessCases(ConvCases());
  AddHarnessCases(MatMulCases());
  return true;
}();

}  // namespace
}  // namespace switchyard::harness
