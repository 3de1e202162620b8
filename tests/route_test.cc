// The route space: which knobs a graph gets (test models and hand-built patterns),
// route strings (canonical form, parse errors), sweeps, incompatible combinations,
// scoped precision overrides, and the `switchyard routes` CLI.
#include "route/route.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "onnx/importer.h"
#include "passes/pass.h"
#include "test_util.h"

namespace switchyard {
namespace {

using testing::ExpectError;

Target PlainCpu(int cores = 4) {
  Target t;
  t.cpu_model = "test cpu";
  t.features.avx2 = t.features.fma = true;
  t.cores = cores;
  return t;
}

Target Bf16Cpu(int cores = 4) {
  Target t = PlainCpu(cores);
  t.features.avx512f = t.features.avx512_bf16 = true;
  return t;
}

Graph Import(const std::string& name) {
  auto g = ImportModel(std::string(SY_SOURCE_DIR) + "/tests/models/" + name + ".onnx");
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(g).value() : Graph{};
}

std::vector<std::string> Options(const RouteSpace& s) {
  std::vector<std::string> o;
  for (const Knob& k : s.knobs()) o.push_back(k.option);
  return o;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Builds small IR graphs directly: every value float[2,4] unless given.
class GraphBuilder {
 public:
  GraphBuilder() { g_.opsets[""] = 17; }
  ValueId In(const std::string& name) {
    const ValueId id = g_.AddValue(name, TensorType::FromShape(DataType::kFloat, {2, 4}));
    g_.inputs.push_back(id);
    return id;
  }
  ValueId Scalar(const std::string& name, float v) {
    const ValueId id = g_.AddValue(name, TensorType::FromShape(DataType::kFloat, {}));
    g_.constants[id] = Tensor::FromFloat({v}, {});
    return id;
  }
  ValueId Op(const std::string& op, std::vector<ValueId> inputs, const std::string& name,
             std::map<std::string, int64_t> int_attrs = {}) {
    Node n;
    n.name = name;
    n.op_type = op;
    n.inputs = std::move(inputs);
    for (const auto& [k, v] : int_attrs) {
      Attribute a;
      a.kind = Attribute::Kind::kInt;
      a.i = v;
      n.attrs[k] = a;
    }
    const ValueId out = g_.AddValue(name + ":0", TensorType::FromShape(DataType::kFloat, {2, 4}));
    n.outputs = {out};
    g_.nodes.push_back(std::move(n));
    return out;
  }
  Graph Finish(std::vector<ValueId> outputs) {
    g_.outputs = std::move(outputs);
    g_.RebuildProducers();
    return std::move(g_);
  }

 private:
  Graph g_;
};

const Knob* KnobOf(const RouteSpace& s, const std::string& option) { return s.Find(option); }

// ---- knob presence on the test models ----

TEST(RouteSpace, ResnetHasConvKnobsAndNoTransformerKnobs) {
  const Graph g = Import("resnet_tiny");
  const RouteSpace s = RouteSpace::For(g, PlainCpu());
  const auto o = Options(s);
  for (const char* k : {"fuse.conv_act", "layout.activations", "kernel.conv", "kernel.gemm",
                        "precision", "quant.weights", "memory.plan", "threads"}) {
    EXPECT_TRUE(Has(o, k)) << k;
  }
  for (const char* k : {"fuse.attention", "fuse.layernorm", "fuse.gelu", "fuse.slice",
                        "fuse.conv_bn"}) {
    EXPECT_FALSE(Has(o, k)) << k;  // PyTorch folds BN into the convs at export
  }
  EXPECT_TRUE(std::is_sorted(o.begin(), o.end()));
  // Every Conv is a kernel.conv node; 6 Relus and 2 residual Adds sit behind convs.
  int convs = 0;
  for (const Node& n : g.nodes) convs += n.op_type == "Conv";
  EXPECT_EQ(KnobOf(s, "kernel.conv")->nodes.size(), static_cast<size_t>(convs));
  int relus = 0;
  for (const std::string& n : KnobOf(s, "fuse.conv_act")->nodes) {
    for (const Node& node : g.nodes) relus += node.name == n && node.op_type == "Relu";
  }
  EXPECT_EQ(relus, 6);
  EXPECT_TRUE(KnobOf(s, "memory.plan")->nodes.empty());  // whole graph
}

TEST(RouteSpace, BertHasTransformerKnobsAndNoConvKnobs) {
  const Graph g = Import("bert_tiny_op13");
  const RouteSpace s = RouteSpace::For(g, PlainCpu());
  const auto o = Options(s);
  for (const char* k : {"fuse.layernorm", "fuse.gelu", "fuse.attention", "fuse.gemm_epilogue",
                        "fuse.elementwise", "fuse.slice", "kernel.gemm"}) {
    EXPECT_TRUE(Has(o, k)) << k;
  }
  for (const char* k : {"kernel.conv", "layout.activations", "fuse.conv_act", "fuse.conv_bn"}) {
    EXPECT_FALSE(Has(o, k)) << k;
  }
  // Each of the 5 LayerNorms (10 ReduceMeans), 2 Erf GELUs and 2 attention Softmaxes.
  auto count = [&](const std::string& knob, const std::string& op) {
    int c = 0;
    for (const std::string& n : KnobOf(s, knob)->nodes) {
      for (const Node& node : g.nodes) c += node.name == n && node.op_type == op;
    }
    return c;
  };
  EXPECT_EQ(count("fuse.layernorm", "ReduceMean"), 10);
  EXPECT_EQ(count("fuse.layernorm", "Sqrt"), 5);
  EXPECT_EQ(count("fuse.gelu", "Erf"), 2);
  EXPECT_EQ(count("fuse.attention", "Softmax"), 2);
  EXPECT_EQ(count("fuse.attention", "MatMul"), 4);
}

TEST(RouteSpace, OtherModels) {
  // Opset 17 BERT uses the LayerNormalization op, which becomes the same kernel.
  const Graph bert17 = Import("bert_tiny_op17");
  const RouteSpace s17 = RouteSpace::For(bert17, PlainCpu());
  ASSERT_NE(KnobOf(s17, "fuse.layernorm"), nullptr);
  EXPECT_EQ(KnobOf(s17, "fuse.layernorm")->nodes.size(), 5u);
  // The text detector's BatchNormalization follows a ConvTranspose: still folded.
  const RouteSpace det = RouteSpace::For(Import("text_detector_tiny"), PlainCpu());
  ASSERT_NE(KnobOf(det, "fuse.conv_bn"), nullptr);
  EXPECT_EQ(KnobOf(det, "fuse.conv_bn")->nodes.size(), 2u);
  // GPT-2's GELU is the tanh approximation.
  const RouteSpace gpt2 = RouteSpace::For(Import("gpt2_tiny"), PlainCpu());
  ASSERT_NE(KnobOf(gpt2, "fuse.gelu"), nullptr);
  // Attention with a causal Where mask (GPT-2) and with the scale on Q (ViT, no mask).
  ASSERT_NE(KnobOf(gpt2, "fuse.attention"), nullptr);
  EXPECT_TRUE(Has(KnobOf(gpt2, "fuse.attention")->nodes, "/blocks.0/Where"));
  const RouteSpace vit = RouteSpace::For(Import("vit_tiny"), PlainCpu());
  ASSERT_NE(KnobOf(vit, "fuse.attention"), nullptr);
  EXPECT_EQ(KnobOf(vit, "fuse.attention")->nodes.size(), 8u);  // 2 x Div(Q), MatMul, Softmax, MatMul
  // EfficientNet's SiLU (x*sigmoid(x)) and MobileNetV3's hard-swish follow convs.
  const Graph eff = Import("efficientnet_tiny");
  const RouteSpace eff_space = RouteSpace::For(eff, PlainCpu());
  const Knob* act = KnobOf(eff_space, "fuse.conv_act");
  ASSERT_NE(act, nullptr);
  int sigmoids = 0;
  for (const std::string& n : act->nodes) {
    for (const Node& node : eff.nodes) sigmoids += node.name == n && node.op_type == "Sigmoid";
  }
  EXPECT_EQ(sigmoids, 4);  // every SiLU follows a conv
  // Its squeeze-excite scale (a Mul read by the 1x1 projection) folds into that conv.
  const Knob* scale = KnobOf(eff_space, "fuse.conv_scale");
  ASSERT_NE(scale, nullptr);
  int muls = 0, convs = 0;
  for (const std::string& n : scale->nodes) {
    for (const Node& node : eff.nodes) {
      muls += node.name == n && node.op_type == "Mul";
      convs += node.name == n && node.op_type == "Conv";
    }
  }
  EXPECT_EQ(muls, 1);
  EXPECT_EQ(convs, 1);
  const Graph mb3 = Import("mobilenetv3_tiny");
  const RouteSpace s3 = RouteSpace::For(mb3, PlainCpu());
  ASSERT_NE(KnobOf(s3, "fuse.conv_act"), nullptr);
  int hsig = 0;
  for (const std::string& n : KnobOf(s3, "fuse.conv_act")->nodes) {
    for (const Node& node : mb3.nodes) hsig += node.name == n && node.op_type == "HardSigmoid";
  }
  EXPECT_GT(hsig, 0);
}

// The builder runs a pass only when its knob is in the route space, so a pass that would
// fire on a model whose space lacks its knob is silently lost. Run every pass with every
// knob on and check that each one that fired has its knob in the space.
TEST(RouteSpace, EveryFiringPassHasItsKnob) {
  for (const char* name : {"resnet_tiny", "mobilenetv2_tiny", "mobilenetv3_tiny",
                           "efficientnet_tiny", "bert_tiny_op13", "bert_tiny_op17", "gpt2_tiny",
                           "vit_tiny", "text_detector_tiny", "text_recognizer_tiny"}) {
    Graph g = Import(name);
    const Target target = PlainCpu();
    const RouteSpace space = RouteSpace::For(g, target);
    BuildReport report;
    PassContext ctx{[](const std::string&) { return true; }, target, report};
    ASSERT_TRUE(RunPasses(g, ctx).ok()) << name;
    for (const auto& [knob, count] : report.fired) {
      if (count == 0 || knob.rfind("fuse.", 0) != 0) continue;
      EXPECT_NE(space.Find(knob), nullptr) << name << ": " << knob << " fired " << count
                                           << " times but is not in the route space";
    }
  }
}

TEST(RouteSpace, EveryKnobDocumentsItsDefault) {
  const RouteSpace s = RouteSpace::For(Import("bert_tiny_op13"), PlainCpu());
  for (const Knob& k : s.knobs()) {
    EXPECT_NE(k.help.find("efault"), std::string::npos) << k.option << ": " << k.help;
    EXPECT_TRUE(Has(k.allowed_values, k.default_value)) << k.option;
  }
}

TEST(RouteSpace, Bf16OnlyWithHardwareSupport) {
  const Graph g = Import("resnet_tiny");
  EXPECT_EQ(KnobOf(RouteSpace::For(g, PlainCpu()), "precision")->allowed_values,
            (std::vector<std::string>{"fp32"}));
  EXPECT_EQ(KnobOf(RouteSpace::For(g, Bf16Cpu()), "precision")->allowed_values,
            (std::vector<std::string>{"fp32", "bf16"}));
  Target amx = PlainCpu();
  amx.features.amx_bf16 = true;
  EXPECT_TRUE(Has(KnobOf(RouteSpace::For(g, amx), "precision")->allowed_values, "bf16"));
  const auto err = RouteSpace::For(g, PlainCpu()).Parse("precision=bf16");
  ExpectError(err.status(), StatusCode::kInvalidArgument,
              {"knob 'precision' has no value 'bf16'; allowed: fp32", "AVX512_BF16"});
}

TEST(RouteSpace, ThreadsFollowTheTargetCores) {
  const RouteSpace s = RouteSpace::For(Import("resnet_tiny"), PlainCpu(3));
  const Knob* t = KnobOf(s, "threads");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->allowed_values, (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(t->default_value, "3");
}

// ---- hand-built patterns ----

TEST(Patterns, ConvBnAndActivation) {
  GraphBuilder b;
  const ValueId x = b.In("x");
  const ValueId w = b.Scalar("w", 1), s = b.Scalar("s", 1), bias = b.Scalar("b", 0);
  const ValueId m = b.Scalar("m", 0), v = b.Scalar("v", 1);
  const ValueId c = b.Op("Conv", {x, w}, "conv");
  const ValueId n = b.Op("BatchNormalization", {c, s, bias, m, v}, "bn");
  const ValueId r = b.Op("Relu", {n}, "relu");
  const RouteSpace sp = RouteSpace::For(b.Finish({r}), PlainCpu());
  ASSERT_NE(sp.Find("fuse.conv_bn"), nullptr);
  EXPECT_EQ(sp.Find("fuse.conv_bn")->nodes, (std::vector<std::string>{"bn", "conv"}));
  EXPECT_EQ(sp.Find("fuse.conv_act")->nodes, (std::vector<std::string>{"conv", "relu"}));
}

TEST(Patterns, ConvOutputReadTwiceIsNotFused) {
  GraphBuilder b;
  const ValueId c = b.Op("Conv", {b.In("x"), b.Scalar("w", 1)}, "conv");
  const ValueId r = b.Op("Relu", {c}, "relu");
  const RouteSpace sp = RouteSpace::For(b.Finish({r, c}), PlainCpu());  // conv is an output
  EXPECT_EQ(sp.Find("fuse.conv_act"), nullptr);
  EXPECT_NE(sp.Find("kernel.conv"), nullptr);
}

// A Mul whose output nothing reads (a graph output) has no conv to fold into; the detector
// dereferenced the missing consumer (UBSan, found by the onnx_import fuzzer).
TEST(Patterns, MulReadByNothingHasNoConvScale) {
  GraphBuilder b;
  const ValueId y = b.Op("Mul", {b.In("x"), b.In("s")}, "mul");
  const RouteSpace sp = RouteSpace::For(b.Finish({y}), PlainCpu());
  EXPECT_EQ(sp.Find("fuse.conv_scale"), nullptr);
}

// x * 0.5 * (1 + erf(x / sqrt 2)) in three associations; a wrong constant does not match.
TEST(Patterns, GeluAnyAssociation) {
  for (int variant = 0; variant < 4; ++variant) {
    GraphBuilder b;
    const ValueId x = b.In("x");
    const ValueId e = b.Op("Erf", {b.Op("Div", {x, b.Scalar("r2", 1.4142135f)}, "div")}, "erf");
    const ValueId a = b.Op("Add", {e, b.Scalar("one", 1)}, "add");
    ValueId y;
    if (variant == 0) {
      y = b.Op("Mul", {b.Op("Mul", {x, a}, "m1"), b.Scalar("h", 0.5f)}, "m2");
    } else if (variant == 1) {
      y = b.Op("Mul", {b.Op("Mul", {x, b.Scalar("h", 0.5f)}, "m1"), a}, "m2");
    } else if (variant == 2) {
      y = b.Op("Mul", {x, b.Op("Mul", {a, b.Scalar("h", 0.5f)}, "m1")}, "m2");
    } else {
      y = b.Op("Mul", {b.Op("Mul", {x, a}, "m1"), b.Scalar("h", 0.4f)}, "m2");
    }
    const RouteSpace sp = RouteSpace::For(b.Finish({y}), PlainCpu());
    if (variant == 3) {
      EXPECT_EQ(sp.Find("fuse.gelu"), nullptr);
      continue;
    }
    ASSERT_NE(sp.Find("fuse.gelu"), nullptr) << variant;
    EXPECT_EQ(sp.Find("fuse.gelu")->nodes,
              (std::vector<std::string>{"add", "div", "erf", "m1", "m2"}));
  }
}

TEST(Patterns, AttentionAndLayerNorm) {
  GraphBuilder b;
  const ValueId q = b.In("q"), k = b.In("k"), v = b.In("v"), mask = b.In("mask");
  const ValueId s = b.Op("MatMul", {q, k}, "qk");
  const ValueId sc = b.Op("Mul", {b.Scalar("scale", 0.125f), s}, "scale");
  const ValueId sm = b.Op("Softmax", {b.Op("Add", {sc, mask}, "mask_add")}, "softmax", {{"axis", -1}});
  const ValueId o = b.Op("MatMul", {sm, v}, "av");
  // LayerNorm of the attention output with a constant affine.
  const ValueId mean = b.Op("ReduceMean", {o}, "mean");
  const ValueId d = b.Op("Sub", {o, mean}, "sub");
  const ValueId var = b.Op("ReduceMean", {b.Op("Pow", {d, b.Scalar("two", 2)}, "pow")}, "var");
  const ValueId den = b.Op("Sqrt", {b.Op("Add", {var, b.Scalar("eps", 1e-5f)}, "eps_add")}, "sqrt");
  const ValueId nrm = b.Op("Div", {d, den}, "div");
  const ValueId gamma = b.Op("Mul", {nrm, b.Scalar("g", 2)}, "gamma");
  const ValueId y = b.Op("Add", {gamma, b.Scalar("bias", 1)}, "beta");
  Graph g = b.Finish({y});
  const RouteSpace sp = RouteSpace::For(g, PlainCpu());
  ASSERT_NE(sp.Find("fuse.attention"), nullptr);
  EXPECT_EQ(sp.Find("fuse.attention")->nodes,
            (std::vector<std::string>{"av", "mask_add", "qk", "scale", "softmax"}));
  ASSERT_NE(sp.Find("fuse.layernorm"), nullptr);
  EXPECT_EQ(sp.Find("fuse.layernorm")->nodes,
            (std::vector<std::string>{"beta", "div", "eps_add", "gamma", "mean", "pow", "sqrt",
                                      "sub", "var"}));
  // Softmax over another axis is no attention.
  g.nodes[3].attrs["axis"].i = 0;
  EXPECT_EQ(RouteSpace::For(g, PlainCpu()).Find("fuse.attention"), nullptr);
}

// ---- route strings ----

TEST(Route, CanonicalFormAndRoundTrip) {
  const RouteSpace s = RouteSpace::For(Import("resnet_tiny"), PlainCpu());
  auto r = s.Parse("  threads=2\tfuse.conv_act=off   kernel.conv=direct ");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Canonical(), "fuse.conv_act=off kernel.conv=direct threads=2");
  auto again = s.Parse(r->Canonical());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *r);
  // Defaults are dropped: the default route is "".
  EXPECT_EQ(Route().Canonical(), "");
  auto d = s.Parse("fuse.conv_act=on threads=4 memory.plan=greedy_by_size");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Canonical(), "");
  EXPECT_EQ(*s.Parse(""), Route());
  EXPECT_EQ(s.Value(*r, "kernel.conv"), "direct");
  EXPECT_EQ(s.Value(*r, "layout.activations"), "nhwc");
  EXPECT_TRUE(s.On(*r, "fuse.conv_act") == false);
}

TEST(Route, ParseErrorsListWhatIsAllowed) {
  const RouteSpace s = RouteSpace::For(Import("resnet_tiny"), PlainCpu());
  ExpectError(s.Parse("fuse.attention=off").status(), StatusCode::kInvalidArgument,
              {"unknown knob 'fuse.attention'; knobs for this model: fuse.conv_act, "
               "fuse.elementwise, fuse.gemm_epilogue, kernel.conv, kernel.gemm, "
               "layout.activations, memory.plan, precision, quant.weights, schedule.batch_split, threads"});
  ExpectError(s.Parse("kernel.conv=fast").status(), StatusCode::kInvalidArgument,
              {"knob 'kernel.conv' has no value 'fast'; allowed: "
               "auto|onednn|im2col_gemm|direct|winograd|native"});
  ExpectError(s.Parse("threads=5").status(), StatusCode::kInvalidArgument,
              {"knob 'threads' has no value '5'; allowed: 1|2|3|4"});
  ExpectError(s.Parse("threads=1 threads=2").status(), StatusCode::kInvalidArgument,
              {"'threads' is given twice"});
  ExpectError(s.Parse("threads").status(), StatusCode::kInvalidArgument, {"not key=value"});
  ExpectError(s.Parse("=1").status(), StatusCode::kInvalidArgument, {"not key=value"});
  ExpectError(s.Parse("threads=").status(), StatusCode::kInvalidArgument, {"no value ''"});
}

// ---- compatibility ----

TEST(Route, IncompatibleCombinationsAreNamed) {
  const RouteSpace s = RouteSpace::For(Import("resnet_tiny"), Bf16Cpu());
  ExpectError(s.Parse("kernel.conv=winograd precision=bf16").status(),
              StatusCode::kInvalidArgument,
              {"kernel.conv=winograd with precision=bf16", "fp32 only"});
  // im2col convs read and write plain NCHW; other layouts get reorders, so any layout works.
  EXPECT_TRUE(s.Parse("kernel.conv=im2col_gemm").ok());
  EXPECT_TRUE(s.Parse("kernel.conv=im2col_gemm layout.activations=nchw").ok());
  ExpectError(s.Parse("quant.weights=int8 precision=bf16").status(),
              StatusCode::kInvalidArgument, {"quant.weights=int8 with precision=bf16"});
  ExpectError(s.Parse("quant.weights=int8 kernel.gemm=openblas").status(),
              StatusCode::kInvalidArgument, {"quant.weights=int8 with kernel.gemm=openblas"});
  ExpectError(s.Parse("quant.weights=int8 kernel.conv=winograd").status(),
              StatusCode::kInvalidArgument, {"quant.weights=int8 with kernel.conv=winograd"});
  EXPECT_TRUE(s.Parse("quant.weights=int8 kernel.conv=direct kernel.gemm=onednn").ok());
  EXPECT_TRUE(s.Parse("kernel.conv=winograd").ok());
  // Two conflicts at once are both reported.
  const Status both = s.Parse("quant.weights=int8 kernel.gemm=native precision=bf16").status();
  ExpectError(both, StatusCode::kInvalidArgument, {"kernel.gemm=native", "precision=bf16"});
  // A hand-made Route is validated too.
  Route r;
  r.Set("fuse.gelu", "off");
  ExpectError(s.CheckCompatible(r), StatusCode::kInvalidArgument, {"unknown knob 'fuse.gelu'"});
}

// ---- scoped overrides ----

TEST(Route, ScopedPrecisionOverrides) {
  const Graph g = Import("bert_tiny_op13");
  std::string matmul;
  for (const Node& n : g.nodes) {
    if (n.op_type == "MatMul" && matmul.empty()) matmul = n.name;
  }
  const RouteSpace s = RouteSpace::For(g, Bf16Cpu());
  auto r = s.Parse("precision=bf16 precision@" + matmul + "=fp32");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Canonical(), "precision=bf16 precision@" + matmul + "=fp32");
  EXPECT_EQ(s.PrecisionFor(*r, matmul), "fp32");
  EXPECT_EQ(s.PrecisionFor(*r, "something_else"), "bf16");
  EXPECT_EQ(s.PrecisionFor(Route(), matmul), "fp32");
  auto all = s.Parse("precision=bf16 precision@*MatMul*=fp32");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(s.PrecisionFor(*all, matmul), "fp32");
  ExpectError(s.Parse("precision@*=fp32").status(), StatusCode::kInvalidArgument,
              {"precision@*=fp32 has no effect"});
  ExpectError(s.Parse("precision=bf16 precision@*=bf16").status(), StatusCode::kInvalidArgument,
              {"has no value 'bf16'; allowed: fp32"});
  ExpectError(s.Parse("precision=bf16 precision@nothing.like.this*=fp32").status(),
              StatusCode::kInvalidArgument, {"matches no node"});
  ExpectError(s.Parse("kernel.gemm@x=onednn").status(), StatusCode::kInvalidArgument,
              {"cannot be scoped"});
  // No precision knob, no overrides: a graph without Conv/MatMul/Gemm.
  GraphBuilder b;
  const ValueId y = b.Op("Relu", {b.In("x")}, "relu");
  ExpectError(RouteSpace::For(b.Finish({y}), Bf16Cpu()).Parse("precision@relu=fp32").status(),
              StatusCode::kInvalidArgument, {"unknown knob 'precision@relu'"});
}

