// The tuner's parts: its statistics, gate, duration parsing and child processes. The
// end-to-end runs of `switchyard tune` are in tuner_cli_test.cc.
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

// ---- statistics ----

TEST(TunerStats, PairedSpeedupRecoversTheRatioWithATightInterval) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.02);
  std::vector<double> b, c;
  for (int i = 0; i < 60; ++i) {
    const double drift = 1 + 0.3 * std::sin(i * 0.3);  // the machine slows down and speeds up
    b.push_back(2.0 * drift * (1 + noise(rng)));
    c.push_back(1.0 * drift * (1 + noise(rng)));
  }
  const SpeedupEstimate e = PairedSpeedup(b, c);
  EXPECT_NEAR(e.speedup, 2.0, 0.03);
  EXPECT_LT(e.ci_low, e.speedup);
  EXPECT_GT(e.ci_high, e.speedup);
  EXPECT_LT(e.ci_low, 2.0 + 1e-9 + 0.02);
  EXPECT_GT(e.ci_high, 2.0 - 0.02);
  EXPECT_LT(e.RelativeHalfWidth(), 0.02);
  EXPECT_EQ(e.pairs, 60);
}

TEST(TunerStats, EqualEnginesGiveAnIntervalAroundOne) {
  // A 95% interval should contain the true ratio (1) in about 95% of experiments.
  int covered = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0, 0.05);
    std::vector<double> b, c;
    for (int i = 0; i < 40; ++i) {
      b.push_back(1 + noise(rng));
      c.push_back(1 + noise(rng));
    }
    const SpeedupEstimate e = PairedSpeedup(b, c);
    covered += e.ci_low <= 1.0 && e.ci_high >= 1.0;
    EXPECT_NEAR(e.speedup, 1.0, 0.05);
  }
  EXPECT_GE(covered, 34);  // 40 * 0.95 = 38, with room for the bootstrap's slight optimism
  // One pair says nothing about spread: an unbounded interval.
  const SpeedupEstimate one = PairedSpeedup({2.0}, {1.0});
  EXPECT_DOUBLE_EQ(one.speedup, 2.0);
  EXPECT_EQ(one.ci_low, 0);
  EXPECT_TRUE(std::isinf(one.ci_high));
}

// A candidate measured in one round only (a slow one whose round took most of the
// measurement's max_seconds: BERT-base b8 on 2 cores) has an infinite upper bound, which its
// worker's JSON carries as null. The tuner read it with json::value(key, 0.0), which throws on
// null: `switchyard tune --json` ended in std::terminate. It now reads as unbounded.
TEST(TunerStats, AOneRoundMeasurementCrossesTheWorkersJson) {
  const SpeedupEstimate one = PairedSpeedup({1.0}, {2.0});
  const json written = {{"speedup", one.speedup}, {"ci_low", one.ci_low}, {"ci_high", one.ci_high},
                        {"p50_ms", 2.0}, {"rounds", 1}};
  const json read = json::parse(written.dump());  // as the tuner reads the worker's result file
  ASSERT_TRUE(read.at("ci_high").is_null());
  tuner::Outcome oc;
  oc.c.status = "passed";
  oc.c.measurement = read;
  tuner::FillSpeedup(&oc);
  EXPECT_DOUBLE_EQ(oc.speedup, 0.5);
  EXPECT_EQ(oc.ci_low, 0);
  EXPECT_TRUE(std::isinf(oc.ci_high));
  EXPECT_EQ(oc.rounds, 1);
  const auto j = oc.ToJson();
  EXPECT_DOUBLE_EQ(j.at("p50_ms").get<double>(), 2.0);
  EXPECT_TRUE(j.at("speedup_ci95")[1].is_number_float());
  // A stored result without a measurement (failed, duplicate) reads as zeros, as before.
  tuner::Outcome failed;
  failed.c.status = "crashed";
  tuner::FillSpeedup(&failed);
  EXPECT_EQ(failed.speedup, 0);
  EXPECT_EQ(failed.ci_high, 0);
}

// ---- gate ----

