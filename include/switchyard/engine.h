// Public API: load a Switchyard engine file and run it from an application.
// An EngineRunner is immutable after Load and may be shared (std::shared_ptr) by any number of
// threads; Run is thread-safe (each call borrows one of the engine's sessions). Tensors
// are plain owning values. Errors are Status values, never exceptions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/status.h"

namespace switchyard {

// Element types by their numpy names: "float32", "float16", "bfloat16", "float64",
// "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool".
struct HostTensor {
  std::string dtype = "float32";
  std::vector<int64_t> shape;
  std::vector<std::byte> data;  // row-major, little-endian, exactly numel * element size

  static HostTensor FromFloats(std::vector<int64_t> shape, const std::vector<float>& values);
  static HostTensor FromInt64(std::vector<int64_t> shape, const std::vector<int64_t>& values);
  int64_t numel() const;
  // Typed view; nullptr when dtype does not match (float32 / int64).
  const float* floats() const;
  const int64_t* int64s() const;
};

struct TensorInfo {
  std::string name;
  std::string dtype;
  // Per dimension: the accepted range (min == max for a fixed size; max -1: unbounded).
  std::vector<int64_t> min_shape, max_shape;
};

class EngineRunner {
 public:
  // Reads and verifies an engine file (checksum, format and tool version, CPU features).
  static Result<std::shared_ptr<const EngineRunner>> Load(const std::string& path);
  ~EngineRunner();
  EngineRunner(const EngineRunner&) = delete;
  EngineRunner& operator=(const EngineRunner&) = delete;

  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  const std::string& route() const;  // canonical route the engine was built for

  // Runs the engine on named inputs; returns the outputs by name. Thread-safe.
  Result<std::map<std::string, HostTensor>> Run(const std::map<std::string, HostTensor>& inputs) const;

 private:
  struct Impl;
  explicit EngineRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchyard
