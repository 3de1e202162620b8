// Miscellaneous math ops: Det, window functions (Hann, Hamming, Blackman), DFT, STFT,
// MelWeightMatrix, and the random generators (RandomNormal/Uniform[Like], Bernoulli).
#include <cmath>
#include <numbers>
#include <random>

#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

// --- Det -------------------------------------------------------------------------------

Result<std::vector<TensorType>> InferDet(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "input 0 is missing");
  if (x->dtype != DataType::kUndefined && !IsFloatType(x->dtype)) {
    return NodeError(ctx.node, "input must be floating point");
  }
  if (!x->has_shape) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  if (x->rank() < 2) return NodeError(ctx.node, "input must have rank >= 2 ([*, M, M])");
  const Dim& a = x->dims[x->dims.size() - 2];
  const Dim& b = x->dims.back();
  if (a.is_static() && b.is_static() && a.value != b.value) {
    return NodeError(ctx.node, "the last two dimensions must be equal (square matrices)");
  }
  return std::vector<TensorType>{
      TensorType(x->dtype, std::vector<Dim>(x->dims.begin(), x->dims.end() - 2))};
}

// Determinant by LU decomposition with partial pivoting, in double.
double Determinant(std::vector<double> a, int64_t m) {
  double det = 1;
  for (int64_t c = 0; c < m; ++c) {
    int64_t piv = c;
    for (int64_t r = c + 1; r < m; ++r) {
      if (std::fabs(a[static_cast<size_t>(r * m + c)]) > std::fabs(a[static_cast<size_t>(piv * m + c)])) piv = r;
    }
    const double p = a[static_cast<size_t>(piv * m + c)];
    if (p == 0) return 0;
    if (piv != c) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[static_cast<size_t>(c * m + k)], a[static_cast<size_t>(piv * m + k)]);
      det = -det;
    }
    det *= p;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[static_cast<size_t>(r * m + c)] / p;
      for (int64_t k = c; k < m; ++k) a[static_cast<size_t>(r * m + k)] -= f * a[static_cast<size_t>(c * m + k)];
    }
  }
  return det;
}

Result<std::vector<Tensor>> RunDet(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (!IsFloatType(x->dtype())) return NodeError(ctx.node, "input must be floating point");
  if (x->rank() < 2 || x->dim(x->rank() - 1) != x->dim(x->rank() - 2)) {
    return NodeError(ctx.node, "input shape " + ShapeToString(x->shape()) + " is not [*, M, M]");
  }
  const int64_t m = x->dim(x->rank() - 1);
  const std::vector<double> xv = x->ToDoubleVector();
  std::vector<int64_t> out_shape(x->shape().begin(), x->shape().end() - 2);
  int64_t batch = 1;
  for (int64_t d : out_shape) batch *= d;
  std::vector<double> out(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    out[static_cast<size_t>(b)] = Determinant(
        std::vector<double>(xv.begin() + b * m * m, xv.begin() + (b + 1) * m * m), m);
  }
  return std::vector<Tensor>{FromDoubles(x->dtype(), out_shape, out)};
}

// --- Window functions (opset 17) --------------------------------------------------------

enum class WindowFunction { kHann, kHamming, kBlackman };

Result<DataType> OutputDatatype(const Node& node, int64_t def) {
  const DataType t = static_cast<DataType>(node.GetInt("output_datatype", def));
  if (!IsKnownDataType(static_cast<int32_t>(t)) || t == DataType::kString ||
      t == DataType::kBool || t == DataType::kUndefined) {
    return NodeError(node, "unsupported output_datatype " + std::to_string(static_cast<int>(t)));
  }
  return t;
}

Result<std::vector<TensorType>> InferWindow(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(DataType dt, OutputDatatype(ctx.node, 1));
  const TensorType* s = ctx.input(0);
  if (s && s->dtype != DataType::kUndefined && s->dtype != DataType::kInt32 &&
      s->dtype != DataType::kInt64) {
    return NodeError(ctx.node, "size must be int32 or int64");
  }
  std::vector<int64_t> size;
  if (ConstantInts(ctx, 0, &size) && size.size() == 1) {
    if (size[0] < 0) return NodeError(ctx.node, "size must be non-negative");
    return std::vector<TensorType>{TensorType(dt, {Dim(size[0])})};
  }
  return std::vector<TensorType>{TensorType(dt, {Dim()})};
}

