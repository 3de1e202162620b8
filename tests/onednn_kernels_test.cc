// oneDNN/OpenBLAS provider tests beyond the shared harness: blocked and nhwc layouts
// declared by Prepare and run end to end with inputs produced by the Reorder kernel,
// pre-packed weight checks (a different CPU's packing is refused), dynamic shapes,
// concurrent Run, int8 conv, and a small throughput note (printed, not asserted).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "backends/cpu/onednn/common.h"
#include "backends/cpu/op_impl.h"
#include "backends/cpu/single_op.h"
#include "ir/shape_inference.h"
#include "reference/op_registry.h"

namespace switchyard {
namespace {

Tensor Random(std::vector<int64_t> shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  Tensor t(DataType::kFloat, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

double RelL2(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = a.GetDouble(i) - b.GetDouble(i);
    num += d * d;
    den += b.GetDouble(i) * b.GetDouble(i);
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

Attribute Ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
Attribute Str(std::string s) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(s);
  return a;
}

// One node prepared the way the builder does it, with a chosen layout/precision; inputs
// flagged constant become graph constants.
struct Prepared {
  Graph g;
  Target target = Target::HostCpu();
  Route route;
  RouteSpace space;
  StepSpec spec;
  std::unique_ptr<Kernel> kernel;
  std::vector<std::vector<int64_t>> in_shapes;
};

Result<std::unique_ptr<Prepared>> Prepare(const CpuOpImpl& impl, Node node, const std::vector<const Tensor*>& in,
                                          const std::vector<bool>& constant, const std::string& layout,
                                          const std::string& precision = "fp32", const std::string& quant = "none",
                                          std::vector<std::vector<int64_t>> shapes_override = {}) {
  auto p = std::make_unique<Prepared>();
  Graph& g = p->g;
  g.opsets[""] = 17;
  g.opsets["switchyard"] = 1;
  node.inputs.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i]) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    std::vector<int64_t> shape = i < shapes_override.size() && !shapes_override[i].empty() ? shapes_override[i] : in[i]->shape();
    TensorType t = TensorType::FromShape(DataType::kFloat, in[i]->shape());
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] < 0) t.dims[d] = Dim();
    }
    const ValueId id = g.AddValue("in" + std::to_string(i), t);
    if (constant[i]) g.constants.emplace(id, *in[i]); else g.inputs.push_back(id);
    node.inputs.push_back(id);
  }
  node.outputs = {g.AddValue("out")};
  g.outputs = node.outputs;
  g.nodes.push_back(node);
  g.RebuildProducers();
  SY_RETURN_IF_ERROR(InferShapes(g));
  const Node& n = g.nodes[0];
  KernelBuildContext ctx{g, p->target, p->route, p->space};
  ctx.precision = precision;
  ctx.quant_weights = quant;
  ctx.layout = layout;
  ctx.variant = impl.variant;
  for (ValueId id : n.inputs) {
    ctx.input_shapes.push_back(id == kNoValue ? std::vector<int64_t>{} : g.value(id).type.StaticShape());
    ctx.input_dtypes.push_back(id == kNoValue ? DataType::kUndefined : DataType::kFloat);
    ctx.constants.push_back(id == kNoValue ? nullptr : g.Constant(id));
  }
  if (!impl.supports(n, ctx)) {
    StepSpec probe;  // the reason, for the failure message
    const Status why = impl.prepare(n, ctx, probe);
    return Status::Unsupported("not supported: " + why.ToString());
  }
  SY_RETURN_IF_ERROR(impl.prepare(n, ctx, p->spec));
  StepView view{n, p->spec.params, {}, ctx.input_shapes, {g.value(n.outputs[0]).type.StaticShape()},
                ctx.input_dtypes, {DataType::kFloat}, {}, {}};
  for (const Tensor& t : p->spec.packed) view.packed.push_back(&t);
  SY_ASSIGN_OR_RETURN(p->kernel, impl.create(view));
  return p;
}

