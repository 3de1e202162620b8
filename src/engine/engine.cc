#include "engine/engine.h"

#include <cstring>
#include <fstream>
#include <set>
#include <utility>
#include <vector>

#include "io/npy.h"
#include "io/sha256.h"
#include "switchyard/version.h"

namespace switchyard {
namespace {

using json = nlohmann::json;
constexpr size_t kAlign = 64;
constexpr size_t kDigest = 32;

void PutU32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutU64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t GetU(const std::string& s, size_t off, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(s[off + i])) << (8 * i);
  return v;
}

const char* KindName(EngineTensor::Kind k) {
  switch (k) {
    case EngineTensor::Kind::kInput: return "input";
    case EngineTensor::Kind::kOutput: return "output";
    case EngineTensor::Kind::kConstant: return "constant";
    default: return "intermediate";
  }
}

std::string RawDigest(const std::string& bytes, size_t n) { return Sha256Raw(bytes.data(), n); }

}  // namespace

std::string SerializeEngine(const Engine& e) {
  json j;
  const EngineHeader& h = e.header;
  j["header"] = {{"format_version", h.format_version}, {"tool_version", h.tool_version},
                 {"tool_commit", h.tool_commit},       {"model_sha256", h.model_sha256},
                 {"route", h.route},                   {"target", h.target},
                 {"target_fingerprint", h.target_fingerprint},
                 {"required_features", h.required_features}, {"threads", h.threads}};
  if (h.target == "cuda") j["header"]["cuda_graphs"] = h.cuda_graphs;
  j["arena_bytes"] = e.arena_bytes;
  json tensors = json::array();
  for (const EngineTensor& t : e.tensors) {
    tensors.push_back({{"name", t.name}, {"dtype", static_cast<int>(t.dtype)}, {"shape", t.shape},
                       {"layout", t.layout}, {"kind", KindName(t.kind)}, {"constant", t.constant},
                       {"offset", t.offset}, {"bytes", t.bytes}, {"is_output", t.is_output}});
  }
  j["tensors"] = std::move(tensors);
  json steps = json::array();
  for (const EngineStep& s : e.steps) {
    steps.push_back({{"name", s.name}, {"op_type", s.op_type}, {"domain", s.domain},
                     {"since_version", s.since_version},
                     {"provider", s.provider}, {"variant", s.variant}, {"attrs", s.attrs},
                     {"params", s.params}, {"inputs", s.inputs}, {"outputs", s.outputs},
                     {"packed", s.packed}, {"input_shapes", s.input_shapes},
                     {"output_shapes", s.output_shapes}, {"input_dtypes", s.input_dtypes},
                     {"output_dtypes", s.output_dtypes}});
  }
  j["steps"] = std::move(steps);
  j["inputs"] = e.inputs;
  j["outputs"] = e.outputs;
  json ranges = json::array();
  for (const auto& dims : e.input_ranges) {
    json r = json::array();
    for (const DimRange& d : dims) r.push_back({d.min, d.opt, d.max});
    ranges.push_back(std::move(r));
  }
  j["input_ranges"] = std::move(ranges);
  // Constants: descriptors in the JSON, bytes in the blob section, each 64-byte aligned.
  json consts = json::array();
  uint64_t blob_off = 0;
  for (const Tensor& c : e.constants) {
    consts.push_back({{"dtype", static_cast<int>(c.dtype())}, {"shape", c.shape()},
                      {"offset", blob_off}, {"bytes", c.nbytes()}});
    blob_off += (c.nbytes() + kAlign - 1) / kAlign * kAlign;
  }
  j["constants"] = std::move(consts);
  const std::string text = j.dump();

  std::string out(kEngineMagic, 8);
  PutU32(out, kEngineFormatVersion);
  PutU64(out, text.size());
  out += text;
  out.append((kAlign - out.size() % kAlign) % kAlign, '\0');
  const size_t blob_start = out.size();
  out.reserve(blob_start + blob_off + kDigest);
  for (const Tensor& c : e.constants) {
    out.append(static_cast<const char*>(c.raw()), c.nbytes());
    out.append((kAlign - (out.size() - blob_start) % kAlign) % kAlign, '\0');
  }
  out += RawDigest(out, out.size());
  return out;
}

namespace {

// Where a floating-point number may appear in an engine's JSON plan: only as the value of
// a float attribute ({"f": x} or {"floats": [...]}). Everything else the builder writes is
// an integer, a string or a bool (provider params carry floats as their bit patterns), and
// reading a float such as 1e70 as an integer would be undefined behaviour. An explicit
// stack, not recursion: a hostile plan may nest arrays a million deep.
bool FloatsOnlyInFloatAttrs(const json& root) {
  std::vector<std::pair<const json*, bool>> pending = {{&root, false}};  // value, float allowed
  while (!pending.empty()) {
    const auto [j, float_ok] = pending.back();
    pending.pop_back();
    if (j->is_number_float()) {
      if (!float_ok) return false;
    } else if (j->is_array()) {
      for (const json& x : *j) pending.emplace_back(&x, float_ok);
    } else if (j->is_object()) {
      for (const auto& [k, x] : j->items()) pending.emplace_back(&x, k == "f" || k == "floats");
    }
  }
  return true;
}

}  // namespace

