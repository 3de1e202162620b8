// Target: the machine an engine is built for. The fingerprint goes into engine headers
// and tuning-database keys; features decide which knob values exist (bf16 needs
// AVX512_BF16 or AMX). Immutable once detected; safe to share.
#pragma once

#include <string>
#include <vector>

#include "switchyard/status.h"

namespace switchyard {

struct CpuFeatures {
  bool avx2 = false, fma = false, avx512f = false, avx512bw = false, avx512vl = false;
  bool avx512_vnni = false, avx512_bf16 = false, amx_bf16 = false, amx_int8 = false;
  std::vector<std::string> Names() const;  // sorted names of the features present
  bool HasBf16() const { return avx512_bf16 || amx_bf16; }
};

// The GPU of a `cuda` target. Kernels depend only on the compute capability (the
// fingerprint); the rest is for records. Without a GPU (building on a machine that has
// the toolkit but no device) present is false and the capability is the one this build
// compiles for (9.0).
struct GpuTarget {
  bool present = false;
  std::string name;           // "NVIDIA H200"
  int cc_major = 9, cc_minor = 0;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  std::string driver, runtime, cublaslt, cudnn;  // versions, e.g. "13.0", "9.14.0"
  std::string error;          // why no device was found
  std::string Arch() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
};

struct Target {
  std::string name = "cpu";  // "cpu" | "cuda"
  std::string cpu_model;
  CpuFeatures features;
  int cores = 1;  // logical CPUs available to this process
  GpuTarget gpu;  // name == "cuda" only

  bool IsCuda() const { return name == "cuda"; }
  // "cpu|<model>|<feature,...>" or "cuda|sm_90": what an engine's kernels depend on.
  std::string Fingerprint() const;
  // Detects the host CPU (cpuid and /proc/cpuinfo).
  static Target HostCpu();
  // "cpu" (the host CPU) or "cuda" (device 0, or the compiled-for capability when no GPU is
  // present; an error when this build has no CUDA support). Errors name the valid targets.
  static Result<Target> ForName(const std::string& name);
  // Targets this build supports: {"cpu"} or {"cpu", "cuda"}.
  static std::vector<std::string> Names();
};

}  // namespace switchyard
