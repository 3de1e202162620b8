// cuBLASLt, opened on first use. Linking libcublasLt.so made every process start 0.37 s
// slower (its static initialisers and relocations; measured on a 2-core EPYC: an empty
// program linked with -lcublasLt takes 0.37 s, with cudart and cuDNN 0.00 s), including
// the CLI's CPU verbs and every tuner worker. So the binary does not link it: this file
// defines the cuBLASLt entry points the CUDA backend calls, each forwarding to the real
// function found with dlopen/dlsym the first time any of them is called. Where the library
// cannot be opened they return CUBLAS_STATUS_NOT_INITIALIZED, and the status strings say
// why (dlerror), so the backend's ordinary error path reports it.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

namespace {

struct Library {
  void* handle = nullptr;
  std::string error;
};

const Library& CublasLt() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
    lib.handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib.handle) return;
    lib.error = dlerror();
    // Beside the CUDA runtime this binary is linked with (a toolkit outside the loader's
    // default paths, found at link time through the runpath, which dlopen does not use).
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) && info.dli_fname) {
      std::string dir = info.dli_fname;
      dir = dir.substr(0, dir.find_last_of('/') + 1);
      lib.handle = dlopen((dir + soname).c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib.handle) lib.error += "; " + std::string(dlerror());
    }
  });
  return lib;
}

// The real function `name` of type Fn, or null where the library or symbol is missing.
template <typename Fn>
Fn* Real(const char* name) {
  const Library& lib = CublasLt();
  return lib.handle ? reinterpret_cast<Fn*>(dlsym(lib.handle, name)) : nullptr;
}

const char* Unavailable() {
  static const std::string message = "cuBLASLt could not be loaded: " + CublasLt().error;
  return message.c_str();
}

}  // namespace

// Each wrapper has the header's exact signature; `fn` is resolved once.
#define SY_CUBLASLT_FORWARD(ret, name, params, args, fallback) \
  extern "C" ret name params {                                  \
    static auto* const fn = Real<decltype(name)>(#name);        \
    return fn ? fn args : fallback;                             \
  }

SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtCreate, (cublasLtHandle_t * handle), (handle),
                    CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtDestroy, (cublasLtHandle_t handle), (handle),
                    CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(size_t, cublasLtGetVersion, (void), (), 0)
SY_CUBLASLT_FORWARD(const char*, cublasLtGetStatusString, (cublasStatus_t status), (status), Unavailable())
SY_CUBLASLT_FORWARD(const char*, cublasLtGetStatusName, (cublasStatus_t status), (status), Unavailable())
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtMatmul,
                    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                     cublasLtMatrixLayout_t a_desc, const void* B, cublasLtMatrixLayout_t b_desc, const void* beta,
                     const void* C, cublasLtMatrixLayout_t c_desc, void* D, cublasLtMatrixLayout_t d_desc,
                     const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes, cudaStream_t stream),
                    (handle, desc, alpha, A, a_desc, B, b_desc, beta, C, c_desc, D, d_desc, algo, workspace,
                     workspace_bytes, stream),
                    CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtMatrixLayoutCreate,
                    (cublasLtMatrixLayout_t * layout, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld),
                    (layout, type, rows, cols, ld), CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout),
                    CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtMatrixLayoutSetAttribute,
                    (cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, const void* buf,
                     size_t bytes),
                    (layout, attr, buf, bytes), CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtMatmulDescCreate,
                    (cublasLtMatmulDesc_t * desc, cublasComputeType_t compute, cudaDataType_t scale),
                    (desc, compute, scale), CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc),
                    CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtMatmulDescSetAttribute,
                    (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void* buf, size_t bytes),
                    (desc, attr, buf, bytes), CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * pref), (pref),
                    CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t pref), (pref),
                    CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtMatmulPreferenceSetAttribute,
                    (cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                     size_t bytes),
                    (pref, attr, buf, bytes), CUBLAS_STATUS_NOT_INITIALIZED)
SY_CUBLASLT_FORWARD(cublasStatus_t, cublasLtMatmulAlgoGetHeuristic,
                    (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a_desc,
                     cublasLtMatrixLayout_t b_desc, cublasLtMatrixLayout_t c_desc, cublasLtMatrixLayout_t d_desc,
                     cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t results[],
                     int* returned),
                    (handle, desc, a_desc, b_desc, c_desc, d_desc, pref, requested, results, returned),
                    CUBLAS_STATUS_NOT_INITIALIZED)

#undef SY_CUBLASLT_FORWARD
