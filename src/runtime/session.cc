#include "runtime/session.h"

#include <omp.h>

#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "backends/cpu/op_impl.h"
#include "io/memory_budget.h"
#include "engine/batch_split.h"
#include "runtime/device_backend.h"
#include "runtime/layout.h"
#include "runtime/threads.h"
#include "runtime/worker_pool.h"

namespace switchyard {

Result<std::shared_ptr<const LoadedEngine>> LoadedEngine::Create(Engine engine) {
  auto le = std::shared_ptr<LoadedEngine>(new LoadedEngine());
  le->engine_ = std::move(engine);
  const Engine& e = le->engine_;
  SY_ASSIGN_OR_RETURN(le->segments_, ReadBatchSegments(e));
  SY_RETURN_IF_ERROR(CheckBatchSegmentsPlan(e, le->segments_));
  le->worker_threads_ = WorkerThreads(e, le->segments_);
  {
    // --max-memory: the constants (already read) and one session's arena, before any
    // kernel or arena is allocated.
    int64_t constant_bytes = 0;
    for (const Tensor& c : e.constants) constant_bytes += static_cast<int64_t>(c.nbytes());
    // A segment on workers: each worker but the first holds its own internal tensors.
    int64_t arena = e.header.target == "cpu" ? e.arena_bytes : 0;  // device arenas: not host memory
    for (const BatchSegment& seg : le->segments_) arena += static_cast<int64_t>(seg.workers - 1) * seg.scratch_bytes;
    SY_RETURN_IF_ERROR(memory_budget::Check(
        "the engine (route '" + (e.header.route.empty() ? std::string("(default)") : e.header.route) + "': " +
            memory_budget::FormatBytes(constant_bytes) + " of constants and a " +
            memory_budget::FormatBytes(arena) + " arena per session)",
        constant_bytes + arena));
  }
  if (e.header.target != "cpu") {
    const DeviceBackend* backend = FindDeviceBackend(e.header.target);
    if (!backend) {
      return Status::Unsupported("the engine targets '" + e.header.target +
                                 "', which this build of switchyard cannot run");
    }
    SY_ASSIGN_OR_RETURN(le->device_state_, backend->load(e));
  }
  for (const EngineStep& st : e.steps) {
    const CpuOpImpl* impl = CpuImplRegistry::Global().Find(st.provider, st.domain, st.op_type, st.variant);
    const std::string label = "step '" + st.name + "' (" + st.op_type + ")";
    if (!impl) {
      return Status::FailedPrecondition(label + ": this build has no " + st.provider + " kernel for " +
                                        st.op_type + (st.variant.empty() ? "" : "/" + st.variant));
    }
    SY_ASSIGN_OR_RETURN(Node node, NodeFromStep(st, e.constants));
    // Inputs a kernel consumed at build time (packed weights) are stored as -1 but were
    // present; an omitted optional input is -1 with no dtype. Kernels ask HasInput(i).
    node.inputs.assign(st.inputs.size(), 0);
    for (size_t i = 0; i < st.inputs.size(); ++i) {
      const bool omitted = st.inputs[i] < 0 && (i >= st.input_dtypes.size() || st.input_dtypes[i] == 0);
      if (omitted) node.inputs[i] = kNoValue;
    }
    node.outputs.assign(st.outputs.size(), 0);
    StepView view{node, st.params, {}, {}, {}, {}, {}, {}, {}};
    for (int p : st.packed) view.packed.push_back(&e.constants[static_cast<size_t>(p)]);
    view.input_shapes = st.input_shapes;
    view.output_shapes = st.output_shapes;
    for (int d : st.input_dtypes) view.input_dtypes.push_back(static_cast<DataType>(d));
    for (int d : st.output_dtypes) view.output_dtypes.push_back(static_cast<DataType>(d));
    for (int t : st.inputs) view.input_layouts.push_back(t >= 0 ? e.tensors[static_cast<size_t>(t)].layout : "");
    for (int t : st.outputs) view.output_layouts.push_back(t >= 0 ? e.tensors[static_cast<size_t>(t)].layout : "");
    // A step's params and attributes come from the engine file: a value of the wrong JSON
    // type (or a missing key read with at()) is a damaged engine, not a crash.
    Result<std::unique_ptr<Kernel>> kernel = Status::Internal("kernel not created");
    try {
      kernel = impl->create(view);
    } catch (const nlohmann::json::exception& x) {
      return Status::Invalid(label + ": malformed step parameters in the engine (" + x.what() + ")");
    } catch (const std::logic_error& x) {
      return Status::Invalid(label + ": malformed step in the engine (" + x.what() + ")");
    }
    if (!kernel.ok()) return kernel.status().WithContext(label);
    le->kernels_.push_back(std::move(kernel).value());
    const auto threads = st.params.find("threads");
    int step_threads = le->worker_threads_;
    if (threads != st.params.end()) {
      if (!threads->is_number_integer() || threads->get<int64_t>() < 1) {
        return Status::Invalid(label + ": params.threads must be a positive integer");
      }
      step_threads = static_cast<int>(std::min<int64_t>(threads->get<int64_t>(), le->worker_threads_));
    }
    le->step_threads_.push_back(step_threads);
  }
  return std::shared_ptr<const LoadedEngine>(std::move(le));
}

Session::Session(std::shared_ptr<const LoadedEngine> engine) : engine_(std::move(engine)) {
  const Engine& e = engine_->engine();
  arena_size_ = e.header.target == "cpu" ? e.arena_bytes : 0;  // device targets: the runner's
  if (arena_size_ > 0) {
    arena_ = static_cast<uint8_t*>(std::aligned_alloc(64, static_cast<size_t>((arena_size_ + 63) / 64 * 64)));
  }
  heap_.resize(e.tensors.size());
}

Session::~Session() {
  pool_.reset();  // joins the workers before their lanes go
  std::free(arena_);
}

Session::WorkerLane::~WorkerLane() { std::free(scratch); }

Status Session::PrepareWorkers(const BatchSegment& seg) {
  if (pool_ && pool_->helpers() == seg.workers - 1) return Status::Ok();
  pool_.reset();
  lanes_.clear();
  const size_t n = engine_->engine().tensors.size();
  for (int w = 1; w < seg.workers; ++w) {
    auto lane = std::make_unique<WorkerLane>();
    lane->refs.resize(n);
    lane->heap.resize(n);
    if (seg.scratch_bytes > 0) {
      lane->scratch = static_cast<uint8_t*>(std::aligned_alloc(64, static_cast<size_t>((seg.scratch_bytes + 63) / 64 * 64)));
      if (!lane->scratch) {
        lanes_.clear();
        return Status::OutOfRange("cannot allocate a batch-split worker's " + std::to_string(seg.scratch_bytes) +
                                  " bytes of tensors");
      }
    }
    lanes_.push_back(std::move(lane));
  }
  pool_ = std::make_unique<WorkerPool>(seg.workers - 1);
  worker_bytes_ = static_cast<int64_t>(seg.workers - 1) * seg.scratch_bytes;
  return Status::Ok();
}

void ReleaseCallingThreadWorkers() {
  // libgomp (GCC 9+; it declares _OPENMP 201511 but has this OpenMP 5.0 call): frees the
  // calling thread's pool only, other threads' teams are untouched.
  (void)omp_pause_resource_all(omp_pause_soft);
}

Status CheckEngineInputs(const Engine& e, const TensorMap& inputs) {
  std::string names;
  for (int t : e.inputs) names += (names.empty() ? "" : ", ") + e.tensors[static_cast<size_t>(t)].name;
  for (const auto& [name, tensor] : inputs) {
    bool known = false;
    for (int t : e.inputs) known |= e.tensors[static_cast<size_t>(t)].name == name;
    if (!known) {
      return Status::NotFound("the engine has no input named '" + name + "'; its inputs are: " + names);
    }
  }
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const size_t t = static_cast<size_t>(e.inputs[i]);
    const EngineTensor& et = e.tensors[t];
    auto it = inputs.find(et.name);
    if (it == inputs.end()) return Status::NotFound("input '" + et.name + "' was not given");
    const Tensor& x = it->second;
    const std::string where = "input '" + et.name + "'";
    if (x.dtype() != et.dtype) {
      return Status::Invalid(where + " must be " + DataTypeName(et.dtype) + " but " +
                             DataTypeName(x.dtype()) + " was given");
    }
    const auto& ranges = e.input_ranges[i];
    if (!ranges.empty() && static_cast<size_t>(x.rank()) != ranges.size()) {
      return Status::Invalid(where + " must have rank " + std::to_string(ranges.size()) + " but " +
                             ShapeToString(x.shape()) + " was given");
    }
    for (size_t d = 0; d < ranges.size(); ++d) {
      const int64_t got = x.shape()[d];
      if (got < ranges[d].min || (ranges[d].max >= 0 && got > ranges[d].max)) {
        return Status::Invalid(where + " dimension " + std::to_string(d) + " is " + std::to_string(got) +
                               "; the engine was built for " + std::to_string(ranges[d].min) + ".." +
                               (ranges[d].max >= 0 ? std::to_string(ranges[d].max) : "any"));
      }
    }
  }
  return Status::Ok();
}