// Runs a Reorder from/to on `x` (plain logical shape) and returns the raw output bytes.
std::vector<float> ReorderTo(const Tensor& x, const std::string& from, const std::string& to, size_t out_floats) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("onednn", "switchyard", "Reorder");
  Node n;
  n.name = "r";
  n.op_type = "Reorder";
  n.domain = "switchyard";
  n.attrs["from"] = Str(from);
  n.attrs["to"] = Str(to);
  auto p = Prepare(*impl, n, {&x}, {false}, "nchw");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  std::vector<float> out(out_floats, 0.f);
  TensorRef in{DataType::kFloat, x.shape(), const_cast<void*>(x.raw()), from};
  TensorRef o{DataType::kFloat, x.shape(), out.data(), to};
  KernelIO io;
  io.inputs = {&in};
  io.outputs = {&o};
  EXPECT_TRUE((*p)->kernel->Run(io).ok());
  return out;
}

Tensor Reference(const Node& node, const std::vector<const Tensor*>& in) {
  const OpSchema* s = OpRegistry::Global().Find(node.domain, node.op_type, node.domain.empty() ? 17 : 1);
  Node n = node;
  n.outputs = {0};
  auto r = s->run(KernelContext{n, node.domain.empty() ? 17 : 1, in});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return (*r)[0];
}

Node ConvNode(const std::string& op = "Conv", std::vector<int64_t> pads = {1, 1, 1, 1}) {
  Node n;
  n.name = "conv";
  n.op_type = op;
  n.domain = op == "Conv" ? "" : "switchyard";
  n.attrs["pads"] = Ints(std::move(pads));
  return n;
}

// Runs a prepared FusedConv on X, B, Z (plain tensors, handed over in the layouts the step
// declared) at 2 threads and returns Y turned back to plain.
Tensor RunFusedConv(const Prepared& p, const Tensor& x, const Tensor& b, const Tensor& z,
                    const std::vector<int64_t>& y_shape) {
  const auto& params = p.spec.params;
  const std::string in_l = params["input_layouts"][0], out_l = params["output_layouts"][0];
  const size_t out_bytes = params["output_bytes"][0].get<size_t>();
  std::vector<float> xb = ReorderTo(x, "", in_l, x.numel() * 2), zb = ReorderTo(z, "", out_l, out_bytes / 4);
  std::vector<float> yb(out_bytes / 4);
  TensorRef xr{DataType::kFloat, x.shape(), xb.data(), in_l}, br{DataType::kFloat, b.shape(), const_cast<void*>(b.raw()), ""};
  TensorRef zr{DataType::kFloat, z.shape(), zb.data(), out_l}, yr{DataType::kFloat, y_shape, yb.data(), out_l};
  KernelIO io;
  io.inputs = {&xr, nullptr, &br, &zr};
  io.outputs = {&yr};
  io.threads = 2;
  const Status st = p.kernel->Run(io);
  EXPECT_TRUE(st.ok()) << st.ToString();
  // Back to plain through the Reorder kernel.
  Tensor y(DataType::kFloat, y_shape);
  std::memcpy(y.raw(), yb.data(), y.nbytes());
  const std::vector<float> plain = ReorderTo(y, out_l, "", y.numel());
  std::memcpy(y.raw(), plain.data(), y.nbytes());
  return y;
}

TEST(OnednnLayouts, BlockedConvDeclaresAndRunsBlockedLayouts) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("onednn", "switchyard", "FusedConv");
  ASSERT_NE(impl, nullptr);
  Node node = ConvNode("FusedConv");
  node.attrs["activation"] = Str("Relu");
  const Tensor x = Random({1, 32, 14, 14}, 1), w = Random({48, 32, 3, 3}, 2), b = Random({48}, 3);
  const Tensor z = Random({1, 48, 14, 14}, 4);
  auto p = Prepare(*impl, node, {&x, &w, &b, &z}, {false, true, true, false}, "blocked");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const auto& params = (*p)->spec.params;
  const std::string in_l = params["input_layouts"][0], out_l = params["output_layouts"][0];
  // Whatever named layout the primitive picked (brgconv on AVX-512 picks nhwc, the
  // older jit kernels nChw16c); Prepare declares it.
  EXPECT_TRUE(in_l == "nChw16c" || in_l == "nChw8c" || in_l == "nhwc") << params.dump();
  EXPECT_EQ(params["input_layouts"][3], out_l);  // Z arrives in the output layout
  ASSERT_TRUE(params.contains("output_bytes"));
  const size_t out_bytes = params["output_bytes"][0].get<size_t>();
  EXPECT_EQ(out_bytes, 48u * 14 * 14 * 4);  // 48 channels are a multiple of 16: no padding
  EXPECT_NE(params.value("impl", ""), "");
  EXPECT_LT(RelL2(RunFusedConv(**p, x, b, z, {1, 48, 14, 14}), Reference(node, {&x, &w, &b, &z})), 1e-5);
}