Result<std::vector<Tensor>> RunWindow(WindowFunction w, const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* s, RequireInput(ctx, 0));
  if (s->numel() != 1 || !IsIntegerType(s->dtype())) {
    return NodeError(ctx.node, "size must be an integer scalar");
  }
  const int64_t n = s->GetInt64(0);
  if (n < 0) return NodeError(ctx.node, "size must be non-negative, got " + std::to_string(n));
  SY_ASSIGN_OR_RETURN(DataType dt, OutputDatatype(ctx.node, 1));
  // Periodic windows divide by N, symmetric ones by N - 1.
  const double denom = static_cast<double>(ctx.node.GetInt("periodic", 1) ? n : n - 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double x = denom == 0 ? 0 : 2 * std::numbers::pi * static_cast<double>(i) / denom;
    switch (w) {
      case WindowFunction::kHann: v[static_cast<size_t>(i)] = 0.5 - 0.5 * std::cos(x); break;
      case WindowFunction::kHamming:
        v[static_cast<size_t>(i)] = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(x);
        break;
      case WindowFunction::kBlackman:
        v[static_cast<size_t>(i)] = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
        break;
    }
  }
  return std::vector<Tensor>{FromDoubles(dt, {n}, v)};
}

// --- DFT (opset 17: axis attribute; opset 20: axis input) -------------------------------

Result<int64_t> DftAxis(const Node& node, int since, int64_t rank, const Tensor* axis_input) {
  int64_t axis = since >= 20 ? -2 : node.GetInt("axis", 1);
  if (since >= 20 && axis_input) {
    if (axis_input->numel() != 1) return NodeError(node, "axis must be a scalar");
    axis = axis_input->GetInt64(0);
  }
  // The last dimension holds the real/imaginary pair and is never the signal axis.
  if (axis < 0) axis += rank;
  if (axis < 1 && since < 20) return NodeError(node, "axis must be >= 1 (axis 0 is the batch)");
  if (axis < 0 || axis >= rank - 1) {
    return NodeError(node, "axis is out of range for input rank " + std::to_string(rank));
  }
  return axis;
}

Result<std::vector<TensorType>> InferDft(int since, const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "input 0 is missing");
  if (x->dtype != DataType::kUndefined && !IsFloatType(x->dtype)) {
    return NodeError(ctx.node, "input must be floating point");
  }
  if (!x->has_shape) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  if (x->rank() < 2) return NodeError(ctx.node, "input must have rank >= 2");
  const Dim& last = x->dims.back();
  if (last.is_static() && last.value != 1 && last.value != 2) {
    return NodeError(ctx.node, "the last dimension must be 1 (real) or 2 (complex)");
  }
  const Tensor* axis_t = since >= 20 ? ctx.constant(2) : nullptr;
  if (since >= 20 && ctx.input(2) && !axis_t) {
    std::vector<Dim> dims(x->dims.size(), Dim());
    dims.back() = Dim(2);
    return std::vector<TensorType>{TensorType(x->dtype, dims)};
  }
  SY_ASSIGN_OR_RETURN(int64_t axis, DftAxis(ctx.node, since, x->rank(), axis_t));
  std::vector<Dim> dims = x->dims;
  dims.back() = Dim(2);
  Dim n = dims[static_cast<size_t>(axis)];
  if (ctx.input(1)) {
    std::vector<int64_t> len;
    n = ConstantInts(ctx, 1, &len) && len.size() == 1 ? Dim(len[0]) : Dim();
  }
  if (ctx.node.GetInt("onesided", 0) && n.is_static()) n = Dim(n.value / 2 + 1);
  else if (ctx.node.GetInt("onesided", 0)) n = Dim();
  dims[static_cast<size_t>(axis)] = n;
  return std::vector<TensorType>{TensorType(x->dtype, dims)};
}

