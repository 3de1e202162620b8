// Provider "cublaslt" (target cuda): MatMul, Gemm and switchyard.FusedMatMul on cuBLASLt,
// computing act(alpha·op(A)·op(B) + bias + z).
//
// Row-major handling: the usual swap. Row-major Y[M,N] = A'[M,K]·B'[K,N] is column-major
// Y^T[N,M] = B'^T·A'^T, so cuBLASLt's "A" is our B and its "B" is our A, both in the
// default column-major order (a row-major [R,C] buffer is a column-major [C,R] one). The
// bias (length N) is then a per-row vector of cuBLASLt's D, which is what its BIAS
// epilogues add.
//
// Fusion: a constant bias goes into the BIAS / RELU_BIAS epilogue (packed at build time
// in the step's dtype, scaled by Gemm's beta); a residual z of the output's full shape
// goes in as C with beta = 1 (Gemm: beta); ReLU is fused when nothing is added after the
// GEMM. Everything else (exact-erf Gelu and the other activations, a run-time bias, a
// broadcast residual) is one pass of kernels/epilogue.cu in the same Launch. cuBLASLt's
// GELU epilogue is the tanh approximation and the fused ops only carry exact Gelu, so it
// is never used.
//
// Batching (numpy rules): B without batch dims and A not transposed: A's batch dims are
// folded into M (one plain GEMM). Otherwise the innermost batch dims over which each
// operand is either full or broadcast become one strided batch (stride 0 for the
// broadcast operand); any remaining outer batch dims are a loop of calls with offsets
// computed at Create.
//
// Tactic knob: variants "", "rank1", "rank2", "rank3" take that entry of
// cublasLtMatmulAlgoGetHeuristic (clamped to the last returned) for a fixed preference
// (32 MiB workspace, operand alignment as the run will have it).
#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <numeric>

#include "backends/cuda/common.h"
#include "backends/cuda/kernels/epilogue.h"
#include "backends/cuda/library_common.h"
#include "reference/ops/common.h"
#include "reference/ops/fused_activation.h"

