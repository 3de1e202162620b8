// Harness rows for the CUDA own kernels of normalisation, softmax, reductions, pooling
// and attention (src/backends/cuda/ops_{norm,reduce,pool,attention}.cc), beyond the
// generic rows of kernel_harness_cases_native_test.cc: realistic transformer and CNN
// shapes (rows of 768, [8,12,128,64] attention, [2,64,56,56] pooling), rows longer than
// 1024 (the block-per-row kernels), odd sizes, non-innermost axes, 6-D reductions,
// broadcast masks and batch dims, causal attention with Skv != S. Every provider that
// supports these ops runs them, CPU ones included.
#include "kernel_harness.h"

namespace switchyard::harness {
namespace {

constexpr DataType F = DataType::kFloat;

Tensor I64s(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromInt64(v, {n});
}

std::vector<HarnessCase> SoftmaxCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("cu_softmax_scores", "", "Softmax", 13).In(F, {2, 12, 128, 128}));
  c.push_back(Case("cu_softmax_long", "", "Softmax", 13).In(F, {4, 3001}));
  c.push_back(Case("cu_softmax_long_vec", "", "Softmax", 13).In(F, {2, 4096}));
  c.push_back(Case("cu_softmax_axis1_odd", "", "Softmax", 13).Attr("axis", Int(1)).In(F, {3, 37, 33}));
  c.push_back(Case("cu_softmax11_coerce", "", "Softmax", 11).Attr("axis", Int(1)).In(F, {2, 3, 4, 5}));
  c.push_back(Case("cu_logsoftmax_long", "", "LogSoftmax", 13).In(F, {3, 2051}));
  c.push_back(Case("cu_logsoftmax_axis0", "", "LogSoftmax", 13).Attr("axis", Int(0)).In(F, {77, 9}));
  return c;
}

std::vector<HarnessCase> NormCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("cu_ln_bert", "switchyard", "LayerNorm", 17)
                  .In(F, {2, 128, 768}).In(F, {768}, true).In(F, {768}, true));
  c.push_back(Case("cu_ln_long_rt", "switchyard", "LayerNorm", 17).Attr("epsilon", Float(1e-6f))
                  .In(F, {3, 2050}).In(F, {2050}).In(F, {2050}));
  c.push_back(Case("cu_ln_long_vec", "switchyard", "LayerNorm", 17)
                  .In(F, {2, 4096}).In(F, {4096}, true).In(F, {4096}, true));
  c.push_back(Case("cu_ln_scalar_scale", "switchyard", "LayerNorm", 17)
                  .In(F, {5, 33}).In(F, {1}, true).In(F, {33}, true));
  c.push_back(Case("cu_ln_axis_m2", "switchyard", "LayerNorm", 17).Attr("axis", Int(-2))
                  .In(F, {2, 6, 7, 5}).In(F, {7, 5}, true).In(F, {1, 7, 5}, true));
  // |mean| >> std: the shifted sums must not cancel (fp32 only: fp16/bf16 inputs lose
  // the variance to rounding at this offset).
  c.push_back(Case("cu_ln_offset", "switchyard", "LayerNorm", 17)
                  .In(F, {4, 513}).Range(50, 54).In(F, {513}, true).Tol(3e-5, -1));  // native CPU: 2e-5
  c.push_back(Case("cu_lnorm17_vit", "", "LayerNormalization", 17)
                  .In(F, {2, 197, 768}).In(F, {768}, true).In(F, {768}, true));
  c.push_back(Case("cu_lnorm17_axis1_nobias", "", "LayerNormalization", 17).Attr("axis", Int(1))
                  .Attr("epsilon", Float(1e-3f)).In(F, {3, 4, 37}).In(F, {4, 37}));
  c.push_back(Case("cu_bn_resnet", "", "BatchNormalization", 15)
                  .In(F, {2, 64, 56, 56}).In(F, {64}, true).In(F, {64}, true).In(F, {64}, true)
                  .In(F, {64}, true).Range(0.5, 2));
  c.push_back(Case("cu_bn_odd_rt", "", "BatchNormalization", 15)
                  .In(F, {3, 5, 7}).In(F, {5}).In(F, {5}).In(F, {5}).In(F, {5}).Range(0.5, 2));
  c.push_back(Case("cu_instnorm_784", "", "InstanceNormalization", 17)
                  .In(F, {2, 32, 28, 28}).In(F, {32}, true).In(F, {32}, true));
  c.push_back(Case("cu_instnorm_long", "", "InstanceNormalization", 17).Attr("epsilon", Float(1e-3f))
                  .In(F, {1, 4, 48, 49}).In(F, {4}).In(F, {4}));
  return c;
}

