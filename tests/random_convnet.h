// Random small conv nets for the route differential tests (route_differential_test.cc):
// Draw turns a seed into a GraphSpec (layer kinds and raw random numbers), Materializer
// builds its graph, reference inputs and a one-line description per layer, computing every
// shape as it goes. Convs, activations, BatchNorm, broadcasting Add/Mul/Sub with constant,
// residual and non-constant operands, pooling, Concat, squeeze-excite, a classifier head.
// Deterministic: std::mt19937 read through `% n` only (the standard distributions differ
// between standard libraries). random_ocrnet.h adds the ops of text detection and
// recognition nets on top of Materializer.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "passes_test_util.h"

namespace switchyard::testing {

using Shape = std::vector<int64_t>;

inline std::string ShapeStr(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// One layer as drawn: its kind and raw random numbers that Materializer maps onto the options
// valid at the layer's input shape, so a layer list stays valid when layers are dropped.
// The kinds after kSqueezeExcite are random_ocrnet.h's (OcrMaterializer builds them).
enum class LayerKind {
  kConv, kAct, kBatchNorm, kBinary, kPool, kGlobalPool, kConcat, kSqueezeExcite,
  kResize, kConvTranspose, kDepthwiseHardSwish, kHardSqueezeExcite, kFpn, kRecDownsample, kSequenceTail
};
struct LayerSpec {
  LayerKind kind;
  std::array<uint32_t, 6> r;
};
struct GraphSpec {
  uint32_t seed = 0;
  bool large = false;  // 16x128x128 (or 127/131) at batch 2-4, 8 MiB tensors after the first conv
  Shape input;         // [N, C, H, W]
  std::vector<LayerSpec> layers;
  bool head = false;  // GlobalAveragePool -> Flatten -> Gemm(transB=1) at the end
  uint32_t side = 0;  // side % 3 == 0: an intermediate activation is a second output
};

inline GraphSpec Draw(uint32_t seed, bool large) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  GraphSpec s;
  s.seed = seed;
  s.large = large;
  if (large) {
    // 128 / N (48 at N = 3) channels after the first conv: 8 MiB or more at 128x128.
    const int64_t n[] = {4, 2, 3};
    s.input = {n[pick(3)], 16, pick(2) ? 128 : 127, pick(2) ? 128 : 131};
  } else {
    const int64_t n[] = {1, 2, 4}, c[] = {1, 3, 8, 16};
    const int64_t h = 5 + pick(16);
    s.input = {n[pick(3)], c[pick(4)], h, pick(3) == 0 ? h : 5 + pick(16)};
  }
  const int count = large ? 4 + static_cast<int>(pick(4)) : 3 + static_cast<int>(pick(8));
  for (int i = 0; i < count; ++i) {
    LayerSpec l{};
    // Weights of the kinds: conv 4, activation 3, BatchNorm 1, binary 4, pool 1, concat 1,
    // squeeze-excite 1; a global pool only among the last two layers.
    using K = LayerKind;
    static const K kTable[] = {K::kConv,   K::kConv,   K::kConv,      K::kConv,   K::kAct,
                               K::kAct,    K::kAct,    K::kBatchNorm, K::kBinary, K::kBinary,
                               K::kBinary, K::kBinary, K::kPool,      K::kConcat, K::kSqueezeExcite};
    l.kind = kTable[pick(sizeof(kTable) / sizeof(kTable[0]))];
    if (i == 0 && (large || pick(4) != 0)) l.kind = LayerKind::kConv;
    if (i >= count - 2 && pick(5) == 0) l.kind = LayerKind::kGlobalPool;
    for (uint32_t& v : l.r) v = static_cast<uint32_t>(rng());
    // Large graphs: a non-constant operand (a new graph input) right after the first conv,
    // inside the steps the batch split takes.
    if (large && i == 1) {
      l.kind = LayerKind::kBinary;
      l.r[1] = 2;
    }
    s.layers.push_back(l);
  }
  s.head = pick(3) == 0;
  s.side = static_cast<uint32_t>(rng());
  return s;
}

struct NetCase {
  Graph graph;
  TensorMap inputs;
  std::vector<std::string> layers;  // one line per layer, as built
};

// Builds the graph of `spec`, computing every shape as it goes (checked against shape
// inference at the end).
class Materializer {
 public:
  explicit Materializer(const GraphSpec& spec) : spec_(spec) {}
  virtual ~Materializer() = default;

