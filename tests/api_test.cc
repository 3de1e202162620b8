// The public API: load an engine, run it concurrently from many threads, identical
// outputs equal to a single-threaded run; bad inputs are errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "build/builder.h"
#include "io/npy.h"
#include "onnx/importer.h"
#include "switchyard/engine.h"

namespace switchyard {
namespace {

std::string BuildTiny() {
  auto g = ImportModel(std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/model.onnx");
  EXPECT_TRUE(g.ok());
  const Target target = Target::HostCpu();
  const RouteSpace space = RouteSpace::For(*g, target);
  BuildOptions opt;
  EXPECT_TRUE(ParseShapeArg("input=[1..4]x3x32x32", &opt.shapes).ok());
  auto e = BuildEngine(*g, space, Route(), target, opt, nullptr);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  const std::string path = ::testing::TempDir() + "/api_tiny.engine";
  EXPECT_TRUE(WriteEngine(path, *e).ok());
  return path;
}

TEST(PublicApi, ConcurrentRunsMatchSingleRun) {
  auto runner = EngineRunner::Load(BuildTiny());
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  ASSERT_EQ((*runner)->inputs().size(), 1u);
  EXPECT_EQ((*runner)->inputs()[0].min_shape, (std::vector<int64_t>{1, 3, 32, 32}));
  EXPECT_EQ((*runner)->inputs()[0].max_shape, (std::vector<int64_t>{4, 3, 32, 32}));
  auto x = ReadNpy(std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/input.npy");
  ASSERT_TRUE(x.ok());
  std::vector<float> v(x->data<float>(), x->data<float>() + x->numel());
  std::map<std::string, HostTensor> in = {{"input", HostTensor::FromFloats(x->shape(), v)}};
  auto single = (*runner)->Run(in);
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  auto want = ReadNpy(std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/expected_probabilities.npy");
  ASSERT_TRUE(want.ok());
  const HostTensor& p = single->at("probabilities");
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(p.floats()[i], want->data<float>()[i], 1e-5);

  constexpr int kThreads = 8, kRuns = 20;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        auto out = (*runner)->Run(in);
        if (!out.ok() || out->at("probabilities").data != p.data) ++mismatches[static_cast<size_t>(t)];
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[static_cast<size_t>(t)], 0) << "thread " << t;

  // A batch of 3 (inside the built range) works; 5 (outside) and bad bytes are refused.
  std::vector<float> three(v.size() * 3, 0.5f);
  auto b3 = (*runner)->Run({{"input", HostTensor::FromFloats({3, 3, 32, 32}, three)}});
  ASSERT_TRUE(b3.ok()) << b3.status().ToString();
  EXPECT_EQ(b3->at("probabilities").shape, (std::vector<int64_t>{3, 10}));
  std::vector<float> five(v.size() * 5, 0.5f);
  EXPECT_FALSE((*runner)->Run({{"input", HostTensor::FromFloats({5, 3, 32, 32}, five)}}).ok());
  HostTensor bad = HostTensor::FromFloats({1, 3, 32, 32}, v);
  bad.data.resize(10);
  EXPECT_FALSE((*runner)->Run({{"input", bad}}).ok());
}

TEST(PublicApi, MissingFileIsAnError) {
  auto r = EngineRunner::Load("/nonexistent/x.engine");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/x.engine"), std::string::npos);
}

}  // namespace
}  // namespace switchyard
