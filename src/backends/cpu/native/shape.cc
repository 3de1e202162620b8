// Native shape-only and generator ops, dtype-agnostic where they only move bytes:
// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference), Shape, Size,
// ConstantOfShape, Range, Expand, Tile.
#include <algorithm>
#include <cmath>

#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

bool NotString(const Node&, const KernelBuildContext& c) {
  for (DataType t : c.input_dtypes) {
    if (t == DataType::kString) return false;
  }
  return true;
}

// Copies input 0 into output 0 unchanged (the shape ops above only relabel dims).
Status CopyInput0(const KernelIO& io) {
  const size_t bytes = static_cast<size_t>(io.inputs[0]->numel()) * DataTypeSize(io.inputs[0]->dtype);
  if (bytes && io.outputs[0]->data != io.inputs[0]->data) {
    std::memcpy(io.outputs[0]->data, io.inputs[0]->data, bytes);
  }
  return Status::Ok();
}

// Axes from the attribute (older opsets) or from input `i` (newer ones).
std::vector<int64_t> AxesOf(const Node& node, const std::vector<const TensorRef*>& in, size_t i) {
  if (in.size() > i && in[i]) return ReadInts(*in[i]);
  return node.GetInts("axes");
}

using Relabel = std::function<Result<Shape>(const Node&, const std::vector<const TensorRef*>&)>;

void RegisterRelabel(CpuImplRegistry& reg, const std::string& op, Relabel shape_fn) {
  RegisterNative(reg, "", op, NotString, [shape_fn](const StepView& v) {
    const Node node = v.node;
    return MakeKernel(
        [node, shape_fn](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          SY_ASSIGN_OR_RETURN(Shape s, shape_fn(node, in));
          if (NumElements(s) != in[0]->numel()) {
            return ops::NodeError(node, "cannot reshape " + ShapeToString(in[0]->shape) + " to " +
                                            ShapeToString(s));
          }
          Shapes out{s};
          if (node.op_type == "Dropout" && node.outputs.size() > 1) out.push_back(in[0]->shape);
          return out;
        },
        [node](const KernelIO& io) {
          if (node.op_type == "Dropout" && io.outputs.size() > 1 && io.outputs[1]) {
            std::memset(io.outputs[1]->data, 1, static_cast<size_t>(io.outputs[1]->numel()));
          }
          return CopyInput0(io);
        });
  }, [](const Node&, const KernelBuildContext&, StepSpec& spec) {
    spec.params["view"] = true;  // the builder may give the output the input's bytes
    return Status::Ok();
  });
}

Result<Shape> ReshapeShape(const Node& node, const std::vector<const TensorRef*>& in) {
  if (in.size() < 2 || !in[1]) return ops::NodeError(node, "Reshape needs a shape input");
  const Shape& x = in[0]->shape;
  Shape s = ReadInts(*in[1]);
  const bool allowzero = node.GetInt("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 0 && !allowzero) {
      if (i >= x.size()) return ops::NodeError(node, "0 in shape beyond the input rank");
      s[i] = x[i];
    }
    if (s[i] == -1) {
      if (infer >= 0) return ops::NodeError(node, "more than one -1 in shape");
      infer = static_cast<int64_t>(i);
    } else if (s[i] < 0) {
      return ops::NodeError(node, "negative dimension in shape");
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || in[0]->numel() % known != 0) {
      return ops::NodeError(node, "cannot infer -1 reshaping " + ShapeToString(x));
    }
    s[infer] = in[0]->numel() / known;
  }
  return s;
}

Result<Shape> FlattenShape(const Node& node, const std::vector<const TensorRef*>& in) {
  const Shape& x = in[0]->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = node.GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return ops::NodeError(node, "axis out of range");
  int64_t a = 1, b = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? a : b) *= x[d];
  return Shape{a, b};
}

Result<Shape> SqueezeShape(const Node& node, const std::vector<const TensorRef*>& in) {
  const Shape& x = in[0]->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes = AxesOf(node, in, 1);
  std::vector<bool> drop(x.size(), false);
  if (axes.empty()) {
    for (size_t d = 0; d < x.size(); ++d) drop[d] = x[d] == 1;
  }
  for (int64_t a : axes) {
    SY_ASSIGN_OR_RETURN(int64_t n, ops::NormalizeAxis(node, a, rank));
    if (x[n] != 1) return ops::NodeError(node, "cannot squeeze a dim of size " + std::to_string(x[n]));
    drop[n] = true;
  }
  Shape s;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!drop[d]) s.push_back(x[d]);
  }
  return s;
}

