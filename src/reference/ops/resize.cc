// Resize (opsets 10, 11, 13, 18, 19) and the deprecated Upsample (7, 9): nearest,
// linear and cubic resampling applied separably, one axis at a time, in fp64.
#include <cmath>

#include "reference/ops/conv_common.h"

namespace switchyard::ops {
namespace {

struct ResizeAttrs {
  std::string mode = "nearest";
  std::string ctm = "half_pixel";        // coordinate_transformation_mode
  std::string nearest_mode = "round_prefer_floor";
  bool legacy = false;  // Resize-10 / Upsample: asymmetric, nearest "simple" rounding
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0.0;
};

Result<ResizeAttrs> ReadAttrs(const Node& node, int64_t version, bool upsample) {
  ResizeAttrs a;
  a.mode = node.GetString("mode", "nearest");
  if (upsample && a.mode == "bilinear") a.mode = "linear";
  a.legacy = upsample || version < 11;
  a.ctm = a.legacy ? "asymmetric" : node.GetString("coordinate_transformation_mode", "half_pixel");
  a.nearest_mode = node.GetString("nearest_mode", "round_prefer_floor");
  a.cubic_a = node.GetFloat("cubic_coeff_a", -0.75f);
  a.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
  a.antialias = node.GetInt("antialias", 0) != 0;
  a.extrapolation = node.GetFloat("extrapolation_value", 0.0f);
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") {
    return NodeError(node, "unknown mode '" + a.mode + "'");
  }
  if (a.legacy && a.mode == "cubic") return NodeError(node, "cubic needs Resize-11 or newer");
  static const char* kCtms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                                "tf_crop_and_resize"};
  if (std::find(std::begin(kCtms), std::end(kCtms), a.ctm) == std::end(kCtms)) {
    return NodeError(node, "unknown coordinate_transformation_mode '" + a.ctm + "'");
  }
  if (a.nearest_mode != "round_prefer_floor" && a.nearest_mode != "round_prefer_ceil" &&
      a.nearest_mode != "floor" && a.nearest_mode != "ceil") {
    return NodeError(node, "unknown nearest_mode '" + a.nearest_mode + "'");
  }
  return a;
}

// Input-space coordinate of output index x along one axis. As in the ONNX reference, the
// resized length is the real-valued in * scale (the integer `out` only for the
// half_pixel_symmetric adjustment).
double SourceCoord(const ResizeAttrs& a, double x, double scale, int64_t in, int64_t out,
                   double roi_start, double roi_end) {
  const std::string& m = a.ctm;
  const double len = scale * static_cast<double>(in);
  if (m == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    const double adj = static_cast<double>(out) / len;
    const double center = static_cast<double>(in) / 2.0;
    return center * (1.0 - adj) + (x + 0.5) / scale - 0.5;
  }
  if (m == "pytorch_half_pixel") return len > 1.0 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m == "align_corners") {
    return len == 1.0 ? 0.0 : x * static_cast<double>(in - 1) / (len - 1.0);
  }
  if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (m == "tf_crop_and_resize") {
    const double span = static_cast<double>(in - 1);
    return len > 1.0 ? roi_start * span + x * (roi_end - roi_start) * span / (len - 1.0)
                     : 0.5 * (roi_start + roi_end) * span;
  }
  return x / scale;  // asymmetric
}

