// The kernel table: which CPU implementation runs each node, as data. Conv-like ops
// follow the route's kernel.conv, GEMM-like ops kernel.gemm; every other op takes the
// first provider in kDefaultProviderOrder that supports it. A requested implementation
// that cannot run a node falls back to the automatic choice, noted in the build report.
#pragma once

#include "backends/cpu/op_impl.h"
#include "passes/pass.h"

namespace switchyard {

// Picks the implementation for `node`; ctx.variant is set to the chosen variant.
Result<const CpuOpImpl*> ChooseCpuImpl(const Node& node, KernelBuildContext& ctx,
                                       BuildReport& report);

}  // namespace switchyard
