// Reliability (issue 8, docs/reliability.md): the --max-memory budget (import, engine load,
// bench sessions, the RLIMIT_AS backstop and the out-of-memory message), the load test
// (`bench --concurrency 64 --check-outputs`) and a short run of scripts/kill_trials.sh.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <new>
#include <string>

#include "io/memory_budget.h"
#include "io/npy.h"
#include "test_util.h"

namespace switchyard {
namespace {

using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;
using testing::MakeModel;
using testing::RunBinary;
using testing::SaveModel;
using testing::TempFolder;

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kInt64 = onnx::TensorProto::INT64;
const std::string kResnetTiny = std::string(SY_SOURCE_DIR) + "/tests/models/resnet_tiny.onnx";

// x: float[1, n] + w (an initializer of n floats, raw data in the model) -> y.
std::string AddModel(const std::string& path, int64_t n) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", kFloat, {1, n});
  AddNode(m, "Add", {"x", "w"}, {"y"}, "add");
  AddOutput(m, "y", kFloat, {1, n});
  testing::AddFloatInitializer(m, "w", {1, n}, std::vector<float>(static_cast<size_t>(n), 0.5f));
  return SaveModel(m, path);
}

// x: float[n, n] -> Relu -> Relu -> y: a tiny file whose engine needs an arena of ~2 n^2
// floats.
std::string BigArenaModel(const std::string& path, int64_t n) {
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", kFloat, {n, n});
  AddNode(m, "Relu", {"x"}, {"h"}, "relu1");
  AddNode(m, "Relu", {"h"}, {"y"}, "relu2");
  AddOutput(m, "y", kFloat, {n, n});
  return SaveModel(m, path);
}

TEST(MaxMemory, ParseSizeAcceptsBytesAndBinaryUnits) {
  using memory_budget::ParseSize;
  EXPECT_EQ(*ParseSize("4096"), 4096);
  EXPECT_EQ(*ParseSize("512K"), 512 << 10);
  EXPECT_EQ(*ParseSize("512M"), int64_t{512} << 20);
  EXPECT_EQ(*ParseSize("512m"), int64_t{512} << 20);
  EXPECT_EQ(*ParseSize("4G"), int64_t{4} << 30);
  EXPECT_EQ(*ParseSize("4GiB"), int64_t{4} << 30);
  EXPECT_EQ(*ParseSize("4GB"), int64_t{4} << 30);
  EXPECT_EQ(*ParseSize("1.5G"), int64_t{3} << 29);
  EXPECT_EQ(*ParseSize("2T"), int64_t{2} << 40);
  for (const std::string bad : {"", "G", "-1", "0", "12X", "1.2.3M", "abc", "4 G", "1e9", "99999999999T"}) {
    auto r = ParseSize(bad);
    EXPECT_FALSE(r.ok()) << "'" << bad << "' parsed as " << (r.ok() ? *r : 0);
    if (!r.ok()) EXPECT_NE(r.status().message().find("512M"), std::string::npos) << r.status().message();
  }
}

TEST(MaxMemory, CheckNamesTheThingItsSizeAndTheLimit) {
  memory_budget::SetLimit(int64_t{1} << 20, "--max-memory 1M");
  const Status ok = memory_budget::Check("small", 1000);
  const Status s = memory_budget::Check("initializer 'w'", int64_t{3} << 20);
  memory_budget::SetLimit(0);
  EXPECT_TRUE(ok.ok());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  for (const char* needle : {"initializer 'w'", "3.00 MiB", "3145728 bytes", "1.00 MiB", "(--max-memory 1M)"}) {
    EXPECT_NE(s.message().find(needle), std::string::npos) << needle << " in: " << s.message();
  }
  EXPECT_TRUE(memory_budget::Check("anything", int64_t{1} << 50).ok()) << "no limit once removed";
}

TEST(MaxMemory, AddressSpaceLimitTurnsAHugeAllocationIntoBadAlloc) {
  if (memory_budget::UnderAddressSanitizer()) GTEST_SKIP() << "RLIMIT_AS is skipped under ASan";
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &saved), 0);
  auto set = memory_budget::LimitAddressSpace(int64_t{64} << 20);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_GT(*set, int64_t{64} << 20);
  struct rlimit now {};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &now), 0);
  EXPECT_EQ(static_cast<int64_t>(now.rlim_cur), *set);
  bool threw = false;
  try {
    // More than the limit (mapped + 64 MiB + headroom), far less than the machine could
    // give without it; nothing is touched either way.
    // (::operator new itself, which the compiler may not elide as it may a new-expression.)
    static void* volatile sink = nullptr;
    sink = ::operator new(static_cast<size_t>(*set) + (size_t{1} << 30));
    ::operator delete(sink);
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  ASSERT_EQ(setrlimit(RLIMIT_AS, &saved), 0);  // the soft limit goes back up to the hard one
  EXPECT_TRUE(threw);
}

