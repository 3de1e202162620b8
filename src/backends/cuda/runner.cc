// The cuda target's runtime (runtime/device_backend.h). Per LoadedEngine: the device
// check and the engine's constants in device memory. Per Session (CudaRunner): a stream,
// cuBLASLt and cuDNN handles, one workspace, the device arena planned by the builder,
// device buffers for inputs and unplanned tensors, and pinned host buffers for inputs and
// outputs. All addresses are fixed when the runner is created, so with cuda.graphs=on the
// first Run captures the whole engine (input copies, every step, output copies) as one
// CUDA graph and later Runs replay it; with cuda.graphs=off each Run enqueues the steps.
// Staged runs (Session::Stage/RunStaged) use a second graph without the host copies; step
// timing enqueues the steps one by one between events.
#include <atomic>
#include <chrono>
#include <cstring>

#include "backends/cuda/common.h"
#include "runtime/device_backend.h"
#include "runtime/session.h"

namespace switchyard::cuda {
namespace {

struct EngineState {
  std::vector<DeviceBuffer> constants;  // by engine constant index (empty when unused)
};

Status CheckDevice(const Engine& e) {
  const DeviceInfo& d = Device();
  if (!d.present) {
    return Status::FailedPrecondition("cannot run a cuda engine: no CUDA device (" + d.error + ")");
  }
  const std::string arch = "cuda|sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor);
  if (arch != e.header.target_fingerprint) {
    return Status::FailedPrecondition("the engine was built for " + e.header.target_fingerprint +
                                      "; this GPU (" + d.name + ") is " + arch);
  }
  return Status::Ok();
}

Result<std::shared_ptr<const void>> LoadEngine(const Engine& e) {
  SY_RETURN_IF_ERROR(CheckDevice(e));
  SY_CUDA_CHECK(cudaSetDevice(0));
  auto state = std::make_shared<EngineState>();
  state->constants.resize(e.constants.size());
  for (const EngineTensor& t : e.tensors) {
    if (t.kind != EngineTensor::Kind::kConstant) continue;
    const size_t c = static_cast<size_t>(t.constant);
    if (c >= e.constants.size() || state->constants[c].get()) continue;
    auto buf = DeviceBuffer::Upload(e.constants[c]);
    if (!buf.ok()) return buf.status().WithContext("constant '" + t.name + "'");
    state->constants[c] = std::move(buf).value();
  }
  return std::shared_ptr<const void>(std::move(state));
}

size_t Bytes(DataType dt, const std::vector<int64_t>& shape) {
  size_t n = DataTypeSize(dt);
  for (int64_t d : shape) n *= static_cast<size_t>(std::max<int64_t>(d, 0));
  return n;
}

// Pinned host memory (cudaHostAlloc), freed on destruction.
struct PinnedBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  ~PinnedBuffer() {
    if (ptr) cudaFreeHost(ptr);
  }
};

class CudaRunner final : public DeviceRunner {
 public:
  explicit CudaRunner(const LoadedEngine& le) : le_(le), e_(le.engine()) {}
  ~CudaRunner() override {
    for (cudaGraphExec_t g : graph_exec_) {
      if (g) cudaGraphExecDestroy(g);
    }
    for (cudaEvent_t ev : events_) {
      if (ev) cudaEventDestroy(ev);
    }
    if (exec_.dnn) cudnnDestroy(exec_.dnn);
    if (exec_.lt) cublasLtDestroy(exec_.lt);
    if (exec_.stream) cudaStreamDestroy(exec_.stream);
  }