Result<Shape> UnsqueezeShape(const Node& node, const std::vector<const TensorRef*>& in) {
  const Shape& x = in[0]->shape;
  std::vector<int64_t> axes = AxesOf(node, in, 1);
  const int64_t rank = static_cast<int64_t>(x.size() + axes.size());
  std::vector<bool> add(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    SY_ASSIGN_OR_RETURN(int64_t n, ops::NormalizeAxis(node, a, rank));
    if (add[n]) return ops::NodeError(node, "repeated axis");
    add[n] = true;
  }
  Shape s;
  size_t j = 0;
  for (int64_t d = 0; d < rank; ++d) s.push_back(add[d] ? 1 : x[j++]);
  return s;
}

// Output 0 from shape alone; Run fills it with `fill(io)`.
void RegisterGenerator(CpuImplRegistry& reg, const std::string& op,
                       std::function<bool(const Node&, const KernelBuildContext&)> supports,
                       Relabel shape_fn, std::function<Status(const Node&, const KernelIO&)> fill) {
  RegisterNative(reg, "", op, std::move(supports), [shape_fn, fill](const StepView& v) {
    const Node node = v.node;
    return MakeKernel(
        [node, shape_fn](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          SY_ASSIGN_OR_RETURN(Shape s, shape_fn(node, in));
          return Shapes{s};
        },
        [node, fill](const KernelIO& io) { return fill(node, io); });
  });
}

// Shape-15 start/end clamp.
void ShapeRange(const Node& node, int64_t rank, int64_t* b, int64_t* e) {
  *b = node.GetInt("start", 0);
  *e = node.GetInt("end", rank);
  if (*b < 0) *b += rank;
  if (*e < 0) *e += rank;
  *b = std::clamp<int64_t>(*b, 0, rank);
  *e = std::clamp<int64_t>(*e, *b, rank);
}

template <typename T>
void RangeFill(const TensorRef* const* in, const TensorRef& out) {
  const T start = in[0]->as<T>()[0], delta = in[2]->as<T>()[0];
  for (int64_t i = 0; i < out.numel(); ++i) out.as<T>()[i] = static_cast<T>(start + static_cast<T>(i) * delta);
}