TEST(MaxMemory, LargeInitializerIsRefusedAtImportNamingItsSize) {
  TempFolder dir;
  const std::string model = AddModel(dir / "add.onnx", int64_t{1} << 20);  // w: 4 MiB
  for (const std::string verb : {"build " + model + " -o " + (dir / "e.engine"), "inspect " + model,
                                 "run " + model + " -o " + (dir / "out"), "bench " + model + " --iterations 1"}) {
    SCOPED_TRACE(verb);
    const auto r = RunBinary("switchyard", verb + " --max-memory 2M");
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    // Either the model file (4 MiB of raw data) or the initializer is named; both name the limit.
    EXPECT_NE(r.err.find("2.00 MiB (2097152 bytes) (--max-memory 2M)"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  }
  // The model file fits, the initializer does not: it is named with its type, shape and size.
  const auto r = RunBinary("switchyard", "build " + model + " -o " + (dir / "e.engine") + " --max-memory 6M");
  EXPECT_EQ(r.code, 1);
  for (const char* needle : {"initializer 'w' (float32 [1,1048576])", "4.00 MiB", "6.00 MiB", "--max-memory 6M"}) {
    EXPECT_NE(r.err.find(needle), std::string::npos) << needle << " in: " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "e.engine"));
}

TEST(MaxMemory, ExternalInitializerIsRefusedBeforeItsFileIsRead) {
  TempFolder dir;
  // A 1 GiB external tensor in a sparse file: declared, never allocated.
  onnx::ModelProto m = MakeModel();
  AddInput(m, "x", kFloat, {256, 1024, 1024});
  AddNode(m, "Add", {"x", "w"}, {"y"}, "add");
  AddOutput(m, "y", kFloat, {256, 1024, 1024});
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(kFloat);
  for (int64_t d : {256, 1024, 1024}) t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("w.bin");
  const std::string model = SaveModel(m, dir / "ext.onnx");
  testing::WriteFile(dir / "w.bin", "");
  std::filesystem::resize_file(dir / "w.bin", uintmax_t{1} << 30);
  const auto r = RunBinary("switchyard", "--max-memory 512M build " + model + " -o " + (dir / "e.engine"));
  EXPECT_EQ(r.code, 1);
  for (const char* needle : {"initializer 'w' (float32 [256,1024,1024]) needs 1.00 GiB (1073741824 bytes)",
                             "512.00 MiB", "(--max-memory 512M)"}) {
    EXPECT_NE(r.err.find(needle), std::string::npos) << needle << " in: " << r.err;
  }
}

TEST(MaxMemory, EngineWhoseArenaExceedsTheLimitIsRefusedAtLoad) {
  TempFolder dir;
  const std::string model = BigArenaModel(dir / "relu.onnx", 1024);  // h and y: 4 MiB each
  // Built without a limit; loading under 3M is refused before any arena exists.
  ASSERT_EQ(RunBinary("switchyard", "build " + model + " -o " + (dir / "e.engine")).code, 0);
  const auto r = RunBinary("switchyard", "bench " + (dir / "e.engine") + " --iterations 1 --max-memory 3M");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  for (const char* needle : {"the engine (route '(default)':", "arena per session) needs", "3.00 MiB",
                             "(--max-memory 3M)"}) {
    EXPECT_NE(r.err.find(needle), std::string::npos) << needle << " in: " << r.err;
  }
  // Building it (build, or bench/run of the model) is refused by the builder already.
  for (const std::string cmd : {"build " + model + " -o " + (dir / "f.engine"),
                                "bench " + model + " --iterations 1"}) {
    const auto b = RunBinary("switchyard", cmd + " --max-memory 3M");
    EXPECT_EQ(b.code, 1) << cmd << ": " << b.out << b.err;
    for (const char* needle : {"the engine being built:", "arena", "3.00 MiB", "(--max-memory 3M)"}) {
      EXPECT_NE(b.err.find(needle), std::string::npos) << needle << " in: " << b.err;
    }
    EXPECT_FALSE(std::filesystem::exists(dir / "f.engine"));
  }
  // One session fits in 64M, 64 sessions' arenas do not: refused before they start.
  const auto many = RunBinary("switchyard", "bench " + (dir / "e.engine") +
                                                " --iterations 1 --warmup 1 --concurrency 64 --max-memory 64M");
  EXPECT_EQ(many.code, 1);
  EXPECT_NE(many.err.find("--concurrency: 64 sessions of the engine"), std::string::npos) << many.err;
}

TEST(MaxMemory, NormalRunsAreUnaffected) {
  TempFolder dir;
  const std::string model = AddModel(dir / "add.onnx", 4096);
  // The option before or after the verb, in bytes or with a unit.
  for (const std::string args : {"--max-memory 1G build " + model + " -o " + (dir / "a.engine") + " --json",
                                  "build " + model + " -o " + (dir / "b.engine") + " --max-memory 268435456 --json",
                                  "bench " + (dir / "a.engine") + " --iterations 3 --max-memory 1G --json",
                                  "bench " + kResnetTiny + " --iterations 2 --concurrency 4 --max-memory 2G --json"}) {
    const auto r = RunBinary("switchyard", args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.out << r.err;
    EXPECT_TRUE(r.last.is_object()) << args << "\n" << r.out;
  }
}

TEST(MaxMemory, BadSizesAreRefusedWithAClearError) {
  for (const std::string bad : {"12X", "abc", "-5", "0", "1.2.3G", ""}) {
    const auto r = RunBinary("switchyard", "--max-memory='" + bad + "' routes " + kResnetTiny);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("--max-memory"), std::string::npos) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("e.g. 512M or 4G"), std::string::npos) << bad << ": " << r.err;
  }
}

