// Native MatMul, Gemm and switchyard.FusedMatMul on the blocked GEMM of gemm.h. A
// constant 2-D B is packed once at build time (StepSpec.packed, input consumed).
#include <algorithm>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/gemm.h"
#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

enum class Kind { kMatMul, kGemm, kFused };

struct Config {
  Kind kind = Kind::kMatMul;
  bool trans_a = false, trans_b = false;
  float alpha = 1.f, beta = 1.f;
  UnaryOp act = UnaryOp::kNone;
  UnaryParams act_params;
  bool packed = false;
  int64_t pk = 0, pn = 0;  // K, N of the packed B
};

Config ReadConfig(const Node& n, Kind kind) {
  Config c;
  c.kind = kind;
  if (kind == Kind::kGemm) {
    c.trans_a = n.GetInt("transA", 0) != 0;
    c.trans_b = n.GetInt("transB", 0) != 0;
    c.alpha = n.GetFloat("alpha", 1.f);
    c.beta = n.GetFloat("beta", 1.f);
  } else if (kind == Kind::kFused) {
    c.trans_a = n.GetInt("trans_a", 0) != 0;
    c.trans_b = n.GetInt("trans_b", 0) != 0;
    c.alpha = n.GetFloat("alpha", 1.f);
    ParseActivation(n.GetString("activation", ""), n.GetFloats("activation_params"), &c.act,
                    &c.act_params);
  }
  return c;
}

// The GEMM problem of one call, from runtime shapes.
struct Problem {
  int64_t M = 0, N = 0, K = 0;
  Shape batch, out, a_batch, b_batch;  // out: as the op reports it
  bool a_vec = false, b_vec = false;
};

Result<Problem> MakeProblem(const Node& node, const Config& c, Shape a, Shape b) {
  Problem p;
  if (a.empty() || (!c.packed && b.empty())) return ops::NodeError(node, "scalar operand");
  if (c.packed) b = c.trans_b ? Shape{c.pn, c.pk} : Shape{c.pk, c.pn};
  if (c.kind == Kind::kGemm && (a.size() != 2 || b.size() != 2)) {
    return ops::NodeError(node, "Gemm operands must be 2-D");
  }
  p.a_vec = a.size() == 1;
  p.b_vec = b.size() == 1;
  if (p.a_vec) a.insert(a.begin(), 1);
  if (p.b_vec) b.push_back(1);
  const size_t ra = a.size(), rb = b.size();
  p.M = c.trans_a ? a[ra - 1] : a[ra - 2];
  p.K = c.trans_a ? a[ra - 2] : a[ra - 1];
  const int64_t kb = c.trans_b ? b[rb - 1] : b[rb - 2];
  p.N = c.trans_b ? b[rb - 2] : b[rb - 1];
  if (kb != p.K) {
    return ops::NodeError(node, "inner dimensions differ: " + ShapeToString(a) + " x " +
                                    ShapeToString(b));
  }
  p.a_batch.assign(a.begin(), a.end() - 2);
  p.b_batch.assign(b.begin(), b.end() - 2);
  SY_ASSIGN_OR_RETURN(p.batch, BroadcastShape(node, {p.a_batch, p.b_batch}));
  p.out = p.batch;
  if (!p.a_vec) p.out.push_back(p.M);
  if (!p.b_vec) p.out.push_back(p.N);
  return p;
}

