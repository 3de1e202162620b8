#include "tune/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace switchyard {
namespace {

double MedianInPlace(std::vector<double>& v) {
  const size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
  const double hi = v[n / 2];
  if (n % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2));
  return (lo + hi) / 2;
}

}  // namespace

SpeedupEstimate PairedSpeedup(const std::vector<double>& baseline_ms,
                              const std::vector<double>& candidate_ms, int resamples,
                              uint64_t seed) {
  SpeedupEstimate est;
  const size_t n = std::min(baseline_ms.size(), candidate_ms.size());
  std::vector<double> log_ratio;
  log_ratio.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (baseline_ms[i] > 0 && candidate_ms[i] > 0) log_ratio.push_back(std::log(baseline_ms[i] / candidate_ms[i]));
  }
  est.pairs = static_cast<int>(log_ratio.size());
  if (log_ratio.empty()) return est;
  std::vector<double> work = log_ratio;
  est.speedup = std::exp(MedianInPlace(work));
  if (log_ratio.size() < 2) {
    est.ci_low = 0;
    est.ci_high = std::numeric_limits<double>::infinity();
    return est;
  }
  // Percentile bootstrap of the median (log scale, so the interval is symmetric in ratio terms).
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, log_ratio.size() - 1);
  std::vector<double> medians(static_cast<size_t>(std::max(resamples, 20)));
  for (double& m : medians) {
    for (double& w : work) w = log_ratio[pick(rng)];
    m = MedianInPlace(work);
  }
  std::sort(medians.begin(), medians.end());
  const auto at = [&](double q) {
    const double pos = q * static_cast<double>(medians.size() - 1);
    const size_t i = static_cast<size_t>(pos);
    const double f = pos - static_cast<double>(i);
    return i + 1 < medians.size() ? medians[i] * (1 - f) + medians[i + 1] * f : medians[i];
  };
  est.ci_low = std::exp(at(0.025));
  est.ci_high = std::exp(at(0.975));
  return est;
}

}  // namespace switchyard