Result<std::vector<Tensor>> RunDft(int since, const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (!IsFloatType(x->dtype())) return NodeError(ctx.node, "input must be floating point");
  const int64_t rank = x->rank();
  if (rank < 2 || (x->dim(rank - 1) != 1 && x->dim(rank - 1) != 2)) {
    return NodeError(ctx.node, "input shape " + ShapeToString(x->shape()) +
                                   " must end in 1 (real) or 2 (complex)");
  }
  SY_ASSIGN_OR_RETURN(int64_t axis,
                      DftAxis(ctx.node, since, rank, since >= 20 ? ctx.input(2) : nullptr));
  const bool inverse = ctx.node.GetInt("inverse", 0) != 0;
  const bool onesided = ctx.node.GetInt("onesided", 0) != 0;
  if (inverse && onesided) return NodeUnsupported(ctx.node, "onesided inverse DFT");
  const int64_t in_len = x->dim(axis);
  int64_t len = in_len;
  if (const Tensor* l = ctx.input(1)) {
    if (l->numel() != 1 || !IsIntegerType(l->dtype())) {
      return NodeError(ctx.node, "dft_length must be an integer scalar");
    }
    len = l->GetInt64(0);
    if (len <= 0) return NodeError(ctx.node, "dft_length must be positive");
  }
  const int64_t out_len = onesided ? len / 2 + 1 : len;
  const bool complex_in = x->dim(rank - 1) == 2;
  int64_t outer = 1, inner = 1;  // dims before the axis / between the axis and the pair
  for (int64_t d = 0; d < axis; ++d) outer *= x->dim(d);
  for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x->dim(d);
  std::vector<int64_t> out_shape = x->shape();
  out_shape[static_cast<size_t>(axis)] = out_len;
  out_shape.back() = 2;
  const std::vector<double> xv = x->ToDoubleVector();
  std::vector<double> yv(static_cast<size_t>(outer * out_len * inner * 2));
  const int64_t pair = complex_in ? 2 : 1;
  const double sign = inverse ? 1 : -1;
  // Signals shorter than dft_length are zero-padded, longer ones truncated.
  const int64_t used = std::min(in_len, len);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < out_len; ++k) {
        double re = 0, im = 0;
        for (int64_t t = 0; t < used; ++t) {
          const size_t p = static_cast<size_t>(((o * in_len + t) * inner + i) * pair);
          const double a = xv[p], b = complex_in ? xv[p + 1] : 0;
          const double ang = sign * 2 * std::numbers::pi * static_cast<double>((k * t) % len) /
                             static_cast<double>(len);
          re += a * std::cos(ang) - b * std::sin(ang);
          im += a * std::sin(ang) + b * std::cos(ang);
        }
        if (inverse) {
          re /= static_cast<double>(len);
          im /= static_cast<double>(len);
        }
        const size_t q = static_cast<size_t>(((o * out_len + k) * inner + i) * 2);
        yv[q] = re;
        yv[q + 1] = im;
      }
    }
  }
  return std::vector<Tensor>{FromDoubles(x->dtype(), out_shape, yv)};
}

// --- STFT and MelWeightMatrix (opset 17) ------------------------------------------------

Result<int64_t> ScalarInt(const Node& node, const Tensor* t, const char* what) {
  if (!t || t->numel() != 1 || !IsIntegerType(t->dtype())) {
    return NodeError(node, std::string(what) + " must be an integer scalar");
  }
  return t->GetInt64(0);
}

Result<std::vector<TensorType>> InferStft(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "input signal is missing");
  if (x->dtype != DataType::kUndefined && !IsFloatType(x->dtype)) {
    return NodeError(ctx.node, "signal must be floating point");
  }
  if (x->has_shape && x->rank() != 3) return NodeError(ctx.node, "signal must be [batch, length, 1|2]");
  const Dim batch = x->has_shape ? x->dims[0] : Dim();
  return std::vector<TensorType>{TensorType(x->dtype, {batch, Dim(), Dim(), Dim(2)})};
}

