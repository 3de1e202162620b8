// Harness rows for Resize/Upsample, Pad, DepthToSpace/SpaceToDepth, TopK, ConvTranspose
// and Trilu: every coordinate mode and nearest rounding the kernels claim, scales vs
// sizes (constant and runtime), opset variants, crops, ties, grouped/dilated/strided
// deconvolutions with output_padding, output_shape and auto_pad.
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
Tensor F32s(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromFloat(v, {n});
}

std::vector<HarnessCase> ResizeCases() {
  std::vector<HarnessCase> c;
  auto scaled = [](std::string name, std::string mode, std::string ctm, std::vector<float> s,
                   std::vector<int64_t> shape) {
    return Case(std::move(name), "", "Resize", 13).Attr("mode", Str(mode))
        .Attr("coordinate_transformation_mode", Str(ctm)).In(F, shape).Omitted().InValue(F32s(s));
  };
  for (const char* ctm : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    const std::string s(ctm);
    c.push_back(scaled("rs_lin_up_" + s, "linear", s, {1, 1, 2, 2}, {1, 3, 5, 7}));
    c.push_back(scaled("rs_lin_down_" + s, "linear", s, {1, 1, 0.6f, 0.5f}, {2, 2, 9, 8}));
    c.push_back(scaled("rs_near_up_" + s, "nearest", s, {1, 1, 2, 3}, {1, 2, 4, 5}));
  }
  for (const char* nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    c.push_back(scaled(std::string("rs_near_") + nm, "nearest", "half_pixel", {1, 1, 1.7f, 0.6f}, {1, 2, 6, 10})
                    .Attr("nearest_mode", Str(nm)));
  }
  c.push_back(scaled("rs_near_tfnn", "nearest", "tf_half_pixel_for_nn", {1, 1, 2, 2}, {1, 2, 3, 4}));
  c.push_back(scaled("rs_near_asym_floor", "nearest", "asymmetric", {1, 1, 2, 2}, {1, 4, 6, 6})
                  .Attr("nearest_mode", Str("floor")));
  c.push_back(scaled("rs_cubic", "cubic", "half_pixel", {1, 1, 2, 1.5f}, {1, 2, 5, 6}));
  c.push_back(scaled("rs_cubic_excl", "cubic", "half_pixel", {1, 1, 0.8f, 2}, {1, 1, 6, 5})
                  .Attr("exclude_outside", Int(1)).Attr("cubic_coeff_a", Float(-0.5f)));
  c.push_back(scaled("rs_lin_3d", "linear", "half_pixel", {1, 2, 1.5f}, {3, 4, 6}));
  c.push_back(scaled("rs_near_i64", "nearest", "asymmetric", {1, 1, 2, 2}, {1, 2, 3, 3}));
  c.back().inputs[0].first = I64;
  // sizes, constant and runtime; Resize-18 with axes and an aspect policy.
  c.push_back(Case("rs_lin_sizes", "", "Resize", 13).Attr("mode", Str("linear"))
                  .Attr("coordinate_transformation_mode", Str("align_corners"))
                  .In(F, {1, 3, 5, 6}).Omitted().Omitted().InValue(I64s({1, 3, 9, 13})));
  c.push_back(Case("rs_near_sizes_rt", "", "Resize", 13).In(F, {1, 3, 5, 6}).Omitted().Omitted()
                  .InValue(I64s({1, 3, 8, 4}), false));
  c.push_back(Case("rs_lin_scales_rt", "", "Resize", 13).Attr("mode", Str("linear"))
                  .In(F, {2, 3, 4, 4}).Omitted().InValue(F32s({1, 1, 2, 2}), false));
  c.push_back(Case("rs18_axes_notlarger", "", "Resize", 18).Attr("mode", Str("linear"))
                  .Attr("axes", Ints({2, 3})).Attr("keep_aspect_ratio_policy", Str("not_larger"))
                  .In(F, {1, 2, 6, 8}).Omitted().Omitted().InValue(I64s({9, 9})));
  c.push_back(Case("rs19_half_sym", "", "Resize", 19).Attr("mode", Str("linear"))
                  .Attr("coordinate_transformation_mode", Str("half_pixel_symmetric"))
                  .In(F, {1, 1, 5, 7}).Omitted().InValue(F32s({1, 1, 1.5f, 0.7f})));
  c.push_back(Case("rs10_nearest", "", "Resize", 10).In(F, {1, 2, 4, 4}).InValue(F32s({1, 1, 2, 2})));
  c.push_back(Case("rs10_linear_down", "", "Resize", 10).Attr("mode", Str("linear"))
                  .In(F, {1, 2, 8, 6}).InValue(F32s({1, 1, 0.5f, 0.5f})));
  c.push_back(Case("up9_nearest", "", "Upsample", 9).In(F, {1, 2, 3, 3}).InValue(F32s({1, 1, 2, 2})));
  c.push_back(Case("up7_bilinear", "", "Upsample", 7).Attr("mode", Str("bilinear"))
                  .Attr("scales", Floats({1, 1, 2, 2})).In(F, {1, 2, 3, 4}));
  return c;
}

