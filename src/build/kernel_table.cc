#include "build/kernel_table.h"

#include <map>
#include <utility>

#include "reference/op_registry.h"

namespace switchyard {
namespace {

using Choice = std::pair<const char*, const char*>;  // provider, variant

// knob value -> implementation, for the ops each knob governs.
const std::map<std::string, Choice> kConvChoices = {
    {"auto", {"onednn", ""}},    {"onednn", {"onednn", ""}},
    {"direct", {"onednn", "direct"}}, {"winograd", {"onednn", "winograd"}},
    {"im2col_gemm", {"openblas", "im2col_gemm"}},
};
const std::map<std::string, Choice> kGemmChoices = {
    {"auto", {"onednn", ""}}, {"onednn", {"onednn", ""}},
    {"openblas", {"openblas", ""}}, {"native", {"native", ""}},
};
struct KnobRule {
  const char* domain;
  const char* op_type;
  const char* knob;
  const std::map<std::string, Choice>* choices;
};
const KnobRule kKnobRules[] = {
    {"", "Conv", "kernel.conv", &kConvChoices},
    {"switchyard", "FusedConv", "kernel.conv", &kConvChoices},
    {"", "MatMul", "kernel.gemm", &kGemmChoices},
    {"", "Gemm", "kernel.gemm", &kGemmChoices},
    {"switchyard", "FusedMatMul", "kernel.gemm", &kGemmChoices},
};
const char* const kDefaultProviderOrder[] = {"onednn", "native", "openblas"};

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
    if (node.domain != rule.domain || node.op_type != rule.op_type) continue;
    const std::string value = ctx.space.Find(rule.knob) ? ctx.space.Value(ctx.route, rule.knob) : "auto";
    auto it = rule.choices->find(value);
    if (it != rule.choices->end()) {
      if (const CpuOpImpl* impl = TryImpl(node, ctx, it->second.first, it->second.second)) return impl;
      if (value != "auto") {
        report.notes.push_back(std::string(rule.knob) + "=" + value + " cannot run " +
                               NodeLabel(node) + "; it uses the automatic choice");
      }
    }
    const Choice& def = rule.choices->at("auto");
    if (const CpuOpImpl* impl = TryImpl(node, ctx, def.first, def.second)) return impl;
    break;  // then the generic order below
  }
  for (const char* provider : kDefaultProviderOrder) {
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
  return Status::Unsupported(NodeLabel(node) + ": no CPU kernel supports this node (inputs: " +
                             types + ")");
}

}  // namespace switchyard
