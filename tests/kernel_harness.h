// The cross-backend kernel harness: a table of single-op cases. For every registered
// CpuOpImpl (any provider) and every case of the same (domain, op_type) that the impl
// supports, tests/kernel_harness_test.cc runs the node through RunSingleOp and compares
// it with the op's reference kernel (fp64) at the case's tolerance: relative L2 for
// floating outputs, exact equality for integer and bool outputs. It also fails when a
// registered impl is exercised by no case, so no implementation ships untested.
//
// Adding rows from another file (e.g. tests/kernel_harness_cases_onednn_test.cc):
//
//   #include "kernel_harness.h"
//   namespace switchyard::harness {
//   static const bool kRegistered = (AddHarnessCases({
//       Case("conv3x3", "", "Conv", 17)
//           .Attr("pads", Ints({1, 1, 1, 1}))
//           .In(DataType::kFloat, {1, 8, 14, 14})
//           .In(DataType::kFloat, {16, 8, 3, 3}, /*constant=*/true)
//           .Tol(1e-5, 2e-2),
//   }), true);
//   }  // namespace switchyard::harness
//
// Case files must end in `_test.cc`: tests/CMakeLists.txt globs only tests/*_test.cc
// into switchyard_tests. Registration happens in static initialisers, before main.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace switchyard::harness {

struct HarnessCase {
  std::string name;    // unique, short: shown in the per-(impl, case) line
  std::string domain;  // "" = ai.onnx, "switchyard" = internal fused ops
  std::string op_type;
  int opset = 17;
  std::map<std::string, Attribute> attrs;
  // dtype and shape per node input; DataType::kUndefined marks an omitted optional input.
  std::vector<std::pair<DataType, std::vector<int64_t>>> inputs;
  std::vector<bool> constant;  // per input: passed as a build-time constant (weights)
  double tol_fp32 = 1e-5;      // relative L2 bound when the node runs at precision fp32
  double tol_bf16 = 2e-2;      // ... at precision bf16 (< 0: do not run at bf16)
  double tol_int8 = 5e-2;      // ... with quant.weights=int8 (< 0: do not run; default off
                               //     unless `int8` is set)
  bool int8 = false;           // also run with quant_weights = "int8"
  int num_outputs = 1;
  // Explicit input values (shape inputs, axes, indices). Inputs not listed are random
  // from a fixed-seed generator, uniform in `ranges[i]` when given, else [-2, 2] for
  // floats, [-3, 3] for integers (clamped to the type), random bools.
  std::map<int, Tensor> values;
  std::map<int, std::pair<double, double>> ranges;

  // Small fluent builder so rows read as one expression.
  HarnessCase& Attr(const std::string& key, Attribute a) {
    attrs[key] = std::move(a);
    return *this;
  }
  HarnessCase& In(DataType t, std::vector<int64_t> shape, bool is_constant = false) {
    inputs.emplace_back(t, std::move(shape));
    constant.push_back(is_constant);
    return *this;
  }
  HarnessCase& Omitted() { return In(DataType::kUndefined, {}); }
  // An input with fixed contents (e.g. a Reshape shape); constant by default because
  // that is how exported models carry them.
  HarnessCase& InValue(Tensor t, bool is_constant = true) {
    values[static_cast<int>(inputs.size())] = t;
    return In(t.dtype(), t.shape(), is_constant);
  }
  HarnessCase& Range(double lo, double hi) {  // value range of the last added input
    ranges[static_cast<int>(inputs.size()) - 1] = {lo, hi};
    return *this;
  }
  HarnessCase& Tol(double fp32, double bf16 = 2e-2) {
    tol_fp32 = fp32;
    tol_bf16 = bf16;
    return *this;
  }
  HarnessCase& Outputs(int n) {
    num_outputs = n;
    return *this;
  }
  HarnessCase& Int8(double tol = 5e-2) {
    int8 = true;
    tol_int8 = tol;
    return *this;
  }
};

inline HarnessCase Case(std::string name, std::string domain, std::string op_type,
                        int opset = 17) {
  HarnessCase c;
  c.name = std::move(name);
  c.domain = std::move(domain);
  c.op_type = std::move(op_type);
  c.opset = opset;
  return c;
}

// Attribute constructors.
inline Attribute Int(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}
inline Attribute Float(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}
inline Attribute Str(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}
inline Attribute Ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
inline Attribute Floats(std::vector<float> v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloats;
  a.floats = std::move(v);
  return a;
}
inline Attribute Strs(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Kind::kStrings;
  a.strings = std::move(v);
  return a;
}
inline Attribute TensorAttr(Tensor t) {
  Attribute a;
  a.kind = Attribute::Kind::kTensor;
  a.t = std::move(t);
  return a;
}

// Appends rows to the global table. Call from a static initialiser in a case file.
void AddHarnessCases(std::vector<HarnessCase> cases);
// The table (every row registered so far).
const std::vector<HarnessCase>& HarnessCases();

}  // namespace switchyard::harness

namespace switchyard {
// Spelled as in the assignment: the same function, reachable without the namespace.
using harness::AddHarnessCases;
using harness::HarnessCase;
}  // namespace switchyard