std::vector<HarnessCase> ReduceCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("cu_rmean_rows", "", "ReduceMean", 13).Attr("axes", Ints({-1}))
                  .In(F, {2, 128, 768}));
  c.push_back(Case("cu_rmean_hw18", "", "ReduceMean", 18).In(F, {2, 64, 56, 56})
                  .InValue(I64s({2, 3})));
  c.push_back(Case("cu_rmean_noop", "", "ReduceMean", 18).Attr("noop_with_empty_axes", Int(1))
                  .In(F, {3, 7}));
  c.push_back(Case("cu_rsum_split", "", "ReduceSum", 13).Attr("keepdims", Int(0))
                  .In(F, {2, 3, 4, 5}).InValue(I64s({0, 2})));
  c.push_back(Case("cu_rsum_6d", "", "ReduceSum", 13).In(F, {2, 3, 2, 3, 2, 3})
                  .InValue(I64s({1, 3, -1})));
  c.push_back(Case("cu_rsum_long", "", "ReduceSum", 13).In(F, {3, 5000}).InValue(I64s({1})));
  c.push_back(Case("cu_rmax_hw18", "", "ReduceMax", 18).In(F, {2, 64, 7, 7}).InValue(I64s({2, 3})));
  c.push_back(Case("cu_rmax_mid", "", "ReduceMax", 13).Attr("axes", Ints({1})).Attr("keepdims", Int(0))
                  .In(F, {4, 300, 17}));
  c.push_back(Case("cu_rmin_axis0", "", "ReduceMin", 13).Attr("axes", Ints({0})).In(F, {37, 5}));
  c.push_back(Case("cu_rmin_all18", "", "ReduceMin", 18).In(F, {3, 11, 13}));
  c.push_back(Case("cu_rprod_mid", "", "ReduceProd", 13).Attr("axes", Ints({1}))
                  .In(F, {3, 4, 7}).Range(0.5, 1.5));
  c.push_back(Case("cu_rprod18_last", "", "ReduceProd", 18).In(F, {6, 5})
                  .Range(0.5, 1.5).InValue(I64s({-1})));
  c.push_back(Case("cu_rl1_last", "", "ReduceL1", 18).In(F, {4, 6, 9}).InValue(I64s({-1})));
  c.push_back(Case("cu_rl2_split", "", "ReduceL2", 13).Attr("axes", Ints({1, 3}))
                  .In(F, {2, 3, 4, 5}));
  c.push_back(Case("cu_rsumsq_long", "", "ReduceSumSquare", 13).Attr("axes", Ints({1}))
                  .In(F, {3, 1500}));
  c.push_back(Case("cu_rlogsum_mid", "", "ReduceLogSum", 18).In(F, {3, 4, 5}).Range(0.1, 2)
                  .InValue(I64s({1})));
  return c;
}

std::vector<HarnessCase> PoolCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("cu_maxpool_resnet", "", "MaxPool", 12).Attr("kernel_shape", Ints({3, 3}))
                  .Attr("strides", Ints({2, 2})).Attr("pads", Ints({1, 1, 1, 1}))
                  .In(F, {2, 64, 56, 56}));
  c.push_back(Case("cu_maxpool_3d", "", "MaxPool", 12).Attr("kernel_shape", Ints({2, 2, 2}))
                  .Attr("strides", Ints({1, 2, 2})).In(F, {1, 2, 5, 6, 7}));
  c.push_back(Case("cu_maxpool_ceil_asym", "", "MaxPool", 12).Attr("kernel_shape", Ints({3, 3}))
                  .Attr("strides", Ints({2, 2})).Attr("pads", Ints({0, 1, 0, 0}))
                  .Attr("ceil_mode", Int(1)).In(F, {2, 3, 10, 11}));
  c.push_back(Case("cu_avgpool_2x2", "", "AveragePool", 11).Attr("kernel_shape", Ints({2, 2}))
                  .Attr("strides", Ints({2, 2})).In(F, {2, 64, 56, 56}));
  c.push_back(Case("cu_avgpool_ceil_incl", "", "AveragePool", 11).Attr("kernel_shape", Ints({3, 3}))
                  .Attr("strides", Ints({2, 2})).Attr("pads", Ints({1, 1, 0, 0}))
                  .Attr("ceil_mode", Int(1)).Attr("count_include_pad", Int(1)).In(F, {1, 3, 11, 11}));
  c.push_back(Case("cu_avgpool_same_lower", "", "AveragePool", 11).Attr("kernel_shape", Ints({3, 3}))
                  .Attr("strides", Ints({2, 2})).Attr("auto_pad", Str("SAME_LOWER"))
                  .In(F, {1, 2, 9, 10}));
  c.push_back(Case("cu_gap_resnet", "", "GlobalAveragePool").In(F, {2, 2048, 7, 7}));
  c.push_back(Case("cu_gmp_long", "", "GlobalMaxPool").In(F, {2, 16, 45, 45}));
  return c;
}

