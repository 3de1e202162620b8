// Layout-following native kernels. On a route whose activations are nhwc, a native kernel
// for an op that commutes with a permutation of the axes (unary elementwise, Resize,
// Concat) runs on its producer's nhwc bytes as on a plain [N,H,W,C] tensor, instead of
// the builder reordering to plain and back around it (DBNet's FPN: 15 reorders, 12% of
// its time). The kernels keep their plain code; only shapes and axes are permuted.
#pragma once

#include <cstddef>
#include <vector>

#include "backends/cpu/op_impl.h"

namespace switchyard::native {

// True when input 0 of the node arrives 4-D in nhwc (the producer's layout), so the step
// may run in nhwc.
bool InputIsNhwc(const KernelBuildContext& ctx);
// Declares the inputs at `indices` and output 0 nhwc in spec.params (other inputs plain).
void DeclareNhwc(const Node& node, StepSpec& spec, const std::vector<size_t>& indices);
// At load: true when the step was built to run on nhwc bytes.
bool RunsNhwc(const StepView& v);
// An NCHW-ordered 4-D shape in the order of its nhwc bytes ({n, h, w, c}).
std::vector<int64_t> NhwcOrder(const std::vector<int64_t>& nchw);
// The position in nhwc order of NCHW axis `a` of a 4-D tensor (0->0, 1->3, 2->1, 3->2).
size_t NhwcAxis(size_t a);

}  // namespace switchyard::native
