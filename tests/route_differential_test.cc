// Randomized differential test of the builder's routes: small random nets built under many
// routes must each match the reference executor. The generators: random_convnet.h (convs,
// activations, BatchNorm, broadcasting Add/Mul/Sub with constant, residual and non-constant
// operands, pooling, Concat, a classifier head) and random_ocrnet.h (the ops of text
// detection and recognition nets: Resize, ConvTranspose, HardSwish, FPN merges, sequence
// tails). Bugs of this kind come from interactions (a layout with a broadcast operand, a
// fusion with a second output, the batch split with a per-channel input) that the per-op
// tests do not combine. Deterministic: fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "build/builder.h"
#include "engine/batch_split.h"
#include "passes_test_util.h"
#include "random_convnet.h"
#include "random_ocrnet.h"
#include "runtime/session.h"

namespace switchyard::testing {
namespace {

// The routes: layouts, the batch split (2 threads: it only fires on engines of at most 2),
// conv kernels and every fusion turned off. A route naming a knob absent from a graph's
// space (no conv: no layout knob) is skipped for that graph.
const std::vector<std::string>& Routes() {
  static const std::vector<std::string> k = {
      "",
      "layout.activations=nchw",
      "layout.activations=nhwc",
      "layout.activations=blocked",
      "threads=2 schedule.batch_split=auto",
      "threads=2 schedule.batch_split=auto layout.activations=nhwc",
      "threads=2 schedule.batch_split=auto layout.activations=nchw",
      "threads=2 schedule.batch_split=auto layout.activations=blocked",
      "threads=2 schedule.batch_split=off",
      "kernel.conv=direct",
      "kernel.conv=native",
      "kernel.conv=winograd",
      "kernel.conv=im2col_gemm",
      "fuse.conv_bn=off",
      "fuse.conv_act=off",
      "fuse.conv_scale=off",
      "fuse.conv_pool=off",
      "fuse.gemm_epilogue=off",
      "fuse.elementwise=off",
      "fuse.conv_act=off fuse.elementwise=off fuse.conv_bn=off layout.activations=nchw",
      "threads=1",
      "memory.plan=linear_scan",
      "memory.plan=none threads=2 schedule.batch_split=auto",
  };
  return k;
}

// The text-detection/recognition-shaped nets: the routes above less the layout route that
// is the CPU default (nhwc) and those that turn the batch split on or off (no tensor of
// these nets reaches its 8 MiB: they would build the engines of other routes again, on a
// 2-core machine the default route's); memory.plan=none on its own instead; then the knobs
// the sequence tails bring (MatMul: kernel.gemm; fuse.layernorm, fuse.attention,
// fuse.gelu) and ConvTranspose + BatchNorm + Relu unfused on one thread (nhwc: the native
// nhwc_gemm kernel).
const std::vector<std::string>& OcrRoutes() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> v;
    for (const std::string& r : Routes()) {
      if (r.find("schedule.batch_split") == std::string::npos && r != "layout.activations=nhwc") v.push_back(r);
    }
    v.insert(v.end(), {"memory.plan=none", "kernel.gemm=openblas", "kernel.gemm=native", "fuse.layernorm=off",
                       "fuse.attention=off", "fuse.gelu=off", "fuse.conv_bn=off fuse.conv_act=off threads=1"});
    return v;
  }();
  return k;
}

double Tolerance(const std::string& route) {
  return route.find("kernel.conv=winograd") != std::string::npos ? 2e-3 : 1e-4;
}

// Whether every "key=value" of `text` names a knob of `space` with an allowed value
// (threads=2 needs two cores on the target).
bool RouteApplies(const RouteSpace& space, const std::string& text) {
  std::istringstream in(text);
  std::string kv;
  while (in >> kv) {
    const size_t eq = kv.find('=');
    const Knob* knob = space.Find(kv.substr(0, eq));
    if (!knob) return false;
    const auto& vals = knob->allowed_values;
    if (std::find(vals.begin(), vals.end(), kv.substr(eq + 1)) == vals.end()) return false;
  }
  return true;
}

