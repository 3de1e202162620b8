// Window attributes, output-size rules and fp64 buffer helpers shared by Conv,
// ConvTranspose and the pooling ops.
#include "reference/ops/conv_common.h"

namespace switchyard::ops {
namespace {
// Exclusive upper bound on kernel_shape, strides, dilations and pads entries.
constexpr int64_t kMaxWindowValue = int64_t{1} << 31;
}  // namespace

bool IsFloatingDtype(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 ||
         t == DataType::kBfloat16;
}

Result<Window> ReadWindow(const Node& node, std::vector<int64_t> kernel) {
  const size_t ns = kernel.size();
  Window w;
  w.kernel = std::move(kernel);
  w.strides = node.GetInts("strides", std::vector<int64_t>(ns, 1));
  w.dilations = node.GetInts("dilations", std::vector<int64_t>(ns, 1));
  std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * ns, 0));
  w.auto_pad = node.GetString("auto_pad", "NOTSET");
  w.ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  if (w.strides.size() != ns || w.dilations.size() != ns || pads.size() != 2 * ns) {
    return NodeError(node, "strides/dilations/pads lengths do not match " +
                               std::to_string(ns) + " spatial dimensions");
  }
  // Each window value lies below 2^31, so (kernel - 1) * dilation + 1 and the padded
  // extent stay far inside int64 (fuzzed dilations of 2^62 overflowed it).
  auto out_of_range = [&](const char* name, size_t i, int64_t v, const char* range) {
    return NodeError(node, std::string(name) + "[" + std::to_string(i) + "] = " +
                               std::to_string(v) + " is out of range " + range);
  };
  for (size_t i = 0; i < ns; ++i) {
    if (w.kernel[i] < 1) return NodeError(node, "kernel dimensions must be positive");
    if (w.strides[i] < 1) return NodeError(node, "strides must be positive");
    if (w.dilations[i] < 1) return NodeError(node, "dilations must be positive");
    if (pads[i] < 0 || pads[i + ns] < 0) return NodeError(node, "pads must be non-negative");
    if (w.kernel[i] >= kMaxWindowValue) {
      return out_of_range("kernel_shape", i, w.kernel[i], "[1, 2^31)");
    }
    if (w.strides[i] >= kMaxWindowValue) return out_of_range("strides", i, w.strides[i], "[1, 2^31)");
    if (w.dilations[i] >= kMaxWindowValue) {
      return out_of_range("dilations", i, w.dilations[i], "[1, 2^31)");
    }
  }
  for (size_t i = 0; i < 2 * ns; ++i) {
    if (pads[i] >= kMaxWindowValue) return out_of_range("pads", i, pads[i], "[0, 2^31)");
  }
  w.pads_begin.assign(pads.begin(), pads.begin() + static_cast<long>(ns));
  w.pads_end.assign(pads.begin() + static_cast<long>(ns), pads.end());
  if (w.auto_pad != "NOTSET" && w.auto_pad != "VALID" && w.auto_pad != "SAME_UPPER" &&
      w.auto_pad != "SAME_LOWER") {
    return NodeError(node, "unknown auto_pad '" + w.auto_pad + "'");
  }
  return w;
}

Status CheckTransposeSizes(const Node& node, const std::vector<int64_t>& out_pad,
                           const std::vector<int64_t>& out_shape, size_t i, int64_t in) {
  constexpr int64_t kMax = int64_t{1} << 31;
  if (i < out_pad.size() && (out_pad[i] < 0 || out_pad[i] >= kMax)) {
    return NodeError(node, "output_padding " + std::to_string(out_pad[i]) + " is outside [0, 2^31)");
  }
  if (i < out_shape.size() && (out_shape[i] < 1 || out_shape[i] >= kMax)) {
    return NodeError(node, "output_shape " + std::to_string(out_shape[i]) + " is outside [1, 2^31)");
  }
  if (in >= kMax) {
    return NodeError(node, "spatial input size " + std::to_string(in) + " is 2^31 or more");
  }
  return Status::Ok();
}

