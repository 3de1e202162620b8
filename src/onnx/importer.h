// ONNX → Graph. Parses with the ONNX protobuf classes (libonnx), converts initializers
// (external data confined to the model's folder), keeps symbolic dimensions, sorts the
// nodes topologically, resolves every op against the registry for the model's opset,
// infers types and shapes and runs the IR verifier. Every refusal names the file, the
// node or tensor and the reason.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "switchyard/status.h"

namespace switchyard {

struct ImportOptions {
  // Import graphs with ops that have no implementation (for `inspect`): their outputs
  // get unknown types and the ops are listed by UnsupportedOps().
  bool allow_unsupported = false;
  // Largest single tensor and largest model file accepted, in bytes.
  int64_t max_tensor_bytes = int64_t{16} << 30;
};

// Lowest and highest default-domain opset we claim.
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 21;

Result<Graph> ImportModel(const std::string& path, const ImportOptions& options = {});
// `where` names the source in messages; `base_dir` is where external data may live
// (empty: external data refused).
Result<Graph> ImportModelFromBytes(const std::string& bytes, const std::string& where,
                                   const std::string& base_dir,
                                   const ImportOptions& options = {});

struct UnsupportedOp {
  std::string domain, op_type;
  int64_t opset = 0;
  int count = 0;
};
// Ops of the graph that have no implementation at the graph's opset.
std::vector<UnsupportedOp> UnsupportedOps(const Graph& graph);

}  // namespace switchyard
