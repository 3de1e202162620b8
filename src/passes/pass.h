// Graph passes: one rewrite per file, each switched by its knob (nullptr knob = always
// on). The pipeline runs them in a fixed order; after each, types are re-inferred and the
// IR verifier runs. Passes count what they changed in the BuildReport
// ("fuse.conv_act: 17 fusions"). Passes never time anything.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "build/target.h"
#include "ir/graph.h"
#include "switchyard/status.h"

namespace switchyard {

// Domain of Switchyard's internal fused ops (FusedConv, FusedMatMul, ...).
inline constexpr const char* kSwitchyardDomain = "switchyard";

struct BuildReport {
  std::map<std::string, int> fired;  // knob (or pass) -> rewrites
  std::map<std::string, std::map<std::string, int>> kernels;  // op class -> provider -> nodes
  std::vector<std::string> notes;    // e.g. "kernel.conv=winograd: 3 of 20 convs unsupported"
  int64_t arena_bytes = 0;
  int64_t constant_bytes = 0;
  int steps = 0;
  int views = 0;  // view steps whose output shares its input's arena bytes (no copy)
  int inplace = 0;  // steps that write their output over an input dying there (no copy)
  double build_seconds = 0;  // measured by the CLI around Build, not inside the engine
};

struct PassContext {
  // Whether a knob is on for this build ("fuse.conv_act" -> true). Knobs absent from the
  // route space count as off.
  std::function<bool(const std::string& knob)> enabled;
  const Target& target;
  BuildReport& report;
  // A knob's effective value ("quant.weights" -> "none"); "" when absent. May be unset.
  std::function<std::string(const std::string& knob)> value = nullptr;
};

// fuse.conv_scale's shape rule, shared by the pass and its route detector: `x` (the Mul's
// full operand, of the Mul's output type `out`) is float32 [N, C, H, W] with static C, H,
// W; `s` is float32 [1 or N, C, 1, 1]; the conv's weights `w` are [M, C, KH, KW]; and
// scaling the weights per call is clearly less work than the Mul: 2 * M * KH * KW <= H * W
// (the kernel's scaling reads a channel table beside the weights: on EfficientNet-B0's
// 14x14 blocks, M * KH * KW = 80..112 against H * W = 196, it cost what the Mul did).
// A scale per image of a fixed batch of 2 or more makes the kernel call the convolution
// image by image, each call with its own scaled weights, where the Mul's conv is one call
// for the batch: that pays only for images of kMinScaledImage values or more (C * H * W).
// EfficientNet-B0 b8 bf16 on 2 Zen 5 cores, fused against fuse.conv_scale=off (the Mul plus
// the conv, `bench/steps_ab.py`, 3 alternations): the 14x14 projections (94K values per
// image) 0.285-0.454 ms against 0.13-0.20, 28x28 (113K-188K) 0.23-0.36 against 0.23-0.28,
// 56x56 (301K-451K) 0.29-0.43 against 0.69-0.86; on the 16-core Xeon at 16 threads the
// fused 14x14 ones took 0.36-0.53 ms, more than the fp32 engine's.
constexpr int64_t kMinScaledImage = int64_t{1} << 18;
inline bool ConvScaleFits(const TensorType& out, const TensorType& x, const TensorType& s,
                          const std::vector<int64_t>& w) {
  if (x.dtype != DataType::kFloat || s.dtype != DataType::kFloat || out.dtype != DataType::kFloat) return false;
  if (x.rank() != 4 || s.rank() != 4 || out.rank() != 4 || w.size() != 4) return false;
  for (size_t d = 1; d < 4; ++d) {
    if (!x.dims[d].is_static() || !out.dims[d].is_static() || x.dims[d].value != out.dims[d].value) return false;
  }
  const int64_t c = x.dims[1].value, h = x.dims[2].value, wd = x.dims[3].value;
  const auto is = [](const Dim& d, int64_t v) { return d.is_static() && d.value == v; };
  const bool same_batch = x.dims[0].is_static() ? is(s.dims[0], x.dims[0].value)
                                                : !x.dims[0].symbol.empty() && s.dims[0].symbol == x.dims[0].symbol;
  if (!is(s.dims[1], c) || !is(s.dims[2], 1) || !is(s.dims[3], 1) || !(is(s.dims[0], 1) || same_batch)) return false;
  const bool per_image_calls = !is(s.dims[0], 1) && x.dims[0].is_static() && x.dims[0].value > 1;
  if (per_image_calls && c * h * wd < kMinScaledImage) return false;
  return w[1] == c && h * wd > 1 && 2 * w[0] * w[2] * w[3] <= h * wd;
}

namespace passes {
// prune.rows's detector: whether `gather`, with constant indices `indices` (nullptr: not
// constant), reads the output of `producer` (may be nullptr), an op the pass can move a
// Gather above when shapes are static and the indices sorted and distinct (the pass
// checks the rest at build time).
bool GatherMayMoveUp(const Node& gather, const Tensor* indices, const Node* producer);
}  // namespace passes

struct Pass {
  const char* name;  // "fuse_conv_act"
  const char* knob;  // "fuse.conv_act", or nullptr when always on
  Status (*run)(Graph& graph, PassContext& ctx);
};

// All passes in pipeline order.
const std::vector<Pass>& PassPipeline();
// Runs every enabled pass; InferShapes + VerifyGraph after each. Errors name the pass.
Status RunPasses(Graph& graph, PassContext& ctx);

}  // namespace switchyard