std::vector<HarnessCase> AttentionCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("cu_attn_bert_mask", "switchyard", "Attention", 17).Attr("scale", Float(0.125f))
                  .In(F, {8, 12, 128, 64}).In(F, {8, 12, 128, 64}).In(F, {8, 12, 128, 64})
                  .In(F, {8, 1, 1, 128}).Range(-3, 0));
  c.push_back(Case("cu_attn_vit", "switchyard", "Attention", 17)
                  .In(F, {2, 12, 197, 64}).In(F, {2, 12, 197, 64}).In(F, {2, 12, 197, 64}));
  c.push_back(Case("cu_attn_gpt2_causal", "switchyard", "Attention", 17).Attr("scale", Float(0.125f))
                  .Attr("causal", Int(1)).In(F, {2, 12, 128, 64}).In(F, {2, 12, 128, 64})
                  .In(F, {2, 12, 128, 64}));
  c.push_back(Case("cu_attn_causal_long_kv", "switchyard", "Attention", 17).Attr("causal", Int(1))
                  .In(F, {2, 2, 10, 64}).In(F, {2, 2, 70, 64}).In(F, {2, 2, 70, 64}));
  c.push_back(Case("cu_attn_hd128_causal", "switchyard", "Attention", 17).Attr("causal", Int(1))
                  .In(F, {2, 4, 77, 128}).In(F, {2, 4, 77, 128}).In(F, {2, 4, 77, 128}));
  c.push_back(Case("cu_attn_hd32_kv_bcast", "switchyard", "Attention", 17)
                  .In(F, {2, 4, 50, 32}).In(F, {2, 1, 50, 32}).In(F, {2, 1, 50, 32}));
  c.push_back(Case("cu_attn_odd_2dmask", "switchyard", "Attention", 17).Attr("scale", Float(0.2f))
                  .In(F, {3, 37, 40}).In(F, {3, 53, 40}).In(F, {3, 53, 24}).In(F, {37, 53}));
  c.push_back(Case("cu_attn_dv_differs", "switchyard", "Attention", 17)
                  .In(F, {1, 3, 33, 96}).In(F, {1, 3, 45, 96}).In(F, {1, 3, 45, 80})
                  .In(F, {1, 3, 33, 45}).Range(-1, 1));
  // Layout perms (fuse_attention on cuda): BERT's Q, K, V stored [B, S, H, D] and the
  // output written back [B, S, H, Dv]: strided rows and batch dims for every kernel.
  const Attribute bshd = Ints({0, 2, 1, 3});
  c.push_back(Case("cu_attn_bshd_mask", "switchyard", "Attention", 17).Attr("scale", Float(0.125f))
                  .Attr("q_perm", bshd).Attr("k_perm", bshd).Attr("v_perm", bshd).Attr("out_perm", bshd)
                  .In(F, {4, 128, 12, 64}).In(F, {4, 128, 12, 64}).In(F, {4, 128, 12, 64})
                  .In(F, {4, 1, 1, 128}).Range(-3, 0));
  // GPT-2 shape, causal, only Q and the output strided; K broadcast over heads.
  c.push_back(Case("cu_attn_bshd_causal_kv_bcast", "switchyard", "Attention", 17).Attr("causal", Int(1))
                  .Attr("q_perm", bshd).Attr("out_perm", bshd)
                  .In(F, {2, 70, 4, 32}).In(F, {2, 1, 70, 32}).In(F, {2, 4, 70, 48}));
  return c;
}

std::vector<HarnessCase> All() {
  std::vector<HarnessCase> all;
  for (auto f : {SoftmaxCases, NormCases, ReduceCases, PoolCases, AttentionCases}) {
    for (HarnessCase& h : f()) all.push_back(std::move(h));
  }
  return all;
}

const bool kRegistered = (AddHarnessCases(All()), true);

}  // namespace
}  // namespace switchyard::harness
