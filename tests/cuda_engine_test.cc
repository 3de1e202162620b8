// The cuda target end to end. Without a GPU (CI) the builder half still runs: knobs on the
// cuda target, engines built for it (header, fingerprint, providers, fp16 lowering, fixed
// shapes only), refusal to run without a device. With a GPU every test model is built for
// the default route and for each single-knob route and its outputs are compared with the
// reference executor (fp32 1e-4 relative L2, tf32 1e-2, fp16 2e-2, bf16 5e-2); the GPU
// tests skip with a message when no device is present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "build/builder.h"
#include "io/npy.h"
#include "onnx/importer.h"
#include "reference/executor.h"
#include "route/route.h"
#include "runtime/session.h"

namespace switchyard {
namespace {

struct ModelCase {
  std::string name;
  std::string model, inputs;  // inputs: folder of NAME.npy
};

std::vector<ModelCase> Models() {
  const std::string m = std::string(SY_SOURCE_DIR) + "/tests/models/";
  std::vector<ModelCase> cases;
  for (const char* n : {"resnet_tiny", "mobilenetv2_tiny", "bert_tiny_op17", "gpt2_tiny", "vit_tiny"}) {
    cases.push_back({n, m + n + ".onnx", m + n + ".inputs"});
  }
  const std::string ex = std::string(SY_SOURCE_DIR) + "/examples/tiny_cnn/";
  cases.push_back({"tiny_cnn", ex + "model.onnx", ex});
  return cases;
}

TensorMap LoadInputs(const Graph& g, const ModelCase& c) {
  TensorMap inputs;
  for (ValueId id : g.inputs) {
    const std::string& name = g.value(id).name;
    auto t = ReadNpy(c.inputs + "/" + name + ".npy");
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (t.ok()) inputs[name] = std::move(t).value();
  }
  return inputs;
}

// Fixes every input's shape to the given tensors' shapes (the cuda target is static).
BuildOptions FixedShapes(const TensorMap& inputs) {
  BuildOptions opt;
  for (const auto& [name, t] : inputs) {
    std::vector<DimRange> dims;
    for (int64_t d : t.shape()) dims.push_back({d, d, d});
    opt.shapes[name] = dims;
  }
  return opt;
}

double RelL2(const Tensor& got, const Tensor& want) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.GetDouble(i), w = want.GetDouble(i);
    if (std::isnan(g)) return INFINITY;
    num += (g - w) * (g - w);
    den += w * w;
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

Result<Target> CudaTarget() { return Target::ForName("cuda"); }

// Skips (visibly) when this build has no CUDA target.
#define REQUIRE_CUDA_BUILD(t)                                                   \
  auto t##_r = CudaTarget();                                                    \
  if (!t##_r.ok()) GTEST_SKIP() << "cuda target not built: " << t##_r.status().message(); \
  const Target& t = *t##_r

TEST(CudaBuild, KnobsOfTheCudaTarget) {
  REQUIRE_CUDA_BUILD(target);
  auto g = ImportModel(Models()[0].model);
  ASSERT_TRUE(g.ok());
  const RouteSpace space = RouteSpace::For(*g, target);
  ASSERT_NE(space.Find("cuda.graphs"), nullptr);
  EXPECT_EQ(space.Find("threads"), nullptr);
  EXPECT_EQ(space.Find("quant.weights"), nullptr);
  ASSERT_NE(space.Find("precision"), nullptr);
  EXPECT_EQ(space.Find("precision")->allowed_values,
            (std::vector<std::string>{"fp32", "tf32", "fp16", "bf16"}));
  EXPECT_EQ(space.Find("kernel.conv")->allowed_values,
            (std::vector<std::string>{"auto", "rank1", "rank2", "rank3"}));
  // Channels-last exists on cuda (no oneDNN blocked layout); nchw until measured otherwise.
  ASSERT_NE(space.Find("layout.activations"), nullptr);
  EXPECT_EQ(space.Find("layout.activations")->allowed_values, (std::vector<std::string>{"nchw", "nhwc"}));
  EXPECT_EQ(space.Find("layout.activations")->default_value, "nchw");
  // And the CPU target has none of the cuda knobs.
  const RouteSpace cpu = RouteSpace::For(*g, Target::HostCpu());
  EXPECT_EQ(cpu.Find("cuda.graphs"), nullptr);
  ASSERT_NE(cpu.Find("layout.activations"), nullptr);
  EXPECT_EQ(cpu.Find("layout.activations")->default_value, "nhwc");
  EXPECT_FALSE(cpu.Parse("precision=fp16").ok());
}

int CountReorders(const Engine& e) {
  int n = 0;
  for (const EngineStep& st : e.steps) n += st.op_type == "Reorder";
  return n;
}

TEST(CudaBuild, EnginesForEveryTestModelWithoutAGpu) {
  REQUIRE_CUDA_BUILD(target);
  for (const ModelCase& c : Models()) {
    auto g = ImportModel(c.model);
    ASSERT_TRUE(g.ok()) << c.name;
    const TensorMap inputs = LoadInputs(*g, c);
    const RouteSpace space = RouteSpace::For(*g, target);
    std::vector<std::string> routes = {"", "precision=fp16"};
    if (space.Find("layout.activations")) {  // models with a Conv
      routes.push_back("layout.activations=nhwc");
      routes.push_back("layout.activations=nhwc precision=fp16");
    }
    for (const std::string& r : routes) {
      auto route = space.Parse(r);
      ASSERT_TRUE(route.ok()) << route.status().ToString();
      BuildReport report;
      auto e = BuildEngine(*g, space, *route, target, FixedShapes(inputs), &report);
      ASSERT_TRUE(e.ok()) << c.name << " [" << r << "]: " << e.status().ToString();
      EXPECT_EQ(e->header.target, "cuda");
      EXPECT_EQ(e->header.target_fingerprint, "cuda|" + target.gpu.Arch());
      EXPECT_TRUE(e->header.cuda_graphs);
      for (const EngineStep& st : e->steps) {
        EXPECT_TRUE(st.provider == "cuda" || st.provider == "cublaslt" || st.provider == "cudnn")
            << c.name << ": step " << st.name << " runs on " << st.provider;
      }
      // Graph inputs and outputs keep float32; at fp16 the activations are float16.
      for (int t : e->outputs) EXPECT_NE(e->tensors[static_cast<size_t>(t)].dtype, DataType::kFloat16);
      const bool nhwc = r.find("layout.activations=nhwc") != std::string::npos;
      int nhwc_tensors = 0;
      for (const EngineTensor& t : e->tensors) nhwc_tensors += t.layout == "nhwc";
      std::printf("[cuda build] %-16s %-40s steps %zu, nhwc tensors %d, reorders %d\n", c.name.c_str(),
                  r.empty() ? "(default)" : r.c_str(), e->steps.size(), nhwc_tensors, CountReorders(*e));
      if (!nhwc) {
        EXPECT_EQ(nhwc_tensors, 0) << c.name << " [" << r << "]";
        EXPECT_EQ(CountReorders(*e), 0) << c.name << " [" << r << "]";
      } else {
        EXPECT_GT(nhwc_tensors, 0) << c.name << " [" << r << "]";
        // Graph inputs and outputs stay plain.
        for (int t : e->inputs) EXPECT_EQ(e->tensors[static_cast<size_t>(t)].layout, "") << c.name;
        for (int t : e->outputs) EXPECT_EQ(e->tensors[static_cast<size_t>(t)].layout, "") << c.name;
      }
      if (nhwc && (c.name == "resnet_tiny" || c.name == "mobilenetv2_tiny")) {
        // Convs, pools and their elementwise neighbours all run channels-last: one reorder
        // at the image (the global pool hands the classifier a plain [N, C, 1, 1]).
        EXPECT_EQ(CountReorders(*e), 1) << c.name << " [" << r << "]";
        for (const EngineStep& st : e->steps) {
          if (st.provider != "cudnn") continue;
          ASSERT_FALSE(st.outputs.empty());
          EXPECT_EQ(e->tensors[static_cast<size_t>(st.outputs[0])].layout, "nhwc") << c.name << ": " << st.name;
          EXPECT_TRUE(st.params.value("nhwc", false)) << c.name << ": " << st.name;
        }
      }
      if (r == "precision=fp16") {
        int half = 0;
        for (const EngineTensor& t : e->tensors) half += t.dtype == DataType::kFloat16;
        EXPECT_GT(half, 0) << c.name;
        EXPECT_GT(report.fired["precision.casts"], 0) << c.name;
      }
      // The engine round-trips through its file format.
      auto back = DeserializeEngine(SerializeEngine(*e), c.name);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(SerializeEngine(*back), SerializeEngine(*e));
    }
  }
}

TEST(CudaBuild, DynamicShapesAreRefusedWithTheFlagToFixThem) {
  REQUIRE_CUDA_BUILD(target);
  auto g = ImportModel(std::string(SY_SOURCE_DIR) + "/tests/models/bert_tiny_op17.onnx");
  ASSERT_TRUE(g.ok());
  const RouteSpace space = RouteSpace::For(*g, target);
  auto e = BuildEngine(*g, space, Route(), target, BuildOptions{}, nullptr);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("--shapes"), std::string::npos) << e.status().ToString();
}

TEST(CudaRun, WithoutAGpuLoadingSaysSo) {
  REQUIRE_CUDA_BUILD(target);
  if (target.gpu.present) GTEST_SKIP() << "a GPU is present: covered by CudaRun.EveryModel*";
  const ModelCase c = Models().back();
  auto g = ImportModel(c.model);
  ASSERT_TRUE(g.ok());
  const TensorMap inputs = LoadInputs(*g, c);
  const RouteSpace space = RouteSpace::For(*g, target);
  auto e = BuildEngine(*g, space, Route(), target, FixedShapes(inputs), nullptr);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto le = LoadedEngine::Create(std::move(e).value());
  ASSERT_FALSE(le.ok());
  EXPECT_NE(le.status().message().find("no CUDA device"), std::string::npos) << le.status().ToString();
}

double Tolerance(const std::string& route) {
  if (route.find("precision=bf16") != std::string::npos) return 5e-2;
  if (route.find("precision=fp16") != std::string::npos) return 2e-2;
  if (route.find("precision=tf32") != std::string::npos) return 1e-2;
  return 1e-4;
}

// Every test model, default route and each single-knob route, against the reference.
TEST(CudaRun, EveryModelEverySingleKnobRouteMatchesTheReference) {
  REQUIRE_CUDA_BUILD(target);
  if (!target.gpu.present) GTEST_SKIP() << "GPU tests not run: no CUDA device (" << target.gpu.error << ")";
  int runs = 0;
  for (const ModelCase& c : Models()) {
    auto g = ImportModel(c.model);
    ASSERT_TRUE(g.ok()) << c.name;
    const TensorMap inputs = LoadInputs(*g, c);
    auto executor = ReferenceExecutor::Create(*g);
    ASSERT_TRUE(executor.ok()) << c.name << ": " << executor.status().ToString();
    auto ref = executor->Run(inputs);
    ASSERT_TRUE(ref.ok()) << c.name << ": " << ref.status().ToString();
    const RouteSpace space = RouteSpace::For(*g, target);
    std::vector<std::string> routes = {""};
    for (const Knob& k : space.knobs()) {
      for (const std::string& v : k.allowed_values) {
        if (v != k.default_value) routes.push_back(k.option + "=" + v);
      }
    }
    // Combined routes: channels-last with reduced precision (the tensor-core NHWC convs).
    if (space.Find("layout.activations")) {
      routes.push_back("layout.activations=nhwc precision=fp16");
      routes.push_back("layout.activations=nhwc precision=bf16");
      routes.push_back("layout.activations=nhwc cuda.graphs=off");
    }
    for (const std::string& r : routes) {
      auto route = space.Parse(r);
      ASSERT_TRUE(route.ok()) << r;
      auto e = BuildEngine(*g, space, *route, target, FixedShapes(inputs), nullptr);
      ASSERT_TRUE(e.ok()) << c.name << " [" << r << "]: " << e.status().ToString();
      auto le = LoadedEngine::Create(std::move(e).value());
      ASSERT_TRUE(le.ok()) << c.name << " [" << r << "]: " << le.status().ToString();
      Session session(*le);
      for (int rep = 0; rep < 2; ++rep) {  // the second run replays the CUDA graph
        auto out = session.Run(inputs);
        ASSERT_TRUE(out.ok()) << c.name << " [" << r << "]: " << out.status().ToString();
        for (const auto& [name, want] : *ref) {
          ASSERT_TRUE(out->count(name)) << name;
          const Tensor& got = out->at(name);
          ASSERT_EQ(got.shape(), want.shape()) << c.name << " " << name;
          const double err = RelL2(got, want);
          std::printf("[cuda] %-16s %-28s %-24s rel L2 %.3g\n", c.name.c_str(),
                      r.empty() ? "(default)" : r.c_str(), name.c_str(), err);
          EXPECT_LE(err, Tolerance(r)) << c.name << " [" << r << "] output " << name;
        }
        ++runs;
      }
    }
  }
  std::printf("[cuda] %d engine runs\n", runs);
}

// Staged I/O and step timing on the GPU: pinned and device-resident runs (each its own
// CUDA graph, or enqueued steps with cuda.graphs=off) and a step-timed run give Run()'s
// outputs; restaging other inputs changes the outputs accordingly (no stale device copy);
// the steps' device times add up to a positive time.
TEST(CudaRun, StagedPlacementsAndStepTimingGiveRunsOutputs) {
  REQUIRE_CUDA_BUILD(target);
  if (!target.gpu.present) GTEST_SKIP() << "GPU tests not run: no CUDA device (" << target.gpu.error << ")";
  int checked = 0;
  for (const ModelCase& c : Models()) {
    auto g = ImportModel(c.model);
    ASSERT_TRUE(g.ok()) << c.name;
    const TensorMap inputs = LoadInputs(*g, c);
    TensorMap other = inputs;  // float inputs scaled, integer inputs kept
    for (auto& [name, t] : other) {
      if (t.dtype() != DataType::kFloat) continue;
      for (int64_t i = 0; i < t.numel(); ++i) t.SetDouble(i, 0.5 * t.GetDouble(i) + 0.25);
    }
    const RouteSpace space = RouteSpace::For(*g, target);
    for (const std::string r : {"", "cuda.graphs=off"}) {
      auto route = space.Parse(r);
      ASSERT_TRUE(route.ok()) << r;
      auto e = BuildEngine(*g, space, *route, target, FixedShapes(inputs), nullptr);
      ASSERT_TRUE(e.ok()) << c.name << " [" << r << "]: " << e.status().ToString();
      auto le = LoadedEngine::Create(std::move(e).value());
      ASSERT_TRUE(le.ok()) << c.name << ": " << le.status().ToString();
      Session session(*le);
      for (const TensorMap* in : std::vector<const TensorMap*>{&inputs, &other}) {
        auto want = session.Run(*in);
        ASSERT_TRUE(want.ok()) << c.name << ": " << want.status().ToString();
        ASSERT_TRUE(session.Stage(*in).ok()) << c.name;
        auto expect_same = [&](const Result<TensorMap>& got, const char* what) {
          ASSERT_TRUE(got.ok()) << c.name << " " << what << ": " << got.status().ToString();
          for (const auto& [name, w] : *want) {
            ASSERT_TRUE(got->count(name)) << name;
            EXPECT_LE(RelL2(got->at(name), w), 1e-6) << c.name << " [" << r << "] " << what << " " << name;
          }
          ++checked;
        };
        for (IoPlacement p : {IoPlacement::kPinned, IoPlacement::kDevice, IoPlacement::kPinned}) {
          for (int rep = 0; rep < 2; ++rep) ASSERT_TRUE(session.RunStaged(p).ok()) << c.name << " " << IoPlacementName(p);
          expect_same(session.StagedOutputs(p), IoPlacementName(p));
        }
        session.set_step_timing(true);
        expect_same(session.Run(*in), "step-timed");
        session.set_step_timing(false);
      }
      ASSERT_EQ(session.step_seconds().size(), le->get()->engine().steps.size());
      EXPECT_EQ(session.timed_runs(), 2);
      double total = 0;
      for (size_t st = 0; st < session.step_seconds().size(); ++st) {
        EXPECT_GE(session.step_seconds()[st], 0.0) << c.name << " step " << le->get()->engine().steps[st].name;
        total += session.step_seconds()[st];
      }
      EXPECT_GT(total, 0.0) << c.name;
    }
  }
  std::printf("[cuda] %d staged/timed output sets checked\n", checked);
}

}  // namespace
}  // namespace switchyard
