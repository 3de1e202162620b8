// Helpers for the pass tests: small hand-built graphs, deterministic inputs, running a
// graph through the reference executor and comparing outputs by relative L2.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "build/target.h"
#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "ir/verifier.h"
#include "passes/pass.h"
#include "reference/executor.h"

namespace switchyard::testing {

inline Tensor Filled(DataType dt, std::vector<int64_t> shape, uint32_t seed, double lo = -1, double hi = 1) {
  Tensor t(dt, std::move(shape));
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.SetDouble(i, lo + (hi - lo) * ((s >> 8) / 16777216.0));
  }
  return t;
}

inline double RelL2(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < b.numel(); ++i) {
    const double x = a.GetDouble(i), y = b.GetDouble(i);
    if (std::isinf(x) && x == y) continue;
    num += (x - y) * (x - y);
    den += y * y;
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// A graph under construction: float32 unless told otherwise, default opset 17.
struct GraphBuilder {
  Graph g;
  int counter = 0;
  explicit GraphBuilder(int64_t opset = 17) { g.opsets[""] = opset; }

  ValueId Input(const std::string& name, std::vector<int64_t> shape, DataType dt = DataType::kFloat) {
    const ValueId id = g.AddValue(name, TensorType::FromShape(dt, shape));
    g.inputs.push_back(id);
    return id;
  }
  ValueId Const(const std::string& name, Tensor t) {
    const ValueId id = g.AddValue(name, TensorType::FromShape(t.dtype(), t.shape()));
    g.constants[id] = std::move(t);
    return id;
  }
  ValueId Scalar(double v, DataType dt = DataType::kFloat) {
    return Const("c" + std::to_string(counter++), Tensor::Scalar(dt, v));
  }
  // Adds a node with one output (or `n_out`); returns its first output.
  ValueId Op(const std::string& op, std::vector<ValueId> inputs,
             std::function<void(Node&)> attrs = nullptr, int n_out = 1) {
    Node n;
    n.op_type = op;
    n.name = op + "_" + std::to_string(counter++);
    n.inputs = std::move(inputs);
    for (int i = 0; i < n_out; ++i) n.outputs.push_back(g.AddValue(n.name + "_out" + std::to_string(i)));
    if (attrs) attrs(n);
    const ValueId out = n.outputs[0];
    g.nodes.push_back(std::move(n));
    return out;
  }
  void Output(ValueId v) { g.outputs.push_back(v); }
  Graph Finish() {
    g.RebuildProducers();
    Status s = InferShapes(g);
    EXPECT_TRUE(s.ok()) << s.ToString();
    s = VerifyGraph(g);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return g;
  }
};

inline Attribute IntsAttr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
inline Attribute IntAttr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}
inline Attribute StringAttr(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}
inline Attribute FloatAttr(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}

inline Result<TensorMap> RunReference(const Graph& g, const TensorMap& inputs) {
  SY_ASSIGN_OR_RETURN(ReferenceExecutor ex, ReferenceExecutor::Create(g));
  return ex.Run(inputs);
}

// Runs RunPasses with the knobs in `on` enabled for `for_target` (default: the host CPU);
// returns the report.
inline Result<BuildReport> Optimize(Graph& g, const std::set<std::string>& on, const Target* for_target = nullptr) {
  static const Target host = Target::HostCpu();
  const Target& target = for_target ? *for_target : host;
  BuildReport report;
  PassContext ctx{[&on](const std::string& k) { return on.count(k) != 0; }, target, report};
  SY_RETURN_IF_ERROR(RunPasses(g, ctx));
  return report;
}

inline const std::set<std::string>& AllFuseKnobs() {
  static const std::set<std::string> k = {"fuse.conv_bn", "fuse.conv_act", "fuse.conv_scale", "fuse.gemm_epilogue",
                                          "fuse.elementwise", "fuse.layernorm", "fuse.gelu",
                                          "fuse.attention", "fuse.slice"};
  return k;
}

inline int CountOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == op;
  return n;
}

// Optimises a copy of `g` with `knobs` and checks every output against the reference run
// of the original within rel-L2 `tol`. Returns the optimised graph's report.
inline BuildReport ExpectExact(const Graph& g, const TensorMap& inputs, const std::set<std::string>& knobs,
                               Graph* optimized_out = nullptr, double tol = 1e-6, const Target* target = nullptr) {
  auto want = RunReference(g, inputs);
  EXPECT_TRUE(want.ok()) << want.status().ToString();
  Graph opt = g;
  auto report = Optimize(opt, knobs, target);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (!report.ok() || !want.ok()) return {};
  auto got = RunReference(opt, inputs);
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  if (!got.ok()) return *report;
  for (const auto& [name, t] : *want) {
    auto it = got->find(name);
    EXPECT_NE(it, got->end()) << "output " << name << " lost";
    if (it == got->end()) continue;
    EXPECT_EQ(it->second.shape(), t.shape()) << name;
    if (it->second.shape() != t.shape()) continue;
    EXPECT_LE(RelL2(it->second, t), tol) << "output " << name;
  }
  if (optimized_out) *optimized_out = std::move(opt);
  return *report;
}

// One deterministic input tensor per graph input (seeds from `seed` up).
inline TensorMap In(const Graph& g, uint32_t seed = 1) {
  TensorMap m;
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    m[v.name] = Filled(v.type.dtype, v.type.StaticShape(), seed++);
  }
  return m;
}

// How often a knob (or pass) fired in a report; 0 when never.
inline int Fired(const BuildReport& r, const std::string& k) {
  auto it = r.fired.find(k);
  return it == r.fired.end() ? 0 : it->second;
}

}  // namespace switchyard::testing