std::vector<HarnessCase> PadCases() {
  std::vector<HarnessCase> c;
  for (const char* mode : {"constant", "reflect", "edge"}) {
    c.push_back(Case(std::string("pad_") + mode, "", "Pad", 13).Attr("mode", Str(mode))
                    .In(F, {2, 3, 5, 6}).InValue(I64s({0, 0, 1, 2, 0, 1, 3, 2})));
  }
  c.push_back(Case("pad_const_value", "", "Pad", 13).In(F, {2, 7}).InValue(I64s({1, 2, 0, 3}))
                  .InValue(Tensor::Scalar(F, 0.75)));
  c.push_back(Case("pad_crop", "", "Pad", 13).In(F, {3, 8}).InValue(I64s({-1, 2, 1, -3})));
  c.push_back(Case("pad_reflect_crop", "", "Pad", 13).Attr("mode", Str("reflect"))
                  .In(F, {1, 4, 6}).InValue(I64s({0, -1, 3, 0, 2, -2})));
  c.push_back(Case("pad_runtime_pads", "", "Pad", 13).Attr("mode", Str("edge"))
                  .In(F, {2, 4, 4}).InValue(I64s({0, 1, 1, 0, 2, 1}), false));
  c.push_back(Case("pad2_attr", "", "Pad", 2).Attr("pads", Ints({0, 1, 2, 0, 1, 0}))
                  .Attr("value", Float(-1.5f)).In(F, {2, 3, 4}));
  c.push_back(Case("pad18_axes", "", "Pad", 18).Attr("mode", Str("reflect")).In(F, {2, 3, 5, 5})
                  .InValue(I64s({2, 1, 1, 2})).Omitted().InValue(I64s({-1, 2})));
  c.push_back(Case("pad19_wrap", "", "Pad", 19).Attr("mode", Str("wrap")).In(F, {2, 3, 4})
                  .InValue(I64s({0, 2, 3, 0, 1, 2})));
  c.push_back(Case("pad_i64_edge", "", "Pad", 13).Attr("mode", Str("edge")).In(I64, {3, 4})
                  .InValue(I64s({1, 2, 2, 1})));
  return c;
}

std::vector<HarnessCase> DepthSpaceCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("d2s_dcr", "", "DepthToSpace", 13).Attr("blocksize", Int(2)).In(F, {2, 12, 3, 4}));
  c.push_back(Case("d2s_crd", "", "DepthToSpace", 13).Attr("blocksize", Int(2)).Attr("mode", Str("CRD"))
                  .In(F, {1, 8, 3, 5}));
  c.push_back(Case("d2s_crd_b3", "", "DepthToSpace", 13).Attr("blocksize", Int(3)).Attr("mode", Str("CRD"))
                  .In(I64, {1, 18, 2, 2}));
  c.push_back(Case("s2d", "", "SpaceToDepth", 13).Attr("blocksize", Int(2)).In(F, {2, 3, 6, 4}));
  c.push_back(Case("s2d_b3", "", "SpaceToDepth", 13).Attr("blocksize", Int(3)).In(I64, {1, 2, 6, 9}));
  return c;
}

