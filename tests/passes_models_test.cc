// The pass pipeline on the PyTorch-exported test models: outputs of the reference
// executor before and after RunPasses agree within rel-L2 1e-6 with every fusion on and
// with each fusion off in turn, and the expected fusions fire.
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "io/npy.h"
#include "onnx/importer.h"
#include "passes_test_util.h"

namespace switchyard::testing {
namespace {

struct ModelCase {
  std::string model, inputs;
};

std::vector<ModelCase> Models() {
  const std::string m = std::string(SY_SOURCE_DIR) + "/tests/models/";
  std::vector<ModelCase> cases;
  for (const char* n : {"resnet_tiny", "mobilenetv2_tiny", "mobilenetv3_tiny", "efficientnet_tiny",
                        "bert_tiny_op13", "bert_tiny_op17", "gpt2_tiny", "vit_tiny",
                        "text_detector_tiny", "text_recognizer_tiny"}) {
    cases.push_back({m + n + ".onnx", m + n + ".inputs"});
    cases.push_back({m + n + ".onnx", m + n + ".inputs2"});  // other dynamic sizes
  }
  const std::string ex = std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/";
  cases.push_back({ex + "model.onnx", ""});
  return cases;
}

TensorMap LoadInputs(const Graph& g, const ModelCase& c) {
  TensorMap inputs;
  for (ValueId id : g.inputs) {
    const std::string& name = g.value(id).name;
    const std::string path = c.inputs.empty()
        ? std::filesystem::path(c.model).parent_path().string() + "/" + name + ".npy"
        : c.inputs + "/" + name + ".npy";
    auto t = ReadNpy(path);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (t.ok()) inputs[name] = std::move(t).value();
  }
  return inputs;
}

std::string Stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

class PassesModelTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(PassesModelTest, ExactWithAllAndEachKnobOff) {
  const ModelCase& c = GetParam();
  auto g = ImportModel(c.model);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const TensorMap inputs = LoadInputs(*g, c);
  Graph opt;
  const BuildReport all = ExpectExact(*g, inputs, AllFuseKnobs(), &opt);
  std::string fired;
  for (const auto& [k, n] : all.fired) fired += " " + k + "=" + std::to_string(n);
  std::string ops;
  std::map<std::string, int> counts;
  for (const Node& n : opt.nodes) counts[n.op_type]++;
  for (const auto& [k, n] : counts) ops += " " + k + "=" + std::to_string(n);
  std::cout << Stem(c.model) << ": nodes " << g->nodes.size() << " -> " << opt.nodes.size()
            << "; fired:" << fired << "\n   ops:" << ops << "\n";
  // SY_PASSES_DUMP=1 prints the optimised graph (for investigating a missed fusion).
  if (std::getenv("SY_PASSES_DUMP")) {
    for (const Node& n : opt.nodes) {
      std::cout << "  " << n.op_type << " " << n.name << " (";
      for (ValueId i : n.inputs) {
        if (i == kNoValue) { std::cout << " -"; continue; }
        std::cout << " " << opt.value(i).name << ":" << opt.value(i).type.ToString() << (opt.IsConstant(i) ? "=c" : "");
      }
      std::cout << " ) ->";
      for (ValueId o : n.outputs) if (o != kNoValue) std::cout << " " << opt.value(o).name << ":" << opt.value(o).type.ToString();
      std::cout << "\n";
    }
  }
  for (const std::string& off : AllFuseKnobs()) {
    std::set<std::string> knobs = AllFuseKnobs();
    knobs.erase(off);
    SCOPED_TRACE(Stem(c.model) + " with " + off + " off");
    const BuildReport r = ExpectExact(*g, inputs, knobs);
    EXPECT_EQ(r.fired.count(off), 0u);
  }
  auto fired_at_least = [&](const char* knob, int n) {
    auto it = all.fired.find(knob);
    EXPECT_GE(it == all.fired.end() ? 0 : it->second, n) << Stem(c.model) << ": " << knob;
  };
  const std::string name = Stem(c.model);
  if (name == "resnet_tiny") {
    fired_at_least("fuse.conv_act", 4);
    EXPECT_EQ(CountOps(opt, "Relu"), 0);
  } else if (name == "bert_tiny_op13") {
    fired_at_least("fuse.layernorm", 5);
    fired_at_least("fuse.gelu", 2);
    fired_at_least("fuse.attention", 2);
    fired_at_least("fuse.gemm_epilogue", 4);
  } else if (name == "bert_tiny_op17") {
    fired_at_least("fuse.layernorm", 5);
    fired_at_least("fuse.attention", 2);
  } else if (name == "gpt2_tiny") {
    fired_at_least("fuse.layernorm", 5);
    fired_at_least("fuse.gelu", 2);
    fired_at_least("fuse.attention", 2);
    EXPECT_EQ(CountOps(opt, "Softmax"), 0);
  } else if (name == "vit_tiny") {
    fired_at_least("fuse.layernorm", 5);
    fired_at_least("fuse.attention", 2);
  } else if (name == "mobilenetv2_tiny") {
    fired_at_least("fuse.conv_act", 20);
  } else if (name == "mobilenetv3_tiny") {
    fired_at_least("fuse.conv_act", 20);
    fired_at_least("fuse.conv_scale", 1);  // a squeeze-excite block at 16x16
  } else if (name == "efficientnet_tiny") {
    fired_at_least("fuse.conv_act", 3);
    fired_at_least("fuse.conv_scale", 1);
  } else if (name == "text_detector_tiny") {
    fired_at_least("fuse.conv_bn", 1);  // ConvTranspose + BatchNormalization
  }
}

INSTANTIATE_TEST_SUITE_P(Models, PassesModelTest, ::testing::ValuesIn(Models()),
                         [](const auto& info) {
                           const std::string stem = Stem(info.param.model);
                           const bool second = info.param.inputs.ends_with("2");
                           return (stem == "model" ? std::string("tiny_cnn") : stem) + (second ? "_inputs2" : "");
                         });

}  // namespace
}  // namespace switchyard::testing

