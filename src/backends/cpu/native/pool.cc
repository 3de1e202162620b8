// Native pooling on plain NCHW fp32: MaxPool, AveragePool (1-3 spatial dims, pads,
// strides, dilations, ceil_mode, auto_pad) and GlobalAveragePool/GlobalMaxPool; and 2-D
// MaxPool/AveragePool on nhwc bytes (variant "nhwc", below).
#include <algorithm>
#include <limits>
#include <vector>

#include "backends/cpu/native/conv_nhwc.h"
#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/native/nhwc.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

struct PoolAttrs {
  bool max = true;
  std::vector<int64_t> kernel, strides, pads, dilations;
  std::string auto_pad;
  bool ceil_mode = false, count_include_pad = false;
};

// Per spatial dim, after resolving auto_pad: pad_begin, output size.
struct Geometry {
  int64_t k = 1, s = 1, d = 1, pb = 0, pe = 0, in = 1, out = 1;
};

Result<std::vector<Geometry>> Resolve(const Node& node, const PoolAttrs& a, const Shape& x) {
  const size_t sp = a.kernel.size();
  if (x.size() != sp + 2) {
    return ops::NodeError(node, "input " + ShapeToString(x) + " does not match kernel_shape");
  }
  std::vector<Geometry> g(sp);
  for (size_t i = 0; i < sp; ++i) {
    Geometry& q = g[i];
    q.k = a.kernel[i];
    q.s = a.strides.empty() ? 1 : a.strides[i];
    q.d = a.dilations.empty() ? 1 : a.dilations[i];
    q.in = x[i + 2];
    if (q.k <= 0 || q.s <= 0 || q.d <= 0) return ops::NodeError(node, "non-positive kernel/stride");
    const int64_t ext = (q.k - 1) * q.d + 1;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      q.out = (q.in + q.s - 1) / q.s;
      const int64_t total = std::max<int64_t>(0, (q.out - 1) * q.s + ext - q.in);
      q.pb = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      q.pe = total - q.pb;
    } else {
      if (a.auto_pad != "VALID" && !a.pads.empty()) {
        q.pb = a.pads[i];
        q.pe = a.pads[i + sp];
      }
      const int64_t span = q.in + q.pb + q.pe - ext;
      if (span < 0) return ops::NodeError(node, "kernel larger than padded input");
      q.out = (a.ceil_mode ? (span + q.s - 1) / q.s : span / q.s) + 1;
      // A window may not start inside the end padding only (PyTorch/ONNX rule).
      if (a.ceil_mode && (q.out - 1) * q.s >= q.in + q.pb) --q.out;
    }
  }
  return g;
}

Shape OutShape(const Shape& x, const std::vector<Geometry>& g) {
  Shape out{x[0], x[1]};
  for (const Geometry& q : g) out.push_back(q.out);
  return out;
}

// One (n, c) plane, spatial dims padded to 3 with size-1 dims in front.
void PoolPlane(const PoolAttrs& a, const Geometry* g, const float* x, float* y) {
  for (int64_t o0 = 0; o0 < g[0].out; ++o0) {
    for (int64_t o1 = 0; o1 < g[1].out; ++o1) {
      for (int64_t o2 = 0; o2 < g[2].out; ++o2) {
        const int64_t o[3] = {o0, o1, o2};
        int64_t lo[3], hi[3], cnt_pad = 1;
        for (int i = 0; i < 3; ++i) {
          lo[i] = o[i] * g[i].s - g[i].pb;
          hi[i] = lo[i] + (g[i].k - 1) * g[i].d + 1;  // exclusive
          const int64_t hi_pad = std::min(hi[i], g[i].in + g[i].pe);
          cnt_pad *= (hi_pad - lo[i] + g[i].d - 1) / g[i].d;
        }
        float acc = a.max ? -std::numeric_limits<float>::infinity() : 0.f;
        int64_t cnt = 0;
        for (int64_t i0 = lo[0]; i0 < hi[0]; i0 += g[0].d) {
          if (i0 < 0 || i0 >= g[0].in) continue;
          for (int64_t i1 = lo[1]; i1 < hi[1]; i1 += g[1].d) {
            if (i1 < 0 || i1 >= g[1].in) continue;
            const float* row = x + (i0 * g[1].in + i1) * g[2].in;
            for (int64_t i2 = lo[2]; i2 < hi[2]; i2 += g[2].d) {
              if (i2 < 0 || i2 >= g[2].in) continue;
              acc = a.max ? std::max(acc, row[i2]) : acc + row[i2];
              ++cnt;
            }
          }
        }
        if (!a.max) acc = acc / static_cast<float>(a.count_include_pad ? cnt_pad : std::max<int64_t>(cnt, 1));
        y[(o0 * g[1].out + o1) * g[2].out + o2] = acc;
      }
    }
  }
}

