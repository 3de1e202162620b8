// Target: the machine an engine is built for. The fingerprint goes into engine headers
// and tuning-database keys; features decide which knob values exist (bf16 needs
// AVX512_BF16 or AMX). Immutable once detected; safe to share.
#pragma once

#include <string>
#include <vector>

namespace switchyard {

struct CpuFeatures {
  bool avx2 = false, fma = false, avx512f = false, avx512bw = false, avx512vl = false;
  bool avx512_vnni = false, avx512_bf16 = false, amx_bf16 = false, amx_int8 = false;
  std::vector<std::string> Names() const;  // sorted names of the features present
  bool HasBf16() const { return avx512_bf16 || amx_bf16; }
};

struct Target {
  std::string name = "cpu";  // "cpu" (later: "cuda")
  std::string cpu_model;
  CpuFeatures features;
  int cores = 1;  // logical CPUs available to this process

  // "cpu|<model>|<feature,...>": what an engine's kernels depend on.
  std::string Fingerprint() const;
  // Detects the host CPU (cpuid and /proc/cpuinfo).
  static Target HostCpu();
};

}  // namespace switchyard