const char* IoPlacementName(IoPlacement p) {
  switch (p) {
    case IoPlacement::kHost: return "host";
    case IoPlacement::kPinned: return "pinned";
    case IoPlacement::kDevice: return "device";
  }
  return "?";
}

Result<IoPlacement> ParseIoPlacement(const std::string& s) {
  for (IoPlacement p : {IoPlacement::kHost, IoPlacement::kPinned, IoPlacement::kDevice}) {
    if (s == IoPlacementName(p)) return p;
  }
  return Status::Invalid("unknown I/O placement '" + s + "' (expected host, pinned or device)");
}

Status Session::EnsureRunner() {
  if (runner_) return Status::Ok();
  const std::string& target = engine_->engine().header.target;
  const DeviceBackend* backend = FindDeviceBackend(target);
  if (!backend) return Status::Unsupported("no runtime for target '" + target + "'");
  SY_ASSIGN_OR_RETURN(runner_, backend->new_runner(*engine_));
  return Status::Ok();
}

Status Session::Stage(const TensorMap& inputs) {
  const Engine& e = engine_->engine();
  SY_RETURN_IF_ERROR(CheckEngineInputs(e, inputs));
  staged_inputs_ = inputs;
  staged_ = true;
  if (e.header.target == "cpu") return Status::Ok();
  SY_RETURN_IF_ERROR(EnsureRunner());
  return runner_->Stage(inputs);
}

