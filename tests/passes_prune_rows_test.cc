// prune.rows: a Gather of constant rows moves above the ops that compute rows
// independently, on hand-built graphs (reference executor, before and after the pass) and
// on the tiny ViT through the builder (its classifier reads one token of the last layer).
#include <algorithm>

#include "engine_test_util.h"
#include "onnx/importer.h"
#include "passes_test_util.h"
#include "route/route.h"

namespace switchyard::testing {
namespace {

ValueId Ints(GraphBuilder& b, const std::string& name, std::vector<int64_t> v, bool scalar = false) {
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(v.size()));
  return b.Const(name, Tensor::FromInt64(v, shape));
}

ValueId Gather(GraphBuilder& b, ValueId x, ValueId idx, int64_t axis) {
  return b.Op("Gather", {x, idx}, [axis](Node& n) { n.attrs["axis"] = IntAttr(axis); });
}

const Node* NodeOfType(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes) {
    if (n.op_type == op) return &n;
  }
  return nullptr;
}

// The seq-first layout of PyTorch 1.13's attention projections: x [S=3, B=4, E=6] merged
// to rows for a Gemm, split back, batch first, then bias, Relu and a centring (the
// centred rows read the Relu twice); the output keeps tokens 0 and 2.
TEST(PruneRows, MovesThroughRowwiseOpsAndReshapesThatSplitAndMergeTheAxis) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {3, 4, 6});
  const ValueId rows = b.Op("Reshape", {x, Ints(b, "s0", {12, 6})});
  const ValueId y = b.Op("Gemm", {rows, b.Const("w", Filled(DataType::kFloat, {5, 6}, 2)),
                                  b.Const("c", Filled(DataType::kFloat, {5}, 3))},
                         [](Node& n) { n.attrs["transB"] = IntAttr(1); });
  const ValueId t = b.Op("Transpose", {b.Op("Reshape", {y, Ints(b, "s1", {3, 4, 5})})},
                         [](Node& n) { n.attrs["perm"] = IntsAttr({1, 0, 2}); });
  const ValueId r = b.Op("Relu", {b.Op("Add", {t, b.Const("bias", Filled(DataType::kFloat, {5}, 4))})});
  const ValueId mean = b.Op("ReduceMean", {r}, [](Node& n) { n.attrs["axes"] = IntsAttr({-1}); });
  b.Output(Gather(b, b.Op("Sub", {r, mean}), Ints(b, "idx", {0, 2}), 1));
  const Graph g = b.Finish();
  Graph opt;
  const BuildReport report = ExpectExact(g, In(g), {"prune.rows"}, &opt);
  EXPECT_GE(Fired(report, "prune.rows"), 7);
  const Node* gemm = NodeOfType(opt, "Gemm");
  ASSERT_NE(gemm, nullptr);
  // Tokens 0 and 2 of each of the 4 images: 8 of the Gemm's 12 rows.
  EXPECT_EQ(opt.value(gemm->outputs[0]).type.StaticShape(), (std::vector<int64_t>{8, 5}));
  // x's tokens are gathered first.
  const Node* reader_of_x = nullptr;
  for (const Node& n : opt.nodes) {
    if (std::count(n.inputs.begin(), n.inputs.end(), opt.inputs[0])) reader_of_x = &n;
  }
  ASSERT_NE(reader_of_x, nullptr);
  EXPECT_EQ(reader_of_x->op_type, "Gather");
  EXPECT_EQ(opt.Constant(reader_of_x->inputs[1])->ToInt64Vector(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(CountOps(opt, "Identity"), 0);  // the second reader of the Relu reads the first's Gather
}

// A scalar index drops the axis: one kept row, then a Reshape.
TEST(PruneRows, ScalarIndexKeepsOneRowAndDropsTheAxis) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {2, 5, 8});
  const ValueId s = b.Op("Softmax", {b.Op("MatMul", {x, b.Const("w", Filled(DataType::kFloat, {8, 4}, 2))})},
                         [](Node& n) { n.attrs["axis"] = IntAttr(-1); });
  b.Output(Gather(b, s, Ints(b, "idx", {-1}, /*scalar=*/true), 1));
  const Graph g = b.Finish();
  Graph opt;
  ExpectExact(g, In(g), {"prune.rows"}, &opt);
  const Node* mm = NodeOfType(opt, "MatMul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(opt.value(mm->outputs[0]).type.StaticShape(), (std::vector<int64_t>{2, 1, 4}));
  EXPECT_EQ(opt.value(opt.outputs[0]).type.StaticShape(), (std::vector<int64_t>{2, 4}));
}