// SiLU runs after the primitive (native::SiluInPlace, "activation_impl": "native" where
// the CPU has AVX-512), on the residual sum, over an nhwc output of 40 x 81 elements (not a
// multiple of the 16 lanes, split between 2 threads): same values as the reference.
TEST(OnednnConvSilu, NativeSiluFollowsTheResidual) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("onednn", "switchyard", "FusedConv");
  ASSERT_NE(impl, nullptr);
  Node node = ConvNode("FusedConv");
  node.attrs["activation"] = Str("SiLU");
  const Tensor x = Random({1, 24, 9, 9}, 5), w = Random({40, 24, 3, 3}, 6), b = Random({40}, 7);
  const Tensor z = Random({1, 40, 9, 9}, 8);
  auto p = Prepare(*impl, node, {&x, &w, &b, &z}, {false, true, true, false}, "nhwc");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const auto& params = (*p)->spec.params;
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512: SiLU stays a oneDNN post-op";
  EXPECT_EQ(params.value("activation_impl", ""), "native") << params.dump();
  EXPECT_LT(RelL2(RunFusedConv(**p, x, b, z, {1, 40, 9, 9}), Reference(node, {&x, &w, &b, &z})), 1e-5);
}

// The declared input layout is what the primitive wants for a 3-channel image (plain or
// nhwc depending on the kernel oneDNN picks), never a padded blocked layout.
TEST(OnednnLayouts, FirstConvWithThreeChannelsAvoidsPaddedBlocks) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("onednn", "", "Conv");
  Node node = ConvNode("Conv", {3, 3, 3, 3});
  node.attrs["strides"] = Ints({2, 2});
  const Tensor x = Random({1, 3, 64, 64}, 5), w = Random({32, 3, 7, 7}, 6);
  auto p = Prepare(*impl, node, {&x, &w}, {false, true}, "blocked");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const auto& params = (*p)->spec.params;
  const std::string in_l = params["input_layouts"][0];
  EXPECT_TRUE(in_l == "" || in_l == "nhwc") << params.dump();
  EXPECT_NE(params["output_layouts"][0], "") << params.dump();
}

