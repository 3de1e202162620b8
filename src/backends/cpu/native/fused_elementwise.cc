// Native switchyard.FusedElementwise (a chain of unary/binary fp32 ops applied to input 0,
// computed tile by tile in the output buffer) and switchyard.Gelu.
// On an nhwc route a 4-D FusedElementwise runs on its inputs' nhwc bytes where one of its
// full-shape inputs arrives nhwc and every other input either has the output's shape
// (read nhwc too) or no spatial extent ([.., C, 1, 1], a scalar: the same bytes in both
// layouts): broadcasting then runs over the shapes in nhwc order. Without that, the
// activations went to plain and back around every chain (paddle2onnx's affine blocks
// between convolutions: 71 Reorders, 13 ms of PP-OCRv4's detector on 2 cores).
#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/native/nhwc.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

constexpr int64_t kTile = 2048;  // elements per tile: the chain runs in L1

struct Step {
  bool unary = true;
  UnaryOp u = UnaryOp::kNone;
  UnaryParams p;
  BinaryOp b = BinaryOp::kAdd;
  int operand = -1;
  bool swap = false;
};

Result<std::vector<Step>> ParseChain(const Node& n) {
  const auto ops_list = n.Find("ops") ? n.Find("ops")->strings : std::vector<std::string>{};
  const std::vector<int64_t> operands = n.GetInts("operands");
  const std::vector<int64_t> swap = n.GetInts("swap");
  const std::vector<float> params = n.GetFloats("params");
  const std::vector<int64_t> offsets = n.GetInts("param_offsets");
  std::vector<Step> chain;
  for (size_t i = 0; i < ops_list.size(); ++i) {
    Step s;
    s.operand = i < operands.size() ? static_cast<int>(operands[i]) : -1;
    s.swap = i < swap.size() && swap[i] != 0;
    if (s.operand >= 0) {
      s.unary = false;
      if (!ParseBinary(ops_list[i], &s.b) || s.b == BinaryOp::kPRelu) {
        return ops::NodeUnsupported(n, "binary op " + ops_list[i]);
      }
    } else {
      if (!ParseUnary(ops_list[i], &s.u)) return ops::NodeUnsupported(n, "unary op " + ops_list[i]);
      s.p = DefaultUnaryParams(s.u);
      if (i < offsets.size()) {
        const int64_t b = offsets[i];
        const int64_t e = i + 1 < offsets.size() ? offsets[i + 1] : static_cast<int64_t>(params.size());
        if (b < 0 || e > static_cast<int64_t>(params.size()) || b > e) {
          return ops::NodeError(n, "param_offsets out of range");
        }
        if (e - b > 0) s.p.a = params[b];
        if (e - b > 1) s.p.b = params[b + 1];
      }
    }
    chain.push_back(s);
  }
  return chain;
}

// dst[0, len) = the broadcast input's values at output flat indices [o0, o0 + len).
void GatherRange(const BroadcastPlan& p, const float* src, int64_t o0, int64_t len, float* dst) {
  const size_t rank = p.out.size();
  const Shape& st = p.strides[0];
  Shape idx(rank, 0);
  int64_t r = o0, off = 0;
  for (size_t d = rank; d-- > 0;) {
    idx[d] = r % p.out[d];
    r /= p.out[d];
    off += idx[d] * st[d];
  }
  while (len > 0) {
    const int64_t run = std::min(len, p.out[rank - 1] - idx[rank - 1]);
    if (st[rank - 1] == 1) {
      std::memcpy(dst, src + off, run * sizeof(float));
    } else {
      std::fill(dst, dst + run, src[off]);
    }
    dst += run;
    len -= run;
    idx[rank - 1] += run;
    off += run * st[rank - 1];
    for (size_t d = rank - 1; d > 0 && idx[d] == p.out[d]; --d) {
      off -= idx[d] * st[d];
      idx[d] = 0;
      ++idx[d - 1];
      off += st[d - 1];
    }
  }
}

// A shape of rank <= 4 as 4-D (leading 1s) in nhwc order.
Shape NhwcShape(const Shape& s) {
  Shape p(4 - std::min<size_t>(4, s.size()), 1);
  p.insert(p.end(), s.begin(), s.end());
  return NhwcOrder(p);
}

// Whether the chain can run on nhwc bytes (see the file comment): the inputs to declare
// nhwc, or an empty vector when it cannot.
std::vector<size_t> NhwcInputs(const KernelBuildContext& c) {
  const auto& in = c.input_shapes;
  if (c.layout != "nhwc" || in.empty() || in.size() != c.input_layouts.size()) return {};
  Shape out(4, 1);  // the broadcast output shape, when it is 4-D and known
  for (const Shape& s : in) {
    if (s.size() > 4) return {};
    for (size_t d = 0; d < s.size(); ++d) {
      if (s[d] < 1) return {};
      int64_t& o = out[4 - s.size() + d];
      o = std::max(o, s[d]);
    }
  }
  if (std::none_of(in.begin(), in.end(), [](const Shape& s) { return s.size() == 4; })) return {};
  std::vector<size_t> dense;
  bool arrives_nhwc = false;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == out) {
      dense.push_back(i);
      arrives_nhwc |= c.input_layouts[i] == "nhwc";
      continue;
    }
    const Shape p = NhwcShape(in[i]);
    if (p[1] != 1 || p[2] != 1) return {};
    // The same bytes in both layouts: taken in the layout it arrives in (no Reorder).
    if (c.input_layouts[i] == "nhwc") dense.push_back(i);
  }
  return arrives_nhwc ? dense : std::vector<size_t>{};
}

