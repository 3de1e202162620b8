// Random small nets shaped like text detectors and recognisers (DBNet, PP-OCR's MobileNetV3
// backbones, CRNN, SVTR) for the route differential test: DrawOcr mixes Materializer's layer
// kinds (random_convnet.h) with these, which OcrMaterializer builds:
//  - Resize x2 (on both axes or one) or x1/2: nearest (asymmetric + floor as PyTorch
//    exports it, or the default attributes) or linear (half_pixel, align_corners,
//    pytorch_half_pixel, asymmetric); by scales or by sizes (sometimes an odd size); roi
//    and the unused one of scales/sizes absent or empty constants;
//  - ConvTranspose 2x2 stride 2 (DBNet's head) or 3x3 stride 2 pads 1 output_padding 1,
//    group 1, 1 to 16 outputs, or a depthwise 4x4 stride 2 pads 1; with or without bias;
//    then nothing, BatchNorm + Relu, or Sigmoid;
//  - depthwise 3x3 / 5x5 conv (stride 1 or 2, optional BatchNorm) then HardSwish as the
//    op, as x * HardSigmoid(x) (alpha 1/6, beta 1/2) or as Keras' x * Clip(x + 3, 0, 6) / 6,
//    optionally a 1x1 projection after;
//  - squeeze-excite gated by HardSigmoid (alpha 0.2 or 1/6);
//  - an FPN: 2 or 3 levels of stride-2 convs, top-down Resize nearest + Add (by sizes where
//    a level's size is odd, sometimes computed from Shape), optionally all levels resized
//    to the finest and concatenated on channels (DBNet's neck);
//  - recognition backbones' height-only downsampling: a 3x3 conv or depthwise conv with
//    strides [2,1] (then BatchNorm + HardSwish or Relu), CRNN's 2x2 MaxPool with strides
//    [2,1] and pads [0,1,0,1], a 2x1 pool with strides [2,1];
//  - a sequence tail (the last layer): H pooled to 1 (AveragePool, a [H,1] conv or
//    ReduceMean), Reshape/Transpose to [N,W,C], an SVTR-like attention block and/or MLP
//    block (erf GELU), LayerNormalization and/or MatMul + bias, Softmax on the last axis.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "random_convnet.h"

namespace switchyard::testing {

// The up-sampling layers (Resize, ConvTranspose) run on maps of at most this many pixels,
// so that the reference executor's work stays small; elsewhere they are left out.
inline constexpr int64_t kOcrMaxUpsamplePixels = 400;

inline GraphSpec DrawOcr(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  GraphSpec s;
  s.seed = seed;
  const bool tail = pick(3) == 0;
  const int64_t n[] = {1, 2}, c[] = {3, 3, 8, 16};
  // Detection-like: 6..18 a side; recognition-like (with the sequence tail): 4..12 high,
  // 16..48 wide.
  const int64_t h = tail ? 4 + pick(9) : 6 + pick(13);
  const int64_t w = tail ? 16 + pick(33) : (pick(3) == 0 ? h : 6 + pick(27));
  s.input = {n[pick(2)], c[pick(4)], h, w};
  const int count = 3 + static_cast<int>(pick(5));  // and the sequence tail
  using K = LayerKind;
  // Materializer's kinds but the global pool and the Sigmoid squeeze-excite, and these.
  static const K kTable[] = {K::kConv,          K::kConv,           K::kAct,
                             K::kBatchNorm,     K::kBinary,         K::kPool,
                             K::kConcat,        K::kResize,         K::kResize,
                             K::kConvTranspose, K::kConvTranspose,  K::kDepthwiseHardSwish,
                             K::kDepthwiseHardSwish, K::kHardSqueezeExcite, K::kFpn,
                             K::kFpn,           K::kRecDownsample,  K::kRecDownsample};
  for (int i = 0; i < count + (tail ? 1 : 0); ++i) {
    LayerSpec l{};
    l.kind = kTable[pick(sizeof(kTable) / sizeof(kTable[0]))];
    if (i == 0 && pick(4) != 0) l.kind = K::kConv;
    if (i == count) l.kind = K::kSequenceTail;
    for (uint32_t& v : l.r) v = static_cast<uint32_t>(rng());
    s.layers.push_back(l);
  }
  s.side = static_cast<uint32_t>(rng());
  return s;
}

class OcrMaterializer : public Materializer {
 public:
  using Materializer::Materializer;

