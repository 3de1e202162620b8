// CUDA own-kernel implementation (provider "cuda") of switchyard.Attention over
// kernels/attention.cu: O = softmax(scale * Q Kᵀ + mask, causal) V with numpy-broadcast
// batch dims (reference: reference/ops/fused_transformer.cc). Q, K, V and the optional
// additive mask share one float dtype; head sizes D, Dv <= 128; batch rank <= 6.
// Three implementations, in the builder's order of preference: variant "mma" (mma.sync
// tensor cores, softmax in registers; float16/bfloat16 with D, Dv multiples of 16),
// variant "wmma" (the same types through WMMA fragments) and the SIMT kernel (any float
// dtype). Operands may be strided through the node's layout perms (fuse_attention absorbs
// the head split and merge Transposes on this target).
#include <functional>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cmath>

#include "backends/cuda/common.h"
#include "backends/cuda/nk_dtype.h"
#include "backends/cuda/kernels/attention.h"
#include "reference/ops/attention_layout.h"

namespace switchyard::cuda {
namespace {

using Shape = std::vector<int64_t>;



// Element strides of `sh` (contiguous) for the dims of `full` it is right-aligned to;
// 0 where it broadcasts (size 1 or absent). nullopt when it does not broadcast, or has
// extra leading dims that are not 1.
std::optional<Shape> BroadcastStrides(const Shape& sh, const Shape& full) {
  const int64_t r = static_cast<int64_t>(sh.size()), f = static_cast<int64_t>(full.size());
  for (int64_t d = 0; d < r - f; ++d) {
    if (sh[d] != 1) return std::nullopt;
  }
  Shape st(full.size(), 0);
  int64_t stride = 1;
  for (int64_t d = f - 1; d >= 0; --d) {
    const int64_t sd = d - (f - r);
    if (sd < 0) continue;
    if (sh[sd] != 1 && sh[sd] != full[d]) return std::nullopt;
    st[d] = sh[sd] == 1 ? 0 : stride;
    stride *= sh[sd];
  }
  return st;
}

// The launch parameters (pointers left null) for the node's static shapes, or nullopt.
std::optional<nk::AttnParams> Plan(const Node& node, const std::vector<Shape>& in, bool has_mask) {
  if (in.size() < 3) return std::nullopt;
  if (in[0].size() < 2 || in[1].size() < 2 || in[2].size() < 2) return std::nullopt;
  const auto qv = ops::AttentionOperandView(node, "q_perm", in[0]),
             kv = ops::AttentionOperandView(node, "k_perm", in[1]),
             vv = ops::AttentionOperandView(node, "v_perm", in[2]);
  if (!qv.ok() || !kv.ok() || !vv.ok()) return std::nullopt;
  const Shape &q = qv->dims, &k = kv->dims, &v = vv->dims;
  const int64_t S = q[q.size() - 2], D = q.back(), Skv = k[k.size() - 2], Dv = v.back();
  if (k.back() != D || v[v.size() - 2] != Skv) return std::nullopt;
  if (D < 1 || D > nk::kAttnMaxHeadDim || Dv < 1 || Dv > nk::kAttnMaxHeadDim) return std::nullopt;
  if (S > (int64_t{1} << 30) || Skv > (int64_t{1} << 30)) return std::nullopt;
  // Broadcast batch shape.
  const Shape qb(q.begin(), q.end() - 2), kb(k.begin(), k.end() - 2), vb(v.begin(), v.end() - 2);
  const size_t nb = std::max({qb.size(), kb.size(), vb.size()});
  if (nb > static_cast<size_t>(nk::kAttnMaxBatchRank)) return std::nullopt;
  Shape batch(nb, 1);
  for (const Shape* s : {&qb, &kb, &vb}) {
    for (size_t i = 0; i < s->size(); ++i) {
      const size_t d = nb - s->size() + i;
      const int64_t x = (*s)[i];
      if (x == 1) continue;
      if (batch[d] != 1 && batch[d] != x) return std::nullopt;
      batch[d] = x;
    }
  }
  nk::AttnParams p;
  p.nb = static_cast<int>(nb);
  p.S = static_cast<int>(S);
  p.Skv = static_cast<int>(Skv);
  p.D = static_cast<int>(D);
  p.Dv = static_cast<int>(Dv);
  p.batches = 1;
  for (size_t d = 0; d < nb; ++d) {
    p.bdim[d] = batch[d];
    p.batches *= batch[d];
  }
  if (!ops::AttentionBatchStrides(*qv, batch, p.q_bs) || !ops::AttentionBatchStrides(*kv, batch, p.k_bs) ||
      !ops::AttentionBatchStrides(*vv, batch, p.v_bs)) {
    return std::nullopt;
  }
  p.q_rs = qv->strides[q.size() - 2];
  p.k_rs = kv->strides[k.size() - 2];
  p.v_rs = vv->strides[v.size() - 2];
  // O [batch..., S, Dv], stored as Transpose(O, out_perm).
  Shape out = batch;
  out.push_back(S);
  out.push_back(Dv);
  const auto ost = ops::AttentionOutputStrides(node, out);
  if (!ost.ok()) return std::nullopt;
  for (size_t d = 0; d < nb; ++d) p.o_bs[d] = (*ost)[d];
  p.o_rs = (*ost)[nb];
  if (has_mask) {
    if (in.size() < 4) return std::nullopt;
    Shape full = batch;
    full.push_back(S);
    full.push_back(Skv);
    const auto ms = BroadcastStrides(in[3], full);
    if (!ms) return std::nullopt;
    for (size_t d = 0; d < nb; ++d) p.m_bs[d] = (*ms)[d];
    p.m_rs = (*ms)[nb];
    p.m_cs = (*ms)[nb + 1];
  }
  p.scale = node.Has("scale") ? node.GetFloat("scale", 1.f)
                              : 1.f / std::sqrt(static_cast<float>(D));
  p.causal = node.GetInt("causal", 0) != 0;
  return p;
}

// The builder takes the first implementation that supports a node, so fp16/bf16
// attention with head sizes that are multiples of 16 uses the mma.sync kernel; the WMMA
// and SIMT kernels stay as variants (the harness checks every one).
enum class Variant { kMma, kWmma, kSimt };

const char* VariantName(Variant v) {
  switch (v) {
    case Variant::kMma: return "mma";
    case Variant::kWmma: return "wmma";
    case Variant::kSimt: return "";
  }
  return "";
}

class AttentionKernel final : public CudaKernel {
 public:
  AttentionKernel(const StepView& v, nk::KDType t, nk::AttnParams p, bool has_mask, Variant variant)
      : CudaKernel(v), t_(t), p_(p), has_mask_(has_mask), variant_(variant) {}
  Status Launch(const Exec& ex, const KernelIO& io) const override {
    if (io.inputs.size() < 3 || !io.inputs[0] || !io.inputs[1] || !io.inputs[2]) {
      return Status::Internal("Attention: Q, K, V missing");
    }
    nk::AttnParams p = p_;
    p.q = io.inputs[0]->data;
    p.k = io.inputs[1]->data;
    p.v = io.inputs[2]->data;
    p.mask = has_mask_ && io.inputs.size() > 3 && io.inputs[3] ? io.inputs[3]->data : nullptr;
    if (has_mask_ && !p.mask) return Status::Internal("Attention: mask missing");
    p.o = io.outputs[0]->data;
    switch (variant_) {
      case Variant::kMma:
        nk::LaunchAttentionMma(t_, p, ex.stream);
        return CheckLaunch("Attention (mma)");
      case Variant::kWmma:
        nk::LaunchAttentionWmma(t_, p, ex.stream);
        return CheckLaunch("Attention (wmma)");
      case Variant::kSimt:
        break;
    }
    nk::LaunchAttention(t_, p, ex.stream);
    return CheckLaunch("Attention");
  }

