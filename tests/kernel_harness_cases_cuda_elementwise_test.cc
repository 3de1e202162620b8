// Harness rows for the CUDA backend's own elementwise and data-movement kernels
// (src/backends/cuda/ops_elementwise.cc, ops_movement.cc): realistic activation shapes
// (conv [2,64,28,28], transformer [2,128,768]) that take the vectorised paths, odd sizes
// that leave tails, every broadcast pattern the binary kernels special-case (same shape,
// per-channel, row, column, scalar on either side, both sides, 5-6-D general), float16 /
// bfloat16 rows, runtime (non-constant) Clip bounds and Pad values, and the transpose
// fast paths (tiled last-two swap, [B,S,H,D] -> [B,H,S,D] row moves, general perms).
// Every provider that supports an op runs these rows too.
#include "kernel_harness.h"

namespace switchyard::harness {
namespace {

using DT = DataType;
constexpr DT F = DT::kFloat;
constexpr DT H = DT::kFloat16;
constexpr DT BF = DT::kBfloat16;
constexpr DT I64 = DT::kInt64;
constexpr DT I32 = DT::kInt32;
constexpr DT B = DT::kBool;

Tensor I64s(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromInt64(v, {n});
}

std::vector<HarnessCase> UnaryCases() {
  std::vector<HarnessCase> c;
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Neg", "Abs", "HardSwish",
                         "HardSigmoid", "LeakyRelu", "Softplus", "Elu"}) {
    const std::string s(op);
    c.push_back(Case("cu_" + s + "_conv", "", op).In(F, {2, 64, 28, 28}).Range(-4, 4));
    c.push_back(Case("cu_" + s + "_odd", "", op).In(F, {3, 5, 7}).Range(-6, 6));
    c.push_back(Case("cu_" + s + "_f16", "", op).In(H, {2, 3, 41}).Range(-3, 3).Tol(3e-3, 2e-2));
  }
  c.push_back(Case("cu_Relu_bf16", "", "Relu").In(BF, {4, 129}).Tol(1e-2, 2e-2));
  c.push_back(Case("cu_Sigmoid_bf16", "", "Sigmoid").In(BF, {2, 128, 64}).Tol(1e-2, 2e-2));
  c.push_back(Case("cu_Log_big", "", "Log").In(F, {2, 128, 768}).Range(0.01, 50));
  c.push_back(Case("cu_Sqrt_odd", "", "Sqrt").In(F, {1001}).Range(0, 9));
  c.push_back(Case("cu_Reciprocal_odd", "", "Reciprocal").In(F, {7, 13}).Range(0.25, 4));
  c.push_back(Case("cu_Exp_f16", "", "Exp").In(H, {5, 9}).Range(-3, 3).Tol(3e-3, 2e-2));
  c.push_back(Case("cu_Elu_alpha", "", "Elu").Attr("alpha", Float(0.5f)).In(F, {4, 33}));
  c.push_back(Case("cu_LeakyRelu_big", "", "LeakyRelu").Attr("alpha", Float(0.1f)).In(F, {2, 32, 56, 56}));
  c.push_back(Case("cu_HardSigmoid_ab", "", "HardSigmoid").Attr("alpha", Float(1.f / 6))
                  .Attr("beta", Float(0.5f)).In(F, {2, 16, 14, 14}).Range(-5, 5));
  c.push_back(Case("cu_Gelu_sy_big", "switchyard", "Gelu").In(F, {2, 128, 768}).Range(-4, 4));
  c.push_back(Case("cu_Gelu_sy_tanh_f16", "switchyard", "Gelu").Attr("approximate", Str("tanh"))
                  .In(H, {2, 7, 96}).Range(-4, 4).Tol(3e-3, 2e-2));
  c.push_back(Case("cu_Gelu20", "", "Gelu", 20).In(F, {3, 77}).Range(-4, 4));
  c.push_back(Case("cu_Gelu20_tanh", "", "Gelu", 20).Attr("approximate", Str("tanh")).In(F, {3, 77}));
  // Clip: ReLU6 with constant bounds, attribute form, only max, runtime bounds.
  c.push_back(Case("cu_Clip_relu6", "", "Clip", 13).In(F, {2, 32, 28, 28}).Range(-3, 9)
                  .InValue(Tensor::Scalar(F, 0)).InValue(Tensor::Scalar(F, 6)));
  c.push_back(Case("cu_Clip_max_only", "", "Clip", 13).In(F, {5, 11}).Omitted()
                  .InValue(Tensor::Scalar(F, 0.25)));
  c.push_back(Case("cu_Clip_runtime", "", "Clip", 13).In(F, {3, 37})
                  .InValue(Tensor::Scalar(F, -0.5), false).InValue(Tensor::Scalar(F, 1.5), false));
  c.push_back(Case("cu_Clip_runtime_min", "", "Clip", 13).In(F, {3, 37})
                  .InValue(Tensor::Scalar(F, -0.5), false));
  c.push_back(Case("cu_Clip_noargs", "", "Clip", 13).In(F, {9}));
  c.push_back(Case("cu_Clip_attr6", "", "Clip", 6).Attr("min", Float(-0.3f)).In(F, {4, 19}));
  c.push_back(Case("cu_Clip_f16", "", "Clip", 13).In(H, {2, 50}).Range(-3, 9)
                  .InValue(Tensor::Scalar(H, 0)).InValue(Tensor::Scalar(H, 6)).Tol(1e-3, 2e-2));
  return c;
}