TEST(OnednnLayouts, PoolAndBinaryInBlockedAndNhwc) {
  const Tensor x = Random({1, 20, 9, 9}, 7), s = Random({1, 20, 1, 1}, 8);
  for (const std::string route : {"blocked", "nhwc"}) {
    Node pool;
    pool.name = "pool";
    pool.op_type = "MaxPool";
    pool.attrs["kernel_shape"] = Ints({3, 3});
    pool.attrs["strides"] = Ints({2, 2});
    pool.attrs["pads"] = Ints({1, 1, 1, 1});
    auto pp = Prepare(*CpuImplRegistry::Global().Find("onednn", "", "MaxPool"), pool, {&x}, {false}, route);
    ASSERT_TRUE(pp.ok()) << pp.status().ToString();
    const std::string l = (*pp)->spec.params["input_layouts"][0];
    // Blocked: 16 channels a block with AVX-512, 8 with AVX2 (20 -> 32 or 24 padded).
    EXPECT_EQ(l, route == "nhwc" ? "nhwc" : onednn::DefaultBlockedLayout());
    const size_t block = l == "nChw16c" ? 16 : 8;
    const size_t in_floats = route == "nhwc" ? x.numel() : 1 * (20 + block - 1) / block * block * 81;
    std::vector<float> xb = ReorderTo(x, "", l, in_floats);
    const size_t out_floats = (*pp)->spec.params["output_bytes"][0].get<size_t>() / 4;
    std::vector<float> yb(out_floats);
    TensorRef xr{DataType::kFloat, x.shape(), xb.data(), l}, yr{DataType::kFloat, {1, 20, 5, 5}, yb.data(), l};
    KernelIO io;
    io.inputs = {&xr};
    io.outputs = {&yr};
    ASSERT_TRUE((*pp)->kernel->Run(io).ok());
    // Squeeze-excite style scale in the same layout, then back to plain.
    Node mul;
    mul.name = "se";
    mul.op_type = "Mul";
    const Tensor y0 = Random({1, 20, 5, 5}, 9);
    auto pm = Prepare(*CpuImplRegistry::Global().Find("onednn", "", "Mul"), mul, {&y0, &s}, {false, false}, route);
    ASSERT_TRUE(pm.ok()) << pm.status().ToString();
    EXPECT_EQ((*pm)->spec.params["input_layouts"][0], l);
    // The per-channel scale: nhwc in an nhwc route (the same bytes as plain for
    // [1,C,1,1], so no reorder is inserted before the step); plain in a blocked one.
    EXPECT_EQ((*pm)->spec.params["input_layouts"][1], route == "nhwc" ? "nhwc" : "");
    std::vector<float> zb(out_floats);
    TensorRef sr{DataType::kFloat, s.shape(), const_cast<void*>(s.raw()), ""}, zr{DataType::kFloat, {1, 20, 5, 5}, zb.data(), l};
    KernelIO io2;
    io2.inputs = {&yr, &sr};
    io2.outputs = {&zr};
    ASSERT_TRUE((*pm)->kernel->Run(io2).ok());
    Tensor zt(DataType::kFloat, {static_cast<int64_t>(out_floats)});
    std::memcpy(zt.raw(), zb.data(), zt.nbytes());
    std::vector<float> plain = ReorderTo(zt.Reshaped({1, 20, 5, 5}), l, "", 500);
    Tensor got(DataType::kFloat, {1, 20, 5, 5});
    std::memcpy(got.raw(), plain.data(), got.nbytes());
    const Tensor pooled = Reference(pool, {&x});
    const Tensor ref = Reference(mul, {&pooled, &s});
    EXPECT_LT(RelL2(got, ref), 1e-6) << route;
  }
}

// Per-channel operands over nhwc tensors (the native rows loop): batch 2 with a per-batch
// [2,C,1,1] and a shared [1,C,1,1] operand, either operand order of Mul and Add, Sub, and the
// output written over the full input (in place, as the memory plan may place it).
TEST(OnednnLayouts, PerChannelBinaryInNhwcMatchesTheReference) {
  const Tensor x = Random({2, 24, 5, 3}, 21);
  for (const std::vector<int64_t> cshape : {std::vector<int64_t>{2, 24, 1, 1}, std::vector<int64_t>{1, 24, 1, 1}}) {
    const Tensor c = Random(cshape, 22);
    for (const std::string op : {"Mul", "Add", "Sub"}) {
      for (const bool channel_first : {false, true}) {
        if (op == "Sub" && channel_first) continue;  // a broadcast left operand of Sub has no oneDNN form
        for (const bool in_place : {false, true}) {
          SCOPED_TRACE(op + (channel_first ? " channel first" : "") + (in_place ? " in place" : "") + " batch " +
                       std::to_string(cshape[0]));
          Node node;
          node.name = "bin";
          node.op_type = op;
          const std::vector<const Tensor*> in = channel_first ? std::vector<const Tensor*>{&c, &x}
                                                              : std::vector<const Tensor*>{&x, &c};
          auto pm = Prepare(*CpuImplRegistry::Global().Find("onednn", "", op), node, in, {false, false}, "nhwc");
          ASSERT_TRUE(pm.ok()) << pm.status().ToString();
          std::vector<float> xb = ReorderTo(x, "", "nhwc", static_cast<size_t>(x.numel()));
          std::vector<float> yb(xb.size(), -7.f);
          TensorRef xr{DataType::kFloat, x.shape(), xb.data(), "nhwc"};
          TensorRef cr{DataType::kFloat, c.shape(), const_cast<void*>(c.raw()), "nhwc"};
          TensorRef yr{DataType::kFloat, x.shape(), in_place ? xb.data() : yb.data(), "nhwc"};
          KernelIO io;
          io.inputs = channel_first ? std::vector<const TensorRef*>{&cr, &xr} : std::vector<const TensorRef*>{&xr, &cr};
          io.outputs = {&yr};
          io.threads = 2;
          ASSERT_TRUE((*pm)->kernel->Run(io).ok());
          Tensor yt(DataType::kFloat, {x.numel()});
          std::memcpy(yt.raw(), in_place ? xb.data() : yb.data(), yt.nbytes());
          std::vector<float> plain = ReorderTo(yt.Reshaped(x.shape()), "nhwc", "", static_cast<size_t>(x.numel()));
          Tensor got(DataType::kFloat, x.shape());
          std::memcpy(got.raw(), plain.data(), got.nbytes());
          EXPECT_EQ(RelL2(got, Reference(node, in)), 0.0);
        }
      }
    }
  }
}

