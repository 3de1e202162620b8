// The intermediate representation: a Graph of Nodes over named Values. Values have a
// TensorType whose dimensions are static (value >= 0) or symbolic (a name, or unknown).
// Constants (ONNX initializers) are Tensors owned by the Graph. A Graph is a plain value
// owned by its user; passes edit it in place; it is not synchronised.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/dtype.h"
#include "ir/tensor.h"
#include "switchyard/status.h"

namespace switchyard {

// One dimension: static when value >= 0; otherwise symbolic, named by `symbol`
// (empty symbol = unknown, unrelated to any other dimension).
struct Dim {
  int64_t value = -1;
  std::string symbol;

  Dim() = default;
  Dim(int64_t v) : value(v) {}  // NOLINT: implicit from a static size
  static Dim Symbol(std::string s) {
    Dim d;
    d.symbol = std::move(s);
    return d;
  }
  bool is_static() const { return value >= 0; }
  bool operator==(const Dim& o) const { return value == o.value && symbol == o.symbol; }
  std::string ToString() const;  // "224", "batch" or "?"
};

struct TensorType {
  DataType dtype = DataType::kUndefined;
  bool has_shape = false;  // false: rank unknown
  std::vector<Dim> dims;

  TensorType() = default;
  TensorType(DataType t, std::vector<Dim> d) : dtype(t), has_shape(true), dims(std::move(d)) {}
  static TensorType Unranked(DataType t) {
    TensorType tt;
    tt.dtype = t;
    return tt;
  }
  static TensorType FromShape(DataType t, const std::vector<int64_t>& shape);
  int64_t rank() const { return has_shape ? static_cast<int64_t>(dims.size()) : -1; }
  bool is_static() const;  // has_shape and every dim static
  std::vector<int64_t> StaticShape() const;  // -1 for non-static dims
  std::string ToString() const;  // "float32[1,3,?,?]" / "float32[batch,1000]" / "float32[*]"
};

struct Graph;

struct Attribute {
  enum class Kind { kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings, kTensors, kGraphs };
  Kind kind = Kind::kInt;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;  // kGraph: one entry
};

using ValueId = int32_t;
constexpr ValueId kNoValue = -1;  // an omitted optional input or output
using NodeId = int32_t;

struct Node {
  std::string name;     // never empty after import (generated as "<op_type>_<index>")
  std::string op_type;
  std::string domain;   // "" for the default ONNX domain
  int since_version = 0;  // version of the implementation chosen for the model's opset
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::map<std::string, Attribute> attrs;

  bool Has(const std::string& a) const { return attrs.count(a) != 0; }
  int64_t GetInt(const std::string& a, int64_t def) const;
  float GetFloat(const std::string& a, float def) const;
  std::string GetString(const std::string& a, const std::string& def) const;
  std::vector<int64_t> GetInts(const std::string& a, std::vector<int64_t> def = {}) const;
  std::vector<float> GetFloats(const std::string& a, std::vector<float> def = {}) const;
  const Attribute* Find(const std::string& a) const;
  // Number of inputs actually given (trailing omitted ones not counted).
  size_t NumInputs() const;
  bool HasInput(size_t i) const { return i < inputs.size() && inputs[i] != kNoValue; }
};

struct Value {
  std::string name;
  TensorType type;
  NodeId producer = -1;  // -1: graph input, constant, or nothing
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;    // topological order after import and after every pass
  std::vector<Value> values;  // indexed by ValueId
  std::vector<ValueId> inputs;   // runtime inputs (initializers excluded)
  std::vector<ValueId> outputs;
  std::unordered_map<ValueId, Tensor> constants;  // initializers and folded constants
  std::map<std::string, int64_t> opsets;          // domain ("" = ai.onnx) -> version
  std::string producer_name, producer_version;
  int64_t ir_version = 0;
  std::string model_path;  // file the graph was imported from, if any

  ValueId AddValue(std::string name, TensorType type = {});
  // Returns kNoValue when no value has that name.
  ValueId FindValue(const std::string& name) const;
  const Value& value(ValueId id) const { return values[static_cast<size_t>(id)]; }
  Value& value(ValueId id) { return values[static_cast<size_t>(id)]; }
  bool IsConstant(ValueId id) const { return constants.count(id) != 0; }
  const Tensor* Constant(ValueId id) const;
  int64_t Opset(const std::string& domain = "") const;

  // Recomputes Value::producer from nodes (after a pass reorders or edits them).
  void RebuildProducers();
  // For each value, the nodes that read it.
  std::vector<std::vector<NodeId>> Consumers() const;

 private:
  std::unordered_map<std::string, ValueId> by_name_;
};

}  // namespace switchyard
