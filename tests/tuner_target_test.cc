// The tuner's target handling, without a GPU: unknown targets refused before anything is
// written, worker jobs building for the target they name, and the record's target section
// (GPU facts on cuda, unchanged on cpu). Split from tuner_test.cc.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "tune/tuner.h"
#include "tune/tuner_internal.h"
#include "tune/worker.h"

namespace switchyard {
namespace {

using json = nlohmann::json;
using testing::TempFolder;

const std::string kConvStack = std::string(SY_SOURCE_DIR) + "/tests/models/conv_stack.onnx";

// ---- targets (no GPU needed) ----

TEST(TunerTarget, UnknownTargetIsRefusedBeforeAnythingIsWritten) {
  TempFolder dir;
  TuneOptions o;
  o.model = kConvStack;
  o.out_dir = dir / "out";
  o.target = "bogus";
  o.input_specs = {"image:float32[1,3,40,40]"};
  auto r = Tune(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("unknown target 'bogus'"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().ToString().find("cpu"), std::string::npos) << r.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

TEST(TunerTarget, WorkerJobsBuildForTheirTarget) {
  // The job names the target; a candidate for an unknown one is a build failure (a result),
  // and the message names the valid targets.
  json job = {{"phase", "candidate"}, {"model", kConvStack}, {"route", ""}, {"target", "bogus"}};
  json r = RunWorker(job);
  EXPECT_EQ(r["status"], "build_failed") << r.dump();
  EXPECT_NE(r.value("error", "").find("unknown target 'bogus'"), std::string::npos) << r.dump();
#ifndef SWITCHYARD_WITH_CUDA
  job["target"] = "cuda";
  r = RunWorker(job);
  EXPECT_EQ(r["status"], "build_failed") << r.dump();
  EXPECT_NE(r.value("error", "").find("no CUDA support"), std::string::npos) << r.dump();
#endif
}

// A cuda target as Target::ForName("cuda") reports it on an H200 (fixed values: no GPU here).
Target FakeCudaTarget() {
  Target t = Target::HostCpu();
  t.name = "cuda";
  t.features = CpuFeatures{};
  t.gpu.present = true;
  t.gpu.name = "NVIDIA H200";
  t.gpu.cc_major = 9;
  t.gpu.cc_minor = 0;
  t.gpu.sm_count = 132;
  t.gpu.memory_bytes = int64_t{150} << 30;
  t.gpu.driver = "13.0";
  t.gpu.runtime = "13.0";
  t.gpu.cublaslt = "13.0.2";
  t.gpu.cudnn = "9.14.0";
  return t;
}

TEST(TunerRecord, TargetSectionNamesTheGpuOnCudaAndIsUnchangedOnCpu) {
  const nlohmann::ordered_json cpu = tuner::TargetJson(Target::HostCpu());
  EXPECT_EQ(cpu["kind"], "cpu");
  for (const char* k : {"cpu_model", "logical_cpus", "features", "os", "libraries"}) {
    EXPECT_TRUE(cpu.contains(k)) << k << ": " << cpu.dump();
  }
  EXPECT_FALSE(cpu.contains("gpu")) << cpu.dump();

  const Target cuda = FakeCudaTarget();
  EXPECT_EQ(cuda.Fingerprint(), "cuda|sm_90");
  nlohmann::ordered_json t = tuner::TargetJson(cuda);
  EXPECT_EQ(t["kind"], "cuda");
  const auto& g = t["gpu"];
  EXPECT_EQ(g["name"], "NVIDIA H200");
  EXPECT_EQ(g["compute_capability"], "9.0");
  EXPECT_EQ(g["arch"], "sm_90");
  EXPECT_EQ(g["sm_count"], 132);
  EXPECT_EQ(g["memory_bytes"], int64_t{150} << 30);
  EXPECT_EQ(g["driver"], "13.0");
  EXPECT_EQ(g["cuda_runtime"], "13.0");
  EXPECT_EQ(g["cublaslt"], "13.0.2");
  EXPECT_EQ(g["cudnn"], "9.14.0");
  EXPECT_EQ(t["cpu_model"], cuda.cpu_model);  // the host CPU
  EXPECT_FALSE(t.contains("features")) << t.dump();

  // record.md shows them.
  t["fingerprint"] = cuda.Fingerprint();
  nlohmann::ordered_json rec = {{"tool", {{"version", "x"}, {"commit", "y"}}},
                                {"selected", nullptr},
                                {"baseline", nlohmann::ordered_json::object()},
                                {"decision", {{"reason", "test"}}},
                                {"model", nlohmann::ordered_json::object()},
                                {"target", t},
                                {"data", nlohmann::ordered_json::object()},
                                {"accuracy_policy", nlohmann::ordered_json::object()},
                                {"measurement_policy", nlohmann::ordered_json::object()},
                                {"search", nlohmann::ordered_json::object()},
                                {"counts", nlohmann::ordered_json::object()},
                                {"cost", nlohmann::ordered_json::object()},
                                {"validation", nlohmann::ordered_json::object()}};
  const std::string md = tuner::RenderRecordMarkdown(rec);
  for (const char* needle : {"GPU: NVIDIA H200 (compute capability 9.0, 132 SMs, 150.0 GiB)", "driver 13.0",
                             "CUDA runtime 13.0", "cuBLASLt 13.0.2", "cuDNN 9.14.0", "host CPU: ",
                             "fingerprint: `cuda|sm_90`"}) {
    EXPECT_NE(md.find(needle), std::string::npos) << "record.md lacks '" << needle << "':\n" << md;
  }
  rec["target"] = cpu;
  const std::string cpu_md = tuner::RenderRecordMarkdown(rec);
  EXPECT_NE(cpu_md.find("- CPU: "), std::string::npos) << cpu_md;
  EXPECT_NE(cpu_md.find("- features: "), std::string::npos) << cpu_md;
  EXPECT_EQ(cpu_md.find("GPU"), std::string::npos) << cpu_md;
}

}  // namespace
}  // namespace switchyard