std::vector<HarnessCase> TopKCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("topk_last", "", "TopK", 11).In(F, {3, 17}).InValue(I64s({5})).Outputs(2));
  c.push_back(Case("topk_axis0_small", "", "TopK", 11).Attr("axis", Int(0)).Attr("largest", Int(0))
                  .In(F, {9, 4, 3}).InValue(I64s({4})).Outputs(2));
  c.push_back(Case("topk_mid_ties", "", "TopK", 11).Attr("axis", Int(1)).In(I64, {2, 12, 3})
                  .InValue(I64s({7})).Outputs(2));
  c.push_back(Case("topk_ties_small", "", "TopK", 11).Attr("largest", Int(0)).In(DT::kInt32, {4, 20})
                  .InValue(I64s({20})).Outputs(2));
  c.push_back(Case("topk_float_ties", "", "TopK", 11).In(F, {2, 30}).Range(-2, 2).InValue(I64s({10})).Outputs(2));
  c.back().values[0] = [] {
    Tensor t(F, {2, 30});
    for (int64_t i = 0; i < 60; ++i) t.data<float>()[i] = static_cast<float>((i * 7) % 5);
    return t;
  }();
  c.push_back(Case("topk_runtime_k", "", "TopK", 11).In(F, {4, 8}).InValue(I64s({3}), false).Outputs(2));
  c.push_back(Case("topk1_attr", "", "TopK", 1).Attr("k", Int(3)).In(F, {5, 6}).Outputs(2));
  c.push_back(Case("topk10", "", "TopK", 10).Attr("axis", Int(0)).In(F, {6, 5}).InValue(I64s({2})).Outputs(2));
  return c;
}