 private:
  const nk::KDType t_;
  const nk::AttnParams p_;
  const bool has_mask_;
  const Variant variant_;
};

// Raises the tensor-core kernels' shared-memory limits once per process (before any capture).
Status InitTensorCoreKernels() {
  static std::once_flag once;
  static cudaError_t err = cudaSuccess;
  static const char* what = "";
  std::call_once(once, [] {
    err = nk::AttentionWmmaInit();
    what = "cudaFuncSetAttribute (attention wmma)";
    if (err != cudaSuccess) return;
    err = nk::AttentionMmaInit();
    what = "cudaFuncSetAttribute (attention mma)";
  });
  if (err != cudaSuccess) return CudaError(err, what);
  return Status::Ok();
}

bool Supports(const Node& n, const KernelBuildContext& ctx, Variant variant) {
  if (!IsCudaBuild(ctx) || ctx.input_dtypes.size() < 3 || ctx.input_shapes.size() < 3) return false;
  const DataType t = ctx.input_dtypes[0];
  if (!IsCudaFloat(t)) return false;
  const bool has_mask = n.HasInput(3);
  const size_t count = has_mask ? 4 : 3;
  if (ctx.input_dtypes.size() < count || ctx.input_shapes.size() < count) return false;
  for (size_t i = 0; i < count; ++i) {
    if (ctx.input_dtypes[i] != t || !IsStaticShape(ctx.input_shapes[i])) return false;
  }
  const auto p = Plan(n, ctx.input_shapes, has_mask);
  if (!p) return false;
  switch (variant) {
    case Variant::kMma: return nk::AttentionMmaSupports(*KType(t), p->D, p->Dv);
    case Variant::kWmma: return nk::AttentionWmmaSupports(*KType(t), p->D, p->Dv);
    case Variant::kSimt: return true;
  }
  return false;
}

void Register(CpuImplRegistry& reg, Variant variant) {
  CpuOpImpl impl;
  impl.provider = "cuda";
  impl.domain = "switchyard";
  impl.op_type = "Attention";
  impl.variant = VariantName(variant);
  impl.supports = [variant](const Node& n, const KernelBuildContext& ctx) { return Supports(n, ctx, variant); };
  impl.prepare = [](const Node&, const KernelBuildContext&, StepSpec&) { return Status::Ok(); };
  impl.create = [variant](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const bool has_mask = v.node.HasInput(3);
    const auto t = KType(v.input_dtypes[0]);
    const auto p = Plan(v.node, v.input_shapes, has_mask);
    if (!t || !p) return Status::Internal("cuda Attention: unsupported shapes");
    if (variant != Variant::kSimt) SY_RETURN_IF_ERROR(InitTensorCoreKernels());
    return std::unique_ptr<Kernel>(std::make_unique<AttentionKernel>(v, *t, *p, has_mask, variant));
  };
  reg.Register(std::move(impl));
}

}  // namespace
}  // namespace switchyard::cuda

namespace switchyard {
SY_REGISTER_CUDA_IMPLS(Attention) {
  cuda::Register(reg, cuda::Variant::kMma);
  cuda::Register(reg, cuda::Variant::kWmma);
  cuda::Register(reg, cuda::Variant::kSimt);
}
}  // namespace switchyard