// The Gather moves one op per sweep; a chain longer than the shared sweep bound (64) must
// still be walked to its start (a deep post-norm block with a tanh GELU is about 40 ops).
TEST(PruneRows, WalksChainsLongerThanTheUsualSweepBound) {
  GraphBuilder b;
  ValueId v = b.Op("MatMul", {b.Input("x", {3, 7, 4}), b.Const("w", Filled(DataType::kFloat, {4, 5}, 2))});
  for (int i = 0; i < 100; ++i) v = b.Op(i % 2 ? "Tanh" : "Neg", {v});
  b.Output(Gather(b, v, Ints(b, "idx", {0}, /*scalar=*/true), 1));
  const Graph g = b.Finish();
  Graph opt;
  const BuildReport report = ExpectExact(g, In(g), {"prune.rows"}, &opt);
  EXPECT_EQ(Fired(report, "prune.rows"), 102);  // the scalar's conversion, 100 ops, the MatMul
  const Node* mm = NodeOfType(opt, "MatMul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(opt.value(mm->outputs[0]).type.StaticShape(), (std::vector<int64_t>{3, 1, 5}));
}

// Nothing moves where rows are not independent or another reader needs every row.
TEST(PruneRows, StaysWhereRowsAreNotComputedAlone) {
  struct Case {
    const char* what;
    std::function<void(GraphBuilder&, ValueId)> build;
  };
  const std::vector<Case> cases = {
      {"another reader sums all rows",
       [](GraphBuilder& b, ValueId x) {
         const ValueId r = b.Op("Relu", {b.Op("MatMul", {x, b.Const("w", Filled(DataType::kFloat, {6, 3}, 2))})});
         b.Output(Gather(b, r, Ints(b, "idx", {1}), 0));
         b.Output(b.Op("ReduceSum", {r, Ints(b, "axes", {0})}));
       }},
      {"softmax over the gathered axis",
       [](GraphBuilder& b, ValueId x) {
         b.Output(Gather(b, b.Op("Softmax", {x}, [](Node& n) { n.attrs["axis"] = IntAttr(0); }), Ints(b, "idx", {1}), 0));
       }},
      {"gather of the MatMul's columns",
       [](GraphBuilder& b, ValueId x) {
         b.Output(Gather(b, b.Op("MatMul", {x, b.Const("w", Filled(DataType::kFloat, {6, 3}, 2))}), Ints(b, "idx", {1}), 1));
       }},
      {"unsorted indices",
       [](GraphBuilder& b, ValueId x) { b.Output(Gather(b, b.Op("Relu", {x}), Ints(b, "idx", {2, 0}), 0)); }},
      {"every row",
       [](GraphBuilder& b, ValueId x) { b.Output(Gather(b, b.Op("Relu", {x}), Ints(b, "idx", {0, 1, 2, 3}), 0)); }},
      {"the producer's output is a graph output",
       [](GraphBuilder& b, ValueId x) {
         const ValueId r = b.Op("Relu", {x});
         b.Output(r);
         b.Output(Gather(b, r, Ints(b, "idx", {1}), 0));
       }},
  };
  for (const Case& c : cases) {
    GraphBuilder b;
    c.build(b, b.Input("x", {4, 6}));
    const Graph g = b.Finish();
    Graph opt;
    const BuildReport report = ExpectExact(g, In(g), {"prune.rows"}, &opt);
    EXPECT_EQ(Fired(report, "prune.rows"), 0) << c.what;
    EXPECT_EQ(opt.nodes.size(), g.nodes.size()) << c.what;
  }
}

// Packed q/k/v: the Gather stays below the q Slice before the fusions (k and v read the
// projection in full), fuse.slice gives each part its own GEMM, and the second prune_rows
// run moves the Gather into the q part's FusedMatMul.
TEST(PruneRows, QueryPartOfPackedProjectionComputesTheKeptRows) {
  GraphBuilder b;
  const ValueId x = b.Input("x", {2, 5, 16});
  const ValueId qkv = b.Op("Add", {b.Op("MatMul", {x, b.Const("w", Filled(DataType::kFloat, {16, 192}, 2))}),
                                   b.Const("bias", Filled(DataType::kFloat, {192}, 3))});
  auto part = [&](int64_t i) {
    return b.Op("Slice", {qkv, Ints(b, "s" + std::to_string(i), {64 * i}), Ints(b, "e" + std::to_string(i), {64 * i + 64}),
                          Ints(b, "a" + std::to_string(i), {2})});
  };
  const ValueId q = part(0);
  b.Output(b.Op("Relu", {part(1)}));
  b.Output(b.Op("Relu", {part(2)}));
  b.Output(Gather(b, b.Op("Sigmoid", {q}), Ints(b, "idx", {0}), 1));
  const Graph g = b.Finish();
  Graph opt;
  const BuildReport report = ExpectExact(g, In(g), {"prune.rows", "fuse.slice", "fuse.gemm_epilogue"}, &opt, 1e-5);
  EXPECT_EQ(CountOps(opt, "Slice"), 0);
  std::vector<std::vector<int64_t>> shapes;
  for (const Node& n : opt.nodes) {
    if (n.op_type == "FusedMatMul") shapes.push_back(opt.value(n.outputs[0]).type.StaticShape());
  }
  std::sort(shapes.begin(), shapes.end());
  EXPECT_EQ(shapes, (std::vector<std::vector<int64_t>>{{2, 1, 64}, {2, 5, 64}, {2, 5, 64}}));
  EXPECT_GE(Fired(report, "prune.rows"), 2);
}

// The tiny ViT (2 pre-norm layers, 17 tokens; the head reads token 0): with prune.rows the
// last layer's feed-forward GEMMs compute one token per image, the first layer's all 17;
// outputs match the reference executor either way.
TEST(PruneRows, VitTinyComputesOneTokenInItsLastLayer) {
  auto g = ImportModel(std::string(SY_SOURCE_DIR) + "/tests/models/vit_tiny.onnx");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const RouteSpace space = RouteSpace::For(*g, Target::HostCpu());
  ASSERT_NE(space.Find("prune.rows"), nullptr);
  for (const char* folder : {"vit_tiny.inputs", "vit_tiny.inputs2"}) {
    const TensorMap inputs = engine_test::LoadInputs(engine_test::kModels + folder);
    const int64_t batch = inputs.at("pixels").dim(0);
    for (const std::string route : {"", "prune.rows=off"}) {
      auto built = engine_test::BuildRoute(*g, route, engine_test::FixedShapes(inputs));
      ASSERT_TRUE(built.ok()) << built.status().ToString();
      const bool on = route.empty();
      EXPECT_EQ(Fired(built->report, "prune.rows") > 0, on) << folder << " " << route;
      int ffn = 0;
      for (const EngineStep& st : built->engine.steps) {
        if (st.name.find("linear1/MatMul") == std::string::npos) continue;
        ++ffn;
        const int64_t rows = st.output_shapes[0][0] * st.output_shapes[0][1];
        const bool last = st.name.find("layers.1/") != std::string::npos;
        EXPECT_EQ(rows, batch * (last && on ? 1 : 17)) << st.name << " " << folder << " " << route;
      }
      EXPECT_EQ(ffn, 2) << folder << " " << route;
      engine_test::ExpectMatchesReference(*g, built->engine, inputs, 1e-5, std::string(folder) + " " + route);
    }
  }
}

}  // namespace
}  // namespace switchyard::testing