struct Tally {
  int graphs = 0, builds = 0, skipped = 0, large_segments = 0, failures = 0;
};

// Builds `c` under every route and compares each output with the reference executor's;
// returns the failures, one line each.
std::vector<std::string> CheckCase(const NetCase& c, const std::vector<std::string>& routes, bool large,
                                   Tally& tally) {
  std::vector<std::string> failures;
  auto ref_exec = ReferenceExecutor::Create(c.graph);
  if (!ref_exec.ok()) return {"reference executor: " + ref_exec.status().ToString()};
  auto ref = ref_exec->Run(c.inputs);
  if (!ref.ok()) return {"reference run: " + ref.status().ToString()};
  const Target target = Target::HostCpu();
  const RouteSpace space = RouteSpace::For(c.graph, target);
  ++tally.graphs;
  for (const std::string& text : routes) {
    if (!RouteApplies(space, text)) {
      ++tally.skipped;
      continue;
    }
    const std::string where = "route '" + text + "': ";
    auto route = space.Parse(text);
    if (!route.ok()) {
      if (route.status().ToString().find("impossible route") != std::string::npos) {
        ++tally.skipped;
        continue;
      }
      failures.push_back(where + "parse: " + route.status().ToString());
      continue;
    }
    BuildReport report;
    auto engine = BuildEngine(c.graph, space, *route, target, {}, &report);
    if (!engine.ok()) {
      if (engine.status().ToString().find("impossible route") != std::string::npos) {
        ++tally.skipped;
        continue;
      }
      failures.push_back(where + "build: " + engine.status().ToString());
      continue;
    }
    ++tally.builds;
    if (large) {
      auto segs = ReadBatchSegments(*engine);
      if (segs.ok() && !segs->empty()) ++tally.large_segments;
    }
    auto loaded = LoadedEngine::Create(*engine);
    if (!loaded.ok()) {
      failures.push_back(where + "load: " + loaded.status().ToString());
      continue;
    }
    Session session(*loaded);
    auto out = session.Run(c.inputs);
    if (!out.ok()) {
      failures.push_back(where + "run: " + out.status().ToString());
      continue;
    }
    for (const auto& [name, want] : *ref) {
      auto it = out->find(name);
      if (it == out->end()) {
        failures.push_back(where + "output " + name + " missing");
        continue;
      }
      if (it->second.shape() != want.shape()) {
        failures.push_back(where + "output " + name + " has shape " + ShapeStr(it->second.shape()) + ", want " +
                           ShapeStr(want.shape()));
        continue;
      }
      const double err = RelL2(it->second, want);
      if (!(err <= Tolerance(text))) {
        std::ostringstream msg;
        msg << where << "output " << name << " rel L2 " << err << " > " << Tolerance(text);
        failures.push_back(msg.str());
      }
    }
  }
  return failures;
}

// The generators: Draw's small and large conv nets, DrawOcr's text-detection and
// recognition-shaped nets.
enum class Family { kSmall, kLarge, kOcr };

NetCase MakeCase(uint32_t seed, Family family) {
  if (family == Family::kOcr) {
    const GraphSpec spec = DrawOcr(seed);
    return OcrMaterializer(spec).Run();
  }
  const GraphSpec spec = Draw(seed, family == Family::kLarge);
  return Materializer(spec).Run();
}

