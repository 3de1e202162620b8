// Channels-last (layout.activations=nhwc) helpers of the cuda target. A 4-D tensor tagged
// "nhwc" keeps its logical NCHW shape (TensorRef::shape, StepView shapes) while its memory
// is N, H, W, C row-major; same byte count as plain. Kernels that run channels-last
// declare params input_layouts / output_layouts "nhwc" at prepare (the builder inserts
// switchyard.Reorder steps, ops_layout.cc, where a producer's layout differs) and decide
// at create from StepView::input_layouts / output_layouts (the kernel harness always
// passes plain ones). Constants are never reordered by the builder: a constant input must
// stay plain, so an nhwc kernel can only take it when its memory reads the same either
// way (PlainIsNhwc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/op_impl.h"

namespace switchyard::cuda {

inline constexpr const char* kNhwc = "nhwc";

// The route asks for channels-last activations.
inline bool WantNhwc(const KernelBuildContext& ctx) { return ctx.layout == kNhwc; }

// `s` right-aligned to rank 4 with leading 1s (rank <= 4).
inline std::vector<int64_t> Rank4(const std::vector<int64_t>& s) {
  std::vector<int64_t> r(4, 1);
  for (size_t i = 0; i < s.size() && i < 4; ++i) r[4 - s.size() + i] = s[i];
  return r;
}

// Logical [N, C, H, W] -> the storage order [N, H, W, C].
inline std::vector<int64_t> NhwcDims(const std::vector<int64_t>& nchw) {
  return {nchw[0], nchw[2], nchw[3], nchw[1]};
}

// A plain tensor of this (rank <= 4, right-aligned) shape has the same memory as its
// NHWC storage: C == 1 or H == W == 1 (e.g. [N, C, 1, 1], [1, C, 1, 1], [C, 1, 1], scalars).
inline bool PlainIsNhwc(const std::vector<int64_t>& shape) {
  if (shape.size() > 4) return false;
  const std::vector<int64_t> s = Rank4(shape);
  return s[1] == 1 || s[2] * s[3] == 1;
}

inline bool IsNhwc(const std::vector<std::string>& layouts, size_t i) {
  return i < layouts.size() && layouts[i] == kNhwc;
}

inline bool IsLayoutTransparentOp(const std::string& op) {
  static const char* const kTransparent[] = {
      "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "HardSwish",
      "HardSigmoid", "LeakyRelu", "Elu", "Softplus", "Gelu", "Clip", "Cast", "Add", "Sub", "Mul", "Div",
      "Pow", "Max", "Min", "FusedElementwise"};
  for (const char* t : kTransparent) {
    if (op == t) return true;
  }
  return false;
}

inline bool LikelyNhwc(const Graph& g, ValueId id, int depth = 8);

// For a global pool's [N, C, 1, 1] output (the same memory in both layouts): whether to
// tag it nhwc, i.e. it is not a graph output and it is read by a conv (X or residual), by
// a layout-transparent op with another input that is channels-last (the squeeze-excite
// Mul), or by a unary one whose own readers take nhwc; not by a Flatten/Gemm head or a
// Cast to a graph output.
inline bool ReadersTakeNhwc(const Graph& g, ValueId id, int depth = 8) {
  if (depth <= 0) return false;
  for (ValueId o : g.outputs) {
    if (o == id) return false;
  }
  for (const Node& n : g.nodes) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] != id) continue;
      if ((n.op_type == "Conv" || n.op_type == "FusedConv") && (i == 0 || i == 3)) return true;
      if (!IsLayoutTransparentOp(n.op_type)) continue;
      for (ValueId other : n.inputs) {
        if (other != id && LikelyNhwc(g, other, depth - 1)) return true;
      }
      if (n.outputs.size() == 1 && ReadersTakeNhwc(g, n.outputs[0], depth - 1)) return true;
    }
  }
  return false;
}

// Whether a 4-D value is produced channels-last under nhwc: by a conv, pool or
// BatchNormalization (which run nhwc whenever they can), a global pool whose readers take
// nhwc (ReadersTakeNhwc), or by a layout-transparent
// elementwise op with such an input, looking at most `depth` producers up. Elementwise ops
// go channels-last only then, so that 4-D tensors away from convolutions (attention
// scores of a ViT) are not reordered twice around every op.
inline bool LikelyNhwc(const Graph& g, ValueId id, int depth) {
  if (id == kNoValue || depth <= 0 || g.IsConstant(id)) return false;
  const Value& v = g.value(id);
  if (!v.type.has_shape || v.type.dims.size() != 4 || v.producer < 0 ||
      static_cast<size_t>(v.producer) >= g.nodes.size()) {
    return false;
  }
  const Node& n = g.nodes[static_cast<size_t>(v.producer)];
  static const char* const kAnchors[] = {"Conv", "FusedConv", "MaxPool", "AveragePool", "BatchNormalization"};
  for (const char* a : kAnchors) {
    if (n.op_type == a) return true;
  }
  if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") return ReadersTakeNhwc(g, id, depth - 1);
  if (!IsLayoutTransparentOp(n.op_type)) return false;
  for (ValueId in : n.inputs) {
    if (LikelyNhwc(g, in, depth - 1)) return true;
  }
  return false;
}

}  // namespace switchyard::cuda
