// CUDA own-kernel implementations (provider "cuda") of ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare and ReduceLogSum over
// kernels/reduce.cu. Axes come from the attribute (before the op's axes-input opset) or
// from a constant input 1, which Prepare reads and consumes; a run-time axes tensor is not
// supported (shapes are static anyway). keepdims only changes the output shape, which the
// build fixed. noop_with_empty_axes copies X.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/common.h"
#include "backends/cuda/nk_dtype.h"
#include "backends/cuda/kernels/reduce.h"

namespace switchyard::cuda {
namespace {

using Shape = std::vector<int64_t>;


size_t ElemSize(nk::KDType t) { return t == nk::KDType::kF32 ? 4 : 2; }


// Which axes a node reduces: `noop` for an identity; `error` set when the axes cannot be
// resolved at build time.
struct AxesPlan {
  bool ok = false;
  bool noop = false;
  std::vector<bool> reduced;
};

AxesPlan Plan(const Node& node, bool axes_input, const Tensor* axes_const, int64_t rank) {
  AxesPlan p;
  std::vector<int64_t> axes;
  if (axes_input) {
    if (node.HasInput(1)) {
      if (!axes_const) return p;  // run-time axes: unsupported
      axes = axes_const->ToInt64Vector();
    }
  } else {
    axes = node.GetInts("axes");
  }
  p.reduced.assign(static_cast<size_t>(rank), axes.empty());
  if (axes.empty() && axes_input && node.GetInt("noop_with_empty_axes", 0) != 0) {
    p.noop = true;
    p.reduced.assign(static_cast<size_t>(rank), false);
  }
  for (int64_t a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return p;
    p.reduced[static_cast<size_t>(a)] = true;
  }
  p.ok = true;
  return p;
}

void RegisterReduce(CpuImplRegistry& reg, const std::string& op, nk::ReduceOp kind,
                    int axes_input_since) {
  CpuOpImpl impl;
  impl.provider = "cuda";
  impl.op_type = op;
  impl.supports = [axes_input_since](const Node& n, const KernelBuildContext& ctx) {
    if (!IsCudaBuild(ctx) || ctx.input_dtypes.empty() || ctx.input_shapes.empty()) return false;
    if (!IsCudaFloat(ctx.input_dtypes[0]) || !IsStaticShape(ctx.input_shapes[0])) return false;
    const int64_t rank = static_cast<int64_t>(ctx.input_shapes[0].size());
    if (rank > nk::kMaxReduceRank) return false;
    const bool axes_input = n.since_version >= axes_input_since;
    const Tensor* axes = ctx.constants.size() > 1 ? ctx.constants[1] : nullptr;
    return Plan(n, axes_input, axes, rank).ok;
  };
  impl.prepare = [axes_input_since](const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
    const bool axes_input = n.since_version >= axes_input_since;
    const Tensor* axes = ctx.constants.size() > 1 ? ctx.constants[1] : nullptr;
    const AxesPlan p = Plan(n, axes_input, axes, static_cast<int64_t>(ctx.input_shapes[0].size()));
    if (!p.ok) return Status::Internal("cuda " + n.op_type + ": axes not known at build time");
    spec.params["noop"] = p.noop;
    std::vector<int> red;
    for (bool b : p.reduced) red.push_back(b ? 1 : 0);
    spec.params["reduced"] = red;
    if (axes_input && n.HasInput(1)) spec.consumed_inputs = {1};
    return Status::Ok();
  };
  impl.create = [kind](const StepView& v) -> Result<std::unique_ptr<Kernel>> {
    const auto t = KType(v.input_dtypes[0]);
    const Shape dims = v.input_shapes[0];
    if (!t || !v.params.contains("reduced") || dims.size() > nk::kMaxReduceRank) {
      return Status::Internal("cuda " + v.node.op_type + ": bad step parameters");
    }
    const bool noop = v.params.value("noop", false);
    const std::vector<int> red_i = v.params["reduced"].get<std::vector<int>>();
    if (red_i.size() != dims.size()) return Status::Internal("cuda " + v.node.op_type + ": rank mismatch");
    std::vector<bool> reduced(red_i.begin(), red_i.end());
    int64_t numel = 1;
    for (int64_t d : dims) numel *= d;
    const nk::KDType kt = *t;
    return std::unique_ptr<Kernel>(std::make_unique<FnCudaKernel>(
        v, [=](const Exec& ex, const KernelIO& io) -> Status {
          if (noop) {
            if (numel) {
              SY_CUDA_CHECK(cudaMemcpyAsync(io.outputs[0]->data, io.inputs[0]->data,
                                            static_cast<size_t>(numel) * ElemSize(kt),
                                            cudaMemcpyDeviceToDevice, ex.stream));
            }
            return Status::Ok();
          }
          bool r[nk::kMaxReduceRank] = {};
          for (size_t d = 0; d < reduced.size(); ++d) r[d] = reduced[d];
          nk::LaunchReduce(kt, kind, io.inputs[0]->data, io.outputs[0]->data, dims.data(), r,
                           static_cast<int>(dims.size()), ex.stream);
          return CheckLaunch("Reduce");
        }));
  };
  reg.Register(std::move(impl));
}

}  // namespace
}  // namespace switchyard::cuda

namespace switchyard {
SY_REGISTER_CUDA_IMPLS(Reduce) {
  using cuda::nk::ReduceOp;
  cuda::RegisterReduce(reg, "ReduceSum", ReduceOp::kSum, 13);
  cuda::RegisterReduce(reg, "ReduceMean", ReduceOp::kMean, 18);
  cuda::RegisterReduce(reg, "ReduceMax", ReduceOp::kMax, 18);
  cuda::RegisterReduce(reg, "ReduceMin", ReduceOp::kMin, 18);
  cuda::RegisterReduce(reg, "ReduceProd", ReduceOp::kProd, 18);
  cuda::RegisterReduce(reg, "ReduceL1", ReduceOp::kL1, 18);
  cuda::RegisterReduce(reg, "ReduceL2", ReduceOp::kL2, 18);
  cuda::RegisterReduce(reg, "ReduceSumSquare", ReduceOp::kSumSquare, 18);
  cuda::RegisterReduce(reg, "ReduceLogSum", ReduceOp::kLogSum, 18);
}
}  // namespace switchyard
