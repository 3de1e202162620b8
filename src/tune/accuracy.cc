#include "tune/accuracy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace switchyard {

Result<Metric> ParseMetric(const std::string& n) {
  if (n == "l0") return Metric::kL0;
  if (n == "l1") return Metric::kL1;
  if (n == "l2") return Metric::kL2;
  if (n == "linf") return Metric::kLinf;
  if (n == "cos") return Metric::kCos;
  if (n == "topk") return Metric::kTopk;
  return Status::Invalid("unknown metric '" + n + "'; allowed: l0|l1|l2|linf|cos|topk");
}

const char* MetricName(Metric m) {
  switch (m) {
    case Metric::kL0: return "l0";
    case Metric::kL1: return "l1";
    case Metric::kL2: return "l2";
    case Metric::kLinf: return "linf";
    case Metric::kCos: return "cos";
    case Metric::kTopk: return "topk";
  }
  return "?";
}

namespace {

std::vector<size_t> TopIndices(const Tensor& t, int64_t row, int64_t cols, int k) {
  std::vector<size_t> idx(static_cast<size_t>(cols));
  std::iota(idx.begin(), idx.end(), 0);
  const int64_t base = row * cols;
  const size_t kk = static_cast<size_t>(std::min<int64_t>(k, cols));
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(kk), idx.end(), [&](size_t a, size_t b) {
    const double va = t.GetDouble(base + static_cast<int64_t>(a)), vb = t.GetDouble(base + static_cast<int64_t>(b));
    return va != vb ? va > vb : a < b;
  });
  idx.resize(kk);
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace

MetricResult ComputeMetric(const Tensor& out, const Tensor& ref, const MetricSpec& spec) {
  MetricResult r;
  if (out.shape() != ref.shape()) {
    r.error = std::numeric_limits<double>::infinity();
    r.detail = "shape " + ShapeToString(out.shape()) + " differs from the reference " + ShapeToString(ref.shape());
    return r;
  }
  if (out.dtype() == DataType::kString || ref.dtype() == DataType::kString) {
    r.error = out.strings() == ref.strings() ? 0 : 1;
    return r;
  }
  const int64_t n = out.numel();
  double sum_d2 = 0, sum_r2 = 0, sum_o2 = 0, dot = 0, sum_ad = 0, sum_ar = 0, max_ad = 0, max_ar = 0;
  int64_t outside = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = out.GetDouble(i), y = ref.GetDouble(i);
    if (!std::isfinite(x) && std::isfinite(y)) r.non_finite = true;
    if (std::isnan(x) && std::isnan(y)) continue;
    const double d = (std::isinf(x) && std::isinf(y) && (x > 0) == (y > 0)) ? 0 : x - y;
    sum_d2 += d * d;
    sum_r2 += y * y;
    sum_o2 += x * x;
    dot += x * y;
    sum_ad += std::fabs(d);
    sum_ar += std::fabs(y);
    max_ad = std::max(max_ad, std::fabs(d));
    max_ar = std::max(max_ar, std::fabs(y));
    if (!(std::fabs(d) <= spec.atol + spec.rtol * std::fabs(y))) ++outside;
  }
  auto rel = [](double num, double den) { return den > 0 ? num / den : num; };
  switch (spec.metric) {
    case Metric::kL0: r.error = n ? static_cast<double>(outside) / static_cast<double>(n) : 0; break;
    case Metric::kL1: r.error = rel(sum_ad, sum_ar); break;
    case Metric::kL2: r.error = rel(std::sqrt(sum_d2), std::sqrt(sum_r2)); break;
    case Metric::kLinf: r.error = rel(max_ad, max_ar); break;
    case Metric::kCos:
      r.error = (sum_o2 > 0 && sum_r2 > 0) ? 1.0 - dot / std::sqrt(sum_o2 * sum_r2) : (sum_o2 == sum_r2 ? 0 : 1);
      break;
    case Metric::kTopk: {
      const int64_t cols = out.rank() ? out.shape().back() : 1;
      const int64_t rows = cols ? n / cols : 0;
      int64_t differ = 0;
      for (int64_t row = 0; row < rows; ++row) {
        if (TopIndices(out, row, cols, spec.topk) != TopIndices(ref, row, cols, spec.topk)) ++differ;
      }
      r.error = rows ? static_cast<double>(differ) / static_cast<double>(rows) : 0;
      break;
    }
  }
  if (r.non_finite || std::isnan(r.error)) r.error = std::numeric_limits<double>::infinity();
  return r;
}

double RelativeL2(const Tensor& out, const Tensor& ref) {
  MetricSpec s;
  s.metric = Metric::kL2;
  return ComputeMetric(out, ref, s).error;
}

}  // namespace switchyard