Status Session::RunStaged(IoPlacement where) {
  const Engine& e = engine_->engine();
  if (!staged_) return Status::FailedPrecondition("RunStaged before Stage");
  if (where == IoPlacement::kHost) {
    SY_ASSIGN_OR_RETURN(staged_outputs_, Run(staged_inputs_));
    return Status::Ok();
  }
  if (e.header.target == "cpu") {
    return Status::Invalid(std::string("I/O placement '") + IoPlacementName(where) +
                           "' needs a device target; this engine is for cpu (use host)");
  }
  Status st = runner_->RunStaged(where == IoPlacement::kDevice);
  peak_bytes_ = std::max(peak_bytes_, runner_->peak_bytes());
  return st;
}

Result<TensorMap> Session::StagedOutputs(IoPlacement where) {
  if (!staged_) return Status::FailedPrecondition("StagedOutputs before Stage");
  if (where == IoPlacement::kHost || engine_->engine().header.target == "cpu") return staged_outputs_;
  return runner_->StagedOutputs(where == IoPlacement::kDevice);
}

Result<TensorMap> Session::Run(const TensorMap& inputs) {
  const Engine& e = engine_->engine();
  if (e.header.target != "cpu") {
    SY_RETURN_IF_ERROR(EnsureRunner());
    if (step_timing_) step_seconds_.resize(e.steps.size(), 0.0);
    auto out = runner_->Run(inputs, step_timing_ ? &step_seconds_ : nullptr);
    if (out.ok() && step_timing_) ++timed_runs_;
    peak_bytes_ = std::max(peak_bytes_, runner_->peak_bytes());
    return out;
  }
  if (arena_size_ > 0 && !arena_) return Status::OutOfRange("cannot allocate the engine's arena");
  SY_RETURN_IF_ERROR(CheckEngineInputs(e, inputs));
  // The engine's thread count is the calling thread's OpenMP team size for the whole run,
  // not only inside each kernel's Run: oneDNN fixes a primitive's thread count when the
  // primitive is created (brgconv's jcp.nthr), and kernels create theirs lazily, in
  // OutputShapes as well, which ran under the process default (all CPUs). A threads=1
  // engine then ran its convolutions on two threads on a 2-CPU machine.
  const ThreadScope run_threads(e.header.threads);
  std::vector<TensorRef> refs(e.tensors.size());
  std::vector<char> ready(e.tensors.size(), 0);
  for (size_t t = 0; t < e.tensors.size(); ++t) {
    const EngineTensor& et = e.tensors[t];
    refs[t].dtype = et.dtype;
    refs[t].layout = et.layout;
    if (et.kind == EngineTensor::Kind::kConstant) {
      const Tensor& c = e.constants[static_cast<size_t>(et.constant)];
      refs[t].shape = c.shape();
      refs[t].data = const_cast<void*>(c.raw());
      ready[t] = 1;
    }
  }
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const size_t t = static_cast<size_t>(e.inputs[i]);
    const Tensor& x = inputs.at(e.tensors[t].name);
    refs[t].shape = x.shape();
    refs[t].data = const_cast<void*>(x.raw());
    ready[t] = 1;
  }
  int64_t heap_bytes = 0;
  std::vector<std::pair<size_t, Tensor>> owned;  // graph outputs computed in place
  owned.reserve(e.outputs.size());  // never reallocated: refs point into these buffers
  if (step_timing_) step_seconds_.resize(e.steps.size(), 0.0);
  // Bytes a step's tensor of `shape` takes in `layout` ("" plain; blocked layouts pad).
  auto stored_bytes = [](const std::string& layout, const std::vector<int64_t>& shape, DataType dtype,
                         const std::string& step) -> Result<int64_t> {
    auto n = CheckedNumElements(shape);
    if (!n.ok()) return n.status().WithContext("step '" + step + "' output");
    if (layout.empty()) return *n * static_cast<int64_t>(DataTypeSize(dtype));
    auto padded = LayoutBytes(layout, shape, dtype);
    if (!padded.ok()) return padded.status().WithContext("step '" + step + "'");
    return *padded;
  };
  // An output's buffer for `shape`: the tensor handed back for a graph output, else its
  // arena bytes, else a heap buffer.
  auto place = [&](size_t ut, const std::vector<int64_t>& shape, const std::string& step) -> Status {
    const EngineTensor& et = e.tensors[ut];
    TensorRef& r = refs[ut];
    r.shape = shape;
    SY_ASSIGN_OR_RETURN(const int64_t need, stored_bytes(et.layout, r.shape, et.dtype, step));
    if (et.is_output && (et.kind == EngineTensor::Kind::kOutput || et.kind == EngineTensor::Kind::kIntermediate) &&
        et.layout.empty() && et.dtype != DataType::kString && need > 0) {
      // A graph output is computed straight into the tensor handed back (unwritten
      // bytes, every kernel writes its whole output): no copy out of the arena after the
      // run, no zero fill (GPT-2-small's logits are 25 MB).
      owned.emplace_back(ut, Tensor::Uninitialized(et.dtype, r.shape));
      r.data = owned.back().second.raw();
    } else if (et.offset >= 0 && need <= et.bytes) {
      r.data = arena_ + et.offset;
    } else {
      std::vector<uint8_t>& buf = heap_[ut];
      if (static_cast<int64_t>(buf.size()) < need) buf.resize(static_cast<size_t>(need));
      r.data = buf.data();
      heap_bytes += need;
    }
    ready[ut] = 1;
    return Status::Ok();
  };
  // One lane of execution: the calling thread's (lane 0) outside and inside a segment, and
  // each worker's inside a segment that runs on workers. Lanes 1.. keep the segment's
  // internal tensors in their own WorkerLane (refs, scratch, heap); lane 0 uses the run's.
  struct Lane {
    KernelIO io;
    std::deque<TensorRef> views;  // stable addresses as it grows
    WorkerLane* own = nullptr;    // null: lane 0
    std::vector<double>* seconds = nullptr;
  };
  std::mutex place_mu;  // boundary outputs of a segment on workers: placed by the first lane
  // Images [b0, b1) of a batch-split segment's boundary tensor: its rows, as a view.
  auto rows = [&](Lane& lane, size_t ut, int64_t b0, int64_t b1, const std::string& step) -> Result<TensorRef*> {
    const TensorRef& r = refs[ut];
    if (r.shape.empty() || r.shape[0] < b1) {
      return Status::Invalid("step '" + step + "': batch split over images " + std::to_string(b0) + ".." +
                             std::to_string(b1) + " of '" + e.tensors[ut].name + "', which is " +
                             ShapeToString(r.shape));
    }
    SY_ASSIGN_OR_RETURN(const int64_t bytes, stored_bytes(r.layout, r.shape, r.dtype, step));
    TensorRef v = r;
    v.shape[0] = b1 - b0;
    v.data = static_cast<uint8_t*>(r.data) + bytes / r.shape[0] * b0;
    lane.views.push_back(std::move(v));
    return &lane.views.back();
  };
  // A worker lane's internal tensor: its scratch bytes, else its own heap buffer.
  auto place_own = [&](WorkerLane& w, const BatchSegment& seg, size_t ut, const std::vector<int64_t>& shape,
                       const std::string& step) -> Result<TensorRef*> {
    const EngineTensor& et = e.tensors[ut];
    TensorRef& r = w.refs[ut];
    r.dtype = et.dtype;
    r.layout = et.layout;
    r.shape = shape;
    SY_ASSIGN_OR_RETURN(const int64_t need, stored_bytes(et.layout, r.shape, et.dtype, step));
    if (seg.scratch[ut] >= 0 && need <= et.bytes) {
      r.data = w.scratch + seg.scratch[ut];
    } else {
      std::vector<uint8_t>& buf = w.heap[ut];
      if (static_cast<int64_t>(buf.size()) < need) buf.resize(static_cast<size_t>(need));
      r.data = buf.data();
      w.heap_bytes += need;
    }
    w.ready[ut] = 1;
    return &r;
  };
  // Step s on `lane`; inside a batch-split segment `seg` on images [b0, b1) of `batch`.
  auto run_step = [&](Lane& lane, size_t s, const BatchSegment* seg, int64_t b0, int64_t b1,
                      int64_t batch) -> Status {
    const EngineStep& st = e.steps[s];
    KernelIO& io = lane.io;
    io.inputs.clear();
    io.outputs.clear();
    lane.views.clear();
    io.threads = engine_->step_threads(s);
    // A step on fewer threads than the engine runs (and creates its oneDNN primitives)
    // under its own team size.
    std::optional<ThreadScope> step_scope;
    if (io.threads != e.header.threads) step_scope.emplace(io.threads);
    for (int t : st.inputs) {
      if (t < 0) {
        io.inputs.push_back(nullptr);
        continue;
      }
      const size_t ut = static_cast<size_t>(t);
      const bool boundary = seg && seg->boundary[ut];
      // A worker's own tensor: an internal one of the segment (not boundary, not constant).
      const bool own = !boundary && lane.own && e.tensors[ut].kind != EngineTensor::Kind::kConstant;
      if (!(own ? lane.own->ready[ut] : ready[ut])) {
        return Status::Internal("step '" + st.name + "' reads '" + e.tensors[ut].name + "' before it is computed");
      }
      if (boundary) {
        SY_ASSIGN_OR_RETURN(TensorRef * v, rows(lane, ut, b0, b1, st.name));
        io.inputs.push_back(v);
      } else {
        io.inputs.push_back(own ? &lane.own->refs[ut] : &refs[ut]);
      }
    }
    const Kernel& k = engine_->kernel(s);
    auto shapes = k.OutputShapes(io.inputs);
    if (!shapes.ok()) return shapes.status().WithContext("step '" + st.name + "'");
    for (size_t o = 0; o < st.outputs.size(); ++o) {
      const int t = st.outputs[o];
      if (t < 0) {
        io.outputs.push_back(nullptr);
        continue;
      }
      const size_t ut = static_cast<size_t>(t);
      std::vector<int64_t> shape = o < shapes->size() ? (*shapes)[o] : std::vector<int64_t>{};
      // On workers, place() (the run's refs, readiness and heap count) is shared by the lanes.
      const bool boundary = seg && seg->boundary[ut];
      std::unique_lock<std::mutex> lock(place_mu, std::defer_lock);
      if (seg && seg->workers > 1 && (boundary || !lane.own)) lock.lock();
      if (boundary) {
        // The whole batch's tensor, placed by the first chunk to reach it (on workers: the
        // first lane); this chunk writes its rows.
        if (shape.empty() || shape[0] != b1 - b0) {
          return Status::Invalid("step '" + st.name + "': batch split needs an output with the chunk's " +
                                 std::to_string(b1 - b0) + " images as dim 0, got " + ShapeToString(shape));
        }
        shape[0] = batch;
        if (seg->workers > 1 ? !ready[ut] : b0 == 0) SY_RETURN_IF_ERROR(place(ut, shape, st.name));
        SY_ASSIGN_OR_RETURN(TensorRef * v, rows(lane, ut, b0, b1, st.name));
        io.outputs.push_back(v);
        continue;
      }
      if (lane.own) {
        SY_ASSIGN_OR_RETURN(TensorRef * r, place_own(*lane.own, *seg, ut, shape, st.name));
        io.outputs.push_back(r);
        continue;
      }
      SY_RETURN_IF_ERROR(place(ut, shape, st.name));
      io.outputs.push_back(&refs[ut]);
    }
    std::chrono::steady_clock::time_point t0;
    if (lane.seconds) t0 = std::chrono::steady_clock::now();
    Status st_run = k.Run(io);
    if (!st_run.ok()) return st_run.WithContext("step '" + st.name + "'");
    if (lane.seconds) {
      (*lane.seconds)[s] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return Status::Ok();
  };
  Lane main_lane;
  if (step_timing_) main_lane.seconds = &step_seconds_;
  const std::vector<BatchSegment>& segments = engine_->batch_segments();
  for (size_t s = 0; s < e.steps.size();) {
    const BatchSegment* seg = SegmentAt(segments, static_cast<int>(s));
    if (!seg) {
      SY_RETURN_IF_ERROR(run_step(main_lane, s, nullptr, 0, 0, 0));
      ++s;
      continue;
    }
    // The batch: dim 0 of the segment's boundary inputs, which are all ready here.
    int64_t batch = -1;
    for (int q = seg->first; q < seg->end && batch < 0; ++q) {
      for (int t : e.steps[static_cast<size_t>(q)].inputs) {
        if (t >= 0 && seg->boundary[static_cast<size_t>(t)] && ready[static_cast<size_t>(t)] &&
            !refs[static_cast<size_t>(t)].shape.empty()) {
          batch = refs[static_cast<size_t>(t)].shape[0];
          break;
        }
      }
    }
    if (batch < 0) {
      return Status::Invalid("step '" + e.steps[s].name + "': its batch-split segment reads no batch from before it");
    }
    const int64_t chunks = (batch + seg->chunk - 1) / seg->chunk;
    // Lane w runs chunks w, w + lanes, ...: all of the segment's steps for each.
    auto run_chunks = [&](Lane& lane, int w, int lanes) -> Status {
      for (int64_t c = w; c < chunks; c += lanes) {
        const int64_t b0 = c * seg->chunk;
        for (int q = seg->first; q < seg->end; ++q) {
          SY_RETURN_IF_ERROR(run_step(lane, static_cast<size_t>(q), seg, b0, std::min(batch, b0 + seg->chunk), batch));
        }
      }
      return Status::Ok();
    };
    if (seg->workers <= 1) {
      SY_RETURN_IF_ERROR(run_chunks(main_lane, 0, 1));
      s = static_cast<size_t>(seg->end);
      continue;
    }
    // On workers: lane 0 is this thread, lanes 1.. the pool's; each on its share of the
    // engine's threads (every step's io.threads is at most that share).
    const int lanes = seg->workers;
    SY_RETURN_IF_ERROR(PrepareWorkers(*seg));
    std::vector<Lane> extra(static_cast<size_t>(lanes - 1));
    std::vector<std::vector<double>> seconds;
    if (step_timing_) seconds.assign(static_cast<size_t>(lanes), std::vector<double>(e.steps.size(), 0.0));
    for (int w = 1; w < lanes; ++w) {
      Lane& lane = extra[static_cast<size_t>(w - 1)];
      lane.own = lanes_[static_cast<size_t>(w - 1)].get();
      lane.own->ready.assign(e.tensors.size(), 0);
      lane.own->heap_bytes = 0;
      if (step_timing_) lane.seconds = &seconds[static_cast<size_t>(w)];
    }
    if (step_timing_) main_lane.seconds = &seconds[0];
    std::vector<Status> status(static_cast<size_t>(lanes), Status::Ok());
    const int share = engine_->worker_threads();
    pool_->Run([&](int w) {
      Lane& lane = w == 0 ? main_lane : extra[static_cast<size_t>(w - 1)];
      try {
        const ThreadScope scope(share);
        status[static_cast<size_t>(w)] = run_chunks(lane, w, lanes);
      } catch (const std::exception& x) {
        status[static_cast<size_t>(w)] = Status::Internal(std::string("batch-split worker: ") + x.what());
      }
    });
    if (step_timing_) {
      // A step's time: the mean over the lanes, which ran at the same time.
      main_lane.seconds = &step_seconds_;
      for (const std::vector<double>& lane : seconds) {
        for (size_t q = 0; q < lane.size(); ++q) step_seconds_[q] += lane[q] / lanes;
      }
    }
    for (const Status& st : status) SY_RETURN_IF_ERROR(st);
    for (const Lane& lane : extra) heap_bytes += lane.own->heap_bytes;
    s = static_cast<size_t>(seg->end);
  }
  if (step_timing_) ++timed_runs_;
  peak_bytes_ = std::max(peak_bytes_, arena_size_ + worker_bytes_ + heap_bytes);
  TensorMap out;
  for (int t : e.outputs) {
    const size_t ut = static_cast<size_t>(t);
    const TensorRef& r = refs[ut];
    auto mine = std::find_if(owned.begin(), owned.end(), [ut](const auto& o) { return o.first == ut && o.second.defined(); });
    if (mine != owned.end() && !out.count(e.tensors[ut].name)) {
      out[e.tensors[ut].name] = std::move(mine->second);
      mine->second = Tensor();
      continue;
    }
    Tensor x(r.dtype, r.shape);
    if (x.nbytes()) std::memcpy(x.raw(), r.data, x.nbytes());
    out[e.tensors[ut].name] = std::move(x);
  }
  return out;
}

}  // namespace switchyard
