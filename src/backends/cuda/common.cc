#include "backends/cuda/common.h"

#include <dlfcn.h>

#include <mutex>

namespace switchyard::cuda {

Status CudaError(cudaError_t e, const char* what) {
  return Status::Internal(std::string("CUDA error in ") + what + ": " + cudaGetErrorName(e) + " (" +
                          cudaGetErrorString(e) + ")");
}

Status CublasError(cublasStatus_t s, const char* what) {
  return Status::Internal(std::string("cuBLASLt error in ") + what + ": " + cublasLtGetStatusName(s) +
                          " (" + cublasLtGetStatusString(s) + ")");
}

Status CudnnError(cudnnStatus_t s, const char* what) {
  return Status::Internal(std::string("cuDNN error in ") + what + ": " + cudnnGetErrorString(s));
}

Status CheckLaunch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return Status::Ok();
  return CudaError(e, kernel);
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

Result<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  DeviceBuffer b;
  if (bytes == 0) return b;
  const cudaError_t e = cudaMalloc(&b.ptr_, bytes);
  if (e != cudaSuccess) {
    b.ptr_ = nullptr;
    return CudaError(e, ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
  }
  b.bytes_ = bytes;
  return b;
}

Result<DeviceBuffer> DeviceBuffer::Upload(const void* data, size_t bytes) {
  SY_ASSIGN_OR_RETURN(DeviceBuffer b, Allocate(bytes));
  if (bytes) SY_CUDA_CHECK(cudaMemcpy(b.ptr_, data, bytes, cudaMemcpyHostToDevice));
  return b;
}

Result<DeviceBuffer> DeviceBuffer::Upload(const Tensor& t) { return Upload(t.raw(), t.nbytes()); }

Status CudaKernel::Run(const KernelIO& io) const {
  if (!io.device) return Status::Internal("a CUDA kernel was run without a CUDA session");
  return Launch(*static_cast<const Exec*>(io.device), io);
}

Result<std::unique_ptr<Kernel>> MakeFnKernel(const StepView& v, LaunchFn fn) {
  return std::unique_ptr<Kernel>(std::make_unique<FnCudaKernel>(v, std::move(fn)));
}

bool IsStaticShape(const std::vector<int64_t>& shape) {
  for (int64_t d : shape) {
    if (d < 0) return false;
  }
  return true;
}

bool IsCudaFloat(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBfloat16;
}

namespace {
// The driver's release number from NVML, loaded at run time (libnvidia-ml ships with the
// driver, not the toolkit; a machine without it just reports none).
std::string DriverRelease() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "";
  using InitFn = int (*)();
  using VersionFn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  auto version = reinterpret_cast<VersionFn>(dlsym(lib, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<InitFn>(dlsym(lib, "nvmlShutdown"));
  std::string out;
  if (init && version && shutdown && init() == 0) {
    char buf[96] = {};
    if (version(buf, sizeof(buf)) == 0) out = buf;
    shutdown();
  }
  dlclose(lib);
  return out;
}
}  // namespace

const DeviceInfo& Device() {
  static DeviceInfo info;
  static std::once_flag once;
  std::call_once(once, [] {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    cudaDriverGetVersion(&info.driver_version);
    cudaRuntimeGetVersion(&info.runtime_version);
    info.cublaslt_version = cublasLtGetVersion();
    info.cudnn_version = cudnnGetVersion();
    info.driver_release = DriverRelease();
    if (e != cudaSuccess || count == 0) {
      info.error = e != cudaSuccess ? std::string(cudaGetErrorString(e)) : "no CUDA device";
      cudaGetLastError();  // clear the sticky error of a failed probe
      return;
    }
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
      info.error = "cudaGetDeviceProperties failed";
      return;
    }
    info.present = true;
    info.name = p.name;
    info.cc_major = p.major;
    info.cc_minor = p.minor;
    info.sm_count = p.multiProcessorCount;
    info.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
  });
  return info;
}

}  // namespace switchyard::cuda