TEST(OnednnPacking, DifferentCpuWeightsAreRefused) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("onednn", "", "Conv");
  const Tensor x = Random({1, 16, 8, 8}, 10), w = Random({16, 16, 3, 3}, 11);
  auto p = Prepare(*impl, ConvNode(), {&x, &w}, {false, true}, "nchw");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  nlohmann::json params = (*p)->spec.params;
  EXPECT_EQ(params["weights_bytes"].get<size_t>(), (*p)->spec.packed[0].nbytes());
  params["weights_format"] = "f32 dims=16x16x3x3 (packed for another CPU)";
  const Node& n = (*p)->g.nodes[0];
  StepView view{n, params, {&(*p)->spec.packed[0]}, {{1, 16, 8, 8}, {16, 16, 3, 3}}, {{1, 16, 8, 8}},
                {DataType::kFloat, DataType::kFloat}, {DataType::kFloat}, {}, {}};
  auto k = impl->create(view);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("engine was built for a different CPU"), std::string::npos);
  EXPECT_NE(k.status().message().find("conv"), std::string::npos);
}

TEST(OnednnPacking, PackingIsDeterministic) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("onednn", "", "MatMul");
  Node n;
  n.name = "mm";
  n.op_type = "MatMul";
  const Tensor a = Random({8, 64}, 12), b = Random({64, 80}, 13);
  auto p1 = Prepare(*impl, n, {&a, &b}, {false, true}, "nchw");
  auto p2 = Prepare(*impl, n, {&a, &b}, {false, true}, "nchw");
  ASSERT_TRUE(p1.ok() && p2.ok());
  EXPECT_TRUE((*p1)->spec.packed[0] == (*p2)->spec.packed[0]);
  EXPECT_EQ((*p1)->spec.params, (*p2)->spec.params);
}

TEST(OnednnDynamic, ConvRunsAtShapesOtherThanTheBuildShapeConcurrently) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("onednn", "", "Conv");
  const Tensor w = Random({24, 8, 3, 3}, 14);
  const Tensor x0 = Random({1, 8, 16, 16}, 15);
  auto p = Prepare(*impl, ConvNode(), {&x0, &w}, {false, true}, "nchw", "fp32", "none", {{-1, 8, -1, -1}});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const Kernel& k = *(*p)->kernel;
  std::vector<std::thread> threads;
  std::vector<double> errs(4, 1.0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const Tensor x = Random({1 + t % 2, 8, 10 + 3 * t, 12}, 20 + t);
      TensorRef xr{DataType::kFloat, x.shape(), const_cast<void*>(x.raw()), ""};
      auto shapes = k.OutputShapes({&xr, nullptr});
      if (!shapes.ok()) return;
      Tensor y(DataType::kFloat, (*shapes)[0]);
      TensorRef yr{DataType::kFloat, y.shape(), y.raw(), ""};
      KernelIO io;
      io.inputs = {&xr, nullptr};
      io.outputs = {&yr};
      for (int rep = 0; rep < 3; ++rep) {
        if (!k.Run(io).ok()) return;
      }
      errs[t] = RelL2(y, Reference(ConvNode(), {&x, &w}));
    });
  }
  for (auto& th : threads) th.join();
  for (double e : errs) EXPECT_LT(e, 1e-5);
}

