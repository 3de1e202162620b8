// Native data-movement ops for any fixed-size dtype: Transpose, Concat, Split, Slice,
// Gather. Rows of contiguous bytes move with memcpy; strided walks are per element size.
#include <algorithm>

#include "backends/cpu/native/native.h"
#include "backends/cpu/native/nhwc.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

bool NotString(const Node&, const KernelBuildContext& c) {
  for (DataType t : c.input_dtypes) {
    if (t == DataType::kString) return false;
  }
  return true;
}

// y[out index] = x[base + sum idx[d] * st[d]] over the output shape `out`.
template <typename T>
void StridedCopy(const T* x, T* y, const Shape& out, const Shape& st, int64_t base, int threads) {
  const size_t rank = out.size();
  if (rank == 0) {
    y[0] = x[base];
    return;
  }
  const int64_t inner = out[rank - 1], rows = NumElements(out) / std::max<int64_t>(inner, 1);
  if (inner == 0) return;
  const int64_t ist = st[rank - 1];
  ParallelFor(rows, threads, std::max<int64_t>(1, 32768 / inner), [&](int64_t b, int64_t e) {
    Shape idx(rank, 0);
    int64_t r = b, off = base;
    for (size_t d = rank - 1; d-- > 0;) {
      idx[d] = r % out[d];
      r /= out[d];
      off += idx[d] * st[d];
    }
    for (int64_t row = b; row < e; ++row) {
      T* dst = y + row * inner;
      const T* src = x + off;
      if (ist == 1) {
        std::copy(src, src + inner, dst);
      } else {
        for (int64_t i = 0; i < inner; ++i) dst[i] = src[i * ist];
      }
      for (size_t d = rank - 1; d-- > 0;) {
        off += st[d];
        if (++idx[d] < out[d]) break;
        off -= idx[d] * st[d];
        idx[d] = 0;
      }
    }
  });
}

void StridedCopyAny(const TensorRef& x, const TensorRef& y, const Shape& st, int64_t base,
                    int threads) {
  switch (DataTypeSize(x.dtype)) {
    case 1: StridedCopy(x.as<uint8_t>(), y.as<uint8_t>(), y.shape, st, base, threads); break;
    case 2: StridedCopy(x.as<uint16_t>(), y.as<uint16_t>(), y.shape, st, base, threads); break;
    case 4: StridedCopy(x.as<uint32_t>(), y.as<uint32_t>(), y.shape, st, base, threads); break;
    default: StridedCopy(x.as<uint64_t>(), y.as<uint64_t>(), y.shape, st, base, threads);
  }
}

Result<Shape> Perm(const Node& node, size_t rank) {
  Shape perm = node.GetInts("perm");
  if (perm.empty()) {
    for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  }
  if (perm.size() != rank) return ops::NodeError(node, "perm length differs from rank");
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) return ops::NodeError(node, "bad perm");
    seen[p] = true;
  }
  return perm;
}

// Slice parameters per input dim: start and step (in elements of that dim), and out size.
struct SliceDims {
  Shape start, step, out;
};

Result<SliceDims> ResolveSlice(const Node& node, const std::vector<const TensorRef*>& in) {
  const Shape& x = in[0]->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  Shape starts, ends, axes, steps;
  if (node.since_version > 0 && node.since_version < 10) {
    starts = node.GetInts("starts");
    ends = node.GetInts("ends");
    axes = node.GetInts("axes");
  } else {
    if (in.size() < 3 || !in[1] || !in[2]) return ops::NodeError(node, "Slice needs starts and ends");
    starts = ReadInts(*in[1]);
    ends = ReadInts(*in[2]);
    if (in.size() > 3 && in[3]) axes = ReadInts(*in[3]);
    if (in.size() > 4 && in[4]) steps = ReadInts(*in[4]);
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return ops::NodeError(node, "starts/ends/axes/steps lengths differ");
  }
  SliceDims s{Shape(rank, 0), Shape(rank, 1), x};
  for (size_t i = 0; i < starts.size(); ++i) {
    SY_ASSIGN_OR_RETURN(int64_t a, ops::NormalizeAxis(node, axes[i], rank));
    const int64_t dim = x[a], step = steps[i];
    if (step == 0) return ops::NodeError(node, "step is zero");
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    const int64_t n = step > 0 ? (e - b + step - 1) / step : (b - e + (-step) - 1) / (-step);
    s.start[a] = b;
    s.step[a] = step;
    s.out[a] = std::max<int64_t>(0, n);
  }
  return s;
}

void RegisterTranspose(CpuImplRegistry& reg) {
  RegisterNative(reg, "", "Transpose", NotString, [](const StepView& v) {
    const Node node = v.node;
    return MakeKernel(
        [node](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          SY_ASSIGN_OR_RETURN(Shape perm, Perm(node, in[0]->shape.size()));
          Shape s;
          for (int64_t p : perm) s.push_back(in[0]->shape[p]);
          return Shapes{s};
        },
        [node](const KernelIO& io) -> Status {
          const TensorRef& x = *io.inputs[0];
          SY_ASSIGN_OR_RETURN(Shape perm, Perm(node, x.shape.size()));
          const Shape xst = ops::Strides(x.shape);
          Shape st;
          for (int64_t p : perm) st.push_back(xst[p]);
          StridedCopyAny(x, *io.outputs[0], st, 0, io.threads);
          return Status::Ok();
        });
  });
}

