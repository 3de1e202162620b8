// The `switchyard` CLI on good and bad input: exit codes, messages on stderr naming the
// file / node / input and the reason, and the files `run` writes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "build/target.h"
#include "io/npy.h"
#include "test_util.h"

namespace switchyard {
namespace {

namespace fs = std::filesystem;
using testing::AddInput;
using testing::AddNode;
using testing::AddOutput;
using testing::ReadWholeFile;
using testing::SaveModel;
using testing::TempFolder;
using testing::WriteFile;

constexpr int kFloat = onnx::TensorProto::FLOAT;

struct CliResult {
  int exit_code = -1;  // -1: did not exit normally (signal)
  std::string out, err;
};

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class Cli : public ::testing::Test {
 protected:
  CliResult Run(const std::vector<std::string>& args) {
    std::string cmd = Quote(SY_BINARY_DIR "/bin/switchyard");
    for (const auto& a : args) cmd += " " + Quote(a);
    const std::string out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    cmd = "timeout 60 " + cmd + " >" + Quote(out) + " 2>" + Quote(err);
    const int status = std::system(cmd.c_str());
    CliResult r;
    if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    r.out = ReadWholeFile(out);
    r.err = ReadWholeFile(err);
    return r;
  }

  // x: float[2,3] -> Identity -> "out/put:0" (a name that is no valid file name).
  std::string GoodModel() {
    onnx::ModelProto m = testing::MakeModel();
    AddInput(m, "x", kFloat, {2, 3});
    AddNode(m, "Identity", {"x"}, {"out/put:0"}, "copy");
    AddOutput(m, "out/put:0", kFloat, {2, 3});
    return SaveModel(m, dir_ / "good.onnx");
  }

  std::string SaveNpy(const std::string& name, const Tensor& t) {
    const std::string path = dir_ / name;
    EXPECT_TRUE(WriteNpy(path, t).ok());
    return path;
  }

  // Asserts a clean failure (exit 1, "error:" on stderr) naming every needle.
  void ExpectFails(const CliResult& r, std::initializer_list<std::string> needles) {
    EXPECT_EQ(r.exit_code, 1) << "stderr: " << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    for (const auto& n : needles) {
      EXPECT_NE(r.err.find(n), std::string::npos) << "stderr lacks '" << n << "': " << r.err;
    }
  }

  void SetUp() override {
    if (!fs::exists(SY_BINARY_DIR "/bin/switchyard")) GTEST_SKIP() << "switchyard not built";
  }

  TempFolder dir_;
  const Tensor x_ = Tensor::FromFloat({1, 2, 3, 4, 5, 6}, {2, 3});
};

TEST_F(Cli, RunWritesSanitizedOutputName) {
  const std::string model = GoodModel();
  const std::string x = SaveNpy("x.npy", x_);
  const std::string outdir = dir_ / "outs";
  CliResult r = Run({"run", model, "--input", "x=" + x, "--outputs", outdir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(outdir + "/out_put_0.npy")) << r.out;
  auto y = ReadNpy(outdir + "/out_put_0.npy");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(*y, x_);
  EXPECT_NE(r.out.find("out/put:0"), std::string::npos) << r.out;
  // Only the output file, no temporaries, and nothing written outside the folder.
  int files = 0;
  for (const auto& e : fs::directory_iterator(outdir)) {
    ++files;
    EXPECT_EQ(e.path().filename(), "out_put_0.npy");
  }
  EXPECT_EQ(files, 1);
  EXPECT_FALSE(fs::exists(outdir + "/out"));
  // A lone FILE names the single input.
  r = Run({"run", model, "--input", x, "--outputs", outdir});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// `bench --profile` times every step of its runs and says how much of a run lies between
// the steps: the median run, the median of the runs' step sums and their difference.
// Relu -> Sigmoid -> Tanh over 256K floats (one fused elementwise step, named after the
// first node) takes measurable time.
TEST_F(Cli, BenchProfileSplitsARunIntoStepsAndTheTimeBetween) {
  onnx::ModelProto m = testing::MakeModel();
  AddInput(m, "x", kFloat, {256, 1024});
  AddNode(m, "Relu", {"x"}, {"a"}, "relu");
  AddNode(m, "Sigmoid", {"a"}, {"b"}, "sigmoid");
  AddNode(m, "Tanh", {"b"}, {"y"}, "tanh");
  AddOutput(m, "y", kFloat, {256, 1024});
  const std::string model = SaveModel(m, dir_ / "chain.onnx");
  const CliResult r = Run({"bench", model, "--iterations", "5", "--profile"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("profile: 5 runs, sum of the steps' medians"), std::string::npos) << r.out;
  const size_t at = r.out.find("median run ");
  ASSERT_NE(at, std::string::npos) << r.out;
  double run = -1, steps = -1, between = -1;
  ASSERT_EQ(std::sscanf(r.out.c_str() + at, "median run %lf ms, of which in steps %lf ms (between steps: %lf ms)",
                        &run, &steps, &between), 3) << r.out;
  EXPECT_GT(steps, 0) << r.out;
  EXPECT_GE(run, steps) << r.out;
  EXPECT_NEAR(between, run - steps, 0.0015) << r.out;
  EXPECT_NE(r.out.find("slowest steps:\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  relu ("), std::string::npos) << r.out;
}

// `bench --json` lists every timed run's latency in run order (latencies_ms), as
// bench/ort_bench.js does for ORT: the runs behind p50 and min_ms.
TEST_F(Cli, BenchJsonListsEveryRunsLatency) {
  const CliResult r = Run({"bench", GoodModel(), "--iterations", "7", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string last = r.out;  // the JSON object is the last line
  while (!last.empty() && last.back() == '\n') last.pop_back();
  last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
  auto j = nlohmann::json::parse(last, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_TRUE(j.contains("latencies_ms")) << r.out;
  const std::vector<double> l = j["latencies_ms"].get<std::vector<double>>();
  ASSERT_EQ(l.size(), 7u) << r.out;
  EXPECT_EQ(j["runs"].get<int64_t>(), 7);
  EXPECT_DOUBLE_EQ(*std::min_element(l.begin(), l.end()), j["min_ms"].get<double>());
  for (double v : l) EXPECT_GT(v, 0);
}

TEST_F(Cli, CollidingSanitizedOutputNamesDoNotOverwrite) {
  onnx::ModelProto m = testing::MakeModel();
  AddInput(m, "x", kFloat, {2, 3});
  AddInput(m, "z", kFloat, {1});
  AddNode(m, "Identity", {"x"}, {"a/b"}, "first");
  AddNode(m, "Identity", {"z"}, {"a:b"}, "second");
  AddOutput(m, "a/b", kFloat, {2, 3});
  AddOutput(m, "a:b", kFloat, {1});
  const std::string model = SaveModel(m, dir_ / "collide.onnx");
  const Tensor z = Tensor::FromFloat({9}, {1});
  const std::string outdir = dir_ / "outs";
  CliResult r = Run({"run", model, "-i", "x=" + SaveNpy("x.npy", x_), "-i",
                     "z=" + SaveNpy("z.npy", z), "-o", outdir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto first = ReadNpy(outdir + "/a_b.npy");
  auto second = ReadNpy(outdir + "/a_b_2.npy");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(*first, x_);
  EXPECT_EQ(*second, z);
  EXPECT_NE(r.out.find("a:b: float32[1] -> " + outdir + "/a_b_2.npy"), std::string::npos) << r.out;
}

TEST_F(Cli, InspectGoodModel) {
  const std::string model = GoodModel();
  CliResult r = Run({"inspect", model});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("x: float32[2,3]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unsupported ops: none"), std::string::npos) << r.out;
  r = Run({"inspect", model, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["inputs"][0]["name"], "x");
  EXPECT_EQ(j["outputs"][0]["name"], "out/put:0");
  EXPECT_EQ(j["op_histogram"]["Identity"], 1);
}

TEST_F(Cli, BadModelFiles) {
  WriteFile(dir_ / "empty.onnx", "");
  ExpectFails(Run({"inspect", dir_ / "empty.onnx"}), {"empty.onnx", "empty"});
  WriteFile(dir_ / "notes.txt", "just some text, not a model\n");
  ExpectFails(Run({"inspect", dir_ / "notes.txt"}), {"notes.txt"});
  std::string bytes = ReadWholeFile(GoodModel());
  WriteFile(dir_ / "half.onnx", bytes.substr(0, bytes.size() / 2));
  ExpectFails(Run({"inspect", dir_ / "half.onnx", "--json"}), {"half.onnx", "truncated"});
  ExpectFails(Run({"run", dir_ / "half.onnx", "--outputs", dir_ / "o"}), {"half.onnx"});
  ExpectFails(Run({"inspect", dir_ / "absent.onnx"}), {"absent.onnx", "does not exist"});
}

TEST_F(Cli, CycleAndDanglingNamesTheNode) {
  onnx::ModelProto m = testing::MakeModel();
  AddInput(m, "x", kFloat, {2});
  AddNode(m, "Identity", {"b"}, {"a"}, "first");
  AddNode(m, "Identity", {"a"}, {"b"}, "second");
  AddOutput(m, "b", kFloat, {2});
  ExpectFails(Run({"inspect", SaveModel(m, dir_ / "cycle.onnx")}),
              {"cycle.onnx", "cycle", "'first'", "'second'"});
  m.mutable_graph()->mutable_node(0)->set_input(0, "ghost");
  ExpectFails(Run({"inspect", SaveModel(m, dir_ / "dangling.onnx")}),
              {"dangling.onnx", "'first'", "'ghost'"});
}

TEST_F(Cli, UnsupportedOpsInspectListsRunRefuses) {
  onnx::ModelProto m = testing::MakeModel();
  AddInput(m, "x", kFloat, {2});
  AddNode(m, "NoSuchOpA", {"x"}, {"a"}, "n1");
  AddNode(m, "NoSuchOpB", {"a"}, {"y"}, "n2");
  AddOutput(m, "y", kFloat, {2});
  const std::string model = SaveModel(m, dir_ / "unsupported.onnx");
  CliResult r = Run({"inspect", model});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NoSuchOpA (1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NoSuchOpB (1)"), std::string::npos) << r.out;
  const std::string x = SaveNpy("x2.npy", Tensor::FromFloat({1, 2}, {2}));
  ExpectFails(Run({"run", model, "--input", "x=" + x, "--outputs", dir_ / "o"}),
              {"unsupported.onnx", "NoSuchOpA", "NoSuchOpB"});
}

TEST_F(Cli, BadInputFiles) {
  const std::string model = GoodModel();
  const std::string out = dir_ / "o";
  auto run_with = [&](const std::string& input_arg) {
    return Run({"run", model, "--input", input_arg, "--outputs", out});
  };
  // Wrong dtype.
  const std::string i64 = SaveNpy("i64.npy", Tensor::FromInt64({1, 2, 3, 4, 5, 6}, {2, 3}));
  ExpectFails(run_with("x=" + i64), {"input 'x'", "float32", "int64"});
  // Wrong shape.
  const std::string wide = SaveNpy("wide.npy", Tensor::FromFloat(std::vector<float>(8), {2, 4}));
  ExpectFails(run_with("x=" + wide), {"input 'x'", "[2,3]", "[2,4]"});
  const std::string flat = SaveNpy("flat.npy", Tensor::FromFloat(std::vector<float>(6), {6}));
  ExpectFails(run_with("x=" + flat), {"input 'x'", "rank 2"});
  // Wrong format.
  WriteFile(dir_ / "x.txt", "1 2 3\n4 5 6\n");
  ExpectFails(run_with("x=" + (dir_ / "x.txt")), {"x.txt", "'.txt'"});
  WriteFile(dir_ / "corrupt.npy", "\x93NUMPY garbage");
  ExpectFails(run_with("x=" + (dir_ / "corrupt.npy")), {"corrupt.npy", "not a valid .npy"});
  const std::string good = SerializeNpy(x_);
  WriteFile(dir_ / "trunc.npy", good.substr(0, good.size() - 5));
  ExpectFails(run_with("x=" + (dir_ / "trunc.npy")), {"trunc.npy", "needs 24 data bytes"});
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  WriteFile(dir_ / "fortran.npy", fortran);
  ExpectFails(run_with("x=" + (dir_ / "fortran.npy")), {"fortran.npy", "Fortran"});
  ExpectFails(run_with("x=" + (dir_ / "absent.npy")), {"absent.npy", "does not exist"});
  EXPECT_FALSE(fs::exists(out + "/out_put_0.npy"));
}

TEST_F(Cli, InputNamesAreChecked) {
  // Two inputs, so a lone FILE is ambiguous and names must match.
  onnx::ModelProto m = testing::MakeModel();
  AddInput(m, "alpha", kFloat, {2, 3});
  AddInput(m, "beta", kFloat, {2, 3});
  AddNode(m, "Identity", {"alpha"}, {"ya"}, "ia");
  AddNode(m, "Identity", {"beta"}, {"yb"}, "ib");
  AddOutput(m, "ya", kFloat, {2, 3});
  AddOutput(m, "yb", kFloat, {2, 3});
  const std::string model = SaveModel(m, dir_ / "two.onnx");
  const std::string x = SaveNpy("x.npy", x_);
  const std::string out = dir_ / "o";
  ExpectFails(Run({"run", model, "--input", "gamma=" + x, "--input", "alpha=" + x, "--outputs", out}),
              {"'gamma'", "alpha, beta"});
  // A value that exists but is not a graph input.
  ExpectFails(Run({"run", model, "--input", "ya=" + x, "--input", "alpha=" + x, "--outputs", out}),
              {"'ya'", "alpha, beta"});
  ExpectFails(Run({"run", model, "--input", "alpha=" + x, "--outputs", out}),
              {"input 'beta'", "not given"});
  ExpectFails(Run({"run", model, "--input", x, "--outputs", out}), {"2 inputs", "NAME=FILE"});
  ExpectFails(Run({"run", model, "--input", "alpha=" + x, "--input", "alpha=" + x, "--outputs", out}),
              {"'alpha'", "twice"});
  CliResult ok = Run({"run", model, "-i", "alpha=" + x, "-i", "beta=" + x, "-o", out});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(out + "/ya.npy"));
  EXPECT_TRUE(fs::exists(out + "/yb.npy"));
}

TEST_F(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(Run({}).exit_code, 2);
  EXPECT_EQ(Run({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(Run({"run", GoodModel()}).exit_code, 2);  // --outputs is required
  EXPECT_EQ(Run({"--version"}).exit_code, 0);
}


// ---- --target (no GPU needed: CI has none; the GPU runs are the lead's tests) ----

const std::string kConvStackModel = std::string(SY_SOURCE_DIR) + "/tests/models/conv_stack.onnx";

TEST_F(Cli, RoutesTargetCudaListsCudaKnobsOrSaysTheBuildHasNoCuda) {
  CliResult r = Run({"routes", kConvStackModel, "--target", "cuda", "--json"});
#ifdef SWITCHYARD_WITH_CUDA
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  std::map<std::string, std::vector<std::string>> knobs;
  for (const auto& k : j["knobs"]) knobs[k["option"]] = k["allowed_values"].get<std::vector<std::string>>();
  ASSERT_TRUE(knobs.count("precision")) << r.out;
  for (const char* v : {"fp32", "tf32", "fp16", "bf16"}) {
    EXPECT_NE(std::find(knobs["precision"].begin(), knobs["precision"].end(), v), knobs["precision"].end())
        << "precision lacks " << v << ": " << r.out;
  }
  EXPECT_TRUE(knobs.count("cuda.graphs")) << r.out;
  EXPECT_TRUE(knobs.count("kernel.conv")) << r.out;
  EXPECT_FALSE(knobs.count("threads")) << "the cuda target has no threads knob: " << r.out;
  // The text form names the target's fingerprint.
  r = Run({"routes", kConvStackModel, "--target", "cuda"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("on cuda|sm_"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cuda.graphs="), std::string::npos) << r.out;
#else
  ExpectFails(r, {"--target", "'cuda'", "no CUDA support"});
#endif
  // cpu is unchanged: the default and --target cpu print the same knobs.
  CliResult cpu = Run({"routes", kConvStackModel, "--json"});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  CliResult cpu2 = Run({"routes", kConvStackModel, "--target", "cpu", "--json"});
  EXPECT_EQ(cpu.out, cpu2.out);
  EXPECT_EQ(cpu.out.find("cuda.graphs"), std::string::npos) << cpu.out;
}

TEST_F(Cli, UnknownTargetFailsNamingTheValidTargets) {
  const std::string model = GoodModel();
  const std::string x = SaveNpy("x.npy", x_);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"routes", kConvStackModel, "--target", "bogus"},
           {"build", model, "--target", "bogus", "-o", dir_ / "e.engine"},
           {"bench", model, "--target", "bogus", "--iterations", "1"},
           {"run", model, "--target", "bogus", "-i", x, "-o", dir_ / "o"},
           {"tune", kConvStackModel, "--target", "bogus", "--out", dir_ / "t",
            "--input-spec", "image:float32[1,3,40,40]"}}) {
    CliResult r = Run(args);
    ExpectFails(r, {"unknown target 'bogus'", "cpu"});
  }
  EXPECT_FALSE(fs::exists(dir_ / "e.engine"));
  EXPECT_FALSE(fs::exists(dir_ / "t"));  // refused before the output folder is made
}

TEST_F(Cli, AnEngineRunsOnItsOwnTargetAndAConflictingTargetIsAnError) {
  const std::string model = GoodModel();
  const std::string x = SaveNpy("x.npy", x_);
  const std::string engine = dir_ / "good.engine";
  CliResult b = Run({"build", model, "--target", "cpu", "-o", engine});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  // --target cpu on a cpu engine agrees; --target cuda conflicts, naming both.
  CliResult r = Run({"run", engine, "--target", "cpu", "-i", x, "-o", dir_ / "o1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectFails(Run({"run", engine, "--target", "cuda", "-i", x, "-o", dir_ / "o2"}),
              {"--target 'cuda'", "good.engine", "target 'cpu'"});
  ExpectFails(Run({"bench", engine, "--target", "cuda", "--iterations", "1"}), {"'cuda'", "'cpu'"});
  // run MODEL --target cpu builds the model for the target and runs the engine: the same
  // values as the reference executor for an Identity.
  r = Run({"run", model, "--target", "cpu", "-i", x, "-o", dir_ / "o3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto y = ReadNpy(dir_ / "o3/out_put_0.npy");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(*y, x_);
}

TEST_F(Cli, RunningOnCudaWithoutAGpuIsAClearError) {
  auto cuda = Target::ForName("cuda");
  if (cuda.ok() && cuda->gpu.present) GTEST_SKIP() << "a GPU is present (the GPU tests cover running)";
  const std::string model = GoodModel();
  const std::string x = SaveNpy("x.npy", x_);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"bench", model, "--target", "cuda", "--iterations", "1"},
           {"run", model, "--target", "cuda", "-i", x, "-o", dir_ / "o"},
           {"tune", kConvStackModel, "--target", "cuda", "--out", dir_ / "t",
            "--input-spec", "image:float32[1,3,40,40]"}}) {
    CliResult r = Run(args);
    ExpectFails(r, {"cuda"});
    EXPECT_TRUE(r.err.find("no CUDA support") != std::string::npos ||
                r.err.find("no usable GPU") != std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "o"));
  EXPECT_FALSE(fs::exists(dir_ / "t"));
}

}  // namespace
}  // namespace switchyard