Status RunMatMul(const Node& node, const Config& c, const float* packed, const KernelIO& io) {
  const TensorRef& ta = *io.inputs[0];
  const TensorRef* tb = io.inputs.size() > 1 ? io.inputs[1] : nullptr;
  if (!c.packed && !tb) return ops::NodeError(node, "missing B");
  SY_ASSIGN_OR_RETURN(Problem p, MakeProblem(node, c, ta.shape, tb ? tb->shape : Shape{}));
  const int64_t M = p.M, N = p.N, K = p.K;
  float* y = io.outputs[0]->as<float>();
  const float* a = ta.as<float>();
  const float* b = tb ? tb->as<float>() : nullptr;
  const int64_t rsa = c.trans_a ? 1 : K, csa = c.trans_a ? M : 1;
  const int64_t rsb = c.trans_b ? 1 : N, csb = c.trans_b ? K : 1;

  // Epilogue addends, as full-rank strides over [batch..., M, N].
  Shape full = p.batch;
  full.push_back(M);
  full.push_back(N);
  GemmEpilogue ep;
  ep.alpha = c.alpha;
  ep.act = c.act;
  ep.act_params = c.act_params;
  std::vector<Shape> add_strides;
  std::vector<const float*> add_ptrs;
  const size_t first_add = 2, last_add = c.kind == Kind::kFused ? 3 : 2;
  for (size_t i = first_add; i <= last_add && c.kind != Kind::kMatMul; ++i) {
    const TensorRef* t = i < io.inputs.size() ? io.inputs[i] : nullptr;
    if (!t) continue;
    Shape s = t->shape;
    if (c.kind == Kind::kFused && i == 2 && NumElements(s) != N && NumElements(s) != 1) {
      return ops::NodeError(node, "bias must have N elements");
    }
    if (c.kind == Kind::kFused && i == 2) s = {NumElements(s) == 1 ? 1 : N};
    if (s.size() > full.size()) return ops::NodeError(node, "addend rank too large");
    for (size_t d = 0; d < s.size(); ++d) {
      const int64_t f = full[full.size() - s.size() + d];
      if (s[d] != 1 && s[d] != f) {
        return ops::NodeError(node, "addend " + ShapeToString(t->shape) +
                                        " does not broadcast to " + ShapeToString(full));
      }
    }
    const int slot = static_cast<int>(add_ptrs.size());
    add_ptrs.push_back(t->as<float>());
    add_strides.push_back(BroadcastStrides(s, full));
    ep.add_rs[slot] = add_strides.back()[full.size() - 2];
    ep.add_cs[slot] = add_strides.back()[full.size() - 1];
    ep.add_scale[slot] = c.kind == Kind::kGemm ? c.beta : 1.f;
  }
  const size_t nb = p.batch.size();
  auto add_offset = [&](int slot, int64_t bi) {
    int64_t o = 0, rem = bi;
    for (size_t d = nb; d-- > 0;) {
      o += (rem % p.batch[d]) * add_strides[slot][d];
      rem /= p.batch[d];
    }
    return o;
  };

  const int64_t batches = NumElements(p.batch);
  // One tall GEMM when B has no batch dims and the addends flatten along rows too.
  bool flat = p.b_batch.empty() && !c.trans_a && batches > 1;
  const Shape dense = BroadcastStrides(full, full);
  for (size_t s = 0; flat && s < add_strides.size(); ++s) {
    // Rows of [batch*M, N] keep their addend when it is dense or a per-row broadcast.
    bool rows_broadcast = true;
    for (size_t d = 0; d <= nb; ++d) rows_broadcast = rows_broadcast && add_strides[s][d] == 0;
    flat = rows_broadcast || add_strides[s] == dense;
  }
  if (flat || batches == 1) {
    for (size_t s = 0; s < add_ptrs.size(); ++s) ep.add[s] = add_ptrs[s];
    const int64_t rows = flat ? batches * M : M;
    if (packed) {
      GemmPacked(rows, N, K, a, rsa, csa, packed, y, N, ep, io.threads);
    } else {
      Gemm(rows, N, K, a, rsa, csa, b, rsb, csb, y, N, ep, io.threads);
    }
    return Status::Ok();
  }
  const std::vector<int64_t> off_a = BatchOffsets(p.a_batch, p.batch, M * K);
  const std::vector<int64_t> off_b = BatchOffsets(p.b_batch, p.batch, K * N);
  // Many small matrices (attention heads): one thread per matrix; else thread each GEMM.
  const bool per_batch = batches >= io.threads && M * N * K < (int64_t{1} << 22);
  ParallelFor(batches, per_batch ? io.threads : 1, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t bi = b0; bi < b1; ++bi) {
      GemmEpilogue e = ep;
      for (size_t s = 0; s < add_ptrs.size(); ++s) e.add[s] = add_ptrs[s] + add_offset(s, bi);
      const int t = per_batch ? 1 : io.threads;
      float* yb = y + bi * M * N;
      if (packed) {
        GemmPacked(M, N, K, a + off_a[bi], rsa, csa, packed, yb, N, e, t);
      } else {
        Gemm(M, N, K, a + off_a[bi], rsa, csa, b + off_b[bi], rsb, csb, yb, N, e, t);
      }
    }
  });
  return Status::Ok();
}

