#include "onnx/tensor_proto.h"

#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace switchyard {
namespace fs = std::filesystem;

Result<std::string> ConfinedPath(const std::string& base_dir, const std::string& location) {
  if (location.empty()) return Status::Invalid("external data location is empty");
  if (location[0] == '/' || location[0] == '\\' ||
      (location.size() > 1 && location[1] == ':')) {
    return Status::Invalid("external data location '" + location +
                           "' is an absolute path; it must be relative to the model's folder");
  }
  for (const auto& part : fs::path(location)) {
    if (part == "..") {
      return Status::Invalid("external data location '" + location +
                             "' contains '..'; it must stay inside the model's folder");
    }
  }
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::path(base_dir.empty() ? "." : base_dir), ec);
  if (ec) return Status::IoError("cannot resolve model folder '" + base_dir + "'");
  const fs::path full = fs::weakly_canonical(base / location, ec);
  if (ec) return Status::IoError("cannot resolve external data '" + location + "'");
  const std::string b = base.string(), f = full.string();
  if (f.size() <= b.size() || f.compare(0, b.size(), b) != 0 ||
      (f[b.size()] != '/' && b != "/")) {
    return Status::Invalid("external data location '" + location + "' resolves to '" + f +
                           "', outside the model's folder '" + b + "'");
  }
  return f;
}

namespace {

// Validates location, length and file size first and only then allocates, so a tiny
// model declaring a huge external tensor costs nothing.
Result<Tensor> ReadExternal(const onnx::TensorProto& p, const TensorProtoOptions& opt,
                            const std::string& what, DataType dt,
                            const std::vector<int64_t>& shape, size_t expected) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    auto parse = [&](int64_t* out) -> Status {
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(kv.value().c_str(), &end, 10);
      if (errno || end == kv.value().c_str() || *end || v < 0) {
        return Status::Invalid(what + ": external data " + kv.key() + " '" + kv.value() +
                               "' is not a non-negative integer");
      }
      *out = v;
      return Status::Ok();
    };
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") SY_RETURN_IF_ERROR(parse(&offset));
    else if (kv.key() == "length") SY_RETURN_IF_ERROR(parse(&length));
  }
  if (opt.base_dir.empty()) {
    return Status::Invalid(what + ": external data is only allowed in a model read from a file");
  }
  auto path = ConfinedPath(opt.base_dir, location);
  if (!path.ok()) return path.status().WithContext(what);
  if (length >= 0 && static_cast<size_t>(length) != expected) {
    return Status::Invalid(what + ": external data length " + std::to_string(length) +
                           " does not match the " + std::to_string(expected) +
                           " bytes its shape and type need");
  }
  struct stat st;
  if (::stat(path->c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::NotFound(what + ": external data file '" + location + "' does not exist");
  }
  if (static_cast<uint64_t>(offset) > static_cast<uint64_t>(st.st_size) ||
      static_cast<uint64_t>(st.st_size) - static_cast<uint64_t>(offset) < expected) {
    return Status::Invalid(what + ": external data file '" + location + "' has " +
                           std::to_string(st.st_size) + " bytes; " + std::to_string(expected) +
                           " are needed at offset " + std::to_string(offset));
  }
  // Every byte is read from the file below (or the read fails and the tensor is dropped).
  Tensor t = Tensor::Uninitialized(dt, shape);
  if (expected == 0) return t;
  std::ifstream f(*path, std::ios::binary);
  f.seekg(offset);
  f.read(static_cast<char*>(t.raw()), static_cast<std::streamsize>(expected));
  if (!f) return Status::IoError(what + ": reading external data file '" + location + "' failed");
  return t;
}

template <typename Field>
Status CheckCount(const Field& field, int64_t n, const std::string& what, const char* name) {
  if (static_cast<int64_t>(field.size()) != n) {
    return Status::Invalid(what + ": " + name + " holds " + std::to_string(field.size()) +
                           " values but the shape needs " + std::to_string(n));
  }
  return Status::Ok();
}

}  // namespace

