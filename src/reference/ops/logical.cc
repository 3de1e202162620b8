// Logical, bitwise and comparison ops: And, Or, Xor, Not, BitwiseAnd/Or/Xor/Not, BitShift,
// Equal, Less, Greater, LessOrEqual, GreaterOrEqual, Where.
#include "reference/ops/binary_kernel.h"
#include "reference/ops/unary_kernel.h"

namespace switchyard::ops {
namespace {

using namespace elem;  // NOLINT: the family's own helpers

Result<std::pair<const Tensor*, const Tensor*>> SameTypedPair(const KernelContext& ctx,
                                                             unsigned cls) {
  SY_ASSIGN_OR_RETURN(const Tensor* a, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* b, RequireInput(ctx, 1));
  if (a->dtype() != b->dtype()) {
    return NodeError(ctx.node, std::string("input types differ: ") + DataTypeName(a->dtype()) +
                                   " vs " + DataTypeName(b->dtype()));
  }
  SY_RETURN_IF_ERROR(CheckClass(ctx.node, a->dtype(), cls, "input"));
  return std::make_pair(a, b);
}

// Comparison: bool output; floats compare as doubles, integers and bools exactly.
template <typename Cmp>
KernelFn MakeCompare(unsigned cls, Cmp cmp) {
  return [cls, cmp](const KernelContext& ctx) -> Result<std::vector<Tensor>> {
    SY_ASSIGN_OR_RETURN(auto ab, SameTypedPair(ctx, cls));
    const Tensor& a = *ab.first;
    const Tensor& b = *ab.second;
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastOf(ctx.node, {&a, &b}));
    Tensor out(DataType::kBool, std::move(shape));
    if (a.dtype() == DataType::kString) {
      BroadcastPlan plan({a.shape(), b.shape()}, out.shape());
      bool* o = out.data<bool>();
      plan.ForEachRow([&](int64_t oo, const int64_t* off, const int64_t* st, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          o[oo + i] = cmp(a.strings()[off[0] + i * st[0]], b.strings()[off[1] + i * st[1]]);
        }
      });
      return std::vector<Tensor>{std::move(out)};
    }
    Dispatch(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloat<T>) {
        BinaryLoop<T, T, bool>(a, b, out, [&](T x, T y) { return cmp(ToF(x), ToF(y)); });
      } else {
        BinaryLoop<T, T, bool>(a, b, out, [&](T x, T y) { return cmp(x, y); });
      }
    });
    return std::vector<Tensor>{std::move(out)};
  };
}

InferFn CompareInfer(unsigned cls) {
  return [cls](const InferContext& c) -> Result<std::vector<TensorType>> {
    SY_RETURN_IF_ERROR(CheckClass(c.node, InDtype(c, 0), cls, "input"));
    return InferBroadcast(c, DataType::kBool);
  };
}

// Same-type integer/bool op computed on the element type itself.
template <typename Op>
KernelFn MakeIntBinary(unsigned cls, Op op) {
  return [cls, op](const KernelContext& ctx) -> Result<std::vector<Tensor>> {
    SY_ASSIGN_OR_RETURN(auto ab, SameTypedPair(ctx, cls));
    SY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastOf(ctx.node, {ab.first, ab.second}));
    Tensor out(ab.first->dtype(), std::move(shape));
    Dispatch(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsInt<T> || std::is_same_v<T, bool>) {
        BinaryLoop<T, T, T>(*ab.first, *ab.second, out,
                            [&](T x, T y) { return static_cast<T>(op(x, y)); });
      }
    });
    return std::vector<Tensor>{std::move(out)};
  };
}

InferFn SameTypeInfer(unsigned cls) {
  return [cls](const InferContext& c) -> Result<std::vector<TensorType>> {
    SY_RETURN_IF_ERROR(CheckClass(c.node, InDtype(c, 0), cls, "input"));
    return InferBroadcast(c);
  };
}

Result<std::vector<Tensor>> RunBitShift(const KernelContext& ctx) {
  const std::string dir = ctx.node.GetString("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") {
    return NodeError(ctx.node, "direction must be LEFT or RIGHT, got '" + dir + "'");
  }
  const bool left = dir == "LEFT";
  auto shift = [left](auto x, auto y) -> decltype(x) {
    using T = decltype(x);
    if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
      // Shifting by the bit width or more is UB in C++; every bit is shifted out.
      if (y >= sizeof(T) * 8) return 0;
      return static_cast<T>(left ? x << y : x >> y);
    } else {
      return T{};  // unreachable: BitShift takes unsigned integers only
    }
  };
  return MakeIntBinary(kUnsignedInts, shift)(ctx);
}

Result<std::vector<Tensor>> RunNot(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0));
  SY_RETURN_IF_ERROR(CheckClass(ctx.node, x->dtype(), kBools, "input"));
  Tensor out(DataType::kBool, x->shape());
  const bool* in = x->data<bool>();
  bool* o = out.data<bool>();
  for (int64_t i = 0; i < x->numel(); ++i) o[i] = !in[i];
  return std::vector<Tensor>{std::move(out)};
}