  NetCase Run() {
    const Shape& in = spec_.input;
    cur_ = {AddInput(in, -1, 1), in};
    acts_.push_back(cur_);
    Note("input x " + ShapeStr(in));
    for (size_t i = 0; i < spec_.layers.size(); ++i) Layer(i, spec_.layers[i]);
    std::vector<Act> sides;
    for (const Act& a : acts_) {
      if (a.id != acts_.front().id && a.id != cur_.id) sides.push_back(a);
    }
    if (spec_.side % 3 == 0 && !sides.empty()) {
      const Act& a = sides[(spec_.side / 3) % sides.size()];
      b_.Output(a.id);
      expect_.push_back(a.shape);
      Note("second output: " + b_.g.value(a.id).name + " " + ShapeStr(a.shape));
    }
    if (spec_.head) Head();
    b_.Output(cur_.id);
    expect_.push_back(cur_.shape);
    NetCase c;
    c.graph = b_.Finish();
    for (size_t i = 0; i < c.graph.outputs.size(); ++i) {
      EXPECT_EQ(c.graph.value(c.graph.outputs[i]).type.StaticShape(), expect_[i]) << "generator shape bug";
    }
    c.inputs = std::move(inputs_);
    c.layers = std::move(layers_);
    return c;
  }

 protected:
  struct Act {
    ValueId id = kNoValue;
    Shape shape;
  };

  ValueId AddInput(const Shape& shape, double lo, double hi) {
    const std::string name = inputs_.empty() ? "x" : "in" + std::to_string(inputs_.size());
    inputs_[name] = Filled(DataType::kFloat, shape, spec_.seed * 31u + static_cast<uint32_t>(inputs_.size()), lo, hi);
    return b_.Input(name, shape);
  }
  ValueId Const(const Shape& shape, double lo, double hi) {
    const uint32_t k = ++consts_;
    return b_.Const("k" + std::to_string(k), Filled(DataType::kFloat, shape, spec_.seed * 1000u + k, lo, hi));
  }
  void Note(const std::string& line) { layers_.push_back(line); }
  void Push(ValueId id, Shape shape, const std::string& what) {
    Note(what + " -> " + ShapeStr(shape) + " (" + b_.g.nodes.back().name + ")");
    cur_ = {id, std::move(shape)};
    acts_.push_back(cur_);
  }
  // Earlier activations of `shape` other than the current one.
  std::vector<Act> SameShape(const Shape& shape) const {
    std::vector<Act> v;
    for (const Act& a : acts_) {
      if (a.shape == shape && a.id != cur_.id) v.push_back(a);
    }
    return v;
  }