// One output row (image row oy) of a 2-D window on nhwc bytes: each output pixel's C
// channels are a vector loop over the window's input pixels (the same order of operations
// per channel as PoolPlane).
SY_NATIVE_CLONES void PoolNhwcRow(const PoolAttrs& a, const Geometry* g, int64_t c, const float* x, float* y,
                                  int64_t oy) {
  const Geometry &gh = g[0], &gw = g[1];
  const int64_t ylo = oy * gh.s - gh.pb, yhi = ylo + (gh.k - 1) * gh.d + 1;
  const int64_t ycnt = (std::min(yhi, gh.in + gh.pe) - ylo + gh.d - 1) / gh.d;
  for (int64_t ox = 0; ox < gw.out; ++ox) {
    const int64_t xlo = ox * gw.s - gw.pb, xhi = xlo + (gw.k - 1) * gw.d + 1;
    float* out = y + ox * c;
    const float init = a.max ? -std::numeric_limits<float>::infinity() : 0.f;
    for (int64_t ch = 0; ch < c; ++ch) out[ch] = init;
    int64_t cnt = 0;
    for (int64_t iy = ylo; iy < yhi; iy += gh.d) {
      if (iy < 0 || iy >= gh.in) continue;
      for (int64_t ix = xlo; ix < xhi; ix += gw.d) {
        if (ix < 0 || ix >= gw.in) continue;
        const float* r = x + (iy * gw.in + ix) * c;
        if (a.max) {
          for (int64_t ch = 0; ch < c; ++ch) out[ch] = std::max(out[ch], r[ch]);
        } else {
          for (int64_t ch = 0; ch < c; ++ch) out[ch] += r[ch];
        }
        ++cnt;
      }
    }
    if (!a.max) {
      const int64_t xcnt = (std::min(xhi, gw.in + gw.pe) - xlo + gw.d - 1) / gw.d;
      const float n = static_cast<float>(a.count_include_pad ? ycnt * xcnt : std::max<int64_t>(cnt, 1));
      for (int64_t ch = 0; ch < c; ++ch) out[ch] /= n;
    }
  }
}

ShapeFn PoolShapes(const Node& node, const PoolAttrs& a) {
  return [node, a](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
    SY_ASSIGN_OR_RETURN(auto g, Resolve(node, a, in[0]->shape));
    return Shapes{OutShape(in[0]->shape, g)};
  };
}

PoolAttrs ReadPoolAttrs(const Node& node, bool max) {
  PoolAttrs a;
  a.max = max;
  a.kernel = node.GetInts("kernel_shape");
  a.strides = node.GetInts("strides");
  a.pads = node.GetInts("pads");
  a.dilations = node.GetInts("dilations");
  a.auto_pad = node.GetString("auto_pad", "NOTSET");
  a.ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  a.count_include_pad = node.GetInt("count_include_pad", 0) != 0;
  return a;
}

// A 2-D MaxPool/AveragePool whose input arrives nhwc runs there, output nhwc. The builder
// tries it before oneDNN's pooling (kernel_table.cc) on CPUs without AVX-512: on 2 Zen 3
// cores oneDNN 2.6's jit:avx2 pooling on nhwc ran ResNet-50's 3x3 stride-2 MaxPool
// (112x112x64) in 0.52 ms, ONNX Runtime's in 0.12.
bool SupportsPoolNhwc(const Node& n, const KernelBuildContext& c) {
  return AllFloat(n, c) && n.outputs.size() == 1 && n.GetInts("kernel_shape").size() == 2 && InputIsNhwc(c);
}
bool PreferPoolNhwc(const Node& n, const KernelBuildContext& c) {
  return !HasAvx512Nhwc() && SupportsPoolNhwc(n, c);
}

