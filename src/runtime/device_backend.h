// Runtimes for non-CPU targets (today: cuda, src/backends/cuda/runner.cc). A backend
// registers itself by target name in a static initialiser; LoadedEngine and Session use it
// for engines whose header names that target. Builds without the backend refuse such
// engines with a clear error.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "reference/executor.h"
#include "runtime/kernel.h"
#include "switchyard/status.h"

namespace switchyard {

class LoadedEngine;

// Runs one engine for one Session (one stream, its own buffers). Not thread-safe.
class DeviceRunner {
 public:
  virtual ~DeviceRunner() = default;
  // Host tensors in, host tensors out. With step_seconds, each step is timed on the device
  // (events around it, no graph) and its seconds added to (*step_seconds)[step].
  virtual Result<TensorMap> Run(const TensorMap& inputs, std::vector<double>* step_seconds) = 0;
  // Staged I/O (Session::Stage): inputs copied once into the runner's pinned host buffers
  // and a device copy; RunStaged runs from those (device_resident: without the host copies,
  // outputs left on the device); StagedOutputs copies the last staged run's outputs out.
  virtual Status Stage(const TensorMap& inputs) = 0;
  virtual Status RunStaged(bool device_resident) = 0;
  virtual Result<TensorMap> StagedOutputs(bool device_resident) = 0;
  virtual int64_t peak_bytes() const = 0;  // device bytes this session holds (arena, buffers)
};

struct DeviceBackend {
  // Once per LoadedEngine, before its kernels are created: checks the device and uploads
  // the engine's constants; the result is kept by the LoadedEngine (device_state()).
  std::function<Result<std::shared_ptr<const void>>(const Engine&)> load;
  std::function<Result<std::unique_ptr<DeviceRunner>>(const LoadedEngine&)> new_runner;
  // Runs one kernel on host tensors (inputs copied in, outputs copied back): the
  // cross-backend kernel harness (backends/cpu/single_op.h).
  std::function<Status(const Kernel&, const KernelIO& host_io)> run_single;
};

void RegisterDeviceBackend(const std::string& target, DeviceBackend backend);
const DeviceBackend* FindDeviceBackend(const std::string& target);

}  // namespace switchyard
