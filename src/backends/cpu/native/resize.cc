// Native Resize (10, 11, 13, 18, 19) and Upsample (7, 9): nearest for any fixed-size
// dtype (all nearest_mode values), linear (N-linear) and cubic for fp32, with every
// coordinate_transformation_mode except tf_crop_and_resize. Scales or sizes may be
// runtime tensors, so output shapes and taps are resolved per call. Resampling is
// separable: per-axis taps (index, weight) applied one resized axis at a time.
#include <algorithm>
#include <cmath>

#include "backends/cpu/native/native.h"
#include "backends/cpu/native/nhwc.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

struct ResizeAttrs {
  std::string mode = "nearest", ctm = "half_pixel", nearest_mode = "round_prefer_floor";
  std::string policy = "stretch";
  bool legacy = false;  // Resize-10 / Upsample: asymmetric, nearest floor/ceil by scale
  bool upsample = false;
  int version = 11;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  std::vector<int64_t> axes;
  std::vector<float> attr_scales;  // Upsample-7
};

ResizeAttrs ReadAttrs(const Node& node, int version) {
  ResizeAttrs a;
  a.upsample = node.op_type == "Upsample";
  a.version = version;
  a.mode = node.GetString("mode", "nearest");
  if (a.upsample && a.mode == "bilinear") a.mode = "linear";
  a.legacy = a.upsample || version < 11;
  a.ctm = a.legacy ? "asymmetric" : node.GetString("coordinate_transformation_mode", "half_pixel");
  a.nearest_mode = node.GetString("nearest_mode", "round_prefer_floor");
  a.policy = node.GetString("keep_aspect_ratio_policy", "stretch");
  a.cubic_a = node.GetFloat("cubic_coeff_a", -0.75f);
  a.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
  a.axes = node.GetInts("axes");
  a.attr_scales = node.GetFloats("scales");
  return a;
}

bool Supported(const ResizeAttrs& a, const Node& node) {
  static const char* kCtms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                "align_corners", "asymmetric", "tf_half_pixel_for_nn"};
  if (std::find(std::begin(kCtms), std::end(kCtms), a.ctm) == std::end(kCtms)) return false;
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") return false;
  if (a.legacy && a.mode == "cubic") return false;
  if (a.nearest_mode != "round_prefer_floor" && a.nearest_mode != "round_prefer_ceil" &&
      a.nearest_mode != "floor" && a.nearest_mode != "ceil") {
    return false;
  }
  if (a.policy != "stretch" && a.policy != "not_larger" && a.policy != "not_smaller") return false;
  return node.GetInt("antialias", 0) == 0;
}

// Input slots of scales / sizes per variant.
void Slots(const ResizeAttrs& a, int* scales, int* sizes) {
  *scales = *sizes = -1;
  if (a.upsample) {
    if (a.version >= 9) *scales = 1;
  } else if (a.version < 11) {
    *scales = 1;
  } else {
    *scales = 2;
    *sizes = 3;
  }
}

struct Plan {
  std::vector<double> scales;
  Shape sizes;
};

const TensorRef* Input(const std::vector<const TensorRef*>& in, int i) {
  if (i < 0 || static_cast<size_t>(i) >= in.size() || !in[i] || in[i]->numel() == 0) return nullptr;
  return in[i];
}

