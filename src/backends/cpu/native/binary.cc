// Native broadcasting binary ops (Add Sub Mul Div Pow PRelu, comparisons, And Or Xor),
// variadic Sum/Mean/Max/Min and Where.
#include <algorithm>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

constexpr int64_t kGrain = 16384;

// Runs f(a_ptr, a_stride, b_ptr, b_stride, y_ptr, n) over spans of the broadcast of a
// and b into y; strides are 0 (broadcast) or 1.
template <typename T, typename U, typename F>
void Broadcast2(const TensorRef& a, const TensorRef& b, const TensorRef& y, int threads, F f) {
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  U* py = y.as<U>();
  const BroadcastPlan p = MakeBroadcastPlan(y.shape, {a.shape, b.shape});
  const int64_t inner = p.out.back();
  const int64_t rows = inner ? p.numel / inner : 0;
  if (rows == 1) {
    const int64_t sa = p.strides[0].back(), sb = p.strides[1].back();
    ParallelFor(inner, threads, kGrain, [&](int64_t s, int64_t e) {
      f(pa + s * sa, sa, pb + s * sb, sb, py + s, e - s);
    });
    return;
  }
  ParallelFor(rows, threads, std::max<int64_t>(1, kGrain / std::max<int64_t>(inner, 1)),
              [&](int64_t rb, int64_t re) {
                ForEachRow(p, rb, re, [&](const int64_t* off, int64_t yo, int64_t n,
                                          const int64_t* st) {
                  f(pa + off[0], st[0], pb + off[1], st[1], py + yo, n);
                });
              });
}

ShapeFn BroadcastShapes(const Node& node) {
  return [node](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
    std::vector<Shape> shapes;
    for (const TensorRef* t : in) {
      if (t) shapes.push_back(t->shape);
    }
    SY_ASSIGN_OR_RETURN(Shape out, BroadcastShape(node, shapes));
    return Shapes{out};
  };
}

bool InputsAre(const KernelBuildContext& c, std::initializer_list<DataType> ok) {
  if (c.input_dtypes.empty()) return false;
  for (DataType t : c.input_dtypes) {
    if (t != c.input_dtypes[0]) return false;
  }
  return std::find(ok.begin(), ok.end(), c.input_dtypes[0]) != ok.end();
}

// y = op(y, x) applied for the arithmetic ops on one dtype T.
template <typename T>
Status Arith(const Node& node, BinaryOp op, const TensorRef& a, const TensorRef& b,
             const TensorRef& y, int threads) {
  if constexpr (std::is_same_v<T, float>) {
    Broadcast2<float, float>(a, b, y, threads, [op](const float* x, int64_t sa, const float* z,
                                                    int64_t sb, float* out, int64_t n) {
      ApplyBinary(op, x, sa, z, sb, out, n);
    });
    return Status::Ok();
  } else {
    if (op == BinaryOp::kDiv) {  // integer division by zero would trap
      for (int64_t i = 0; i < b.numel(); ++i) {
        if (b.as<T>()[i] == 0) return ops::NodeError(node, "integer division by zero");
      }
    }
    auto run = [&](auto tag) {
      constexpr BinaryOp kOp = decltype(tag)::value;
      Broadcast2<T, T>(a, b, y, threads, [](const T* x, int64_t sa, const T* z, int64_t sb,
                                            T* out, int64_t n) {
        for (int64_t i = 0; i < n; ++i) out[i] = Binary<kOp, T>(x[i * sa], z[i * sb]);
      });
    };
    switch (op) {
      case BinaryOp::kAdd: run(std::integral_constant<BinaryOp, BinaryOp::kAdd>{}); break;
      case BinaryOp::kSub: run(std::integral_constant<BinaryOp, BinaryOp::kSub>{}); break;
      case BinaryOp::kMul: run(std::integral_constant<BinaryOp, BinaryOp::kMul>{}); break;
      case BinaryOp::kDiv: run(std::integral_constant<BinaryOp, BinaryOp::kDiv>{}); break;
      case BinaryOp::kMax: run(std::integral_constant<BinaryOp, BinaryOp::kMax>{}); break;
      case BinaryOp::kMin: run(std::integral_constant<BinaryOp, BinaryOp::kMin>{}); break;
      default: return ops::NodeUnsupported(node, "integer op");
    }
    return Status::Ok();
  }
}