Status RunChain(const Node& node, const std::vector<Step>& chain, const KernelIO& io, bool nhwc) {
  std::vector<Shape> shapes;
  for (const TensorRef* t : io.inputs) {
    if (!t) return ops::NodeError(node, "FusedElementwise inputs may not be omitted");
    if (nhwc && t->shape.size() > 4) return ops::NodeError(node, "an nhwc FusedElementwise takes inputs of rank <= 4");
    shapes.push_back(nhwc ? NhwcShape(t->shape) : t->shape);
  }
  for (const Step& s : chain) {
    if (s.operand >= static_cast<int>(io.inputs.size())) {
      return ops::NodeError(node, "operand index out of range");
    }
  }
  SY_ASSIGN_OR_RETURN(Shape out, BroadcastShape(node, shapes));
  const int64_t total = NumElements(out);
  // Per input: dense (same shape), scalar, or gathered through a broadcast plan.
  enum class Access { kDense, kScalar, kGather };
  std::vector<Access> access;
  std::vector<BroadcastPlan> plans;
  for (size_t i = 0; i < shapes.size(); ++i) {
    access.push_back(shapes[i] == out ? Access::kDense
                     : io.inputs[i]->numel() == 1 ? Access::kScalar : Access::kGather);
    plans.push_back(access.back() == Access::kGather ? MakeBroadcastPlan(out, {shapes[i]})
                                                     : BroadcastPlan{});
  }
  float* y = io.outputs[0]->as<float>();
  const int64_t tiles = (total + kTile - 1) / kTile;
  ParallelFor(tiles, io.threads, 8, [&](int64_t t0, int64_t t1) {
    std::vector<float> tmp(kTile);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o0 = t * kTile, len = std::min(kTile, total - o0);
      float* cur = y + o0;
      const float* x0 = io.inputs[0]->as<float>();
      switch (access[0]) {
        case Access::kDense: std::memcpy(cur, x0 + o0, len * sizeof(float)); break;
        case Access::kScalar: std::fill(cur, cur + len, x0[0]); break;
        case Access::kGather: GatherRange(plans[0], x0, o0, len, cur); break;
      }
      for (const Step& s : chain) {
        if (s.unary) {
          ApplyUnary(s.u, s.p, cur, cur, len);
          continue;
        }
        const float* src = io.inputs[s.operand]->as<float>();
        const float* b = src;
        int64_t sb = 0;
        if (access[s.operand] == Access::kDense) {
          b = src + o0;
          sb = 1;
        } else if (access[s.operand] == Access::kGather) {
          GatherRange(plans[s.operand], src, o0, len, tmp.data());
          b = tmp.data();
          sb = 1;
        }
        if (s.swap) {
          ApplyBinary(s.b, b, sb, cur, 1, cur, len);
        } else {
          ApplyBinary(s.b, cur, 1, b, sb, cur, len);
        }
      }
    }
  });
  return Status::Ok();
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeFusedElementwise) {
  RegisterNative(
      reg, "switchyard", "FusedElementwise",
      [](const Node& n, const KernelBuildContext& c) { return AllFloat(n, c) && ParseChain(n).ok(); },
      [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
        const Node node = v.node;
        SY_ASSIGN_OR_RETURN(std::vector<Step> chain, ParseChain(node));
        const bool nhwc = RunsNhwc(v);
        return MakeKernel(
            [node](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
              std::vector<Shape> shapes;
              for (const TensorRef* t : in) {
                if (t) shapes.push_back(t->shape);
              }
              SY_ASSIGN_OR_RETURN(Shape out, BroadcastShape(node, shapes));
              return Shapes{out};
            },
            [node, chain, nhwc](const KernelIO& io) { return RunChain(node, chain, io, nhwc); });
      },
      [](const Node& n, const KernelBuildContext& c, StepSpec& spec) {
        const std::vector<size_t> dense = NhwcInputs(c);
        if (!dense.empty()) DeclareNhwc(n, spec, dense);
        return Status::Ok();
      });

  RegisterNative(
      reg, "switchyard", "Gelu",
      [](const Node& n, const KernelBuildContext& c) {
        const std::string a = n.GetString("approximate", "none");
        return AllFloat(n, c) && (a == "none" || a == "tanh");
      },
      [](const StepView& v) {
        const UnaryOp op =
            v.node.GetString("approximate", "none") == "tanh" ? UnaryOp::kGeluTanh : UnaryOp::kGelu;
        return MakeKernel(
            [](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
              return Shapes{in[0]->shape};
            },
            [op](const KernelIO& io) {
              const float* x = io.inputs[0]->as<float>();
              float* y = io.outputs[0]->as<float>();
              ParallelFor(io.inputs[0]->numel(), io.threads, 16384, [&](int64_t b, int64_t e) {
                ApplyUnary(op, UnaryParams{}, x + b, y + b, e - b);
              });
              return Status::Ok();
            });
      });
}

}  // namespace switchyard::native