// Per-axis scales and output sizes, as the reference's PlanResize.
Result<Plan> MakePlan(const Node& node, const ResizeAttrs& a, const std::vector<const TensorRef*>& in) {
  const Shape& x = in[0]->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  Plan p{std::vector<double>(x.size(), 1.0), x};
  std::vector<int64_t> axes = a.axes;
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (int64_t& ax : axes) {
    SY_ASSIGN_OR_RETURN(ax, ops::NormalizeAxis(node, ax, rank));
  }
  int si, zi;
  Slots(a, &si, &zi);
  const TensorRef* scales = Input(in, si);
  const TensorRef* sizes = Input(in, zi);
  const bool use_attr = a.upsample && a.version < 9;
  if ((scales != nullptr) + (sizes != nullptr) + use_attr != 1) {
    return ops::NodeError(node, "exactly one of scales and sizes must be given");
  }
  if (scales || use_attr) {
    std::vector<double> given;
    if (use_attr) {
      given.assign(a.attr_scales.begin(), a.attr_scales.end());
    } else if (scales->dtype == DataType::kFloat) {
      given.assign(scales->as<float>(), scales->as<float>() + scales->numel());
    } else if (scales->dtype == DataType::kDouble) {
      given.assign(scales->as<double>(), scales->as<double>() + scales->numel());
    } else {
      return ops::NodeError(node, "scales must be float32 or float64");
    }
    if (given.size() != axes.size()) {
      return ops::NodeError(node, "scales has " + std::to_string(given.size()) + " values for " +
                                      std::to_string(axes.size()) + " axes");
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      if (!(given[i] > 0.0)) return ops::NodeError(node, "scales must be positive");
      p.scales[axes[i]] = given[i];
      p.sizes[axes[i]] = static_cast<int64_t>(std::floor(static_cast<double>(x[axes[i]]) * given[i]));
    }
    return p;
  }
  const std::vector<int64_t> want = ReadInts(*sizes);
  if (want.size() != axes.size()) return ops::NodeError(node, "sizes length does not match axes");
  double common = a.policy == "not_larger" ? 1e300 : 0.0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t ax = axes[i];
    if (want[i] < 1 || x[ax] < 1) return ops::NodeError(node, "sizes and input dims must be positive");
    const double s = static_cast<double>(want[i]) / static_cast<double>(x[ax]);
    common = a.policy == "not_larger" ? std::min(common, s) : std::max(common, s);
    p.scales[ax] = s;
    p.sizes[ax] = want[i];
  }
  if (a.policy != "stretch") {
    for (int64_t ax : axes) {
      p.scales[ax] = common;
      p.sizes[ax] = static_cast<int64_t>(std::floor(common * static_cast<double>(x[ax]) + 0.5));
    }
  }
  return p;
}

double SourceCoord(const ResizeAttrs& a, double x, double scale, int64_t in, int64_t out) {
  const std::string& m = a.ctm;
  const double len = scale * static_cast<double>(in);
  if (m == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    const double adj = static_cast<double>(out) / len, center = static_cast<double>(in) / 2.0;
    return center * (1.0 - adj) + (x + 0.5) / scale - 0.5;
  }
  if (m == "pytorch_half_pixel") return len > 1.0 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m == "align_corners") return len == 1.0 ? 0.0 : x * static_cast<double>(in - 1) / (len - 1.0);
  if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  return x / scale;  // asymmetric
}