Status ArithAny(const Node& node, BinaryOp op, const TensorRef& a, const TensorRef& b,
                const TensorRef& y, int threads) {
  switch (a.dtype) {
    case DataType::kFloat: return Arith<float>(node, op, a, b, y, threads);
    case DataType::kInt64: return Arith<int64_t>(node, op, a, b, y, threads);
    case DataType::kInt32: return Arith<int32_t>(node, op, a, b, y, threads);
    default: return ops::NodeUnsupported(node, "dtype");
  }
}

// Binary and variadic arithmetic: y = in0 op in1 op in2 ...; Mean divides at the end.
void RegisterArith(CpuImplRegistry& reg, const std::string& name, BinaryOp op, bool ints,
                   bool variadic, bool mean = false) {
  RegisterNative(
      reg, "", name,
      [ints, variadic](const Node& n, const KernelBuildContext& c) {
        if (!variadic && c.input_dtypes.size() != 2) return false;
        return ints ? InputsAre(c, {DataType::kFloat, DataType::kInt64, DataType::kInt32})
                    : InputsAre(c, {DataType::kFloat});
      },
      [op, mean](const StepView& v) {
        const Node node = v.node;
        return MakeKernel(BroadcastShapes(node), [node, op, mean](const KernelIO& io) {
          const TensorRef& y = *io.outputs[0];
          const auto& in = io.inputs;
          if (in.size() == 1) {
            std::memcpy(y.data, in[0]->data, in[0]->numel() * DataTypeSize(y.dtype));
          } else {
            SY_RETURN_IF_ERROR(ArithAny(node, op, *in[0], *in[1], y, io.threads));
            for (size_t i = 2; i < in.size(); ++i) {
              SY_RETURN_IF_ERROR(ArithAny(node, op, y, *in[i], y, io.threads));
            }
          }
          if (mean) {
            const float s = 1.f / static_cast<float>(in.size());
            float* p = y.as<float>();
            for (int64_t i = 0; i < y.numel(); ++i) p[i] *= s;
          }
          return Status::Ok();
        });
      });
}

enum class Cmp { kEq, kLt, kGt, kLe, kGe, kAnd, kOr, kXor };

template <Cmp kC, typename T>
void CompareSpan(const T* a, int64_t sa, const T* b, int64_t sb, uint8_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = a[i * sa], z = b[i * sb];
    if constexpr (kC == Cmp::kEq) y[i] = x == z;
    else if constexpr (kC == Cmp::kLt) y[i] = x < z;
    else if constexpr (kC == Cmp::kGt) y[i] = x > z;
    else if constexpr (kC == Cmp::kLe) y[i] = x <= z;
    else if constexpr (kC == Cmp::kGe) y[i] = x >= z;
    else if constexpr (kC == Cmp::kAnd) y[i] = (x != 0) & (z != 0);
    else if constexpr (kC == Cmp::kOr) y[i] = (x != 0) | (z != 0);
    else y[i] = (x != 0) ^ (z != 0);
  }
}

template <Cmp kC>
void RegisterCompare(CpuImplRegistry& reg, const std::string& name, bool logical) {
  RegisterNative(
      reg, "", name,
      [logical](const Node&, const KernelBuildContext& c) {
        if (c.input_dtypes.size() != 2) return false;
        return logical ? InputsAre(c, {DataType::kBool})
                       : InputsAre(c, {DataType::kFloat, DataType::kInt64, DataType::kInt32,
                                       DataType::kBool});
      },
      [](const StepView& v) {
        return MakeKernel(BroadcastShapes(v.node), [](const KernelIO& io) {
          const TensorRef &a = *io.inputs[0], &b = *io.inputs[1], &y = *io.outputs[0];
          switch (a.dtype) {
            case DataType::kFloat:
              Broadcast2<float, uint8_t>(a, b, y, io.threads, CompareSpan<kC, float>);
              break;
            case DataType::kInt64:
              Broadcast2<int64_t, uint8_t>(a, b, y, io.threads, CompareSpan<kC, int64_t>);
              break;
            case DataType::kInt32:
              Broadcast2<int32_t, uint8_t>(a, b, y, io.threads, CompareSpan<kC, int32_t>);
              break;
            default:
              Broadcast2<uint8_t, uint8_t>(a, b, y, io.threads, CompareSpan<kC, uint8_t>);
          }
          return Status::Ok();
        });
      });
}

