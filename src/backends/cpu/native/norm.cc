// Native normalisations (fp32): switchyard.LayerNorm, LayerNormalization (with its
// optional Mean/InvStdDev outputs), BatchNormalization (inference) and
// InstanceNormalization.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/native/elementwise_ops.h"
#include "backends/cpu/native/native.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

// Normalises one row; scale/bias have n elements (or are null), scalar ones are
// expanded by the caller. Returns mean and 1/std through the pointers.
SY_NATIVE_CLONES
void NormRow(const float* x, float* y, int64_t n, const float* scale, const float* bias,
             float eps, float* mean_out, float* inv_out) {
  // Lane-wise sums (SpanSum): a single running sum is one dependent add per element, which
  // GCC keeps scalar (BERT-base's 25 LayerNorms of 128 x 768 took 0.07 ms each that way).
  const float mean = SpanSum(x, n) / static_cast<float>(n);
  const float sq = SpanSumOf(x, n, [mean](float v) { return (v - mean) * (v - mean); });
  const float inv = 1.f / std::sqrt(sq / static_cast<float>(n) + eps);
  if (scale && bias) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i] + bias[i];
  } else if (scale) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i];
  } else if (bias) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv + bias[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv;
  }
  *mean_out = mean;
  *inv_out = inv;
}

// y = x * a + b over a contiguous span (BatchNormalization's per-channel affine).
SY_NATIVE_CLONES
void AffineSpan(const float* x, float* y, int64_t n, float a, float b) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * a + b;
}

// An n-element parameter (scale/bias), expanding a single element; nullptr if absent.
Result<std::vector<float>> Param(const Node& node, const TensorRef* t, int64_t n,
                                 const char* what) {
  if (!t) return std::vector<float>{};
  const int64_t k = t->numel();
  if (k != n && k != 1) {
    return ops::NodeError(node, std::string(what) + " has " + std::to_string(k) +
                                    " elements, expected " + std::to_string(n));
  }
  const float* p = t->as<float>();
  return k == n ? std::vector<float>(p, p + n) : std::vector<float>(static_cast<size_t>(n), p[0]);
}

void RegisterLayerNorm(CpuImplRegistry& reg, const std::string& domain, const std::string& op) {
  RegisterNative(reg, domain, op, AllFloat, [](const StepView& v) {
    const Node node = v.node;
    const int64_t axis_attr = node.GetInt("axis", -1);
    const float eps = node.GetFloat("epsilon", 1e-5f);
    return MakeKernel(
        [node, axis_attr](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          const Shape& s = in[0]->shape;
          SY_ASSIGN_OR_RETURN(int64_t axis,
                              ops::NormalizeAxis(node, axis_attr, static_cast<int64_t>(s.size())));
          Shape stat = s;
          for (size_t d = static_cast<size_t>(axis); d < stat.size(); ++d) stat[d] = 1;
          Shapes out{s};
          for (size_t i = 1; i < node.outputs.size(); ++i) out.push_back(stat);
          return out;
        },
        [node, axis_attr, eps](const KernelIO& io) -> Status {
          const TensorRef& x = *io.inputs[0];
          const int64_t rank = static_cast<int64_t>(x.shape.size());
          SY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, axis_attr, rank));
          int64_t rows = 1, n = 1;
          for (int64_t d = 0; d < rank; ++d) (d < axis ? rows : n) *= x.shape[d];
          if (rows * n == 0) return Status::Ok();
          const TensorRef* ts = io.inputs.size() > 1 ? io.inputs[1] : nullptr;
          const TensorRef* tb = io.inputs.size() > 2 ? io.inputs[2] : nullptr;
          SY_ASSIGN_OR_RETURN(std::vector<float> scale, Param(node, ts, n, "scale"));
          SY_ASSIGN_OR_RETURN(std::vector<float> bias, Param(node, tb, n, "bias"));
          float* mean_out = io.outputs.size() > 1 && io.outputs[1] ? io.outputs[1]->as<float>()
                                                                   : nullptr;
          float* inv_out = io.outputs.size() > 2 && io.outputs[2] ? io.outputs[2]->as<float>()
                                                                  : nullptr;
          const float* px = x.as<float>();
          float* py = io.outputs[0]->as<float>();
          ParallelFor(rows, io.threads, std::max<int64_t>(1, 8192 / n), [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r) {
              float m, inv;
              NormRow(px + r * n, py + r * n, n, scale.empty() ? nullptr : scale.data(),
                      bias.empty() ? nullptr : bias.data(), eps, &m, &inv);
              if (mean_out) mean_out[r] = m;
              if (inv_out) inv_out[r] = inv;
            }
          });
          return Status::Ok();
        });
  });
}