bool Supports(Kind kind, const Node& n, const KernelBuildContext& ctx) {
  if (!AllFloat(n, ctx) || ctx.input_dtypes.size() < 2) return false;
  if (kind == Kind::kFused && n.HasInput(2) && !BiasHasNElements(n, ctx, 2)) return false;
  if (kind == Kind::kFused) {
    UnaryOp op;
    UnaryParams p;
    if (!ParseActivation(n.GetString("activation", ""), n.GetFloats("activation_params"), &op,
                         &p)) {
      return false;
    }
  }
  return true;
}

Status Prepare(Kind kind, const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
  const Tensor* b = ctx.constants.size() > 1 ? ctx.constants[1] : nullptr;
  if (!b || b->rank() != 2 || b->dtype() != DataType::kFloat) return Status::Ok();
  const Config c = ReadConfig(n, kind);
  const int64_t K = c.trans_b ? b->dim(1) : b->dim(0);
  const int64_t N = c.trans_b ? b->dim(0) : b->dim(1);
  Tensor packed(DataType::kFloat, {PackedBSize(K, N)});
  PackB(b->data<float>(), K, N, c.trans_b ? 1 : N, c.trans_b ? K : 1, packed.data<float>());
  spec.packed.push_back(std::move(packed));
  spec.consumed_inputs.push_back(1);
  spec.params["packed_b"] = true;
  spec.params["k"] = K;
  spec.params["n"] = N;
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> Create(Kind kind, const StepView& v) {
  Config c = ReadConfig(v.node, kind);
  const float* packed = nullptr;
  if (v.params.value("packed_b", false)) {
    if (v.packed.empty()) return ops::NodeError(v.node, "packed B missing from the engine");
    c.packed = true;
    c.pk = v.params.value("k", int64_t{0});
    c.pn = v.params.value("n", int64_t{0});
    packed = v.packed[0]->data<float>();
  }
  const Node node = v.node;
  return MakeKernel(
      [node, c](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
        const TensorRef* b = in.size() > 1 ? in[1] : nullptr;
        if (!c.packed && !b) return ops::NodeError(node, "missing B");
        SY_ASSIGN_OR_RETURN(Problem p, MakeProblem(node, c, in[0]->shape, b ? b->shape : Shape{}));
        return Shapes{p.out};
      },
      [node, c, packed](const KernelIO& io) { return RunMatMul(node, c, packed, io); });
}

void RegisterKind(CpuImplRegistry& reg, const std::string& domain, const std::string& op,
                  Kind kind) {
  RegisterNative(
      reg, domain, op,
      [kind](const Node& n, const KernelBuildContext& c) { return Supports(kind, n, c); },
      [kind](const StepView& v) { return Create(kind, v); },
      [kind](const Node& n, const KernelBuildContext& c, StepSpec& s) {
        return Prepare(kind, n, c, s);
      });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeMatMul) {
  RegisterKind(reg, "", "MatMul", Kind::kMatMul);
  RegisterKind(reg, "", "Gemm", Kind::kGemm);
  RegisterKind(reg, "switchyard", "FusedMatMul", Kind::kFused);
}

}  // namespace switchyard::native