Result<Engine> DeserializeEngine(const std::string& b, const std::string& where,
                                 const EngineLoadOptions& options) {
  auto bad = [&](const std::string& why) {
    return Status::ParseError("'" + where + "' is not a valid Switchyard engine: " + why);
  };
  if (b.size() < 8 + 4 + 8 + kDigest || std::memcmp(b.data(), kEngineMagic, 8) != 0) {
    return bad("missing engine magic (is this a model? build it first)");
  }
  // Checksum before anything inside is trusted.
  const size_t body = b.size() - kDigest;
  if (RawDigest(b, body) != b.substr(body)) {
    return bad("checksum mismatch (the file is corrupt or truncated)");
  }
  const uint32_t version = static_cast<uint32_t>(GetU(b, 8, 4));
  if (version != kEngineFormatVersion) {
    return Status::FailedPrecondition("'" + where + "' has engine format version " +
                                      std::to_string(version) + "; this tool reads version " +
                                      std::to_string(kEngineFormatVersion) + " (rebuild it)");
  }
  const uint64_t text_len = GetU(b, 12, 8);
  if (text_len > body - 20) return bad("header length out of range");
  const json j = json::parse(b.begin() + 20, b.begin() + 20 + static_cast<std::ptrdiff_t>(text_len),
                             nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad("header is not valid JSON");
  if (!FloatsOnlyInFloatAttrs(j)) return bad("a floating-point number where an integer belongs");
  size_t blob_start = 20 + text_len;
  blob_start += (kAlign - blob_start % kAlign) % kAlign;

  Engine e;
  try {
    const json& h = j.at("header");
    e.header.format_version = h.at("format_version").get<uint32_t>();
    e.header.tool_version = h.at("tool_version").get<std::string>();
    e.header.tool_commit = h.at("tool_commit").get<std::string>();
    e.header.model_sha256 = h.at("model_sha256").get<std::string>();
    e.header.route = h.at("route").get<std::string>();
    e.header.target = h.at("target").get<std::string>();
    e.header.target_fingerprint = h.at("target_fingerprint").get<std::string>();
    e.header.required_features = h.at("required_features").get<std::vector<std::string>>();
    e.header.threads = h.at("threads").get<int>();
    e.header.cuda_graphs = h.value("cuda_graphs", false);
    e.arena_bytes = j.at("arena_bytes").get<int64_t>();
    if (e.arena_bytes < 0 || e.arena_bytes > (int64_t{1} << 40)) return bad("arena size out of range");
    for (const json& c : j.at("constants")) {
      const int dt = c.at("dtype").get<int>();
      if (!IsKnownDataType(dt) || dt == static_cast<int>(DataType::kString)) return bad("constant dtype");
      std::vector<int64_t> shape = c.at("shape").get<std::vector<int64_t>>();
      auto n = CheckedNumElements(shape);
      if (!n.ok()) return bad("constant shape: " + n.status().message());
      const uint64_t off = c.at("offset").get<uint64_t>();
      const uint64_t bytes = c.at("bytes").get<uint64_t>();
      if (bytes != static_cast<uint64_t>(*n) * DataTypeSize(static_cast<DataType>(dt)) ||
          off > body || bytes > body - blob_start || blob_start + off > body - bytes) {
        return bad("constant data out of range");
      }
      Tensor t(static_cast<DataType>(dt), shape);
      if (bytes) std::memcpy(t.raw(), b.data() + blob_start + off, bytes);
      e.constants.push_back(std::move(t));
    }
    const int nconst = static_cast<int>(e.constants.size());
    for (const json& t : j.at("tensors")) {
      EngineTensor et;
      et.name = t.at("name").get<std::string>();
      const int dt = t.at("dtype").get<int>();
      if (!IsKnownDataType(dt)) return bad("tensor '" + et.name + "' dtype");
      et.dtype = static_cast<DataType>(dt);
      et.shape = t.at("shape").get<std::vector<int64_t>>();
      et.layout = t.at("layout").get<std::string>();
      const std::string kind = t.at("kind").get<std::string>();
      et.kind = kind == "input"      ? EngineTensor::Kind::kInput
                : kind == "output"   ? EngineTensor::Kind::kOutput
                : kind == "constant" ? EngineTensor::Kind::kConstant
                                     : EngineTensor::Kind::kIntermediate;
      et.constant = t.at("constant").get<int>();
      et.offset = t.at("offset").get<int64_t>();
      et.bytes = t.at("bytes").get<int64_t>();
      et.is_output = t.at("is_output").get<bool>();
      if (et.kind == EngineTensor::Kind::kConstant && (et.constant < 0 || et.constant >= nconst)) {
        return bad("tensor '" + et.name + "' names a missing constant");
      }
      if (et.offset >= 0 && (et.bytes < 0 || et.offset > e.arena_bytes || et.bytes > e.arena_bytes - et.offset)) {
        return bad("tensor '" + et.name + "' lies outside the arena");
      }
      e.tensors.push_back(std::move(et));
    }
    const int ntensors = static_cast<int>(e.tensors.size());
    auto check_ids = [&](const std::vector<int>& ids, bool allow_missing) {
      for (int id : ids) {
        if ((id < 0 && !(allow_missing && id == -1)) || id >= ntensors) return false;
      }
      return true;
    };
    for (const json& s : j.at("steps")) {
      EngineStep st;
      st.name = s.at("name").get<std::string>();
      st.op_type = s.at("op_type").get<std::string>();
      st.domain = s.at("domain").get<std::string>();
      st.since_version = s.at("since_version").get<int>();
      st.provider = s.at("provider").get<std::string>();
      st.variant = s.at("variant").get<std::string>();
      st.attrs = s.at("attrs");
      st.params = s.at("params");
      st.inputs = s.at("inputs").get<std::vector<int>>();
      st.outputs = s.at("outputs").get<std::vector<int>>();
      st.packed = s.at("packed").get<std::vector<int>>();
      st.input_shapes = s.at("input_shapes").get<std::vector<std::vector<int64_t>>>();
      st.output_shapes = s.at("output_shapes").get<std::vector<std::vector<int64_t>>>();
      st.input_dtypes = s.at("input_dtypes").get<std::vector<int>>();
      st.output_dtypes = s.at("output_dtypes").get<std::vector<int>>();
      if (st.input_shapes.size() != st.inputs.size() || st.input_dtypes.size() != st.inputs.size() ||
          st.output_shapes.size() != st.outputs.size() || st.output_dtypes.size() != st.outputs.size()) {
        return bad("step '" + st.name + "' has inconsistent input/output descriptions");
      }
      for (int d : st.input_dtypes) if (d != 0 && !IsKnownDataType(d)) return bad("step '" + st.name + "' dtype");
      for (int d : st.output_dtypes) if (d != 0 && !IsKnownDataType(d)) return bad("step '" + st.name + "' dtype");
      if (!check_ids(st.inputs, true) || !check_ids(st.outputs, true)) {
        return bad("step '" + st.name + "' names a missing tensor");
      }
      for (int p : st.packed) {
        if (p < 0 || p >= nconst) return bad("step '" + st.name + "' names a missing constant");
      }
      e.steps.push_back(std::move(st));
    }
    e.inputs = j.at("inputs").get<std::vector<int>>();
    e.outputs = j.at("outputs").get<std::vector<int>>();
    if (!check_ids(e.inputs, false) || !check_ids(e.outputs, false)) return bad("bad input/output ids");
    for (const json& r : j.at("input_ranges")) {
      std::vector<DimRange> dims;
      for (const json& d : r) dims.push_back({d.at(0).get<int64_t>(), d.at(1).get<int64_t>(), d.at(2).get<int64_t>()});
      e.input_ranges.push_back(std::move(dims));
    }
    if (e.input_ranges.size() != e.inputs.size()) return bad("input ranges do not match inputs");
  } catch (const json::exception& ex) {
    return bad(std::string("malformed header: ") + ex.what());
  }
  if (options.check_tool_version && e.header.tool_version != SWITCHYARD_VERSION) {
    return Status::FailedPrecondition("'" + where + "' was built by switchyard " +
                                      e.header.tool_version + "; this is " + SWITCHYARD_VERSION +
                                      " (rebuild the engine)");
  }
  if (options.check_target && e.header.target == "cuda") {
    // A CUDA engine's kernels are compiled for one compute capability: refuse another GPU.
    // Without a GPU the engine can still be inspected; running it fails in the runtime.
    auto t = Target::ForName("cuda");
    if (!t.ok()) return t.status().WithContext("'" + where + "'");
    if (t->gpu.present && t->Fingerprint() != e.header.target_fingerprint) {
      return Status::FailedPrecondition("'" + where + "' was built for " + e.header.target_fingerprint +
                                        "; this GPU (" + t->gpu.name + ") is " + t->Fingerprint() +
                                        " (rebuild the engine for it)");
    }
  } else if (options.check_target) {
    if (e.header.target != "cpu") {
      return Status::FailedPrecondition("'" + where + "' targets '" + e.header.target +
                                        "'; this runtime runs cpu engines");
    }
    const auto have = Target::HostCpu().features.Names();
    const std::set<std::string> host(have.begin(), have.end());
    for (const std::string& f : e.header.required_features) {
      if (!host.count(f)) {
        return Status::FailedPrecondition("'" + where + "' needs CPU feature " + f +
                                          ", which this CPU lacks (built for " +
                                          e.header.target_fingerprint + ")");
      }
    }
  }
  return e;
}

Status WriteEngine(const std::string& path, const Engine& engine) {
  return WriteFileAtomic(path, SerializeEngine(engine));
}

Result<Engine> ReadEngine(const std::string& path, const EngineLoadOptions& options) {
  SY_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  return DeserializeEngine(bytes, path, options);
}

bool LooksLikeEngine(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char m[8] = {};
  f.read(m, 8);
  return f.gcount() == 8 && std::memcmp(m, kEngineMagic, 8) == 0;
}

}  // namespace switchyard