std::vector<HarnessCase> ConvTransposeCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("ct_k2s2_bias", "", "ConvTranspose", 11).Attr("strides", Ints({2, 2}))
                  .In(F, {1, 8, 6, 6}).In(F, {8, 4, 2, 2}, true).In(F, {4}, true));
  c.push_back(Case("ct_k3s2_outpad", "", "ConvTranspose", 11).Attr("strides", Ints({2, 2}))
                  .Attr("pads", Ints({1, 1, 1, 1})).Attr("output_padding", Ints({1, 1}))
                  .In(F, {2, 6, 5, 5}).In(F, {6, 5, 3, 3}, true).In(F, {5}, true));
  c.push_back(Case("ct_k4s2p1", "", "ConvTranspose", 11).Attr("strides", Ints({2, 2}))
                  .Attr("pads", Ints({1, 1, 1, 1})).In(F, {1, 16, 7, 7}).In(F, {16, 16, 4, 4}, true));
  c.push_back(Case("ct_group_dil", "", "ConvTranspose", 11).Attr("group", Int(2)).Attr("dilations", Ints({2, 2}))
                  .Attr("pads", Ints({1, 0, 2, 1})).In(F, {2, 4, 5, 4}).In(F, {4, 3, 3, 3}, true).In(F, {6}, true));
  c.push_back(Case("ct_depthwise", "", "ConvTranspose", 11).Attr("group", Int(6)).Attr("strides", Ints({2, 2}))
                  .In(F, {1, 6, 4, 4}).In(F, {6, 1, 3, 3}, true));
  c.push_back(Case("ct_1d", "", "ConvTranspose", 11).Attr("strides", Ints({2})).Attr("pads", Ints({1, 0}))
                  .In(F, {2, 4, 9}).In(F, {4, 3, 3}, true).In(F, {3}, true));
  c.push_back(Case("ct_output_shape", "", "ConvTranspose", 11).Attr("strides", Ints({2, 2}))
                  .Attr("output_shape", Ints({10, 9})).In(F, {1, 3, 4, 4}).In(F, {3, 2, 3, 3}, true));
  c.push_back(Case("ct_same_upper", "", "ConvTranspose", 11).Attr("strides", Ints({2, 2}))
                  .Attr("auto_pad", Str("SAME_UPPER")).In(F, {1, 3, 5, 5}).In(F, {3, 4, 3, 3}, true));
  c.push_back(Case("ct_stride3_asym", "", "ConvTranspose", 11).Attr("strides", Ints({3, 1}))
                  .Attr("pads", Ints({0, 2, 1, 0})).In(F, {1, 5, 4, 6}).In(F, {5, 7, 2, 5}, true));
  c.push_back(Case("ct_runtime_w", "", "ConvTranspose", 11).Attr("strides", Ints({2, 2}))
                  .In(F, {1, 4, 3, 3}).In(F, {4, 2, 3, 3}).In(F, {2}));
  c.push_back(Case("ct_3d", "", "ConvTranspose", 11).Attr("strides", Ints({2, 1, 2}))
                  .In(F, {1, 3, 3, 4, 3}).In(F, {3, 2, 2, 3, 2}, true));
  c.push_back(Case("ct_big", "", "ConvTranspose", 11).Attr("strides", Ints({2, 2}))
                  .In(F, {1, 64, 16, 16}).In(F, {64, 32, 2, 2}, true).In(F, {32}, true));
  // Non-overlapping (kernel == stride) as DBNet's head: the nhwc row-GEMM path, its
  // narrow-output path (M = 1: 2 columns per row) and a 3x2 kernel, batch 2.
  c.push_back(Case("ct_k2s2_to1_bias", "", "ConvTranspose", 11).Attr("strides", Ints({2, 2}))
                  .In(F, {1, 24, 9, 7}).In(F, {24, 1, 2, 2}, true).In(F, {1}, true));
  c.push_back(Case("ct_k3x2s3x2_b2", "", "ConvTranspose", 11).Attr("strides", Ints({3, 2}))
                  .In(F, {2, 5, 4, 6}).In(F, {5, 24, 3, 2}, true));
  return c;
}

// 4-D Concat along channels and width: with the nhwc mode, the native kernel's nhwc path.
std::vector<HarnessCase> ConcatCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("concat4d_chan", "", "Concat").Attr("axis", Int(1)).In(F, {2, 24, 5, 7}).In(F, {2, 8, 5, 7})
                  .In(F, {2, 1, 5, 7}));
  c.push_back(Case("concat4d_w", "", "Concat").Attr("axis", Int(-1)).In(F, {1, 6, 3, 4}).In(F, {1, 6, 3, 9}));
  return c;
}

std::vector<HarnessCase> TriluCases() {
  std::vector<HarnessCase> c;
  c.push_back(Case("trilu_upper", "", "Trilu", 14).In(F, {2, 5, 6}));
  c.push_back(Case("trilu_lower_k", "", "Trilu", 14).Attr("upper", Int(0)).In(F, {4, 7})
                  .InValue(Tensor::FromInt64({-1}, {})));
  c.push_back(Case("trilu_upper_k2_bool", "", "Trilu", 14).In(DT::kBool, {6, 6})
                  .InValue(Tensor::FromInt64({2}, {})));
  c.push_back(Case("trilu_lower_i64_bigk", "", "Trilu", 14).Attr("upper", Int(0)).In(I64, {3, 5})
                  .InValue(Tensor::FromInt64({9}, {}), false));
  return c;
}

const bool kRegistered = [] {
  AddHarnessCases(ResizeCases());
  AddHarnessCases(PadCases());
  AddHarnessCases(DepthSpaceCases());
  AddHarnessCases(TopKCases());
  AddHarnessCases(ConvTransposeCases());
  AddHarnessCases(ConcatCases());
  AddHarnessCases(TriluCases());
  return true;
}();

}  // namespace
}  // namespace switchyard::harness
