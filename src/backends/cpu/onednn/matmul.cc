// oneDNN MatMul, Gemm and switchyard.FusedMatMul: bias, residual (sum post-op) and
// activation fused; fp32, bf16 (constant B) and int8 (constant 2-D B, per-column s8
// weights, activations quantized per tensor at run time). A constant B is packed at build
// time into the format the primitive picks (format_tag::any).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "backends/cpu/onednn/common.h"
#include "reference/ops/common.h"

namespace switchyard::onednn {
namespace {

using MatMulPd = dnnl::matmul::primitive_desc;

// The node in one normal form: act(alpha*op(A)·op(B) + beta_bias*bias + beta*Z).
struct MmSpec {
  bool trans_a = false, trans_b = false;
  float alpha = 1.f, beta = 1.f;  // beta scales Gemm's C (bias or residual)
  int bias = -1, z = -1;          // input indices, -1 when absent
  Prec prec = Prec::kF32;
  bool flat = false;  // constant 2-D B: A's leading dims flattened into M
};

Result<MmSpec> MakeSpec(const Node& node, const std::vector<std::vector<int64_t>>& shapes) {
  MmSpec s;
  if (node.op_type == "Gemm") {
    s.trans_a = node.GetInt("transA", 0) != 0;
    s.trans_b = node.GetInt("transB", 0) != 0;
    s.alpha = node.GetFloat("alpha", 1.f);
    s.beta = node.GetFloat("beta", 1.f);
    if (node.HasInput(2)) {
      const auto& c = shapes[2];
      const bool row = (c.size() == 1 && c[0] != 1) || (c.size() == 2 && c[0] == 1 && c[1] != 1);
      (row ? s.bias : s.z) = 2;
    }
  } else if (node.op_type == "FusedMatMul") {
    s.trans_a = node.GetInt("trans_a", 0) != 0;
    s.trans_b = node.GetInt("trans_b", 0) != 0;
    s.alpha = node.GetFloat("alpha", 1.f);
    if (node.HasInput(2)) s.bias = 2;
    if (node.HasInput(3)) s.z = 3;
  }
  if (s.alpha == 0.f) return ops::NodeError(node, "alpha 0 is not supported by the oneDNN matmul");
  return s;
}

// Logical A [.., M, K] / B [.., K, N] descs (strided when transposed), output dims.
struct MmGeom {
  memory::dims a, b, out, bias;  // dims as oneDNN sees them
  memory::dims a_strides, b_strides;
  std::vector<int64_t> out_shape;  // the node's output shape
  int64_t n = 0;
};

memory::dims PlainStrides(const memory::dims& stored) {
  memory::dims st(stored.size(), 1);
  for (int i = static_cast<int>(stored.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * stored[i + 1];
  return st;
}

// Logical dims and strides of an operand stored as `stored` (rank >= 2), optionally
// transposed in its last two dims, padded with leading 1s to `rank`.
void Operand(std::vector<int64_t> stored, bool trans, size_t rank, memory::dims& dims, memory::dims& strides) {
  while (stored.size() < rank) stored.insert(stored.begin(), 1);
  strides = PlainStrides(Dims(stored));
  dims = Dims(stored);
  if (trans) {
    std::swap(dims[rank - 1], dims[rank - 2]);
    std::swap(strides[rank - 1], strides[rank - 2]);
  }
}

Result<MmGeom> MakeGeom(const Node& node, const MmSpec& s, std::vector<int64_t> a, std::vector<int64_t> b) {
  MmGeom g;
  if (a.empty() || b.empty()) return ops::NodeError(node, "matmul operands must have rank >= 1");
  // oneDNN divides by the dims while choosing an implementation (an empty batch in a
  // corrupted engine raised SIGFPE inside dnnl_primitive_desc_iterator_create): refuse
  // empty and negative dims here; at build time another provider takes such a node.
  for (const auto* shape : {&a, &b}) {
    for (int64_t d : *shape) {
      if (d <= 0) {
        return ops::NodeError(node, "oneDNN matmul needs every dimension >= 1, got " + ShapeToString(a) + " x " +
                                        ShapeToString(b));
      }
    }
  }
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  const int64_t k = s.trans_a ? a[a.size() - 2] : a.back();
  const int64_t kb = s.trans_b ? b.back() : b[b.size() - 2];
  g.n = s.trans_b ? b[b.size() - 2] : b.back();
  if (k != kb) return ops::NodeError(node, "inner dimensions differ: " + ShapeToString(a) + " x " + ShapeToString(b));
  if (s.flat) {
    const int64_t m = s.trans_a ? a.back() : a[a.size() - 2];
    int64_t rows = m;
    for (size_t i = 0; i + 2 < a.size(); ++i) rows *= a[i];
    Operand(a.size() == 2 ? a : std::vector<int64_t>{rows, k}, s.trans_a && a.size() == 2, 2, g.a, g.a_strides);
    Operand(b, s.trans_b, 2, g.b, g.b_strides);
    g.out = {rows, g.n};
    g.out_shape.assign(a.begin(), a.end() - 2);
    g.out_shape.push_back(m);  // batch dims + M
  } else {
    const size_t rank = std::max(a.size(), b.size());
    if (rank > 6) return ops::NodeError(node, "matmul rank above 6");
    Operand(a, s.trans_a, rank, g.a, g.a_strides);
    Operand(b, s.trans_b, rank, g.b, g.b_strides);
    g.out = g.a;
    g.out[rank - 1] = g.n;
    for (size_t i = 0; i + 2 < rank; ++i) {
      if (g.a[i] != g.b[i] && g.a[i] != 1 && g.b[i] != 1) return ops::NodeError(node, "batch dims do not broadcast");
      g.out[i] = std::max(g.a[i], g.b[i]);
    }
    g.out_shape.assign(g.out.begin(), g.out.end() - 1);  // batch dims + M
  }
  // numpy 1-D promotion: the added dims are removed again.
  if (!b1) g.out_shape.push_back(g.n);
  if (a1) g.out_shape.erase(g.out_shape.end() - (b1 ? 1 : 2));
  g.bias = memory::dims(g.out.size(), 1);
  g.bias.back() = g.n;
  return g;
}

Result<MatMulPd> MakePd(const Node& node, const MmSpec& s, const MmGeom& g, Dt sdt, bool b_const,
                        const memory::desc* wei) {
  std::optional<MatMulPd> pd;
  SY_RETURN_IF_ERROR(Guard(node, "matmul primitive", [&]() -> Status {
    dnnl::primitive_attr attr = UserScratchAttr();
    dnnl::post_ops po;
    if (s.z >= 0) po.append_sum(s.beta);  // Z is copied (broadcast) into dst first
    SY_RETURN_IF_ERROR(AppendActivation(node, po));
    attr.set_post_ops(po);
    if (s.prec == Prec::kInt8) {
      attr.set_output_scales(1 << (g.out.size() - 1), {DNNL_RUNTIME_F32_VAL});
    } else if (s.alpha != 1.f) {
      attr.set_output_scales(0, {s.alpha});
    }
    const Dt wdt = s.prec == Prec::kInt8 ? Dt::s8 : s.prec == Prec::kBf16 ? Dt::bf16 : Dt::f32;
    const memory::desc a(g.a, sdt, g.a_strides);
    const memory::desc b = wei ? *wei : b_const ? memory::desc(g.b, wdt, Tag::any) : memory::desc(g.b, Dt::f32, g.b_strides);
    const memory::desc d(g.out, Dt::f32, PlainTag(g.out.size()));
    if (s.bias >= 0) {
      pd.emplace(dnnl::matmul::desc(a, b, memory::desc(g.bias, Dt::f32, PlainTag(g.bias.size())), d), attr, CpuEngine());
    } else {
      pd.emplace(dnnl::matmul::desc(a, b, d), attr, CpuEngine());
    }
    return Status::Ok();
  }));
  return *pd;
}

struct MmEntry {
  std::optional<MatMulPd> pd;
  dnnl::primitive prim;
  MmGeom geom;
  memory::desc src_f32, src, wei, dst;
  const void* wei_data = nullptr;
  std::vector<uint8_t> own_wei;
  SrcConversion src_cvt;
  ArgsKey args_key;
};

// Z broadcast (numpy rules) into the row-major output.
void BroadcastCopy(const TensorRef& z, const std::vector<int64_t>& out, float* dst) {
  const size_t r = out.size();
  std::vector<int64_t> zs(r, 1);
  for (size_t i = 0; i < z.shape.size() && i < r; ++i) zs[r - z.shape.size() + i] = z.shape[i];
  std::vector<int64_t> zstr(r, 0);
  int64_t acc = 1;
  for (size_t i = r; i-- > 0;) {
    zstr[i] = zs[i] == 1 ? 0 : acc;
    acc *= zs[i];
  }
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  const float* zp = z.as<float>();
#pragma omp parallel for
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i, off = 0;
    for (size_t d = r; d-- > 0;) {
      off += (rem % out[d]) * zstr[d];
      rem /= out[d];
    }
    dst[i] = zp[off];
  }
}

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(const Node& node, MmSpec s, std::vector<int64_t> b_shape, bool b_const, memory::desc packed_md,
               const Tensor* packed, const Tensor* w_scales)
      : node_(node), s_(s), b_shape_(std::move(b_shape)), b_const_(b_const), packed_md_(packed_md),
        packed_(packed), w_scales_(w_scales) {}

  Result<std::vector<std::vector<int64_t>>> OutputShapes(const std::vector<const TensorRef*>& in) const override {
    if (in.size() < 2 || !in[0] || (!b_const_ && !in[1])) return ops::NodeError(node_, "A and B are required");
    // The cached entry holds the geometry: no shape arithmetic (and no allocation) per call.
    SY_ASSIGN_OR_RETURN(auto e, Entry(in[0]->shape, b_const_ ? b_shape_ : in[1]->shape, SrcDt(s_.prec)));
    return std::vector<std::vector<int64_t>>{e->geom.out_shape};
  }

  Result<std::shared_ptr<const MmEntry>> Entry(const std::vector<int64_t>& a, const std::vector<int64_t>& b, Dt sdt) const {
    std::vector<int64_t>& key = KeyBuffer();
    key.insert(key.end(), a.begin(), a.end());
    key.push_back(-1);
    key.insert(key.end(), b.begin(), b.end());
    key.push_back(static_cast<int64_t>(sdt));
    return cache_.Get(key, [&]() -> Result<std::shared_ptr<const MmEntry>> {
      auto e = std::make_shared<MmEntry>();
      SY_ASSIGN_OR_RETURN(e->geom, MakeGeom(node_, s_, a, b));
      SY_ASSIGN_OR_RETURN(MatMulPd pd, MakePd(node_, s_, e->geom, sdt, b_const_, nullptr));
      e->pd.emplace(pd);
      e->src = pd.src_desc();
      e->wei = pd.weights_desc();
      e->dst = pd.dst_desc();
      e->src_f32 = memory::desc(e->geom.a, Dt::f32, e->geom.a_strides);
      if (b_const_) {
        e->wei_data = packed_->raw();
        if (e->wei != packed_md_) {
          SY_ASSIGN_OR_RETURN(e->own_wei, ReorderBytes(node_, packed_md_, packed_->raw(), e->wei));
          e->wei_data = e->own_wei.data();
        }
      }
      SY_RETURN_IF_ERROR(Guard(node_, "primitive creation", [&]() -> Status {
        e->prim = dnnl::matmul(pd);
        if (sdt == Dt::bf16) {
          // Converted into a dense buffer: the strided f32 view is read once.
          e->src = memory::desc(e->geom.a, Dt::bf16, e->geom.a_strides);
          e->src_cvt.Init(e->src_f32, e->src);
        }
        return Status::Ok();
      }));
      return std::shared_ptr<const MmEntry>(std::move(e));
    });
  }

  Status Run(const KernelIO& io) const override {
    ThreadScope threads(io.threads);
    const TensorRef* a = io.inputs[0];
    const TensorRef* b = b_const_ ? nullptr : io.inputs[1];
    TensorRef* y = io.outputs[0];
    if (!a || a->dtype != DataType::kFloat || (!b_const_ && (!b || b->dtype != DataType::kFloat))) {
      return ops::NodeError(node_, "A and B must be float32");
    }
    return Guard(node_, "matmul", [&]() -> Status {
      const std::vector<int64_t>& bshape = b_const_ ? b_shape_ : b->shape;
      Dt sdt = SrcDt(s_.prec);
      SY_ASSIGN_OR_RETURN(auto e, Entry(a->shape, bshape, sdt));
      const void* src = a->data;
      float x_scale = 1.f;
      if (s_.prec == Prec::kInt8) {
        SY_ASSIGN_OR_RETURN(src, QuantizePerTensor(node_, a->as<float>(), a->numel(), &x_scale, &sdt));
        if (sdt != Dt::u8) {
          SY_ASSIGN_OR_RETURN(e, Entry(a->shape, bshape, sdt));
        }
      } else if (e->src_cvt.needed()) {
        void* buf = ThreadScratch(kSrcConvert, e->src.get_size());
        e->src_cvt.Run(a->data, buf, e->args_key, 1, io.threads);
        src = buf;
      }
      ExecArgs args(e->args_key);
      args.Add(DNNL_ARG_SRC, e->src, src);
      args.Add(DNNL_ARG_WEIGHTS, e->wei, b_const_ ? e->wei_data : b->data);
      args.Add(DNNL_ARG_DST, e->dst, y->data);
      if (s_.z >= 0) {
        const TensorRef* z = io.inputs.size() > static_cast<size_t>(s_.z) ? io.inputs[s_.z] : nullptr;
        if (!z) return ops::NodeError(node_, "residual input missing");
        if (z->shape == y->shape) {
          if (z->data != y->data) std::memcpy(y->data, z->data, static_cast<size_t>(y->numel()) * 4);
        } else {
          BroadcastCopy(*z, y->shape, y->as<float>());
        }
      }
      const int64_t n = e->geom.n;
      // Output scale per column; oneDNN 2.x applies it after the bias, so the bias is
      // pre-divided (and Gemm's beta folded in).
      if (s_.prec == Prec::kInt8) {
        float* sc = static_cast<float*>(ThreadScratch(kAux, static_cast<size_t>(n) * 4));
        for (int64_t i = 0; i < n; ++i) sc[i] = x_scale * w_scales_->data<float>()[i] * s_.alpha;
        args.Add(DNNL_ARG_ATTR_OUTPUT_SCALES, {{n}, Dt::f32, Tag::a}, sc);
      }
      if (s_.bias >= 0) {
        const TensorRef* bias = io.inputs.size() > static_cast<size_t>(s_.bias) ? io.inputs[s_.bias] : nullptr;
        if (!bias || bias->numel() != n) return ops::NodeError(node_, "bias must have N elements");
        const float* bp = bias->as<float>();
        const float* sc = s_.prec == Prec::kInt8 ? static_cast<float*>(ThreadScratch(kAux, 0)) : nullptr;
        float* bq = static_cast<float*>(ThreadScratch(kAux2, static_cast<size_t>(n) * 4));
        for (int64_t i = 0; i < n; ++i) bq[i] = bp[i] * s_.beta / (sc ? sc[i] : s_.alpha);
        args.Add(DNNL_ARG_BIAS, e->pd->bias_desc(), bq);
      }
      args.Run(e->prim, &*e->pd);
      return Status::Ok();
    });
  }

 private:

  const Node node_;
  const MmSpec s_;
  const std::vector<int64_t> b_shape_;
  const bool b_const_;
  const memory::desc packed_md_;
  const Tensor* const packed_;
  const Tensor* const w_scales_;
  ShapeCache<MmEntry> cache_;
};

// Build-time decision: the normal form, precision and flat/batched mode.
Result<MmSpec> PlanSpec(const Node& node, const KernelBuildContext& ctx) {
  SY_ASSIGN_OR_RETURN(MmSpec s, MakeSpec(node, ctx.input_shapes));
  const bool b_const = ctx.constants.size() > 1 && ctx.constants[1];
  const size_t ra = ctx.input_shapes[0].size(), rb = ctx.input_shapes[1].size();
  s.flat = b_const && rb == 2 && (!s.trans_a || ra == 2);
  if (ctx.quant_weights == "int8" && s.flat) {
    s.prec = Prec::kInt8;
  } else if (ctx.precision == "bf16" && b_const && ctx.target.features.HasBf16()) {
    s.prec = Prec::kBf16;
  }
  return s;
}

bool SupportsMatMul(const Node& node, const KernelBuildContext& ctx) {
  const auto& d = ctx.input_dtypes;
  if (d.size() < 2) return false;
  for (size_t i = 0; i < d.size(); ++i) {
    if (node.HasInput(i) && d[i] != DataType::kFloat) return false;
  }
  if (ctx.input_shapes[0].empty() || ctx.input_shapes[1].empty()) return false;
  if (!ActivationSupported(node)) return false;
  auto s = PlanSpec(node, ctx);
  if (!s.ok()) return false;
  if (s->bias >= 0 && ctx.input_shapes[s->bias].back() < 0) return false;
  if (s->bias >= 0 && !BiasHasNElements(node, ctx, s->bias)) return false;
  auto g = MakeGeom(node, *s, Concretize(ctx.input_shapes[0]), Concretize(ctx.input_shapes[1]));
  if (!g.ok()) return false;
  return MakePd(node, *s, *g, SrcDt(s->prec), ctx.constants[1] != nullptr, nullptr).ok();
}

Status PrepareMatMul(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  SY_ASSIGN_OR_RETURN(MmSpec s, PlanSpec(node, ctx));
  const Tensor* b = ctx.constants[1];
  spec.params["precision"] = s.prec == Prec::kInt8 ? "int8" : s.prec == Prec::kBf16 ? "bf16" : "fp32";
  spec.params["flat"] = s.flat;
  if (s.z >= 0) spec.params["inplace"] = s.z;  // Y starts as a copy of Z: the builder may give Y Z's bytes
  if (!b) return Status::Ok();
  SY_ASSIGN_OR_RETURN(MmGeom g, MakeGeom(node, s, Concretize(ctx.input_shapes[0]), b->shape()));
  SY_ASSIGN_OR_RETURN(MatMulPd pd, MakePd(node, s, g, SrcDt(s.prec), true, nullptr));
  const memory::desc wei = pd.weights_desc();
  std::vector<uint8_t> bytes;
  const memory::desc plain_b(g.b, Dt::f32, g.b_strides);
  if (s.prec == Prec::kInt8) {
    // Symmetric per-column (output feature) quantization of the 2-D B.
    const int64_t k = g.b[0], n = g.n;
    Tensor scales(DataType::kFloat, {n});
    std::vector<int8_t> q(static_cast<size_t>(k * n));
    const float* bp = b->data<float>();
    auto at = [&](int64_t kk, int64_t nn) { return s.trans_b ? bp[nn * k + kk] : bp[kk * n + nn]; };
    for (int64_t j = 0; j < n; ++j) {
      float amax = 0.f;
      for (int64_t i = 0; i < k; ++i) amax = std::max(amax, std::fabs(at(i, j)));
      const float sc = amax > 0.f ? amax / 127.f : 1.f;
      scales.data<float>()[j] = sc;
      for (int64_t i = 0; i < k; ++i) q[i * n + j] = static_cast<int8_t>(std::clamp(std::nearbyint(at(i, j) / sc), -127.f, 127.f));
    }
    SY_ASSIGN_OR_RETURN(bytes, ReorderBytes(node, memory::desc(g.b, Dt::s8, Tag::ab), q.data(), wei));
    spec.packed.push_back(Tensor(DataType::kUint8, {static_cast<int64_t>(bytes.size())}));
    spec.packed.push_back(std::move(scales));
  } else {
    SY_ASSIGN_OR_RETURN(bytes, ReorderBytes(node, plain_b, b->raw(), wei));
    spec.packed.push_back(Tensor(DataType::kUint8, {static_cast<int64_t>(bytes.size())}));
  }
  std::memcpy(spec.packed[0].raw(), bytes.data(), bytes.size());
  spec.consumed_inputs = {1};
  spec.params["weights_format"] = FormatString(wei);
  spec.params["weights_bytes"] = static_cast<int64_t>(wei.get_size());
  spec.params["impl"] = pd.impl_info_str();
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateMatMul(const StepView& view) {
  const Node& node = view.node;
  const auto& p = view.params;
  SY_ASSIGN_OR_RETURN(MmSpec s, MakeSpec(node, view.input_shapes));
  const std::string prec = p.value("precision", "fp32");
  s.prec = prec == "int8" ? Prec::kInt8 : prec == "bf16" ? Prec::kBf16 : Prec::kF32;
  s.flat = p.value("flat", false);
  const bool b_const = !view.packed.empty();
  if (!b_const) return std::unique_ptr<Kernel>(new MatMulKernel(node, s, {}, false, memory::desc(), nullptr, nullptr));
  if (s.prec == Prec::kInt8 && view.packed.size() < 2) return ops::NodeError(node, "weight scales missing");
  const std::vector<int64_t>& bshape = view.input_shapes.at(1);
  SY_ASSIGN_OR_RETURN(MmGeom g, MakeGeom(node, s, Concretize(view.input_shapes[0]), bshape));
  SY_ASSIGN_OR_RETURN(MatMulPd pd, MakePd(node, s, g, SrcDt(s.prec), true, nullptr));
  const memory::desc wei = pd.weights_desc();
  const std::string want = FormatString(wei), have = p.value("weights_format", "");
  if (want != have || wei.get_size() != view.packed[0]->nbytes()) {
    return Status::FailedPrecondition("node '" + node.name + "': engine was built for a different CPU: weights packed as '" +
                                      have + "', this machine's oneDNN wants '" + want + "'");
  }
  return std::unique_ptr<Kernel>(new MatMulKernel(node, s, bshape, true, wei, view.packed[0],
                                                  s.prec == Prec::kInt8 ? view.packed[1] : nullptr));
}

}  // namespace

SY_REGISTER_CPU_IMPLS(OnednnMatMul) {
  reg.Register({"onednn", "", "MatMul", "", SupportsMatMul, PrepareMatMul, CreateMatMul});
  reg.Register({"onednn", "", "Gemm", "", SupportsMatMul, PrepareMatMul, CreateMatMul});
  reg.Register({"onednn", "switchyard", "FusedMatMul", "", SupportsMatMul, PrepareMatMul, CreateMatMul});
}

}  // namespace switchyard::onednn
