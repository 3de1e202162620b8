// Harness rows for the ops the native provider implements (any provider supporting the
// same op runs them too). Shapes cover same-shape, scalar, row and middle broadcasts,
// odd sizes that leave GEMM edge tiles, and the opset variants models use.
#include "kernel_harness.h"

namespace switchyard::harness {
namespace {

using DT = DataType;
constexpr DT F = DT::kFloat;
constexpr DT I64 = DT::kInt64;

Tensor I64s(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromInt64(v, {n});
}

std::vector<HarnessCase> ElementwiseCases() {
  std::vector<HarnessCase> c;
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Neg", "Abs", "HardSwish",
                         "HardSigmoid", "LeakyRelu", "Softplus", "Floor", "Ceil", "Round",
                         "Sign", "Elu", "Selu", "Softsign", "Sin", "Cos"}) {
    c.push_back(Case(std::string(op) + "_2x37", "", op).In(F, {2, 37}));
  }
  c.push_back(Case("Log_pos", "", "Log").In(F, {3, 5}).Range(0.1, 4));
  c.push_back(Case("Sqrt_pos", "", "Sqrt").In(F, {3, 5}).Range(0.1, 4));
  c.push_back(Case("Reciprocal_pos", "", "Reciprocal").In(F, {40}).Range(0.5, 3));
  c.push_back(Case("LeakyRelu_a", "", "LeakyRelu").Attr("alpha", Float(0.2f)).In(F, {4, 9}));
  c.push_back(Case("HardSigmoid_ab", "", "HardSigmoid")
                  .Attr("alpha", Float(0.3f)).Attr("beta", Float(0.4f)).In(F, {4, 9}));
  c.push_back(Case("Clip_inputs", "", "Clip", 13)
                  .In(F, {3, 17}).InValue(Tensor::Scalar(F, -0.5)).InValue(Tensor::Scalar(F, 0.7)));
  c.push_back(Case("Clip_min_only", "", "Clip", 13).In(F, {3, 17}).InValue(Tensor::Scalar(F, 0)));
  c.push_back(Case("Clip_attr6", "", "Clip", 6)
                  .Attr("min", Float(-1)).Attr("max", Float(1)).In(F, {50}));
  c.push_back(Case("Not", "", "Not").In(DT::kBool, {3, 7}));
  c.push_back(Case("Cast_f2i64", "", "Cast").Attr("to", Int(7)).In(F, {3, 4}).Range(-9, 9));
  c.push_back(Case("Cast_i642f", "", "Cast").Attr("to", Int(1)).In(I64, {3, 4}));
  c.push_back(Case("Cast_b2f", "", "Cast").Attr("to", Int(1)).In(DT::kBool, {6}));
  c.push_back(Case("Cast_f2b", "", "Cast").Attr("to", Int(9)).In(F, {6}));
  // The boundaries of bf16 activations (precision=bf16): vectorized, split over threads,
  // on 4-D tensors that may arrive nhwc.
  c.push_back(Case("Cast_f2bf_4d", "", "Cast").Attr("to", Int(16)).In(F, {2, 40, 33, 31}).Range(-300, 300));
  c.push_back(Case("Cast_bf2f_4d", "", "Cast").Attr("to", Int(1)).In(DT::kBfloat16, {2, 40, 33, 31}).Range(-300, 300));
  c.push_back(Case("Cast_i322i64", "", "Cast").Attr("to", Int(7)).In(DT::kInt32, {6}));

  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    const std::string s(op);
    c.push_back(Case(s + "_same", "", op).In(F, {4, 33}).In(F, {4, 33}).Range(0.5, 2));
    c.push_back(Case(s + "_row", "", op).In(F, {2, 3, 20}).In(F, {20}).Range(0.5, 2));
    c.push_back(Case(s + "_col", "", op).In(F, {2, 3, 20}).In(F, {3, 1}).Range(0.5, 2));
    c.push_back(Case(s + "_scalar_l", "", op).In(F, {}).In(F, {5, 7}).Range(0.5, 2));
    c.push_back(Case(s + "_both", "", op).In(F, {2, 1, 5}).In(F, {1, 4, 1}).Range(0.5, 2));
    c.push_back(Case(s + "_i64", "", op).In(I64, {3, 4}).In(I64, {4}).Range(1, 5));
  }
  c.push_back(Case("Pow_row", "", "Pow").In(F, {3, 8}).Range(0.5, 2).In(F, {8}));
  c.push_back(Case("Pow_scalar", "", "Pow").In(F, {3, 8}).Range(0.5, 2).InValue(Tensor::Scalar(F, 2)));
  c.push_back(Case("PRelu_chan", "", "PRelu").In(F, {2, 3, 4, 4}).In(F, {3, 1, 1}));
  c.push_back(Case("Sum3", "", "Sum").In(F, {2, 5}).In(F, {5}).In(F, {2, 1}));
  c.push_back(Case("Mean3", "", "Mean").In(F, {2, 5}).In(F, {5}).In(F, {2, 5}));
  c.push_back(Case("Max3", "", "Max").In(F, {2, 5}).In(F, {5}).In(F, {2, 1}));
  c.push_back(Case("Min1", "", "Min").In(F, {2, 5}));
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    c.push_back(Case(std::string(op) + "_i64", "", op).In(I64, {3, 4}).In(I64, {4}));
    c.push_back(Case(std::string(op) + "_f", "", op).In(F, {3, 4}).In(F, {3, 1}));
  }
  for (const char* op : {"And", "Or", "Xor"}) {
    c.push_back(Case(op, "", op).In(DT::kBool, {3, 4}).In(DT::kBool, {4}));
  }
  c.push_back(Case("Where_f", "", "Where").In(DT::kBool, {2, 1, 6}).In(F, {3, 6}).In(F, {}));
  c.push_back(Case("Where_i64", "", "Where").In(DT::kBool, {6}).In(I64, {2, 6}).In(I64, {6}));
  return c;
}