  // The layer kinds up to kSqueezeExcite; a subclass adds others.
  virtual void Layer(size_t index, const LayerSpec& l) {
    const auto& r = l.r;
    const int64_t n = cur_.shape[0], c = cur_.shape[1], h = cur_.shape[2], w = cur_.shape[3];
    switch (l.kind) {
      case LayerKind::kConv: {
        const bool first_large = spec_.large && index == 0;
        int64_t k = r[0] % 2 ? 3 : 1, stride = r[1] % 2 ? 2 : 1, dilation = 1;
        // Pads top, left, bottom, right: mostly 0 or 1 all round, sometimes asymmetric.
        Shape pads(4, r[2] % 5 == 4 ? 0 : r[2] % 2);
        if (r[2] % 5 == 4) pads = (r[2] / 5) % 2 ? Shape{0, 1, 1, 0} : Shape{1, 0, 0, 1};
        // Large graphs: later convs shrink a big map (the reference executor is slow there).
        if (spec_.large && !first_large && h > 32) stride = 2;
        const bool depthwise = !first_large && r[3] % 4 == 0;
        const bool bias = r[4] % 3 != 0;
        // The first conv of a large graph makes the 8 MiB tensor the batch split needs.
        const int64_t m = first_large ? (n == 3 ? 48 : 128 / n)
                          : depthwise ? c
                                      : std::array<int64_t, 3>{8, 16, 24}[r[5] % 3];
        if (first_large) {
          k = 3;
          stride = 1;
          pads = {1, 1, 1, 1};
        }
        if (k == 3 && !first_large && (r[1] / 2) % 6 == 0 && h + pads[0] + pads[2] >= 5 && w + pads[1] + pads[3] >= 5) {
          dilation = 2;
        }
        const int64_t span = dilation * (k - 1) + 1;
        if (h + pads[0] + pads[2] < span || w + pads[1] + pads[3] < span) pads = {1, 1, 1, 1};
        const int64_t group = depthwise ? c : 1, cin = c / group;
        const double a = std::sqrt(3.0 / static_cast<double>(cin * k * k));
        std::vector<ValueId> ins = {cur_.id, Const({m, cin, k, k}, -a, a)};
        if (bias) ins.push_back(Const({m}, -0.5, 0.5));
        const ValueId y = b_.Op("Conv", ins, [&](Node& node) {
          node.attrs["kernel_shape"] = IntsAttr({k, k});
          node.attrs["strides"] = IntsAttr({stride, stride});
          node.attrs["pads"] = IntsAttr(pads);
          if (dilation > 1) node.attrs["dilations"] = IntsAttr({dilation, dilation});
          if (group > 1) node.attrs["group"] = IntAttr(group);
        });
        const int64_t oh = (h + pads[0] + pads[2] - span) / stride + 1,
                      ow = (w + pads[1] + pads[3] - span) / stride + 1;
        std::ostringstream d;
        d << "Conv k" << k << " s" << stride << " pads " << ShapeStr(pads) << (dilation > 1 ? " dilation 2" : "")
          << " group " << group << " M " << m << (bias ? " bias" : " no-bias");
        Push(y, {n, m, oh, ow}, d.str());
        return;
      }
      case LayerKind::kAct: {
        static const char* kOps[] = {"Relu", "Sigmoid", "Clip", "HardSwish", "LeakyRelu"};
        const std::string op = kOps[r[0] % 5];
        ValueId y;
        // Half the Sigmoids are SiLU's x * Sigmoid(x) (fuse.conv_act, and fuse.conv_pool
        // where a pooling follows).
        const bool silu = op == "Sigmoid" && r[1] % 2;
        if (op == "Clip") {
          y = b_.Op("Clip", {cur_.id, b_.Scalar(0.0), b_.Scalar(6.0)});
        } else if (silu) {
          y = b_.Op("Mul", {cur_.id, b_.Op("Sigmoid", {cur_.id})});
        } else {
          y = b_.Op(op, {cur_.id}, [&](Node& node) {
            if (op == "LeakyRelu") node.attrs["alpha"] = FloatAttr(r[1] % 2 ? 0.1f : 0.01f);
          });
        }
        Push(y, cur_.shape, op == "Clip" ? "Clip 0..6" : silu ? "SiLU" : op);
        return;
      }
      case LayerKind::kBatchNorm: {
        const ValueId y = b_.Op("BatchNormalization", {cur_.id, Const({c}, 0.5, 1.5), Const({c}, -0.5, 0.5),
                                                       Const({c}, -0.5, 0.5), Const({c}, 0.5, 1.5)});
        Push(y, cur_.shape, "BatchNormalization (constant params)");
        return;
      }
      case LayerKind::kBinary: {
        static const char* kOps[] = {"Add", "Mul", "Sub"};
        std::string op = kOps[r[0] % 3];
        uint32_t source = r[1] % 3;  // 0 residual, 1 constant, 2 new graph input
        const std::vector<Act> same = SameShape(cur_.shape);
        if (source == 0 && same.empty()) source = 1;
        // cur - ancestor cancels where cur is close to it (an Add of a small operand):
        // the result is rounding noise of the larger terms, so residuals are added.
        if (source == 0 && op == "Sub") op = "Add";
        const double lo = op == "Mul" ? 0.5 : -1, hi = op == "Mul" ? 1.5 : 1;
        ValueId other;
        Shape oshape;
        std::string what;
        if (source == 0) {
          const Act& a = same[r[2] % same.size()];
          other = a.id;
          oshape = a.shape;
          what = "residual " + b_.g.value(a.id).name;
        } else if (source == 1) {
          const Shape shapes[] = {{c, 1, 1}, {1, c, 1, 1}, {1, 1, 1, w}, {w},          {1},         {c, h, w},
                                  {h, w},    {n, 1, 1, 1}, {n, c, 1, 1}, {1, c, h, w}, {n, c, h, w}};
          oshape = shapes[r[2] % 11];
          other = Const(oshape, lo, hi);
          what = "constant " + ShapeStr(oshape);
        } else {
          const Shape shapes[] = {{c, 1, 1},    {1, c, 1, 1}, {n, c, 1, 1}, {c, h, w}, {1, 1, 1, w},
                                  {n, 1, 1, 1}, {h, w},       {w},          {1},       {n, c, h, w}};
          oshape = shapes[r[2] % 10];
          other = AddInput(oshape, lo, hi);
          what = "graph input " + b_.g.value(other).name + " " + ShapeStr(oshape);
        }
        const bool first = r[3] % 3 == 0;
        const ValueId y = first ? b_.Op(op, {other, cur_.id}) : b_.Op(op, {cur_.id, other});
        Push(y, cur_.shape, op + (first ? " (operand first) " : " ") + what);
        return;
      }
      case LayerKind::kPool: {
        const std::string op = r[0] % 2 ? "MaxPool" : "AveragePool";
        const bool small = r[1] % 2 == 0 && h >= 2 && w >= 2;  // 2x2 stride 2, else 3x3 stride 1 pad 1
        const bool include_pad = !small && op == "AveragePool" && r[2] % 3 == 0;
        const bool ceil = small && r[3] % 3 == 0;
        const ValueId y = b_.Op(op, {cur_.id}, [&](Node& node) {
          const int64_t k = small ? 2 : 3;
          node.attrs["kernel_shape"] = IntsAttr({k, k});
          node.attrs["strides"] = IntsAttr({small ? 2 : 1, small ? 2 : 1});
          if (!small) node.attrs["pads"] = IntsAttr({1, 1, 1, 1});
          if (include_pad) node.attrs["count_include_pad"] = IntAttr(1);
          if (ceil) node.attrs["ceil_mode"] = IntAttr(1);
        });
        const Shape out = small ? Shape{n, c, (h - 2 + ceil) / 2 + 1, (w - 2 + ceil) / 2 + 1} : cur_.shape;
        Push(y, out,
             op + (small ? " 2x2 s2" : " 3x3 s1 p1") + (include_pad ? " count_include_pad" : "") +
                 (ceil ? " ceil_mode" : ""));
        return;
      }
      case LayerKind::kGlobalPool:
        Push(b_.Op("GlobalAveragePool", {cur_.id}), {n, c, 1, 1}, "GlobalAveragePool");
        return;
      case LayerKind::kConcat: {
        if (c > 32 || (spec_.large && h > 32)) {  // keeps the reference executor's work bounded
          Note("(Concat left out at " + ShapeStr(cur_.shape) + ")");
          return;
        }
        std::vector<Act> same = SameShape(cur_.shape);
        if (same.empty()) same = {cur_};  // Concat of a tensor with itself
        const Act& a = same[r[0] % same.size()];
        const bool first = r[1] % 2 == 0;
        const ValueId y =
            b_.Op("Concat", first ? std::vector<ValueId>{a.id, cur_.id} : std::vector<ValueId>{cur_.id, a.id},
                  [](Node& node) { node.attrs["axis"] = IntAttr(1); });
        const std::string with = a.id == cur_.id ? "itself" : b_.g.value(a.id).name + (first ? " (it first)" : "");
        Push(y, {n, c + c, h, w}, "Concat axis 1 with " + with);
        return;
      }
      case LayerKind::kSqueezeExcite: {
        // x * Sigmoid(Conv1x1(Relu(Conv1x1(GlobalAveragePool(x))))): a non-constant
        // [N,C,1,1] operand (and fuse.conv_scale's pattern when a 1x1 conv follows).
        const int64_t mid = std::max<int64_t>(2, c / 4);
        auto conv1x1 = [&](ValueId in, int64_t cin, int64_t cout) {
          const double a = std::sqrt(3.0 / static_cast<double>(cin));
          return b_.Op("Conv", {in, Const({cout, cin, 1, 1}, -a, a), Const({cout}, -0.5, 0.5)});
        };
        const ValueId pooled = b_.Op("GlobalAveragePool", {cur_.id});
        const ValueId scale = b_.Op("Sigmoid", {conv1x1(b_.Op("Relu", {conv1x1(pooled, c, mid)}), mid, c)});
        const bool first = r[0] % 2 == 0;
        const std::string op = r[1] % 4 == 0 ? "Add" : r[1] % 4 == 1 ? "Sub" : "Mul";
        const ValueId y = first ? b_.Op(op, {scale, cur_.id}) : b_.Op(op, {cur_.id, scale});
        Push(y, cur_.shape,
             "squeeze-excite (GAP, 1x1 conv to " + std::to_string(mid) + ", Relu, 1x1 conv, Sigmoid, " + op +
                 (first ? " scale first)" : ")"));
        return;
      }
      default:
        ADD_FAILURE() << "layer kind " << static_cast<int>(l.kind) << " is not Materializer's";
        return;
    }
  }

  void Head() {
    const int64_t n = cur_.shape[0], c = cur_.shape[1];
    const ValueId flat = b_.Op("Flatten", {b_.Op("GlobalAveragePool", {cur_.id})});
    const double a = std::sqrt(3.0 / static_cast<double>(c));
    const bool bias = spec_.side % 2 == 0;
    std::vector<ValueId> ins = {flat, Const({10, c}, -a, a)};
    if (bias) ins.push_back(Const({10}, -0.5, 0.5));
    const ValueId y = b_.Op("Gemm", ins, [](Node& node) { node.attrs["transB"] = IntAttr(1); });
    Note("head: GlobalAveragePool -> Flatten -> Gemm(transB=1, 10 outputs" + std::string(bias ? ", bias" : "") +
         ") -> [" + std::to_string(n) + ",10]");
    cur_ = {y, {n, 10}};
  }

  const GraphSpec& spec_;
  GraphBuilder b_;
  TensorMap inputs_;
  std::vector<std::string> layers_;
  std::vector<Act> acts_;  // every 4-D activation so far, the input first
  std::vector<Shape> expect_;
  Act cur_;
  uint32_t consts_ = 0;
};

}  // namespace switchyard::testing