// Kernels keep their dnnl::memory objects per thread and re-point them at each call's
// buffers (ExecArgs): alternating inputs, outputs and shapes on one thread must give each
// call its own result, never a previous call's.
TEST(OnednnArgs, CachedMemoryFollowsEachCallsBuffersAndShapes) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("onednn", "", "Conv");
  const Tensor w = Random({16, 8, 3, 3}, 40);
  const Tensor x0 = Random({1, 8, 12, 12}, 41);
  auto p = Prepare(*impl, ConvNode(), {&x0, &w}, {false, true}, "nchw", "fp32", "none", {{-1, 8, -1, -1}});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const Kernel& k = *(*p)->kernel;
  const Tensor xs[] = {Random({1, 8, 12, 12}, 42), Random({1, 8, 12, 12}, 43), Random({1, 8, 7, 9}, 44)};
  for (int call = 0; call < 7; ++call) {
    const Tensor& x = xs[call % 3];
    TensorRef xr{DataType::kFloat, x.shape(), const_cast<void*>(x.raw()), ""};
    auto shapes = k.OutputShapes({&xr, nullptr});
    ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
    Tensor y(DataType::kFloat, (*shapes)[0]);  // a fresh output buffer per call
    TensorRef yr{DataType::kFloat, y.shape(), y.raw(), ""};
    KernelIO io;
    io.inputs = {&xr, nullptr};
    io.outputs = {&yr};
    ASSERT_TRUE(k.Run(io).ok());
    EXPECT_LT(RelL2(y, Reference(ConvNode(), {&x, &w})), 1e-5) << "call " << call;
  }
}

// The per-thread lists are bounded: past the limit they are dropped (and remade on use),
// except while a list is held by an ExecArgs in progress on the same thread.
TEST(OnednnArgs, PerThreadListsAreBounded) {
  using onednn::memory;
  const memory::desc md({4}, onednn::Dt::f32, onednn::Tag::a);
  const dnnl::reorder copy(dnnl::reorder::primitive_desc(onednn::CpuEngine(), md, onednn::CpuEngine(), md));
  float in[4] = {1, 2, 3, 4}, out[4] = {};
  std::vector<onednn::ArgsKey> keys(20000);
  size_t most = 0;
  for (const onednn::ArgsKey& key : keys) {
    onednn::ExecArgs(key).Add(DNNL_ARG_FROM, md, in).Add(DNNL_ARG_TO, md, out).Run(copy);
    most = std::max(most, onednn::ExecArgs::ListsOfThisThread());
  }
  EXPECT_LE(most, 16384u);
  EXPECT_LT(onednn::ExecArgs::ListsOfThisThread(), keys.size());
  EXPECT_EQ(out[3], 4.f);
  // Held: a nested ExecArgs past the limit does not drop the outer one's list.
  onednn::ExecArgs outer(keys[0]);
  outer.Add(DNNL_ARG_FROM, md, in);
  for (size_t i = 1; i < keys.size(); ++i) onednn::ExecArgs(keys[i]).Add(DNNL_ARG_FROM, md, in).Add(DNNL_ARG_TO, md, out).Run(copy);
  EXPECT_GE(onednn::ExecArgs::ListsOfThisThread(), keys.size());
  float out2[4] = {};
  outer.Add(DNNL_ARG_TO, md, out2).Run(copy);
  EXPECT_EQ(out2[2], 3.f);
}

