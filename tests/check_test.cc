// `switchyard check` end to end on tests/models/conv_stack.onnx: an inaccurate route
// (int8 weights; bf16 where the machine offers it) diverges first at the first Conv; the
// default route stays within a loose threshold everywhere; an engine is checked with its
// model; bad arguments are errors. Also MarkIntermediatesAsOutputs on the imported graph.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "io/npy.h"
#include "onnx/importer.h"
#include "test_util.h"
#include "tune/input_gen.h"
#include "tune/layerwise.h"

namespace switchyard {
namespace {

using json = nlohmann::json;
using testing::TempFolder;

using Cli = testing::CliRun;

Cli RunTool(const std::string& args) { return testing::RunBinary("switchyard", args); }

const std::string kConvStack = std::string(SY_SOURCE_DIR) + "/tests/models/conv_stack.onnx";
const std::string kTinyCnn = std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/model.onnx";

// Two evaluation sets of conv_stack inputs (image: float32[1,3,40,40]).
void WriteData(const std::string& dir) {
  for (int s = 0; s < 2; ++s) {
    InputDecl d;
    d.name = "image";
    d.shape = {1, 3, 40, 40};
    auto t = GenerateInputs({d}, 11 + s);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    const std::string set = dir + "/set" + std::to_string(s + 1);
    std::filesystem::create_directories(set);
    ASSERT_TRUE(WriteNpy(set + "/image.npy", t->at("image")).ok());
  }
}

TEST(Layerwise, EveryNodeOutputIsMarkedOnceInTopologicalOrder) {
  auto g = ImportModel(kConvStack);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::vector<std::string> added;
  const Graph m = MarkIntermediatesAsOutputs(*g, &added);
  EXPECT_EQ(added, (std::vector<std::string>{"conv0", "relu0", "conv1", "relu1", "conv2", "relu2", "conv3", "relu3"}));
  ASSERT_EQ(m.outputs.size(), 9u);
  EXPECT_EQ(m.value(m.outputs[0]).name, "features");  // the model's own outputs first
  EXPECT_EQ(g->outputs.size(), 1u);                   // the model itself is untouched
}

TEST(CheckCli, AnInt8RouteDivergesFirstAtTheFirstConv) {
  TempFolder dir;
  WriteData(dir / "data");
  const Cli r = RunTool("check " + kConvStack + " --route quant.weights=int8 --data " + (dir / "data") +
                        " --threshold 1e-4 --json");
  ASSERT_EQ(r.code, 3) << r.out << r.err;
  ASSERT_TRUE(r.last.is_object()) << r.out;
  EXPECT_EQ(r.last["verdict"], "diverges");
  EXPECT_EQ(r.last["first_diverging"]["node"], "conv0") << r.last.dump(1);
  EXPECT_EQ(r.last["first_diverging"]["op"], "Conv");
  EXPECT_GT(r.last["first_diverging"]["error"].get<double>(), 1e-4);
  // One row per value, in topological order, the pool (the model's output) last.
  const json& v = r.last["values"];
  ASSERT_EQ(v.size(), 9u) << v.dump(1);
  EXPECT_EQ(v[0]["value"], "conv0");
  EXPECT_EQ(v[8]["value"], "features");
  EXPECT_EQ(v[8]["graph_output"], true);
  for (size_t i = 1; i < v.size(); ++i) EXPECT_GE(v[i]["index"].get<int>(), v[i - 1]["index"].get<int>());
  // relu0 reads conv0: its input error is conv0's error.
  EXPECT_DOUBLE_EQ(v[1]["input_error"].get<double>(), v[0]["error"].get<double>());
  EXPECT_EQ(r.last["marked_values"], 8);
  EXPECT_EQ(r.last["engine_outputs_vs_reference_executor"]["passed"], false);
  EXPECT_EQ(r.last["sets"], 2);

  // The text form names the node and says that fusions were blocked.
  const Cli t = RunTool("check " + kConvStack + " --route quant.weights=int8 --data " + (dir / "data") +
                        " --threshold 1e-4");
  EXPECT_EQ(t.code, 3) << t.err;
  EXPECT_NE(t.out.find("first diverging node: conv0 (Conv"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("blocks fusions"), std::string::npos) << t.out;
}

TEST(CheckCli, Bf16DivergesFirstAtTheFirstConvWhereOffered) {
  const Cli routes = RunTool("routes " + kConvStack + " --json");
  ASSERT_EQ(routes.code, 0) << routes.err;
  bool offered = false;  // the help text names bf16 everywhere; the allowed values only where it runs
  for (const auto& k : routes.last["knobs"]) {
    if (k["option"] != "precision") continue;
    for (const auto& v : k["allowed_values"]) offered |= v == "bf16";
  }
  if (!offered) GTEST_SKIP() << "`switchyard routes` offers no bf16 on this machine";
  TempFolder dir;
  WriteData(dir / "data");
  const Cli r = RunTool("check " + kConvStack + " --route precision=bf16 --data " + (dir / "data") +
                        " --threshold 1e-5 --json");
  ASSERT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_EQ(r.last["first_diverging"]["node"], "conv0") << r.last.dump(1);
}

TEST(CheckCli, TheDefaultRouteStaysWithinALooseThreshold) {
  TempFolder dir;
  WriteData(dir / "data");
  const Cli r = RunTool("check " + kConvStack + " --data " + (dir / "data") + " --threshold 1e-3 --json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.last["verdict"], "within threshold");
  EXPECT_TRUE(r.last["first_diverging"].is_null());
  ASSERT_EQ(r.last["values"].size(), 9u);
  for (const auto& v : r.last["values"]) {
    EXPECT_EQ(v["passed"], true) << v.dump();
    EXPECT_LT(v["error"].get<double>(), 1e-5) << v.dump();  // fp32 reorderings only
  }
  EXPECT_EQ(r.last["engine_outputs_vs_reference_executor"]["passed"], true);
}

TEST(CheckCli, AnEngineIsCheckedWithItsModel) {
  TempFolder dir;
  WriteData(dir / "data");
  const std::string engine = dir / "int8.engine";
  ASSERT_EQ(RunTool("build " + kConvStack + " --route quant.weights=int8 -o " + engine).code, 0);
  const Cli r = RunTool("check " + engine + " --model " + kConvStack + " --data " + (dir / "data") +
                        " --threshold 1e-4 --json");
  ASSERT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_EQ(r.last["route"], "quant.weights=int8");
  EXPECT_EQ(r.last["first_diverging"]["node"], "conv0");

  const Cli no_model = RunTool("check " + engine + " --data " + (dir / "data"));
  EXPECT_EQ(no_model.code, 1);
  EXPECT_NE(no_model.err.find("add --model"), std::string::npos) << no_model.err;
  const Cli wrong = RunTool("check " + engine + " --model " + kTinyCnn + " --data " + (dir / "data"));
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("is not the model engine"), std::string::npos) << wrong.err;
  const Cli route = RunTool("check " + engine + " --model " + kConvStack + " --route threads=1 --data " + (dir / "data"));
  EXPECT_EQ(route.code, 1);
  EXPECT_NE(route.err.find("its route is fixed"), std::string::npos) << route.err;
  const Cli missing = RunTool("check " + (dir / "nope.onnx") + " --data " + (dir / "data"));
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
  const Cli bad_route = RunTool("check " + kConvStack + " --route no.such=knob --data " + (dir / "data"));
  EXPECT_EQ(bad_route.code, 1);
  EXPECT_NE(bad_route.err.find("no.such"), std::string::npos) << bad_route.err;
}

}  // namespace
}  // namespace switchyard
