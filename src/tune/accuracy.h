// Accuracy metrics and the gate. One implementation serves the tuner's gate, `compare`,
// `check` and the tests. Every metric is an error (0 = identical; the gate passes when the
// error is at or under the threshold). NaN or Inf where the reference is finite always
// fails. Pure functions; thread-safe.
#pragma once

#include <string>

#include "ir/tensor.h"
#include "switchyard/status.h"

namespace switchyard {

enum class Metric { kL0, kL1, kL2, kLinf, kCos, kTopk };

struct MetricSpec {
  Metric metric = Metric::kL2;
  double atol = 1e-5;  // l0 only: elementwise tolerance atol + rtol*|ref|
  double rtol = 1e-3;
  int topk = 5;        // topk only: k, over the last axis
};

Result<Metric> ParseMetric(const std::string& name);  // "l0" "l1" "l2" "linf" "cos" "topk"
const char* MetricName(Metric m);

struct MetricResult {
  double error = 0;        // the metric's value
  bool non_finite = false; // NaN/Inf where the reference is finite
  std::string detail;      // why it failed to compute (shape/dtype mismatch)
};

// l0 = fraction of elements with |x-ref| > atol + rtol*|ref|; l1 = mean|x-ref| / mean|ref|;
// l2 = ||x-ref||2 / ||ref||2; linf = max|x-ref| / max|ref|; cos = 1 - cosine similarity;
// topk = fraction of rows (last axis) whose top-k index sets differ. Relative metrics
// with an all-zero reference use the absolute value instead. Shape or dtype mismatch is
// an error result (error = +inf).
MetricResult ComputeMetric(const Tensor& out, const Tensor& ref, const MetricSpec& spec);

// Relative L2 error, for tests and reports.
double RelativeL2(const Tensor& out, const Tensor& ref);

}  // namespace switchyard