double Cubic(double a, double x) {
  x = std::fabs(x);
  if (x <= 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

// For each output index of one axis: its weighted input taps, and whether it lies
// outside the input (tf_crop_and_resize extrapolation).
struct AxisTaps {
  std::vector<int64_t> begin;  // out+1 offsets into idx/w
  std::vector<int64_t> idx;
  std::vector<double> w;
  std::vector<bool> outside;
  bool identity = true;
};

AxisTaps MakeTaps(const ResizeAttrs& a, int64_t in, int64_t out, double scale, double rs,
                  double re) {
  AxisTaps t;
  t.begin.push_back(0);
  for (int64_t j = 0; j < out; ++j) {
    const double x = SourceCoord(a, static_cast<double>(j), scale, in, out, rs, re);
    t.outside.push_back(a.ctm == "tf_crop_and_resize" &&
                        (x < 0.0 || x > static_cast<double>(in - 1)));
    if (a.mode == "nearest") {
      double r;
      if (a.legacy) {
        r = scale < 1.0 ? std::ceil(x) : std::floor(x);
      } else if (a.nearest_mode == "round_prefer_ceil") {
        r = std::floor(x + 0.5);
      } else if (a.nearest_mode == "floor") {
        r = std::floor(x);
      } else if (a.nearest_mode == "ceil") {
        r = std::ceil(x);
      } else {
        r = std::ceil(x - 0.5);
      }
      t.idx.push_back(std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1));
      t.w.push_back(1.0);
    } else {
      const double x0 = std::floor(x), ratio = x - x0;
      // Antialiasing widens the filter by 1/scale when downsampling.
      const double s = a.antialias ? std::min(scale, 1.0) : 1.0;
      const double radius = a.mode == "linear" ? 1.0 : 2.0;
      const int64_t start = static_cast<int64_t>(std::floor(-radius / s)) + 1;
      const int64_t end = static_cast<int64_t>(2 * radius) - start;  // exclusive
      const size_t first = t.w.size();
      double sum = 0.0;
      for (int64_t i = start; i < end; ++i) {
        const double arg = (static_cast<double>(i) - ratio) * s;
        double c = a.mode == "linear" ? std::max(0.0, 1.0 - std::fabs(arg)) : Cubic(a.cubic_a, arg);
        const int64_t src = static_cast<int64_t>(x0) + i;
        if (a.exclude_outside && (src < 0 || src >= in)) c = 0.0;
        sum += c;
        t.idx.push_back(std::clamp<int64_t>(src, 0, in - 1));
        t.w.push_back(c);
      }
      if (sum != 0.0) {
        for (size_t k = first; k < t.w.size(); ++k) t.w[k] /= sum;
      }
    }
    t.begin.push_back(static_cast<int64_t>(t.idx.size()));
  }
  if (out != in) t.identity = false;
  for (int64_t j = 0; j < out && t.identity; ++j) {
    for (int64_t k = t.begin[j]; k < t.begin[j + 1]; ++k) {
      if (t.w[k] != 0.0 && (t.idx[k] != j || t.w[k] != 1.0)) t.identity = false;
    }
    if (t.outside[j]) t.identity = false;
  }
  return t;
}

// Resamples `data` (shape `shape`) along `axis` with taps `t` into a new buffer.
std::vector<double> ResampleAxis(const std::vector<double>& data, std::vector<int64_t>& shape,
                                 size_t axis, const AxisTaps& t) {
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t in = shape[axis], out = static_cast<int64_t>(t.begin.size()) - 1;
  std::vector<double> res(static_cast<size_t>(outer * out * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    const double* src = data.data() + o * in * inner;
    double* dst = res.data() + o * out * inner;
    for (int64_t j = 0; j < out; ++j) {
      double* dr = dst + j * inner;
      for (int64_t k = t.begin[j]; k < t.begin[j + 1]; ++k) {
        const double w = t.w[k];
        if (w == 0.0) continue;
        const double* sr = src + t.idx[k] * inner;
        for (int64_t i = 0; i < inner; ++i) dr[i] += w * sr[i];
      }
    }
  }
  shape[axis] = out;
  return res;
}

// The per-axis scales and output sizes from the scales/sizes inputs or attribute.
struct ResizePlan {
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  std::vector<double> roi_start, roi_end;
};

// floor(in * scale) as an int64, refusing a product that is not finite or not below 2^62
// (a fuzzed scale of 1e30 would otherwise make the float-to-int cast undefined).
Result<int64_t> ScaledSize(const Node& node, int64_t in, double scale, size_t axis) {
  const double v = std::floor(static_cast<double>(in) * scale);
  if (!std::isfinite(v) || v < 0.0 || v >= 4611686018427387904.0 /* 2^62 */) {
    return NodeError(node, "scales[" + std::to_string(axis) + "] = " + std::to_string(scale) +
                               " gives an output size out of range for input size " +
                               std::to_string(in));
  }
  return static_cast<int64_t>(v);
}

Result<ResizePlan> PlanResize(const Node& node, int64_t version, const std::vector<int64_t>& in,
                              const Tensor* roi, const Tensor* scales, const Tensor* sizes,
                              const std::vector<float>* attr_scales) {
  const size_t rank = in.size();
  ResizePlan p;
  p.scales.assign(rank, 1.0);
  p.sizes = in;
  p.roi_start.assign(rank, 0.0);
  p.roi_end.assign(rank, 1.0);
  std::vector<int64_t> axes = node.GetInts("axes");
  if (axes.empty()) {
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  for (int64_t& ax : axes) {
    SY_ASSIGN_OR_RETURN(ax, NormalizeAxis(node, ax, static_cast<int64_t>(rank)));
  }
  if (scales && scales->numel() == 0) scales = nullptr;
  if (sizes && sizes->numel() == 0) sizes = nullptr;
  if ((scales != nullptr) + (sizes != nullptr) + (attr_scales != nullptr) != 1) {
    return NodeError(node, "exactly one of scales and sizes must be given");
  }
  if (roi && roi->numel() > 0) {
    if (roi->numel() != static_cast<int64_t>(2 * axes.size())) {
      return NodeError(node, "roi must have 2 x " + std::to_string(axes.size()) + " values");
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      p.roi_start[static_cast<size_t>(axes[i])] = roi->GetDouble(static_cast<int64_t>(i));
      p.roi_end[static_cast<size_t>(axes[i])] = roi->GetDouble(static_cast<int64_t>(i + axes.size()));
    }
  }
  std::vector<double> given;
  if (scales) given = scales->ToDoubleVector();
  if (attr_scales) given.assign(attr_scales->begin(), attr_scales->end());
  if (!given.empty() || scales || attr_scales) {
    if (given.size() != axes.size()) {
      return NodeError(node, "scales has " + std::to_string(given.size()) +
                                 " values for " + std::to_string(axes.size()) + " axes");
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t ax = static_cast<size_t>(axes[i]);
      if (!(given[i] > 0.0)) return NodeError(node, "scales must be positive");
      p.scales[ax] = given[i];
      SY_ASSIGN_OR_RETURN(p.sizes[ax], ScaledSize(node, in[ax], given[i], ax));
    }
    return p;
  }
  std::vector<int64_t> want = sizes->ToInt64Vector();
  if (want.size() != axes.size()) return NodeError(node, "sizes length does not match axes");
  const std::string policy = node.GetString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return NodeError(node, "unknown keep_aspect_ratio_policy '" + policy + "'");
  }
  double common = policy == "not_larger" ? 1e300 : 0.0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t ax = static_cast<size_t>(axes[i]);
    if (want[i] < 1 || in[ax] < 1) return NodeError(node, "sizes and input dims must be positive");
    const double s = static_cast<double>(want[i]) / static_cast<double>(in[ax]);
    common = policy == "not_larger" ? std::min(common, s) : std::max(common, s);
    p.scales[ax] = s;
    p.sizes[ax] = want[i];
  }
  if (policy != "stretch") {
    for (int64_t ax : axes) {
      const size_t a = static_cast<size_t>(ax);
      p.scales[a] = common;
      // floor(common * in + 0.5): with not_smaller one huge entry of sizes scales every axis.
      const double v = std::floor(common * static_cast<double>(in[a]) + 0.5);
      if (!std::isfinite(v) || v >= 4611686018427387904.0 /* 2^62 */) {
        return NodeError(node, "sizes with keep_aspect_ratio_policy '" + policy +
                                   "' gives axis " + std::to_string(a) +
                                   " an output size out of range");
      }
      p.sizes[a] = static_cast<int64_t>(v);
    }
  }
  (void)version;
  return p;
}

// Input positions of roi/scales/sizes per variant: Resize-10 and Upsample-9 (X, scales),
// Upsample-7 (X; scales attribute), Resize-11+ (X, roi, scales, sizes).
struct Slots {
  int roi = -1, scales = -1, sizes = -1;
};
Slots SlotsFor(int64_t version, bool upsample) {
  if (upsample) return version >= 9 ? Slots{-1, 1, -1} : Slots{};
  if (version < 11) return Slots{-1, 1, -1};
  return Slots{1, 2, 3};
}

const Tensor* Slot(const KernelContext& ctx, int i) {
  return i < 0 ? nullptr : ctx.input(static_cast<size_t>(i));
}

Result<std::vector<Tensor>> RunResize(const KernelContext& ctx, bool upsample) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  const Node& node = ctx.node;
  const int64_t version = node.since_version > 0 ? node.since_version : ctx.opset;
  SY_ASSIGN_OR_RETURN(ResizeAttrs a, ReadAttrs(node, version, upsample));
  const Slots sl = SlotsFor(version, upsample);
  std::vector<float> attr_scales = node.GetFloats("scales");
  const bool use_attr = upsample && version < 9;
  if (use_attr && attr_scales.empty()) return NodeError(node, "scales attribute is required");
  SY_ASSIGN_OR_RETURN(ResizePlan p, PlanResize(node, version, x->shape(), Slot(ctx, sl.roi),
                                               Slot(ctx, sl.scales), Slot(ctx, sl.sizes),
                                               use_attr ? &attr_scales : nullptr));
  SY_RETURN_IF_ERROR(CheckedNumElements(p.sizes).status());
  std::vector<double> data = ToDoubles(*x);
  std::vector<int64_t> shape = x->shape();
  std::vector<std::vector<bool>> outside(shape.size());
  for (size_t ax = 0; ax < shape.size(); ++ax) {
    if (p.sizes[ax] < 0) return NodeError(node, "negative output size");
    if (shape[ax] == 0 || p.sizes[ax] == 0) {
      shape[ax] = p.sizes[ax];
      data.clear();
      continue;
    }
    AxisTaps t = MakeTaps(a, shape[ax], p.sizes[ax], p.scales[ax], p.roi_start[ax], p.roi_end[ax]);
    outside[ax] = t.outside;
    if (t.identity) continue;
    data = ResampleAxis(data, shape, ax, t);
  }
  Tensor y(x->dtype(), shape);
  if (y.numel() == 0) return std::vector<Tensor>{std::move(y)};
  if (a.ctm == "tf_crop_and_resize") {
    std::vector<int64_t> idx(shape.size(), 0);
    for (size_t i = 0; i < data.size(); ++i, NextIndex(idx, shape)) {
      for (size_t ax = 0; ax < shape.size(); ++ax) {
        if (outside[ax][static_cast<size_t>(idx[ax])]) {
          data[i] = a.extrapolation;
          break;
        }
      }
    }
  }
  if (IsIntegerType(x->dtype())) {
    for (double& v : data) v = std::nearbyint(v);
  }
  StoreDoubles(y, data.data());
  return std::vector<Tensor>{std::move(y)};
}