// y = x broadcast to y's shape, for any element size (Expand; Tile via repeated views).
void BroadcastCopy(const TensorRef& x, const TensorRef& y, int threads) {
  const size_t es = DataTypeSize(x.dtype);
  const BroadcastPlan p = MakeBroadcastPlan(y.shape, {x.shape});
  const int64_t inner = p.out.back();
  if (p.numel == 0) return;
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(y.data);
  ParallelFor(p.numel / inner, threads, std::max<int64_t>(1, 65536 / inner), [&](int64_t b, int64_t e) {
    ForEachRow(p, b, e, [&](const int64_t* off, int64_t yo, int64_t n, const int64_t* st) {
      if (st[0] == 1) {
        std::memcpy(dst + yo * es, src + off[0] * es, n * es);
      } else {
        for (int64_t i = 0; i < n; ++i) std::memcpy(dst + (yo + i) * es, src + off[0] * es, es);
      }
    });
  });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeShape) {
  RegisterRelabel(reg, "Reshape", ReshapeShape);
  RegisterRelabel(reg, "Flatten", FlattenShape);
  RegisterRelabel(reg, "Squeeze", SqueezeShape);
  RegisterRelabel(reg, "Unsqueeze", UnsqueezeShape);
  const Relabel same = [](const Node&, const std::vector<const TensorRef*>& in) -> Result<Shape> {
    return in[0]->shape;
  };
  RegisterRelabel(reg, "Identity", same);
  RegisterRelabel(reg, "Dropout", same);

  RegisterGenerator(
      reg, "Shape", NotString,
      [](const Node& n, const std::vector<const TensorRef*>& in) -> Result<Shape> {
        int64_t b, e;
        ShapeRange(n, static_cast<int64_t>(in[0]->shape.size()), &b, &e);
        return Shape{e - b};
      },
      [](const Node& n, const KernelIO& io) {
        const Shape& s = io.inputs[0]->shape;
        int64_t b, e;
        ShapeRange(n, static_cast<int64_t>(s.size()), &b, &e);
        for (int64_t i = b; i < e; ++i) io.outputs[0]->as<int64_t>()[i - b] = s[i];
        return Status::Ok();
      });
  RegisterGenerator(
      reg, "Size", NotString,
      [](const Node&, const std::vector<const TensorRef*>&) -> Result<Shape> { return Shape{}; },
      [](const Node&, const KernelIO& io) {
        io.outputs[0]->as<int64_t>()[0] = io.inputs[0]->numel();
        return Status::Ok();
      });
  RegisterGenerator(
      reg, "ConstantOfShape",
      [](const Node& n, const KernelBuildContext&) {
        const Attribute* a = n.Find("value");
        return !a || (a->t.numel() == 1 && a->t.dtype() != DataType::kString);
      },
      [](const Node& n, const std::vector<const TensorRef*>& in) -> Result<Shape> {
        Shape s = ReadInts(*in[0]);
        for (int64_t d : s) {
          if (d < 0) return ops::NodeError(n, "negative dimension");
        }
        return s;
      },
      [](const Node& n, const KernelIO& io) {
        const Attribute* a = n.Find("value");
        const TensorRef& y = *io.outputs[0];
        const size_t es = DataTypeSize(y.dtype);
        if (!a) {
          std::memset(y.data, 0, static_cast<size_t>(y.numel()) * es);
          return Status::Ok();
        }
        for (int64_t i = 0; i < y.numel(); ++i) {
          std::memcpy(static_cast<char*>(y.data) + i * es, a->t.raw(), es);
        }
        return Status::Ok();
      });
  RegisterGenerator(
      reg, "Range",
      [](const Node&, const KernelBuildContext& c) {
        return c.input_dtypes.size() == 3 && (c.input_dtypes[0] == DataType::kFloat ||
                                              c.input_dtypes[0] == DataType::kInt64 ||
                                              c.input_dtypes[0] == DataType::kInt32);
      },
      [](const Node& n, const std::vector<const TensorRef*>& in) -> Result<Shape> {
        double v[3];
        for (int i = 0; i < 3; ++i) {
          if (!in[i] || in[i]->numel() != 1) return ops::NodeError(n, "Range inputs must be scalars");
          v[i] = in[i]->dtype == DataType::kFloat ? in[i]->as<float>()[0]
                                                  : static_cast<double>(ReadInts(*in[i])[0]);
        }
        if (v[2] == 0) return ops::NodeError(n, "Range delta is zero");
        return Shape{std::max<int64_t>(0, static_cast<int64_t>(std::ceil((v[1] - v[0]) / v[2])))};
      },
      [](const Node&, const KernelIO& io) {
        const TensorRef* const* in = io.inputs.data();
        switch (io.outputs[0]->dtype) {
          case DataType::kFloat: RangeFill<float>(in, *io.outputs[0]); break;
          case DataType::kInt32: RangeFill<int32_t>(in, *io.outputs[0]); break;
          default: RangeFill<int64_t>(in, *io.outputs[0]);
        }
        return Status::Ok();
      });
  RegisterGenerator(
      reg, "Expand", NotString,
      [](const Node& n, const std::vector<const TensorRef*>& in) -> Result<Shape> {
        if (in.size() < 2 || !in[1]) return ops::NodeError(n, "Expand needs a shape input");
        return BroadcastShape(n, {in[0]->shape, ReadInts(*in[1])});
      },
      [](const Node&, const KernelIO& io) {
        BroadcastCopy(*io.inputs[0], *io.outputs[0], io.threads);
        return Status::Ok();
      });
  RegisterGenerator(
      reg, "Tile", NotString,
      [](const Node& n, const std::vector<const TensorRef*>& in) -> Result<Shape> {
        if (in.size() < 2 || !in[1]) return ops::NodeError(n, "Tile needs repeats");
        const Shape r = ReadInts(*in[1]);
        Shape s = in[0]->shape;
        if (r.size() != s.size()) return ops::NodeError(n, "repeats length differs from rank");
        for (size_t d = 0; d < s.size(); ++d) {
          if (r[d] < 0) return ops::NodeError(n, "negative repeat");
          s[d] *= r[d];
        }
        return s;
      },
      [](const Node&, const KernelIO& io) {
        // Tile = broadcast of x viewed as [1, d0, 1, d1, ...] to [r0, d0, r1, d1, ...].
        const Shape r = ReadInts(*io.inputs[1]);
        TensorRef x = *io.inputs[0], y = *io.outputs[0];
        Shape xs, ys;
        for (size_t d = 0; d < r.size(); ++d) {
          xs.insert(xs.end(), {1, x.shape[d]});
          ys.insert(ys.end(), {r[d], x.shape[d]});
        }
        x.shape = xs;
        y.shape = ys;
        BroadcastCopy(x, y, io.threads);
        return Status::Ok();
      });
}

}  // namespace switchyard::native
