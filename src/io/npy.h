// NumPy .npy files (format versions 1.0-3.0, C order, little-endian) <-> Tensor, and
// tensor files by extension (.npy, or .pb holding an ONNX TensorProto). Readers check
// the header against the bytes present before allocating; errors name the file.
#pragma once

#include <string>

#include "ir/tensor.h"
#include "switchyard/status.h"

namespace switchyard {

Result<Tensor> ReadNpy(const std::string& path);
Result<Tensor> ParseNpy(const std::string& bytes, const std::string& where);
// Writes to a temporary name and renames, so a crash never leaves half a file.
Status WriteNpy(const std::string& path, const Tensor& t);
std::string SerializeNpy(const Tensor& t);

// .npy or .pb (ONNX TensorProto), chosen by extension.
Result<Tensor> ReadTensorFile(const std::string& path);

// Writes `bytes` to `path` atomically (temporary file in the same folder + rename).
Status WriteFileAtomic(const std::string& path, const std::string& bytes);
Result<std::string> ReadFileBytes(const std::string& path, int64_t max_bytes = int64_t{1} << 34);

}  // namespace switchyard