std::vector<HarnessCase> MatMulCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("MatMul_2d", "", "MatMul").In(F, {7, 19}).In(F, {19, 33}));
  c.push_back(Case("MatMul_2d_constB", "", "MatMul").In(F, {7, 19}).In(F, {19, 33}, true));
  c.push_back(Case("MatMul_big_constB", "", "MatMul").In(F, {2, 100, 300}).In(F, {300, 70}, true));
  c.push_back(Case("MatMul_batched", "", "MatMul").In(F, {2, 3, 9, 17}).In(F, {2, 3, 17, 5}));
  c.push_back(Case("MatMul_bcast", "", "MatMul").In(F, {2, 1, 9, 17}).In(F, {3, 17, 5}));
  c.push_back(Case("MatMul_vec_a", "", "MatMul").In(F, {17}).In(F, {2, 17, 5}));
  c.push_back(Case("MatMul_vec_b", "", "MatMul").In(F, {2, 4, 17}).In(F, {17}));
  c.push_back(Case("MatMul_3d_x_2d", "", "MatMul").In(F, {3, 8, 40}).In(F, {40, 24}));
  c.push_back(Case("Gemm_plain", "", "Gemm").In(F, {5, 12}).In(F, {12, 7}));
  c.push_back(Case("Gemm_transB_bias", "", "Gemm")
                  .Attr("transB", Int(1)).In(F, {4, 64}).In(F, {10, 64}, true).In(F, {10}, true));
  c.push_back(Case("Gemm_all", "", "Gemm")
                  .Attr("transA", Int(1)).Attr("transB", Int(1)).Attr("alpha", Float(0.5f))
                  .Attr("beta", Float(2.f)).In(F, {12, 5}).In(F, {7, 12}).In(F, {5, 1}));
  c.push_back(Case("Gemm_C_full", "", "Gemm").Attr("beta", Float(-1.f))
                  .In(F, {3, 300}).In(F, {300, 20}, true).In(F, {3, 20}));
  c.push_back(Case("FusedMatMul_bias_relu", "switchyard", "FusedMatMul", 17)
                  .Attr("activation", Str("Relu")).In(F, {2, 9, 32}).In(F, {32, 20}, true)
                  .In(F, {20}, true));
  c.push_back(Case("FusedMatMul_residual_gelu", "switchyard", "FusedMatMul", 17)
                  .Attr("activation", Str("Gelu")).In(F, {2, 9, 32}).In(F, {32, 20}, true)
                  .In(F, {20}, true).In(F, {2, 9, 20}));
  // Large enough for two threads to share one packed A (native gemm.cc): 67 rows (edge
  // rows), 3 K blocks, 6 panels (an edge panel), bias, residual and GELU per micro-tile.
  c.push_back(Case("FusedMatMul_shared_a_residual_gelu", "switchyard", "FusedMatMul", 17)
                  .Attr("activation", Str("Gelu")).In(F, {1, 67, 600}).In(F, {600, 90}, true)
                  .In(F, {90}, true).In(F, {1, 67, 90}));
  // Three M blocks of their own (102, 102 and 96 rows: A not shared), 9 panels: two 6x64
  // AVX-512 tiles and an edge panel (2 columns) per 6-row group.
  c.push_back(Case("FusedMatMul_quad_tiles_bias", "switchyard", "FusedMatMul", 17)
                  .In(F, {1, 300, 70}).In(F, {70, 130}, true).In(F, {130}, true));
  c.push_back(Case("FusedMatMul_bias_gelu_tanh", "switchyard", "FusedMatMul", 17)
                  .Attr("activation", Str("GeluTanh")).In(F, {2, 9, 32}).In(F, {32, 20}, true)
                  .In(F, {20}, true).Range(-3, 3));
  c.push_back(Case("FusedMatMul_trans_alpha", "switchyard", "FusedMatMul", 17)
                  .Attr("trans_a", Int(1)).Attr("trans_b", Int(1)).Attr("alpha", Float(0.25f))
                  .In(F, {2, 3, 16, 7}).In(F, {2, 3, 11, 16}).Omitted().In(F, {3, 1, 11}));
  c.push_back(Case("FusedMatMul_clip", "switchyard", "FusedMatMul", 17)
                  .Attr("activation", Str("Clip")).Attr("activation_params", Floats({0.f, 6.f}))
                  .In(F, {5, 8}).In(F, {8, 6}));
  return c;
}