// `announce`: each graph's layers go to stderr before its routes run (a crash leaves them).
void RunSeeds(const std::vector<uint32_t>& seeds, Family family, Tally& tally, bool announce = false) {
  const bool large = family == Family::kLarge;
  for (uint32_t seed : seeds) {
    const NetCase c = MakeCase(seed, family);
    if (announce) {
      std::fprintf(stderr, "seed %u layers:\n", seed);
      for (const std::string& l : c.layers) std::fprintf(stderr, "    %s\n", l.c_str());
      std::fflush(stderr);
    }
    const std::vector<std::string> failures =
        CheckCase(c, family == Family::kOcr ? OcrRoutes() : Routes(), large, tally);
    if (failures.empty()) continue;
    tally.failures += static_cast<int>(failures.size());
    std::string msg = "seed " + std::to_string(seed) + (large ? " (large)" : "") +
                      (family == Family::kOcr ? " (ocr)" : "") + ": " + std::to_string(failures.size()) +
                      " failure(s)\n";
    for (const std::string& f : failures) msg += "  " + f + "\n";
    msg += "  layers:\n";
    for (const std::string& l : c.layers) msg += "    " + l + "\n";
    ADD_FAILURE() << msg;
  }
}

// Runs the seeds and prints one summary line, `label` first.
Tally RunAndReport(const char* label, const std::vector<uint32_t>& seeds, Family family) {
  const auto start = std::chrono::steady_clock::now();
  Tally tally;
  RunSeeds(seeds, family, tally);
  std::printf("[differential] %s: %d graphs, %d engines built and compared, %d with a batch segment, %d routes "
              "skipped, %d failures, %.1f s\n",
              label, tally.graphs, tally.builds, tally.large_segments, tally.skipped, tally.failures,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return tally;
}

std::vector<uint32_t> SeedRange(uint32_t first, uint32_t count) {
  std::vector<uint32_t> v;
  for (uint32_t s = first; s < first + count; ++s) v.push_back(s);
  return v;
}

// Small graphs (batch 1-4, 5..20 pixels a side): every layer kind and route, quickly.
TEST(RouteDifferential, SmallRandomConvNetsMatchTheReferenceOnEveryRoute) {
  EXPECT_EQ(RunAndReport("small", SeedRange(1, 50), Family::kSmall).graphs, 50);
}

// Batch 2-4 of 16x128x128 (or 127/131 a side) with a first conv to 128 / N channels (48 at
// N = 3): tensors of 8 MiB or more, so that schedule.batch_split=auto declares a segment;
// at least one engine must have one (else the batch-split routes compare nothing the
// unsplit routes do not). Seeds chosen for what their segments hold: residuals,
// [N,C,1,1], [H,W], [W] and full-shape graph inputs, a [1,C,H,W] constant,
// squeeze-excite, second outputs, batch 2 and 3, odd sizes.
TEST(RouteDifferential, LargeRandomConvNetsMatchTheReferenceAndSplitTheBatch) {
  EXPECT_GE(RunAndReport("large", {1006, 1007, 1010, 1011, 1012}, Family::kLarge).large_segments, 1)
      << "no large graph got a batch segment";
}

// Nets shaped like text detectors and recognisers (random_ocrnet.h: Resize, ConvTranspose,
// depthwise convs with HardSwish, HardSigmoid squeeze-excite, FPN merges and concats,
// [2,1]-strided convs and pools, sequence tails with attention, GELU MLP, LayerNorm, MatMul
// and Softmax) under OcrRoutes(). When written, seeds 2001-2600 passed every route here and
// the batch-split ones.
TEST(RouteDifferential, OcrShapedNetsMatchTheReferenceOnEveryRoute) {
  EXPECT_EQ(RunAndReport("ocr", SeedRange(2001, 40), Family::kOcr).graphs, 40);
}

// Seeds whose engines crashed the process (SIGSEGV) when they were found run in a child
// process (a death test that re-executes this binary): a crash fails this test alone, and
// the failures above are reported whatever happens here. 1153: a 1x1 stride-2 conv with
// asymmetric pads [1,0,0,1] whose residual Add (a graph input) and HardSwish are fused into
// oneDNN's brgconv (sum and eltwise post-ops).
TEST(RouteDifferential, SeedsThatCrashedRunInAChildProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Tally tally;
        RunSeeds({1153}, Family::kSmall, tally, /*announce=*/true);
        std::fflush(stdout);
        std::exit(tally.failures == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "")
      << "exit code 1: wrong results (listed in the child's output above); a signal: a crash";
}

}  // namespace
}  // namespace switchyard::testing
