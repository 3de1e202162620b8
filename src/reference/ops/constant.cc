// Constant-producing ops: Constant, ConstantOfShape.
#include <cstring>

#include "reference/ops/common.h"

namespace switchyard::ops {
namespace {

using Types = std::vector<TensorType>;

// The tensor a Constant node holds, from whichever one value attribute it has.
Result<Tensor> ConstantValue(const Node& node) {
  static const char* kNames[] = {"value",      "value_float",  "value_floats", "value_int",
                                 "value_ints", "value_string", "value_strings", "sparse_value"};
  const char* found = nullptr;
  for (const char* n : kNames) {
    if (!node.Has(n)) continue;
    if (found) {
      return NodeError(node, std::string("has both '") + found + "' and '" + n + "'");
    }
    found = n;
  }
  if (!found) return NodeError(node, "has no value attribute");
  const std::string name = found;
  const Attribute& a = *node.Find(name);
  if (name == "sparse_value") return NodeUnsupported(node, "sparse constants are not supported");
  if (name == "value") {
    if (a.kind != Attribute::Kind::kTensor) return NodeError(node, "'value' is not a tensor");
    return a.t;
  }
  if (name == "value_float") return Tensor::FromFloat({a.f}, {});
  if (name == "value_floats") {
    return Tensor::FromFloat(a.floats, {static_cast<int64_t>(a.floats.size())});
  }
  if (name == "value_int") return Tensor::FromInt64({a.i}, {});
  if (name == "value_ints") return Tensor::FromInt64(a.ints, {static_cast<int64_t>(a.ints.size())});
  if (name == "value_string") {
    Tensor t(DataType::kString, {});
    t.strings()[0] = a.s;
    return t;
  }
  Tensor t(DataType::kString, {static_cast<int64_t>(a.strings.size())});
  t.strings() = a.strings;
  return t;
}

Result<Types> InferConstant(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(Tensor t, ConstantValue(ctx.node));
  return Types{TensorType::FromShape(t.dtype(), t.shape())};
}

Result<std::vector<Tensor>> RunConstant(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(Tensor t, ConstantValue(ctx.node));
  return std::vector<Tensor>{std::move(t)};
}

// The fill element: the 'value' attribute (one element) or float 0.
Result<Tensor> FillValue(const Node& node) {
  const Attribute* a = node.Find("value");
  if (!a) return Tensor::FromFloat({0.f}, {1});
  if (a->kind != Attribute::Kind::kTensor || a->t.numel() != 1) {
    return NodeError(node, "'value' must be a one-element tensor");
  }
  if (a->t.dtype() == DataType::kString) return NodeUnsupported(node, "string fill value");
  return a->t;
}

Result<Types> InferConstantOfShape(const InferContext& ctx) {
  SY_ASSIGN_OR_RETURN(Tensor v, FillValue(ctx.node));
  const TensorType* s = ctx.input(0);
  if (!s) return NodeError(ctx.node, "missing shape input");
  if (s->dtype != DataType::kInt64 && s->dtype != DataType::kUndefined) {
    return NodeError(ctx.node, "shape input must be int64");
  }
  std::vector<int64_t> shape;
  if (ConstantInts(ctx, 0, &shape)) {
    for (int64_t d : shape) {
      if (d < 0) return NodeError(ctx.node, "shape has a negative entry");
    }
    return Types{TensorType::FromShape(v.dtype(), shape)};
  }
  if (s->has_shape && s->dims.size() == 1 && s->dims[0].is_static()) {
    return Types{TensorType(v.dtype(), std::vector<Dim>(s->dims[0].value))};
  }
  return Types{TensorType::Unranked(v.dtype())};
}

Result<std::vector<Tensor>> RunConstantOfShape(const KernelContext& ctx) {
  SY_ASSIGN_OR_RETURN(Tensor v, FillValue(ctx.node));
  SY_ASSIGN_OR_RETURN(const Tensor* s, RequireInput(ctx, 0));
  if (s->rank() != 1) return NodeError(ctx.node, "shape input must be 1-D");
  const std::vector<int64_t> shape = s->ToInt64Vector();
  auto n = CheckedNumElements(shape);
  if (!n.ok()) return NodeError(ctx.node, n.status().message());
  Tensor out(v.dtype(), shape);
  const size_t es = DataTypeSize(v.dtype());
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (int64_t i = 0; i < *n; ++i) std::memcpy(dst + i * es, v.raw(), es);
  return std::vector<Tensor>{std::move(out)};
}

}  // namespace

SY_REGISTER_OPS(Constant) {
  for (int v : {1, 9, 11, 12, 13, 19, 21}) {
    reg.Register({"", "Constant", v, 0, 0, 1, 1, InferConstant, RunConstant});
  }
  for (int v : {9, 20, 21}) {
    reg.Register({"", "ConstantOfShape", v, 1, 1, 1, 1, InferConstantOfShape, RunConstantOfShape});
  }
}

}  // namespace switchyard::ops
