// Native ConvTranspose, variant "nhwc_gemm": the non-overlapping 2-D case (kernel ==
// stride, no pads, group 1, dilation 1), as the upsampling heads of text detectors (DBNet's
// two 2x2 stride-2 layers) use it, on nhwc activations. Each input pixel then owns a
// k0 x k1 patch of the output alone, so for input row (n, h) and kernel row i the output
// row (n, h*k0 + i) is one GEMM: [W, C] x [C, k1*M] written with row stride k1*M, no
// col2im and no scatter. The weights are packed per kernel row and the bias is tiled
// along the row at build time; rows spread over the threads, one GEMM per task.
// oneDNN 2.6 ran these layers with its AVX2 JIT at 24 and 1 output channels (DBNet b1:
// 10.2 + 5.7 ms of 140 ms at 2 threads).
#include <algorithm>
#include <vector>

#include "backends/cpu/native/conv_transpose.h"
#include "backends/cpu/native/gemm.h"
#include "backends/cpu/native/native.h"
#include "backends/cpu/native/nhwc.h"
#include "reference/ops/common.h"

namespace switchyard::native {
namespace {

// The case this kernel runs; with the geometry resolved (output = input * stride).
bool NonOverlapping(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                    DeconvGeom* out) {
  if (x.size() != 4 || w.size() != 4 || node.GetInt("group", 1) != 1) return false;
  auto g = ResolveConvTranspose(node, x, w);
  if (!g.ok()) return false;
  for (size_t i = 0; i < 2; ++i) {
    if (g->win.kernel[i] != g->win.strides[i] || g->win.dilations[i] != 1 || g->win.pads_begin[i] != 0 ||
        g->win.pads_end[i] != 0 || g->out_sp[i] != g->in_sp[i] * g->win.strides[i]) {
      return false;
    }
  }
  if (out) *out = *g;
  return true;
}

bool SupportsNhwcGemm(const Node& node, const KernelBuildContext& ctx) {
  const auto& d = ctx.input_dtypes;
  if (ctx.layout != "nhwc" || d.size() < 2 || d[0] != DataType::kFloat || d[1] != DataType::kFloat) return false;
  if (ctx.constants[0] || !ctx.constants[1] || (node.HasInput(2) && (d[2] != DataType::kFloat || !ctx.constants[2]))) {
    return false;  // X is read as nhwc: not a constant (the builder hands those over plain)
  }
  const auto& x = ctx.input_shapes[0];
  if (x.size() != 4 || std::any_of(x.begin() + 1, x.end(), [](int64_t v) { return v < 0; })) return false;
  return NonOverlapping(node, x, ctx.input_shapes[1], nullptr);
}

// Packed: [k0][PackedBSize(C, k1*M)] weights, then (with a bias) the bias tiled k1 times.
Status PrepareNhwcGemm(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  const Tensor& w = *ctx.constants[1];
  const int64_t c = w.dim(0), m = w.dim(1), k0 = w.dim(2), k1 = w.dim(3), n = k1 * m;
  const int64_t panel = PackedBSize(c, n);
  Tensor packed(DataType::kFloat, {k0 * panel});
  std::vector<float> row(static_cast<size_t>(c * n));
  const float* src = w.data<float>();
  for (int64_t i = 0; i < k0; ++i) {
    for (int64_t ci = 0; ci < c; ++ci) {
      for (int64_t j = 0; j < k1; ++j) {
        for (int64_t mi = 0; mi < m; ++mi) row[ci * n + j * m + mi] = src[((ci * m + mi) * k0 + i) * k1 + j];
      }
    }
    PackB(row.data(), c, n, n, 1, packed.data<float>() + i * panel);
  }
  spec.packed.push_back(std::move(packed));
  spec.consumed_inputs = {1};
  if (node.HasInput(2)) {
    Tensor bias(DataType::kFloat, {n});
    for (int64_t j = 0; j < k1; ++j) {
      std::copy_n(ctx.constants[2]->data<float>(), m, bias.data<float>() + j * m);
    }
    spec.packed.push_back(std::move(bias));
    spec.consumed_inputs.push_back(2);
  }
  spec.params["w_shape"] = ctx.input_shapes[1];
  DeclareNhwc(node, spec, {0});
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateNhwcGemm(const StepView& v) {
  const Node node = v.node;
  const std::vector<int64_t> w_shape = v.params.value("w_shape", std::vector<int64_t>{});
  if (w_shape.size() != 4 || v.packed.empty()) return ops::NodeError(node, "packed weights missing");
  if (node.HasInput(2) && v.packed.size() < 2) return ops::NodeError(node, "tiled bias missing");
  const Tensor* packed = v.packed[0];
  const Tensor* bias = v.packed.size() > 1 ? v.packed[1] : nullptr;
  const int64_t c = w_shape[0], m = w_shape[1], k0 = w_shape[2], k1 = w_shape[3], n = k1 * m;
  if (packed->numel() != k0 * PackedBSize(c, n)) return ops::NodeError(node, "packed weights have the wrong size");
  return MakeKernel(
      [node, w_shape](const std::vector<const TensorRef*>& in) -> Result<Shapes> {
        if (in.empty() || !in[0]) return ops::NodeError(node, "X is required");
        DeconvGeom g;
        if (!NonOverlapping(node, in[0]->shape, w_shape, &g)) {
          return ops::NodeError(node, "input " + ShapeToString(in[0]->shape) + " does not fit the built kernel");
        }
        return Shapes{g.out_shape};
      },
      [=](const KernelIO& io) -> Status {
        const std::vector<int64_t>& xs = io.inputs[0]->shape;  // NCHW order, nhwc bytes
        if (xs[1] != c) return ops::NodeError(node, "X has " + std::to_string(xs[1]) + " channels, W " + std::to_string(c));
        const int64_t batch = xs[0], h = xs[2], wd = xs[3], panel = PackedBSize(c, n);
        const float* x = io.inputs[0]->as<float>();
        float* y = io.outputs[0]->as<float>();
        GemmEpilogue ep;
        if (bias) {
          ep.add[0] = bias->data<float>();
          ep.add_cs[0] = 1;  // add_rs 0: the same tiled bias on every row
        }
        const int64_t rows = batch * h * k0;  // output rows (n, h*k0 + i)
        ParallelFor(rows, io.threads, 1, [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const int64_t i = r % k0, nh = r / k0;  // nh = n*H + h
            const float* xr = x + nh * wd * c;
            const float* br = packed->data<float>() + i * panel;
            float* yr = y + r * wd * n;
            if (n >= kGemmNR) {
              GemmPacked(wd, n, c, xr, c, 1, br, yr, n, ep, 1);
              continue;
            }
            // Fewer columns than one 16-wide panel (DBNet's last layer: 1 channel, n = 2):
            // the GEMM's tiles would be mostly padding. Vectorise over 16 pixels instead:
            // transpose them to [C][16], then per column q accumulate 16 pixels at once.
            // B's single panel holds (k, q) at br[k*16 + q].
            constexpr int64_t kP = 16;
            thread_local std::vector<float> xt;
            ScratchOf(xt, static_cast<size_t>(c * kP));
            for (int64_t p0 = 0; p0 < wd; p0 += kP) {
              const int64_t np = std::min(kP, wd - p0);
              for (int64_t p = 0; p < kP; ++p) {
                for (int64_t k = 0; k < c; ++k) xt[k * kP + p] = p < np ? xr[(p0 + p) * c + k] : 0.f;
              }
              for (int64_t q = 0; q < n; ++q) {
                float acc[kP];
                const float b0 = bias ? bias->data<float>()[q] : 0.f;
                for (int64_t p = 0; p < kP; ++p) acc[p] = b0;
                for (int64_t k = 0; k < c; ++k) {
                  const float bv = br[k * kGemmNR + q];
                  const float* xk = xt.data() + k * kP;
                  for (int64_t p = 0; p < kP; ++p) acc[p] += xk[p] * bv;
                }
                for (int64_t p = 0; p < np; ++p) yr[(p0 + p) * n + q] = acc[p];
              }
            }
          }
        });
        return Status::Ok();
      });
}

}  // namespace

SY_REGISTER_CPU_IMPLS(NativeConvTransposeNhwc) {
  reg.Register({"native", "", "ConvTranspose", "nhwc_gemm", SupportsNhwcGemm, PrepareNhwcGemm, CreateNhwcGemm});
}

}  // namespace switchyard::native
