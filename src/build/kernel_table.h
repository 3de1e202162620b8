// The kernel table: which implementation runs each node on a target, as data. Conv-like
// ops follow the route's kernel.conv, GEMM-like ops kernel.gemm; every other op takes the
// first provider of the target (ProvidersFor: onednn, native, openblas on cpu; cudnn,
// cublaslt, cuda on cuda) that supports it. A requested implementation
// that cannot run a node falls back to the automatic choice, noted in the build report.
#pragma once

#include "backends/cpu/op_impl.h"
#include "passes/pass.h"

namespace switchyard {

// Picks the implementation for `node`; ctx.variant is set to the chosen variant.
Result<const CpuOpImpl*> ChooseCpuImpl(const Node& node, KernelBuildContext& ctx,
                                       BuildReport& report);
// The target's providers in preference order.
const std::vector<std::string>& ProvidersFor(const Target& target);

}  // namespace switchyard
