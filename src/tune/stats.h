// Statistics for interleaved measurements: a candidate and the baseline timed in
// alternating runs, so that slow drifts of the machine (frequency, other load) hit both
// alike. The speedup is the median of the paired ratios baseline/candidate, with a 95%
// percentile-bootstrap confidence interval (deterministic: fixed resampling seed).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace switchyard {

struct SpeedupEstimate {
  double speedup = 1;        // median of baseline_i / candidate_i
  double ci_low = 1, ci_high = 1;  // 95% interval of that median
  int pairs = 0;
  // Half of the interval's width relative to the estimate: how tight it is.
  double RelativeHalfWidth() const { return speedup > 0 ? (ci_high - ci_low) / (2 * speedup) : 0; }
};

// `baseline_ms[i]` and `candidate_ms[i]` were measured in the same round. Fewer than two
// pairs give an interval of [0, inf) around the single ratio. `resamples` bootstrap draws.
SpeedupEstimate PairedSpeedup(const std::vector<double>& baseline_ms,
                              const std::vector<double>& candidate_ms, int resamples = 2000,
                              uint64_t seed = 0x5eed);

}  // namespace switchyard