std::vector<HarnessCase> NnCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("Softmax_last", "", "Softmax", 13).In(F, {2, 3, 50}));
  c.push_back(Case("Softmax_axis1", "", "Softmax", 13).Attr("axis", Int(1)).In(F, {2, 7, 5}));
  c.push_back(Case("Softmax_op11_2d", "", "Softmax", 11).In(F, {2, 3, 4}));
  c.push_back(Case("LogSoftmax_last", "", "LogSoftmax", 13).In(F, {4, 33}));
  c.push_back(Case("LogSoftmax_axis0", "", "LogSoftmax", 13).Attr("axis", Int(0)).In(F, {6, 5}));
  c.push_back(Case("LayerNormalization", "", "LayerNormalization", 17)
                  .In(F, {2, 5, 64}).In(F, {64}, true).In(F, {64}, true));
  c.push_back(Case("LayerNormalization_axis1_3out", "", "LayerNormalization", 17)
                  .Attr("axis", Int(1)).Attr("epsilon", Float(1e-3f)).Outputs(3)
                  .In(F, {3, 4, 5}).In(F, {4, 5}));
  c.push_back(Case("LayerNorm_fused", "switchyard", "LayerNorm", 17)
                  .In(F, {4, 96}).In(F, {96}, true).In(F, {96}, true));
  c.push_back(Case("LayerNorm_noaffine", "switchyard", "LayerNorm", 17).In(F, {4, 96}));
  c.push_back(Case("BatchNormalization", "", "BatchNormalization", 15)
                  .In(F, {2, 3, 5, 5}).In(F, {3}, true).In(F, {3}, true).In(F, {3}, true)
                  .In(F, {3}, true).Range(0.5, 2));
  c.push_back(Case("InstanceNormalization", "", "InstanceNormalization", 17)
                  .In(F, {2, 3, 6, 5}).In(F, {3}).In(F, {3}));
  c.push_back(Case("MaxPool_3x3s2p1", "", "MaxPool", 12)
                  .Attr("kernel_shape", Ints({3, 3})).Attr("strides", Ints({2, 2}))
                  .Attr("pads", Ints({1, 1, 1, 1})).In(F, {1, 3, 9, 9}));
  c.push_back(Case("MaxPool_ceil_dil", "", "MaxPool", 12)
                  .Attr("kernel_shape", Ints({2, 2})).Attr("strides", Ints({2, 2}))
                  .Attr("dilations", Ints({2, 1})).Attr("ceil_mode", Int(1)).In(F, {1, 2, 9, 8}));
  c.push_back(Case("MaxPool_1d_same", "", "MaxPool", 12).Attr("kernel_shape", Ints({3}))
                  .Attr("strides", Ints({2})).Attr("auto_pad", Str("SAME_UPPER")).In(F, {2, 3, 10}));
  c.push_back(Case("AveragePool_pad_excl", "", "AveragePool", 11)
                  .Attr("kernel_shape", Ints({3, 3})).Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {1, 2, 6, 7}));
  c.push_back(Case("AveragePool_pad_incl", "", "AveragePool", 11)
                  .Attr("kernel_shape", Ints({3, 3})).Attr("pads", Ints({1, 1, 1, 1}))
                  .Attr("strides", Ints({2, 2})).Attr("count_include_pad", Int(1))
                  .In(F, {1, 2, 7, 7}));
  c.push_back(Case("GlobalAveragePool", "", "GlobalAveragePool").In(F, {2, 5, 7, 7}));
  c.push_back(Case("GlobalMaxPool", "", "GlobalMaxPool").In(F, {2, 5, 4, 3}));
  c.push_back(Case("Attention_mask", "switchyard", "Attention", 17)
                  .Attr("scale", Float(0.125f)).In(F, {2, 2, 7, 16}).In(F, {2, 2, 9, 16})
                  .In(F, {2, 2, 9, 8}).In(F, {2, 1, 1, 9}));
  // A mask broadcast along the keys (column stride 0) and more keys than one vector.
  c.push_back(Case("Attention_mask_key_broadcast", "switchyard", "Attention", 17)
                  .In(F, {1, 3, 7, 16}).In(F, {1, 3, 37, 16}).In(F, {1, 3, 37, 8}).In(F, {1, 3, 7, 1}));
  // A head dim that is not a multiple of 16 (Kᵀ packed 16 x 16 at a time, a partial last
  // block of k) and a partial last panel of keys.
  c.push_back(Case("Attention_head_dim_24", "switchyard", "Attention", 17)
                  .In(F, {2, 2, 9, 24}).In(F, {2, 2, 21, 24}).In(F, {2, 2, 21, 8}));
  c.push_back(Case("Attention_causal", "switchyard", "Attention", 17)
                  .Attr("scale", Float(0.25f)).Attr("causal", Int(1)).In(F, {3, 6, 16})
                  .In(F, {3, 6, 16}).In(F, {3, 6, 16}));
  // One batch at 2 threads: query rows split into blocks (a per-row mask, causal rows
  // offset by the block's first row).
  c.push_back(Case("Attention_row_blocks_mask", "switchyard", "Attention", 17)
                  .Attr("scale", Float(0.125f)).In(F, {1, 1, 20, 16}).In(F, {1, 1, 13, 16})
                  .In(F, {1, 1, 13, 8}).In(F, {1, 1, 20, 13}));
  c.push_back(Case("Attention_row_blocks_causal", "switchyard", "Attention", 17)
                  .Attr("causal", Int(1)).In(F, {1, 21, 16}).In(F, {1, 21, 16}).In(F, {1, 21, 16}));
  // Causal with more query rows than one 48-row block: each block computes only the keys
  // its rows see (with a mask as well; and more keys than queries).
  c.push_back(Case("Attention_causal_key_blocks_mask", "switchyard", "Attention", 17)
                  .Attr("causal", Int(1)).In(F, {4, 100, 16}).In(F, {4, 100, 16})
                  .In(F, {4, 100, 8}).In(F, {100, 100}));
  c.push_back(Case("Attention_causal_key_blocks_long_kv", "switchyard", "Attention", 17)
                  .Attr("causal", Int(1)).In(F, {3, 61, 16}).In(F, {3, 130, 16}).In(F, {3, 130, 16}));
  // Layout perms (fuse_attention): Q, K, V stored [B, S, H, D], output written [B, S, H, Dv];
  // and only Q and the output strided, K broadcast over heads, causal.
  c.push_back(Case("Attention_bshd_mask", "switchyard", "Attention", 17).Attr("scale", Float(0.125f))
                  .Attr("q_perm", Ints({0, 2, 1, 3})).Attr("k_perm", Ints({0, 2, 1, 3}))
                  .Attr("v_perm", Ints({0, 2, 1, 3})).Attr("out_perm", Ints({0, 2, 1, 3}))
                  .In(F, {2, 11, 3, 16}).In(F, {2, 11, 3, 16}).In(F, {2, 11, 3, 8}).In(F, {2, 1, 1, 11}));
  c.push_back(Case("Attention_bshd_causal_kv_bcast", "switchyard", "Attention", 17).Attr("causal", Int(1))
                  .Attr("q_perm", Ints({0, 2, 1, 3})).Attr("out_perm", Ints({0, 2, 1, 3}))
                  .In(F, {2, 9, 4, 16}).In(F, {2, 1, 9, 16}).In(F, {2, 4, 9, 8}));
  c.push_back(Case("FusedElementwise_chain", "switchyard", "FusedElementwise", 17)
                  .Attr("ops", Strs({"Mul", "Add", "Relu", "Sub", "LeakyRelu"}))
                  .Attr("operands", Ints({1, 2, -1, 2, -1}))
                  .Attr("swap", Ints({0, 0, 0, 1, 0}))
                  .Attr("params", Floats({0.3f}))
                  .Attr("param_offsets", Ints({0, 0, 0, 0, 0}))
                  .In(F, {2, 3, 40}).In(F, {3, 1}).In(F, {40}));
  c.push_back(Case("FusedElementwise_bcast0", "switchyard", "FusedElementwise", 17)
                  .Attr("ops", Strs({"Div", "Sigmoid"})).Attr("operands", Ints({1, -1}))
                  .Attr("swap", Ints({1, 0})).In(F, {5}).In(F, {3, 5}).Range(0.5, 2));
  c.push_back(Case("Gelu_erf", "switchyard", "Gelu", 17).In(F, {3, 50}));
  c.push_back(Case("Gelu_tanh", "switchyard", "Gelu", 17).Attr("approximate", Str("tanh")).In(F, {3, 50}));
  return c;
}

