// Provider "cudnn" (target cuda): Conv and switchyard.FusedConv on cuDNN 9's legacy
// convolution API, computing act(conv(x, w) + bias + z) in NCHW (1-D convs run as 2-D
// with H = 1; 2-D and 3-D natively), grouped and depthwise, strides, dilations,
// pads and auto_pad (asymmetric pads through a zero-padded copy of X in the workspace, as
// cuDNN's legacy API pads symmetrically only).
//
// Fusion: ReLU (and, with IMPLICIT_PRECOMP_GEMM, identity) with bias and a full-shape
// residual run as one cudnnConvolutionBiasActivationForward (y = act(conv + z + bias),
// alpha2 = 1). Any other activation (SiLU, Sigmoid, HardSwish, Clip, LeakyRelu, Tanh, exact
// Gelu, HardSigmoid), a broadcast residual, or a bias with another algorithm: plain
// cudnnConvolutionForward then one pass of kernels/epilogue.cu in the same Launch.
//
// Math: precision fp32 -> CUDNN_FMA_MATH (no TF32), tf32 -> TENSOR_OP_MATH_ALLOW_CONVERSION,
// float16/bfloat16 data -> TENSOR_OP_MATH, always with float accumulation.
//
// Channels-last (layout.activations=nhwc, layout.h): a 2-D conv declares X, a 4-D run-time
// residual and Y "nhwc" and runs on CUDNN_TENSOR_NHWC descriptors with KRSC weights
// (permuted from KCRS at prepare), which is what cuDNN's fp16/bf16 tensor-core kernels
// want. The epilogue then sees channels innermost (bias_inner 1, a broadcast residual
// indexed over [N, H, W, K]) and the asymmetric-pad copy pads [N][H][W] x C rows.
//
// Tactic knob: variants "", "rank1", "rank2", "rank3" take that entry of
// cudnnGetConvolutionForwardAlgorithm_v7's ranking, keeping only deterministic algorithms
// that run with the math type above within a 256 MiB workspace (clamped to the last).
#include <algorithm>
#include <cstring>
#include <mutex>

#include "backends/cuda/common.h"
#include "backends/cuda/kernels/epilogue.h"
#include "backends/cuda/library_common.h"
#include "backends/cuda/layout.h"
#include "reference/ops/common.h"
#include "reference/ops/conv_common.h"
#include "reference/ops/fused_activation.h"

