// The Measurer: warm-up, then repeated end-to-end runs of an engine from one or more
// concurrent sessions; reports latency percentiles, throughput and peak memory. It times
// whole runs only (what a caller sees), never single kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "reference/executor.h"
#include "runtime/session.h"
#include "switchyard/status.h"

namespace switchyard {

struct MeasureOptions {
  int warmup = 3;            // runs per session before timing
  int iterations = 20;       // timed runs per session (ignored when duration_s > 0)
  double duration_s = 0;     // run for this long instead of a fixed count
  int concurrency = 1;       // sessions running at once, one thread each
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

// Peak resident set size of this process so far, in bytes (0 if unknown).
int64_t PeakRssBytes();

}  // namespace switchyard
