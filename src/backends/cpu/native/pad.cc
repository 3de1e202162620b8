// Native Pad (2, 11, 13, 18, 19, 21) for any fixed-size dtype: constant, reflect, edge and
// wrap modes; pads from the attribute (Pad-2) or a runtime input (11+, with optional axes
// from 18). Negative pads crop. Each output row maps its outer indices to an input row
// once; the innermost dim copies the interior with memcpy and fills the borders.
#include <algorithm>

#include "backends/cpu/native/native.h"
#include "reference/op_registry.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

enum class Mode { kConstant, kReflect, kEdge, kWrap };

bool ParseMode(const std::string& s, Mode* m) {
  if (s == "constant") *m = Mode::kConstant;
  else if (s == "reflect") *m = Mode::kReflect;
  else if (s == "edge") *m = Mode::kEdge;
  else if (s == "wrap") *m = Mode::kWrap;
  else return false;
  return true;
}

// Full pads [begin..., end...] for input rank `rank`.
Result<Shape> FullPads(const Node& node, bool from_inputs, const std::vector<const TensorRef*>& in,
                       int64_t rank) {
  Shape pads, axes;
  const bool has_axes = from_inputs && in.size() > 3 && in[3];
  if (from_inputs) {
    if (in.size() < 2 || !in[1]) return ops::NodeError(node, "pads input is required");
    pads = ReadInts(*in[1]);
    if (has_axes) axes = ReadInts(*in[3]);
  } else {
    pads = node.GetInts("pads");
  }
  if (!has_axes) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) {
    return ops::NodeError(node, "pads has " + std::to_string(pads.size()) + " entries, expected " +
                                    std::to_string(2 * axes.size()));
  }
  Shape full(static_cast<size_t>(2 * rank), 0);
  const size_t k = axes.size();
  for (size_t i = 0; i < k; ++i) {
    SY_ASSIGN_OR_RETURN(int64_t a, ops::NormalizeAxis(node, axes[i], rank));
    if (pads[i] > (int64_t{1} << 40) || pads[i] < -(int64_t{1} << 40) ||
        pads[k + i] > (int64_t{1} << 40) || pads[k + i] < -(int64_t{1} << 40)) {
      return ops::NodeError(node, "pad is too large");
    }
    full[a] = pads[i];
    full[rank + a] = pads[k + i];
  }
  return full;
}

Result<Shape> OutShape(const Node& node, Mode mode, const Shape& x, const Shape& full) {
  const size_t r = x.size();
  Shape out(r);
  for (size_t d = 0; d < r; ++d) {
    out[d] = x[d] + full[d] + full[r + d];
    if (out[d] < 0) return ops::NodeError(node, "pads make a negative dimension");
    if (mode != Mode::kConstant && x[d] == 0 && out[d] > 0) {
      return ops::NodeError(node, "cannot pad an empty axis in this mode");
    }
  }
  return out;
}

// Source index along a dim of size n for output index o (begin pad pb); -1 = constant.
inline int64_t MapIndex(Mode mode, int64_t o, int64_t pb, int64_t n) {
  int64_t i = o - pb;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case Mode::kConstant: return -1;
    case Mode::kEdge: return std::clamp<int64_t>(i, 0, n - 1);
    case Mode::kWrap: return ((i % n) + n) % n;
    case Mode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      i = ((i % period) + period) % period;
      return i >= n ? period - i : i;
    }
  }
  return -1;
}