  Status Init() {
    SY_CUDA_CHECK(cudaSetDevice(0));
    SY_CUDA_CHECK(cudaStreamCreateWithFlags(&exec_.stream, cudaStreamNonBlocking));
    SY_CUBLAS_CHECK(cublasLtCreate(&exec_.lt));
    SY_CUDNN_CHECK(cudnnCreate(&exec_.dnn));
    SY_CUDNN_CHECK(cudnnSetStream(exec_.dnn, exec_.stream));
    size_t ws = 0;
    for (size_t s = 0; s < e_.steps.size(); ++s) {
      const auto* k = dynamic_cast<const CudaKernel*>(&le_.kernel(s));
      if (!k) {
        return Status::Internal("step '" + e_.steps[s].name + "' has no CUDA kernel (provider " +
                                e_.steps[s].provider + ")");
      }
      ws = std::max(ws, k->WorkspaceBytes());
    }
    SY_ASSIGN_OR_RETURN(workspace_, DeviceBuffer::Allocate(ws));
    exec_.workspace = workspace_.get();
    exec_.workspace_bytes = ws;
    SY_ASSIGN_OR_RETURN(arena_, DeviceBuffer::Allocate(static_cast<size_t>(e_.arena_bytes)));
    device_bytes_ = static_cast<int64_t>(ws) + e_.arena_bytes;

    const auto& state = *static_cast<const EngineState*>(le_.device_state().get());
    refs_.resize(e_.tensors.size());
    own_.resize(e_.tensors.size());
    for (size_t t = 0; t < e_.tensors.size(); ++t) {
      const EngineTensor& et = e_.tensors[t];
      TensorRef& r = refs_[t];
      r.dtype = et.dtype;
      r.layout = et.layout;
      r.shape = et.shape;
      if (et.kind == EngineTensor::Kind::kConstant) {
        const size_t c = static_cast<size_t>(et.constant);
        r.shape = e_.constants[c].shape();
        r.data = state.constants[c].get();
        continue;
      }
      for (int64_t d : et.shape) {
        if (d < 0) return Status::Internal("tensor '" + et.name + "' has a dynamic shape on cuda");
      }
      const size_t need = Bytes(et.dtype, et.shape);
      if (et.offset >= 0 && static_cast<int64_t>(need) <= et.bytes) {
        r.data = arena_.as<uint8_t>() + et.offset;
      } else {
        SY_ASSIGN_OR_RETURN(own_[t], DeviceBuffer::Allocate(std::max<size_t>(need, 1)));
        r.data = own_[t].get();
        device_bytes_ += static_cast<int64_t>(need);
      }
    }
    for (int t : e_.inputs) SY_RETURN_IF_ERROR(AddPinned(t, &pinned_in_));
    for (int t : e_.outputs) SY_RETURN_IF_ERROR(AddPinned(t, &pinned_out_));
    return Status::Ok();
  }

  Result<TensorMap> Run(const TensorMap& inputs, std::vector<double>* step_seconds) override {
    SY_RETURN_IF_ERROR(CopyToPinned(inputs));
    if (step_seconds) {
      SY_RETURN_IF_ERROR(EnqueueTimed(step_seconds));
    } else {
      SY_RETURN_IF_ERROR(Launch(Copies::kHost));
    }
    return PinnedOutputs();
  }

  Status Stage(const TensorMap& inputs) override {
    SY_RETURN_IF_ERROR(CopyToPinned(inputs));
    if (dev_in_.empty()) {
      for (const auto& p : pinned_in_) {
        SY_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Allocate(std::max<size_t>(p->bytes, 1)));
        device_bytes_ += static_cast<int64_t>(p->bytes);
        dev_in_.push_back(std::move(b));
      }
    }
    for (size_t i = 0; i < pinned_in_.size(); ++i) {
      SY_CUDA_CHECK(cudaMemcpy(dev_in_[i].get(), pinned_in_[i]->ptr, pinned_in_[i]->bytes, cudaMemcpyHostToDevice));
    }
    return Status::Ok();
  }

  Status RunStaged(bool device_resident) override {
    if (dev_in_.empty()) return Status::FailedPrecondition("RunStaged before Stage");
    return Launch(device_resident ? Copies::kDevice : Copies::kHost);
  }

  Result<TensorMap> StagedOutputs(bool device_resident) override {
    if (!device_resident) return PinnedOutputs();
    TensorMap out;
    for (size_t i = 0; i < e_.outputs.size(); ++i) {
      const size_t t = static_cast<size_t>(e_.outputs[i]);
      Tensor x(refs_[t].dtype, refs_[t].shape);
      if (x.nbytes()) SY_CUDA_CHECK(cudaMemcpy(x.raw(), refs_[t].data, x.nbytes(), cudaMemcpyDeviceToHost));
      out[e_.tensors[t].name] = std::move(x);
    }
    return out;
  }