Result<std::vector<TensorType>> InferResize(const InferContext& ctx, bool upsample) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "X is required");
  if (!x->has_shape) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  const int64_t version = ctx.node.since_version > 0 ? ctx.node.since_version : ctx.opset;
  SY_RETURN_IF_ERROR(ReadAttrs(ctx.node, version, upsample).status());
  const Slots sl = SlotsFor(version, upsample);
  auto constant = [&](int i) { return i < 0 ? nullptr : ctx.constant(static_cast<size_t>(i)); };
  const Tensor* scales = constant(sl.scales);
  const Tensor* sizes = constant(sl.sizes);
  const bool scales_known = (sl.scales < 0 && sl.sizes < 0) || (scales && scales->numel() > 0) ||
                            (sizes && sizes->numel() > 0);
  std::vector<Dim> dims(x->dims.size());
  if (scales_known && x->is_static()) {
    std::vector<float> attr_scales = ctx.node.GetFloats("scales");
    const bool use_attr = upsample && version < 9;
    SY_ASSIGN_OR_RETURN(ResizePlan p,
                        PlanResize(ctx.node, version, x->StaticShape(), constant(sl.roi),
                                   scales, sizes, use_attr ? &attr_scales : nullptr));
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = Dim(p.sizes[i]);
  } else if (scales && scales->numel() == x->rank()) {
    // Axes with scale 1 keep their (possibly symbolic) size, e.g. the batch.
    for (size_t i = 0; i < dims.size(); ++i) {
      const double s = scales->GetDouble(static_cast<int64_t>(i));
      if (s == 1.0) dims[i] = x->dims[i];
      else if (x->dims[i].is_static()) {
        if (!(s > 0.0)) return NodeError(ctx.node, "scales must be positive");
        SY_ASSIGN_OR_RETURN(const int64_t n, ScaledSize(ctx.node, x->dims[i].value, s, i));
        dims[i] = Dim(n);
      }
    }
  } else if (sizes && sizes->numel() == x->rank() && !ctx.node.Has("axes")) {
    const std::vector<int64_t> sz = sizes->ToInt64Vector();
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = Dim(sz[i]);
  }
  return std::vector<TensorType>{TensorType(x->dtype, dims)};
}

}  // namespace

SY_REGISTER_OPS(Resize) {
  for (int v : {10, 11, 13, 18, 19}) {
    reg.Register({"", "Resize", v, v >= 11 ? 1 : 2, v >= 11 ? 4 : 2, 1, 1,
                  [](const InferContext& c) { return InferResize(c, false); },
                  [](const KernelContext& c) { return RunResize(c, false); }});
  }
  for (int v : {7, 9}) {
    reg.Register({"", "Upsample", v, v >= 9 ? 2 : 1, v >= 9 ? 2 : 1, 1, 1,
                  [](const InferContext& c) { return InferResize(c, true); },
                  [](const KernelContext& c) { return RunResize(c, true); }});
  }
}

}  // namespace switchyard::ops