// Where(cond, X, Y): three-way broadcast; X and Y of any one type (strings too).
Result<std::vector<Tensor>> RunWhere(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Tensor* c, RequireInput(ctx, 0));
  SY_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 1));
  SY_ASSIGN_OR_RETURN(const Tensor* y, RequireInput(ctx, 2));
  if (c->dtype() != DataType::kBool) {
    return NodeError(ctx.node, std::string("condition must be bool, got ") +
                                   DataTypeName(c->dtype()));
  }
  if (x->dtype() != y->dtype()) {
    return NodeError(ctx.node, std::string("X and Y types differ: ") + DataTypeName(x->dtype()) +
                                   " vs " + DataTypeName(y->dtype()));
  }
  SY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastOf(ctx.node, {c, x, y}));
  Tensor out(x->dtype(), shape);
  BroadcastPlan plan({c->shape(), x->shape(), y->shape()}, shape);
  const bool* pc = c->data<bool>();
  if (x->dtype() == DataType::kString) {
    plan.ForEachRow([&](int64_t o, const int64_t* off, const int64_t* st, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        out.strings()[o + i] = pc[off[0] + i * st[0]] ? x->strings()[off[1] + i * st[1]]
                                                      : y->strings()[off[2] + i * st[2]];
      }
    });
  } else {
    Dispatch(x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x->data<T>();
      const T* py = y->data<T>();
      T* po = out.data<T>();
      plan.ForEachRow([&](int64_t o, const int64_t* off, const int64_t* st, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          po[o + i] = pc[off[0] + i * st[0]] ? px[off[1] + i * st[1]] : py[off[2] + i * st[2]];
        }
      });
    });
  }
  return std::vector<Tensor>{std::move(out)};
}

Result<std::vector<TensorType>> InferWhere(const InferContext& c) {
  SY_RETURN_IF_ERROR(CheckClass(c.node, InDtype(c, 0), kBools, "condition"));
  SY_ASSIGN_OR_RETURN(DataType dt, SameDtype(c, {1, 2}));
  return BroadcastTypes(c, {0, 1, 2}, dt);
}

}  // namespace

SY_REGISTER_OPS(Logical) {
  auto eq = [](auto x, auto y) { return x == y; };
  auto lt = [](auto x, auto y) { return x < y; };
  auto gt = [](auto x, auto y) { return x > y; };
  auto le = [](auto x, auto y) { return x <= y; };
  auto ge = [](auto x, auto y) { return x >= y; };
  for (int v : {7, 11, 13}) {
    reg.Register({"", "Equal", v, 2, 2, 1, 1, CompareInfer(kNumeric | kBools),
                  MakeCompare(kNumeric | kBools, eq)});
  }
  reg.Register({"", "Equal", 19, 2, 2, 1, 1, CompareInfer(kAll), MakeCompare(kAll, eq)});
  for (int v : {7, 9, 13}) {
    reg.Register({"", "Less", v, 2, 2, 1, 1, CompareInfer(kNumeric), MakeCompare(kNumeric, lt)});
    reg.Register(
        {"", "Greater", v, 2, 2, 1, 1, CompareInfer(kNumeric), MakeCompare(kNumeric, gt)});
  }
  for (int v : {12, 16}) {
    reg.Register(
        {"", "LessOrEqual", v, 2, 2, 1, 1, CompareInfer(kNumeric), MakeCompare(kNumeric, le)});
    reg.Register({"", "GreaterOrEqual", v, 2, 2, 1, 1, CompareInfer(kNumeric),
                  MakeCompare(kNumeric, ge)});
  }

  reg.Register({"", "And", 7, 2, 2, 1, 1, SameTypeInfer(kBools),
                MakeIntBinary(kBools, [](auto x, auto y) { return x && y; })});
  reg.Register({"", "Or", 7, 2, 2, 1, 1, SameTypeInfer(kBools),
                MakeIntBinary(kBools, [](auto x, auto y) { return x || y; })});
  reg.Register({"", "Xor", 7, 2, 2, 1, 1, SameTypeInfer(kBools),
                MakeIntBinary(kBools, [](auto x, auto y) { return x != y; })});
  reg.Register({"", "Not", 1, 1, 1, 1, 1, UnaryInfer(kBools), RunNot});

  reg.Register({"", "BitwiseAnd", 18, 2, 2, 1, 1, SameTypeInfer(kInts),
                MakeIntBinary(kInts, [](auto x, auto y) { return x & y; })});
  reg.Register({"", "BitwiseOr", 18, 2, 2, 1, 1, SameTypeInfer(kInts),
                MakeIntBinary(kInts, [](auto x, auto y) { return x | y; })});
  reg.Register({"", "BitwiseXor", 18, 2, 2, 1, 1, SameTypeInfer(kInts),
                MakeIntBinary(kInts, [](auto x, auto y) { return x ^ y; })});
  reg.Register({"", "BitwiseNot", 18, 1, 1, 1, 1, UnaryInfer(kInts),
                MakeUnaryKernel(kInts, [](double x) { return x; },
                                [](auto x) { return static_cast<decltype(x)>(~x); })});
  reg.Register({"", "BitShift", 11, 2, 2, 1, 1, SameTypeInfer(kUnsignedInts), RunBitShift});

  for (int v : {9, 16}) reg.Register({"", "Where", v, 3, 3, 1, 1, InferWhere, RunWhere});
}

}  // namespace switchyard::ops
