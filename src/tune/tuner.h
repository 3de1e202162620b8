// The tuner: builds candidate engines for routes a search strategy proposes, each in a
// child process (`switchyard __worker`, see worker.h) with a timeout; rejects every
// candidate that leaves the accuracy policy on any evaluation set; measures the rest
// interleaved with the baseline (default route); keeps everything in the tuning database
// so that an interrupted run resumes; re-validates the winner on the long tail; writes
// selected.engine, baseline.engine, record.json and record.md into the output folder.
// One Tune() call at a time per output folder; the options are plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tune/gate.h"
#include "tune/measure.h"
#include "tune/search/strategy.h"
#include "switchyard/status.h"

namespace switchyard {

struct TuneOptions {
  std::string model;            // ONNX model file
  std::string out_dir;          // created (0700) when missing
  std::string db_path;          // "" = out_dir/tuning.db
  std::string target = "cpu";   // "cpu" | "cuda" (Target::ForName): candidates are built and run for it
  bool resume = false;          // --continue: the folder may hold an earlier (interrupted) run

  std::string search = "mixed";  // fast|full|mixed|random|greedy|halving
  std::string sweep;             // restricts the space ("" = every knob of the model)
  StrategyOptions strategy;      // seed, min_improvement are overwritten from below
  double budget_s = 0;           // 0 = none; the candidate in flight finishes
  int64_t max_candidates = 0;    // 0 = none

  std::string data_dir;                 // evaluation data (docs/evaluation-data.md)
  std::vector<std::string> input_specs; // when no data: "NAME:float32[1,3,224,224]~uniform(0,1)"
  uint64_t seed = 1;                    // for generated inputs and sampling strategies
  std::vector<std::string> shapes;      // as `build --shapes`
  std::string reference_dir;            // "" = reference executor (or output_K.pb of ONNX test data)

  AccuracyPolicy accuracy;
  double min_improvement = 0.02;  // the winner's 95% lower bound must exceed 1 + this

  // Mixed-precision repair: when a reduced-precision route fails the gate, search for the
  // smallest set of nodes to keep in fp32 (precision@NODE=fp32) that passes. "auto" = on
  // for the mixed strategy only, and skipped when the failing route measures no faster
  // than the best passing candidate (a repair only slows it); "on" = always.
  std::string repair = "auto";  // auto | on | off
  int repair_max_evals = 40;    // accuracy-only builds the repair may spend
  // Share of budget_s the search leaves to the repair once a rejected reduced-precision
  // route has measured faster than every passing candidate and its error is within
  // 100x the tolerance (further off, a fp32-level gate, the repair rarely keeps anything
  // reduced and gets only what the search leaves).
  double repair_share = 0.35;

  InterleaveOptions measure;        // per candidate
  InterleaveOptions final_measure;  // the winner against the baseline, at validation
  double candidate_timeout_s = 600; // per child process
  int64_t candidate_memory_bytes = 0;  // RLIMIT_AS per child, 0 = none
  int validate_sessions = 8;        // concurrent sessions in the long-tail check

  // Keep the evaluation tensors (inputs and references, .npy) in DIR/retained-data/.
  // Default off: the folder, record and database keep hashes, shapes and statistics only.
  bool retain_data = false;

  std::string worker;        // executable implementing `__worker` ("" = this executable)
  std::string command_line;  // recorded
  // Called with one line per event (candidate done, phase); empty = quiet.
  std::function<void(const std::string&)> progress;
};

// Runs the tuning and writes the output folder. SIGINT/SIGTERM during the call abandon
// the candidate in flight, write record.json with status "interrupted" and return an
// error; the same call with resume=true (--continue) finishes the run. Returns the summary object (the `--json`
// line): candidates, unique_engines, reused, rejected_accuracy, failed, baseline {route,
// p50_ms}, selected {route, p50_ms, speedup}, out, and more. Errors: unusable options or
// data, no reference, an empty space, a baseline that cannot be built, no route passing
// the gate (record.json is still written in that case, without selected.engine).
Result<nlohmann::ordered_json> Tune(const TuneOptions& options);

// Parses "90s", "10m", "1h", "1.5m" or plain seconds ("30"). Errors name the text.
Result<double> ParseDuration(const std::string& text);

}  // namespace switchyard