 protected:
  void Layer(size_t index, const LayerSpec& l) override {
    switch (l.kind) {
      case LayerKind::kResize: return ResizeLayer(l.r);
      case LayerKind::kConvTranspose: return ConvTransposeLayer(l.r);
      case LayerKind::kDepthwiseHardSwish: return DepthwiseLayer(l.r);
      case LayerKind::kHardSqueezeExcite: return HardSqueezeExcite(l.r);
      case LayerKind::kFpn: return Fpn(l.r);
      case LayerKind::kRecDownsample: return RecDownsample(l.r);
      case LayerKind::kSequenceTail: return SequenceTail(l.r);
      default: Materializer::Layer(index, l);
    }
  }

 private:
  using R = std::array<uint32_t, 6>;

  ValueId Fixed(Tensor t) { return b_.Const("f" + std::to_string(++consts_), std::move(t)); }
  ValueId Ints(const std::vector<int64_t>& v) { return Fixed(Tensor::FromInt64(v, {static_cast<int64_t>(v.size())})); }
  // Uniform weights of variance 1 / fan_in.
  ValueId Weights(const Shape& shape, int64_t fan_in) {
    const double a = std::sqrt(3.0 / static_cast<double>(std::max<int64_t>(1, fan_in)));
    return Const(shape, -a, a);
  }
  // k x k conv, pads k / 2, of `x` with `cin` channels.
  ValueId Conv(ValueId x, int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t group, bool bias) {
    std::vector<ValueId> ins = {x, Weights({cout, cin / group, k, k}, cin / group * k * k)};
    if (bias) ins.push_back(Const({cout}, -0.5, 0.5));
    return b_.Op("Conv", ins, [&](Node& node) {
      node.attrs["kernel_shape"] = IntsAttr({k, k});
      node.attrs["strides"] = IntsAttr({stride, stride});
      node.attrs["pads"] = IntsAttr({k / 2, k / 2, k / 2, k / 2});
      if (group > 1) node.attrs["group"] = IntAttr(group);
    });
  }
  ValueId BatchNorm(ValueId x, int64_t c) {
    return b_.Op("BatchNormalization",
                 {x, Const({c}, 0.5, 1.5), Const({c}, -0.5, 0.5), Const({c}, -0.5, 0.5), Const({c}, 0.5, 1.5)});
  }
  ValueId HardSigmoid(ValueId x, float alpha) {
    return b_.Op("HardSigmoid", {x}, [&](Node& node) {
      node.attrs["alpha"] = FloatAttr(alpha);
      node.attrs["beta"] = FloatAttr(0.5f);
    });
  }