// Where(cond, x, y): any element size; a three-way strided walk per row.
template <typename T>
void WhereRows(const BroadcastPlan& p, const uint8_t* c, const T* x, const T* z, T* y,
               int threads) {
  const int64_t inner = p.out.back(), rows = p.numel / std::max<int64_t>(inner, 1);
  ParallelFor(rows, threads, std::max<int64_t>(1, kGrain / std::max<int64_t>(inner, 1)),
              [&](int64_t rb, int64_t re) {
                ForEachRow(p, rb, re, [&](const int64_t* off, int64_t yo, int64_t n,
                                          const int64_t* st) {
                  const uint8_t* cc = c + off[0];
                  const T* xx = x + off[1];
                  const T* zz = z + off[2];
                  for (int64_t i = 0; i < n; ++i) {
                    y[yo + i] = cc[i * st[0]] ? xx[i * st[1]] : zz[i * st[2]];
                  }
                });
              });
}

void RegisterWhere(CpuImplRegistry& reg) {
  RegisterNative(
      reg, "", "Where",
      [](const Node&, const KernelBuildContext& c) {
        if (c.input_dtypes.size() != 3 || c.input_dtypes[0] != DataType::kBool) return false;
        const size_t sz = DataTypeSize(c.input_dtypes[1]);
        return c.input_dtypes[1] == c.input_dtypes[2] && (sz == 1 || sz == 4 || sz == 8);
      },
      [](const StepView& v) {
        return MakeKernel(BroadcastShapes(v.node), [](const KernelIO& io) {
          const TensorRef &c = *io.inputs[0], &x = *io.inputs[1], &z = *io.inputs[2];
          const TensorRef& y = *io.outputs[0];
          const BroadcastPlan p = MakeBroadcastPlan(y.shape, {c.shape, x.shape, z.shape});
          if (p.numel == 0) return Status::Ok();
          switch (DataTypeSize(y.dtype)) {
            case 1: WhereRows(p, c.as<uint8_t>(), x.as<uint8_t>(), z.as<uint8_t>(),
                              y.as<uint8_t>(), io.threads); break;
            case 4: WhereRows(p, c.as<uint8_t>(), x.as<uint32_t>(), z.as<uint32_t>(),
                              y.as<uint32_t>(), io.threads); break;
            default: WhereRows(p, c.as<uint8_t>(), x.as<uint64_t>(), z.as<uint64_t>(),
                               y.as<uint64_t>(), io.threads);
          }
          return Status::Ok();
        });
      });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeBinary) {
  RegisterArith(reg, "Add", BinaryOp::kAdd, true, false);
  RegisterArith(reg, "Sub", BinaryOp::kSub, true, false);
  RegisterArith(reg, "Mul", BinaryOp::kMul, true, false);
  RegisterArith(reg, "Div", BinaryOp::kDiv, true, false);
  RegisterArith(reg, "Pow", BinaryOp::kPow, false, false);
  RegisterArith(reg, "PRelu", BinaryOp::kPRelu, false, false);
  RegisterArith(reg, "Max", BinaryOp::kMax, true, true);
  RegisterArith(reg, "Min", BinaryOp::kMin, true, true);
  RegisterArith(reg, "Sum", BinaryOp::kAdd, false, true);
  RegisterArith(reg, "Mean", BinaryOp::kAdd, false, true, /*mean=*/true);
  RegisterCompare<Cmp::kEq>(reg, "Equal", false);
  RegisterCompare<Cmp::kLt>(reg, "Less", false);
  RegisterCompare<Cmp::kGt>(reg, "Greater", false);
  RegisterCompare<Cmp::kLe>(reg, "LessOrEqual", false);
  RegisterCompare<Cmp::kGe>(reg, "GreaterOrEqual", false);
  RegisterCompare<Cmp::kAnd>(reg, "And", true);
  RegisterCompare<Cmp::kOr>(reg, "Or", true);
  RegisterCompare<Cmp::kXor>(reg, "Xor", true);
  RegisterWhere(reg);
}

}  // namespace switchyard::native