Status PreparePoolNhwc(const Node& node, const KernelBuildContext&, StepSpec& spec) {
  DeclareNhwc(node, spec, {0});
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreatePoolNhwc(const StepView& v, bool max) {
  const Node node = v.node;
  const PoolAttrs a = ReadPoolAttrs(node, max);
  return MakeKernel(
      PoolShapes(node, a),
      [node, a](const KernelIO& io) -> Status {
        const Shape& xs = io.inputs[0]->shape;  // NCHW order, nhwc bytes
        SY_ASSIGN_OR_RETURN(auto g, Resolve(node, a, xs));
        const int64_t c = xs[1], rows = xs[0] * g[0].out;
        const float* x = io.inputs[0]->as<float>();
        float* y = io.outputs[0]->as<float>();
        ParallelFor(rows, io.threads, 1, [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const int64_t n = r / g[0].out, oy = r % g[0].out;
            PoolNhwcRow(a, g.data(), c, x + n * g[0].in * g[1].in * c, y + r * g[1].out * c, oy);
          }
        });
        return Status::Ok();
      });
}

void RegisterPool(CpuImplRegistry& reg, const std::string& op, bool max) {
  const auto create = [max](const StepView& v) { return CreatePoolNhwc(v, max); };
  reg.Register(CpuOpImpl{"native", "", op, "nhwc", SupportsPoolNhwc, PreparePoolNhwc, create});
  const CpuOpImpl preferred{"native", "", op, "nhwc_preferred", PreferPoolNhwc, PreparePoolNhwc, create};
  reg.SetAvailability(preferred, [] { return !HasAvx512Nhwc(); });
  reg.Register(preferred);
  RegisterNative(
      reg, "", op,
      [](const Node& n, const KernelBuildContext& c) {
        const size_t sp = n.GetInts("kernel_shape").size();
        return AllFloat(n, c) && n.outputs.size() == 1 && sp >= 1 && sp <= 3;
      },
      [max](const StepView& v) {
        const Node node = v.node;
        const PoolAttrs a = ReadPoolAttrs(node, max);
        return MakeKernel(
            PoolShapes(node, a),
            [node, a](const KernelIO& io) -> Status {
              const Shape& xs = io.inputs[0]->shape;
              SY_ASSIGN_OR_RETURN(auto g, Resolve(node, a, xs));
              while (g.size() < 3) g.insert(g.begin(), Geometry{});
              const int64_t planes = xs[0] * xs[1];
              const int64_t in_sz = g[0].in * g[1].in * g[2].in;
              const int64_t out_sz = g[0].out * g[1].out * g[2].out;
              const float* x = io.inputs[0]->as<float>();
              float* y = io.outputs[0]->as<float>();
              ParallelFor(planes, io.threads, 1, [&](int64_t b, int64_t e) {
                for (int64_t p = b; p < e; ++p) PoolPlane(a, g.data(), x + p * in_sz, y + p * out_sz);
              });
              return Status::Ok();
            });
      });
}

void RegisterGlobalPool(CpuImplRegistry& reg, const std::string& op, bool max) {
  RegisterNative(reg, "", op, AllFloat, [max](const StepView& v) {
    const Node node = v.node;
    return MakeKernel(
        [node](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          Shape s = in[0]->shape;
          if (s.size() < 2) return ops::NodeError(node, "input needs rank >= 2");
          std::fill(s.begin() + 2, s.end(), 1);
          return Shapes{s};
        },
        [max](const KernelIO& io) -> Status {
          const Shape& s = io.inputs[0]->shape;
          int64_t sp = 1;
          for (size_t d = 2; d < s.size(); ++d) sp *= s[d];
          const float* x = io.inputs[0]->as<float>();
          float* y = io.outputs[0]->as<float>();
          ParallelFor(s[0] * s[1], io.threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(sp, 1)),
                      [&](int64_t b, int64_t e) {
                        for (int64_t p = b; p < e; ++p) {
                          const float* r = x + p * sp;
                          float acc = max ? -std::numeric_limits<float>::infinity() : 0.f;
                          for (int64_t i = 0; i < sp; ++i) acc = max ? std::max(acc, r[i]) : acc + r[i];
                          y[p] = max ? acc : acc / static_cast<float>(sp);
                        }
                      });
          return Status::Ok();
        });
  });
}