namespace switchyard::testing {
namespace {

// With every input dimension fixed (as the builder's --shapes does), the shape
// subgraphs fold away and GPT-2's constant causal mask becomes Attention's causal flag.
TEST(PassesModels, Gpt2WithStaticShapesGetsCausalAttention) {
  const std::string dir = std::string(SY_SOURCE_DIR) + "/tests/models/";
  auto g = ImportModel(dir + "gpt2_tiny.onnx");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto ids = ReadNpy(dir + "gpt2_tiny.inputs/input_ids.npy");
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  const ValueId in = g->inputs[0];
  g->value(in).type = TensorType::FromShape(ids->dtype(), ids->shape());
  ASSERT_TRUE(InferShapes(*g).ok());
  Graph opt;
  const BuildReport rep = ExpectExact(*g, {{g->value(in).name, *ids}}, AllFuseKnobs(), &opt);
  EXPECT_EQ(CountOps(opt, "Shape"), 0);
  int causal = 0;
  for (const Node& n : opt.nodes) {
    if (n.op_type == "Attention") causal += n.GetInt("causal", 0) == 1 && n.NumInputs() == 3;
  }
  EXPECT_EQ(causal, 2);
  EXPECT_GE(rep.fired.at("fuse.gemm_epilogue"), 8);
}

}  // namespace
}  // namespace switchyard::testing

namespace switchyard::testing {
namespace {

// Pipeline speed on a large model, when one is given (not in the repo: e.g. torchvision's
// ResNet-50 exported with do_constant_folding=False keeps its 53 BatchNormalizations):
//   SY_PASSES_BENCH_MODEL=/tmp/r50.onnx [SY_PASSES_BENCH_INPUT=/tmp/x.npy] switchyard_tests
TEST(PassesModels, LargeModelPipelineIsFast) {
  const char* path = std::getenv("SY_PASSES_BENCH_MODEL");
  if (!path) GTEST_SKIP() << "set SY_PASSES_BENCH_MODEL to an .onnx file";
  auto g = ImportModel(path);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Graph opt = *g;
  const auto t0 = std::chrono::steady_clock::now();
  auto rep = Optimize(opt, AllFuseKnobs());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  std::string fired;
  for (const auto& [k, n] : rep->fired) fired += " " + k + "=" + std::to_string(n);
  std::cout << path << ": " << g->nodes.size() << " -> " << opt.nodes.size() << " nodes in " << secs
            << " s;" << fired << "\n";
  EXPECT_LT(secs, 1.0);
  if (const char* input = std::getenv("SY_PASSES_BENCH_INPUT")) {
    auto x = ReadNpy(input);
    ASSERT_TRUE(x.ok()) << x.status().ToString();
    ExpectExact(*g, {{g->value(g->inputs[0]).name, *x}}, AllFuseKnobs());
  }
}

}  // namespace
}  // namespace switchyard::testing
