// GridSample (opsets 16 and 20; 2-D spatial inputs): nearest, bilinear and bicubic
// sampling with zeros, border and reflection padding.
#include <cmath>

#include "reference/ops/conv_common.h"

namespace switchyard::ops {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Pad { kZeros, kBorder, kReflection };

struct Sampler {
  const double* img;
  int64_t h, w;
  Pad pad;
  double lo_x, hi_x, lo_y, hi_y;  // reflection bounds

  static double Reflect(double x, double lo, double hi) {
    const double range = hi - lo;
    if (range <= 0) return lo;
    if (x < lo) {
      const double dx = lo - x;
      const int64_t n = static_cast<int64_t>(dx / range);
      const double r = dx - static_cast<double>(n) * range;
      return n % 2 == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
      const double dx = x - hi;
      const int64_t n = static_cast<int64_t>(dx / range);
      const double r = dx - static_cast<double>(n) * range;
      return n % 2 == 0 ? hi - r : lo + r;
    }
    return x;
  }

  // The pixel at integer (r, c), resolved by the padding mode.
  double At(int64_t r, int64_t c) const {
    if (pad == Pad::kZeros) {
      return (r < 0 || r >= h || c < 0 || c >= w) ? 0.0 : img[r * w + c];
    }
    if (pad == Pad::kReflection) {
      c = static_cast<int64_t>(Reflect(static_cast<double>(c), lo_x, hi_x));
      r = static_cast<int64_t>(Reflect(static_cast<double>(r), lo_y, hi_y));
    }
    r = std::clamp<int64_t>(r, 0, h - 1);
    c = std::clamp<int64_t>(c, 0, w - 1);
    return img[r * w + c];
  }
};

void CubicCoeffs(double t, double c[4]) {
  const double a = -0.75;
  auto near = [a](double x) { return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0; };
  auto far = [a](double x) { return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a; };
  c[0] = far(t + 1.0);
  c[1] = near(t);
  c[2] = near(1.0 - t);
  c[3] = far(2.0 - t);
}

Result<Mode> ReadMode(const Node& node) {
  const std::string m = node.GetString("mode", "bilinear");
  if (m == "bilinear" || m == "linear") return Mode::kLinear;
  if (m == "nearest") return Mode::kNearest;
  if (m == "bicubic" || m == "cubic") return Mode::kCubic;
  return NodeError(node, "unknown mode '" + m + "'");
}

Result<Pad> ReadPad(const Node& node) {
  const std::string p = node.GetString("padding_mode", "zeros");
  if (p == "zeros") return Pad::kZeros;
  if (p == "border") return Pad::kBorder;
  if (p == "reflection") return Pad::kReflection;
  return NodeError(node, "unknown padding_mode '" + p + "'");
}

Result<std::vector<TensorType>> InferGridSample(const InferContext& ctx) {
  const TensorType* x = ctx.input(0);
  const TensorType* g = ctx.input(1);
  if (!x || !g) return NodeError(ctx.node, "X and grid are required");
  SY_RETURN_IF_ERROR(ReadMode(ctx.node).status());
  SY_RETURN_IF_ERROR(ReadPad(ctx.node).status());
  if (!x->has_shape || !g->has_shape) return std::vector<TensorType>{TensorType::Unranked(x->dtype)};
  if (x->rank() != g->rank() || x->rank() < 3) {
    return NodeError(ctx.node, "X and grid must have the same rank >= 3");
  }
  std::vector<Dim> dims = {x->dims[0], x->dims[1]};
  for (size_t i = 1; i + 1 < g->dims.size(); ++i) dims.push_back(g->dims[i]);
  return std::vector<TensorType>{TensorType(x->dtype, dims)};
}

Result<std::vector<Tensor>> RunGridSample(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* grid, RequireInput(ctx, 1));
  const Node& node = ctx.node;
  SY_ASSIGN_OR_RETURN(Mode mode, ReadMode(node));
  SY_ASSIGN_OR_RETURN(Pad pad, ReadPad(node));
  const bool align = node.GetInt("align_corners", 0) != 0;
  if (x->rank() != 4) return NodeUnsupported(node, "only 2-D spatial inputs are supported");
  if (grid->rank() != 4 || grid->dim(0) != x->dim(0) || grid->dim(3) != 2) {
    return NodeError(node, "grid must be [N, H_out, W_out, 2] with X's batch size");
  }
  const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3);
  const int64_t ho = grid->dim(1), wo = grid->dim(2);
  const std::vector<double> xd = ToDoubles(*x), gd = ToDoubles(*grid);
  std::vector<double> out(static_cast<size_t>(n * c * ho * wo));
  Sampler s{nullptr, h, w, pad, 0, 0, 0, 0};
  if (align) {
    s.lo_x = 0; s.hi_x = static_cast<double>(w - 1);
    s.lo_y = 0; s.hi_y = static_cast<double>(h - 1);
  } else {
    s.lo_x = -0.5; s.hi_x = static_cast<double>(w) - 0.5;
    s.lo_y = -0.5; s.hi_y = static_cast<double>(h) - 0.5;
  }
  auto denorm = [align](double v, int64_t len) {
    return align ? (v + 1.0) / 2.0 * static_cast<double>(len - 1)
                 : ((v + 1.0) * static_cast<double>(len) - 1.0) / 2.0;
  };
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oy = 0; oy < ho; ++oy) {
      for (int64_t ox = 0; ox < wo; ++ox) {
        const double* gp = gd.data() + ((b * ho + oy) * wo + ox) * 2;
        double fx = denorm(gp[0], w), fy = denorm(gp[1], h);
        if (mode == Mode::kNearest) {
          fx = std::nearbyint(fx);
          fy = std::nearbyint(fy);
        }
        // Out-of-range coordinates are first brought back for border/reflection.
        if (fx < s.lo_x || fx > s.hi_x || fy < s.lo_y || fy > s.hi_y) {
          if (pad == Pad::kBorder) {
            fx = std::clamp(fx, 0.0, static_cast<double>(w - 1));
            fy = std::clamp(fy, 0.0, static_cast<double>(h - 1));
          } else if (pad == Pad::kReflection) {
            fx = Sampler::Reflect(fx, s.lo_x, s.hi_x);
            fy = Sampler::Reflect(fy, s.lo_y, s.hi_y);
          }
        }
        for (int64_t ch = 0; ch < c; ++ch) {
          s.img = xd.data() + (b * c + ch) * h * w;
          double v = 0.0;
          if (mode == Mode::kNearest) {
            v = s.At(static_cast<int64_t>(fy), static_cast<int64_t>(fx));
          } else if (mode == Mode::kLinear) {
            const double x0 = std::floor(fx), y0 = std::floor(fy);
            const double dx = fx - x0, dy = fy - y0;
            const int64_t ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
            v = (1 - dy) * ((1 - dx) * s.At(iy, ix) + dx * s.At(iy, ix + 1)) +
                dy * ((1 - dx) * s.At(iy + 1, ix) + dx * s.At(iy + 1, ix + 1));
          } else {
            const double x0 = std::floor(fx), y0 = std::floor(fy);
            double cx[4], cy[4];
            CubicCoeffs(fx - x0, cx);
            CubicCoeffs(fy - y0, cy);
            const int64_t ix = static_cast<int64_t>(x0) - 1, iy = static_cast<int64_t>(y0) - 1;
            for (int i = 0; i < 4; ++i) {
              double row = 0.0;
              for (int j = 0; j < 4; ++j) row += cx[j] * s.At(iy + i, ix + j);
              v += cy[i] * row;
            }
          }
          out[static_cast<size_t>(((b * c + ch) * ho + oy) * wo + ox)] = v;
        }
      }
    }
  }
  Tensor y(x->dtype(), {n, c, ho, wo});
  StoreDoubles(y, out.data());
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

SY_REGISTER_OPS(GridSample) {
  for (int v : {16, 20}) {
    reg.Register({"", "GridSample", v, 2, 2, 1, 1, InferGridSample, RunGridSample});
  }
}

}  // namespace switchyard::ops
