#include "io/npy.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "onnx/tensor_proto.h"

namespace switchyard {
namespace fs = std::filesystem;
namespace {

struct NpyType {
  const char* descr;
  DataType dtype;
};
constexpr NpyType kTypes[] = {
    {"<f4", DataType::kFloat},   {"<f8", DataType::kDouble},  {"<f2", DataType::kFloat16},
    {"|i1", DataType::kInt8},    {"<i1", DataType::kInt8},    {"<i2", DataType::kInt16},
    {"<i4", DataType::kInt32},   {"<i8", DataType::kInt64},   {"|u1", DataType::kUint8},
    {"<u1", DataType::kUint8},   {"<u2", DataType::kUint16},  {"<u4", DataType::kUint32},
    {"<u8", DataType::kUint64},  {"|b1", DataType::kBool},
};

// Extracts the value text of 'key' from the header dict.
bool FindKey(const std::string& h, const std::string& key, std::string* value) {
  const size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) return false;
  size_t p = h.find(':', k);
  if (p == std::string::npos) return false;
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  if (p >= h.size()) return false;
  size_t end;
  if (h[p] == '\'') {
    end = h.find('\'', p + 1);
    if (end == std::string::npos) return false;
    *value = h.substr(p + 1, end - p - 1);
  } else if (h[p] == '(') {
    end = h.find(')', p);
    if (end == std::string::npos) return false;
    *value = h.substr(p + 1, end - p - 1);
  } else {
    end = h.find_first_of(",}", p);
    if (end == std::string::npos) return false;
    *value = h.substr(p, end - p);
  }
  return true;
}

}  // namespace

Result<Tensor> ParseNpy(const std::string& b, const std::string& where) {
  auto bad = [&](const std::string& why) {
    return Status::ParseError("'" + where + "' is not a valid .npy file: " + why);
  };
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) return bad("missing magic");
  const int major = static_cast<uint8_t>(b[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<uint8_t>(b[8]) | (static_cast<uint8_t>(b[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return bad("truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(b[8 + i])) << (8 * i);
    offset = 12;
  } else {
    return bad("unknown format version " + std::to_string(major));
  }
  if (header_len > b.size() - offset) return bad("truncated header");
  const std::string h = b.substr(offset, header_len);
  std::string descr, fortran, shape_text;
  if (!FindKey(h, "descr", &descr) || !FindKey(h, "fortran_order", &fortran) ||
      !FindKey(h, "shape", &shape_text)) {
    return bad("header lacks descr, fortran_order or shape");
  }
  if (fortran.find("True") != std::string::npos) {
    return Status::Unsupported("'" + where + "': Fortran-order arrays are not supported; save "
                               "with np.ascontiguousarray");
  }
  DataType dt = DataType::kUndefined;
  for (const auto& t : kTypes) {
    if (descr == t.descr) dt = t.dtype;
  }
  if (dt == DataType::kUndefined) {
    return Status::Unsupported("'" + where + "': numpy dtype '" + descr + "' is not supported");
  }
  std::vector<int64_t> shape;
  size_t p = 0;
  while (p < shape_text.size()) {
    while (p < shape_text.size() && (shape_text[p] == ' ' || shape_text[p] == ',')) ++p;
    if (p >= shape_text.size()) break;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(shape_text.c_str() + p, &end, 10);
    if (end == shape_text.c_str() + p || errno) return bad("bad shape '" + shape_text + "'");
    if (v < 0) return bad("negative dimension in shape '" + shape_text + "'");
    shape.push_back(v);
    p = static_cast<size_t>(end - shape_text.c_str());
  }
  auto n = CheckedNumElements(shape, int64_t{1} << 36);
  if (!n.ok()) return n.status().WithContext("'" + where + "'");
  const size_t need = static_cast<size_t>(*n) * DataTypeSize(dt);
  const size_t data_off = offset + header_len;
  if (b.size() - data_off != need) {
    return bad("shape (" + shape_text + ") of " + DataTypeName(dt) + " needs " +
               std::to_string(need) + " data bytes but the file has " +
               std::to_string(b.size() - data_off));
  }
  Tensor t(dt, shape);
  if (need) std::memcpy(t.raw(), b.data() + data_off, need);
  return t;
}

std::string SerializeNpy(const Tensor& t) {
  const char* descr = "<f4";
  for (const auto& k : kTypes) {
    if (k.dtype == t.dtype()) {
      descr = k.descr;
      break;
    }
  }
  std::string shape;  // numpy's tuple syntax: "()", "(3,)", "(2, 3)"
  for (size_t i = 0; i < t.shape().size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape()[i]);
  if (t.shape().size() == 1) shape += ",";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" +
                       shape + "), }";
  const size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(static_cast<const char*>(t.raw()), t.nbytes());
  return out;
}

Status WriteFileAtomic(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return Status::IoError("cannot write '" + tmp + "'");
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      return Status::IoError("writing '" + tmp + "' failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IoError("cannot rename '" + tmp + "' to '" + path + "'");
  }
  return Status::Ok();
}

Status WriteNpy(const std::string& path, const Tensor& t) {
  if (t.dtype() == DataType::kString || t.dtype() == DataType::kBfloat16) {
    return Status::Unsupported(std::string("cannot write ") + DataTypeName(t.dtype()) +
                               " tensors to .npy ('" + path + "')");
  }
  return WriteFileAtomic(path, SerializeNpy(t));
}

Result<std::string> ReadFileBytes(const std::string& path, int64_t max_bytes) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound("file '" + path + "' does not exist");
  if (!fs::is_regular_file(path, ec)) return Status::Invalid("'" + path + "' is not a regular file");
  const auto size = fs::file_size(path, ec);
  if (ec) return Status::IoError("cannot read '" + path + "'");
  if (static_cast<int64_t>(size) > max_bytes) {
    return Status::OutOfRange("'" + path + "' is larger than the limit of " +
                              std::to_string(max_bytes) + " bytes");
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::IoError("cannot open '" + path + "'");
  std::string bytes(size, '\0');
  f.read(bytes.data(), static_cast<std::streamsize>(size));
  if (!f) return Status::IoError("reading '" + path + "' failed");
  return bytes;
}

Result<Tensor> ReadNpy(const std::string& path) {
  SY_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  return ParseNpy(bytes, path);
}

Result<Tensor> ReadTensorFile(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".npy") return ReadNpy(path);
  if (ext == ".pb") return ReadTensorProtoFile(path);
  return Status::Invalid("'" + path + "': unknown tensor file format '" + ext +
                         "' (use .npy or an ONNX TensorProto .pb)");
}

}  // namespace switchyard
