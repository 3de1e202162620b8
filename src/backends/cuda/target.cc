// The cuda Target's GPU facts (build/target.h) from the device this process sees.
#include "backends/cuda/common.h"
#include "build/target.h"

namespace switchyard {

namespace {
std::string CudaVersion(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }
std::string LibVersion(size_t v, size_t major_div, size_t minor_div) {
  return std::to_string(v / major_div) + "." + std::to_string((v % major_div) / minor_div) + "." +
         std::to_string(v % minor_div);
}
}  // namespace

GpuTarget DetectCudaTarget() {
  const cuda::DeviceInfo& d = cuda::Device();
  GpuTarget g;
  g.present = d.present;
  g.error = d.error;
  if (d.present) {
    g.name = d.name;
    g.cc_major = d.cc_major;
    g.cc_minor = d.cc_minor;
    g.sm_count = d.sm_count;
    g.memory_bytes = d.memory_bytes;
  }
  // "580.159.04 (CUDA 13.0)": the driver release when NVML answers, and the CUDA API level.
  const std::string api = d.driver_version ? "CUDA " + CudaVersion(d.driver_version) : "no CUDA driver";
  g.driver = d.driver_release.empty() ? api : d.driver_release + " (" + api + ")";
  g.runtime = CudaVersion(d.runtime_version);
  g.cublaslt = LibVersion(d.cublaslt_version, 10000, 100);  // e.g. 130100 -> 13.1.0
  g.cudnn = LibVersion(d.cudnn_version, 10000, 100);        // e.g. 91400 -> 9.14.0
  return g;
}

}  // namespace switchyard