std::vector<HarnessCase> BinaryCases() {
  std::vector<HarnessCase> c;
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    const std::string s(op);
    c.push_back(Case("cu_" + s + "_same_big", "", op).In(F, {2, 128, 768}).In(F, {2, 128, 768}).Range(0.5, 2));
    c.push_back(Case("cu_" + s + "_chan", "", op).In(F, {2, 64, 28, 28}).In(F, {64, 1, 1}).Range(0.5, 2));
    c.push_back(Case("cu_" + s + "_row", "", op).In(F, {2, 128, 768}).In(F, {768}).Range(0.5, 2));
    c.push_back(Case("cu_" + s + "_scalar_r", "", op).In(F, {2, 9, 31}).In(F, {}).Range(0.5, 2));
    c.push_back(Case("cu_" + s + "_chan_l", "", op).In(F, {1, 5, 1}).In(F, {3, 5, 7}).Range(0.5, 2));
    c.push_back(Case("cu_" + s + "_both", "", op).In(F, {2, 1, 5, 7}).In(F, {1, 3, 1, 7}).Range(0.5, 2));
    c.push_back(Case("cu_" + s + "_odd_row", "", op).In(F, {3, 5, 7}).In(F, {5, 1}).Range(0.5, 2));
  }
  c.push_back(Case("cu_Add_5d", "", "Add").In(F, {2, 3, 1, 4, 5}).In(F, {3, 6, 1, 1}));
  c.push_back(Case("cu_Mul_6d", "", "Mul").In(F, {2, 1, 3, 1, 2, 5}).In(F, {1, 4, 1, 3, 2, 1}));
  c.push_back(Case("cu_Add_f16_chan", "", "Add").In(H, {2, 16, 9, 9}).In(H, {16, 1, 1}).Tol(2e-3, 2e-2));
  c.push_back(Case("cu_Mul_f16_same", "", "Mul").In(H, {4, 100}).In(H, {4, 100}).Tol(2e-3, 2e-2));
  c.push_back(Case("cu_Add_bf16_row", "", "Add").In(BF, {2, 16, 64}).In(BF, {64}).Tol(1e-2, 2e-2));
  c.push_back(Case("cu_Sub_bf16_both", "", "Sub").In(BF, {3, 1, 6}).In(BF, {1, 5, 6}).Tol(1e-2, 2e-2));
  c.push_back(Case("cu_Div_row_f16", "", "Div").In(H, {3, 40}).In(H, {40}).Range(0.5, 2).Tol(2e-3, 2e-2));
  c.push_back(Case("cu_Pow_same", "", "Pow").In(F, {4, 37}).Range(0.5, 2).In(F, {4, 37}).Range(-2, 2));
  c.push_back(Case("cu_Pow_sq", "", "Pow").In(F, {2, 128, 768}).InValue(Tensor::Scalar(F, 2)));
  c.push_back(Case("cu_Pow_sq_rt", "", "Pow").In(F, {2, 17, 3}).InValue(Tensor::Scalar(F, 3), false));
  c.push_back(Case("cu_Add_const_bias", "", "Add").In(F, {4, 77}).In(F, {77}, true));
  // Comparisons -> bool.
  for (const char* op : {"Equal", "Less", "Greater"}) {
    const std::string s(op);
    c.push_back(Case("cu_" + s + "_same_f", "", op).In(F, {4, 37}).Range(-1, 1).In(F, {4, 37}).Range(-1, 1));
    c.push_back(Case("cu_" + s + "_i32_row", "", op).In(I32, {3, 4, 9}).In(I32, {9}));
    c.push_back(Case("cu_" + s + "_i64_scalar", "", op).In(I64, {2, 33}).InValue(Tensor::FromInt64({1}, {}), false));
    c.push_back(Case("cu_" + s + "_f16_both", "", op).In(H, {3, 1, 5}).In(H, {1, 4, 5}));
  }
  c.push_back(Case("cu_Equal_bool", "", "Equal").In(B, {3, 17}).In(B, {17}));
  // Where: attention-style mask, same shapes, integers.
  c.push_back(Case("cu_Where_mask", "", "Where").In(B, {2, 1, 1, 64}).In(F, {2, 4, 64, 64})
                  .InValue(Tensor::Scalar(F, -10000.0)));
  c.push_back(Case("cu_Where_same", "", "Where").In(B, {3, 129}).In(F, {3, 129}).In(F, {3, 129}));
  c.push_back(Case("cu_Where_f16", "", "Where").In(B, {5, 1}).In(H, {5, 7}).In(H, {7}));
  c.push_back(Case("cu_Where_i64_same", "", "Where").In(B, {40}).In(I64, {40}).In(I64, {40}));
  c.push_back(Case("cu_Where_bool", "", "Where").In(B, {2, 6}).In(B, {6}).In(B, {2, 1}));
  return c;
}