  // How a Resize is given its output size.
  enum class By { kScales, kSizes, kShapeOf };
  // Resize of `x` ([n,c,h,w] in `s`) to oh x ow (by scales only where those are whole
  // multiples or 1/2, else by sizes). `ctm` empty: no attributes but the mode (half_pixel,
  // round_prefer_floor); nearest otherwise rounds down. kShapeOf: sizes computed as
  // Concat([n, c], Slice(Shape(like), 2..4)), as exporters write interpolate(size=...).
  // `empty`: roi (and scales, with sizes) empty constants as PyTorch writes them, else
  // absent inputs.
  ValueId Resize(ValueId x, const Shape& s, int64_t oh, int64_t ow, const std::string& mode, const std::string& ctm,
                 By by, bool empty, std::string* what, ValueId like = kNoValue) {
    const auto whole = [](int64_t o, int64_t i) { return o % i == 0 || 2 * o == i; };
    if (by == By::kScales && !(whole(oh, s[2]) && whole(ow, s[3]))) by = By::kSizes;
    if (by == By::kShapeOf && like == kNoValue) by = By::kSizes;
    std::vector<ValueId> ins = {x, empty ? Fixed(Tensor(DataType::kFloat, {0})) : kNoValue};
    std::ostringstream d;
    d << "Resize " << mode << " " << (ctm.empty() ? "(default attributes)" : ctm)
      << (mode == "nearest" && !ctm.empty() ? " floor" : "");
    if (by == By::kScales) {
      const auto f = [](int64_t o, int64_t i) { return static_cast<float>(o) / static_cast<float>(i); };
      ins.push_back(Fixed(Tensor::FromFloat({1.f, 1.f, f(oh, s[2]), f(ow, s[3])}, {4})));
      d << " scales [1,1," << f(oh, s[2]) << "," << f(ow, s[3]) << "]" << (empty ? " (empty roi)" : "");
    } else {
      ins.push_back(empty ? Fixed(Tensor(DataType::kFloat, {0})) : kNoValue);
      if (by == By::kSizes) {
        ins.push_back(Ints({s[0], s[1], oh, ow}));
      } else {
        const ValueId hw = b_.Op("Slice", {b_.Op("Shape", {like}), Ints({2}), Ints({4}), Ints({0})});
        ins.push_back(b_.Op("Concat", {Ints({s[0], s[1]}), hw}, [](Node& node) { node.attrs["axis"] = IntAttr(0); }));
      }
      d << " sizes " << ShapeStr({s[0], s[1], oh, ow}) << (by == By::kShapeOf ? " (from Shape)" : "")
        << (empty ? " (empty roi, scales)" : "");
    }
    *what = d.str();
    return b_.Op("Resize", ins, [&](Node& node) {
      node.attrs["mode"] = StringAttr(mode);
      if (ctm.empty()) return;
      node.attrs["coordinate_transformation_mode"] = StringAttr(ctm);
      if (mode == "nearest") node.attrs["nearest_mode"] = StringAttr("floor");
    });
  }
  ValueId Nearest(ValueId x, const Shape& s, int64_t oh, int64_t ow, By by, bool empty, std::string* what,
                  ValueId like = kNoValue) {
    return Resize(x, s, oh, ow, "nearest", "asymmetric", by, empty, what, like);
  }

  void ResizeLayer(const R& r) {
    const Shape s = cur_.shape;
    if (s[2] * s[3] > kOcrMaxUpsamplePixels) {
      Note("(Resize left out at " + ShapeStr(s) + ")");
      return;
    }
    // Nearest as PyTorch exports it (twice the weight), nearest with the default
    // attributes, linear with four coordinate transformations.
    static const char* kCtms[] = {"asymmetric", "asymmetric", "",          "half_pixel",
                                  "half_pixel", "align_corners", "pytorch_half_pixel", "asymmetric"};
    const std::string ctm = kCtms[r[0] % 8];
    const std::string mode = r[0] % 8 < 3 ? "nearest" : "linear";
    // x2 on both axes, on one, or (1 in 8) x1/2 on both.
    const uint32_t f = r[1] % 8;
    const bool down = f == 7 && s[2] >= 2 && s[3] >= 2;
    int64_t oh = down ? s[2] / 2 : f == 6 ? s[2] : 2 * s[2], ow = down ? s[3] / 2 : f == 5 ? s[3] : 2 * s[3];
    const By by = r[2] % 3 == 0 ? By::kSizes : By::kScales;
    if (by == By::kSizes && !down && r[3] % 3 == 0) {  // an odd size: 2h - 1, 2w + 1
      if (oh != s[2] && oh > 2) --oh;
      if (ow != s[3]) ++ow;
    }
    std::string what;
    const ValueId y = Resize(cur_.id, s, oh, ow, mode, ctm, by, r[4] % 2 == 0, &what);
    Push(y, {s[0], s[1], oh, ow}, what);
  }

