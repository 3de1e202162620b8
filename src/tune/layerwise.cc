#include "tune/layerwise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "reference/executor.h"
#include "route/route.h"
#include "runtime/session.h"

namespace switchyard {

Graph MarkIntermediatesAsOutputs(const Graph& model, std::vector<std::string>* added) {
  Graph g = model;
  std::set<ValueId> outputs(g.outputs.begin(), g.outputs.end());
  for (const Node& n : g.nodes) {
    for (ValueId v : n.outputs) {
      if (v == kNoValue || outputs.count(v) || g.IsConstant(v)) continue;
      outputs.insert(v);
      g.outputs.push_back(v);
      if (added) added->push_back(g.value(v).name);
    }
  }
  return g;
}

Result<LayerwiseResult> CheckLayerwise(const Graph& model, const std::string& route_text, const BuildOptions& build,
                                       const std::vector<EvalSet>& sets, const AccuracyPolicy& policy,
                                       const Target& target) {
  LayerwiseResult r;
  std::vector<std::string> added;
  const Graph instrumented = MarkIntermediatesAsOutputs(model, &added);
  r.marked = static_cast<int>(added.size());
  const RouteSpace space = RouteSpace::For(instrumented, target);
  auto route = space.Parse(route_text);
  if (!route.ok()) return route.status().WithContext("--route");
  auto engine = BuildEngine(instrumented, space, *route, target, build, &r.instrumented_report);
  if (!engine.ok()) return engine.status().WithContext("building the model with its intermediate values as outputs");
  SY_ASSIGN_OR_RETURN(auto loaded, LoadedEngine::Create(std::move(*engine)));
  SY_ASSIGN_OR_RETURN(ReferenceExecutor ref, ReferenceExecutor::Create(model));
  Session session(loaded);
  ReferenceRunOptions keep;
  keep.keep_intermediates = true;

  // Every checked value (graph outputs and marked intermediates), one gate over all sets.
  std::set<std::string> checked;
  for (ValueId v : instrumented.outputs) checked.insert(instrumented.value(v).name);
  GateResult gate;
  for (const EvalSet& set : sets) {
    SY_RETURN_IF_ERROR(ValidateInputs(model, set.inputs).WithContext("set '" + set.name + "'"));
    auto expected = ref.Run(set.inputs, keep);
    if (!expected.ok()) return expected.status().WithContext("reference executor on set '" + set.name + "'");
    auto got = session.Run(set.inputs);
    if (!got.ok()) return got.status().WithContext("instrumented engine on set '" + set.name + "'");
    TensorMap wanted, final_outputs;
    for (auto& [name, t] : *expected) {
      if (checked.count(name)) wanted[name] = t;
    }
    for (ValueId v : model.outputs) {
      const std::string& name = model.value(v).name;
      if (expected->count(name)) final_outputs[name] = expected->at(name);
    }
    CheckOutputs(*got, wanted, set.name, policy, &gate);
    r.reference.push_back(std::move(final_outputs));
  }

  // Worst error per value over the sets.
  struct Worst {
    double error = 0;
    std::string set, detail;
    bool passed = true, seen = false;
  };
  std::map<std::string, Worst> worst;
  for (const OutputCheck& c : gate.checks) {
    Worst& w = worst[c.output];
    const double e = std::isnan(c.value) ? std::numeric_limits<double>::infinity() : c.value;
    if (!w.seen || e > w.error) {
      w.error = e;
      w.set = c.set;
    }
    w.seen = true;
    if (!c.passed) {
      w.passed = false;
      if (w.detail.empty()) w.detail = c.detail;
    }
  }
  std::set<ValueId> model_outputs(model.outputs.begin(), model.outputs.end());
  std::map<ValueId, double> row_error;
  for (size_t ni = 0; ni < model.nodes.size(); ++ni) {
    const Node& n = model.nodes[ni];
    double input_error = 0;
    for (ValueId in : n.inputs) {
      auto it = row_error.find(in);
      if (it != row_error.end()) input_error = std::max(input_error, it->second);
    }
    for (ValueId v : n.outputs) {
      if (v == kNoValue) continue;
      const std::string& name = model.value(v).name;
      auto it = worst.find(name);
      if (it == worst.end() || !it->second.seen) continue;
      const OutputPolicy& p = policy.For(name);
      LayerRow row;
      row.node_index = static_cast<int>(ni);
      row.node = n.name;
      row.op_type = n.op_type;
      row.value = name;
      row.type = model.value(v).type.ToString();
      row.metric = MetricName(p.spec.metric);
      row.threshold = p.threshold;
      row.error = it->second.error;
      row.worst_set = it->second.set;
      row.input_error = input_error;
      row.passed = it->second.passed;
      row.graph_output = model_outputs.count(v) != 0;
      row.detail = it->second.detail;
      row_error[v] = row.error;
      if (!row.passed && r.first_diverging < 0) r.first_diverging = static_cast<int>(r.rows.size());
      r.rows.push_back(std::move(row));
    }
  }
  return r;
}

}  // namespace switchyard