namespace switchyard::cuda {
namespace {

using kernels::EpiAct;
using kernels::EpiDtype;

constexpr size_t kLtMaxWorkspace = size_t{32} << 20;
constexpr int kMaxOuterCalls = 4096;
constexpr int kHeuristicCount = 8;

cudaDataType_t ToCudaType(DataType t) {
  return t == DataType::kFloat16 ? CUDA_R_16F : t == DataType::kBfloat16 ? CUDA_R_16BF : CUDA_R_32F;
}

// --- The plan: everything Supports/Prepare/Create derive from the node and its shapes ---
struct Offsets {
  int64_t a = 0, b = 0, d = 0;  // element offsets of one call
};

struct MmPlan {
  DataType dt = DataType::kFloat;
  bool trans_a = false, trans_b = false;
  float alpha = 1.f;
  int bias_in = -1;  // input carrying the bias (along N), -1: none
  float bias_scale = 1.f;
  int z_in = -1;     // input carrying the residual, -1: none
  float z_scale = 1.f;
  bool z_full = false;  // z has the output's element count (C of cuBLASLt)
  ops::ActivationSpec act;
  EpiAct epi_act = EpiAct::kNone;
  // Geometry (after 1-D promotion and transposes).
  int64_t m = 0, n = 0, k = 0;
  bool flat = false;
  int64_t batch = 1;                   // strided batch count of each call
  int64_t a_stride = 0, b_stride = 0;  // element strides of that batch (0 = broadcast)
  std::vector<Offsets> calls;          // one cublasLtMatmul per entry
  std::vector<int64_t> out_shape;      // the node's output shape
};

Result<MmPlan> MakePlan(const Node& node, const std::vector<std::vector<int64_t>>& shapes,
                        const std::vector<DataType>& dtypes) {
  MmPlan p;
  auto fail = [&](const std::string& m) { return ops::NodeUnsupported(node, "cublaslt: " + m); };
  SY_ASSIGN_OR_RETURN(p.dt, CommonFloatInputs(node, shapes, dtypes, "cublaslt", "A and B"));
  const bool gemm = node.op_type == "Gemm", fused = node.op_type == "FusedMatMul";
  if (gemm) {
    p.trans_a = node.GetInt("transA", 0) != 0;
    p.trans_b = node.GetInt("transB", 0) != 0;
    p.alpha = node.GetFloat("alpha", 1.f);
    if (shapes[0].size() != 2 || shapes[1].size() != 2) return fail("Gemm needs 2-D A and B");
  } else if (fused) {
    p.trans_a = node.GetInt("trans_a", 0) != 0;
    p.trans_b = node.GetInt("trans_b", 0) != 0;
    p.alpha = node.GetFloat("alpha", 1.f);
    SY_ASSIGN_OR_RETURN(p.act, ops::ReadActivation(node));
    if (!ActToEpi(p.act.act, &p.epi_act)) return fail("activation");
  }
  std::vector<int64_t> a = shapes[0], b = shapes[1];
  if (a.empty() || b.empty()) return fail("scalar operands");
  if ((p.trans_a && a.size() < 2) || (p.trans_b && b.size() < 2)) return fail("transpose of a vector");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  const size_t ra = a.size(), rb = b.size();
  p.m = p.trans_a ? a[ra - 1] : a[ra - 2];
  p.k = p.trans_a ? a[ra - 2] : a[ra - 1];
  const int64_t kb = p.trans_b ? b[rb - 1] : b[rb - 2];
  p.n = p.trans_b ? b[rb - 2] : b[rb - 1];
  if (p.k != kb) return fail("inner dimensions differ");
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return fail("empty dimensions");
  // Batch dims.
  const size_t r = std::max(ra, rb), nb = r - 2;
  std::vector<int64_t> ab(nb, 1), bb(nb, 1), ob(nb, 1);
  for (size_t i = 0; i + 2 < ra; ++i) ab[nb - (ra - 2) + i] = a[i];
  for (size_t i = 0; i + 2 < rb; ++i) bb[nb - (rb - 2) + i] = b[i];
  for (size_t i = 0; i < nb; ++i) {
    if (ab[i] != bb[i] && ab[i] != 1 && bb[i] != 1) return fail("batch dims do not broadcast");
    ob[i] = std::max(ab[i], bb[i]);
  }
  p.out_shape = ob;
  p.out_shape.push_back(p.m);
  p.out_shape.push_back(p.n);
  if (b1) p.out_shape.pop_back();
  if (a1) p.out_shape.erase(p.out_shape.end() - (b1 ? 1 : 2));
  const int64_t ob_all = Numel(ob);
  const bool b_unbatched = std::all_of(bb.begin(), bb.end(), [](int64_t d) { return d == 1; });
  const int64_t mk = p.m * p.k, kn = p.k * p.n, mn = p.m * p.n;
  if (b_unbatched && !p.trans_a) {
    p.flat = true;
    p.m *= ob_all;
    p.calls.push_back({});
  } else {
    // Row-major batch strides (0 on broadcast dims).
    std::vector<int64_t> sa(nb), sb(nb), sd(nb);
    int64_t xa = mk, xb = kn, xd = mn;
    for (size_t i = nb; i-- > 0;) {
      sa[i] = ab[i] == 1 ? 0 : xa;
      sb[i] = bb[i] == 1 ? 0 : xb;
      sd[i] = xd;
      xa *= ab[i], xb *= bb[i], xd *= ob[i];
    }
    // Innermost dims where each operand is consistently full or broadcast.
    int mode_a = 0, mode_b = 0;  // 0 unknown, 1 full, 2 broadcast
    size_t split = nb;
    for (size_t i = nb; i-- > 0;) {
      if (ob[i] == 1) {
        split = i;
        continue;
      }
      const int ma = ab[i] == 1 ? 2 : 1, mb = bb[i] == 1 ? 2 : 1;
      if ((mode_a && mode_a != ma) || (mode_b && mode_b != mb)) break;
      mode_a = ma, mode_b = mb;
      split = i;
    }
    p.batch = 1;
    for (size_t i = split; i < nb; ++i) p.batch *= ob[i];
    p.a_stride = mode_a == 2 ? 0 : mk;
    p.b_stride = mode_b == 2 ? 0 : kn;
    std::vector<int64_t> outer(ob.begin(), ob.begin() + static_cast<long>(split));
    const int64_t ncalls = Numel(outer);
    if (ncalls > kMaxOuterCalls) return fail("too many broadcast batch loops");
    std::vector<int64_t> idx(split, 0);
    for (int64_t c = 0; c < ncalls; ++c) {
      Offsets o;
      for (size_t i = 0; i < split; ++i) o.a += idx[i] * sa[i], o.b += idx[i] * sb[i], o.d += idx[i] * sd[i];
      p.calls.push_back(o);
      for (size_t i = split; i-- > 0;) {
        if (++idx[i] < ob[i]) break;
        idx[i] = 0;
      }
    }
  }
  // Bias and residual.
  const int64_t out_numel = Numel(p.out_shape);
  if (gemm && node.HasInput(2)) {
    const std::vector<int64_t>& c = shapes[2];
    const float beta = node.GetFloat("beta", 1.f);
    bool along_n = !c.empty() && c.size() <= 2 && (c.back() == p.n || c.back() == 1);
    for (size_t i = 0; i + 1 < c.size(); ++i) along_n = along_n && c[i] == 1;
    kernels::EpilogueParams probe;
    if (!FillBroadcast(c, p.out_shape, &probe)) return fail("C does not broadcast to [M, N]");
    if (Numel(c) == out_numel) {
      p.z_in = 2, p.z_scale = beta, p.z_full = true;
    } else if (along_n) {
      p.bias_in = 2, p.bias_scale = beta;
    } else {
      p.z_in = 2, p.z_scale = beta;
    }
  } else if (fused) {
    if (node.HasInput(2)) {
      const std::vector<int64_t>& c = shapes[2];
      if (c.size() != 1 || (c[0] != p.n && c[0] != 1)) return fail("bias must be 1-D with N or 1 elements");
      if (b1) return fail("bias with a 1-D B");
      p.bias_in = 2;
    }
    if (node.HasInput(3)) {
      p.z_in = 3;
      p.z_full = Numel(shapes[3]) == out_numel;
    }
  }
  if (p.z_in >= 0) {
    kernels::EpilogueParams probe;
    if (!FillBroadcast(shapes[static_cast<size_t>(p.z_in)], p.out_shape, &probe)) return fail("residual does not broadcast");
  }
  return p;
}

// Element-count alignment (bytes, power of two, at most 16) of a base pointer moved by
// each of `offsets` elements of `es` bytes; the base itself is assumed 16-byte aligned.
uint64_t Alignment(const std::vector<int64_t>& offsets, int64_t es) {
  uint64_t g = 16;
  for (int64_t o : offsets) g = std::gcd(g, static_cast<uint64_t>(o * es));
  return g & (~g + 1);
}

// One cuBLASLt handle for the heuristic queries at Create (created on first use).
Result<cublasLtHandle_t> QueryHandle() {
  static std::mutex mu;
  static cublasLtHandle_t handle = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (!handle) SY_CUBLAS_CHECK(cublasLtCreate(&handle));
  return handle;
}

// --- The kernel ---------------------------------------------------------------------
class LtMatMulKernel final : public CudaKernel {
 public:
  LtMatMulKernel(const StepView& view, MmPlan plan) : CudaKernel(view), p_(std::move(plan)), name_(view.node.name) {}
  ~LtMatMulKernel() override {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    for (cublasLtMatrixLayout_t l : {lay_a_, lay_b_, lay_d_}) {
      if (l) cublasLtMatrixLayoutDestroy(l);
    }
    if (op_) cublasLtMatmulDescDestroy(op_);
  }