double Cubic(double a, double x) {
  x = std::fabs(x);
  if (x <= 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

// Taps of one axis: `n` per output index (1 nearest, 2 linear, 4 cubic).
struct Taps {
  int n = 1;
  std::vector<int64_t> idx;
  std::vector<float> w;
  bool identity = true;
};

Taps MakeTaps(const ResizeAttrs& a, int64_t in, int64_t out, double scale) {
  Taps t;
  t.n = a.mode == "nearest" ? 1 : a.mode == "linear" ? 2 : 4;
  for (int64_t j = 0; j < out; ++j) {
    const double x = SourceCoord(a, static_cast<double>(j), scale, in, out);
    if (a.mode == "nearest") {
      double r;
      if (a.legacy) r = scale < 1.0 ? std::ceil(x) : std::floor(x);
      else if (a.nearest_mode == "round_prefer_ceil") r = std::floor(x + 0.5);
      else if (a.nearest_mode == "floor") r = std::floor(x);
      else if (a.nearest_mode == "ceil") r = std::ceil(x);
      else r = std::ceil(x - 0.5);
      t.idx.push_back(std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1));
      t.w.push_back(1.f);
      continue;
    }
    const double x0 = std::floor(x), ratio = x - x0;
    const int64_t start = a.mode == "linear" ? 0 : -1;
    double w[4], sum = 0.0;
    for (int i = 0; i < t.n; ++i) {
      const double arg = static_cast<double>(start + i) - ratio;
      double c = a.mode == "linear" ? std::max(0.0, 1.0 - std::fabs(arg)) : Cubic(a.cubic_a, arg);
      const int64_t src = static_cast<int64_t>(x0) + start + i;
      if (a.exclude_outside && (src < 0 || src >= in)) c = 0.0;
      w[i] = c;
      sum += c;
      t.idx.push_back(std::clamp<int64_t>(src, 0, in - 1));
    }
    for (int i = 0; i < t.n; ++i) t.w.push_back(static_cast<float>(sum != 0.0 ? w[i] / sum : w[i]));
  }
  t.identity = in == out;
  for (int64_t j = 0; j < out && t.identity; ++j) {
    for (int i = 0; i < t.n; ++i) {
      const size_t k = static_cast<size_t>(j * t.n + i);
      if (t.w[k] != 0.f && (t.idx[k] != j || t.w[k] != 1.f)) t.identity = false;
    }
  }
  return t;
}

// Nearest for any element type: y[o] = x[sum idx_d(o_d) * stride_d]; the last axis
// gathers through its index map.
template <typename T>
void NearestGather(const T* x, T* y, const Shape& xs, const Shape& ys, const std::vector<Taps>& taps,
                   int threads) {
  const size_t rank = ys.size();
  const Shape st = ops::Strides(xs);
  const int64_t inner = rank ? ys[rank - 1] : 1, rows = NumElements(ys) / std::max<int64_t>(inner, 1);
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  std::vector<int64_t> last(static_cast<size_t>(inner));
  for (int64_t j = 0; j < inner; ++j) last[j] = taps[rank - 1].idx[j] * st[rank - 1];
  ParallelFor(rows, threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
    Shape idx(rank, 0);
    for (int64_t row = b; row < e; ++row) {
      int64_t r = row, off = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        idx[d] = r % ys[d];
        r /= ys[d];
        off += taps[d].idx[idx[d]] * st[d];
      }
      const T* src = x + off;
      T* dst = y + row * inner;
      if (taps[rank - 1].identity) {  // e.g. the channels of an nhwc image: whole rows
        std::memcpy(dst, src, static_cast<size_t>(inner) * sizeof(T));
        continue;
      }
      for (int64_t j = 0; j < inner; ++j) dst[j] = src[last[j]];
    }
  });
}

// Resamples fp32 `src` (shape `shape`) along `axis` with taps `t` into `dst`.
void ResampleAxis(const float* src, float* dst, Shape& shape, size_t axis, const Taps& t, int threads) {
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t in = shape[axis], out = static_cast<int64_t>(t.idx.size()) / t.n;
  const int n = t.n;
  ParallelFor(outer * out, threads, std::max<int64_t>(1, 8192 / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t o = k / out, j = k % out;
      const float* s = src + o * in * inner;
      float* d = dst + k * inner;
      const int64_t* ix = t.idx.data() + j * n;
      const float* w = t.w.data() + j * n;
      if (inner == 1) {
        float acc = 0.f;
        for (int i = 0; i < n; ++i) acc += w[i] * s[ix[i]];
        d[0] = acc;
        continue;
      }
      const float* r0 = s + ix[0] * inner;
      for (int64_t q = 0; q < inner; ++q) d[q] = w[0] * r0[q];
      for (int i = 1; i < n; ++i) {
        if (w[i] == 0.f) continue;
        const float* ri = s + ix[i] * inner;
        for (int64_t q = 0; q < inner; ++q) d[q] += w[i] * ri[q];
      }
    }
  });
}