  int64_t peak_bytes() const override { return device_bytes_; }

 private:
  // What a launch copies around the steps: kHost = pinned inputs to the device, outputs
  // back to pinned memory; kDevice = the staged device inputs into the arena, no output copy.
  enum class Copies { kHost = 0, kDevice = 1 };

  Status AddPinned(int t, std::vector<std::unique_ptr<PinnedBuffer>>* list) {
    auto p = std::make_unique<PinnedBuffer>();
    const TensorRef& r = refs_[static_cast<size_t>(t)];
    p->bytes = Bytes(r.dtype, r.shape);
    SY_CUDA_CHECK(cudaHostAlloc(&p->ptr, std::max<size_t>(p->bytes, 1), cudaHostAllocDefault));
    list->push_back(std::move(p));
    return Status::Ok();
  }

  Status CopyToPinned(const TensorMap& inputs) {
    SY_RETURN_IF_ERROR(CheckEngineInputs(e_, inputs));
    for (size_t i = 0; i < e_.inputs.size(); ++i) {
      const Tensor& x = inputs.at(e_.tensors[static_cast<size_t>(e_.inputs[i])].name);
      if (x.nbytes() != pinned_in_[i]->bytes) {
        return Status::Internal("input size differs from the engine's fixed shape");
      }
      std::memcpy(pinned_in_[i]->ptr, x.raw(), x.nbytes());
    }
    return Status::Ok();
  }

  TensorMap PinnedOutputs() const {
    TensorMap out;
    for (size_t i = 0; i < e_.outputs.size(); ++i) {
      const size_t t = static_cast<size_t>(e_.outputs[i]);
      Tensor x(refs_[t].dtype, refs_[t].shape);
      std::memcpy(x.raw(), pinned_out_[i]->ptr, x.nbytes());
      out[e_.tensors[t].name] = std::move(x);
    }
    return out;
  }

  // One run: the captured graph for these copies or, with cuda.graphs=off, the steps
  // enqueued one by one; then waits for the stream. The first run with graphs goes step by
  // step and then captures the graph for the next ones: libraries initialise lazily on a
  // handle's or a kernel's first use (allocations, module loads), which a capture cannot
  // hold. Found by the tuner's validation on the H200: 8 sessions capturing at their first
  // run failed in cudnnConvolutionBiasActivationForward (CUDNN_STATUS_EXECUTION_FAILED,
  // ResNet-50 b1 at bf16 and tf32), which demoted those candidates.
  Status Launch(Copies copies) {
    if (e_.header.cuda_graphs) {
      cudaGraphExec_t& g = graph_exec_[static_cast<int>(copies)];
      if (!g) {
        SY_RETURN_IF_ERROR(Enqueue(copies, nullptr));
        SY_CUDA_CHECK(cudaStreamSynchronize(exec_.stream));
        return Capture(copies, &g);
      }
      SY_CUDA_CHECK(cudaGraphLaunch(g, exec_.stream));
    } else {
      SY_RETURN_IF_ERROR(Enqueue(copies, nullptr));
    }
    SY_CUDA_CHECK(cudaStreamSynchronize(exec_.stream));
    return Status::Ok();
  }

