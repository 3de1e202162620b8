// Conversion between ONNX TensorProto and Tensor, including external data. Every size
// declared in the proto is checked against the bytes actually present before anything
// is allocated, and external data is confined to the model's folder.
#pragma once

#include <string>

#include "ir/tensor.h"
#include "switchyard/status.h"

namespace onnx {
class TensorProto;
}

namespace switchyard {

struct TensorProtoOptions {
  // Folder that external data locations are relative to and confined to. Empty: a
  // tensor with external data is refused.
  std::string base_dir;
  // Largest tensor accepted, in bytes.
  int64_t max_bytes = int64_t{16} << 30;
};

// `what` names the tensor in error messages ("initializer 'conv1.weight'").
Result<Tensor> TensorFromProto(const onnx::TensorProto& proto, const TensorProtoOptions& options,
                               const std::string& what);
void TensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* proto);

// Reads one serialized TensorProto file (.pb, as in the ONNX test data layout).
// Sets *name to the tensor's stored name (may be empty).
Result<Tensor> ReadTensorProtoFile(const std::string& path, std::string* name = nullptr);

// Resolves an external data `location` inside `base_dir`: refuses absolute paths, any
// ".." component and anything that resolves (through symlinks) outside the folder.
Result<std::string> ConfinedPath(const std::string& base_dir, const std::string& location);

}  // namespace switchyard