std::vector<HarnessCase> CastCases() {
  std::vector<HarnessCase> c;
  auto cast = [&](const std::string& name, DT from, DT to, std::vector<int64_t> shape, double lo,
                  double hi) {
    c.push_back(Case("cu_Cast_" + name, "", "Cast").Attr("to", Int(static_cast<int64_t>(to)))
                    .In(from, std::move(shape)).Range(lo, hi));
  };
  cast("f2h", F, H, {2, 128, 64}, -100, 100);
  cast("h2f", H, F, {3, 77}, -100, 100);
  cast("f2bf", F, BF, {4, 33}, -100, 100);
  cast("bf2f", BF, F, {4, 33}, -100, 100);
  cast("h2bf", H, BF, {5, 7}, -10, 10);
  cast("f2i32_neg", F, I32, {6, 11}, -9.9, 9.9);
  cast("h2i64", H, I64, {2, 9}, -50, 50);
  cast("bf2i32", BF, I32, {13}, -50, 50);
  cast("i642i32", I64, I32, {3, 5}, -1000, 1000);
  cast("i322f", I32, F, {3, 5}, -1000, 1000);
  cast("i642h", I64, H, {3, 5}, -1000, 1000);
  cast("i642b", I64, B, {3, 5}, -2, 2);
  cast("b2i64", B, I64, {3, 5}, 0, 1);
  cast("b2h", B, H, {9}, 0, 1);
  cast("h2b", H, B, {9}, -1, 1);
  cast("f2f", F, F, {4, 4}, -1, 1);
  return c;
}

