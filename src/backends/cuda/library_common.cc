#include "backends/cuda/library_common.h"

#include "backends/cuda/common.h"
#include "reference/ops/common.h"

namespace switchyard::cuda {

using kernels::EpiAct;
using kernels::EpiDtype;

bool ActToEpi(ops::Act a, EpiAct* out) {
  switch (a) {
    case ops::Act::kNone: *out = EpiAct::kNone; return true;
    case ops::Act::kRelu: *out = EpiAct::kRelu; return true;
    case ops::Act::kLeakyRelu: *out = EpiAct::kLeakyRelu; return true;
    case ops::Act::kClip: *out = EpiAct::kClip; return true;
    case ops::Act::kSigmoid: *out = EpiAct::kSigmoid; return true;
    case ops::Act::kHardSigmoid: *out = EpiAct::kHardSigmoid; return true;
    case ops::Act::kHardSwish: *out = EpiAct::kHardSwish; return true;
    case ops::Act::kTanh: *out = EpiAct::kTanh; return true;
    case ops::Act::kSiLU: *out = EpiAct::kSiLU; return true;
    case ops::Act::kGelu: *out = EpiAct::kGelu; return true;
    case ops::Act::kGeluTanh: *out = EpiAct::kGeluTanh; return true;
    default: return false;
  }
}

EpiDtype ToEpiDtype(DataType t) {
  return t == DataType::kFloat16 ? EpiDtype::kF16 : t == DataType::kBfloat16 ? EpiDtype::kBf16 : EpiDtype::kF32;
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int RankOf(const std::string& variant) {
  if (variant == "rank1") return 1;
  if (variant == "rank2") return 2;
  if (variant == "rank3") return 3;
  return 0;
}

Tensor ConvertConstant(const Tensor& t, DataType dt, double scale) {
  if (t.dtype() == dt && scale == 1.0) return t;
  Tensor out(dt, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) out.SetDouble(i, scale * t.GetDouble(i));
  return out;
}

bool FillBroadcast(const std::vector<int64_t>& z, const std::vector<int64_t>& out,
                   kernels::EpilogueParams* p) {
  const size_t r = out.size();
  if (z.size() > r || r > static_cast<size_t>(kernels::kEpiMaxRank) || r == 0) return false;
  std::vector<int64_t> zs(r, 1);
  for (size_t i = 0; i < z.size(); ++i) zs[r - z.size() + i] = z[i];
  int64_t acc = 1;
  for (size_t i = r; i-- > 0;) {
    if (zs[i] != 1 && zs[i] != out[i]) return false;
    p->out_dims[i] = out[i];
    p->z_strides[i] = zs[i] == 1 ? 0 : acc;
    acc *= zs[i];
  }
  p->rank = static_cast<int>(r);
  return true;
}

Result<DataType> CommonFloatInputs(const Node& node, const std::vector<std::vector<int64_t>>& shapes,
                                   const std::vector<DataType>& dtypes, const std::string& provider,
                                   const std::string& required) {
  auto fail = [&](const std::string& m) { return ops::NodeUnsupported(node, provider + ": " + m); };
  if (shapes.size() < 2 || dtypes.size() < 2 || !node.HasInput(0) || !node.HasInput(1)) {
    return fail(required + " are required");
  }
  const DataType dt = dtypes[0];
  if (!IsCudaFloat(dt)) return fail("dtype must be float32, float16 or bfloat16");
  for (size_t i = 0; i < node.inputs.size() && i < dtypes.size(); ++i) {
    if (node.HasInput(i) && dtypes[i] != dt) return fail("all inputs must share one dtype");
  }
  for (size_t i = 0; i < node.inputs.size() && i < shapes.size(); ++i) {
    if (node.HasInput(i) && !IsStaticShape(shapes[i])) return fail("dynamic shapes");
  }
  return dt;
}

const Tensor* ConstantInput(const KernelBuildContext& ctx, size_t i) {
  return i < ctx.constants.size() ? ctx.constants[i] : nullptr;
}

}  // namespace switchyard::cuda
