// The engine: a serialized, self-describing build plan. Header (format version, tool
// version and commit, model sha256, canonical route, target fingerprint and the CPU
// features the kernels need, input shape profile), then the steps in execution order
// (provider, variant, op and attributes, params, tensor slots), the tensor slots with
// their memory-plan offsets, and the constants (pre-packed weights). The file ends in a
// SHA-256 checksum of everything before it. Byte-identical for the same model, route,
// target and tool version. Format: docs/engine-format.md.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "build/target.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "switchyard/status.h"

namespace switchyard {

inline constexpr uint32_t kEngineFormatVersion = 1;
inline constexpr char kEngineMagic[8] = {'S', 'Y', 'E', 'N', 'G', 'I', 'N', 'E'};

// The accepted range of one input dimension (min == opt == max for a fixed size).
struct DimRange {
  int64_t min = 0, opt = 0, max = 0;
  bool operator==(const DimRange& o) const { return min == o.min && opt == o.opt && max == o.max; }
};

struct EngineHeader {
  uint32_t format_version = kEngineFormatVersion;
  std::string tool_version, tool_commit;
  std::string model_sha256;
  std::string route;  // canonical
  std::string target; // "cpu" / "cuda"
  std::string target_fingerprint;
  std::vector<std::string> required_features;  // CPU features (cpu) or GPU arch (cuda: "sm_90")
  int threads = 1;
  bool cuda_graphs = false;  // cuda: replay the engine as one CUDA graph (knob cuda.graphs)
};

struct EngineTensor {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;  // at the profile's max (-1 where unbounded)
  std::string layout;          // "" plain, else a blocked oneDNN layout tag
  enum class Kind { kIntermediate, kInput, kOutput, kConstant } kind = Kind::kIntermediate;
  int constant = -1;        // index into constants when kind == kConstant
  int64_t offset = -1;      // arena offset (-1: not planned, heap-allocated per run)
  int64_t bytes = 0;        // planned bytes
  bool is_output = false;   // also a graph output (may be kIntermediate-planned)
};

struct EngineStep {
  std::string name, op_type, domain;
  int since_version = 0;  // the op version resolved for the model's opset
  std::string provider, variant;
  nlohmann::json attrs = nlohmann::json::object();   // node attributes (see attr codec)
  nlohmann::json params = nlohmann::json::object();  // provider-specific
  std::vector<int> inputs, outputs;  // tensor indices, -1 for omitted
  std::vector<int> packed;           // constant indices of pre-packed tensors
  // Build-time view of every input and output (also of inputs whose constant the
  // kernel consumed into `packed`): static shapes with -1 for dynamic dims, dtypes.
  std::vector<std::vector<int64_t>> input_shapes, output_shapes;
  std::vector<int> input_dtypes, output_dtypes;
};

struct Engine {
  EngineHeader header;
  std::vector<EngineTensor> tensors;
  std::vector<EngineStep> steps;
  std::vector<Tensor> constants;
  std::vector<int> inputs, outputs;  // tensor indices, in graph order
  std::vector<std::vector<DimRange>> input_ranges;  // per input, per dim
  int64_t arena_bytes = 0;
};

// Serializes to the on-disk format (deterministic).
std::string SerializeEngine(const Engine& engine);
// Parses and verifies (magic, checksum, format version, tool version, target features of
// the host) before following any offset. `where` names the source in errors.
struct EngineLoadOptions {
  bool check_tool_version = true;
  bool check_target = true;
};
Result<Engine> DeserializeEngine(const std::string& bytes, const std::string& where,
                                 const EngineLoadOptions& options = {});
Status WriteEngine(const std::string& path, const Engine& engine);  // atomic
Result<Engine> ReadEngine(const std::string& path, const EngineLoadOptions& options = {});
// True when the bytes start with the engine magic (to tell engines from models).
bool LooksLikeEngine(const std::string& path);

// Attribute codec used for EngineStep::attrs. Tensor attributes (ConstantOfShape's value,
// ...) are appended to `constants` and referenced by index; graph attributes are refused.
Result<nlohmann::json> AttrsToJson(const Node& node, std::vector<Tensor>* constants);
Result<Node> NodeFromStep(const EngineStep& step, const std::vector<Tensor>& constants);

}  // namespace switchyard