Status RunPad(const Node& node, Mode mode, bool from_inputs, const std::vector<uint8_t>& attr_fill,
              const KernelIO& io) {
  const TensorRef& x = *io.inputs[0];
  TensorRef& y = *io.outputs[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  SY_ASSIGN_OR_RETURN(Shape full, FullPads(node, from_inputs, io.inputs, rank));
  const size_t es = DataTypeSize(x.dtype);
  std::vector<uint8_t> fill = attr_fill;
  fill.resize(es, 0);
  if (from_inputs && io.inputs.size() > 2 && io.inputs[2] && io.inputs[2]->numel() > 0) {
    const TensorRef& c = *io.inputs[2];
    if (c.numel() != 1 || c.dtype != x.dtype) {
      return ops::NodeError(node, "constant_value must be a scalar of the input's dtype");
    }
    std::memcpy(fill.data(), c.data, es);
  }
  const int64_t n_out = y.numel();
  if (n_out == 0) return Status::Ok();
  if (rank == 0) {
    std::memcpy(y.data, x.data, es);
    return Status::Ok();
  }
  const Shape& ys = y.shape;
  const Shape& xs = x.shape;
  const Shape st = ops::Strides(xs);
  const int64_t inner = ys[rank - 1], rows = n_out / inner, xin = xs[rank - 1];
  const int64_t pb = full[rank - 1];
  // Interior of the innermost dim: outputs [lo, hi) map to inputs [lo - pb, hi - pb).
  const int64_t lo = std::clamp<int64_t>(pb, 0, inner), hi = std::clamp<int64_t>(pb + xin, lo, inner);
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(y.data);
  auto put_fill = [&](char* p, int64_t n) {
    if (es == 1) {
      std::memset(p, fill[0], static_cast<size_t>(n));
      return;
    }
    for (int64_t i = 0; i < n; ++i) std::memcpy(p + i * es, fill.data(), es);
  };
  ParallelFor(rows, io.threads, std::max<int64_t>(1, 16384 / inner), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t r = row, off = 0;
      bool constant_row = false;
      for (int64_t d = rank - 1; d-- > 0;) {
        const int64_t o = r % ys[d];
        r /= ys[d];
        const int64_t i = MapIndex(mode, o, full[d], xs[d]);
        if (i < 0) constant_row = true;
        else off += i * st[d];
      }
      char* out = dst + row * inner * es;
      if (constant_row || xin == 0) {
        put_fill(out, inner);
        continue;
      }
      const char* in_row = src + off * es;
      if (hi > lo) std::memcpy(out + lo * es, in_row + (lo - pb) * es, static_cast<size_t>((hi - lo) * es));
      for (int64_t o = 0; o < lo; ++o) {
        const int64_t i = MapIndex(mode, o, pb, xin);
        if (i < 0) put_fill(out + o * es, 1);
        else std::memcpy(out + o * es, in_row + i * es, es);
      }
      for (int64_t o = hi; o < inner; ++o) {
        const int64_t i = MapIndex(mode, o, pb, xin);
        if (i < 0) put_fill(out + o * es, 1);
        else std::memcpy(out + o * es, in_row + i * es, es);
      }
    }
  });
  return Status::Ok();
}

int PadVersion(const Node& n, const KernelBuildContext& ctx) {
  if (n.since_version > 0) return n.since_version;
  auto it = ctx.graph.opsets.find(n.domain);
  const OpSchema* s = OpRegistry::Global().Find(n.domain, n.op_type, it == ctx.graph.opsets.end() ? 17 : it->second);
  return s ? s->since_version : 11;
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativePad) {
  RegisterNative(
      reg, "", "Pad",
      [](const Node& n, const KernelBuildContext& c) {
        Mode m;
        if (c.input_dtypes.empty() || c.input_dtypes[0] == DataType::kString ||
            c.input_dtypes[0] == DataType::kUndefined) {
          return false;
        }
        return ParseMode(n.GetString("mode", "constant"), &m);
      },
      [](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
        const Node node = v.node;
        Mode mode;
        if (!ParseMode(node.GetString("mode", "constant"), &mode)) {
          return ops::NodeError(node, "unknown mode '" + node.GetString("mode", "constant") + "'");
        }
        const int version = v.params.value("version", node.since_version > 0 ? node.since_version : 11);
        const bool from_inputs = version >= 11;
        std::vector<uint8_t> fill;
        if (!from_inputs && !v.input_dtypes.empty()) {
          // Pad-2's `value` is a float attribute: convert it to the input dtype once.
          const Tensor t = Tensor::Scalar(v.input_dtypes[0], node.GetFloat("value", 0.f));
          const auto* p = static_cast<const uint8_t*>(t.raw());
          fill.assign(p, p + t.nbytes());
        }
        return MakeKernel(
            [node, mode, from_inputs](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
              if (in.empty() || !in[0]) return ops::NodeError(node, "data is required");
              SY_ASSIGN_OR_RETURN(Shape full, FullPads(node, from_inputs, in, static_cast<int64_t>(in[0]->shape.size())));
              SY_ASSIGN_OR_RETURN(Shape out, OutShape(node, mode, in[0]->shape, full));
              return Shapes{out};
            },
            [node, mode, from_inputs, fill](const KernelIO& io) {
              return RunPad(node, mode, from_inputs, fill, io);
            });
      },
      [](const Node& n, const KernelBuildContext& c, StepSpec& spec) {
        spec.params["version"] = PadVersion(n, c);
        return Status::Ok();
      });
}

}  // namespace switchyard::native