TEST(MaxMemory, AnAllocationNoCheckCoversEndsInAnOutOfMemoryError) {
  if (memory_budget::UnderAddressSanitizer()) GTEST_SKIP() << "RLIMIT_AS is skipped under ASan";
  TempFolder dir;
  // ConstantOfShape of a run-time shape: 2^31 floats (8 GiB) allocated while running.
  onnx::ModelProto m = MakeModel();
  AddInput(m, "shape", kInt64, {1});
  AddNode(m, "ConstantOfShape", {"shape"}, {"y"}, "fill");
  AddOutput(m, "y", kFloat, {-1});
  const std::string model = SaveModel(m, dir / "fill.onnx");
  ASSERT_TRUE(WriteNpy(dir / "shape.npy", Tensor::FromInt64({int64_t{1} << 31}, {1})).ok());
  // The shell's own limit (7 GiB of address space) keeps this machine safe should the
  // backstop ever be missing; --max-memory's limit (mapped + 64 MiB + 3 GiB) is lower.
  testing::CliRun r;
  {
    const std::string err = dir / "err.txt";
    const std::string cmd = "ulimit -v 7340032; " + std::string(SY_BINARY_DIR) + "/bin/switchyard run " + model +
                            " -i shape=" + (dir / "shape.npy") + " -o " + (dir / "out") +
                            " --max-memory 64M 2>" + err;
    const int status = std::system(cmd.c_str());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.err = testing::ReadWholeFile(err);
  }
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("error: out of memory under the memory limit 64.00 MiB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(--max-memory 64M)"), std::string::npos) << r.err;
}

// ---- the load test, CI-sized ----

TEST(LoadTest, SixtyFourSessionsForTwoSecondsGiveTheSingleSessionOutputs) {
  const auto r = RunBinary("switchyard", "bench " + kResnetTiny +
                                             " --concurrency 64 --duration 2 --warmup 1 --check-outputs --json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto& j = r.last;
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["concurrency"], 64);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_EQ(j["mismatches"], 0);
  EXPECT_GE(j["runs"].get<int64_t>(), 64) << j.dump();
  EXPECT_GE(j["checked_runs"].get<int64_t>(), j["runs"].get<int64_t>() + 64) << "warm-up runs are checked too";
  EXPECT_GT(j["peak_memory_bytes"].get<int64_t>(), 0);
  EXPECT_GT(j["rss_max_bytes"].get<int64_t>(), 0);
  EXPECT_GT(j["p99_ms"].get<double>(), 0);
}

// ---- kill -9 trials, CI-sized (the full >= 20-kill run: docs/reliability.md) ----

TEST(KillTrials, EightKillsLoseNothingAndTheWinnerStays) {
  TempFolder dir;
  const std::string log = dir / "log.txt";
  const std::string cmd = "SEED=3 " + std::string(SY_SOURCE_DIR) + "/scripts/kill_trials.sh 8 " +
                          std::string(SY_BINARY_DIR) + "/bin/switchyard >" + log + " 2>&1";
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const std::string out = testing::ReadWholeFile(log);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("result: PASS"), std::string::npos) << out;
  EXPECT_EQ(out.find("FAIL:"), std::string::npos) << out;
}

}  // namespace
}  // namespace switchyard