std::vector<HarnessCase> ShapeCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("Reshape", "", "Reshape", 14).In(F, {2, 3, 4}).InValue(I64s({0, -1, 2})));
  c.push_back(Case("Reshape_i64", "", "Reshape", 14).In(I64, {6}).InValue(I64s({3, 2}), false));
  c.push_back(Case("Flatten", "", "Flatten", 13).Attr("axis", Int(-2)).In(F, {2, 3, 4}));
  c.push_back(Case("Squeeze_in", "", "Squeeze", 13).In(F, {1, 3, 1, 2}).InValue(I64s({0, -2})));
  c.push_back(Case("Squeeze_attr", "", "Squeeze", 11).Attr("axes", Ints({2})).In(F, {3, 2, 1}));
  c.push_back(Case("Unsqueeze_in", "", "Unsqueeze", 13).In(I64, {3, 2}).InValue(I64s({0, 3})));
  c.push_back(Case("Unsqueeze_attr", "", "Unsqueeze", 11).Attr("axes", Ints({-1})).In(F, {3}));
  c.push_back(Case("Identity", "", "Identity").In(DT::kBool, {4, 2}));
  c.push_back(Case("Dropout", "", "Dropout", 13).In(F, {4, 2}));
  c.push_back(Case("Shape", "", "Shape", 13).In(F, {2, 3, 4}));
  c.push_back(Case("Shape_slice", "", "Shape", 15).Attr("start", Int(1)).Attr("end", Int(-1)).In(F, {2, 3, 4, 5}));
  c.push_back(Case("Size", "", "Size").In(F, {2, 3, 4}));
  c.push_back(Case("ConstantOfShape", "", "ConstantOfShape")
                  .Attr("value", TensorAttr(Tensor::FromInt64({7}, {1}))).InValue(I64s({2, 3}), false));
  c.push_back(Case("ConstantOfShape_default", "", "ConstantOfShape").InValue(I64s({4}), false));
  c.push_back(Case("Range_i64", "", "Range").InValue(Tensor::FromInt64({1}, {}), false)
                  .InValue(Tensor::FromInt64({11}, {}), false).InValue(Tensor::FromInt64({3}, {}), false));
  c.push_back(Case("Range_f", "", "Range").InValue(Tensor::Scalar(F, 0.5), false)
                  .InValue(Tensor::Scalar(F, -2), false).InValue(Tensor::Scalar(F, -0.75), false));
  c.push_back(Case("Expand", "", "Expand").In(F, {3, 1}).InValue(I64s({2, 1, 4})));
  c.push_back(Case("Tile", "", "Tile").In(F, {2, 3}).InValue(I64s({2, 3})));
  c.push_back(Case("Transpose_0213", "", "Transpose").Attr("perm", Ints({0, 2, 1, 3})).In(F, {2, 3, 4, 5}));
  c.push_back(Case("Transpose_default", "", "Transpose").In(I64, {3, 4}));
  c.push_back(Case("Concat_axis1", "", "Concat").Attr("axis", Int(1)).In(F, {2, 3, 2}).In(F, {2, 1, 2}).In(F, {2, 4, 2}));
  c.push_back(Case("Concat_i64", "", "Concat").Attr("axis", Int(-1)).In(I64, {1}).In(I64, {2}));
  c.push_back(Case("Split_equal", "", "Split", 13).Attr("axis", Int(1)).Outputs(3).In(F, {2, 6, 2}));
  c.push_back(Case("Split_sizes", "", "Split", 13).Attr("axis", Int(-1)).Outputs(2).In(F, {2, 5}).InValue(I64s({2, 3})));
  c.push_back(Case("Split_attr", "", "Split", 11).Attr("split", Ints({1, 3})).Outputs(2).In(F, {4, 2}));
  // One outer row of four 96 KiB parts: the parts are copied by different threads.
  c.push_back(Case("Split_axis0_threads", "", "Split", 13).Attr("axis", Int(0)).Outputs(4).In(F, {12, 8192}));
  c.push_back(Case("Slice", "", "Slice", 13).In(F, {5, 6, 7}).InValue(I64s({1, -5}))
                  .InValue(I64s({100, -1})).InValue(I64s({0, 2})).InValue(I64s({2, 2})));
  c.push_back(Case("Slice_neg_step", "", "Slice", 13).In(F, {5, 6}).InValue(I64s({-1}))
                  .InValue(I64s({-100})).InValue(I64s({1})).InValue(I64s({-2})));
  c.push_back(Case("Slice_v1", "", "Slice", 9).Attr("starts", Ints({1})).Attr("ends", Ints({3}))
                  .Attr("axes", Ints({1})).In(F, {2, 4}));
  c.push_back(Case("Gather_axis0", "", "Gather").In(F, {5, 4}).In(I64, {2, 3}).Range(-5, 4));
  c.push_back(Case("Gather_axis1_scalar", "", "Gather").Attr("axis", Int(1)).In(F, {2, 5, 3})
                  .InValue(Tensor::FromInt64({-1}, {}), true));
  c.push_back(Case("Gather_i64_data", "", "Gather").In(I64, {4}).In(DT::kInt32, {3}).Range(0, 3));
  c.push_back(Case("ReduceMean_last", "", "ReduceMean", 13).Attr("axes", Ints({-1})).In(F, {3, 4, 20}));
  c.push_back(Case("ReduceMean_18_in", "", "ReduceMean", 18).In(F, {3, 4, 5}).InValue(I64s({0, 2})));
  c.push_back(Case("ReduceSum_in", "", "ReduceSum", 13).Attr("keepdims", Int(0)).In(F, {3, 4, 5}).InValue(I64s({1})));
  c.push_back(Case("ReduceSum_all", "", "ReduceSum", 13).In(F, {3, 4}));
  c.push_back(Case("ReduceMax_mid", "", "ReduceMax", 13).Attr("axes", Ints({1})).In(F, {3, 4, 5}));
  c.push_back(Case("ReduceMin_all", "", "ReduceMin", 13).Attr("keepdims", Int(0)).In(F, {3, 4}));
  c.push_back(Case("ArgMax", "", "ArgMax", 13).Attr("axis", Int(1)).In(F, {3, 7, 2}));
  c.push_back(Case("ArgMax_last_i64", "", "ArgMax", 13).Attr("axis", Int(-1)).Attr("keepdims", Int(0))
                  .Attr("select_last_index", Int(1)).In(I64, {4, 6}));
  c.push_back(Case("ArgMin", "", "ArgMin", 13).In(F, {5, 3}));
  return c;
}

const bool kRegistered = (AddHarnessCases(ElementwiseCases()), AddHarnessCases(MatMulCases()),
                          AddHarnessCases(NnCases()), AddHarnessCases(ShapeCases()), true);


}  // namespace
}  // namespace switchyard::harness