  void ConvTransposeLayer(const R& r) {
    const Shape s = cur_.shape;
    const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
    if (h * w > kOcrMaxUpsamplePixels) {
      Note("(ConvTranspose left out at " + ShapeStr(s) + ")");
      return;
    }
    // 2x2 stride 2; 3x3 stride 2 pads 1 output_padding 1; (1 in 5) depthwise 4x4 stride 2
    // pads 1 (a learned bilinear upsampling). Each doubles H and W.
    const uint32_t form = r[0] % 5;
    const int64_t k = form < 2 ? 2 : form < 4 ? 3 : 4;
    const int64_t group = k == 4 ? c : 1, m = k == 4 ? c : std::array<int64_t, 4>{1, 4, 8, 16}[r[1] % 4];
    const bool bias = r[2] % 3 != 0;
    std::vector<ValueId> ins = {cur_.id, Weights({c, m / group, k, k}, c / group * (k == 2 ? 1 : k == 3 ? 2 : 4))};
    if (bias) ins.push_back(Const({m}, -0.5, 0.5));
    ValueId y = b_.Op("ConvTranspose", ins, [&](Node& node) {
      node.attrs["kernel_shape"] = IntsAttr({k, k});
      node.attrs["strides"] = IntsAttr({2, 2});
      if (k > 2) node.attrs["pads"] = IntsAttr({1, 1, 1, 1});
      if (k == 3) node.attrs["output_padding"] = IntsAttr({1, 1});
      if (group > 1) node.attrs["group"] = IntAttr(group);
    });
    std::string what = std::string("ConvTranspose ") +
                       (k == 2 ? "k2 s2" : k == 3 ? "k3 s2 pads 1 output_padding 1" : "k4 s2 pads 1") + " group " +
                       std::to_string(group) + " M " + std::to_string(m) + (bias ? " bias" : " no-bias");
    const uint32_t after = r[3] % 4;  // 0 nothing, 1-2 BatchNorm + Relu, 3 Sigmoid
    if (after == 1 || after == 2) {
      y = b_.Op("Relu", {BatchNorm(y, m)});
      what += ", BatchNormalization, Relu";
    } else if (after == 3) {
      y = b_.Op("Sigmoid", {y});
      what += ", Sigmoid";
    }
    Push(y, {n, m, 2 * h, 2 * w}, what);
  }

  void DepthwiseLayer(const R& r) {
    const Shape s = cur_.shape;
    const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
    const int64_t k = r[0] % 2 ? 5 : 3, stride = r[1] % 3 == 0 ? 2 : 1;
    const bool bias = r[2] % 2 == 0, bn = r[3] % 2 == 0;
    ValueId x = Conv(cur_.id, c, c, k, stride, c, bias);
    std::ostringstream d;
    d << "depthwise Conv k" << k << " s" << stride << " pads " << k / 2 << " group " << c << (bias ? " bias" : "");
    if (bn) {
      x = BatchNorm(x, c);
      d << ", BatchNormalization";
    }
    ValueId y;
    switch (r[4] % 4) {
      case 0:
        y = b_.Op("HardSwish", {x});
        d << ", HardSwish";
        break;
      case 1:
        y = b_.Op("Mul", {x, HardSigmoid(x, 1.f / 6)});
        d << ", x * HardSigmoid(x)";
        break;
      case 2:
        y = b_.Op("Mul", {HardSigmoid(x, 1.f / 6), x});
        d << ", HardSigmoid(x) * x";
        break;
      default: {
        const ValueId relu6 = b_.Op("Clip", {b_.Op("Add", {x, b_.Scalar(3.0)}), b_.Scalar(0.0), b_.Scalar(6.0)});
        y = b_.Op("Mul", {x, b_.Op("Div", {relu6, b_.Scalar(6.0)})});
        d << ", x * Clip(x + 3, 0, 6) / 6";
      }
    }
    const int64_t oh = (h + 2 * (k / 2) - k) / stride + 1, ow = (w + 2 * (k / 2) - k) / stride + 1;
    int64_t m = c;
    if (r[5] % 3 == 0) {
      m = r[5] % 2 ? 8 : 16;
      y = Conv(y, c, m, 1, 1, 1, true);
      d << ", 1x1 Conv to " << m;
    }
    Push(y, {n, m, oh, ow}, d.str());
  }