// `nhwc`: X and Y hold nhwc bytes of their 4-D NCHW shapes; the plan is made on the NCHW
// shapes and then applied to the plain [N,H,W,C] tensors those bytes are.
Status RunResize(const Node& node, const ResizeAttrs& a, bool nhwc, const KernelIO& io) {
  SY_ASSIGN_OR_RETURN(Plan p, MakePlan(node, a, io.inputs));
  const TensorRef& x = *io.inputs[0];
  TensorRef& y = *io.outputs[0];
  if (y.numel() == 0 || x.numel() == 0) return Status::Ok();
  std::vector<Taps> taps;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    taps.push_back(MakeTaps(a, x.shape[d], p.sizes[d], p.scales[d]));
  }
  Shape xs = x.shape, ys = y.shape;
  if (nhwc) {
    std::vector<Taps> moved(4);
    Shape sizes(4);
    for (size_t d = 0; d < 4; ++d) {
      moved[NhwcAxis(d)] = std::move(taps[d]);
      sizes[NhwcAxis(d)] = p.sizes[d];
    }
    taps = std::move(moved);
    p.sizes = sizes;
    xs = NhwcOrder(xs);
    ys = NhwcOrder(ys);
  }
  if (a.mode == "nearest") {
    switch (DataTypeSize(x.dtype)) {
      case 1: NearestGather(x.as<uint8_t>(), y.as<uint8_t>(), xs, ys, taps, io.threads); break;
      case 2: NearestGather(x.as<uint16_t>(), y.as<uint16_t>(), xs, ys, taps, io.threads); break;
      case 4: NearestGather(x.as<uint32_t>(), y.as<uint32_t>(), xs, ys, taps, io.threads); break;
      default: NearestGather(x.as<uint64_t>(), y.as<uint64_t>(), xs, ys, taps, io.threads);
    }
    return Status::Ok();
  }
  std::vector<size_t> axes;
  for (size_t d = 0; d < taps.size(); ++d) {
    if (!taps[d].identity) axes.push_back(d);
  }
  if (axes.empty()) {
    std::memcpy(y.data, x.data, static_cast<size_t>(x.numel()) * sizeof(float));
    return Status::Ok();
  }
  // Ping-pong between two per-thread buffers; the last pass writes into y.
  thread_local std::vector<float> buf[2];
  Shape shape = xs;
  const float* src = x.as<float>();
  for (size_t i = 0; i < axes.size(); ++i) {
    Shape next = shape;
    next[axes[i]] = p.sizes[axes[i]];
    float* dst = y.as<float>();
    if (i + 1 < axes.size()) {
      std::vector<float>& b = buf[i % 2];
      b.resize(static_cast<size_t>(NumElements(next)));
      dst = b.data();
    }
    ResampleAxis(src, dst, shape, axes[i], taps[axes[i]], io.threads);
    shape = next;
    src = dst;
  }
  return Status::Ok();
}

bool SupportsResize(const Node& node, const KernelBuildContext& ctx) {
  if (ctx.input_dtypes.empty() || ctx.input_dtypes[0] == DataType::kString ||
      ctx.input_dtypes[0] == DataType::kUndefined) {
    return false;
  }
  const ResizeAttrs a = ReadAttrs(node, NodeVersion(node, ctx));
  if (!Supported(a, node)) return false;
  if (a.mode != "nearest" && ctx.input_dtypes[0] != DataType::kFloat) return false;
  int si, zi;
  Slots(a, &si, &zi);
  for (int i : {si, zi}) {
    if (i >= 0 && static_cast<size_t>(i) < ctx.input_dtypes.size() &&
        ctx.input_dtypes[i] != DataType::kUndefined && ctx.input_dtypes[i] != DataType::kFloat &&
        ctx.input_dtypes[i] != DataType::kDouble && ctx.input_dtypes[i] != DataType::kInt64 &&
        ctx.input_dtypes[i] != DataType::kInt32) {
      return false;
    }
  }
  return true;
}

Status PrepareResize(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  spec.params["version"] = NodeVersion(node, ctx);
  if (InputIsNhwc(ctx)) DeclareNhwc(node, spec, {0});  // roi, scales, sizes stay plain
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateResize(const StepView& v) {
  const Node node = v.node;
  const int version = v.params.value("version", node.since_version > 0 ? node.since_version : 11);
  const ResizeAttrs a = ReadAttrs(node, version);
  if (!Supported(a, node)) return ops::NodeUnsupported(node, "resize mode not supported by the native kernel");
  return MakeKernel(
      [node, a](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
        if (in.empty() || !in[0]) return ops::NodeError(node, "X is required");
        SY_ASSIGN_OR_RETURN(Plan p, MakePlan(node, a, in));
        for (int64_t s : p.sizes) {
          if (s < 0) return ops::NodeError(node, "negative output size");
        }
        return Shapes{p.sizes};
      },
      [node, a, nhwc = RunsNhwc(v)](const KernelIO& io) { return RunResize(node, a, nhwc, io); });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeResize) {
  RegisterNative(reg, "", "Resize", SupportsResize, CreateResize, PrepareResize);
  RegisterNative(reg, "", "Upsample", SupportsResize, CreateResize, PrepareResize);
}

}  // namespace switchyard::native
