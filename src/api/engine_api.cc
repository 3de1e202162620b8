// Implements include/switchyard/engine.h over the internal runtime (LoadedEngine +
// Sessions). Sessions are pooled: a Run takes a free one (or makes one) and returns it.
#include "switchyard/engine.h"

#include <cstring>
#include <mutex>

#include "engine/engine.h"
#include "runtime/session.h"

namespace switchyard {

HostTensor HostTensor::FromFloats(std::vector<int64_t> shape, const std::vector<float>& values) {
  HostTensor t;
  t.dtype = "float32";
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

HostTensor HostTensor::FromInt64(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  HostTensor t;
  t.dtype = "int64";
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(int64_t));
  if (!values.empty()) std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const float* HostTensor::floats() const {
  return dtype == "float32" ? reinterpret_cast<const float*>(data.data()) : nullptr;
}

const int64_t* HostTensor::int64s() const {
  return dtype == "int64" ? reinterpret_cast<const int64_t*>(data.data()) : nullptr;
}

namespace {

Result<DataType> DtypeOf(const std::string& name) {
  const DataType t = DataTypeFromName(name);
  if (t == DataType::kUndefined || t == DataType::kString) {
    return Status::Invalid("unknown tensor dtype '" + name + "'");
  }
  return t;
}

TensorInfo InfoOf(const EngineTensor& t, const std::vector<DimRange>* ranges) {
  TensorInfo info;
  info.name = t.name;
  info.dtype = DataTypeName(t.dtype);
  if (ranges) {
    for (const DimRange& r : *ranges) {
      info.min_shape.push_back(r.min);
      info.max_shape.push_back(r.max);
    }
  } else {
    info.min_shape = info.max_shape = t.shape;
  }
  return info;
}

}  // namespace

struct EngineRunner::Impl {
  std::shared_ptr<const LoadedEngine> loaded;
  std::vector<TensorInfo> inputs, outputs;
  std::mutex mu;
  std::vector<std::unique_ptr<Session>> free_sessions;
};

EngineRunner::EngineRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EngineRunner::~EngineRunner() = default;

Result<std::shared_ptr<const EngineRunner>> EngineRunner::Load(const std::string& path) {
  SY_ASSIGN_OR_RETURN(Engine e, ReadEngine(path));
  auto impl = std::make_unique<Impl>();
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    impl->inputs.push_back(InfoOf(e.tensors[static_cast<size_t>(e.inputs[i])], &e.input_ranges[i]));
  }
  for (int t : e.outputs) impl->outputs.push_back(InfoOf(e.tensors[static_cast<size_t>(t)], nullptr));
  SY_ASSIGN_OR_RETURN(impl->loaded, LoadedEngine::Create(std::move(e)));
  return std::shared_ptr<const EngineRunner>(new EngineRunner(std::move(impl)));
}

const std::vector<TensorInfo>& EngineRunner::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& EngineRunner::outputs() const { return impl_->outputs; }
const std::string& EngineRunner::route() const { return impl_->loaded->engine().header.route; }

Result<std::map<std::string, HostTensor>> EngineRunner::Run(
    const std::map<std::string, HostTensor>& inputs) const {
  TensorMap in;
  for (const auto& [name, h] : inputs) {
    SY_ASSIGN_OR_RETURN(DataType dt, DtypeOf(h.dtype));
    auto n = CheckedNumElements(h.shape);
    if (!n.ok()) return n.status().WithContext("input '" + name + "'");
    if (static_cast<size_t>(*n) * DataTypeSize(dt) != h.data.size()) {
      return Status::Invalid("input '" + name + "': " + std::to_string(h.data.size()) +
                             " bytes given; shape " + ShapeToString(h.shape) + " of " + h.dtype +
                             " needs " + std::to_string(static_cast<size_t>(*n) * DataTypeSize(dt)));
    }
    Tensor t(dt, h.shape);
    if (!h.data.empty()) std::memcpy(t.raw(), h.data.data(), h.data.size());
    in[name] = std::move(t);
  }
  std::unique_ptr<Session> session;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->free_sessions.empty()) {
      session = std::move(impl_->free_sessions.back());
      impl_->free_sessions.pop_back();
    }
  }
  if (!session) session = std::make_unique<Session>(impl_->loaded);
  auto out = session->Run(in);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->free_sessions.push_back(std::move(session));
  }
  if (!out.ok()) return out.status();
  std::map<std::string, HostTensor> result;
  for (auto& [name, t] : *out) {
    HostTensor h;
    h.dtype = DataTypeName(t.dtype());
    h.shape = t.shape();
    h.data.resize(t.nbytes());
    if (t.nbytes()) std::memcpy(h.data.data(), t.raw(), t.nbytes());
    result[name] = std::move(h);
  }
  return result;
}

}  // namespace switchyard