  // Host copies and the steps enqueued one by one, an event after the input copies and
  // after each step; adds each step's device time to (*step_seconds)[step]. A step's time
  // is from the previous step's end to its own (its launches and any gap between them).
  Status EnqueueTimed(std::vector<double>* step_seconds) {
    if (events_.empty()) {
      events_.resize(e_.steps.size() + 1);
      for (cudaEvent_t& ev : events_) SY_CUDA_CHECK(cudaEventCreate(&ev));
    }
    // The stream waits behind a host gate while every step and event is enqueued, so the
    // device runs them back to back and the events time the steps, not the CPU's launch
    // rate (the gate gives way after a second should the launch queue ever fill up).
    std::atomic<bool> open{false};
    SY_CUDA_CHECK(cudaLaunchHostFunc(
        exec_.stream,
        [](void* gate) {
          const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
          while (!static_cast<std::atomic<bool>*>(gate)->load() && std::chrono::steady_clock::now() < until) {
          }
        },
        &open));
    Status enq = Enqueue(Copies::kHost, &events_);
    open.store(true);
    SY_CUDA_CHECK(cudaStreamSynchronize(exec_.stream));
    SY_RETURN_IF_ERROR(enq);
    step_seconds->resize(e_.steps.size(), 0.0);
    for (size_t s = 0; s < e_.steps.size(); ++s) {
      float ms = 0;
      SY_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[s], events_[s + 1]));
      (*step_seconds)[s] += ms * 1e-3;
    }
    return Status::Ok();
  }

  // Input copies, every step, output copies: all on exec_.stream. With events (one more
  // than the steps), records events[0] before the first step and events[s + 1] after step s.
  Status Enqueue(Copies copies, const std::vector<cudaEvent_t>* events) {
    for (size_t i = 0; i < e_.inputs.size(); ++i) {
      const TensorRef& r = refs_[static_cast<size_t>(e_.inputs[i])];
      if (copies == Copies::kDevice) {
        SY_CUDA_CHECK(cudaMemcpyAsync(r.data, dev_in_[i].get(), pinned_in_[i]->bytes, cudaMemcpyDeviceToDevice,
                                      exec_.stream));
      } else {
        SY_CUDA_CHECK(cudaMemcpyAsync(r.data, pinned_in_[i]->ptr, pinned_in_[i]->bytes,
                                      cudaMemcpyHostToDevice, exec_.stream));
      }
    }
    if (events) SY_CUDA_CHECK(cudaEventRecord((*events)[0], exec_.stream));
    KernelIO io;
    io.device = &exec_;
    for (size_t s = 0; s < e_.steps.size(); ++s) {
      const EngineStep& st = e_.steps[s];
      io.inputs.clear();
      io.outputs.clear();
      for (int t : st.inputs) io.inputs.push_back(t < 0 ? nullptr : &refs_[static_cast<size_t>(t)]);
      for (int t : st.outputs) io.outputs.push_back(t < 0 ? nullptr : &refs_[static_cast<size_t>(t)]);
      Status s_run = le_.kernel(s).Run(io);
      if (!s_run.ok()) return s_run.WithContext("step '" + st.name + "' (" + st.op_type + ", " + st.provider + ")");
      if (events) SY_CUDA_CHECK(cudaEventRecord((*events)[s + 1], exec_.stream));
    }
    if (copies == Copies::kDevice) return Status::Ok();
    for (size_t i = 0; i < e_.outputs.size(); ++i) {
      const TensorRef& r = refs_[static_cast<size_t>(e_.outputs[i])];
      SY_CUDA_CHECK(cudaMemcpyAsync(pinned_out_[i]->ptr, r.data, pinned_out_[i]->bytes,
                                    cudaMemcpyDeviceToHost, exec_.stream));
    }
    return Status::Ok();
  }

  Status Capture(Copies copies, cudaGraphExec_t* out) {
    SY_CUDA_CHECK(cudaStreamBeginCapture(exec_.stream, cudaStreamCaptureModeThreadLocal));
    Status st = Enqueue(copies, nullptr);
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(exec_.stream, &graph);
    if (!st.ok()) {
      if (graph) cudaGraphDestroy(graph);
      return st.WithContext("while capturing the CUDA graph");
    }
    if (end != cudaSuccess) return CudaError(end, "cudaStreamEndCapture");
    const cudaError_t inst = cudaGraphInstantiate(out, graph, 0);
    cudaGraphDestroy(graph);
    if (inst != cudaSuccess) {
      *out = nullptr;
      return CudaError(inst, "cudaGraphInstantiate");
    }
    return Status::Ok();
  }

  const LoadedEngine& le_;
  const Engine& e_;
  Exec exec_;
  DeviceBuffer workspace_, arena_;
  std::vector<DeviceBuffer> own_;
  std::vector<TensorRef> refs_;
  std::vector<std::unique_ptr<PinnedBuffer>> pinned_in_, pinned_out_;
  std::vector<DeviceBuffer> dev_in_;  // staged device inputs (Stage)
  cudaGraphExec_t graph_exec_[2] = {nullptr, nullptr};  // by Copies
  std::vector<cudaEvent_t> events_;  // step timing
  int64_t device_bytes_ = 0;
};