// Channel count and spatial size of an [N, C, ...] input.
Status ChannelDims(const Node& node, const TensorRef& x, int64_t* n, int64_t* c,
                   int64_t* spatial) {
  if (x.shape.size() < 2) return ops::NodeError(node, "input needs rank >= 2 (N, C, ...)");
  *n = x.shape[0];
  *c = x.shape[1];
  *spatial = 1;
  for (size_t d = 2; d < x.shape.size(); ++d) *spatial *= x.shape[d];
  return Status::Ok();
}

void RegisterBatchNorm(CpuImplRegistry& reg) {
  RegisterNative(
      reg, "", "BatchNormalization",
      [](const Node& n, const KernelBuildContext& c) {
        return AllFloat(n, c) && n.GetInt("training_mode", 0) == 0 && n.outputs.size() == 1;
      },
      [](const StepView& v) {
        const Node node = v.node;
        const float eps = node.GetFloat("epsilon", 1e-5f);
        return MakeKernel(
            [](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
              return Shapes{in[0]->shape};
            },
            [node, eps](const KernelIO& io) -> Status {
              int64_t n = 0, c = 0, sp = 0;
              SY_RETURN_IF_ERROR(ChannelDims(node, *io.inputs[0], &n, &c, &sp));
              if (io.inputs.size() < 5) return ops::NodeError(node, "needs 5 inputs");
              std::vector<std::vector<float>> p;
              const char* names[] = {"scale", "B", "mean", "var"};
              for (int i = 0; i < 4; ++i) {
                if (!io.inputs[i + 1] || io.inputs[i + 1]->numel() != c) {
                  return ops::NodeError(node, std::string(names[i]) + " must have C elements");
                }
                const float* q = io.inputs[i + 1]->as<float>();
                p.emplace_back(q, q + c);
              }
              const float* px = io.inputs[0]->as<float>();
              float* py = io.outputs[0]->as<float>();
              ParallelFor(n * c, io.threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(sp, 1)),
                          [&](int64_t b, int64_t e) {
                            for (int64_t r = b; r < e; ++r) {
                              const int64_t ch = r % c;
                              const float a = p[0][ch] / std::sqrt(p[3][ch] + eps);
                              AffineSpan(px + r * sp, py + r * sp, sp, a, p[1][ch] - p[2][ch] * a);
                            }
                          });
              return Status::Ok();
            });
      });
}

void RegisterInstanceNorm(CpuImplRegistry& reg) {
  RegisterNative(reg, "", "InstanceNormalization", AllFloat, [](const StepView& v) {
    const Node node = v.node;
    const float eps = node.GetFloat("epsilon", 1e-5f);
    return MakeKernel(
        [](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
          return Shapes{in[0]->shape};
        },
        [node, eps](const KernelIO& io) -> Status {
          int64_t n = 0, c = 0, sp = 0;
          SY_RETURN_IF_ERROR(ChannelDims(node, *io.inputs[0], &n, &c, &sp));
          if (io.inputs.size() < 3 || !io.inputs[1] || !io.inputs[2] ||
              io.inputs[1]->numel() != c || io.inputs[2]->numel() != c) {
            return ops::NodeError(node, "scale and B must have C elements");
          }
          const float* scale = io.inputs[1]->as<float>();
          const float* bias = io.inputs[2]->as<float>();
          const float* px = io.inputs[0]->as<float>();
          float* py = io.outputs[0]->as<float>();
          if (sp == 0) return Status::Ok();
          ParallelFor(n * c, io.threads, std::max<int64_t>(1, 8192 / sp), [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r) {
              const int64_t ch = r % c;
              float m, inv;
              NormRow(px + r * sp, py + r * sp, sp, nullptr, nullptr, eps, &m, &inv);
              AffineSpan(py + r * sp, py + r * sp, sp, scale[ch], bias[ch]);
            }
          });
          return Status::Ok();
        });
  });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeNorm) {
  RegisterLayerNorm(reg, "switchyard", "LayerNorm");
  RegisterLayerNorm(reg, "", "LayerNormalization");
  RegisterBatchNorm(reg);
  RegisterInstanceNorm(reg);
}

}  // namespace switchyard::native