Result<std::vector<Tensor>> RunStft(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (!IsFloatType(x->dtype()) || x->rank() != 3 || (x->dim(2) != 1 && x->dim(2) != 2)) {
    return NodeError(ctx.node, "signal must be a float tensor [batch, length, 1|2]");
  }
  SY_ASSIGN_OR_RETURN(int64_t step, ScalarInt(ctx.node, ctx.input(1), "frame_step"));
  const Tensor* window = ctx.input(2);
  int64_t frame = -1;
  if (ctx.input(3)) {
    SY_ASSIGN_OR_RETURN(frame, ScalarInt(ctx.node, ctx.input(3), "frame_length"));
  }
  if (window) {
    if (window->rank() != 1 || (frame >= 0 && window->numel() != frame)) {
      return NodeError(ctx.node, "window must be 1-D with frame_length elements");
    }
    frame = window->numel();
  }
  const int64_t len = x->dim(1);
  if (frame <= 0 || step <= 0 || frame > len) {
    return NodeError(ctx.node, "frame_length and frame_step must be positive and frame_length "
                               "at most the signal length");
  }
  const bool onesided = ctx.node.GetInt("onesided", 1) != 0;
  const bool complex_in = x->dim(2) == 2;
  if (onesided && complex_in) return NodeError(ctx.node, "onesided needs a real signal");
  const int64_t frames = (len - frame) / step + 1, bins = onesided ? frame / 2 + 1 : frame;
  const int64_t batch = x->dim(0), pair = x->dim(2);
  const std::vector<double> xv = x->ToDoubleVector();
  const std::vector<double> w = window ? window->ToDoubleVector() : std::vector<double>(
                                                                       static_cast<size_t>(frame), 1.0);
  std::vector<double> yv(static_cast<size_t>(batch * frames * bins * 2));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t k = 0; k < bins; ++k) {
        double re = 0, im = 0;
        for (int64_t t = 0; t < frame; ++t) {
          const size_t p = static_cast<size_t>((b * len + f * step + t) * pair);
          const double a = xv[p] * w[static_cast<size_t>(t)];
          const double c = complex_in ? xv[p + 1] * w[static_cast<size_t>(t)] : 0;
          const double ang = -2 * std::numbers::pi * static_cast<double>((k * t) % frame) /
                             static_cast<double>(frame);
          re += a * std::cos(ang) - c * std::sin(ang);
          im += a * std::sin(ang) + c * std::cos(ang);
        }
        const size_t q = static_cast<size_t>(((b * frames + f) * bins + k) * 2);
        yv[q] = re;
        yv[q + 1] = im;
      }
    }
  }
  return std::vector<Tensor>{FromDoubles(x->dtype(), {batch, frames, bins, 2}, yv)};
}

Result<std::vector<TensorType>> InferMel(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(DataType dt, OutputDatatype(ctx.node, 1));
  std::vector<int64_t> bins, dft;
  const Dim rows = ConstantInts(ctx, 1, &dft) && dft.size() == 1 ? Dim(dft[0] / 2 + 1) : Dim();
  const Dim cols = ConstantInts(ctx, 0, &bins) && bins.size() == 1 ? Dim(bins[0]) : Dim();
  return std::vector<TensorType>{TensorType(dt, {rows, cols})};
}