TEST(OnednnInt8, ConvQuantizedMatchesReference) {
  const CpuOpImpl* impl = CpuImplRegistry::Global().Find("onednn", "", "Conv");
  const CpuFeatures f = Target::HostCpu().features;
  if (!f.avx512_vnni && !f.amx_int8) {
    GTEST_SKIP() << "without VNNI or AMX oneDNN 2.6's u8s8 kernels saturate 16-bit sums (rel L2 "
                    "~0.1 here): int8 stays a candidate the accuracy gate judges, not checked at 5e-2";
  }
  for (float lo : {0.f, -1.f}) {  // u8 and s8 activations
    const Tensor x = Random({1, 32, 14, 14}, 30, lo, 1.f), w = Random({64, 32, 3, 3}, 31), b = Random({64}, 32);
    auto p = Prepare(*impl, ConvNode(), {&x, &w, &b}, {false, true, true}, "nchw", "fp32", "int8");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ((*p)->spec.params["precision"], "int8");
    const std::string l = (*p)->spec.params["input_layouts"][0];
    std::vector<float> xb = ReorderTo(x, "", l, x.numel());
    const std::string ol = (*p)->spec.params["output_layouts"][0];
    std::vector<float> yb(64 * 14 * 14);
    TensorRef xr{DataType::kFloat, x.shape(), xb.data(), l}, br{DataType::kFloat, {64}, const_cast<void*>(b.raw()), ""};
    TensorRef yr{DataType::kFloat, {1, 64, 14, 14}, yb.data(), ol};
    KernelIO io;
    io.inputs = {&xr, nullptr, &br};
    io.outputs = {&yr};
    ASSERT_TRUE((*p)->kernel->Run(io).ok());
    Tensor yt(DataType::kFloat, {1, 64, 14, 14});
    std::memcpy(yt.raw(), yb.data(), yt.nbytes());
    std::vector<float> plain = ReorderTo(yt, ol, "", yt.numel());
    Tensor got(DataType::kFloat, {1, 64, 14, 14});
    std::memcpy(got.raw(), plain.data(), got.nbytes());
    EXPECT_LT(RelL2(got, Reference(ConvNode(), {&x, &w, &b})), 5e-2) << "lo=" << lo;
  }
}

// Throughput note: one 3x3 256→256 conv at 14x14 with fused ReLU, per variant/precision.
// The native f32 -> bf16 conversion (SrcConversion's fast path) gives oneDNN's reorder's
// bits: ties to even, NaN, infinities, signed zeros, values near FLT_MAX and, where the CPU
// converts with AVX512_BF16 (both paths then use vcvtneps2bf16), denormals; at sizes with
// and without vector tails, on one and two threads. Layout changes or strided inputs are
// not plain conversions and stay oneDNN reorders.
TEST(OnednnConversion, NativeBf16ConversionGivesTheReordersBits) {
  using onednn::Dt;
  using onednn::memory;
  const bool cpu_bf16 = __builtin_cpu_supports("avx512bf16") != 0;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  for (const int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{47}, int64_t{100003}}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = u(rng);
    const uint32_t specials[] = {0x7fc00000u, 0xffc00001u, 0x7f800000u, 0xff800000u, 0x80000000u, 0x00000000u,
                                 0x7f7fffffu, 0x3f808000u, 0x3f818000u, 0x3f80c000u, 0x00000001u, 0x807fffffu};
    for (size_t i = 0; i < std::size(specials) && i < x.size(); ++i) {
      // Without AVX512_BF16 oneDNN 2.6's reorder keeps denormals and gives -0 as +0 (an
      // AVX2 Zen 3 EPYC); precision=bf16 needs that instruction set, so those bits differ
      // only where the native conversion never runs.
      if (!cpu_bf16 && (specials[i] == 0x00000001u || specials[i] == 0x807fffffu || specials[i] == 0x80000000u)) continue;
      std::memcpy(&x[i * 7 % x.size()], &specials[i], 4);
    }
    const memory::desc from({1, n}, Dt::f32, onednn::Tag::ab), to({1, n}, Dt::bf16, onednn::Tag::ab);
    ASSERT_TRUE(onednn::PlainConversionToBf16(from, to));
    std::vector<uint16_t> want(x.size()), got(x.size());
    memory src(from, onednn::CpuEngine(), x.data()), dst(to, onednn::CpuEngine(), want.data());
    dnnl::reorder(dnnl::reorder::primitive_desc(onednn::CpuEngine(), from, onednn::CpuEngine(), to))
        .execute(onednn::ThreadStream(), src, dst);
    onednn::ThreadStream().wait();
    for (const int threads : {1, 2}) {
      onednn::SrcConversion cvt;
      cvt.Init(from, to);
      ASSERT_TRUE(cvt.needed());
      std::fill(got.begin(), got.end(), 0xdead);
      cvt.Run(x.data(), got.data(), onednn::ArgsKey(), 1, threads);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << "n " << n << " threads " << threads << " element " << i << " = " << x[i];
      }
    }
  }
  // Not plain conversions: another layout, a blocked one, f32 to f32, a strided source.
  const memory::desc nchw({1, 32, 4, 4}, Dt::f32, onednn::Tag::nchw);
  EXPECT_FALSE(onednn::PlainConversionToBf16(nchw, memory::desc({1, 32, 4, 4}, Dt::bf16, onednn::Tag::nhwc)));
  EXPECT_FALSE(onednn::PlainConversionToBf16(nchw, memory::desc({1, 32, 4, 4}, Dt::bf16, onednn::Tag::nChw16c)));
  EXPECT_FALSE(onednn::PlainConversionToBf16(nchw, nchw));
  EXPECT_FALSE(onednn::PlainConversionToBf16(memory::desc({4, 8}, Dt::f32, memory::dims{16, 1}),
                                             memory::desc({4, 8}, Dt::bf16, memory::dims{16, 1})));
  EXPECT_TRUE(onednn::PlainConversionToBf16(memory::desc({1, 32, 4, 4}, Dt::f32, onednn::Tag::nhwc),
                                            memory::desc({1, 32, 4, 4}, Dt::bf16, onednn::Tag::nhwc)));
}