void RegisterSlice(CpuImplRegistry& reg) {
  RegisterNative(reg, "", "Slice", NotString, [](const StepView& v) {
    const Node node = v.node;
    return MakeKernel(
        [node](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          SY_ASSIGN_OR_RETURN(SliceDims s, ResolveSlice(node, in));
          return Shapes{s.out};
        },
        [node](const KernelIO& io) -> Status {
          SY_ASSIGN_OR_RETURN(SliceDims s, ResolveSlice(node, io.inputs));
          const Shape xst = ops::Strides(io.inputs[0]->shape);
          Shape st(xst.size());
          int64_t base = 0;
          for (size_t d = 0; d < xst.size(); ++d) {
            base += s.start[d] * xst[d];
            st[d] = s.step[d] * xst[d];
          }
          if (NumElements(s.out) > 0) StridedCopyAny(*io.inputs[0], *io.outputs[0], st, base, io.threads);
          return Status::Ok();
        });
  });
}

// outer x (per-part axis extent x inner) blocks: Concat gathers them, Split scatters.
// Concat of 4-D inputs whose first arrives nhwc runs on nhwc bytes (every input nhwc;
// not with a constant input: the builder hands constants over in their plain layout).
Status PrepareConcat(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  if (!InputIsNhwc(ctx)) return Status::Ok();
  std::vector<size_t> all;
  for (size_t i = 0; i < ctx.input_shapes.size(); ++i) {
    if (ctx.input_shapes[i].size() != 4 || ctx.constants[i]) return Status::Ok();
    all.push_back(i);
  }
  DeclareNhwc(node, spec, all);
  return Status::Ok();
}

void RegisterConcatSplit(CpuImplRegistry& reg) {
  RegisterNative(reg, "", "Concat", NotString, [](const StepView& v) {
    const Node node = v.node;
    const int64_t axis_attr = node.GetInt("axis", 0);
    const bool nhwc = RunsNhwc(v);
    return MakeKernel(
        [node, axis_attr](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          Shape s = in[0]->shape;
          SY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, axis_attr, s.size()));
          s[axis] = 0;
          for (const TensorRef* t : in) {
            for (size_t d = 0; d < s.size(); ++d) {
              if (t->shape.size() != s.size() ||
                  (static_cast<int64_t>(d) != axis && t->shape[d] != s[d])) {
                return ops::NodeError(node, "input " + ShapeToString(t->shape) +
                                                " does not match " + ShapeToString(in[0]->shape));
              }
            }
            s[axis] += t->shape[axis];
          }
          return Shapes{s};
        },
        [node, axis_attr, nhwc](const KernelIO& io) -> Status {
          // nhwc: the same gather over the plain [N,H,W,C] tensors the bytes are.
          const Shape ys = nhwc ? NhwcOrder(io.outputs[0]->shape) : io.outputs[0]->shape;
          SY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, axis_attr, ys.size()));
          if (nhwc) axis = static_cast<int64_t>(NhwcAxis(static_cast<size_t>(axis)));
          const size_t es = DataTypeSize(io.outputs[0]->dtype);
          int64_t outer = 1, inner = es;
          for (int64_t d = 0; d < axis; ++d) outer *= ys[d];
          for (size_t d = axis + 1; d < ys.size(); ++d) inner *= ys[d];
          char* y = io.outputs[0]->as<char>();
          const int64_t row = ys[axis] * inner;
          std::vector<int64_t> parts;
          for (const TensorRef* t : io.inputs) parts.push_back((nhwc ? NhwcOrder(t->shape) : t->shape)[axis] * inner);
          // Output rows over the threads (an nhwc channel concat is many short rows).
          ParallelFor(outer, io.threads, std::max<int64_t>(1, 65536 / std::max<int64_t>(row, 1)),
                      [&](int64_t b, int64_t e) {
            int64_t col = 0;
            for (size_t i = 0; i < io.inputs.size(); ++i) {
              const int64_t part = parts[i];
              if (part == 0) continue;  // an empty input: no bytes (and maybe no buffer)
              const char* x = io.inputs[i]->as<char>();
              for (int64_t o = b; o < e; ++o) std::memcpy(y + o * row + col, x + o * part, part);
              col += part;
            }
          });
          return Status::Ok();
        });
  }, PrepareConcat);
  RegisterNative(reg, "", "Split", NotString, [](const StepView& v) {
    const Node node = v.node;
    const int64_t axis_attr = node.GetInt("axis", 0);
    auto sizes = [node, axis_attr](const std::vector<const TensorRef*>& in) -> Result<Shape> {
      const Shape& x = in[0]->shape;
      SY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, axis_attr, x.size()));
      Shape split = in.size() > 1 && in[1] ? ReadInts(*in[1]) : node.GetInts("split");
      const int64_t n = static_cast<int64_t>(node.outputs.size());
      if (split.empty()) {
        const int64_t chunk = (x[axis] + n - 1) / std::max<int64_t>(n, 1);
        for (int64_t i = 0; i < n; ++i) split.push_back(std::clamp<int64_t>(x[axis] - i * chunk, 0, chunk));
      }
      int64_t total = 0;
      for (int64_t s : split) total += s;
      if (total != x[axis] || static_cast<int64_t>(split.size()) != n) {
        return ops::NodeError(node, "split sizes do not match the axis");
      }
      return split;
    };
    return MakeKernel(
        [node, axis_attr, sizes](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          SY_ASSIGN_OR_RETURN(Shape split, sizes(in));
          SY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, axis_attr, in[0]->shape.size()));
          Shapes out;
          for (int64_t s : split) {
            out.push_back(in[0]->shape);
            out.back()[axis] = s;
          }
          return out;
        },
        [node, axis_attr, sizes](const KernelIO& io) -> Status {
          SY_ASSIGN_OR_RETURN(Shape split, sizes(io.inputs));
          const Shape& xs = io.inputs[0]->shape;
          SY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, axis_attr, xs.size()));
          const size_t es = DataTypeSize(io.inputs[0]->dtype);
          int64_t outer = 1, inner = es;
          for (int64_t d = 0; d < axis; ++d) outer *= xs[d];
          for (size_t d = axis + 1; d < xs.size(); ++d) inner *= xs[d];
          const char* x = io.inputs[0]->as<char>();
          const int64_t row = xs[axis] * inner;
          const int64_t n = static_cast<int64_t>(split.size());
          std::vector<int64_t> cols(split.size() + 1, 0);
          for (size_t i = 0; i < split.size(); ++i) cols[i + 1] = cols[i] + split[i] * inner;
          // One task per (outer row, part) over the threads: GPT-2's qkv split is 128 rows
          // of 3 parts, a split on axis 0 one row of n parts.
          const int64_t per_task = std::max<int64_t>(1, row / std::max<int64_t>(n, 1));
          ParallelFor(outer * n, io.threads, std::max<int64_t>(1, 65536 / per_task), [&](int64_t b, int64_t e) {
            for (int64_t t = b; t < e; ++t) {
              const int64_t o = t / n;
              const size_t i = static_cast<size_t>(t % n);
              const int64_t part = cols[i + 1] - cols[i];
              if (part == 0 || i >= io.outputs.size() || !io.outputs[i]) continue;
              std::memcpy(io.outputs[i]->as<char>() + o * part, x + o * row + cols[i], part);
            }
          });
          return Status::Ok();
        });
  });
}

