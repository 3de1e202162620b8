// The runtime. A LoadedEngine holds an engine's constants and its kernels, created
// once; it is immutable and shared (std::shared_ptr) by any number of Sessions, which may
// run concurrently on different threads. A Session owns its arena and per-run buffers: use
// one Session per thread (a Session itself is not thread-safe). Engines of other targets
// (cuda) run through their device backend's DeviceRunner behind the same API.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/batch_split.h"
#include "engine/engine.h"
#include "reference/executor.h"
#include "runtime/kernel.h"
#include "switchyard/status.h"

namespace switchyard {

class DeviceRunner;
class WorkerPool;

class LoadedEngine {
 public:
  static Result<std::shared_ptr<const LoadedEngine>> Create(Engine engine);
  const Engine& engine() const { return engine_; }
  const Kernel& kernel(size_t step) const { return *kernels_[step]; }
  // The threads a step runs on: the engine's, or fewer where the kernel's Prepare asked
  // for it (params "threads": a step too small to be worth waking a second thread).
  int step_threads(size_t step) const { return step_threads_[step]; }
  // The batch-split segments its steps declare (engine/batch_split.h).
  const std::vector<BatchSegment>& batch_segments() const { return segments_; }
  // The threads of one worker: the engine's, or its share where a segment runs on workers
  // (then no step runs on more).
  int worker_threads() const { return worker_threads_; }
  // Non-CPU targets: what the device backend loaded (runtime/device_backend.h).
  const std::shared_ptr<const void>& device_state() const { return device_state_; }

 private:
  Engine engine_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<int> step_threads_;
  std::vector<BatchSegment> segments_;
  int worker_threads_ = 1;
  std::shared_ptr<const void> device_state_;
};

// Releases the OpenMP worker threads that the calling thread keeps after its parallel
// regions (GNU libgomp keeps a thread's pool for the thread's lifetime; the next parallel
// region on this thread starts workers again). Not while this thread is inside a parallel
// region. Why it matters: libgomp counts every pool's threads against the CPUs. While only
// one team exists (<= CPUs), idle workers spin (300k iterations) between parallel regions;
// with more (e.g. a pool left on the thread that built or warmed up an engine, plus the
// thread that runs it) they sleep after ~100 spins and every engine step waits for a futex
// wake-up. Measured on a 2-vCPU EPYC VM, MobileNetV2 b1 at threads=2: sleeping workers
// ~50 us per step, 7.2 ms, no gain over threads=1; spinning workers 4.5 ms on a quiet
// machine but ~440 ms (100x) while two compilers held both CPUs. A bounded spin
// (GOMP_SPINCOUNT=3000, 30000 on more than 4 CPUs, in the environment before the process
// starts; libgomp reads it once) plus this call gave 4.2-4.7 ms quiet and the sleeping
// workers' figure under contention.
// Measure() calls it only where GOMP_SPINCOUNT or OMP_WAIT_POLICY is set.
void ReleaseCallingThreadWorkers();

// Checks inputs by name against an engine's inputs: every input given, no unknown names,
// dtype, rank and each dimension within the built range. Errors name the input.
Status CheckEngineInputs(const Engine& e, const TensorMap& inputs);

// Where Session::RunStaged keeps inputs and outputs (device targets). kHost is Run(): the
// caller's host tensors in, new host tensors out. kPinned: inputs staged once in the
// session's pinned host buffers; each run copies them to the device, runs, and copies the
// outputs into pinned host buffers (a server that reads and writes those buffers directly
// pays just this). kDevice: inputs staged on the device; each run copies them into the
// engine's arena (device to device) and runs; outputs stay on the device.
enum class IoPlacement { kHost, kPinned, kDevice };
const char* IoPlacementName(IoPlacement p);
Result<IoPlacement> ParseIoPlacement(const std::string& s);

class Session {
 public:
  explicit Session(std::shared_ptr<const LoadedEngine> engine);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the engine. Inputs by name (every engine input, matching dtype and rank, sizes
  // within the built ranges); returns the outputs by name.
  Result<TensorMap> Run(const TensorMap& inputs);
  // Staged I/O (see IoPlacement): Stage checks and copies the inputs into the session's
  // buffers; RunStaged(kHost) is Run() on them, kPinned/kDevice need a device target;
  // StagedOutputs returns copies of the last RunStaged's outputs.
  Status Stage(const TensorMap& inputs);
  Status RunStaged(IoPlacement where);
  Result<TensorMap> StagedOutputs(IoPlacement where);
  // Largest bytes this session has held at once: arena, batch-split workers' tensors and
  // per-run buffers (not constants).
  int64_t peak_bytes() const { return peak_bytes_; }
  // Opt-in per-step timing (off by default, one branch per step when off): while on, each
  // Run adds every step's time (seconds) to step_seconds()[step] and counts the run in
  // timed_runs(). CPU engines: wall time (steady_clock); in a batch-split segment on
  // workers, the mean over the workers, which run at the same time. Device engines: device
  // time between events around the step, the steps enqueued one by one (no CUDA graph).
  void set_step_timing(bool on) { step_timing_ = on; }
  const std::vector<double>& step_seconds() const { return step_seconds_; }
  int64_t timed_runs() const { return timed_runs_; }

 private:
  Status EnsureRunner();
  // A batch-split segment on workers: each worker but the first (the calling thread) has
  // its lane, created at the first run: refs, readiness and heap buffers per engine
  // tensor for the segment's internal tensors, and their scratch bytes.
  struct WorkerLane {
    ~WorkerLane();
    std::vector<TensorRef> refs;
    std::vector<char> ready;
    std::vector<std::vector<uint8_t>> heap;
    uint8_t* scratch = nullptr;
    int64_t heap_bytes = 0;
  };
  Status PrepareWorkers(const BatchSegment& seg);
  std::shared_ptr<const LoadedEngine> engine_;
  uint8_t* arena_ = nullptr;
  int64_t arena_size_ = 0;
  std::vector<std::vector<uint8_t>> heap_;  // per tensor, for unplanned or oversized ones
  int64_t peak_bytes_ = 0;
  std::unique_ptr<DeviceRunner> runner_;     // non-CPU engines, created at the first Run
  TensorMap staged_inputs_, staged_outputs_;  // Stage()'s inputs; RunStaged(kHost)'s outputs
  bool staged_ = false;
  bool step_timing_ = false;
  std::vector<double> step_seconds_;
  int64_t timed_runs_ = 0;
  std::vector<std::unique_ptr<WorkerLane>> lanes_;
  std::unique_ptr<WorkerPool> pool_;  // after lanes_: destroyed (joined) first
  int64_t worker_bytes_ = 0;
};

}  // namespace switchyard