  void HardSqueezeExcite(const R& r) {
    const int64_t c = cur_.shape[1], mid = std::max<int64_t>(2, c / 4);
    const float alpha = r[0] % 2 ? 0.2f : 1.f / 6;
    const ValueId pooled = b_.Op("GlobalAveragePool", {cur_.id});
    const ValueId hidden = b_.Op("Relu", {Conv(pooled, c, mid, 1, 1, 1, true)});
    const ValueId scale = HardSigmoid(Conv(hidden, mid, c, 1, 1, 1, true), alpha);
    const bool first = r[1] % 2 == 0;
    const ValueId y = first ? b_.Op("Mul", {scale, cur_.id}) : b_.Op("Mul", {cur_.id, scale});
    Push(y, cur_.shape,
         "squeeze-excite (GAP, 1x1 conv to " + std::to_string(mid) + ", Relu, 1x1 conv, HardSigmoid alpha " +
             (r[0] % 2 ? "0.2" : "1/6") + ", Mul" + (first ? " scale first)" : ")"));
  }

  void RecDownsample(const R& r) {
    const int64_t n = cur_.shape[0], c = cur_.shape[1], h = cur_.shape[2], w = cur_.shape[3];
    if (h < 2) {
      Note("(height-only downsampling left out at " + ShapeStr(cur_.shape) + ")");
      return;
    }
    const uint32_t form = r[0] % 4;
    if (form >= 2) {  // CRNN's MaxPool 2x2 strides [2,1] pads [0,1,0,1], or AveragePool 2x1 strides [2,1]
      const bool crnn = form == 2;
      const std::string op = crnn || r[1] % 2 ? "MaxPool" : "AveragePool";
      const ValueId y = b_.Op(op, {cur_.id}, [&](Node& node) {
        node.attrs["kernel_shape"] = IntsAttr({2, crnn ? 2 : 1});
        node.attrs["strides"] = IntsAttr({2, 1});
        if (crnn) node.attrs["pads"] = IntsAttr({0, 1, 0, 1});
      });
      Push(y, {n, c, (h - 2) / 2 + 1, crnn ? w + 1 : w},
           op + (crnn ? " kernel [2,2] strides [2,1] pads [0,1,0,1]" : " kernel [2,1] strides [2,1]"));
      return;
    }
    const bool depthwise = form == 1;
    const int64_t m = depthwise ? c : std::array<int64_t, 3>{8, 16, 24}[r[1] % 3];
    const int64_t group = depthwise ? c : 1;
    const ValueId x = b_.Op("Conv", {cur_.id, Weights({m, c / group, 3, 3}, c / group * 9)}, [&](Node& node) {
      node.attrs["kernel_shape"] = IntsAttr({3, 3});
      node.attrs["strides"] = IntsAttr({2, 1});
      node.attrs["pads"] = IntsAttr({1, 1, 1, 1});
      if (group > 1) node.attrs["group"] = IntAttr(group);
    });
    const ValueId bn = BatchNorm(x, m);
    const bool hswish = r[2] % 2 == 0;
    Push(b_.Op(hswish ? "HardSwish" : "Relu", {bn}), {n, m, (h - 1) / 2 + 1, w},
         std::string(depthwise ? "depthwise " : "") + "Conv k3 strides [2,1] pads 1 group " + std::to_string(group) +
             " M " + std::to_string(m) + ", BatchNormalization, " + (hswish ? "HardSwish" : "Relu"));
  }

