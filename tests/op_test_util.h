// Helpers shared by the reference-op unit tests: build a node, run or infer it through
// the registry, and make small int64 tensors.
#pragma once

#include <string>
#include <vector>

#include "reference/op_registry.h"

namespace switchyard::optest {

inline Attribute Ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
inline Attribute Int(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}

inline Node MakeNode(const std::string& op, size_t n_in, size_t n_out = 1) {
  Node n;
  n.name = "n1";
  n.op_type = op;
  for (size_t i = 0; i < n_in; ++i) n.inputs.push_back(static_cast<ValueId>(i));
  for (size_t i = 0; i < n_out; ++i) n.outputs.push_back(static_cast<ValueId>(100 + i));
  return n;
}

inline Result<std::vector<Tensor>> RunOp(const Node& n, int opset, std::vector<const Tensor*> in) {
  const OpSchema* s = OpRegistry::Global().Find("", n.op_type, opset);
  if (!s) return Status::NotFound("no schema for " + n.op_type);
  return s->run(KernelContext{n, opset, std::move(in)});
}

inline Result<std::vector<TensorType>> InferOp(const Node& n, int opset, std::vector<const TensorType*> in,
                                      std::vector<const Tensor*> consts) {
  const OpSchema* s = OpRegistry::Global().Find("", n.op_type, opset);
  if (!s) return Status::NotFound("no schema for " + n.op_type);
  consts.resize(in.size(), nullptr);
  return s->infer(InferContext{n, opset, std::move(in), std::move(consts)});
}

inline std::vector<int64_t> I64(const Tensor& t) { return t.ToInt64Vector(); }
inline Tensor Vec(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromInt64(v, {n});
}
inline Tensor Iota(std::vector<int64_t> shape) {
  Tensor t(DataType::kInt64, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.SetInt64(i, i);
  return t;
}

}  // namespace switchyard::optest
