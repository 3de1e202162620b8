// Canary comparison of two engines of one model (`switchyard compare OLD NEW`, docs/
// compare.md): latency percentiles and throughput of both at each concurrency level,
// measured alternately in blocks so that drifts of the machine hit both alike; peak
// memory of each in a process of its own; output agreement of NEW against OLD and
// against the reference with the tuner's accuracy policy; and a `promote` / `hold`
// verdict with its reasons. Values own their data; the functions block the calling
// thread and share no state (thread-safe).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "switchyard/status.h"
#include "tune/eval_data.h"
#include "tune/gate.h"

namespace switchyard {

struct CompareOptions {
  std::vector<int> concurrency = {1, 4, 16};  // sessions running at once, per level
  double duration_s = 2;   // timed seconds per engine per level (split into blocks)
  int blocks = 4;          // timed blocks per engine per level, in ABBA order
  int warmup = 2;          // untimed runs per session before each block
  // Tolerances as fractions (0.05 = 5%). A regression strictly beyond one is a reason to hold.
  double max_p95_regression = 0.05;
  double max_throughput_regression = 0.05;
  double max_memory_regression = 0.10;
  AccuracyPolicy policy;
};

// One engine at one concurrency level; the percentiles pool every timed run of every block.
struct SideStats {
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, throughput_per_s = 0;
  int64_t runs = 0, failed = 0;
  std::string first_error;
  std::vector<double> block_p95_ms, block_throughput;  // per block, paired by index
};

struct LevelComparison {
  int concurrency = 1;
  SideStats old_side, new_side;
  // The verdict's view, new/old (0 when a side has no timed run): p95_ratio of the pooled
  // p95s; throughput_ratio the median over the block pairs (old block i next to new block
  // i) of their throughput ratio, robust to drift between pairs.
  double p95_ratio = 0, throughput_ratio = 0;
};

// Measures both engines at one level: `blocks` blocks each, old/new alternating in ABBA
// order (old new new old old new ...). Every block is a Measure() call: sessions on
// threads of their own, never on the caller's thread.
LevelComparison CompareAtLevel(const std::shared_ptr<const LoadedEngine>& old_engine,
                               const std::shared_ptr<const LoadedEngine>& new_engine,
                               const TensorMap& inputs, int concurrency, const CompareOptions& options);

struct AccuracyComparison {
  GateResult new_vs_old;
  bool has_reference = false;
  std::string reference_source;   // "reference executor", "data", or why there is none
  GateResult new_vs_reference, old_vs_reference;
  int64_t failed_old = 0, failed_new = 0;  // runs that returned an error
  std::string first_error_old, first_error_new;
};

// Runs every set through both engines (one session each) and gates NEW against OLD's
// outputs and both against the reference: the set's own reference outputs when it has
// them, else the reference executor on `reference_model` (a graph of the same model;
// nullptr: none).
AccuracyComparison CompareOutputs(const std::shared_ptr<const LoadedEngine>& old_engine,
                                  const std::shared_ptr<const LoadedEngine>& new_engine,
                                  const std::vector<EvalSet>& sets, const Graph* reference_model,
                                  const AccuracyPolicy& policy);

// Peak memory of one engine, measured in a child process that loads only that engine
// and runs `concurrency` sessions on it (`argv_prefix` + ENGINE INPUT_DIR CONCURRENCY
// RESULT; the CLI passes its hidden `__compare_memory` verb). `engine` is the engine in
// `engine_path` (for its input order); the inputs and the result go under `work_dir`.
struct MemoryMeasurement {
  int64_t peak_rss_bytes = 0;      // the child's VmHWM after running
  int64_t before_load_bytes = 0;   // its VmHWM before reading the engine (process overhead)
  int64_t engine_bytes() const { return peak_rss_bytes - before_load_bytes; }
};
Result<MemoryMeasurement> MeasureMemoryInChild(const std::vector<std::string>& argv_prefix,
                                               const std::string& engine_path, const Engine& engine,
                                               const TensorMap& inputs, const std::string& work_dir,
                                               int concurrency);
// The child side: loads ENGINE, the inputs (INPUT_DIR/K.npy for the K-th input), runs them, and writes
// {"peak_rss_bytes", "before_load_bytes"} to RESULT.
Status RunMemoryChild(const std::string& engine_path, const std::string& input_dir, int concurrency,
                      const std::string& result_path);

struct Verdict {
  bool promote = true;
  std::vector<std::string> reasons;  // why hold; empty when promoted
};

Verdict Decide(const std::vector<LevelComparison>& levels, const MemoryMeasurement& old_memory,
               const MemoryMeasurement& new_memory, const AccuracyComparison& accuracy,
               const CompareOptions& options);

// The `--json` object (docs/compare.md): levels, memory, accuracy, failed, tolerances,
// verdict, reasons. The caller adds "old"/"new" descriptions.
nlohmann::ordered_json CompareToJson(const std::vector<LevelComparison>& levels,
                                     const MemoryMeasurement& old_memory, const MemoryMeasurement& new_memory,
                                     const AccuracyComparison& accuracy, const Verdict& verdict,
                                     const CompareOptions& options);

}  // namespace switchyard
