// The accuracy policy and the gate: which metric and threshold apply to each output, and
// whether a candidate's outputs on every evaluation set stay within them. A candidate
// passes when every output on every set is at or under its threshold; NaN or Inf where
// the reference is finite, or a shape/dtype mismatch, always fails. Defaults are
// documented in docs/tuner.md. Values; thread-safe.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reference/executor.h"
#include "tune/accuracy.h"

namespace switchyard {

struct OutputPolicy {
  MetricSpec spec;
  double threshold = 1e-3;
};

// The documented default threshold of a metric: l2 1e-3, l1 1e-3, linf 1e-2, cos 1e-4,
// l0 0.01 (1% of elements outside atol + rtol*|ref|), topk 0 (no row may change its set).
double DefaultThreshold(Metric m);

struct AccuracyPolicy {
  OutputPolicy all;                               // every output without an override
  std::map<std::string, OutputPolicy> per_output; // by output name

  const OutputPolicy& For(const std::string& output) const;
  nlohmann::ordered_json ToJson() const;
  static Result<AccuracyPolicy> FromJson(const nlohmann::json& j);
  // Applies one --per-output value "NAME:metric=l2,threshold=1e-3,atol=..,rtol=..,k=5"
  // (unset fields inherit from `all`; a metric given without a threshold takes that
  // metric's default). Errors name the text and the bad field.
  Status AddOverride(const std::string& text);
};

// The policy the tune, compare and check verbs take on the command line: --metric,
// --atol, --rtol, --topk (k >= 1), --threshold (< 0: the metric's default) and
// --per-output overrides. Errors name the flag.
Result<AccuracyPolicy> PolicyFromFlags(const std::string& metric, double atol, double rtol, int topk,
                                       double threshold, const std::vector<std::string>& per_output);

// One output on one set.
struct OutputCheck {
  std::string output, set;
  double value = 0;
  double threshold = 0;
  bool passed = false;
  std::string detail;  // non-finite values, shape mismatch, missing output
};

struct GateResult {
  bool passed = true;
  std::vector<OutputCheck> checks;
  std::string first_failure;  // "output 'y' on set 'a': l2 3e-3 > threshold 1e-3"
  // {"passed": b, "outputs": {name: {"metric", "threshold", "worst", "per_set": {set: v},
  //  "passed", "detail"?}}, "first_failure"?}
  nlohmann::ordered_json ToJson(const AccuracyPolicy& policy) const;
};

// Compares `outputs` with `reference` (every reference output must be present) and adds
// the checks to *result.
void CheckOutputs(const TensorMap& outputs, const TensorMap& reference, const std::string& set,
                  const AccuracyPolicy& policy, GateResult* result);

}  // namespace switchyard