// Channel means of nhwc rows (ChannelMeansNhwc): images are split into pixel ranges so
// that every thread has work at batch 1 (`min_work` values per range at least, and with
// `whole_blocks` no range under kBlock rows); each range sums blocks of kBlock rows into a
// partial row (`sum_rows(rows, count, c, block)`, which may also rewrite the rows: fp32
// error grows with the block, not the image), and the partial rows of an image are added
// at the end. oneDNN 2.6's nhwc pooling spent 0.34 ms on EfficientNet-B0's 17 global pools
// on 2 Zen 5 cores ([1,32,112,112]: 0.053 ms, 30 GB/s).
template <typename T, typename SumRows>
void ChannelMeansBlocks(T* x, int64_t n, int64_t c, int64_t pixels, float* y, int threads, int64_t min_work,
                        bool whole_blocks, const SumRows& sum_rows) {
  constexpr int64_t kBlock = 64;
  const int64_t per_image = pixels * c;
  int64_t parts = 1;
  if (n < threads) {
    parts = std::min<int64_t>((threads + n - 1) / n, per_image / min_work);
    parts = std::clamp<int64_t>(parts, 1, std::max<int64_t>(1, whole_blocks ? pixels / kBlock : pixels));
  }
  const int64_t grain = std::max<int64_t>(1, min_work / std::max<int64_t>(1, per_image / parts));
  thread_local std::vector<float> scratch;
  float* partial = ScratchOf(scratch, static_cast<size_t>(n * parts * 2 * c));
  ParallelFor(n * parts, threads, grain, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t b = u / parts, part = u % parts;
      const int64_t p0 = pixels * part / parts, p1 = pixels * (part + 1) / parts;
      float* acc = partial + u * 2 * c;
      float* block = acc + c;
      std::fill(acc, acc + c, 0.f);
      for (int64_t p = p0; p < p1; p += kBlock) {
        std::fill(block, block + c, 0.f);
        sum_rows(x + (b * pixels + p) * c, std::min(kBlock, p1 - p), c, block);
        AddRows(block, 1, c, acc);
      }
    }
  });
  const float inv = 1.f / static_cast<float>(pixels);
  for (int64_t b = 0; b < n; ++b) {
    float* out = y + b * c;
    std::fill(out, out + c, 0.f);
    for (int64_t part = 0; part < parts; ++part) AddRows(partial + (b * parts + part) * 2 * c, 1, c, out);
    for (int64_t j = 0; j < c; ++j) out[j] *= inv;
  }
}

// Work under kMeansMinWork values per thread stays on the calling thread (a team costs more).
constexpr int64_t kMeansMinWork = 16384;

}  // namespace

void ChannelMeansNhwc(const float* x, int64_t n, int64_t c, int64_t pixels, float* y, int threads) {
  const auto sum = [](const float* r, int64_t count, int64_t cc, float* acc) { AddRows(r, count, cc, acc); };
  ChannelMeansBlocks(x, n, c, pixels, y, threads, kMeansMinWork, true, sum);
}

void ChannelMeansNhwc(const uint16_t* x, int64_t n, int64_t c, int64_t pixels, float* y, int threads) {
  const auto sum = [](const uint16_t* r, int64_t count, int64_t cc, float* acc) { AddRows(r, count, cc, acc); };
  ChannelMeansBlocks(x, n, c, pixels, y, threads, kMeansMinWork, true, sum);
}

// The SiLU's threads as SiluInPlace has them (kSiluGrain values each, ranges of any
// number of rows): it costs more than the sums.
void SiluChannelMeansNhwc(float* x, int64_t n, int64_t c, int64_t pixels, float* y, int threads) {
  ChannelMeansBlocks(x, n, c, pixels, y, threads, kSiluGrain, false, SiluRowsAddTo);
}

SY_REGISTER_CPU_IMPLS(NativePool) {
  RegisterPool(reg, "MaxPool", true);
  RegisterPool(reg, "AveragePool", false);
  RegisterGlobalPool(reg, "GlobalAveragePool", false);
  RegisterGlobalPool(reg, "GlobalMaxPool", true);
}

}  // namespace switchyard::native