void RegisterGather(CpuImplRegistry& reg) {
  RegisterNative(
      reg, "", "Gather",
      [](const Node& n, const KernelBuildContext& c) {
        return NotString(n, c) && c.input_dtypes.size() == 2 &&
               (c.input_dtypes[1] == DataType::kInt64 || c.input_dtypes[1] == DataType::kInt32);
      },
      [](const StepView& v) {
        const Node node = v.node;
        const int64_t axis_attr = node.GetInt("axis", 0);
        return MakeKernel(
            [node, axis_attr](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
              const Shape& x = in[0]->shape;
              SY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, axis_attr, x.size()));
              Shape s(x.begin(), x.begin() + axis);
              s.insert(s.end(), in[1]->shape.begin(), in[1]->shape.end());
              s.insert(s.end(), x.begin() + axis + 1, x.end());
              return Shapes{s};
            },
            [node, axis_attr](const KernelIO& io) -> Status {
              const Shape& x = io.inputs[0]->shape;
              SY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, axis_attr, x.size()));
              const std::vector<int64_t> idx = ReadInts(*io.inputs[1]);
              const int64_t dim = x[axis];
              for (int64_t i : idx) {
                if (i < -dim || i >= dim) {
                  return ops::NodeError(node, "index " + std::to_string(i) + " out of range [" +
                                                  std::to_string(-dim) + ", " + std::to_string(dim) + ")");
                }
              }
              const size_t es = DataTypeSize(io.inputs[0]->dtype);
              int64_t outer = 1, inner = es;
              for (int64_t d = 0; d < axis; ++d) outer *= x[d];
              for (size_t d = axis + 1; d < x.size(); ++d) inner *= x[d];
              const char* src = io.inputs[0]->as<char>();
              char* dst = io.outputs[0]->as<char>();
              const int64_t n = static_cast<int64_t>(idx.size());
              ParallelFor(outer * n, io.threads, std::max<int64_t>(1, 65536 / std::max<int64_t>(inner, 1)),
                          [&](int64_t b, int64_t e) {
                            for (int64_t k = b; k < e; ++k) {
                              const int64_t o = k / n, i = idx[k % n] < 0 ? idx[k % n] + dim : idx[k % n];
                              std::memcpy(dst + k * inner, src + (o * dim + i) * inner, inner);
                            }
                          });
              return Status::Ok();
            });
      });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeMovement) {
  RegisterTranspose(reg);
  RegisterSlice(reg);
  RegisterConcatSplit(reg);
  RegisterGather(reg);
}

}  // namespace switchyard::native