// Follows the ONNX reference implementation (triangular filters on integer bin edges).
Result<std::vector<Tensor>> RunMel(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(int64_t n_mel, ScalarInt(ctx.node, ctx.input(0), "num_mel_bins"));
  SY_ASSIGN_OR_RETURN(int64_t dft, ScalarInt(ctx.node, ctx.input(1), "dft_length"));
  SY_ASSIGN_OR_RETURN(int64_t rate, ScalarInt(ctx.node, ctx.input(2), "sample_rate"));
  for (size_t i = 3; i < 5; ++i) {
    if (!ctx.input(i) || ctx.input(i)->numel() != 1) {
      return NodeError(ctx.node, "lower/upper_edge_hertz must be scalars");
    }
  }
  if (n_mel <= 0 || dft <= 0 || rate <= 0) {
    return NodeError(ctx.node, "num_mel_bins, dft_length and sample_rate must be positive");
  }
  SY_ASSIGN_OR_RETURN(DataType dt, OutputDatatype(ctx.node, 1));
  const double lo = ctx.input(3)->GetDouble(0), hi = ctx.input(4)->GetDouble(0);
  const int64_t rows = dft / 2 + 1;
  const double lo_mel = 2595 * std::log10(1 + lo / 700), hi_mel = 2595 * std::log10(1 + hi / 700);
  const double step = (hi_mel - lo_mel) / static_cast<double>(n_mel + 2);
  std::vector<int64_t> edge(static_cast<size_t>(n_mel + 2));
  for (int64_t i = 0; i < n_mel + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + lo_mel) / 2595) - 1);
    edge[static_cast<size_t>(i)] =
        static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
  }
  std::vector<double> out(static_cast<size_t>(rows * n_mel), 0.0);
  auto set = [&](int64_t r, int64_t c, double v) -> Status {
    if (r < 0 || r >= rows) return NodeError(ctx.node, "edge frequencies exceed the DFT bins");
    out[static_cast<size_t>(r * n_mel + c)] = v;
    return Status::Ok();
  };
  for (int64_t i = 0; i < n_mel; ++i) {
    const int64_t l = edge[static_cast<size_t>(i)], c = edge[static_cast<size_t>(i + 1)],
                  h = edge[static_cast<size_t>(i + 2)];
    if (c == l) {
      SY_RETURN_IF_ERROR(set(c, i, 1));
    } else {
      for (int64_t j = l; j <= c; ++j) {
        SY_RETURN_IF_ERROR(set(j, i, static_cast<double>(j - l) / static_cast<double>(c - l)));
      }
    }
    for (int64_t j = c; j < h; ++j) {
      SY_RETURN_IF_ERROR(set(j, i, static_cast<double>(h - j) / static_cast<double>(h - c)));
    }
  }
  return std::vector<Tensor>{FromDoubles(dt, {rows, n_mel}, out)};
}

// --- Random generators -----------------------------------------------------------------

std::mt19937 MakeEngine(const Node& node) {
  if (node.Has("seed")) return std::mt19937(static_cast<uint32_t>(node.GetFloat("seed", 0)));
  std::random_device rd;
  return std::mt19937(rd());
}

Result<DataType> RandomDtype(const Node& node, DataType def) {
  const DataType t = node.Has("dtype") ? static_cast<DataType>(node.GetInt("dtype", 1)) : def;
  if (!IsFloatType(t)) {
    return NodeError(node, std::string("dtype must be a floating-point type, got ") +
                               DataTypeName(t));
  }
  return t;
}

// RandomNormal / RandomUniform: the shape comes from the `shape` attribute.
Result<std::vector<TensorType>> InferRandom(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(DataType dt, RandomDtype(ctx.node, DataType::kFloat));
  if (!ctx.node.Has("shape")) return NodeError(ctx.node, "attribute 'shape' is required");
  return std::vector<TensorType>{TensorType::FromShape(dt, ctx.node.GetInts("shape"))};
}

// *Like and Bernoulli: the shape of input 0; dtype from the attribute or input 0.
Result<std::vector<TensorType>> InferRandomLike(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  if (!x) return NodeError(ctx.node, "input 0 is missing");
  const bool bernoulli = ctx.node.op_type == "Bernoulli";
  DataType dt = x->dtype;
  if (ctx.node.Has("dtype")) dt = static_cast<DataType>(ctx.node.GetInt("dtype", 1));
  if (!bernoulli) {
    SY_ASSIGN_OR_RETURN(dt, RandomDtype(ctx.node, dt));
  }
  TensorType out = *x;
  out.dtype = dt;
  return std::vector<TensorType>{out};
}

Result<std::vector<Tensor>> RunRandom(bool normal, bool like, const KernelContext& ctx) {
  std::vector<int64_t> shape;
  DataType def = DataType::kFloat;
  if (like) {
    SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
    shape = x->shape();
    def = x->dtype();
  } else {
    shape = ctx.node.GetInts("shape");
    SY_RETURN_IF_ERROR(CheckedNumElements(shape).status());
  }
  SY_ASSIGN_OR_RETURN(DataType dt, RandomDtype(ctx.node, def));
  std::mt19937 gen = MakeEngine(ctx.node);
  Tensor out(dt, shape);
  if (normal) {
    std::normal_distribution<double> dist(ctx.node.GetFloat("mean", 0.f),
                                          ctx.node.GetFloat("scale", 1.f));
    for (int64_t i = 0; i < out.numel(); ++i) out.SetDouble(i, dist(gen));
  } else {
    const double lo = ctx.node.GetFloat("low", 0.f), hi = ctx.node.GetFloat("high", 1.f);
    if (!(lo <= hi)) return NodeError(ctx.node, "low must not exceed high");
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < out.numel(); ++i) out.SetDouble(i, lo == hi ? lo : dist(gen));
  }
  return std::vector<Tensor>{std::move(out)};
}