  // Levels f0 = x (or a 1x1 lateral conv of it), f_i = Conv 3x3 s2 (+ Relu) of f_(i-1);
  // top-down p_last = f_last, p_i = f_i + Resize(p_(i+1)); then p_0, or the levels
  // resized to p_0's size and concatenated, deepest first (DBNet's neck).
  void Fpn(const R& r) {
    const Shape s = cur_.shape;
    const int64_t n = s[0], c = s[1];
    std::ostringstream d;
    d << "FPN";
    ValueId x = cur_.id;
    int64_t m = c;
    if (r[0] % 3 == 0 || c > 16) {
      m = (r[0] / 3) % 2 ? 4 : 8;
      x = Conv(x, c, m, 1, 1, 1, false);
      d << ", lateral 1x1 Conv to " << m;
    }
    const int levels = 2 + static_cast<int>(r[1] % 2);
    const bool relu = r[2] % 2 == 0;
    std::vector<ValueId> f = {x};
    std::vector<Shape> fs = {{n, m, s[2], s[3]}};
    for (int i = 1; i < levels; ++i) {
      ValueId y = Conv(f.back(), m, m, 3, 2, 1, true);
      if (relu) y = b_.Op("Relu", {y});
      const Shape& p = fs.back();
      fs.push_back({n, m, (p[2] - 1) / 2 + 1, (p[3] - 1) / 2 + 1});
      f.push_back(y);
      d << ", Conv k3 s2" << (relu ? " + Relu" : "") << " -> " << ShapeStr(fs.back());
    }
    std::vector<ValueId> p(f.size());
    p.back() = f.back();
    for (int i = levels - 2; i >= 0; --i) {
      std::string what;
      const uint32_t how = (r[3] >> (3 * i)) % 8;  // 0, 1: sizes, 2: sizes from Shape(f_i), else scales
      const By by = how < 2 ? By::kSizes : how == 2 ? By::kShapeOf : By::kScales;
      const ValueId up = Nearest(p[i + 1], fs[i + 1], fs[i][2], fs[i][3], by, (r[3] >> (i + 8)) % 2, &what, f[i]);
      const bool up_first = (r[4] >> i) % 2 == 0;
      p[i] = up_first ? b_.Op("Add", {up, f[i]}) : b_.Op("Add", {f[i], up});
      d << ", " << what << " + level " << i;
    }
    Shape out = fs[0];
    if (r[5] % 2 == 0 && s[2] * s[3] <= kOcrMaxUpsamplePixels) {
      std::vector<ValueId> parts;
      for (int i = levels - 1; i >= 0; --i) {
        if (i == 0) {
          parts.push_back(p[0]);
          continue;
        }
        std::string what;
        const By by = (r[5] >> (i + 1)) % 3 == 0 ? By::kSizes : By::kScales;
        parts.push_back(Nearest(p[i], fs[i], fs[0][2], fs[0][3], by, false, &what));
        d << ", level " << i << " " << what;
      }
      out[1] = m * levels;
      Push(b_.Op("Concat", parts, [](Node& node) { node.attrs["axis"] = IntAttr(1); }), out,
           d.str() + ", Concat axis 1 (deepest first)");
      return;
    }
    Push(p[0], out, d.str());
  }

  // [N,C,H,W] -> [N,W,K]: H pooled to 1, to a sequence, SVTR-like mixing blocks,
  // LayerNormalization and/or MatMul + bias, Softmax. The last layer (cur_ becomes 3-D).
  ValueId Linear(ValueId x, int64_t cin, int64_t cout) {
    return b_.Op("Add", {b_.Op("MatMul", {x, Weights({cin, cout}, cin)}), Const({cout}, -0.5, 0.5)});
  }
  ValueId LayerNorm(ValueId x, int64_t c, int64_t axis, float eps) {
    return b_.Op("LayerNormalization", {x, Const({c}, 0.5, 1.5), Const({c}, -0.5, 0.5)}, [&](Node& node) {
      node.attrs["axis"] = IntAttr(axis);
      node.attrs["epsilon"] = FloatAttr(eps);
    });
  }
  ValueId Transpose(ValueId x, std::vector<int64_t> perm) {
    return b_.Op("Transpose", {x}, [&](Node& node) { node.attrs["perm"] = IntsAttr(perm); });
  }