std::vector<HarnessCase> FusedCases() {
  std::vector<HarnessCase> c;
  // Every unary link kind with its parameters, on a dense input.
  c.push_back(Case("cu_Fused_acts", "switchyard", "FusedElementwise")
                  .Attr("ops", Strs({"LeakyRelu", "Clip", "HardSigmoid", "Tanh", "Gelu", "SiLU", "Sigmoid",
                                     "HardSwish", "Abs", "Sqrt", "Exp", "Log", "Reciprocal", "Relu", "Neg", "Erf"}))
                  .Attr("operands", Ints(std::vector<int64_t>(16, -1)))
                  .Attr("swap", Ints(std::vector<int64_t>(16, 0)))
                  .Attr("params", Floats({0.2f, -1.5f, 2.5f, 0.3f, 0.4f}))
                  .Attr("param_offsets", Ints({0, 1, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}))
                  .In(F, {2, 128, 96}).Range(-3, 3).Tol(1e-5, 3e-2));
  // Transformer bias + residual + GELU: dense and row operands.
  c.push_back(Case("cu_Fused_bias_gelu", "switchyard", "FusedElementwise")
                  .Attr("ops", Strs({"Add", "Gelu", "Add"}))
                  .Attr("operands", Ints({1, -1, 2})).Attr("swap", Ints({0, 0, 1}))
                  .In(F, {2, 128, 768}).In(F, {768}, true).In(F, {2, 128, 768}));
  // Broadcast input 0, scalar and per-channel operands, swapped Sub/Div/Pow.
  c.push_back(Case("cu_Fused_bcast", "switchyard", "FusedElementwise")
                  .Attr("ops", Strs({"Mul", "Sub", "Div", "Max", "Min", "Pow", "Sigmoid"}))
                  .Attr("operands", Ints({1, 2, 3, 2, 3, 2, -1}))
                  .Attr("swap", Ints({0, 1, 1, 0, 1, 1, 0}))
                  .In(F, {16, 1, 1}).Range(0.5, 1.5).In(F, {2, 16, 9, 9}).Range(0.5, 1.5)
                  .In(F, {}).Range(3, 4).In(F, {1, 9}).Range(1, 5));
  c.push_back(Case("cu_Fused_f16", "switchyard", "FusedElementwise")
                  .Attr("ops", Strs({"Mul", "Add", "Relu"})).Attr("operands", Ints({1, 2, -1}))
                  .Attr("swap", Ints({0, 0, 0}))
                  .In(H, {2, 32, 7, 7}).In(H, {32, 1, 1}).In(H, {32, 1, 1}).Tol(3e-3, 2e-2));
  c.push_back(Case("cu_Fused_bf16_dense", "switchyard", "FusedElementwise")
                  .Attr("ops", Strs({"Sub", "Exp"})).Attr("operands", Ints({1, -1})).Attr("swap", Ints({0, 0}))
                  .In(BF, {3, 65}).Range(-1, 1).In(BF, {3, 65}).Range(-1, 1).Tol(1e-2, 2e-2));
  c.push_back(Case("cu_Fused_6d", "switchyard", "FusedElementwise")
                  .Attr("ops", Strs({"Add", "Mul", "Tanh"})).Attr("operands", Ints({1, 2, -1}))
                  .Attr("swap", Ints({0, 1, 0}))
                  .In(F, {2, 1, 3, 1, 2, 5}).In(F, {1, 4, 1, 3, 1, 1}).In(F, {5}));
  return c;
}