Result<int64_t> WindowOutputDim(const Node& node, Window& w, size_t i, int64_t in) {
  if (in < 0) return int64_t{-1};
  // ReadWindow bounds kernel, strides, dilations and pads below 2^31; a Window built
  // elsewhere is re-checked here. Bounding `in` by 2^61 then keeps every sum below 2^63.
  const int64_t s = w.strides[i];
  if (w.kernel[i] < 1 || w.kernel[i] >= kMaxWindowValue || s < 1 || s >= kMaxWindowValue ||
      w.dilations[i] < 1 || w.dilations[i] >= kMaxWindowValue || w.pads_begin[i] < 0 ||
      w.pads_begin[i] >= kMaxWindowValue || w.pads_end[i] < 0 ||
      w.pads_end[i] >= kMaxWindowValue) {
    return NodeError(node, "kernel_shape/strides/dilations/pads of spatial dimension " +
                               std::to_string(i) + " out of range [0, 2^31)");
  }
  if (in >= (int64_t{1} << 61)) {
    return NodeError(node, "spatial dimension " + std::to_string(i) + " of size " +
                               std::to_string(in) + " is too large");
  }
  const int64_t dk = (w.kernel[i] - 1) * w.dilations[i] + 1;
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
    const int64_t out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (out - 1) * s + dk - in);
    const int64_t small = total / 2;
    w.pads_begin[i] = w.auto_pad == "SAME_UPPER" ? small : total - small;
    w.pads_end[i] = total - w.pads_begin[i];
    return out;
  }
  if (w.auto_pad == "VALID") w.pads_begin[i] = w.pads_end[i] = 0;
  const int64_t padded = in + w.pads_begin[i] + w.pads_end[i];
  if (padded < dk) {
    return NodeError(node, "spatial dimension " + std::to_string(i) + " of size " +
                               std::to_string(in) + " (padded " + std::to_string(padded) +
                               ") is smaller than the dilated kernel " + std::to_string(dk));
  }
  if (!w.ceil_mode) return (padded - dk) / s + 1;
  int64_t out = (padded - dk + s - 1) / s + 1;
  // A window that would start entirely inside the end padding is dropped (as PyTorch
  // and the current ONNX reference do).
  if ((out - 1) * s >= in + w.pads_begin[i]) --out;
  return out;
}

Result<Geometry3> MakeGeometry3(const Node& node, const Window& w,
                                const std::vector<int64_t>& in_spatial,
                                const std::vector<int64_t>& out_spatial) {
  const size_t ns = in_spatial.size();
  if (ns > 3 || ns == 0) {
    return NodeUnsupported(node, std::to_string(ns) + " spatial dimensions (1 to 3 supported)");
  }
  Geometry3 g;
  const size_t off = 3 - ns;
  for (size_t i = 0; i < ns; ++i) {
    g.in[off + i] = in_spatial[i];
    g.k[off + i] = w.kernel[i];
    g.s[off + i] = w.strides[i];
    g.d[off + i] = w.dilations[i];
    g.pb[off + i] = w.pads_begin[i];
    g.pe[off + i] = w.pads_end[i];
    g.out[off + i] = out_spatial[i];
  }
  return g;
}

std::vector<double> ToDoubles(const Tensor& t) {
  const size_t n = static_cast<size_t>(t.numel());
  if (t.dtype() == DataType::kFloat) {
    const float* p = t.data<float>();
    return std::vector<double>(p, p + n);
  }
  if (t.dtype() == DataType::kDouble) {
    const double* p = t.data<double>();
    return std::vector<double>(p, p + n);
  }
  return t.ToDoubleVector();
}

void StoreDoubles(Tensor& t, const double* v) {
  const int64_t n = t.numel();
  if (t.dtype() == DataType::kFloat) {
    float* p = t.data<float>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(v[i]);
    return;
  }
  if (t.dtype() == DataType::kDouble) {
    std::copy(v, v + n, t.data<double>());
    return;
  }
  for (int64_t i = 0; i < n; ++i) t.SetDouble(i, v[i]);
}

}  // namespace switchyard::ops