Tensor Floats(std::vector<float> v) {
  Tensor t(DataType::kFloat, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.SetDouble(static_cast<int64_t>(i), v[i]);
  return t;
}

TEST(TunerGate, PassesWithinThresholdAndFailsOnNaNOrMissingOutput) {
  AccuracyPolicy p;
  p.all.threshold = 1e-2;
  const TensorMap ref = {{"y", Floats({1, 2, 3, 4})}};
  GateResult ok;
  CheckOutputs({{"y", Floats({1, 2, 3, 4.01f})}}, ref, "s0", p, &ok);
  EXPECT_TRUE(ok.passed);
  GateResult far;
  CheckOutputs({{"y", Floats({1, 2, 3, 5})}}, ref, "s1", p, &far);
  EXPECT_FALSE(far.passed);
  EXPECT_NE(far.first_failure.find("output 'y' on set 's1'"), std::string::npos) << far.first_failure;
  GateResult nan;
  CheckOutputs({{"y", Floats({1, 2, 3, std::nanf("")})}}, ref, "s2", p, &nan);
  EXPECT_FALSE(nan.passed);
  EXPECT_NE(nan.first_failure.find("NaN"), std::string::npos) << nan.first_failure;
  const json j = nan.ToJson(p);
  EXPECT_FALSE(j["outputs"]["y"]["passed"].get<bool>());
  EXPECT_TRUE(j["outputs"]["y"]["worst"].is_null());
  GateResult missing;
  CheckOutputs({}, ref, "s3", p, &missing);
  EXPECT_FALSE(missing.passed);
}

TEST(TunerGate, PerOutputOverridesAndTheirErrors) {
  AccuracyPolicy p;
  p.all.threshold = 1e-3;
  ASSERT_TRUE(p.AddOverride("logits:metric=cos").ok());
  EXPECT_EQ(p.For("logits").spec.metric, Metric::kCos);
  EXPECT_DOUBLE_EQ(p.For("logits").threshold, DefaultThreshold(Metric::kCos));
  ASSERT_TRUE(p.AddOverride("a:b:threshold=0.5,metric=linf").ok());  // names may hold ':'
  EXPECT_DOUBLE_EQ(p.For("a:b").threshold, 0.5);
  EXPECT_EQ(p.For("other").spec.metric, Metric::kL2);
  EXPECT_FALSE(p.AddOverride("x").ok());
  EXPECT_FALSE(p.AddOverride("x:metric=l7").ok());
  EXPECT_FALSE(p.AddOverride("x:threshold=-1").ok());
  EXPECT_FALSE(p.AddOverride("x:speed=3").ok());
  auto round = AccuracyPolicy::FromJson(p.ToJson());
  ASSERT_TRUE(round.ok());
  EXPECT_DOUBLE_EQ(round->For("a:b").threshold, 0.5);
  EXPECT_EQ(round->For("logits").spec.metric, Metric::kCos);
}

TEST(TunerDuration, ParsesUnitsAndRefusesGarbage) {
  EXPECT_DOUBLE_EQ(*ParseDuration("90s"), 90);
  EXPECT_DOUBLE_EQ(*ParseDuration("10m"), 600);
  EXPECT_DOUBLE_EQ(*ParseDuration("1.5h"), 5400);
  EXPECT_DOUBLE_EQ(*ParseDuration("30"), 30);
  EXPECT_FALSE(ParseDuration("").ok());
  EXPECT_FALSE(ParseDuration("ten").ok());
  EXPECT_FALSE(ParseDuration("5d").ok());
  EXPECT_FALSE(ParseDuration("-5s").ok());
}

// ---- child processes ----

TEST(TunerProcess, ExitCodesSignalsAndTimeouts) {
  TempFolder dir;
  ChildOptions o;
  o.log_path = dir / "log.txt";
  o.argv = {"/bin/sh", "-c", "echo hello; exit 3"};
  auto r = RunChild(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->signal, 0);
  EXPECT_NE(r->log_tail.find("hello"), std::string::npos);
  o.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
  r = RunChild(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->signal, SIGSEGV);
  EXPECT_NE(r->Describe().find("signal 11"), std::string::npos) << r->Describe();
  o.argv = {"/bin/sleep", "30"};
  o.timeout_s = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  r = RunChild(o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5);
  o.argv = {"/nonexistent/binary"};
  o.timeout_s = 0;
  r = RunChild(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 127);
}

}  // namespace
}  // namespace switchyard