namespace switchyard::cuda {
namespace {

using kernels::EpiAct;
using kernels::EpiDtype;

constexpr size_t kDnnMaxWorkspace = size_t{256} << 20;

cudnnDataType_t ToDnnType(DataType t) {
  return t == DataType::kFloat16 ? CUDNN_DATA_HALF : t == DataType::kBfloat16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

// --- The plan ------------------------------------------------------------------------
struct ConvPlan {
  DataType dt = DataType::kFloat;
  // As given to cuDNN (a 1-D conv promoted to 2-D): NC[D]HW dims, filter dims, and per
  // spatial dim pads/strides/dilations.
  std::vector<int> x_dims, w_dims, y_dims;
  std::vector<int> pads, strides, dilations;
  int groups = 1;
  // Asymmetric pads: X is first copied, zero-padded, into the workspace (kernels/epilogue.h
  // LaunchPadCopy) and cuDNN runs without padding. Spatial dims normalised to D, H, W.
  bool pad_copy = false;
  int64_t planes = 0;
  int64_t in_sp[3] = {1, 1, 1}, pad_begin[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};
  int64_t k = 0;            // output channels
  int64_t spatial_out = 1;  // product of the output's spatial dims
  bool has_bias = false;
  int z_in = -1;
  bool z_full = false;
  ops::ActivationSpec act;
  EpiAct epi_act = EpiAct::kNone;
  std::vector<int64_t> out_shape;  // the node's output shape
  bool nhwc = false;  // channels-last X, Y (and a 4-D residual); KRSC weights
};

bool FitsInt(int64_t v) { return v >= 0 && v <= (int64_t{1} << 31) - 1; }

Result<ConvPlan> MakePlan(const Node& node, const std::vector<std::vector<int64_t>>& shapes,
                          const std::vector<DataType>& dtypes) {
  ConvPlan p;
  auto fail = [&](const std::string& m) { return ops::NodeUnsupported(node, "cudnn: " + m); };
  SY_ASSIGN_OR_RETURN(p.dt, CommonFloatInputs(node, shapes, dtypes, "cudnn", "X and W"));
  const std::vector<int64_t>& x = shapes[0];
  const std::vector<int64_t>& w = shapes[1];
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) return fail("1-D, 2-D or 3-D convolutions only");
  const size_t ns = x.size() - 2;
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  const std::vector<int64_t> kattr = node.GetInts("kernel_shape");
  if (!kattr.empty() && kattr != kernel) return fail("kernel_shape does not match W");
  SY_ASSIGN_OR_RETURN(ops::Window win, ops::ReadWindow(node, kernel));
  const int64_t g = node.GetInt("group", 1);
  const int64_t n = x[0], c = x[1];
  p.k = w[0];
  if (g < 1 || c % g != 0 || p.k % g != 0 || w[1] != c / g) return fail("group / channel mismatch");
  if (n <= 0 || c <= 0 || p.k <= 0) return fail("empty tensors");
  p.groups = static_cast<int>(g);
  p.out_shape = {n, p.k};
  std::vector<int64_t> pads, strides, dils, out_sp;
  for (size_t i = 0; i < ns; ++i) {
    SY_ASSIGN_OR_RETURN(int64_t o, ops::WindowOutputDim(node, win, i, x[2 + i]));
    if (o <= 0) return fail("empty output");
    if (win.pads_begin[i] != win.pads_end[i]) p.pad_copy = true;
    p.out_shape.push_back(o);
    out_sp.push_back(o);
    pads.push_back(win.pads_begin[i]);
    strides.push_back(win.strides[i]);
    dils.push_back(win.dilations[i]);
  }
  std::vector<int64_t> xd = x, wd = w, yd = p.out_shape;
  p.planes = n * c;
  for (size_t i = 0; i < ns; ++i) {
    const size_t j = 3 - ns + i;
    p.in_sp[j] = x[2 + i];
    p.pad_begin[j] = win.pads_begin[i];
    p.pad_end[j] = win.pads_end[i];
  }
  if (p.pad_copy) {
    for (size_t i = 0; i < ns; ++i) {
      xd[2 + i] += win.pads_begin[i] + win.pads_end[i];
      pads[i] = 0;
    }
  }
  if (ns == 1) {  // 1-D as 2-D with H = 1
    xd.insert(xd.begin() + 2, 1);
    wd.insert(wd.begin() + 2, 1);
    yd.insert(yd.begin() + 2, 1);
    pads.insert(pads.begin(), 0);
    strides.insert(strides.begin(), 1);
    dils.insert(dils.begin(), 1);
  }
  for (const auto* v : {&xd, &wd, &yd, &pads, &strides, &dils}) {
    for (int64_t e : *v) {
      if (!FitsInt(e)) return fail("dimension beyond int32");
    }
  }
  if (!FitsInt(Numel(xd)) || !FitsInt(Numel(p.out_shape))) return fail("tensor beyond 2^31 elements");
  p.x_dims.assign(xd.begin(), xd.end());
  p.w_dims.assign(wd.begin(), wd.end());
  p.y_dims.assign(yd.begin(), yd.end());
  p.pads.assign(pads.begin(), pads.end());
  p.strides.assign(strides.begin(), strides.end());
  p.dilations.assign(dils.begin(), dils.end());
  p.spatial_out = Numel(out_sp);
  if (node.HasInput(2)) {
    if (shapes.size() < 3 || shapes[2] != std::vector<int64_t>{p.k}) return fail("bias must be [M]");
    p.has_bias = true;
  }
  if (node.op_type == "FusedConv") {
    SY_ASSIGN_OR_RETURN(p.act, ops::ReadActivation(node));
    if (!ActToEpi(p.act.act, &p.epi_act)) return fail("activation");
    if (p.act.has_post) return fail("post_affine (fused on CPU targets only)");
    if (node.HasInput(3)) {
      if (shapes.size() < 4) return fail("residual shape missing");
      p.z_in = 3;
      kernels::EpilogueParams probe;
      if (!FillBroadcast(shapes[3], p.out_shape, &probe)) return fail("residual does not broadcast");
      p.z_full = Numel(shapes[3]) == Numel(p.out_shape);
    }
  }
  return p;
}

Result<cudnnHandle_t> QueryHandle() {
  static std::mutex mu;
  static cudnnHandle_t handle = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (!handle) SY_CUDNN_CHECK(cudnnCreate(&handle));
  return handle;
}

// Fully packed NC[D]HW strides.
std::vector<int> PackedStrides(const std::vector<int>& dims) {
  std::vector<int> s(dims.size(), 1);
  for (size_t i = dims.size() - 1; i-- > 0;) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

// NHWC strides of NCHW-ordered 4-D dims.
std::vector<int> NhwcStrides(const std::vector<int>& d) {
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

// KCRS (ONNX) -> KRSC weights, as CUDNN_TENSOR_NHWC filters want them.
Tensor ToKrsc(const Tensor& w) {
  const std::vector<int64_t>& s = w.shape();
  const int64_t k = s[0], c = s[1], r = s[2], q = s[3];
  Tensor out(w.dtype(), {k, r, q, c});
  const size_t es = DataTypeSize(w.dtype());
  const auto* src = static_cast<const uint8_t*>(w.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (int64_t ki = 0; ki < k; ++ki)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t ri = 0; ri < r; ++ri)
        for (int64_t qi = 0; qi < q; ++qi) {
          const int64_t from = ((ki * c + ci) * r + ri) * q + qi;
          const int64_t to = ((ki * r + ri) * q + qi) * c + ci;
          std::memcpy(dst + to * es, src + from * es, es);
        }
  return out;
}

// Physical dims of the residual for the epilogue: its storage order in an nhwc plan
// ([N, H, W, C] of the 4-D shape, right-aligned first for a plain lower-rank one).
std::vector<int64_t> ResidualDims(const std::vector<int64_t>& z, bool nhwc) {
  return nhwc ? NhwcDims(Rank4(z)) : z;
}

// --- The kernel ---------------------------------------------------------------------
class DnnConvKernel final : public CudaKernel {
 public:
  DnnConvKernel(const StepView& view, ConvPlan plan) : CudaKernel(view), p_(std::move(plan)), name_(view.node.name) {}
  ~DnnConvKernel() override {
    if (x_) cudnnDestroyTensorDescriptor(x_);
    if (y_) cudnnDestroyTensorDescriptor(y_);
    if (b_) cudnnDestroyTensorDescriptor(b_);
    if (w_) cudnnDestroyFilterDescriptor(w_);
    if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
    if (act_) cudnnDestroyActivationDescriptor(act_);
  }

  Status Init(const StepView& view, int rank, const std::string& math) {
    const auto& prm = view.params;
    if (!prm.value("w_packed", false) || view.packed.empty()) return Status::Internal("cudnn: packed weights missing");
    SY_ASSIGN_OR_RETURN(w_dev_, DeviceBuffer::Upload(*view.packed[0]));
    if (prm.value("bias_packed", false)) {
      if (view.packed.size() < 2) return Status::Internal("cudnn: packed bias missing");
      SY_ASSIGN_OR_RETURN(bias_dev_, DeviceBuffer::Upload(*view.packed[1]));
    }
    // Layouts as the builder stored them (the kernel harness passes plain ones).
    if (p_.nhwc != prm.value("nhwc", false) || p_.nhwc != IsNhwc(view.output_layouts, 0)) {
      return Status::Internal("node '" + name_ + "': cudnn conv layouts differ from its prepared plan (nhwc " +
                              std::string(prm.value("nhwc", false) ? "prepared" : "not prepared") + ")");
    }
    for (size_t i = 0; i < view.input_layouts.size(); ++i) {
      const std::string& l = view.input_layouts[i];
      const bool ok = l.empty() || (p_.nhwc && l == kNhwc && (i == 0 || static_cast<int>(i) == p_.z_in));
      if (!ok) return Status::Unsupported("node '" + name_ + "': cudnn conv input " + std::to_string(i) + " in layout " + l);
    }
    if (p_.z_in >= 0 && p_.nhwc && !IsNhwc(view.input_layouts, static_cast<size_t>(p_.z_in)) &&
        !PlainIsNhwc(view.input_shapes[static_cast<size_t>(p_.z_in)])) {
      return Status::Internal("node '" + name_ + "': plain residual in an nhwc conv");
    }
    const cudnnDataType_t dt = ToDnnType(p_.dt);
    const int nd = static_cast<int>(p_.x_dims.size());
    SY_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_));
    SY_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_));
    SY_CUDNN_CHECK(cudnnCreateTensorDescriptor(&b_));
    SY_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_));
    SY_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_));
    SY_CUDNN_CHECK(cudnnCreateActivationDescriptor(&act_));
    std::vector<int> bd(static_cast<size_t>(nd), 1);
    bd[1] = static_cast<int>(p_.k);
    auto strides = [&](const std::vector<int>& d) { return p_.nhwc ? NhwcStrides(d) : PackedStrides(d); };
    SY_CUDNN_CHECK(cudnnSetTensorNdDescriptor(x_, dt, nd, p_.x_dims.data(), strides(p_.x_dims).data()));
    SY_CUDNN_CHECK(cudnnSetTensorNdDescriptor(y_, dt, nd, p_.y_dims.data(), strides(p_.y_dims).data()));
    SY_CUDNN_CHECK(cudnnSetTensorNdDescriptor(b_, dt, nd, bd.data(), strides(bd).data()));
    SY_CUDNN_CHECK(cudnnSetFilterNdDescriptor(w_, dt, p_.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, nd,
                                              p_.w_dims.data()));
    SY_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(conv_, nd - 2, p_.pads.data(), p_.strides.data(), p_.dilations.data(),
                                                   CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    SY_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv_, p_.groups));
    cudnnMathType_t mt = CUDNN_FMA_MATH;
    if (p_.dt != DataType::kFloat) {
      mt = CUDNN_TENSOR_OP_MATH;
    } else if (math == "tf32") {
      mt = CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    }
    SY_CUDNN_CHECK(cudnnSetConvolutionMathType(conv_, mt));
    std::vector<int> check(static_cast<size_t>(nd));
    SY_CUDNN_CHECK(cudnnGetConvolutionNdForwardOutputDim(conv_, x_, w_, nd, check.data()));
    if (check != p_.y_dims) return Status::Internal("node '" + name_ + "': cuDNN's output shape differs from the node's");

    // Ranked algorithms that run with our math type within the workspace cap.
    SY_ASSIGN_OR_RETURN(cudnnHandle_t h, QueryHandle());
    int max_count = 0;
    SY_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max_count));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(std::max(max_count, 1)));
    int returned = 0;
    SY_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, x_, w_, conv_, y_, max_count, &returned, perf.data()));
    std::vector<std::pair<cudnnConvolutionFwdAlgo_t, size_t>> usable;
    for (int i = 0; i < returned; ++i) {
      const cudnnConvolutionFwdAlgoPerf_t& r = perf[static_cast<size_t>(i)];
      if (r.status != CUDNN_STATUS_SUCCESS) continue;
      // Engines must give the same bits on every run and in every session (the tuner's
      // validation checks concurrent sessions bit for bit): no non-deterministic algorithms.
      if (r.determinism != CUDNN_DETERMINISTIC) continue;
      if (std::any_of(usable.begin(), usable.end(), [&](const auto& u) { return u.first == r.algo; })) continue;
      size_t ws = 0;
      if (cudnnGetConvolutionForwardWorkspaceSize(h, x_, w_, conv_, y_, r.algo, &ws) != CUDNN_STATUS_SUCCESS) continue;
      if (ws > kDnnMaxWorkspace) continue;
      usable.emplace_back(r.algo, ws);
    }
    if (usable.empty()) return Status::Unsupported("node '" + name_ + "': cuDNN has no forward algorithm for this convolution");
    const auto& pick = usable[static_cast<size_t>(std::min<int>(rank, static_cast<int>(usable.size()) - 1))];
    algo_ = pick.first;
    conv_ws_ = pick.second;
    ws_ = conv_ws_;
    if (p_.pad_copy) {
      int64_t padded = 1;
      for (int d : p_.x_dims) padded *= d;
      pad_offset_ = (conv_ws_ + 255) / 256 * 256;
      ws_ = pad_offset_ + static_cast<size_t>(padded) * DataTypeSize(p_.dt);
    }

    // Fused path or conv + epilogue.
    const bool z_fused = p_.z_in >= 0 && p_.z_full;
    const bool z_ok = p_.z_in < 0 || z_fused;
    if (z_ok && p_.epi_act == EpiAct::kRelu) {
      fused_ = true;
      SY_CUDNN_CHECK(cudnnSetActivationDescriptor(act_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    } else if (z_ok && p_.epi_act == EpiAct::kNone && (p_.has_bias || z_fused) &&
               algo_ == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) {
      fused_ = true;
      SY_CUDNN_CHECK(cudnnSetActivationDescriptor(act_, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    if (fused_ && !p_.has_bias) {
      // The fused call always adds a bias: zeros.
      Tensor zeros(p_.dt, {p_.k});
      for (int64_t i = 0; i < p_.k; ++i) zeros.SetDouble(i, 0.0);
      SY_ASSIGN_OR_RETURN(bias_dev_, DeviceBuffer::Upload(zeros));
    }
    need_epilogue_ = !fused_ && (p_.has_bias || p_.z_in >= 0 || p_.epi_act != EpiAct::kNone);
    return Status::Ok();
  }

  size_t WorkspaceBytes() const override { return ws_; }

  Status Launch(const Exec& ex, const KernelIO& io) const override {
    if (io.inputs.empty() || !io.inputs[0] || io.outputs.empty() || !io.outputs[0]) {
      return Status::Internal("node '" + name_ + "': cudnn conv inputs missing");
    }
    if (ws_ > ex.workspace_bytes) {
      return Status::Internal("node '" + name_ + "': cuDNN needs " + std::to_string(ws_) + " bytes of workspace, the session has " +
                              std::to_string(ex.workspace_bytes));
    }
    const void* x = io.inputs[0]->data;
    void* y = io.outputs[0]->data;
    const TensorRef* z = p_.z_in >= 0 && static_cast<size_t>(p_.z_in) < io.inputs.size() ? io.inputs[p_.z_in] : nullptr;
    const void* bias = bias_dev_.get();
    if (!bias && p_.has_bias) bias = io.inputs.size() > 2 && io.inputs[2] ? io.inputs[2]->data : nullptr;
    if ((p_.z_in >= 0 && !z) || (p_.has_bias && !bias)) return Status::Internal("node '" + name_ + "': cudnn conv inputs missing");
    SY_CUDNN_CHECK(cudnnSetStream(ex.dnn, ex.stream));
    if (p_.pad_copy) {
      kernels::PadParams pp;
      pp.x = x;
      pp.y = static_cast<char*>(ex.workspace) + pad_offset_;
      pp.dtype = ToEpiDtype(p_.dt);
      pp.planes = p_.planes;
      for (int i = 0; i < 3; ++i) pp.in[i] = p_.in_sp[i], pp.begin[i] = p_.pad_begin[i], pp.end[i] = p_.pad_end[i];
      if (p_.nhwc) {  // [N][H][W][C]: pad H and W, C rows move whole
        pp.planes = p_.out_shape[0];
        pp.in[0] = p_.in_sp[1], pp.begin[0] = p_.pad_begin[1], pp.end[0] = p_.pad_end[1];
        pp.in[1] = p_.in_sp[2], pp.begin[1] = p_.pad_begin[2], pp.end[1] = p_.pad_end[2];
        pp.in[2] = p_.x_dims[1], pp.begin[2] = 0, pp.end[2] = 0;
      }
      SY_CUDA_CHECK(kernels::LaunchPadCopy(pp, ex.stream));
      SY_RETURN_IF_ERROR(CheckLaunch("cudnn pad copy"));
      x = pp.y;
    }
    const float one = 1.f, zero = 0.f;
    if (fused_) {
      const float alpha2 = z ? 1.f : 0.f;
      const cudnnStatus_t st = cudnnConvolutionBiasActivationForward(ex.dnn, &one, x_, x, w_, w_dev_.get(), conv_, algo_, ex.workspace,
                                                                     conv_ws_, &alpha2, y_, z ? z->data : y, b_, bias, act_, y_, y);
      if (st == CUDNN_STATUS_SUCCESS) return Status::Ok();
      // A combination the fused call refuses (it enqueued nothing): convolution + epilogue.
      if (st != CUDNN_STATUS_NOT_SUPPORTED) return CudnnError(st, "cudnnConvolutionBiasActivationForward");
    }
    SY_CUDNN_CHECK(cudnnConvolutionForward(ex.dnn, &one, x_, x, w_, w_dev_.get(), conv_, algo_, ex.workspace, conv_ws_, &zero, y_, y));
    if (!need_epilogue_ && !fused_) return Status::Ok();
    kernels::EpilogueParams ep;
    ep.y = y;
    ep.numel = io.outputs[0]->numel();
    ep.dtype = ToEpiDtype(p_.dt);
    if (bias) {
      ep.bias = bias;
      ep.bias_inner = p_.nhwc ? 1 : p_.spatial_out;  // nhwc: the channel is innermost
      ep.bias_channels = p_.k;
    }
    if (z) {
      ep.z = z->data;
      ep.z_full = p_.z_full;
      const std::vector<int64_t> out = p_.nhwc ? NhwcDims(p_.out_shape) : p_.out_shape;
      if (!p_.z_full && !FillBroadcast(ResidualDims(z->shape, p_.nhwc), out, &ep)) {
        return Status::Internal("node '" + name_ + "': residual shape");
      }
    }
    ep.act = p_.epi_act;
    if (p_.act.params.size() > 0) ep.p0 = p_.act.params[0];
    if (p_.act.params.size() > 1) ep.p1 = p_.act.params[1];
    SY_CUDA_CHECK(kernels::LaunchEpilogue(ep, ex.stream));
    return CheckLaunch("cudnn epilogue");
  }

 private:
  const ConvPlan p_;
  const std::string name_;
  DeviceBuffer w_dev_, bias_dev_;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr, b_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnActivationDescriptor_t act_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t ws_ = 0, conv_ws_ = 0, pad_offset_ = 0;
  bool fused_ = false, need_epilogue_ = false;
};

// --- Registry hooks -------------------------------------------------------------------

// Whether this conv runs channels-last: the route asks for nhwc, the conv is 2-D with a
// run-time X, and a residual is either a run-time 4-D tensor (declared nhwc) or one whose
// plain memory already reads as NHWC (layout.h PlainIsNhwc; constants stay plain).
bool NhwcEligible(const KernelBuildContext& ctx, const ConvPlan& p) {
  if (!WantNhwc(ctx) || ctx.input_shapes.empty() || ctx.input_shapes[0].size() != 4 || ConstantInput(ctx, 0)) {
    return false;
  }
  if (p.z_in >= 0) {
    const size_t zi = static_cast<size_t>(p.z_in);
    const bool z_nhwc = ctx.input_shapes[zi].size() == 4 && !ConstantInput(ctx, zi);
    if (!z_nhwc && !PlainIsNhwc(ctx.input_shapes[zi])) return false;
  }
  return true;
}

bool SupportsDnn(const Node& node, const KernelBuildContext& ctx) {
  if (!IsCudaBuild(ctx)) return false;
  if (node.op_type == "FusedConv" && node.domain != "switchyard") return false;
  if (node.HasInput(4)) return false;  // an input scale (fuse.conv_scale is a CPU knob)
  if (node.outputs.size() > 1) return false;  // channel means (fuse.conv_pool is a CPU knob)
  if (!ConstantInput(ctx, 1)) return false;  // weights must be constant
  return MakePlan(node, ctx.input_shapes, ctx.input_dtypes).ok();
}

Status PrepareDnn(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  SY_ASSIGN_OR_RETURN(ConvPlan p, MakePlan(node, ctx.input_shapes, ctx.input_dtypes));
  const Tensor* w = ConstantInput(ctx, 1);
  if (!w) return ops::NodeUnsupported(node, "cudnn: W must be a constant");
  spec.params["rank"] = RankOf(ctx.variant);
  spec.params["math"] = p.dt != DataType::kFloat ? "tensor_op" : ctx.precision == "tf32" ? "tf32" : "fma";
  spec.params["dtype"] = DataTypeName(p.dt);
  spec.params["w_packed"] = true;
  const bool nhwc = NhwcEligible(ctx, p);
  spec.params["nhwc"] = nhwc;
  if (nhwc) {
    std::vector<std::string> in(node.inputs.size(), "");
    in[0] = kNhwc;
    if (p.z_in >= 0 && ctx.input_shapes[static_cast<size_t>(p.z_in)].size() == 4 &&
        !ConstantInput(ctx, static_cast<size_t>(p.z_in))) {
      in[static_cast<size_t>(p.z_in)] = kNhwc;
    }
    spec.params["input_layouts"] = in;
    spec.params["output_layouts"] = {kNhwc};
  }
  spec.packed.push_back(nhwc ? ToKrsc(ConvertConstant(*w, p.dt)) : ConvertConstant(*w, p.dt));
  spec.consumed_inputs.push_back(1);
  const Tensor* b = p.has_bias ? ConstantInput(ctx, 2) : nullptr;
  spec.params["bias_packed"] = b != nullptr;
  if (b) {
    spec.packed.push_back(ConvertConstant(*b, p.dt));
    spec.consumed_inputs.push_back(2);
  }
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateDnn(const StepView& view) {
  SY_ASSIGN_OR_RETURN(ConvPlan p, MakePlan(view.node, view.input_shapes, view.input_dtypes));
  p.nhwc = IsNhwc(view.input_layouts, 0);
  if (p.nhwc && view.input_shapes[0].size() != 4) return Status::Internal("cudnn: nhwc needs a 2-D convolution");
  if (!Device().present) return Status::FailedPrecondition("cudnn: no CUDA device: " + Device().error);
  auto k = std::make_unique<DnnConvKernel>(view, std::move(p));
  SY_RETURN_IF_ERROR(k->Init(view, view.params.value("rank", 0), view.params.value("math", std::string("fma"))));
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace

SY_REGISTER_CUDA_IMPLS(Cudnn) {
  for (const char* variant : {"", "rank1", "rank2", "rank3"}) {
    reg.Register({"cudnn", "", "Conv", variant, SupportsDnn, PrepareDnn, CreateDnn});
    reg.Register({"cudnn", "switchyard", "FusedConv", variant, SupportsDnn, PrepareDnn, CreateDnn});
  }
}

}  // namespace switchyard::cuda
