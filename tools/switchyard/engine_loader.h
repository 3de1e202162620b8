// Shared by the verbs that take "ENGINE|MODEL": load an engine file, or import a model
// and build it in-process for a route; read --input NAME=FILE arguments; generate the
// inputs that were not given.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "passes/pass.h"
#include "reference/executor.h"
#include "runtime/session.h"
#include "switchyard/status.h"

namespace switchyard::cli {

struct EngineSource {
  std::shared_ptr<const LoadedEngine> engine;
  bool built = false;      // true when MODEL was built in-process
  BuildReport report;      // when built
  double build_seconds = 0;
};

Result<EngineSource> LoadOrBuild(const std::string& path, const std::string& route,
                                 const std::vector<std::string>& shapes);

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
