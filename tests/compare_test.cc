// `switchyard compare OLD NEW` end to end on real models: an engine against itself is
// promoted with every field at every concurrency level; a planted slow route and a planted
// inaccurate route are held with the right reasons; bad inputs are errors (exit 1).
// Measurements are short (--duration 0.5, levels 1,2): these tests prove the verdict
// logic on large effects, not small speed differences.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace switchyard {
namespace {

using json = nlohmann::json;
using testing::TempFolder;

using Cli = testing::CliRun;

Cli RunTool(const std::string& args) { return testing::RunBinary("switchyard", args); }

const std::string kConvStack = std::string(SY_SOURCE_DIR) + "/tests/models/conv_stack.onnx";
const std::string kTinyCnn = std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/model.onnx";
const std::string kTinyData = std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/data";
const std::string kQuick = " --concurrency 1,2 --duration 0.5 --json";

bool HasReason(const json& j, const std::string& word) {
  for (const auto& r : j["reasons"]) {
    if (r.get<std::string>().find(word) != std::string::npos) return true;
  }
  return false;
}

void ExpectAllFields(const json& j, int levels) {
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j["levels"].size(), static_cast<size_t>(levels)) << j.dump(1);
  for (const auto& l : j["levels"]) {
    for (const char* side : {"old", "new"}) {
      for (const char* f : {"p50_ms", "p95_ms", "p99_ms", "throughput_per_s"}) {
        ASSERT_TRUE(l[side][f].is_number()) << side << " " << f << ": " << l.dump();
        EXPECT_GT(l[side][f].get<double>(), 0) << side << " " << f;
      }
      EXPECT_LE(l[side]["p50_ms"].get<double>(), l[side]["p95_ms"].get<double>());
      EXPECT_LE(l[side]["p95_ms"].get<double>(), l[side]["p99_ms"].get<double>());
      EXPECT_EQ(l[side]["failed"], 0);
      EXPECT_GT(l[side]["runs"].get<int>(), 0);
    }
  }
  EXPECT_GT(j["memory"]["old_bytes"].get<int64_t>(), 0);
  EXPECT_GT(j["memory"]["new_bytes"].get<int64_t>(), 0);
  EXPECT_TRUE(j["accuracy"]["new_vs_old"].is_object());
  EXPECT_TRUE(j["verdict"] == "promote" || j["verdict"] == "hold");
}

TEST(CompareCli, AnEngineAgainstItselfIsPromotedWithEveryField) {
  TempFolder dir;
  const std::string engine = dir / "e.engine";
  ASSERT_EQ(RunTool("build " + kConvStack + " -o " + engine).code, 0);
  // The machine is shared and small (2 cores, load often above 8): the p95 of half a
  // second of runs of the same engine was seen to differ by up to 80%, and this test failed
  // once under ctest -j2 on a 2-core Zen 3 EPYC with 150% and 50%, so it takes the wide
  // tolerances of the identical-routes test below; the verdict's latency rules are tested
  // by the planted slow route (ASlowRouteIsHeldForLatencyAndThroughput, 5-8x slower).
  // Under TSan (scripts/sanitize.sh runs this test there) half a second completed no timed
  // run on a 2-core Zen 3 EPYC (verdict hold: "no timed run completed at concurrency 1").
#if defined(__SANITIZE_THREAD__)
  const std::string duration = "5";
#else
  const std::string duration = "0.5";
#endif
  const Cli r = RunTool("compare " + engine + " " + engine + " --model " + kConvStack + " --concurrency 1,2 --duration " +
                        duration + " --json --max-p95-regression 2000 --max-throughput-regression 95");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ExpectAllFields(r.last, 2);
  EXPECT_EQ(r.last["levels"][0]["concurrency"], 1);
  EXPECT_EQ(r.last["levels"][1]["concurrency"], 2);
  EXPECT_EQ(r.last["verdict"], "promote");
  EXPECT_TRUE(r.last["reasons"].empty());
  // Identical engines agree exactly, and both against the reference executor.
  EXPECT_EQ(r.last["accuracy"]["new_vs_old"]["passed"], true);
  EXPECT_EQ(r.last["accuracy"]["new_vs_old"]["outputs"]["features"]["worst"], 0.0);
  EXPECT_EQ(r.last["accuracy"]["new_vs_reference"]["passed"], true);
  EXPECT_EQ(r.last["accuracy"]["reference"], "reference executor");
  EXPECT_EQ(r.last["failed"]["new"], 0);
}