  // x + Linear(Attention(LayerNorm(x))) on cur_ ([N,S,C]), 1 or 2 heads: q, k, v from one
  // [C,3C] projection (Reshape [N,S,3,H,D], Transpose [2,0,3,1,4], Gather 0/1/2) or from
  // three; Softmax(q k^T / sqrt(D)) v (the scale on q or on the scores), heads merged back.
  void AttentionBlock(uint32_t bits) {
    const int64_t n = cur_.shape[0], s = cur_.shape[1], c = cur_.shape[2];
    const int64_t heads = c % 2 == 0 && c >= 4 ? 2 : 1, d = c / heads;
    const ValueId x = cur_.id, ln = LayerNorm(x, c, -1, 1e-6f);
    const bool packed = bits % 2, scale_q = (bits / 2) % 2;
    ValueId q, k, v;
    if (packed) {
      const ValueId qkv =
          Transpose(b_.Op("Reshape", {Linear(ln, c, 3 * c), Ints({n, s, 3, heads, d})}), {2, 0, 3, 1, 4});
      ValueId* parts[] = {&q, &k, &v};
      for (int64_t i = 0; i < 3; ++i) *parts[i] = b_.Op("Gather", {qkv, Fixed(Tensor::Scalar(DataType::kInt64, i))});
    } else {
      for (ValueId* part : {&q, &k, &v}) {
        *part = Transpose(b_.Op("Reshape", {Linear(ln, c, c), Ints({n, s, heads, d})}), {0, 2, 1, 3});
      }
    }
    const ValueId scale = b_.Scalar(1.0 / std::sqrt(static_cast<double>(d)));
    const ValueId kt = Transpose(k, {0, 1, 3, 2});
    const ValueId scores =
        scale_q ? b_.Op("MatMul", {b_.Op("Mul", {q, scale}), kt}) : b_.Op("Mul", {b_.Op("MatMul", {q, kt}), scale});
    const ValueId p = b_.Op("Softmax", {scores}, [](Node& node) { node.attrs["axis"] = IntAttr(-1); });
    const ValueId merged = b_.Op("Reshape", {Transpose(b_.Op("MatMul", {p, v}), {0, 2, 1, 3}), Ints({n, s, c})});
    Push(b_.Op("Add", {x, Linear(merged, c, c)}), cur_.shape,
         "attention block (LayerNorm, " + std::to_string(heads) + " head(s), " +
             (packed ? "packed qkv + Gather" : "separate q/k/v") + (scale_q ? ", q scaled" : ", scores scaled") +
             ", projection, residual Add)");
  }

  // x + Linear(GELU(Linear(LayerNorm(x)))) on cur_ ([N,S,C]), hidden 2C, GELU written out
  // with Erf as exporters do (the * 0.5 last or first).
  void MlpBlock(uint32_t bits) {
    const int64_t c = cur_.shape[2];
    const ValueId x = cur_.id, h = Linear(LayerNorm(x, c, -1, 1e-5f), c, 2 * c);
    const bool half_last = bits % 2;
    const ValueId erf1 = b_.Op("Add", {b_.Op("Erf", {b_.Op("Div", {h, b_.Scalar(std::sqrt(2.0))})}), b_.Scalar(1.0)});
    const ValueId gelu = half_last ? b_.Op("Mul", {b_.Op("Mul", {h, erf1}), b_.Scalar(0.5)})
                                   : b_.Op("Mul", {b_.Op("Mul", {h, b_.Scalar(0.5)}), erf1});
    const bool residual_first = (bits / 2) % 2;
    const ValueId out = Linear(gelu, 2 * c, c);
    Push(residual_first ? b_.Op("Add", {x, out}) : b_.Op("Add", {out, x}), cur_.shape,
         std::string("MLP block (LayerNorm, Linear to 2C, GELU(erf) ") +
             (half_last ? "x*(1+erf)*0.5" : "x*0.5*(1+erf)") + ", Linear, residual Add" +
             (residual_first ? " residual first)" : ")"));
  }