  // Uploads the packed constants, builds the descriptors and picks the algorithm.
  Status Init(const StepView& view, int rank, bool tf32) {
    const auto& prm = view.params;
    size_t next = 0;
    if (prm.value("b_packed", false)) {
      if (next >= view.packed.size()) return Status::Internal("cublaslt: packed B missing");
      SY_ASSIGN_OR_RETURN(b_dev_, DeviceBuffer::Upload(*view.packed[next++]));
    }
    if (prm.value("bias_packed", false)) {
      if (next >= view.packed.size()) return Status::Internal("cublaslt: packed bias missing");
      SY_ASSIGN_OR_RETURN(bias_dev_, DeviceBuffer::Upload(*view.packed[next++]));
    }
    es_ = static_cast<int64_t>(DataTypeSize(p_.dt));
    // What the epilogue kernel must do after cuBLASLt.
    const bool k_bias = p_.bias_in >= 0 && !bias_dev_.get();
    const bool k_z = p_.z_in >= 0 && !p_.z_full;
    const bool lt_relu = p_.epi_act == EpiAct::kRelu && !k_bias && !k_z;
    need_epilogue_ = k_bias || k_z || (p_.epi_act != EpiAct::kNone && !lt_relu);
    beta_ = p_.z_in >= 0 && p_.z_full ? p_.z_scale : 0.f;

    const cudaDataType_t ct = ToCudaType(p_.dt);
    const cublasComputeType_t compute =
        p_.dt == DataType::kFloat && tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    SY_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, compute, CUDA_R_32F));
    // Swap: cuBLASLt A = our B, cuBLASLt B = our A.
    const cublasOperation_t op_lt_a = p_.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_lt_b = p_.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    SY_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &op_lt_a, sizeof(op_lt_a)));
    SY_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &op_lt_b, sizeof(op_lt_b)));
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
    if (bias_dev_.get()) {
      epi = lt_relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
      const void* bp = bias_dev_.get();
      SY_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof(bp)));
      const cudaDataType_t bt = ct;
      SY_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)));
    } else if (lt_relu) {
      epi = CUBLASLT_EPILOGUE_RELU;
    }
    SY_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));

    // Layouts (column-major views of the row-major buffers).
    const uint64_t m = static_cast<uint64_t>(p_.m), n = static_cast<uint64_t>(p_.n), k = static_cast<uint64_t>(p_.k);
    if (p_.trans_b) {
      SY_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lay_a_, ct, k, n, static_cast<int64_t>(k)));
    } else {
      SY_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lay_a_, ct, n, k, static_cast<int64_t>(n)));
    }
    if (p_.trans_a) {
      SY_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lay_b_, ct, m, k, static_cast<int64_t>(m)));
    } else {
      SY_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lay_b_, ct, k, m, static_cast<int64_t>(k)));
    }
    SY_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lay_d_, ct, n, m, static_cast<int64_t>(n)));
    if (p_.batch > 1) {
      const int32_t count = static_cast<int32_t>(p_.batch);
      const int64_t sd = p_.m * p_.n;
      for (auto [lay, stride] : {std::pair{lay_a_, p_.b_stride}, std::pair{lay_b_, p_.a_stride}, std::pair{lay_d_, sd}}) {
        SY_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(lay, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
        SY_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(lay, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
      }
    }

    // Alignment the run will have (base pointers at least 16-byte aligned).
    std::vector<int64_t> oa, ob, od;
    for (const Offsets& o : p_.calls) oa.push_back(o.a), ob.push_back(o.b), od.push_back(o.d);
    if (p_.batch > 1) oa.push_back(p_.a_stride), ob.push_back(p_.b_stride), od.push_back(p_.m * p_.n);
    align_a_ = static_cast<uint32_t>(Alignment(oa, es_));
    align_b_ = static_cast<uint32_t>(Alignment(ob, es_));
    align_d_ = static_cast<uint32_t>(Alignment(od, es_));
    SY_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref_));
    const uint64_t max_ws = kLtMaxWorkspace;
    SY_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)));
    // cuBLASLt "A" is our B and "B" our A.
    SY_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_b_, sizeof(align_b_)));
    SY_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_a_, sizeof(align_a_)));
    SY_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_d_, sizeof(align_d_)));
    SY_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_d_, sizeof(align_d_)));

    SY_ASSIGN_OR_RETURN(cublasLtHandle_t h, QueryHandle());
    cublasLtMatmulHeuristicResult_t res[kHeuristicCount] = {};
    int returned = 0;
    SY_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(h, op_, lay_a_, lay_b_, lay_d_, lay_d_, pref_, kHeuristicCount, res, &returned));
    if (returned <= 0) {
      return Status::Unsupported("node '" + name_ + "': cuBLASLt has no algorithm for this matmul");
    }
    const cublasLtMatmulHeuristicResult_t& pick = res[std::min(rank, returned - 1)];
    algo_ = pick.algo;
    ws_ = pick.workspaceSize;
    picked_rank_ = std::min(rank, returned - 1);
    return Status::Ok();
  }

  size_t WorkspaceBytes() const override { return ws_; }

  Status Launch(const Exec& ex, const KernelIO& io) const override {
    if (io.inputs.size() < 2 || !io.inputs[0] || io.outputs.empty() || !io.outputs[0]) {
      return Status::Internal("node '" + name_ + "': cublaslt matmul inputs missing");
    }
    if (ws_ > ex.workspace_bytes) {
      return Status::Internal("node '" + name_ + "': cuBLASLt needs " + std::to_string(ws_) + " bytes of workspace, the session has " +
                              std::to_string(ex.workspace_bytes));
    }
    const char* a = static_cast<const char*>(io.inputs[0]->data);
    const char* b = b_dev_.get() ? static_cast<const char*>(b_dev_.get())
                                 : (io.inputs[1] ? static_cast<const char*>(io.inputs[1]->data) : nullptr);
    char* d = static_cast<char*>(io.outputs[0]->data);
    const TensorRef* z = p_.z_in >= 0 && static_cast<size_t>(p_.z_in) < io.inputs.size() ? io.inputs[p_.z_in] : nullptr;
    const TensorRef* bias = p_.bias_in >= 0 && static_cast<size_t>(p_.bias_in) < io.inputs.size() ? io.inputs[p_.bias_in] : nullptr;
    if (!b || (p_.z_in >= 0 && !z) || (p_.bias_in >= 0 && !bias_dev_.get() && !bias)) {
      return Status::Internal("node '" + name_ + "': cublaslt matmul inputs missing");
    }
    const char* c = p_.z_full && z ? static_cast<const char*>(z->data) : d;
    auto misaligned = [](const void* ptr, uint32_t al) { return reinterpret_cast<uintptr_t>(ptr) % al != 0; };
    if (misaligned(a, 16) || misaligned(b, 16) || misaligned(c, 16) || misaligned(d, 16)) {
      return Status::Internal("node '" + name_ + "': cuBLASLt operands must be 16-byte aligned");
    }
    for (const Offsets& o : p_.calls) {
      SY_CUBLAS_CHECK(cublasLtMatmul(ex.lt, op_, &p_.alpha, b + o.b * es_, lay_a_, a + o.a * es_, lay_b_, &beta_,
                                     c + o.d * es_, lay_d_, d + o.d * es_, lay_d_, &algo_, ex.workspace, ws_, ex.stream));
    }
    if (!need_epilogue_) return Status::Ok();
    kernels::EpilogueParams ep;
    ep.y = d;
    ep.numel = io.outputs[0]->numel();
    ep.dtype = ToEpiDtype(p_.dt);
    if (p_.bias_in >= 0 && !bias_dev_.get()) {
      ep.bias = bias->data;
      ep.bias_inner = 1;
      ep.bias_channels = bias->numel();
      ep.bias_scale = p_.bias_scale;
    }
    if (z && !p_.z_full) {
      ep.z = z->data;
      ep.z_full = false;
      ep.z_scale = p_.z_scale;
      if (!FillBroadcast(z->shape, p_.out_shape, &ep)) return Status::Internal("node '" + name_ + "': residual shape");
    }
    ep.act = p_.epi_act;
    if (p_.act.params.size() > 0) ep.p0 = p_.act.params[0];
    if (p_.act.params.size() > 1) ep.p1 = p_.act.params[1];
    SY_CUDA_CHECK(kernels::LaunchEpilogue(ep, ex.stream));
    return CheckLaunch("cublaslt epilogue");
  }

 private:
  const MmPlan p_;
  const std::string name_;
  DeviceBuffer b_dev_, bias_dev_;
  int64_t es_ = 4;
  bool need_epilogue_ = false;
  float beta_ = 0.f;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t lay_a_ = nullptr, lay_b_ = nullptr, lay_d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t ws_ = 0;
  uint32_t align_a_ = 16, align_b_ = 16, align_d_ = 16;
  int picked_rank_ = 0;
};

