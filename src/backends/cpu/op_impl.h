// CPU kernel implementations as data: one CpuOpImpl per (provider, op, variant), with a
// build-time half (Supports, Prepare: deterministic parameters and pre-packed constants)
// and a load-time half (Create: a Kernel from what Prepare stored). The builder picks an
// implementation per node from the kernel table (kernel_table.h) and the route; the
// engine file stores the provider, variant, params and packed constants; the runtime
// calls Create. Registration is static (SY_REGISTER_CPU_IMPLS), lookups are read-only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "build/target.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "route/route.h"
#include "runtime/kernel.h"
#include "switchyard/status.h"

namespace switchyard {

// What an implementation may look at when deciding and preparing, for one node.
struct KernelBuildContext {
  const Graph& graph;
  const Target& target;
  const Route& route;
  const RouteSpace& space;
  std::string precision = "fp32";  // effective precision of this node (scoped overrides applied)
  std::string quant_weights = "none";  // "none" | "int8"
  std::string layout = "nchw";     // layout.activations of the route
  std::string variant;             // requested variant ("" = the implementation's default)
  int threads = 1;
  // Static input shapes (-1 where still dynamic) and dtypes, per node input.
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<DataType> input_dtypes;
  std::vector<const Tensor*> constants;  // constant value per input, or nullptr
  // The layout each input is stored in when this node runs ("" plain; the producer's
  // choice), so that layout-following kernels can run on it without a reorder.
  std::vector<std::string> input_layouts;
};

// What Prepare stores for one step. Everything must be a deterministic function of the
// node, the route and the target (no timing, no pointers, no unordered iteration).
struct StepSpec {
  nlohmann::json params = nlohmann::json::object();
  // Constants owned by the step (e.g. weights reordered for the chosen kernel). The
  // runtime hands them to Create in this order.
  std::vector<Tensor> packed;
  // Inputs whose constant value the packed tensors supersede: the engine does not store
  // those constants for this step (the input slot is then nullptr at run time).
  std::vector<int> consumed_inputs;
};

// What Create receives at load time.
struct StepView {
  const Node& node;                  // op_type, domain, name and attributes as built
  const nlohmann::json& params;
  std::vector<const Tensor*> packed;
  std::vector<std::vector<int64_t>> input_shapes;   // as at build time (-1 = dynamic)
  std::vector<std::vector<int64_t>> output_shapes;  // as at build time (-1 = dynamic)
  std::vector<DataType> input_dtypes, output_dtypes;
  std::vector<std::string> input_layouts, output_layouts;  // "" = plain
};

struct CpuOpImpl {
  std::string provider;  // "native" | "onednn" | "openblas"
  std::string domain;    // "" = ai.onnx, "switchyard" = internal fused ops
  std::string op_type;
  std::string variant;   // e.g. "direct", "winograd", "im2col_gemm"; "" = default
  std::function<bool(const Node&, const KernelBuildContext&)> supports;
  std::function<Status(const Node&, const KernelBuildContext&, StepSpec&)> prepare;
  std::function<Result<std::unique_ptr<Kernel>>(const StepView&)> create;
};

// Shape rules several CPU kernels share (checked in `supports`, so that a node the kernel
// would reject at run time is never given to it).
// A FusedConv residual (input 3) with the output's rank, batch and channel count (no
// broadcast residual).
bool ResidualHasOutputShape(const KernelBuildContext& ctx);
// A FusedConv input scale (input 4, fuse.conv_scale) of shape [1 or N, C, 1, 1] for an
// X of rank 4 [N, C, H, W], float32.
bool InputScaleFits(const KernelBuildContext& ctx);
// A FusedConv with a second output (fuse.conv_pool: the channel means of Y), which only
// oneDNN's convolution kernel writes.
inline bool HasPooledOutput(const Node& node) {
  return node.domain == "switchyard" && node.op_type == "FusedConv" && node.outputs.size() > 1 &&
         node.outputs[1] != kNoValue;
}
// One thread for a step whose work (in the kernel's unit: multiply-adds, elements) is under
// two threads' worth of `per_thread`: params "threads" = 1 (the session runs the step, and
// creates its primitives, on one; see LoadedEngine::step_threads). Never another count
// between 1 and the route's (libgomp would recreate its pool's threads around it). A work
// of 0 or less (dynamic shapes) changes nothing.
void LimitThreadsToWork(int64_t work, int64_t per_thread, const KernelBuildContext& ctx, StepSpec& spec);
// A FusedMatMul bias (input `index`) with exactly N elements (N from B and trans_b).
bool BiasHasNElements(const Node& node, const KernelBuildContext& ctx, size_t index);

class CpuImplRegistry {
 public:
  static CpuImplRegistry& Global();
  void Register(CpuOpImpl impl);
  const CpuOpImpl* Find(const std::string& provider, const std::string& domain,
                        const std::string& op_type, const std::string& variant = "") const;
  std::vector<const CpuOpImpl*> ForOp(const std::string& domain, const std::string& op_type) const;
  // Marks an implementation runnable only where `available` says so (its library has no
  // kernel for some instruction sets); unmarked implementations are always available.
  void SetAvailability(const CpuOpImpl& impl, std::function<bool()> available);
  // False when this machine cannot run `impl` at all: tests report it as skipped, not
  // as untested.
  bool Available(const CpuOpImpl& impl) const;

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::vector<CpuOpImpl> impls_;
  std::map<Key, std::function<bool()>> availability_;
};

struct CpuImplRegistrar {
  explicit CpuImplRegistrar(void (*fn)(CpuImplRegistry&)) { fn(CpuImplRegistry::Global()); }
};
#define SY_REGISTER_CPU_IMPLS(family)                                              \
  static void SyRegisterCpu##family(::switchyard::CpuImplRegistry& reg);            \
  static ::switchyard::CpuImplRegistrar sy_cpu_registrar_##family(&SyRegisterCpu##family); \
  static void SyRegisterCpu##family(::switchyard::CpuImplRegistry& reg)

}  // namespace switchyard
