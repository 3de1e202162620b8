// Native ReduceMean/ReduceSum/ReduceMax/ReduceMin (fp32, any axes, attribute or input
// axes by opset) and ArgMax/ArgMin (fp32/int64 in, int64 out).
#include <algorithm>
#include <limits>

#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

enum class Red { kSum, kMean, kMax, kMin };

struct Reduction {
  Shape keep;       // output shape with reduced dims as 1
  Shape out;        // output shape as reported (keepdims applied)
  std::vector<bool> reduced;
  bool noop = false;
};

Result<Reduction> Resolve(const Node& node, bool axes_input, const std::vector<const TensorRef*>& in) {
  const Shape& x = in[0]->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes = axes_input ? (in.size() > 1 && in[1] ? ReadInts(*in[1]) : Shape{})
                                         : node.GetInts("axes");
  Reduction r;
  r.reduced.assign(x.size(), false);
  if (axes.empty()) {
    if (axes_input && node.GetInt("noop_with_empty_axes", 0) != 0) r.noop = true;
    else std::fill(r.reduced.begin(), r.reduced.end(), true);
  }
  for (int64_t a : axes) {
    SY_ASSIGN_OR_RETURN(int64_t n, ops::NormalizeAxis(node, a, rank));
    r.reduced[n] = true;
  }
  const bool keepdims = node.GetInt("keepdims", 1) != 0;
  for (size_t d = 0; d < x.size(); ++d) {
    r.keep.push_back(r.reduced[d] ? 1 : x[d]);
    if (!r.reduced[d] || keepdims) r.out.push_back(r.reduced[d] ? 1 : x[d]);
  }
  return r;
}

template <Red kR>
inline float Combine(float a, float b) {
  if constexpr (kR == Red::kMax) return a > b ? a : b;
  else if constexpr (kR == Red::kMin) return a < b ? a : b;
  else return a + b;
}

template <Red kR>
void Reduce(const Reduction& r, const TensorRef& x, float* y, int threads) {
  const float init = kR == Red::kMax ? -std::numeric_limits<float>::infinity()
                     : kR == Red::kMin ? std::numeric_limits<float>::infinity() : 0.f;
  const int64_t out_n = NumElements(r.keep), in_n = x.numel();
  const float* px = x.as<float>();
  // Fast path: the reduced dims are a trailing block -> independent contiguous rows.
  size_t first = x.shape.size();
  while (first > 0 && r.reduced[first - 1]) --first;
  bool trailing = std::none_of(r.reduced.begin(), r.reduced.begin() + first, [](bool b) { return b; });
  if (trailing && out_n > 0) {
    const int64_t n = in_n / out_n;
    ParallelFor(out_n, threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t o = b; o < e; ++o) {
                    float acc = init;
                    const float* row = px + o * n;
                    for (int64_t i = 0; i < n; ++i) acc = Combine<kR>(acc, row[i]);
                    y[o] = acc;
                  }
                });
  } else {
    std::fill(y, y + out_n, init);
    if (in_n > 0) {
      const BroadcastPlan p = MakeBroadcastPlan(x.shape, {r.keep});
      ForEachRow(p, 0, p.numel / p.out.back(),
                 [&](const int64_t* off, int64_t xo, int64_t n, const int64_t* st) {
                   float* acc = y + off[0];
                   for (int64_t i = 0; i < n; ++i) acc[i * st[0]] = Combine<kR>(acc[i * st[0]], px[xo + i]);
                 });
    }
  }
  if (kR == Red::kMean && out_n > 0) {
    const float inv = static_cast<float>(out_n) / static_cast<float>(std::max<int64_t>(in_n, 1));
    for (int64_t o = 0; o < out_n; ++o) y[o] *= inv;
  }
}

// since-version from which the op takes axes as an input.
void RegisterReduce(CpuImplRegistry& reg, const std::string& op, Red kind, int axes_input_since) {
  RegisterNative(reg, "", op, AllFloat, [kind, axes_input_since](const StepView& v) {
    const Node node = v.node;
    const bool axes_input = node.since_version >= axes_input_since;
    return MakeKernel(
        [node, axes_input](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          SY_ASSIGN_OR_RETURN(Reduction r, Resolve(node, axes_input, in));
          return Shapes{r.noop ? in[0]->shape : r.out};
        },
        [node, axes_input, kind](const KernelIO& io) -> Status {
          SY_ASSIGN_OR_RETURN(Reduction r, Resolve(node, axes_input, io.inputs));
          float* y = io.outputs[0]->as<float>();
          if (r.noop) {
            std::memcpy(y, io.inputs[0]->data, io.inputs[0]->numel() * sizeof(float));
            return Status::Ok();
          }
          switch (kind) {
            case Red::kSum: Reduce<Red::kSum>(r, *io.inputs[0], y, io.threads); break;
            case Red::kMean: Reduce<Red::kMean>(r, *io.inputs[0], y, io.threads); break;
            case Red::kMax: Reduce<Red::kMax>(r, *io.inputs[0], y, io.threads); break;
            case Red::kMin: Reduce<Red::kMin>(r, *io.inputs[0], y, io.threads); break;
          }
          return Status::Ok();
        });
  });
}

template <typename T>
void ArgLoop(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner, bool max, bool last) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* p = x + o * n * inner + i;
      int64_t best = 0;
      for (int64_t j = 1; j < n; ++j) {
        const T v = p[j * inner], b = p[best * inner];
        const bool better = max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
        if (better) best = j;
      }
      y[o * inner + i] = best;
    }
  }
}

void RegisterArg(CpuImplRegistry& reg, const std::string& op, bool max) {
  RegisterNative(
      reg, "", op,
      [](const Node&, const KernelBuildContext& c) {
        return !c.input_dtypes.empty() &&
               (c.input_dtypes[0] == DataType::kFloat || c.input_dtypes[0] == DataType::kInt64);
      },
      [max](const StepView& v) {
        const Node node = v.node;
        const int64_t axis_attr = node.GetInt("axis", 0);
        const bool keepdims = node.GetInt("keepdims", 1) != 0;
        const bool last = node.GetInt("select_last_index", 0) != 0;
        return MakeKernel(
            [node, axis_attr, keepdims](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
              Shape s = in[0]->shape;
              SY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, axis_attr, s.size()));
              if (s[axis] == 0) return ops::NodeError(node, "empty reduction axis");
              if (keepdims) s[axis] = 1;
              else s.erase(s.begin() + axis);
              return Shapes{s};
            },
            [node, axis_attr, max, last](const KernelIO& io) -> Status {
              const Shape& s = io.inputs[0]->shape;
              SY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, axis_attr, s.size()));
              int64_t outer = 1, inner = 1;
              for (int64_t d = 0; d < axis; ++d) outer *= s[d];
              for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
              int64_t* y = io.outputs[0]->as<int64_t>();
              if (io.inputs[0]->dtype == DataType::kFloat) {
                ArgLoop(io.inputs[0]->as<float>(), y, outer, s[axis], inner, max, last);
              } else {
                ArgLoop(io.inputs[0]->as<int64_t>(), y, outer, s[axis], inner, max, last);
              }
              return Status::Ok();
            });
      });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeReduce) {
  RegisterReduce(reg, "ReduceSum", Red::kSum, 13);
  RegisterReduce(reg, "ReduceMean", Red::kMean, 18);
  RegisterReduce(reg, "ReduceMax", Red::kMax, 18);
  RegisterReduce(reg, "ReduceMin", Red::kMin, 18);
  RegisterArg(reg, "ArgMax", true);
  RegisterArg(reg, "ArgMin", false);
}

}  // namespace switchyard::native