TEST(OnednnBench, Conv3x3Throughput) {
  const Tensor x = Random({1, 256, 14, 14}, 40), w = Random({256, 256, 3, 3}, 41), b = Random({256}, 42);
  Node node = ConvNode("FusedConv");
  node.attrs["activation"] = Str("Relu");
  const double flops = 2.0 * 256 * 256 * 9 * 14 * 14;
  struct Row {
    const char* provider;
    const char* variant;
    const char* precision;
    const char* layout;
  };
  for (const Row& r : {Row{"onednn", "direct", "fp32", "blocked"}, Row{"onednn", "winograd", "fp32", "blocked"},
                       Row{"onednn", "", "bf16", "blocked"}, Row{"onednn", "", "fp32", "nchw"},
                       Row{"openblas", "im2col_gemm", "fp32", "nchw"}, Row{"native", "winograd_f43", "fp32", "nhwc"}}) {
    const CpuOpImpl* impl = CpuImplRegistry::Global().Find(r.provider, "switchyard", "FusedConv", r.variant);
    ASSERT_NE(impl, nullptr);
    auto p = Prepare(*impl, node, {&x, &w, &b}, {false, true, true}, r.layout, r.precision);
    if (!p.ok()) {
      std::printf("[bench] %s/%s %s: %s\n", r.provider, r.variant, r.precision, p.status().ToString().c_str());
      continue;
    }
    const std::string l = (*p)->spec.params.value("input_layouts", nlohmann::json::array({""}))[0];
    std::vector<float> xb = ReorderTo(x, "", l, x.numel());
    std::vector<float> yb(256 * 14 * 14);
    TensorRef xr{DataType::kFloat, x.shape(), xb.data(), l}, br{DataType::kFloat, {256}, const_cast<void*>(b.raw()), ""};
    TensorRef wr{DataType::kFloat, w.shape(), const_cast<void*>(w.raw()), ""};
    TensorRef yr{DataType::kFloat, {1, 256, 14, 14}, yb.data(), ""};
    KernelIO io;
    io.inputs = {&xr, std::string(r.provider) == "openblas" ? &wr : nullptr, &br};
    io.outputs = {&yr};
    io.threads = 2;
    ASSERT_TRUE((*p)->kernel->Run(io).ok());
    const int reps = 20;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) ASSERT_TRUE((*p)->kernel->Run(io).ok());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    std::printf("[bench] conv3x3 256->256 14x14 %-8s %-12s %-5s %-8s %8.1f GFLOP/s (%s)\n", r.provider,
                r.variant[0] ? r.variant : "auto", r.precision, r.layout, flops / s * 1e-9,
                (*p)->spec.params.value("impl", "").c_str());
  }
}

}  // namespace
}  // namespace switchyard
