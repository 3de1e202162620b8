// switchyard.Reorder on the cuda target (provider "cuda"): moves a tensor between the plain
// layout ("" or "nchw") and channels-last ("nhwc", 4-D only; shape stays logical NCHW)
// through kernels/movement.h's LaunchTranspose (NCHW -> NHWC is perm {0, 2, 3, 1}, NHWC ->
// NCHW perm {0, 3, 1, 2}; after dim merging a batched tiled last-two swap, and a plain
// device copy when C == 1 or H * W == 1). Any element size of 1, 2, 4 or 8 bytes. The
// builder inserts it where a producer's layout differs from what a consumer declared
// (layout.activations=nhwc; see layout.h).
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/common.h"
#include "backends/cuda/kernels/movement.h"
#include "backends/cuda/layout.h"

namespace switchyard::cuda {
namespace {

namespace k = kernels;

std::string Canon(const std::string& l) { return l == "nchw" ? "" : l; }

bool KnownLayout(const std::string& l, size_t rank) {
  const std::string c = Canon(l);
  return c.empty() || (c == kNhwc && rank == 4);
}

bool ElemBytesOk(DataType t) {
  if (t == DataType::kString || t == DataType::kUndefined) return false;
  const size_t es = DataTypeSize(t);
  return es == 1 || es == 2 || es == 4 || es == 8;
}

class ReorderKernel final : public CudaKernel {
 public:
  ReorderKernel(const StepView& v, int elem_bytes, bool copy, const int* perm)
      : CudaKernel(v), elem_bytes_(elem_bytes), copy_(copy) {
    const std::vector<int64_t>& s = v.input_shapes[0];
    // The input's storage order: logical for plain, [N, H, W, C] for nhwc.
    const std::vector<int64_t> stored = perm && perm[1] == 3 ? NhwcDims(s) : s;
    xs_.rank = static_cast<int>(stored.size());
    for (size_t i = 0; i < stored.size(); ++i) xs_.d[i] = stored[i];
    for (int i = 0; i < 4; ++i) perm_[i] = perm ? perm[i] : i;
    bytes_ = static_cast<size_t>(elem_bytes);
    for (int64_t d : s) bytes_ *= static_cast<size_t>(d);
  }

  Status Launch(const Exec& ex, const KernelIO& io) const override {
    if (io.inputs.empty() || !io.inputs[0] || io.outputs.empty() || !io.outputs[0]) {
      return Status::Internal("cuda Reorder: input or output missing");
    }
    if (bytes_ == 0) return Status::Ok();
    if (copy_) {
      SY_CUDA_CHECK(cudaMemcpyAsync(io.outputs[0]->data, io.inputs[0]->data, bytes_, cudaMemcpyDeviceToDevice,
                                    ex.stream));
      return Status::Ok();
    }
    const cudaError_t e =
        k::LaunchTranspose(elem_bytes_, io.inputs[0]->data, xs_, perm_, io.outputs[0]->data, ex.stream);
    if (e != cudaSuccess) return CudaError(e, "Reorder (LaunchTranspose)");
    return CheckLaunch("Reorder");
  }

 private:
  const int elem_bytes_;
  const bool copy_;
  k::Dims xs_;
  int perm_[4] = {0, 1, 2, 3};
  size_t bytes_ = 0;
};

bool SupportsReorder(const Node& n, const KernelBuildContext& ctx) {
  if (!IsCudaBuild(ctx) || ctx.input_dtypes.empty() || ctx.input_shapes.empty()) return false;
  if (!ElemBytesOk(ctx.input_dtypes[0])) return false;
  const std::vector<int64_t>& s = ctx.input_shapes[0];
  for (int64_t d : s) {
    if (d < 0) return false;
  }
  return KnownLayout(n.GetString("from", ""), s.size()) && KnownLayout(n.GetString("to", ""), s.size());
}

Status PrepareReorder(const Node& n, const KernelBuildContext& ctx, StepSpec& spec) {
  if (!SupportsReorder(n, ctx)) {
    return Status::Unsupported("cuda Reorder: layouts '" + n.GetString("from", "") + "' -> '" +
                               n.GetString("to", "") + "' of a " + std::to_string(ctx.input_shapes[0].size()) +
                               "-D " + DataTypeName(ctx.input_dtypes[0]) + " tensor");
  }
  spec.params["input_layouts"] = {n.GetString("from", "")};
  spec.params["output_layouts"] = {n.GetString("to", "")};
  int64_t bytes = static_cast<int64_t>(DataTypeSize(ctx.input_dtypes[0]));
  for (int64_t d : ctx.input_shapes[0]) bytes *= d;
  spec.params["output_bytes"] = {bytes};  // nhwc needs exactly the plain size
  return Status::Ok();
}

Result<std::unique_ptr<Kernel>> CreateReorder(const StepView& v) {
  if (v.input_dtypes.empty() || v.input_shapes.empty() || !ElemBytesOk(v.input_dtypes[0])) {
    return Status::Internal("cuda Reorder: unsupported input");
  }
  const std::string from = Canon(v.node.GetString("from", "")), to = Canon(v.node.GetString("to", ""));
  const size_t rank = v.input_shapes[0].size();
  if (!KnownLayout(from, rank) || !KnownLayout(to, rank)) {
    return Status::Internal("cuda Reorder: layouts '" + from + "' -> '" + to + "'");
  }
  const int es = static_cast<int>(DataTypeSize(v.input_dtypes[0]));
  static const int kToNhwc[4] = {0, 2, 3, 1};
  static const int kToPlain[4] = {0, 3, 1, 2};
  const bool copy = from == to || PlainIsNhwc(v.input_shapes[0]);
  const int* perm = copy ? nullptr : (to == kNhwc ? kToNhwc : kToPlain);
  return std::unique_ptr<Kernel>(std::make_unique<ReorderKernel>(v, es, copy, perm));
}

}  // namespace
}  // namespace switchyard::cuda

namespace switchyard {
SY_REGISTER_CUDA_IMPLS(Layout) {
  reg.Register({"cuda", "switchyard", "Reorder", "", cuda::SupportsReorder, cuda::PrepareReorder,
                cuda::CreateReorder});
}
}  // namespace switchyard
