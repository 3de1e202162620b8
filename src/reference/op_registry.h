// The operator table: for each (domain, op type, since-version) its arity, its type and
// shape inference and its reference kernel (the accuracy oracle). The registry resolves
// a node to the newest implementation not newer than the model's opset for that domain.
// Registration happens during static initialisation (SY_REGISTER_OPS); lookups afterwards
// are read-only and thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "switchyard/status.h"

namespace switchyard {

// What shape inference knows about one node's inputs.
struct InferContext {
  const Node& node;
  int64_t opset;
  std::vector<const TensorType*> inputs;  // nullptr for an omitted optional input
  std::vector<const Tensor*> constants;   // the value when an input is a constant, else nullptr

  size_t num_inputs() const { return inputs.size(); }
  const TensorType* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  const Tensor* constant(size_t i) const { return i < constants.size() ? constants[i] : nullptr; }
  size_t num_outputs() const { return node.outputs.size(); }
};

// What a reference kernel sees at run time. Inputs may be nullptr (omitted optional).
struct KernelContext {
  const Node& node;
  int64_t opset;
  std::vector<const Tensor*> inputs;

  size_t num_inputs() const { return inputs.size(); }
  const Tensor* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  size_t num_outputs() const { return node.outputs.size(); }
};

// Returns one TensorType per node output (omitted outputs may get a default type).
using InferFn = std::function<Result<std::vector<TensorType>>(const InferContext&)>;
// Returns one Tensor per node output, in order.
using KernelFn = std::function<Result<std::vector<Tensor>>(const KernelContext&)>;

struct OpSchema {
  std::string domain;  // "" = ai.onnx
  std::string op_type;
  int since_version = 1;
  int min_inputs = 0, max_inputs = 0;    // max -1 = variadic
  int min_outputs = 1, max_outputs = 1;  // max -1 = variadic
  InferFn infer;  // required
  KernelFn run;   // required
  // False for ops whose outputs are not a function of their inputs (random number
  // generators): never constant-folded.
  bool deterministic = true;
};

class OpRegistry {
 public:
  // The process-wide table holding every reference op.
  static OpRegistry& Global();

  void Register(OpSchema schema);
  // Newest schema with since_version <= opset; nullptr when there is none.
  const OpSchema* Find(const std::string& domain, const std::string& op_type,
                       int64_t opset) const;
  // True when some version of (domain, op_type) is registered.
  bool Knows(const std::string& domain, const std::string& op_type) const;
  // Every registered (domain, op_type, since_version), sorted.
  std::vector<const OpSchema*> All() const;

 private:
  std::vector<OpSchema> schemas_;
};

// Registers a family of ops at static-initialisation time. Use once per .cc file:
//   SY_REGISTER_OPS(Elementwise) { reg.Register({...}); }
struct OpRegistrar {
  explicit OpRegistrar(void (*fn)(OpRegistry&)) { fn(OpRegistry::Global()); }
};
#define SY_REGISTER_OPS(family)                                          \
  static void SyRegister##family(::switchyard::OpRegistry& reg);         \
  static ::switchyard::OpRegistrar sy_registrar_##family(&SyRegister##family); \
  static void SyRegister##family(::switchyard::OpRegistry& reg)

// "Conv node 'conv1' (Conv-11)" for error messages.
std::string NodeLabel(const Node& node);

}  // namespace switchyard