// --- Registry hooks -------------------------------------------------------------------
const Tensor* ConstantInput(const KernelBuildContext& ctx, int i) {
  return i >= 0 ? cuda::ConstantInput(ctx, static_cast<size_t>(i)) : nullptr;
}

bool SupportsLt(const Node& node, const KernelBuildContext& ctx) {
  if (!IsCudaBuild(ctx)) return false;
  if (node.op_type == "FusedMatMul" && node.domain != "switchyard") return false;
  return MakePlan(node, ctx.input_shapes, ctx.input_dtypes).ok();
}

Status PrepareLt(const Node& node, const KernelBuildContext& ctx, StepSpec& spec) {
  SY_ASSIGN_OR_RETURN(MmPlan p, MakePlan(node, ctx.input_shapes, ctx.input_dtypes));
  spec.params["rank"] = RankOf(ctx.variant);
  spec.params["tf32"] = ctx.precision == "tf32" && p.dt == DataType::kFloat;
  spec.params["dtype"] = DataTypeName(p.dt);
  const Tensor* b = ConstantInput(ctx, 1);
  spec.params["b_packed"] = b != nullptr;
  if (b) {
    spec.packed.push_back(ConvertConstant(*b, p.dt));
    spec.consumed_inputs.push_back(1);
  }
  const Tensor* bias = ConstantInput(ctx, p.bias_in);
  spec.params["bias_packed"] = bias != nullptr;
  if (bias) {
    // Expanded to N elements (a one-element bias broadcasts), scaled by Gemm's beta.
    Tensor packed(p.dt, {p.n});
    for (int64_t i = 0; i < p.n; ++i) packed.SetDouble(i, static_cast<double>(p.bias_scale) * bias->GetDouble(bias->numel() == 1 ? 0 : i));
    spec.packed.push_back(std::move(packed));
    spec.consumed_inputs.push_back(p.bias_in);
  }
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateLt(const StepView& view) {
  SY_ASSIGN_OR_RETURN(MmPlan p, MakePlan(view.node, view.input_shapes, view.input_dtypes));
  if (!Device().present) return Status::FailedPrecondition("cublaslt: no CUDA device: " + Device().error);
  auto k = std::make_unique<LtMatMulKernel>(view, std::move(p));
  SY_RETURN_IF_ERROR(k->Init(view, view.params.value("rank", 0), view.params.value("tf32", false)));
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace

SY_REGISTER_CUDA_IMPLS(CublasLt) {
  for (const char* variant : {"", "rank1", "rank2", "rank3"}) {
    reg.Register({"cublaslt", "", "MatMul", variant, SupportsLt, PrepareLt, CreateLt});
    reg.Register({"cublaslt", "", "Gemm", variant, SupportsLt, PrepareLt, CreateLt});
    reg.Register({"cublaslt", "switchyard", "FusedMatMul", variant, SupportsLt, PrepareLt, CreateLt});
  }
}

}  // namespace switchyard::cuda
