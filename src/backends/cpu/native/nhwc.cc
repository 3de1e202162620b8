#include "backends/cpu/native/nhwc.h"

#include <string>

namespace switchyard::native {

bool InputIsNhwc(const KernelBuildContext& ctx) {
  return !ctx.input_layouts.empty() && ctx.input_layouts[0] == "nhwc" && !ctx.input_shapes.empty() &&
         ctx.input_shapes[0].size() == 4;
}

void DeclareNhwc(const Node& node, StepSpec& spec, const std::vector<size_t>& indices) {
  std::vector<std::string> in(node.inputs.size(), "");
  for (size_t i : indices) {
    if (i < in.size()) in[i] = "nhwc";
  }
  spec.params["input_layouts"] = in;
  spec.params["output_layouts"] = {"nhwc"};
}

bool RunsNhwc(const StepView& v) { return !v.output_layouts.empty() && v.output_layouts[0] == "nhwc"; }

std::vector<int64_t> NhwcOrder(const std::vector<int64_t>& s) { return {s[0], s[2], s[3], s[1]}; }

size_t NhwcAxis(size_t a) {
  static constexpr size_t kPos[4] = {0, 3, 1, 2};
  return kPos[a];
}

}  // namespace switchyard::native