TEST(CompareCli, IdenticalRoutesOnEveryDataSetPromoteAndTextOutputReads) {
  // Identical engines: the verdict must not hinge on timing noise (a loaded CI machine
  // once measured +327% p95 between two runs of the same engine in 0.4 s), so the
  // latency tolerances are wide; the accuracy checks below are exact.
  const Cli r = RunTool("compare " + kTinyCnn + " " + kTinyCnn + " --data " + kTinyData +
                        " --concurrency 1 --duration 0.4 --max-p95-regression 2000 --max-throughput-regression 95");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: promote"), std::string::npos) << r.out;
  const Cli j = RunTool("compare " + kTinyCnn + " " + kTinyCnn + " --data " + kTinyData +
                        " --concurrency 1 --duration 0.4 --max-p95-regression 2000 --max-throughput-regression 95 --json");
  ASSERT_EQ(j.code, 0) << j.out << j.err;
  ExpectAllFields(j.last, 1);
  EXPECT_EQ(j.last["sets"], 2);
  const json& per_set = j.last["accuracy"]["new_vs_reference"]["outputs"].begin().value()["per_set"];
  EXPECT_TRUE(per_set.contains("set1") && per_set.contains("set2")) << per_set.dump();
}

TEST(CompareCli, ASlowRouteIsHeldForLatencyAndThroughput) {
  const Cli r = RunTool("compare " + kConvStack + " " + kConvStack +
                        " --route-new 'layout.activations=nchw kernel.conv=im2col_gemm threads=1'" + kQuick);
  ASSERT_EQ(r.code, 3) << r.out << r.err;
  ExpectAllFields(r.last, 2);
  EXPECT_EQ(r.last["verdict"], "hold");
  EXPECT_TRUE(HasReason(r.last, "p95 latency regression")) << r.last["reasons"].dump(1);
  EXPECT_TRUE(HasReason(r.last, "throughput regression")) << r.last["reasons"].dump(1);
  EXPECT_FALSE(HasReason(r.last, "accuracy")) << r.last["reasons"].dump(1);
  for (const auto& l : r.last["levels"]) EXPECT_GT(l["p95_ratio"].get<double>(), 1.5) << l.dump();
}

TEST(CompareCli, AnInaccurateRouteIsHeldForAccuracy) {
  const Cli r = RunTool("compare " + kConvStack + " " + kConvStack + " --route-new quant.weights=int8 --threshold 1e-5" +
                        kQuick + " --max-p95-regression 1000 --max-throughput-regression 95");
  ASSERT_EQ(r.code, 3) << r.out << r.err;
  ExpectAllFields(r.last, 2);
  EXPECT_TRUE(HasReason(r.last, "accuracy: NEW disagrees with OLD")) << r.last["reasons"].dump(1);
  EXPECT_TRUE(HasReason(r.last, "accuracy: NEW fails against the reference")) << r.last["reasons"].dump(1);
  EXPECT_EQ(r.last["accuracy"]["new_vs_reference"]["passed"], false);
  EXPECT_EQ(r.last["accuracy"]["old_vs_reference"]["passed"], true);
  EXPECT_GT(r.last["accuracy"]["new_vs_old"]["outputs"]["features"]["worst"].get<double>(), 1e-5);
}

TEST(CompareCli, BadInputsAreErrors) {
  TempFolder dir;
  const Cli missing = RunTool("compare " + (dir / "nope.engine") + " " + kConvStack + kQuick);
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("OLD '" + (dir / "nope.engine") + "' does not exist"), std::string::npos) << missing.err;

  const std::string a = dir / "a.engine", b = dir / "b.engine";
  ASSERT_EQ(RunTool("build " + kConvStack + " -o " + a).code, 0);
  ASSERT_EQ(RunTool("build " + kTinyCnn + " -o " + b).code, 0);
  const Cli other = RunTool("compare " + a + " " + b + kQuick);
  EXPECT_EQ(other.code, 1);
  EXPECT_NE(other.err.find("not of the same model"), std::string::npos) << other.err;

  const Cli wrong_model = RunTool("compare " + a + " " + a + " --model " + kTinyCnn + kQuick);
  EXPECT_EQ(wrong_model.code, 1);
  EXPECT_NE(wrong_model.err.find("is not the model the engines were built from"), std::string::npos) << wrong_model.err;

  const Cli route_on_engine = RunTool("compare " + a + " " + a + " --route-new threads=1" + kQuick);
  EXPECT_EQ(route_on_engine.code, 1);
  EXPECT_NE(route_on_engine.err.find("is an engine"), std::string::npos) << route_on_engine.err;

  const Cli bad_levels = RunTool("compare " + a + " " + a + " --concurrency 1,x --json");
  EXPECT_EQ(bad_levels.code, 1);
  EXPECT_NE(bad_levels.err.find("--concurrency"), std::string::npos) << bad_levels.err;
}

}  // namespace
}  // namespace switchyard
