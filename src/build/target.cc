#include "build/target.h"

#include <cpuid.h>
#include <sched.h>

#include <fstream>

namespace switchyard {

std::vector<std::string> CpuFeatures::Names() const {
  std::vector<std::string> n;
  if (amx_bf16) n.push_back("amx_bf16");
  if (amx_int8) n.push_back("amx_int8");
  if (avx2) n.push_back("avx2");
  if (avx512_bf16) n.push_back("avx512_bf16");
  if (avx512_vnni) n.push_back("avx512_vnni");
  if (avx512bw) n.push_back("avx512bw");
  if (avx512f) n.push_back("avx512f");
  if (avx512vl) n.push_back("avx512vl");
  if (fma) n.push_back("fma");
  return n;
}

std::string Target::Fingerprint() const {
  if (IsCuda()) return name + "|" + gpu.Arch();
  std::string f = name + "|" + cpu_model + "|";
  const auto names = features.Names();
  for (size_t i = 0; i < names.size(); ++i) f += (i ? "," : "") + names[i];
  return f;
}

Target Target::HostCpu() {
  Target t;
  unsigned a, b, c, d;
  if (__get_cpuid_count(1, 0, &a, &b, &c, &d)) t.features.fma = (c >> 12) & 1;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    t.features.avx2 = (b >> 5) & 1;
    t.features.avx512f = (b >> 16) & 1;
    t.features.avx512bw = (b >> 30) & 1;
    t.features.avx512vl = (b >> 31) & 1;
    t.features.avx512_vnni = (c >> 11) & 1;
    t.features.amx_bf16 = (d >> 22) & 1;
    t.features.amx_int8 = (d >> 25) & 1;
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) t.features.avx512_bf16 = (a >> 5) & 1;
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) t.cpu_model = line.substr(colon + 2);
      break;
    }
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) t.cores = CPU_COUNT(&set);
  if (t.cores < 1) t.cores = 1;
  return t;
}

#ifdef SWITCHYARD_WITH_CUDA
GpuTarget DetectCudaTarget();  // backends/cuda/target.cc
#endif

std::vector<std::string> Target::Names() {
#ifdef SWITCHYARD_WITH_CUDA
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

Result<Target> Target::ForName(const std::string& name) {
  if (name == "cpu") return HostCpu();
#ifdef SWITCHYARD_WITH_CUDA
  if (name == "cuda") {
    Target t = HostCpu();
    t.name = "cuda";
    t.features = CpuFeatures{};
    t.gpu = DetectCudaTarget();
    return t;
  }
#else
  if (name == "cuda") {
    return Status::Unsupported("target 'cuda': this build has no CUDA support (configure with "
                               "the CUDA toolkit, cuBLASLt and cuDNN: -DSWITCHYARD_CUDA=ON)");
  }
#endif
  std::string names;
  for (const std::string& n : Names()) names += (names.empty() ? "" : ", ") + n;
  return Status::Invalid("unknown target '" + name + "'; targets of this build: " + names);
}

}  // namespace switchyard