TEST(Glob, StarAndQuestionMark) {
  EXPECT_TRUE(GlobMatch("encoder.layer.*", "encoder.layer.0.attention.MatMul"));
  EXPECT_FALSE(GlobMatch("encoder.layer.*", "decoder.layer.0"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("a?c", "abc"));
  EXPECT_FALSE(GlobMatch("a?c", "ac"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXXbYbZc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXXbYbZ"));
  EXPECT_TRUE(GlobMatch("exact", "exact"));
  EXPECT_FALSE(GlobMatch("exact", "exact2"));
  EXPECT_TRUE(GlobMatch("**x", "x"));
}

// ---- sweeps ----

TEST(Sweep, CartesianProductInSortedOrder) {
  const RouteSpace s = RouteSpace::For(Import("resnet_tiny"), PlainCpu());
  int skipped = -1;
  auto r = s.Sweep("kernel.conv=[auto|winograd] fuse.conv_act=[on|off] threads=2", &skipped);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::string> got;
  for (const Route& x : *r) got.push_back(x.Canonical());
  EXPECT_EQ(got, (std::vector<std::string>{
                     "threads=2", "kernel.conv=winograd threads=2", "fuse.conv_act=off threads=2",
                     "fuse.conv_act=off kernel.conv=winograd threads=2"}));
  EXPECT_EQ(skipped, 0);
  auto one = s.Sweep("");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].Canonical(), "");
}

TEST(Sweep, SkipsIncompatibleCombinations) {
  const RouteSpace s = RouteSpace::For(Import("resnet_tiny"), Bf16Cpu());
  int skipped = 0;
  auto r = s.Sweep("precision=[fp32|bf16] kernel.conv=[auto|winograd|im2col_gemm]", &skipped);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // winograd x bf16 is skipped.
  EXPECT_EQ(r->size(), 5u);
  EXPECT_EQ(skipped, 1);
  EXPECT_EQ((*r)[1].Canonical(), "precision=bf16");
  EXPECT_EQ((*r)[2].Canonical(), "kernel.conv=winograd");
}

TEST(Sweep, Errors) {
  const RouteSpace s = RouteSpace::For(Import("resnet_tiny"), PlainCpu());
  ExpectError(s.Sweep("kernel.conv=[auto|direct").status(), StatusCode::kInvalidArgument,
              {"unbalanced brackets"});
  ExpectError(s.Sweep("kernel.conv=auto|direct").status(), StatusCode::kInvalidArgument,
              {"without brackets", "kernel.conv=[auto|direct]"});
  ExpectError(s.Sweep("kernel.conv=[]").status(), StatusCode::kInvalidArgument, {"is empty"});
  ExpectError(s.Sweep("kernel.conv=[auto||direct]").status(), StatusCode::kInvalidArgument,
              {"empty value"});
  ExpectError(s.Sweep("kernel.conv=[auto|[direct]]").status(), StatusCode::kInvalidArgument,
              {"brackets"});
  ExpectError(s.Sweep("kernel.conv=[auto|auto]").status(), StatusCode::kInvalidArgument,
              {"repeats 'auto'"});
  ExpectError(s.Sweep("kernel.conv=[auto|fast]").status(), StatusCode::kInvalidArgument,
              {"no value 'fast'; allowed: auto|onednn|im2col_gemm|direct|winograd|native"});
  ExpectError(s.Sweep("fuse.gelu=[on|off]").status(), StatusCode::kInvalidArgument,
              {"unknown knob 'fuse.gelu'"});
  ExpectError(s.Sweep("threads=1 threads=[2|3]").status(), StatusCode::kInvalidArgument,
              {"twice"});
}

TEST(Sweep, HardCapNamesTheCount) {
  const RouteSpace s = RouteSpace::For(Import("resnet_tiny"), PlainCpu(256));
  std::string threads = "threads=[";
  for (int i = 1; i <= 256; ++i) threads += (i > 1 ? "|" : "") + std::to_string(i);
  threads += "]";
  // 256 * 5 * 3 * 3 * 2 * 4 * 2 = 184320 routes.
  ExpectError(s.Sweep(threads + " kernel.conv=[auto|onednn|im2col_gemm|direct|winograd] "
                                "layout.activations=[nchw|nhwc|blocked] "
                                "memory.plan=[greedy_by_size|linear_scan|none] "
                                "fuse.conv_act=[on|off] kernel.gemm=[auto|onednn|openblas|native] "
                                "quant.weights=[none|int8]")
                  .status(),
              StatusCode::kOutOfRange, {"184320 routes", "100000"});
}

// ---- CLI ----

struct Cli {
  int code = -1;
  std::string out;
};

// stdout and stderr together (the messages these tests look for may be on either).
Cli RunCli(const std::string& args) {
  const testing::CliRun run = testing::RunBinary("switchyard", args);
  return Cli{run.code, run.out + run.err};
}

const std::string kResnet = std::string(SY_SOURCE_DIR) + "/tests/models/resnet_tiny.onnx";

TEST(RoutesCli, JsonKnobDatabase) {
  const Cli r = RunCli("routes " + kResnet + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  ASSERT_TRUE(j["knobs"].is_array());
  std::vector<std::string> options;
  for (const auto& k : j["knobs"]) {
    std::vector<std::string> keys;
    for (const auto& [key, _] : k.items()) keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, (std::vector<std::string>{"allowed_values", "default_value", "help", "nodes",
                                              "option"}));
    EXPECT_TRUE(k["allowed_values"].is_array());
    EXPECT_TRUE(k["nodes"].is_array());
    EXPECT_TRUE(k["default_value"].is_string());
    options.push_back(k["option"]);
  }
  EXPECT_TRUE(Has(options, "kernel.conv"));
  EXPECT_FALSE(Has(options, "fuse.attention"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);  // one line
}

TEST(RoutesCli, SweepDryRun) {
  Cli r = RunCli("routes " + kResnet + " --sweep 'kernel.gemm=[auto|openblas] " +
                 "quant.weights=[none|int8]' --dry-run");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "(default)\nquant.weights=int8\nkernel.gemm=openblas\n3 routes, 1 skipped as incompatible\n");
  r = RunCli("routes " + kResnet + " --sweep 'kernel.conv=[auto|direct]' --dry-run --json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out),
            nlohmann::json::parse(R"({"routes": ["", "kernel.conv=direct"], "count": 2,
                                      "skipped": 0})"));
}

TEST(RoutesCli, Errors) {
  Cli r = RunCli("routes " + kResnet + " --target tpu");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("error: "), std::string::npos);
  EXPECT_NE(r.out.find("unknown target 'tpu'; targets of this build: cpu"), std::string::npos) << r.out;
  r = RunCli("routes " + kResnet + " --sweep 'kernel.conv=[auto|direct]'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("switchyard tune"), std::string::npos) << r.out;
  r = RunCli("routes " + kResnet + " --sweep 'kernel.conv=[auto' --dry-run");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("unbalanced brackets"), std::string::npos) << r.out;
  r = RunCli("routes /nonexistent/model.onnx");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("/nonexistent/model.onnx"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace switchyard
