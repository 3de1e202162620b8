// The CUDA backend's shared contract (target `cuda`, docs/cuda.md). Op implementations are
// registered in the one implementation registry (backends/cpu/op_impl.h, which holds every
// target's) under the providers "cuda" (own kernels), "cublaslt" and "cudnn". The builder
// picks them for `--target cuda` only (build/kernel_table.cc). Shapes are static on this
// target: every input is fixed at build time, so StepView's shapes are the run's shapes.
//
// At run time a Kernel's buffers (TensorRef::data) are device pointers and io.device is
// the session's Exec (stream, library handles, workspace). Kernels only enqueue work on
// ex.stream: no synchronisation, no allocation, no host reads of device data inside Run,
// so that a whole engine can be captured as one CUDA graph (cuda.graphs=on).
// Device memory a kernel owns (packed weights) is allocated once in Create.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/op_impl.h"
#include "ir/tensor.h"
#include "runtime/kernel.h"
#include "switchyard/status.h"

namespace switchyard::cuda {

// Per-session execution state handed to every kernel through KernelIO::device.
struct Exec {
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  cudnnHandle_t dnn = nullptr;
  void* workspace = nullptr;     // shared scratch, at least the largest WorkspaceBytes()
  size_t workspace_bytes = 0;
};

// Errors: each names the call and the library's message; the runtime adds the step name.
Status CudaError(cudaError_t e, const char* what);
Status CublasError(cublasStatus_t s, const char* what);
Status CudnnError(cudnnStatus_t s, const char* what);
// The last launch error (cudaGetLastError) as a Status naming `kernel`.
Status CheckLaunch(const char* kernel);

#define SY_CUDA_CHECK(expr)                                                      \
  do {                                                                           \
    cudaError_t sy_cuda_e = (expr);                                              \
    if (sy_cuda_e != cudaSuccess) return ::switchyard::cuda::CudaError(sy_cuda_e, #expr); \
  } while (0)
#define SY_CUBLAS_CHECK(expr)                                                    \
  do {                                                                           \
    cublasStatus_t sy_cublas_s = (expr);                                         \
    if (sy_cublas_s != CUBLAS_STATUS_SUCCESS)                                    \
      return ::switchyard::cuda::CublasError(sy_cublas_s, #expr);                \
  } while (0)
#define SY_CUDNN_CHECK(expr)                                                     \
  do {                                                                           \
    cudnnStatus_t sy_cudnn_s = (expr);                                           \
    if (sy_cudnn_s != CUDNN_STATUS_SUCCESS)                                      \
      return ::switchyard::cuda::CudnnError(sy_cudnn_s, #expr);                  \
  } while (0)

// Owned device memory (cudaMalloc/cudaFree). Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  static Result<DeviceBuffer> Allocate(size_t bytes);
  // Allocates and copies a host tensor's bytes (synchronously).
  static Result<DeviceBuffer> Upload(const Tensor& t);
  static Result<DeviceBuffer> Upload(const void* data, size_t bytes);
  void* get() const { return ptr_; }
  template <typename T> T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Base of every CUDA kernel: output shapes are the build's static shapes; Run unwraps
// io.device and calls Launch. Subclasses keep only immutable state (device weights,
// library descriptors built in Create) so one kernel serves concurrent sessions.
class CudaKernel : public Kernel {
 public:
  explicit CudaKernel(const StepView& view) : output_shapes_(view.output_shapes) {}
  Result<std::vector<std::vector<int64_t>>> OutputShapes(
      const std::vector<const TensorRef*>& inputs) const final {
    return output_shapes_;
  }
  Status Run(const KernelIO& io) const final;
  virtual Status Launch(const Exec& ex, const KernelIO& io) const = 0;
  // Scratch this kernel needs in Exec::workspace (the session allocates the maximum).
  virtual size_t WorkspaceBytes() const { return 0; }

 protected:
  std::vector<std::vector<int64_t>> output_shapes_;
};

// A CudaKernel whose Launch is a function built at Create (capturing the step's immutable
// parameters): most own kernels need nothing more.
using LaunchFn = std::function<Status(const Exec&, const KernelIO&)>;
class FnCudaKernel final : public CudaKernel {
 public:
  FnCudaKernel(const StepView& v, LaunchFn fn) : CudaKernel(v), fn_(std::move(fn)) {}
  Status Launch(const Exec& ex, const KernelIO& io) const override { return fn_(ex, io); }

 private:
  const LaunchFn fn_;
};
Result<std::unique_ptr<Kernel>> MakeFnKernel(const StepView& v, LaunchFn fn);
// Every dimension known (no -1).
bool IsStaticShape(const std::vector<int64_t>& shape);

// True when the build context is for the cuda target (every CUDA impl's `supports`
// starts with this, so CPU builds never pick them).
inline bool IsCudaBuild(const KernelBuildContext& ctx) { return ctx.target.name == "cuda"; }
// Floating dtypes the own kernels take: float32, float16, bfloat16.
bool IsCudaFloat(DataType t);

// The GPU this process sees (device 0), or present=false. Cached after the first call.
struct DeviceInfo {
  bool present = false;
  std::string name;           // "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  int driver_version = 0;     // cudaDriverGetVersion, e.g. 13000 (the CUDA API it supports)
  std::string driver_release; // the NVIDIA driver's own version through NVML, e.g. "580.159.04"
  int runtime_version = 0;    // cudaRuntimeGetVersion
  size_t cublaslt_version = 0, cudnn_version = 0;
  std::string error;          // why present is false
};
const DeviceInfo& Device();

}  // namespace switchyard::cuda

// Registers CUDA implementations (same registry as the CPU ones).
#define SY_REGISTER_CUDA_IMPLS(family) SY_REGISTER_CPU_IMPLS(Cuda##family)
