#include "build/kernel_table.h"

#include <map>
#include <utility>
#include <vector>

#include "reference/op_registry.h"

namespace switchyard {
namespace {

using Choice = std::pair<const char*, const char*>;  // provider, variant
using Choices = std::vector<Choice>;                 // tried in order

// knob value -> implementations, for the ops each knob governs. winograd: Switchyard's
// own F(4x4,3x3) on nhwc where a layer has 16 tiles of 4x4, its own F(2x2,3x3) where only
// 2x2 tiles reach 16 (conv_winograd.cc), oneDNN's elsewhere. auto:
// Switchyard's own 1x1 kernel for nhwc 1x1 layers with a residual and many pixels, where
// oneDNN's sum post-op is slow (conv_1x1.cc), its own tap kernel for strided layers with
// large weights (conv_taps.cc; both on AMD CPUs with AVX-512 only), the tap kernel's AVX2
// tile for every layer with more than one tap on AMD CPUs with AVX2 and no AVX-512
// (conv_taps.cc), on Intel CPUs with AVX-512 its own F(2x2,3x3) Winograd for stride-1 3x3
// layers with 64 or more input channels (conv_winograd.cc), its own 1x1 kernel for 1x1
// layers with a SiLU after them and, without AMX, for 1x1 layers with few pixels and large
// weights (conv_1x1.cc) and its stem kernel for a first layer over the plain image
// (conv_stem.cc), oneDNN's choice elsewhere.
const std::map<std::string, Choices> kConvChoices = {
    {"auto", {{"native", "nchw_stem_auto"}, {"native", "nhwc_1x1_residual"}, {"native", "nhwc_1x1_small"},
              {"native", "nhwc_1x1_silu"}, {"native", "nhwc_taps_strided"},
              {"native", "nhwc_taps_avx2"},
              {"native", "winograd_f23_auto"}, {"onednn", ""}}},
    {"onednn", {{"onednn", ""}}},
    {"direct", {{"onednn", "direct"}}},
    {"winograd", {{"native", "winograd_f43"}, {"native", "winograd_f23"}, {"native", "winograd_f43_avx2"},
                  {"native", "winograd_f23_avx2"}, {"onednn", "winograd"}}},
    {"im2col_gemm", {{"openblas", "im2col_gemm"}}},
    {"native", {{"native", "nchw_stem"}, {"native", "nhwc_1x1"}, {"native", "nhwc_taps"}, {"native", "nhwc_rows"}}},
};
const std::map<std::string, Choices> kGemmChoices = {
    {"auto", {{"onednn", ""}}}, {"onednn", {{"onednn", ""}}},
    {"openblas", {{"openblas", ""}}}, {"native", {{"native", ""}}},
};
// CUDA: the knob value is the rank in the library's heuristic list (resolved at load).
const std::map<std::string, Choices> kCudaConvChoices = {
    {"auto", {{"cudnn", ""}}}, {"rank1", {{"cudnn", "rank1"}}},
    {"rank2", {{"cudnn", "rank2"}}}, {"rank3", {{"cudnn", "rank3"}}},
};
const std::map<std::string, Choices> kCudaGemmChoices = {
    {"auto", {{"cublaslt", ""}}}, {"rank1", {{"cublaslt", "rank1"}}},
    {"rank2", {{"cublaslt", "rank2"}}}, {"rank3", {{"cublaslt", "rank3"}}},
};
struct KnobRule {
  const char* target;
  const char* domain;
  const char* op_type;
  const char* knob;
  const std::map<std::string, Choices>* choices;
};
const KnobRule kKnobRules[] = {
    {"cpu", "", "Conv", "kernel.conv", &kConvChoices},
    {"cpu", "switchyard", "FusedConv", "kernel.conv", &kConvChoices},
    {"cpu", "", "MatMul", "kernel.gemm", &kGemmChoices},
    {"cpu", "", "Gemm", "kernel.gemm", &kGemmChoices},
    {"cpu", "switchyard", "FusedMatMul", "kernel.gemm", &kGemmChoices},
    {"cuda", "", "Conv", "kernel.conv", &kCudaConvChoices},
    {"cuda", "switchyard", "FusedConv", "kernel.conv", &kCudaConvChoices},
    {"cuda", "", "MatMul", "kernel.gemm", &kCudaGemmChoices},
    {"cuda", "", "Gemm", "kernel.gemm", &kCudaGemmChoices},
    {"cuda", "switchyard", "FusedMatMul", "kernel.gemm", &kCudaGemmChoices},
};
// Implementations tried before the generic provider order for their op, where one
// provider runs a case much faster than the first that accepts it. Each one's Supports
// accepts only that case.
struct Preferred {
  const char* target;
  const char* domain;
  const char* op_type;
  Choice impl;
};
const Preferred kPreferred[] = {
    // Non-overlapping ConvTranspose on nhwc: one GEMM per output row (oneDNN 2.6 runs
    // these with its AVX2 JIT at small channel counts; DBNet's head 15.9 -> see
    // docs/benchmarks.md).
    {"cpu", "", "ConvTranspose", {"native", "nhwc_gemm"}},
    // 2-D pooling whose input arrives nhwc, on CPUs without AVX-512 (oneDNN 2.6's jit:avx2
    // pooling on nhwc: ResNet-50's MaxPool 0.52 ms on 2 Zen 3 cores, ONNX Runtime's 0.12;
    // pool.cc).
    {"cpu", "", "MaxPool", {"native", "nhwc_preferred"}},
    {"cpu", "", "AveragePool", {"native", "nhwc_preferred"}},
};
const std::vector<std::string> kCpuProviders = {"onednn", "native", "openblas"};
const std::vector<std::string> kCudaProviders = {"cudnn", "cublaslt", "cuda"};

const CpuOpImpl* TryImpl(const Node& node, KernelBuildContext& ctx, const std::string& provider,
                         const std::string& variant) {
  const CpuOpImpl* impl =
      CpuImplRegistry::Global().Find(provider, node.domain, node.op_type, variant);
  if (!impl) return nullptr;
  ctx.variant = variant;
  return impl->supports(node, ctx) ? impl : nullptr;
}

}  // namespace

Result<const CpuOpImpl*> ChooseCpuImpl(const Node& node, KernelBuildContext& ctx,
                                       BuildReport& report) {
  for (const KnobRule& rule : kKnobRules) {
    if (ctx.target.name != rule.target) continue;
    if (node.domain != rule.domain || node.op_type != rule.op_type) continue;
    const std::string value = ctx.space.Find(rule.knob) ? ctx.space.Value(ctx.route, rule.knob) : "auto";
    auto it = rule.choices->find(value);
    if (it != rule.choices->end()) {
      for (const Choice& c : it->second) {
        if (const CpuOpImpl* impl = TryImpl(node, ctx, c.first, c.second)) return impl;
      }
      if (value != "auto") {
        report.notes.push_back(std::string(rule.knob) + "=" + value + " cannot run " +
                               NodeLabel(node) + "; it uses the automatic choice");
      }
    }
    for (const Choice& def : rule.choices->at("auto")) {
      if (const CpuOpImpl* impl = TryImpl(node, ctx, def.first, def.second)) return impl;
    }
    break;  // then the generic order below
  }
  for (const Preferred& p : kPreferred) {
    if (ctx.target.name != p.target || node.domain != p.domain || node.op_type != p.op_type) continue;
    if (const CpuOpImpl* impl = TryImpl(node, ctx, p.impl.first, p.impl.second)) return impl;
  }
  for (const std::string& provider : ProvidersFor(ctx.target)) {
    for (const CpuOpImpl* impl : CpuImplRegistry::Global().ForOp(node.domain, node.op_type)) {
      if (impl->provider != provider) continue;
      ctx.variant = impl->variant;
      if (impl->supports(node, ctx)) return impl;
    }
  }
  std::string types;
  for (size_t i = 0; i < ctx.input_dtypes.size(); ++i) {
    types += (i ? ", " : "") + std::string(DataTypeName(ctx.input_dtypes[i]));
  }
  return Status::Unsupported(NodeLabel(node) + ": no " + ctx.target.name +
                             " kernel supports this node (inputs: " + types + ")");
}

const std::vector<std::string>& ProvidersFor(const Target& target) {
  return target.IsCuda() ? kCudaProviders : kCpuProviders;
}

}  // namespace switchyard
