// The Measurer: warm-up, then repeated end-to-end runs of an engine from one or more
// concurrent sessions; reports latency percentiles, throughput and peak memory. It times
// whole runs only (what a caller sees), never single kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "reference/executor.h"
#include "runtime/session.h"
#include "switchyard/status.h"
#include "tune/stats.h"

namespace switchyard {

struct MeasureOptions {
  int warmup = 3;            // runs per session before timing
  int iterations = 20;       // timed runs per session (ignored when duration_s > 0)
  double duration_s = 0;     // run for this long instead of a fixed count
  int concurrency = 1;       // sessions running at once, one thread each
  // Where each session keeps inputs and outputs (runtime/session.h): kHost times Run()
  // (copies from and to the caller's tensors); kPinned/kDevice stage the inputs once and
  // time RunStaged (device targets).
  IoPlacement io = IoPlacement::kHost;
};

struct Measurement {
  std::vector<double> latencies_ms;  // every timed run, in completion order
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0;
  double throughput_per_s = 0;
  double wall_s = 0;
  int64_t runs = 0;
  int64_t failed = 0;
  int64_t peak_memory_bytes = 0;  // process peak resident set (VmHWM)
  std::string first_error;
};

// Percentile by linear interpolation between closest ranks (p in [0, 100]).
double Percentile(std::vector<double> values, double p);

Result<Measurement> Measure(const std::shared_ptr<const LoadedEngine>& engine, const TensorMap& inputs,
                            const MeasureOptions& options);

// Interleaved comparison of a candidate with the baseline (the tuner's and `compare`'s
// timing): one session each, warm-up, then rounds; in each round each engine runs one
// untimed run (it absorbs the other engine's thread pools still spinning and its cache
// footprint) and then `block` timed runs, whose median is the round's value. The order
// alternates between rounds (ABBA) so that drifts of the machine hit both alike. Stops
// after `min_rounds` once the speedup's 95% interval is within +-`target_rel_ci` of it,
// or at `max_rounds` or `max_seconds`, whichever comes first; and from `slower_rounds`
// rounds on (0: never), before `min_rounds`, once that interval lies wholly under
// `slower_than`: a candidate surely slower than the baseline cannot be selected, and its
// remaining rounds only spend the budget (ResNet-50 b8 on 2 Zen 5 cores: 10 rounds of
// `layout.activations=nchw`, 0.41x, took 25 s of a 60 s tune, and the search never reached
// `kernel.conv=winograd`).
struct InterleaveOptions {
  int warmup = 3;
  int block = 3;
  int min_rounds = 10;
  int max_rounds = 100;
  double target_rel_ci = 0.01;
  double max_seconds = 30;
  int slower_rounds = 4;
  double slower_than = 0.99;
};

struct InterleavedMeasurement {
  std::vector<double> baseline_ms, candidate_ms;  // per round: median of its block; paired
  std::vector<double> baseline_runs_ms, candidate_runs_ms;  // every timed run
  SpeedupEstimate speedup;
  double baseline_p50_ms = 0, baseline_p95_ms = 0, candidate_p50_ms = 0, candidate_p95_ms = 0;
  int rounds = 0;
  double wall_s = 0;
  std::string stopped_by;  // "ci" (interval tight), "slower" (surely slower), "max_rounds", "max_seconds"
};

Result<InterleavedMeasurement> MeasureInterleaved(const std::shared_ptr<const LoadedEngine>& baseline,
                                                  const std::shared_ptr<const LoadedEngine>& candidate,
                                                  const TensorMap& inputs,
                                                  const InterleaveOptions& options);

// Peak resident set size of this process so far, in bytes (0 if unknown).
int64_t PeakRssBytes();

}  // namespace switchyard