Result<Tensor> TensorFromProto(const onnx::TensorProto& p, const TensorProtoOptions& opt,
                               const std::string& what) {
  if (!IsKnownDataType(p.data_type())) {
    return Status::Unsupported(what + ": data type " + std::to_string(p.data_type()) +
                               " is not supported");
  }
  if (p.has_segment()) return Status::Unsupported(what + ": segmented tensors are not supported");
  const DataType dt = static_cast<DataType>(p.data_type());
  std::vector<int64_t> shape(p.dims().begin(), p.dims().end());
  const size_t esize = DataTypeSize(dt);
  const int64_t limit = dt == DataType::kString ? (int64_t{1} << 32)
                                                : opt.max_bytes / static_cast<int64_t>(esize);
  auto numel = CheckedNumElements(shape, limit);
  if (!numel.ok()) return numel.status().WithContext(what);
  const int64_t n = *numel;
  const size_t expected = static_cast<size_t>(n) * esize;

  const bool external = p.data_location() == onnx::TensorProto::EXTERNAL;
  if (dt == DataType::kString) {
    if (external || p.has_raw_data()) {
      return Status::Invalid(what + ": string tensors must use string_data");
    }
    SY_RETURN_IF_ERROR(CheckCount(p.string_data(), n, what, "string_data"));
    Tensor t(dt, shape);
    for (int64_t i = 0; i < n; ++i) t.strings()[static_cast<size_t>(i)] = p.string_data(i);
    return t;
  }
  if (external) return ReadExternal(p, opt, what, dt, shape, expected);
  if (p.has_raw_data()) {
    if (p.raw_data().size() != expected) {
      return Status::Invalid(what + ": raw_data has " + std::to_string(p.raw_data().size()) +
                             " bytes but shape " + ShapeToString(shape) + " of " +
                             DataTypeName(dt) + " needs " + std::to_string(expected));
    }
    Tensor t = Tensor::Uninitialized(dt, shape);  // every byte copied from raw_data
    if (expected) std::memcpy(t.raw(), p.raw_data().data(), expected);
    return t;
  }
  // Check the typed field's count before allocating (the shape may be huge and the
  // field nearly empty).
  switch (dt) {
    case DataType::kFloat:
      SY_RETURN_IF_ERROR(CheckCount(p.float_data(), n, what, "float_data"));
      break;
    case DataType::kDouble:
      SY_RETURN_IF_ERROR(CheckCount(p.double_data(), n, what, "double_data"));
      break;
    case DataType::kInt64:
      SY_RETURN_IF_ERROR(CheckCount(p.int64_data(), n, what, "int64_data"));
      break;
    case DataType::kUint32:
    case DataType::kUint64:
      SY_RETURN_IF_ERROR(CheckCount(p.uint64_data(), n, what, "uint64_data"));
      break;
    default:  // float16, bfloat16, int32, int16, int8, uint16, uint8, bool
      SY_RETURN_IF_ERROR(CheckCount(p.int32_data(), n, what, "int32_data"));
      break;
  }
  Tensor t = Tensor::Uninitialized(dt, shape);  // each case writes all n elements (counts checked)
  switch (dt) {
    case DataType::kFloat:
      if (n) std::memcpy(t.raw(), p.float_data().data(), expected);
      break;
    case DataType::kDouble:
      if (n) std::memcpy(t.raw(), p.double_data().data(), expected);
      break;
    case DataType::kInt64:
      if (n) std::memcpy(t.raw(), p.int64_data().data(), expected);
      break;
    case DataType::kUint32:
    case DataType::kUint64:
      for (int64_t i = 0; i < n; ++i) t.SetInt64(i, static_cast<int64_t>(p.uint64_data(i)));
      break;
    case DataType::kFloat16:
    case DataType::kBfloat16:
      for (int64_t i = 0; i < n; ++i) {
        t.data<uint16_t>()[i] = static_cast<uint16_t>(p.int32_data(i));
      }
      break;
    default:  // int32, int16, int8, uint16, uint8, bool
      for (int64_t i = 0; i < n; ++i) t.SetInt64(i, p.int32_data(i));
      break;
  }
  return t;
}

void TensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
  p->Clear();
  p->set_name(name);
  p->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) p->add_dims(d);
  if (t.dtype() == DataType::kString) {
    for (const auto& s : t.strings()) p->add_string_data(s);
  } else {
    p->set_raw_data(std::string(static_cast<const char*>(t.raw()), t.nbytes()));
  }
}

Result<Tensor> ReadTensorProtoFile(const std::string& path, std::string* name) {
  // Only regular files: a FIFO would block forever and /dev/zero never ends.
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound("tensor file '" + path + "' does not exist");
  if (!fs::is_regular_file(path, ec)) {
    return Status::Invalid("tensor file '" + path + "' is not a regular file");
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound("cannot open tensor file '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  onnx::TensorProto p;
  if (bytes.empty() || !p.ParseFromString(bytes)) {
    return Status::ParseError("'" + path + "' is not a serialized ONNX TensorProto");
  }
  if (p.data_type() == 0) {
    return Status::ParseError("'" + path + "' is not a serialized ONNX TensorProto (no data type)");
  }
  if (name) *name = p.name();
  TensorProtoOptions opt;
  opt.base_dir = fs::path(path).parent_path().string();
  return TensorFromProto(p, opt, "tensor file '" + path + "'");
}

}  // namespace switchyard
