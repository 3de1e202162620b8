// End-to-end runs of `switchyard tune` (and of `switchyard_faulty`, the CLI with the
// test-only fault knob) on real models: inaccurate routes rejected, crashing/hanging/OOM
// candidates recorded, kill -9 and --continue, every strategy finding a clearly faster
// route, the baseline kept when nothing gains, and predictable failures. The tuner's parts
// are tested in tuner_test.cc.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "engine/engine.h"
#include "io/npy.h"
#include "onnx/importer.h"
#include "reference/executor.h"
#include "runtime/session.h"
#include "test_util.h"
#include "tune/accuracy.h"
#include "tune/database.h"
#include "tune/gate.h"
#include "tune/input_gen.h"
#include "tune/process.h"
#include "tune/stats.h"
#include "tune/tuner.h"
#include "tune/tuner_internal.h"
#include "tune/worker.h"

namespace switchyard {
namespace {

using json = nlohmann::json;
using testing::TempFolder;

using Cli = testing::CliRun;

Cli RunTool(const std::string& binary, const std::string& args) { return testing::RunBinary(binary, args); }

const std::string kConvStack = std::string(SY_SOURCE_DIR) + "/tests/models/conv_stack.onnx";
const std::string kTinyCnn = std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/model.onnx";
// Short measurements: these tests prove behaviour, not speed.
const std::string kQuick =
    " --input-spec 'image:float32[1,3,40,40]' --min-rounds 4 --max-rounds 12 --confirm-rounds 24"
    " --validate-sessions 3 --json";

json ReadJson(const std::string& path) {
  return json::parse(testing::ReadWholeFile(path), nullptr, false);
}

const json* FindCandidate(const json& record, const std::string& route) {
  for (const json& c : record["candidates"]) {
    if (c["route"] == route) return &c;
  }
  return nullptr;
}

TEST(TunerCli, InaccurateRouteIsRejectedAtATightThreshold) {
  TempFolder dir;
  const Cli r = RunTool("switchyard", "tune " + kConvStack + " --out " + (dir / "out") +
                                          " --sweep 'quant.weights=[none|int8]' --search full --threshold 1e-4" +
                                          kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ASSERT_TRUE(r.last.is_object()) << r.out;
  EXPECT_EQ(r.last["rejected_accuracy"], 1);
  EXPECT_EQ(r.last["selected"]["route"], "");
  const json rec = ReadJson(dir / "out/record.json");
  const json* int8 = FindCandidate(rec, "quant.weights=int8");
  ASSERT_NE(int8, nullptr) << rec.dump(1);
  EXPECT_EQ((*int8)["status"], "rejected_accuracy");
  EXPECT_NE((*int8)["error"].get<std::string>().find("threshold 0.0001"), std::string::npos) << (*int8)["error"];
  // The rejected route's own error is recorded, and is above the threshold.
  EXPECT_GT((*int8)["accuracy"]["outputs"]["features"]["worst"].get<double>(), 1e-4);
  EXPECT_TRUE(std::filesystem::exists(dir / "out/selected.engine"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out/record.md"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out/.work"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out/retained-data"));  // hashes only by default
  EXPECT_EQ(rec["data"]["retained"], "no");
  // The run is in the folder's audit log.
  const std::string audit = testing::ReadWholeFile(dir / "out/audit.jsonl");
  const json line = json::parse(audit.substr(0, audit.find('\n')), nullptr, false);
  ASSERT_TRUE(line.is_object()) << audit;
  EXPECT_EQ(line["action"], "tune");
  EXPECT_EQ(line["outcome"], "baseline kept");
  EXPECT_EQ(line["data_sha256"], rec["data"]["input_profile"]);
  EXPECT_NE(line["command"].get<std::string>().find("quant.weights"), std::string::npos);
}

// Under a sanitizer the subject of the next two tests is replaced: ASan catches SIGSEGV and
// exits 1 itself, and sanitized builds set no RLIMIT_AS (ASan's shadow memory needs ~16 TB
// of address space, src/tune/process.cc), so no candidate can run out of memory.
#ifdef SY_SANITIZED
#define SY_SKIP_UNDER_SANITIZER() \
  GTEST_SKIP() << "built with -fsanitize=" SY_SANITIZED ": signals and memory limits are the sanitizer's"
#else
#define SY_SKIP_UNDER_SANITIZER() (void)0
#endif

TEST(TunerCli, CrashingHangingAndOomCandidatesAreRecordedAndTheSearchFinishes) {
  SY_SKIP_UNDER_SANITIZER();
  TempFolder dir;
  const Cli r = RunTool("switchyard_faulty",
                        "tune " + kConvStack + " --out " + (dir / "out") +
                            " --sweep 'test.fault=[none|crash|hang|oom|build_error]' --search full"
                            " --candidate-timeout 10s --candidate-memory-mb 2000" + kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.last["failed"], 4) << r.last.dump();
  EXPECT_EQ(r.last["candidates"], 5);
  const json rec = ReadJson(dir / "out/record.json");
  auto status_of = [&](const std::string& route) {
    const json* c = FindCandidate(rec, route);
    return c ? (*c)["status"].get<std::string>() + ": " + (*c).value("error", "") : std::string("missing");
  };
  EXPECT_EQ(status_of("test.fault=crash").rfind("crashed", 0), 0u) << status_of("test.fault=crash");
  EXPECT_NE(status_of("test.fault=crash").find("signal 11"), std::string::npos);
  EXPECT_EQ(status_of("test.fault=hang").rfind("timeout", 0), 0u) << status_of("test.fault=hang");
  EXPECT_EQ(status_of("test.fault=oom").rfind("crashed", 0), 0u) << status_of("test.fault=oom");
  EXPECT_EQ(status_of("test.fault=build_error").rfind("crashed", 0), 0u) << status_of("test.fault=build_error");
  EXPECT_NE(status_of("test.fault=build_error").find("exit code 3"), std::string::npos);
  EXPECT_EQ(rec["counts"]["timeout"], 1);
  EXPECT_EQ(rec["counts"]["crashed"], 3);
  // The failures are in the database too, so --continue would not retry them.
  auto db = TuningDatabase::Open(dir / "out/tuning.db", {false});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto rows = (*db)->ListCandidates();
  ASSERT_TRUE(rows.ok());
  int failed_rows = 0;
  for (const auto& c : *rows) failed_rows += (c.status == "crashed" || c.status == "timeout");
  EXPECT_EQ(failed_rows, 4);
}

// Starts `switchyard ARGS` in the background (`setsid`: its own process group), stdout
// discarded, stderr to `err_file`; returns its pid (0 when it could not start).
int StartInBackground(const std::string& args, const std::string& err_file,
                      const std::string& out_file = "/dev/null") {
  const std::string cmd = "setsid " + std::string(SY_BINARY_DIR "/bin/switchyard ") + args + " >" + out_file +
                          " 2>" + err_file + " & echo $!";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return 0;
  int pid = 0;
  if (fscanf(p, "%d", &pid) != 1) pid = 0;
  pclose(p);
  return pid;
}

// Polls the tuning database until it holds at least `n` candidates or 60 s pass; returns
// the last count seen.
size_t WaitForStoredCandidates(const std::string& db_path, size_t n) {
  size_t stored = 0;
  for (int i = 0; i < 600 && stored < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto db = TuningDatabase::Open(db_path, {false});
    if (!db.ok()) continue;
    auto rows = (*db)->ListCandidates();
    if (rows.ok()) stored = rows->size();
  }
  return stored;
}

TEST(TunerCli, KillNineThenContinueReusesStoredResults) {
  TempFolder dir;
  const std::string out = dir / "out";
  const std::string args = "tune " + kConvStack + " --out " + out +
                           " --sweep 'memory.plan=[greedy_by_size|linear_scan|none] "
                           "layout.activations=[nhwc|nchw|blocked]' --search full" + kQuick;
  // Start it in its own process group, wait for some stored candidates, kill -9 the group.
  const int pid = StartInBackground(args, "/dev/null");
  ASSERT_GT(pid, 0);
  const size_t stored = WaitForStoredCandidates(out + "/tuning.db", 4);
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  ASSERT_GE(stored, 4u) << "the tuner stored too few candidates in 60 s";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  size_t at_kill = 0;
  {
    auto db = TuningDatabase::Open(out + "/tuning.db", {false});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto ic = (*db)->IntegrityCheck();
    ASSERT_TRUE(ic.ok());
    EXPECT_EQ(*ic, "ok");
    at_kill = (*db)->ListCandidates()->size();
  }
  ASSERT_LT(at_kill, 9u) << "the run finished before it was killed";
  EXPECT_FALSE(std::filesystem::exists(out + "/record.json"));

  // Without --continue the half-finished folder is refused, naming the flag.
  const Cli refused = RunTool("switchyard", args);
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("--continue"), std::string::npos) << refused.err;

  const Cli r = RunTool("switchyard", args + " --continue");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  // Every stored candidate but the baseline's row is reused, none is measured again.
  EXPECT_EQ(r.last["reused"].get<size_t>(), at_kill - 1) << r.last.dump();
  EXPECT_EQ(r.last["candidates"], 9);
  auto db = TuningDatabase::Open(out + "/tuning.db", {false});
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*(*db)->IntegrityCheck(), "ok");
  auto rows = (*db)->ListCandidates();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 9u);  // eight candidates and the baseline, none twice
  std::set<std::string> routes;
  for (const auto& c : *rows) routes.insert(c.route);
  EXPECT_EQ(routes.size(), 9u);
}

TEST(TunerCli, SigtermWritesAPartialRecordAndContinueFinishes) {
  TempFolder dir;
  const std::string out = dir / "out";
  const std::string args = "tune " + kConvStack + " --out " + out +
                           " --sweep 'layout.activations=[nhwc|nchw|blocked] threads=[1|2]' --search full" + kQuick;
  const int pid = StartInBackground(args, dir / "err.txt");
  ASSERT_GT(pid, 0);
  // Wait until two candidates are stored, then ask it to stop.
  ASSERT_GE(WaitForStoredCandidates(out + "/tuning.db", 2), 2u);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  for (int i = 0; i < 300 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_NE(::kill(pid, 0), 0) << "the tuner did not stop within 30 s of SIGTERM";
  (void)status;
  const std::string err = testing::ReadWholeFile(dir / "err.txt");
  EXPECT_NE(err.find("interrupted by signal 15"), std::string::npos) << err;
  const json partial = ReadJson(out + "/record.json");
  ASSERT_TRUE(partial.is_object());
  EXPECT_EQ(partial["status"], "interrupted");
  EXPECT_TRUE(partial["selected"].is_null());
  EXPECT_FALSE(partial["unfinished"]["search_finished"].get<bool>());
  EXPECT_FALSE(std::filesystem::exists(out + "/selected.engine"));
  EXPECT_NE(testing::ReadWholeFile(out + "/audit.jsonl").find("\"outcome\":\"interrupted\""), std::string::npos);
  const size_t done = partial["unfinished"]["candidates_done"].get<size_t>();

  const Cli r = RunTool("switchyard", args + " --continue --retain-data");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.last["candidates"], 6);
  EXPECT_GE(r.last["reused"].get<size_t>(), done - 1);  // all but the baseline's own row
  const json rec = ReadJson(out + "/record.json");
  EXPECT_EQ(rec["status"], "complete");
  EXPECT_TRUE(rec["scope"]["not_covered"].is_array());
  EXPECT_EQ(rec["scope"]["covered"]["input_sets"].size(), 1u);
  // --retain-data keeps the tensors; by default they are gone with DIR/.work.
  EXPECT_TRUE(std::filesystem::exists(out + "/retained-data"));
  EXPECT_FALSE(std::filesystem::exists(out + "/.work"));
}

// SIGTERM while the baseline is built and measured: an
// interrupted record (nothing measured yet), no crash. A tuner once threw on the
// baseline's missing measurement there (found on the H200: BERT-base b32's reference).
// The global --max-memory reaches the candidates' workers: a candidate that allocates
// without end fails with the worker's out-of-memory message naming the limit (the
// --candidate-memory-mb backstop would end it without naming one), and the search finishes.
TEST(TunerCli, CandidatesInheritMaxMemory) {
  SY_SKIP_UNDER_SANITIZER();
  TempFolder dir;
  const Cli r = RunTool("switchyard_faulty", "--max-memory 1500M tune " + kConvStack + " --out " + (dir / "out") +
                                                 " --sweep 'test.fault=[none|oom_new]' --search full"
                                                 " --candidate-timeout 60s --candidate-memory-mb 6000" + kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json rec = ReadJson(dir / "out/record.json");
  const json* c = FindCandidate(rec, "test.fault=oom_new");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "crashed");
  const std::string err = (*c).value("error", "");
  EXPECT_NE(err.find("out of memory"), std::string::npos) << err;
  EXPECT_NE(err.find("under the memory limit"), std::string::npos) << err;
  EXPECT_NE(err.find("--max-memory"), std::string::npos) << err;
}

TEST(TunerCli, SigtermBeforeTheBaselineIsMeasuredWritesAnInterruptedRecord) {
  TempFolder dir;
  const std::string out = dir / "out";
  const std::string log_path = dir / "log.txt";
  const std::string err_path = dir / "err.txt";
  // Progress lines go to stdout (without --json): keep them to see when the baseline starts.
  std::string quick = kQuick;
  quick.erase(quick.find(" --json"), 7);
  const int pid = StartInBackground("tune " + kConvStack + " --out " + out + " --search full" + quick, err_path,
                                    log_path);
  ASSERT_GT(pid, 0);
  bool seen = false;
  for (int i = 0; i < 5000 && !seen; ++i) {
    seen = testing::ReadWholeFile(log_path).find("building the baseline") != std::string::npos;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(seen) << testing::ReadWholeFile(log_path);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  for (int i = 0; i < 300 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_NE(::kill(pid, 0), 0) << "the tuner did not stop within 30 s of SIGTERM";
  const std::string err = testing::ReadWholeFile(err_path);
  EXPECT_EQ(err.find("terminate called"), std::string::npos) << err;
  EXPECT_NE(err.find("interrupted by signal 15"), std::string::npos) << err;
  const json partial = ReadJson(out + "/record.json");
  ASSERT_TRUE(partial.is_object());
  EXPECT_EQ(partial["status"], "interrupted");
  EXPECT_FALSE(partial.contains("record_error")) << partial["record_error"];
  EXPECT_TRUE(partial["selected"].is_null());
  EXPECT_EQ(partial["unfinished"]["candidates_done"], 0) << partial["unfinished"];
  EXPECT_TRUE(std::filesystem::exists(out + "/record.md"));
}

bool HostHasBf16() {
  const Cli r = RunTool("switchyard", "routes " + kConvStack + " --json");
  return r.out.find("\"bf16\"") != std::string::npos;
}

// p50 of the conv stack at a route, from `switchyard bench --json`.
double ConvStackP50(const std::string& route) {
  const Cli r = RunTool("switchyard", "bench " + kConvStack + " --route '" + route + "' --warmup 3 --iterations 30 --json");
  return r.code == 0 && r.last.contains("p50_ms") ? r.last["p50_ms"].get<double>() : -1;
}

// Empty when bf16 is clearly ahead of fp32 on the conv stack in three alternating pairs,
// else which pair was not and its numbers. A bench that fails is a test failure, as before.
std::string Bf16NotClearlyAhead() {
  for (int pair = 0; pair < 3; ++pair) {
    const double fp32_ms = ConvStackP50("threads=1"), bf16_ms = ConvStackP50("precision=bf16 threads=1");
    if (fp32_ms <= 0 || bf16_ms <= 0) {
      ADD_FAILURE() << "the conv stack did not bench (fp32 " << fp32_ms << ", bf16 " << bf16_ms << ")";
      return "the conv stack did not bench";
    }
    if (bf16_ms * 1.5 > fp32_ms) {
      return "bf16 is not clearly faster on this CPU (p50 " + std::to_string(bf16_ms) + " ms against " +
             std::to_string(fp32_ms) + " ms at fp32, pair " + std::to_string(pair + 1) + " of 3)";
    }
  }
  return "";
}

TEST(TunerCli, EveryStrategyFindsTheClearlyFasterRouteAndItsOutputsHoldUp) {
  if (!HostHasBf16()) GTEST_SKIP() << "this CPU has no AVX512_BF16/AMX: no clearly faster route to plant";
  // bf16 is the planted route only where it is clearly faster: with AMX it is about 2x, but
  // oneDNN's AVX512_BF16 convolutions without AMX were slower than fp32 on an Intel Xeon
  // (ResNet-50 66 ms against 48 on 2 cores) and on a Zen 4-class EPYC (this stack 2.92 ms
  // against 1.64 at one thread). Three alternating pairs, each of which must show bf16
  // clearly ahead: a load burst during one fp32 measurement under `ctest -j` once planted a
  // route that was not faster (fp32 p50 7.6 ms against 1.6 ms quiet).
  if (const std::string why = Bf16NotClearlyAhead(); !why.empty()) {
    GTEST_SKIP() << why << ": no clearly faster route to plant";
  }
  TempFolder dir;
  // Two evaluation sets in the several-sets layout.
  std::vector<TensorMap> sets;
  for (int s = 0; s < 2; ++s) {
    auto in = GenerateInputs({InputDecl{"image", DataType::kFloat, {1, 3, 40, 40}}}, 100 + s);
    ASSERT_TRUE(in.ok());
    std::filesystem::create_directories(dir / ("data/set" + std::to_string(s)));
    ASSERT_TRUE(WriteNpy(dir / ("data/set" + std::to_string(s) + "/image.npy"), in->at("image")).ok());
    sets.push_back(*in);
  }
  const double threshold = 0.05;
  for (const std::string strategy : {"fast", "full", "mixed", "random", "greedy", "halving"}) {
    SCOPED_TRACE(strategy);
    // A strategy that keeps fp32 while bf16 is still clearly ahead runs once more before it
    // fails: on this 2-core box a load burst under `ctest -j` can cover a whole tune (the
    // halving run once measured both routes level, 1.98 ms, and the premise held again
    // right after). A tuner that cannot find the route fails twice.
    std::string out;
    Cli r;
    for (int attempt = 0; attempt < 2; ++attempt) {
      out = dir / ("out-" + strategy + (attempt ? "-again" : ""));
      r = RunTool("switchyard", "tune " + kConvStack + " --out " + out + " --data " + (dir / "data") +
                                  " --sweep 'precision=[fp32|bf16] memory.plan=[greedy_by_size|none] threads=1'"
                                  " --threshold 0.05 --search " + strategy +
                                  // Enough rounds that a loaded CI machine still gets a tight
                                  // interval; a quiet one stops after 6.
                                  " --min-rounds 6 --max-rounds 40 --confirm-rounds 60 --validate-sessions 2 --json");
      ASSERT_EQ(r.code, 0) << r.out << r.err;
      const std::string kept = r.last["selected"]["route"];
      if (kept.find("precision=bf16") != std::string::npos) break;
      // The premise is re-checked: under `ctest -j` load on a CPU without AMX the two
      // precisions trade places from one second to the next (Zen 4-class EPYC: bf16 1.8x
      // slower quiet, 1.5x faster with the other core busy). A tuner that misses a planted
      // route that is still clearly ahead fails here.
      if (const std::string why = Bf16NotClearlyAhead(); !why.empty()) {
        GTEST_SKIP() << strategy << " kept " << kept << " and the planted route no longer holds: " << why;
      }
    }
    const std::string route = r.last["selected"]["route"];
    EXPECT_NE(route.find("precision=bf16"), std::string::npos) << r.last.dump();
    EXPECT_GT(r.last["selected"]["speedup"].get<double>(), 1.2) << r.last.dump();
    if (strategy != "mixed") continue;
    // Independently: load selected.engine, run it on every set, compare with the
    // reference executor on the model at the requested tolerance.
    auto engine = ReadEngine(out + "/selected.engine");
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    EXPECT_EQ(engine->header.route, route);
    auto loaded = LoadedEngine::Create(std::move(*engine));
    ASSERT_TRUE(loaded.ok());
    auto graph = ImportModel(kConvStack);
    ASSERT_TRUE(graph.ok());
    auto ref = ReferenceExecutor::Create(*graph);
    ASSERT_TRUE(ref.ok());
    Session session(*loaded);
    for (const TensorMap& s : sets) {
      auto got = session.Run(s);
      auto want = ref->Run(s);
      ASSERT_TRUE(got.ok() && want.ok());
      const double err = RelativeL2(got->at("features"), want->at("features"));
      EXPECT_LE(err, threshold);
      EXPECT_GT(err, 1e-6) << "bf16 should differ from the fp32 reference at all";
    }
    const json rec = ReadJson(out + "/record.json");
    EXPECT_TRUE(rec["validation"]["passed"].get<bool>());
    EXPECT_EQ(rec["data"]["sets"].size(), 2u);
    EXPECT_EQ(rec["selected"]["accuracy"]["outputs"]["features"]["per_set"].size(), 2u);
    EXPECT_GT(rec["selected"]["speedup_ci95"][0].get<double>(), 1.02);
  }
}

TEST(TunerCli, RepairKeepsTheFewestNodesInFp32ThatPassTheGate) {
  if (!HostHasBf16()) GTEST_SKIP() << "this CPU has no AVX512_BF16/AMX: no reduced-precision route to repair";
  TempFolder dir;
  // bf16 over all four convolutions gives l2 ~2.5e-3 on this model: 1.5e-3 rejects it.
  // --repair on: repaired even where bf16 runs slower than fp32 (auto skips it there).
  const Cli r = RunTool("switchyard", "tune " + kConvStack + " --out " + (dir / "out") +
                                          " --sweep 'precision=[fp32|bf16] threads=1' --threshold 1.5e-3 --repair on" +
                                          kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json rec = ReadJson(dir / "out/record.json");
  const json& rep = rec["repair"];
  ASSERT_TRUE(rep.is_object()) << rec.dump(1);
  EXPECT_EQ(rep["route"], "precision=bf16 threads=1");
  ASSERT_EQ(rep["result"], "repaired") << rep.dump();
  const size_t kept = rep["kept_fp32"].size();
  EXPECT_GE(kept, 1u);
  EXPECT_LT(kept, 4u);
  // The prefix search ran first; the bisection only ever drops from what it kept.
  ASSERT_TRUE(rep["prefix_kept"].is_number_unsigned()) << rep.dump();
  EXPECT_GE(rep["prefix_kept"].get<size_t>(), kept);
  EXPECT_LE(rep["prefix_kept"].get<size_t>(), 4u);
  EXPECT_EQ(rep["minimal"].get<std::string>().rfind("1-minimal", 0), 0u) << rep.dump();
  EXPECT_TRUE(rep.contains("speed_given_up"));
  const json* repaired = FindCandidate(rec, rep["repaired_route"].get<std::string>());
  ASSERT_NE(repaired, nullptr);
  EXPECT_EQ((*repaired)["status"], "passed");
  EXPECT_LE((*repaired)["accuracy"]["outputs"]["features"]["worst"].get<double>(), 1.5e-3);
  // 1-minimal, checked independently: dropping any kept node from the fp32 set fails.
  for (const auto& node : rep["kept_fp32"]) {
    std::string route = "precision=bf16 threads=1";
    for (const auto& other : rep["kept_fp32"]) {
      if (other != node) route += " precision@" + other.get<std::string>() + "=fp32";
    }
    const Cli b = RunTool("switchyard", "build " + kConvStack + " --route '" + route + "' -o " + (dir / "x.engine"));
    ASSERT_EQ(b.code, 0) << b.err;
    auto e = ReadEngine(dir / "x.engine");
    ASSERT_TRUE(e.ok());
    auto loaded = LoadedEngine::Create(std::move(*e));
    auto graph = ImportModel(kConvStack);
    auto ref = ReferenceExecutor::Create(*graph);
    auto in = GenerateInputs({InputDecl{"image", DataType::kFloat, {1, 3, 40, 40}}}, 1);
    Session s(*loaded);
    auto got = s.Run(*in);
    auto want = ref->Run(*in);
    ASSERT_TRUE(got.ok() && want.ok());
    EXPECT_GT(RelativeL2(got->at("features"), want->at("features")), 1.5e-3) << "without " << node;
  }
}

// --repair auto weighs the failing bf16 route: where it measures no faster than the best
// passing candidate the repair is skipped (keeping nodes in fp32 only slows it); where it is
// faster the search stops early and leaves --repair-share of the budget to the repair.
TEST(TunerCli, AutoRepairWeighsTheFailingRoutesSpeed) {
  if (!HostHasBf16()) GTEST_SKIP() << "this CPU has no AVX512_BF16/AMX: no reduced-precision route to repair";
  TempFolder dir;
  const double budget = 4, share = 0.5;
  const Cli r = RunTool("switchyard", "tune " + kConvStack + " --out " + (dir / "out") +
                                          " --threshold 1.5e-3 --budget 4s --repair-share 0.5" + kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json rec = ReadJson(dir / "out/record.json");
  const json& rep = rec["repair"];
  ASSERT_TRUE(rep.is_object()) << rec.dump(1);
  ASSERT_TRUE(rep["unrepaired_speedup"].is_number()) << rep.dump();
  const double unrepaired = rep["unrepaired_speedup"].get<double>();
  double best = 1;
  for (const json& c : rec["candidates"]) {
    if (c["status"] == "passed" && c.contains("speedup") && c["route"] != rep.value("repaired_route", "")) {
      best = std::max(best, c["speedup"].get<double>());
    }
  }
  const std::string result = rep["result"];
  if (unrepaired <= best * 1.02) {
    EXPECT_EQ(result.rfind("skipped: ", 0), 0u) << rep.dump();
    EXPECT_EQ(rep["evaluations"], 0) << rep.dump();
    GTEST_SKIP() << "bf16 runs " << unrepaired << "x here, no faster than the best passing candidate (" << best
                 << "x): the repair was skipped as it should; the budget share is not exercised";
  }
  // Faster than every passing candidate: the repair ran on the share the search left it
  // (less what the measurement of the failing route and one candidate in flight took).
  EXPECT_NE(result.rfind("skipped", 0), 0u) << rep.dump();
  ASSERT_TRUE(rep["budget_left_s"].is_number()) << rep.dump();
  EXPECT_GT(rep["budget_left_s"].get<double>(), 0.25 * share * budget) << rep.dump();
  EXPECT_GE(rep["evaluations"].get<int>(), 1) << rep.dump();
}

TEST(TunerCli, NoRealGainKeepsTheBaseline) {
  TempFolder dir;
  const Cli r = RunTool("switchyard", "tune " + kConvStack + " --out " + (dir / "out") +
                                          " --sweep 'memory.plan=[greedy_by_size|linear_scan|none] threads=1' --search full"
                                          " --min-improvement 5" + kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  // The baseline is the default route with the knobs the sweep pins.
  EXPECT_EQ(r.last["baseline"]["route"], "threads=1") << r.last.dump();
  EXPECT_EQ(r.last["selected"]["route"], "threads=1") << r.last.dump();
  EXPECT_DOUBLE_EQ(r.last["selected"]["speedup"].get<double>(), 1.0);
  EXPECT_NE(r.last["reason"].get<std::string>().find("baseline kept"), std::string::npos);
  const json rec = ReadJson(dir / "out/record.json");
  EXPECT_TRUE(rec["decision"]["kept_baseline"].get<bool>());
  // The kept baseline went through the long-tail validation too.
  EXPECT_TRUE(rec["validation"]["passed"].get<bool>());
  EXPECT_EQ(rec["validation"]["engine"], "baseline");
}

// A budget the baseline alone uses up: the baseline is kept, and the record says that no
// other route was tried rather than that candidates failed the gate.
TEST(TunerCli, BudgetSpentByTheBaselineSaysNoCandidateWasTried) {
  TempFolder dir;
  const Cli r = RunTool("switchyard", "tune " + kConvStack + " --out " + (dir / "out") + " --budget 0.01s" + kQuick);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.last["candidates"], 0) << r.last.dump();
  EXPECT_EQ(r.last["stopped_by"], "budget") << r.last.dump();
  const std::string reason = r.last["reason"].get<std::string>();
  EXPECT_NE(reason.find("no other candidate was evaluated"), std::string::npos) << reason;
  EXPECT_NE(reason.find("0.010 s budget"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("accuracy gate"), std::string::npos) << reason;
  const json rec = ReadJson(dir / "out/record.json");
  EXPECT_TRUE(rec["decision"]["kept_baseline"].get<bool>());
  EXPECT_EQ(rec["decision"]["reason"], reason);
}

TEST(TunerCli, FailsPredictably) {
  TempFolder dir;
  Cli r = RunTool("switchyard", "tune " + kConvStack + " --out " + (dir / "a") + " --json");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("no evaluation data"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "a/selected.engine"));
  r = RunTool("switchyard", "tune " + kConvStack + " --out " + (dir / "b") + " --sweep 'memory.plan=none'" + kQuick);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("empty route space"), std::string::npos) << r.err;
  r = RunTool("switchyard", "tune " + kConvStack + " --out " + (dir / "c") + " --input-spec 'nope:float32[1]'" +
                                " --json");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("no input 'nope'"), std::string::npos) << r.err;
  r = RunTool("switchyard", "tune " + kConvStack + " --out " + (dir / "d") + " --search sideways" + kQuick);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("unknown search strategy"), std::string::npos) << r.err;
  r = RunTool("switchyard", "tune /nonexistent.onnx --out " + (dir / "e") + kQuick);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("/nonexistent.onnx"), std::string::npos) << r.err;
  // No route passes: the record says so, and no selected.engine is written.
  r = RunTool("switchyard", "tune " + kConvStack + " --out " + (dir / "f") +
                                " --sweep 'quant.weights=[none|int8]' --threshold 0" + kQuick);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("no route passes the accuracy gate"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "f/record.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "f/selected.engine"));
}

}  // namespace
}  // namespace switchyard