  void SequenceTail(const R& r) {
    const int64_t n = cur_.shape[0], h = cur_.shape[2], w = cur_.shape[3];
    int64_t c = cur_.shape[1];
    ValueId x;
    switch (r[0] % 3) {
      case 0:
        x = b_.Op("AveragePool", {cur_.id}, [&](Node& node) {
          node.attrs["kernel_shape"] = IntsAttr({h, 1});
          node.attrs["strides"] = IntsAttr({1, 1});
        });
        Push(x, {n, c, 1, w}, "AveragePool kernel [" + std::to_string(h) + ",1]");
        break;
      case 1: {
        const int64_t m = r[0] % 2 ? 16 : 24;
        x = b_.Op("Conv", {cur_.id, Weights({m, c, h, 1}, c * h), Const({m}, -0.5, 0.5)},
                  [&](Node& node) { node.attrs["kernel_shape"] = IntsAttr({h, 1}); });
        c = m;
        Push(x, {n, c, 1, w}, "Conv kernel [" + std::to_string(h) + ",1] M " + std::to_string(m) + " bias");
        break;
      }
      default:
        x = b_.Op("ReduceMean", {cur_.id}, [](Node& node) {
          node.attrs["axes"] = IntsAttr({2});
          node.attrs["keepdims"] = IntAttr(1);
        });
        Push(x, {n, c, 1, w}, "ReduceMean axes [2] keepdims");
    }
    const Shape seq = {n, w, c};
    switch (r[1] % 3) {
      case 0:
        x = b_.Op("Transpose", {b_.Op("Reshape", {x, Ints({n, c, w})})},
                  [](Node& node) { node.attrs["perm"] = IntsAttr({0, 2, 1}); });
        Push(x, seq, "Reshape to [N,C,W], Transpose [0,2,1]");
        break;
      case 1:
        x = b_.Op("Transpose", {b_.Op("Reshape", {x, Ints({0, 0, -1})})},
                  [](Node& node) { node.attrs["perm"] = IntsAttr({0, 2, 1}); });
        Push(x, seq, "Reshape [0,0,-1], Transpose [0,2,1]");
        break;
      default:
        x = b_.Op("Reshape", {b_.Op("Transpose", {x}, [](Node& node) { node.attrs["perm"] = IntsAttr({0, 2, 3, 1}); }),
                              Ints({-1, w, c})});
        Push(x, seq, "Transpose [0,2,3,1], Reshape [-1,W,C]");
    }
    const uint32_t mix = (r[5] / 2) % 4;  // 1: an attention block, 2: an MLP block, 3: both
    if (mix & 1) AttentionBlock(r[5] / 8);
    if (mix & 2) MlpBlock(r[5] / 256);
    x = cur_.id;
    const uint32_t kind = r[2] % 3;  // 0 LayerNorm, 1 MatMul + bias, 2 both
    if (kind != 1) {
      const bool axis2 = r[3] % 2 == 0;
      x = LayerNorm(x, c, axis2 ? 2 : -1, (r[3] / 2) % 2 ? 1e-5f : 1e-6f);
      Push(x, seq, std::string("LayerNormalization axis ") + (axis2 ? "2" : "-1") + " epsilon " +
                       ((r[3] / 2) % 2 ? "1e-5" : "1e-6"));
    }
    int64_t k = c;
    if (kind != 0) {
      k = std::array<int64_t, 3>{6, 16, 37}[r[4] % 3];
      const ValueId mm = b_.Op("MatMul", {x, Weights({c, k}, c)});
      const ValueId bias = Const({k}, -0.5, 0.5);
      const bool bias_first = (r[4] / 3) % 2 == 0;
      x = bias_first ? b_.Op("Add", {bias, mm}) : b_.Op("Add", {mm, bias});
      Push(x, {n, w, k}, "MatMul [" + std::to_string(c) + "," + std::to_string(k) + "] + bias" +
                             (bias_first ? " (bias first)" : ""));
    }
    const bool axis2 = r[5] % 2 == 0;
    x = b_.Op("Softmax", {x}, [&](Node& node) { node.attrs["axis"] = IntAttr(axis2 ? 2 : -1); });
    Push(x, {n, w, k}, std::string("Softmax axis ") + (axis2 ? "2" : "-1"));
  }
};

}  // namespace switchyard::testing
