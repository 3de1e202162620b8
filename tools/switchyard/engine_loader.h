// Shared by the verbs that take "ENGINE|MODEL": load an engine file, or import a model
// and build it in-process for a route; read --input NAME=FILE arguments; generate the
// inputs that were not given.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "build/target.h"
#include "passes/pass.h"
#include "reference/executor.h"
#include "runtime/session.h"
#include "switchyard/status.h"

namespace switchyard::cli {

struct EngineSource {
  std::shared_ptr<const LoadedEngine> engine;
  Target target;           // what the model was built for, or the engine's header target
  bool built = false;      // true when MODEL was built in-process
  BuildReport report;      // when built
  double build_seconds = 0;
};

// `target`: the --target flag ("" = not given). A model is built for it (cpu when not
// given); an engine runs on the target its header names, and a given --target that
// differs is an error naming both.
Result<EngineSource> LoadOrBuild(const std::string& path, const std::string& route,
                                 const std::vector<std::string>& shapes, const std::string& target = "");

// The target named by --target ("" = not given: cpu). Errors (unknown name, a build
// without CUDA) name the valid targets, with "--target" as context.
Result<Target> TargetFromFlag(const std::string& name);

// The target an engine runs on: its header's ("" in old engines: cpu). `flag` is --target
// ("" = not given); a different one is an error naming both. `what` names the engine.
Result<Target> EngineTarget(const Engine& e, const std::string& flag, const std::string& what);

// Verbs that run engines need the device: a cuda target without a usable GPU is an error
// (building and listing routes do not need one).
Status RequireDevice(const Target& target);

// Resolves "--input" arguments against input names: NAME=FILE, or a lone FILE when
// there is exactly one input. A FILE may itself contain '='.
Result<TensorMap> LoadInputArgs(const std::vector<std::string>& names,
                                const std::vector<std::string>& args);

// Inputs of an engine: those given, plus seeded random ones for the rest (at the
// profile's opt sizes; dynamic dims without a range default to 1).
Result<TensorMap> EngineInputs(const Engine& e, const std::vector<std::string>& args, uint64_t seed);

// Output file name: every character outside [A-Za-z0-9._-] becomes '_'.
std::string SanitizeFileName(const std::string& name);

}  // namespace switchyard::cli