// ONNX's own tests for Bernoulli (and its expansion through RandomUniformLike) compare
// numpy's random stream, which no other generator reproduces; so these two refuse instead
// of producing values that would be reported as wrong. Bernoulli with every probability
// 0 or 1 is deterministic and is computed.
Result<std::vector<Tensor>> RunBernoulli(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  if (!IsFloatType(x->dtype())) return NodeError(ctx.node, "input must be floating point");
  const DataType dt =
      ctx.node.Has("dtype") ? static_cast<DataType>(ctx.node.GetInt("dtype", 1)) : x->dtype();
  if (!IsKnownDataType(static_cast<int32_t>(dt)) || dt == DataType::kString ||
      dt == DataType::kUndefined) {
    return NodeError(ctx.node, "unsupported dtype attribute");
  }
  Tensor out(dt, x->shape());
  for (int64_t i = 0; i < x->numel(); ++i) {
    const double p = x->GetDouble(i);
    if (p != 0 && p != 1) {
      return NodeUnsupported(ctx.node, "random values cannot be reproduced");
    }
    out.SetDouble(i, p);
  }
  return std::vector<Tensor>{std::move(out)};
}

Result<std::vector<Tensor>> RunRandomUniformLike(const KernelContext& ctx) {
  SY_RETURN_IF_ERROR(RequireInput(ctx, 0).status());
  const double lo = ctx.node.GetFloat("low", 0.f), hi = ctx.node.GetFloat("high", 1.f);
  if (lo != hi) return NodeUnsupported(ctx.node, "random values cannot be reproduced");
  return RunRandom(false, true, ctx);
}

}  // namespace

SY_REGISTER_OPS(MiscMath) {
  reg.Register({"", "Det", 11, 1, 1, 1, 1, InferDet, RunDet});
  const std::pair<const char*, WindowFunction> windows[] = {
      {"HannWindow", WindowFunction::kHann}, {"HammingWindow", WindowFunction::kHamming},
      {"BlackmanWindow", WindowFunction::kBlackman}};
  for (const auto& [name, w] : windows) {
    const WindowFunction win = w;
    reg.Register({"", name, 17, 1, 1, 1, 1, InferWindow,
                  [win](const KernelContext& c) { return RunWindow(win, c); }});
  }
  for (int v : {17, 20}) {
    reg.Register({"", "DFT", v, 1, v >= 20 ? 3 : 2, 1, 1,
                  [v](const InferContext& c) { return InferDft(v, c); },
                  [v](const KernelContext& c) { return RunDft(v, c); }});
  }
  reg.Register({"", "STFT", 17, 2, 4, 1, 1, InferStft, RunStft});
  reg.Register({"", "MelWeightMatrix", 17, 5, 5, 1, 1, InferMel, RunMel});
  reg.Register({"", "RandomNormal", 1, 0, 0, 1, 1, InferRandom,
                [](const KernelContext& c) { return RunRandom(true, false, c); }, false});
  reg.Register({"", "RandomUniform", 1, 0, 0, 1, 1, InferRandom,
                [](const KernelContext& c) { return RunRandom(false, false, c); }, false});
  reg.Register({"", "RandomNormalLike", 1, 1, 1, 1, 1, InferRandomLike,
                [](const KernelContext& c) { return RunRandom(true, true, c); }, false});
  reg.Register({"", "RandomUniformLike", 1, 1, 1, 1, 1, InferRandomLike, RunRandomUniformLike,
                false});
  reg.Register({"", "Bernoulli", 15, 1, 1, 1, 1, InferRandomLike, RunBernoulli, false});
}

}  // namespace switchyard::ops
