// Helpers of the end-to-end engine tests (engine_test.cc, engine_routes_test.cc): the
// test models' inputs, a route built for the host CPU, a run compared with the reference
// executor.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "build/builder.h"
#include "engine/engine.h"
#include "io/npy.h"
#include "reference/executor.h"
#include "runtime/session.h"
#include "tune/accuracy.h"

namespace switchyard::engine_test {
namespace fs = std::filesystem;

inline const std::string kModels = std::string(SY_SOURCE_DIR) + "/tests/models/";

inline TensorMap LoadInputs(const std::string& folder) {
  TensorMap m;
  for (const auto& e : fs::directory_iterator(folder)) {
    auto t = ReadNpy(e.path().string());
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (t.ok()) m[e.path().stem().string()] = *t;
  }
  return m;
}

struct Built {
  Engine engine;
  BuildReport report;
};

// cores > 0: the host CPU as if it had that many logical CPUs (the threads knob's range).
inline Result<Built> BuildRoute(const Graph& g, const std::string& route_text, const BuildOptions& opt = {},
                                int cores = 0) {
  Target target = Target::HostCpu();
  if (cores > 0) target.cores = cores;
  const RouteSpace space = RouteSpace::For(g, target);
  SY_ASSIGN_OR_RETURN(Route route, space.Parse(route_text));
  Built b;
  SY_ASSIGN_OR_RETURN(b.engine, BuildEngine(g, space, route, target, opt, &b.report));
  return b;
}

// Runs `engine` on `inputs` and compares every output with the reference executor.
inline void ExpectMatchesReference(const Graph& g, const Engine& engine, const TensorMap& inputs, double tol,
                            const std::string& what) {
  auto ref_exec = ReferenceExecutor::Create(g);
  ASSERT_TRUE(ref_exec.ok()) << ref_exec.status().ToString();
  auto ref = ref_exec->Run(inputs);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  auto loaded = LoadedEngine::Create(engine);
  ASSERT_TRUE(loaded.ok()) << what << ": " << loaded.status().ToString();
  Session session(*loaded);
  auto out = session.Run(inputs);
  ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
  for (const auto& [name, want] : *ref) {
    ASSERT_TRUE(out->count(name)) << what << ": missing output " << name;
    const double err = RelativeL2(out->at(name), want);
    EXPECT_LE(err, tol) << what << ": output " << name << " rel L2 " << err;
  }
}

// Build options fixing every input at the shape of its tensor in `inputs`.
inline BuildOptions FixedShapes(const TensorMap& inputs) {
  BuildOptions opt;
  for (const auto& [name, t] : inputs) {
    for (int64_t d : t.shape()) opt.shapes[name].push_back(DimRange{d, d, d});
  }
  return opt;
}

// Runs `engine` on `inputs` in one session (empty on a failure, which is reported).
inline TensorMap RunEngine(const Engine& engine, const TensorMap& inputs) {
  auto loaded = LoadedEngine::Create(engine);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return {};
  Session session(*loaded);
  auto out = session.Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : TensorMap{};
}

}  // namespace switchyard::engine_test
