// Native switchyard.Attention (fp32): per batch-head, scores = scale·Q·Kᵀ + mask on the
// native GEMM, causal masking (top-left aligned: key j > query i is hidden), row
// softmax, then P·V. Batch-heads run in parallel; each uses its own score scratch.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/gemm.h"
#include "backends/cpu/native/native.h"
#include "reference/ops/attention_layout.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

struct Dims {
  int64_t S = 0, Skv = 0, D = 0, Dv = 0;
  Shape batch, out;
};

Result<Dims> MakeDims(const Node& node, const std::vector<const TensorRef*>& in) {
  if (in.size() < 3 || !in[0] || !in[1] || !in[2]) return ops::NodeError(node, "needs Q, K, V");
  const Shape &q = in[0]->shape, &k = in[1]->shape, &v = in[2]->shape;
  if (q.size() < 2 || k.size() < 2 || v.size() < 2) {
    return ops::NodeError(node, "Q, K, V need rank >= 2");
  }
  Dims d;
  d.S = q[q.size() - 2];
  d.D = q.back();
  d.Skv = k[k.size() - 2];
  d.Dv = v.back();
  if (k.back() != d.D || v[v.size() - 2] != d.Skv) {
    return ops::NodeError(node, "Q " + ShapeToString(q) + ", K " + ShapeToString(k) + ", V " +
                                    ShapeToString(v) + " do not match");
  }
  SY_ASSIGN_OR_RETURN(d.batch, BroadcastShape(node, {Shape(q.begin(), q.end() - 2),
                                                     Shape(k.begin(), k.end() - 2),
                                                     Shape(v.begin(), v.end() - 2)}));
  d.out = d.batch;
  d.out.push_back(d.S);
  d.out.push_back(d.Dv);
  return d;
}

// e^(x - max) through FastExp in its own loop, so that it vectorises (glibc's expf does
// not: ViT-B/16 b1 spent 19.7 of 180 ms in attention at S = 197).
SY_NATIVE_CLONES
void SoftmaxInPlace(float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  for (int64_t i = 0; i < n; ++i) x[i] = FastExp(x[i] - m);
  float sum = 0.f;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const float inv = 1.f / sum;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

Status RunAttention(const Node& node, float scale, bool causal, const KernelIO& io) {
  SY_ASSIGN_OR_RETURN(Dims d, MakeDims(node, io.inputs));
  if (!node.Has("scale")) scale = 1.f / std::sqrt(static_cast<float>(std::max<int64_t>(d.D, 1)));
  const TensorRef* mask = io.inputs.size() > 3 ? io.inputs[3] : nullptr;
  Shape full = d.batch;
  full.push_back(d.S);
  full.push_back(d.Skv);
  Shape mask_st;
  if (mask) {
    if (mask->shape.size() > full.size()) return ops::NodeError(node, "mask rank too large");
    for (size_t i = 0; i < mask->shape.size(); ++i) {
      const int64_t f = full[full.size() - mask->shape.size() + i];
      if (mask->shape[i] != 1 && mask->shape[i] != f) {
        return ops::NodeError(node, "mask " + ShapeToString(mask->shape) +
                                        " does not broadcast to " + ShapeToString(full));
      }
    }
    mask_st = BroadcastStrides(mask->shape, full);
  }
  const auto bshape = [](const TensorRef* t) { return Shape(t->shape.begin(), t->shape.end() - 2); };
  const auto off_q = BatchOffsets(bshape(io.inputs[0]), d.batch, d.S * d.D);
  const auto off_k = BatchOffsets(bshape(io.inputs[1]), d.batch, d.Skv * d.D);
  const auto off_v = BatchOffsets(bshape(io.inputs[2]), d.batch, d.Skv * d.Dv);
  const int64_t batches = NumElements(d.batch);
  const float* q = io.inputs[0]->as<float>();
  const float* k = io.inputs[1]->as<float>();
  const float* v = io.inputs[2]->as<float>();
  float* y = io.outputs[0]->as<float>();
  const size_t nb = d.batch.size();
  const bool per_batch = batches >= io.threads;
  ParallelFor(batches, per_batch ? io.threads : 1, 1, [&](int64_t b0, int64_t b1) {
    thread_local std::vector<float> scores;
    scores.resize(static_cast<size_t>(d.S * d.Skv));
    const int t = per_batch ? 1 : io.threads;
    for (int64_t bi = b0; bi < b1; ++bi) {
      GemmEpilogue ep;
      ep.alpha = scale;
      if (mask) {
        int64_t off = 0, rem = bi;
        for (size_t i = nb; i-- > 0;) {
          off += (rem % d.batch[i]) * mask_st[i];
          rem /= d.batch[i];
        }
        ep.add[0] = mask->as<float>() + off;
        ep.add_rs[0] = mask_st[nb];
        ep.add_cs[0] = mask_st[nb + 1];
      }
      // scores = scale · Q Kᵀ (+ mask); Kᵀ's element (dd, j) is K[j*D + dd].
      Gemm(d.S, d.Skv, d.D, q + off_q[bi], d.D, 1, k + off_k[bi], 1, d.D, scores.data(), d.Skv,
           ep, t);
      for (int64_t i = 0; i < d.S; ++i) {
        float* row = scores.data() + i * d.Skv;
        if (causal) {
          for (int64_t j = i + 1; j < d.Skv; ++j) row[j] = -std::numeric_limits<float>::infinity();
        }
        SoftmaxInPlace(row, d.Skv);
      }
      Gemm(d.S, d.Dv, d.Skv, scores.data(), d.Skv, 1, v + off_v[bi], d.Dv, 1,
           y + bi * d.S * d.Dv, d.Dv, GemmEpilogue{}, t);
    }
  });
  return Status::Ok();
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeAttention) {
  // Contiguous operands only: the layout attributes (q_perm, ..., out_perm) are for
  // targets whose kernels read strided operands (fuse_attention sets them on cuda).
  const auto supports = [](const Node& n, const KernelBuildContext& ctx) {
    for (const char* a : ops::kAttentionLayoutAttrs) {
      if (n.Has(a)) return false;
    }
    return AllFloat(n, ctx);
  };
  RegisterNative(reg, "switchyard", "Attention", supports, [](const StepView& v) {
    const Node node = v.node;
    // Without a scale attribute, the conventional 1/sqrt(D) (resolved per call).
    const float scale = node.GetFloat("scale", 0.f);
    const bool causal = node.GetInt("causal", 0) != 0;
    return MakeKernel(
        [node](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          SY_ASSIGN_OR_RETURN(Dims d, MakeDims(node, in));
          return Shapes{d.out};
        },
        [node, scale, causal](const KernelIO& io) { return RunAttention(node, scale, causal, io); });
  });
}

}  // namespace switchyard::native