std::vector<HarnessCase> MovementCases() {
  std::vector<HarnessCase> c;
  // Copies.
  c.push_back(Case("cu_Reshape_big", "", "Reshape", 14).In(F, {2, 128, 768}).InValue(I64s({2, 128, 12, 64})));
  c.push_back(Case("cu_Reshape_f16", "", "Reshape", 14).In(H, {6, 5}).InValue(I64s({-1})));
  c.push_back(Case("cu_Flatten_axis0", "", "Flatten", 13).Attr("axis", Int(0)).In(I64, {2, 3}));
  c.push_back(Case("cu_Flatten_conv", "", "Flatten", 13).In(F, {2, 512, 1, 1}));
  c.push_back(Case("cu_Squeeze_neg", "", "Squeeze", 13).In(H, {2, 1, 7, 1}).InValue(I64s({-1})));
  c.push_back(Case("cu_Squeeze_all", "", "Squeeze", 13).In(F, {1, 5, 1}));
  c.push_back(Case("cu_Unsqueeze_neg", "", "Unsqueeze", 13).In(F, {4, 7}).InValue(I64s({-1, 1})));
  c.push_back(Case("cu_Identity_f", "", "Identity").In(F, {3, 33}));
  // Transpose: attention permutation, last-two swap (tiled), 2-D odd, general, 6-D, dtypes.
  c.push_back(Case("cu_Transpose_bshd", "", "Transpose").Attr("perm", Ints({0, 2, 1, 3})).In(F, {2, 128, 12, 64}));
  c.push_back(Case("cu_Transpose_bshd_f16", "", "Transpose").Attr("perm", Ints({0, 2, 1, 3}))
                  .In(H, {2, 33, 4, 24}));
  c.push_back(Case("cu_Transpose_kT", "", "Transpose").Attr("perm", Ints({0, 1, 3, 2})).In(F, {2, 4, 100, 64}));
  c.push_back(Case("cu_Transpose_2d_odd", "", "Transpose").In(F, {37, 53}));
  c.push_back(Case("cu_Transpose_2d_bf16", "", "Transpose").In(BF, {65, 33}));
  c.push_back(Case("cu_Transpose_general", "", "Transpose").Attr("perm", Ints({3, 1, 0, 2})).In(F, {2, 3, 4, 5}));
  c.push_back(Case("cu_Transpose_nchw_nhwc", "", "Transpose").Attr("perm", Ints({0, 2, 3, 1})).In(F, {2, 24, 13, 13}));
  c.push_back(Case("cu_Transpose_6d", "", "Transpose").Attr("perm", Ints({5, 3, 1, 4, 0, 2}))
                  .In(F, {2, 3, 2, 4, 3, 5}));
  c.push_back(Case("cu_Transpose_unit_dims", "", "Transpose").Attr("perm", Ints({1, 0, 3, 2})).In(I64, {1, 6, 1, 5}));
  c.push_back(Case("cu_Transpose_bool", "", "Transpose").Attr("perm", Ints({2, 0, 1})).In(B, {3, 5, 7}));
  // Thin sides (<= 8) take the one-line-per-thread kernel: an RGB batch to channels-last
  // and back, and a thin 2-D matrix both ways.
  c.push_back(Case("cu_Transpose_thin_rgb_nhwc", "", "Transpose").Attr("perm", Ints({0, 2, 3, 1})).In(H, {4, 3, 17, 19}));
  c.push_back(Case("cu_Transpose_thin_rgb_nchw", "", "Transpose").Attr("perm", Ints({0, 3, 1, 2})).In(F, {4, 17, 19, 3}));
  c.push_back(Case("cu_Transpose_thin_2d", "", "Transpose").In(BF, {300, 7}));
  c.push_back(Case("cu_Transpose_thin_2d_rows", "", "Transpose").In(I64, {2, 301}));
  c.push_back(Case("cu_Transpose_merge", "", "Transpose").Attr("perm", Ints({2, 3, 0, 1})).In(F, {3, 4, 5, 6}));
  // Concat / Split.
  c.push_back(Case("cu_Concat_axis0", "", "Concat").Attr("axis", Int(0)).In(F, {2, 5}).In(F, {3, 5}));
  c.push_back(Case("cu_Concat_last5", "", "Concat").Attr("axis", Int(-1)).In(F, {2, 3, 1}).In(F, {2, 3, 4})
                  .In(F, {2, 3, 7}).In(F, {2, 3, 2}).In(F, {2, 3, 3}));
  c.push_back(Case("cu_Concat_chan", "", "Concat").Attr("axis", Int(1)).In(F, {2, 32, 14, 14}).In(F, {2, 16, 14, 14}));
  c.push_back(Case("cu_Concat_f16_d", "", "Concat").Attr("axis", Int(-1)).In(H, {2, 8, 64}).In(H, {2, 8, 64}));
  c.push_back(Case("cu_Concat_bool", "", "Concat").Attr("axis", Int(1)).In(B, {2, 3}).In(B, {2, 5}));
  c.push_back(Case("cu_Concat_empty", "", "Concat").Attr("axis", Int(0)).In(F, {0, 4}).In(F, {3, 4}));
  c.push_back(Case("cu_Split_qkv", "", "Split", 13).Attr("axis", Int(-1)).Outputs(3).In(F, {2, 128, 2304}));
  c.push_back(Case("cu_Split_odd", "", "Split", 13).Attr("axis", Int(1)).Outputs(3).In(F, {2, 9, 5})
                  .InValue(I64s({2, 3, 4})));
  c.push_back(Case("cu_Split_18", "", "Split", 18).Attr("num_outputs", Int(3)).Outputs(3).In(I64, {7, 2}));
  // Slice.
  c.push_back(Case("cu_Slice_step", "", "Slice", 13).In(F, {4, 10, 9}).InValue(I64s({1, 0}))
                  .InValue(I64s({9, 8})).InValue(I64s({-2, -1})).InValue(I64s({3, 2})));
  c.push_back(Case("cu_Slice_noaxes", "", "Slice", 13).In(H, {6, 7}).InValue(I64s({1, -3})).InValue(I64s({5, 100})));
  c.push_back(Case("cu_Slice_rev", "", "Slice", 13).In(I64, {8}).InValue(I64s({-1}))
                  .InValue(I64s({-9})).InValue(I64s({0})).InValue(I64s({-1})));
  c.push_back(Case("cu_Slice_big", "", "Slice", 13).In(F, {2, 128, 2304}).InValue(I64s({768}))
                  .InValue(I64s({1536})).InValue(I64s({2})));
  // Gather.
  c.push_back(Case("cu_Gather_embed", "", "Gather").In(F, {1000, 64}).In(I64, {2, 16}).Range(-1000, 999));
  c.push_back(Case("cu_Gather_last_i32", "", "Gather").Attr("axis", Int(-1)).In(F, {3, 4, 11})
                  .In(I32, {5}).Range(-11, 10));
  c.push_back(Case("cu_Gather_f16_mid", "", "Gather").Attr("axis", Int(1)).In(H, {2, 7, 3, 8})
                  .In(I64, {2, 2}).Range(-7, 6));
  c.push_back(Case("cu_Gather_bool", "", "Gather").In(B, {6, 3}).In(I64, {4}).Range(0, 5));
  // Expand.
  c.push_back(Case("cu_Expand_row", "", "Expand").In(F, {1, 1, 64}).InValue(I64s({2, 128, 64})));
  c.push_back(Case("cu_Expand_odd", "", "Expand").In(F, {3, 1}).InValue(I64s({2, 3, 5})));
  c.push_back(Case("cu_Expand_i64", "", "Expand").In(I64, {4}).InValue(I64s({3, 1})));
  c.push_back(Case("cu_Expand_bool_mask", "", "Expand").In(B, {2, 1, 1, 9}).InValue(I64s({2, 4, 9, 9})));
  // Pad.
  c.push_back(Case("cu_Pad_conv", "", "Pad", 13).In(F, {2, 16, 13, 13}).InValue(I64s({0, 0, 1, 1, 0, 0, 1, 1})));
  c.push_back(Case("cu_Pad_value", "", "Pad", 13).In(F, {3, 5}).InValue(I64s({1, 2, 2, 0}))
                  .InValue(Tensor::Scalar(F, -1.5)));
  c.push_back(Case("cu_Pad_value_rt", "", "Pad", 13).In(F, {3, 5}).InValue(I64s({1, 0, 0, 3}))
                  .InValue(Tensor::Scalar(F, 2.5), false));
  c.push_back(Case("cu_Pad_reflect", "", "Pad", 13).Attr("mode", Str("reflect")).In(F, {2, 3, 7, 6})
                  .InValue(I64s({0, 0, 2, 3, 0, 0, 3, 2})));
  c.push_back(Case("cu_Pad_edge_crop", "", "Pad", 13).Attr("mode", Str("edge")).In(H, {4, 9})
                  .InValue(I64s({-1, 3, 2, -2})));
  c.push_back(Case("cu_Pad_wrap", "", "Pad", 19).Attr("mode", Str("wrap")).In(F, {3, 4})
                  .InValue(I64s({2, 3, 1, 2})));
  c.push_back(Case("cu_Pad_axes", "", "Pad", 18).In(I64, {2, 3, 4}).InValue(I64s({1, 2, 0, 1}))
                  .Omitted().InValue(I64s({-1, 0})));
  c.push_back(Case("cu_Pad2", "", "Pad", 2).Attr("pads", Ints({1, 0, 0, 2})).Attr("value", Float(0.5f))
                  .In(F, {2, 3}));
  return c;
}

const bool kRegistered = (AddHarnessCases(UnaryCases()), AddHarnessCases(BinaryCases()),
                          AddHarnessCases(CastCases()), AddHarnessCases(FusedCases()),
                          AddHarnessCases(MovementCases()), true);

}  // namespace
}  // namespace switchyard::harness
