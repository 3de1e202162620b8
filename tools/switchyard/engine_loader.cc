#include "engine_loader.h"

#include <chrono>
#include <filesystem>

#include "build/builder.h"
#include "io/npy.h"
#include "io/sha256.h"
#include "onnx/importer.h"
#include "tune/input_gen.h"

namespace switchyard::cli {
namespace fs = std::filesystem;

std::string SanitizeFileName(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (s.empty() || s == "." || s == "..") s = "_" + s;
  return s;
}

Result<Target> TargetFromFlag(const std::string& name) {
  auto t = Target::ForName(name.empty() ? "cpu" : name);
  if (!t.ok()) return t.status().WithContext("--target");
  return t;
}

Result<Target> EngineTarget(const Engine& e, const std::string& flag, const std::string& what) {
  const std::string own = e.header.target.empty() ? "cpu" : e.header.target;
  if (!flag.empty() && flag != own) {
    return Status::Invalid("--target '" + flag + "' conflicts with " + what + ", built for target '" + own +
                           "' (an engine runs on the target it was built for; drop --target)");
  }
  auto t = Target::ForName(own);
  if (!t.ok()) return t.status().WithContext(what + " (built for target '" + own + "')");
  return t;
}

Status RequireDevice(const Target& target) {
  if (!target.IsCuda() || target.gpu.present) return Status::Ok();
  return Status::Unsupported("target 'cuda': no usable GPU" +
                             (target.gpu.error.empty() ? std::string() : " (" + target.gpu.error + ")") +
                             "; engines for it can be built (`switchyard build --target cuda`) but not run here");
}

Result<EngineSource> LoadOrBuild(const std::string& path, const std::string& route_text,
                                 const std::vector<std::string>& shapes, const std::string& target_flag) {
  EngineSource src;
  if (LooksLikeEngine(path)) {
    if (!route_text.empty() || !shapes.empty()) {
      return Status::Invalid("'" + path + "' is an engine: its route and shapes are fixed; "
                             "--route and --shapes apply to models");
    }
    SY_ASSIGN_OR_RETURN(Engine e, ReadEngine(path));
    SY_ASSIGN_OR_RETURN(src.target, EngineTarget(e, target_flag, "engine '" + path + "'"));
    SY_RETURN_IF_ERROR(RequireDevice(src.target));
    SY_ASSIGN_OR_RETURN(src.engine, LoadedEngine::Create(std::move(e)));
    return src;
  }
  SY_ASSIGN_OR_RETURN(src.target, TargetFromFlag(target_flag));
  SY_RETURN_IF_ERROR(RequireDevice(src.target));
  SY_ASSIGN_OR_RETURN(Graph g, ImportModel(path));
  BuildOptions opt;
  SY_ASSIGN_OR_RETURN(opt.model_sha256, Sha256File(path));
  for (const std::string& s : shapes) SY_RETURN_IF_ERROR(ParseShapeArg(s, &opt.shapes));
  const Target& target = src.target;
  const RouteSpace space = RouteSpace::For(g, target);
  SY_ASSIGN_OR_RETURN(Route route, space.Parse(route_text));
  const auto t0 = std::chrono::steady_clock::now();
  SY_ASSIGN_OR_RETURN(Engine e, BuildEngine(std::move(g), space, route, target, opt, &src.report));
  src.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  src.report.build_seconds = src.build_seconds;
  SY_ASSIGN_OR_RETURN(src.engine, LoadedEngine::Create(std::move(e)));
  src.built = true;
  return src;
}

Result<TensorMap> LoadInputArgs(const std::vector<std::string>& names,
                                const std::vector<std::string>& args) {
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  std::string all;
  for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
  TensorMap inputs;
  for (const std::string& a : args) {
    std::string name, file;
    const size_t eq = a.find('=');
    if (eq != std::string::npos && has(a.substr(0, eq))) {
      name = a.substr(0, eq);
      file = a.substr(eq + 1);
    } else if (eq != std::string::npos && !fs::exists(a)) {
      return Status::NotFound("--input " + a + ": the model has no input named '" + a.substr(0, eq) +
                              "'; its inputs are: " + all);
    } else {
      if (names.size() != 1) {
        return Status::Invalid("--input " + a + ": the model has " + std::to_string(names.size()) +
                               " inputs; name each as --input NAME=FILE");
      }
      name = names[0];
      file = a;
    }
    if (inputs.count(name)) return Status::Invalid("--input: '" + name + "' is given twice");
    auto t = ReadTensorFile(file);
    if (!t.ok()) return t.status().WithContext("--input " + name);
    inputs[name] = std::move(*t);
  }
  return inputs;
}

Result<TensorMap> EngineInputs(const Engine& e, const std::vector<std::string>& args, uint64_t seed) {
  std::vector<std::string> names;
  for (int t : e.inputs) names.push_back(e.tensors[static_cast<size_t>(t)].name);
  SY_ASSIGN_OR_RETURN(TensorMap given, LoadInputArgs(names, args));
  std::vector<InputDecl> decls;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const EngineTensor& et = e.tensors[static_cast<size_t>(e.inputs[i])];
    if (given.count(et.name)) continue;
    InputDecl d;
    d.name = et.name;
    d.dtype = et.dtype;
    for (const DimRange& r : e.input_ranges[i]) d.shape.push_back(r.opt >= 0 ? r.opt : std::max<int64_t>(r.min, 1));
    if (!IsFloatType(et.dtype)) d.high = 2;  // ids/masks: 0 or 1 stay valid for any vocabulary
    decls.push_back(std::move(d));
  }
  SY_ASSIGN_OR_RETURN(TensorMap gen, GenerateInputs(decls, seed));
  for (auto& [k, v] : gen) given[k] = std::move(v);
  return given;
}

}  // namespace switchyard::cli