Result<std::unique_ptr<DeviceRunner>> NewRunner(const LoadedEngine& le) {
  auto r = std::make_unique<CudaRunner>(le);
  SY_RETURN_IF_ERROR(r->Init());
  return std::unique_ptr<DeviceRunner>(std::move(r));
}

// One kernel on host tensors, for the kernel harness.
Status RunSingle(const Kernel& kernel, const KernelIO& host_io) {
  if (!Device().present) return Status::FailedPrecondition("no CUDA device (" + Device().error + ")");
  const auto* k = dynamic_cast<const CudaKernel*>(&kernel);
  if (!k) return Status::Internal("not a CUDA kernel");
  Exec ex;
  struct Handles {
    Exec* ex;
    ~Handles() {
      if (ex->dnn) cudnnDestroy(ex->dnn);
      if (ex->lt) cublasLtDestroy(ex->lt);
      if (ex->stream) cudaStreamDestroy(ex->stream);
    }
  } handles{&ex};
  SY_CUDA_CHECK(cudaStreamCreateWithFlags(&ex.stream, cudaStreamNonBlocking));
  SY_CUBLAS_CHECK(cublasLtCreate(&ex.lt));
  SY_CUDNN_CHECK(cudnnCreate(&ex.dnn));
  SY_CUDNN_CHECK(cudnnSetStream(ex.dnn, ex.stream));
  SY_ASSIGN_OR_RETURN(DeviceBuffer ws, DeviceBuffer::Allocate(k->WorkspaceBytes()));
  ex.workspace = ws.get();
  ex.workspace_bytes = ws.bytes();
  std::vector<DeviceBuffer> bufs;
  std::vector<TensorRef> in(host_io.inputs.size()), out(host_io.outputs.size());
  KernelIO io;
  io.device = &ex;
  for (size_t i = 0; i < host_io.inputs.size(); ++i) {
    const TensorRef* h = host_io.inputs[i];
    if (!h) {
      io.inputs.push_back(nullptr);
      continue;
    }
    in[i] = *h;
    SY_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Upload(h->data, Bytes(h->dtype, h->shape)));
    in[i].data = b.get();
    bufs.push_back(std::move(b));
    io.inputs.push_back(&in[i]);
  }
  for (size_t i = 0; i < host_io.outputs.size(); ++i) {
    const TensorRef* h = host_io.outputs[i];
    if (!h) {
      io.outputs.push_back(nullptr);
      continue;
    }
    out[i] = *h;
    const size_t n = Bytes(h->dtype, h->shape);
    SY_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Allocate(std::max<size_t>(n, 1)));
    // Poison the output so that elements a kernel fails to write are caught (NaN for floats).
    SY_CUDA_CHECK(cudaMemset(b.get(), 0xFF, std::max<size_t>(n, 1)));
    out[i].data = b.get();
    bufs.push_back(std::move(b));
    io.outputs.push_back(&out[i]);
  }
  SY_RETURN_IF_ERROR(kernel.Run(io));
  SY_CUDA_CHECK(cudaStreamSynchronize(ex.stream));
  for (size_t i = 0; i < host_io.outputs.size(); ++i) {
    const TensorRef* h = host_io.outputs[i];
    if (!h) continue;
    const size_t n = Bytes(h->dtype, h->shape);
    if (n) SY_CUDA_CHECK(cudaMemcpy(h->data, out[i].data, n, cudaMemcpyDeviceToHost));
  }
  return Status::Ok();
}

const bool kRegistered = [] {
  RegisterDeviceBackend("cuda", DeviceBackend{LoadEngine, NewRunner, RunSingle});
  return true;
}();

}  // namespace
}  // namespace switchyard::cuda
