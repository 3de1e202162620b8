// The knob table and the incompatibility table (see knobs.h, docs/routes.md).
#include "route/knobs.h"

#include <algorithm>

namespace switchyard::route {
namespace {

using Nodes = std::optional<std::vector<std::string>>;

std::vector<std::string> OnOff(const Target&) { return {"on", "off"}; }
std::string On(const Target&) { return "on"; }

// Present when `names` is non-empty.
Nodes IfAny(std::vector<std::string> names) {
  if (names.empty()) return std::nullopt;
  return names;
}

const std::vector<std::string> kConvOps = {"Conv", "FusedConv"};
const std::vector<std::string> kGemmOps = {"MatMul", "Gemm", "FusedMatMul"};
const std::vector<std::string> kComputeOps = {"Conv", "FusedConv", "MatMul", "Gemm",
                                              "FusedMatMul"};

}  // namespace

const std::vector<KnobDef>& KnobTable() {
  static const std::vector<KnobDef> kTable = {
      // Fusions: each on|off, default on. Off exists to isolate a fusion that breaks
      // accuracy or is slower on a given model; a fused kernel is never less exact than
      // fp32 rounding of the unfused ops.
      {"fuse.conv_bn", OnOff, On,
       "Folds a BatchNormalization that is a Conv's (or ConvTranspose's) only reader into its "
       "weights and bias at build time, and likewise a Mul/Div/Add/Sub by a scalar or "
       "per-channel constant after it (paddle2onnx's affine blocks), or a Mul/Div by one in "
       "front of a Conv (an Add/Sub too where the Conv reads no padding), removing one pass "
       "over the activations each. Default on; costs nothing at run time, values change only "
       "by fp32 rounding of the folded weights.",
       [](const GraphIndex& g) { return IfAny(MatchConvBn(g)); }, "cpu,cuda"},
      {"fuse.conv_act", OnOff, On,
       "Runs the Relu/LeakyRelu/Clip/Sigmoid/HardSigmoid/HardSwish/Tanh/SiLU (x*sigmoid(x)) "
       "activation and a residual Add that follow a Conv inside the Conv kernel (FusedConv), "
       "and on CPU targets a Mul/Add by one-element constants after the activation "
       "(post_affine, oneDNN's kernel), saving a memory round trip per fused op. Default on; "
       "off only to isolate a kernel.",
       [](const GraphIndex& g) { return IfAny(MatchConvAct(g)); }, "cpu,cuda"},
      {"fuse.conv_scale", OnOff, On,
       "Folds a per-channel Mul in front of a Conv (a squeeze-excite block's x * scale read "
       "by its 1x1 projection) into the conv: the kernel multiplies the weights' input "
       "channels by the scale per call instead of reading and writing the activations once "
       "more. Only where the weights per channel are at most half the image (2*M*KH*KW <= "
       "H*W) and, with a scale per image of a fixed batch over 1 (run image by image), the "
       "image holds 2^18 values or more (C*H*W), group 1; CPU, oneDNN's convolution (other "
       "kernels fall back to it for these "
       "nodes); nothing with quant.weights=int8. Default on; fp32 rounding of the scaled "
       "weights instead of the scaled activations.",
       [](const GraphIndex& g) { return IfAny(MatchConvScale(g)); }, "cpu"},
      {"fuse.conv_pool", OnOff, On,
       "Computes a GlobalAveragePool of a convolution's SiLU output (a squeeze-excite "
       "block's pooling, EfficientNet's head) inside the convolution: its kernel adds each "
       "result of the SiLU it applies to its channel's sum as it leaves the register, "
       "instead of a pooling step reading the output again. nhwc fp32 routes (not precision=bf16, not "
       "quant.weights=int8); the convolution then runs on oneDNN's kernel. Default on; the "
       "means are summed in another order (fp32 rounding).",
       [](const GraphIndex& g) { return IfAny(MatchConvPool(g)); }, "cpu"},
      {"fuse.gemm_epilogue", OnOff, On,
       "Folds a constant bias Add, a residual Add and/or an activation after MatMul/Gemm into "
       "the GEMM epilogue (FusedMatMul; every Gemm becomes one), writing the result once. "
       "Default on; differs from the unfused ops only in fp32 rounding order.",
       [](const GraphIndex& g) { return IfAny(MatchGemmEpilogue(g)); }, "cpu,cuda"},
      {"fuse.elementwise", OnOff, On,
       "Merges chains of two or more elementwise ops into one FusedElementwise kernel that "
       "reads and writes each tensor once. Default on; same arithmetic, but a long fused "
       "chain can lose to a vectorised library op on large broadcasts.",
       [](const GraphIndex& g) { return IfAny(MatchElementwise(g)); }, "cpu,cuda"},
      {"fuse.layernorm", OnOff, On,
       "Replaces the decomposed LayerNorm (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, "
       "optional Mul/Add affine) or an ONNX LayerNormalization with one LayerNorm kernel. "
       "Default on; statistics are accumulated differently (fp32 rounding-level changes).",
       [](const GraphIndex& g) { return IfAny(MatchLayerNorm(g)); }, "cpu,cuda"},
      {"fuse.gelu", OnOff, On,
       "Replaces x*0.5*(1+Erf(x/sqrt(2))) in any association, or its tanh approximation, "
       "with one Gelu op (which a GEMM epilogue can then absorb). Default on; Erf/Tanh come "
       "from the kernel's own approximation (about 1e-7 relative).",
       [](const GraphIndex& g) { return IfAny(MatchGelu(g)); }, "cpu,cuda"},
      {"fuse.attention", OnOff, On,
       "Replaces MatMul, constant scale (on the scores or on Q), optional mask (Add, or a "
       "causal Where), Softmax, MatMul with one Attention kernel that keeps the score matrix "
       "in cache; the Transposes that split and merge heads around it become strided reads "
       "and writes of that kernel. Default on; the "
       "softmax sums in a different order (fp32 rounding-level changes).",
       [](const GraphIndex& g) { return IfAny(MatchAttention(g)); }, "cpu,cuda"},
      {"prune.rows", OnOff, On,
       "Computes only the rows a Gather of constant indices keeps (a classifier reading one "
       "token of a transformer's last layer): the Gather moves above elementwise ops, "
       "reductions and Softmax over other axes, MatMul/Gemm rows, Transpose, Reshape, Concat "
       "and Slice, as far as every reader of a value keeps the same rows. Default on; values "
       "are unchanged (a smaller GEMM may sum in another order: fp32 rounding level).",
       [](const GraphIndex& g) { return IfAny(MatchPruneRows(g)); }, "cpu,cuda"},
      {"fuse.slice", OnOff, On,
       "Merges Slices with constant ranges: disjoint contiguous slices of one tensor (packed "
       "q/k/v) become one Split, and a Slice of a Slice becomes one Slice; a Split along the "
       "last axis of a MatMul with constant weights (parts of 64 columns or more) becomes one "
       "GEMM per part, so nothing is copied. Default on; values are unchanged (a part's GEMM "
       "may sum in another order: fp32 rounding level).",
       [](const GraphIndex& g) { return IfAny(NodesOfType(g, {"Slice", "Split"})); }, "cpu,cuda"},

      {"layout.activations",
       [](const Target& t) -> std::vector<std::string> {
         if (t.IsCuda()) return {"nchw", "nhwc"};
         return {"nchw", "nhwc", "blocked"};
       },
       [](const Target& t) -> std::string { return t.IsCuda() ? "nchw" : "nhwc"; },
       "Memory layout of convolution activations: nchw (plain), nhwc (channels last) or "
       "blocked (oneDNN nChw16c/8c, channels padded to the vector width; CPU only). CPU "
       "default nhwc: oneDNN's AVX-512 convolutions, pooling and binary ops all run "
       "channels-last, so few reorders are needed (EfficientNet-B0 b1 on 2 Zen 4 cores: "
       "11.8 ms nhwc, 83 ms blocked, 49 ms nchw). CUDA: nchw (default) or nhwc, where 2-D "
       "cuDNN convolutions (KRSC weights, tensor cores at fp16/bf16), pooling, BatchNorm and "
       "elementwise ops run channels-last. Reorders are inserted where a consumer needs "
       "another layout, which can cost more than it saves (im2col_gemm convs read and write "
       "nchw).",
       [](const GraphIndex& g) { return IfAny(NodesOfType(g, kConvOps)); }, "cpu,cuda"},
      {"kernel.conv",
       [](const Target& t) -> std::vector<std::string> {
         if (t.IsCuda()) return {"auto", "rank1", "rank2", "rank3"};
         return {"auto", "onednn", "im2col_gemm", "direct", "winograd", "native"};
       },
       [](const Target&) -> std::string { return "auto"; },
       "Which kernel runs Conv. CPU: auto (oneDNN's choice, except Switchyard's own 1x1 kernel "
       "for nhwc fp32 1x1 stride-1 layers with a residual, 64 or more input channels, a "
       "multiple of 16 outputs and at least 192 pixels per thread's range on AVX-512 AMD CPUs, "
       "where oneDNN's residual sum is slow, and its own tap kernel for strided layers with 2 "
       "MiB of weights or more there and for every layer with more than one tap on AMD CPUs "
       "with AVX2 and no AVX-512, and its own F(2x2,3x3) Winograd, as accurate as the direct "
       "kernel, for stride-1 3x3 layers with 64 or more input channels on Intel CPUs with "
       "AVX-512, its own 1x1 kernel there for 1x1 layers followed by a SiLU, which it applies "
       "in registers, and on those without AMX the same kernel for 1x1 layers of at most 64 "
       "pixels and 1 MiB of weights or more, its tap kernel for strided layers with 4 MiB of "
       "weights or more, and on all of them its stem kernel for a first 3x3 layer of 32 "
       "outputs that reads the plain image), onednn "
       "(oneDNN's choice everywhere), direct (oneDNN direct), "
       "winograd (3x3 stride-1 fp32 only, different rounding: Switchyard's own F(4x4,3x3) on "
       "nhwc activations where a layer has at least 16 output tiles (AVX-512 or AVX2), "
       "its own F(2x2,3x3) where only 2x2 tiles reach 16, oneDNN's Winograd elsewhere), im2col_gemm (OpenBLAS over an im2col buffer, extra memory, "
       "plain NCHW: reorders are inserted when the layout differs), native (own kernel on nhwc "
       "activations: per output row a sum of GEMMs over kernel rows that read the input in "
       "place, and for 1x1 stride-1 layers with a multiple of 16 outputs one register-tiled "
       "GEMM over all pixels; "
       "group-1 fp32 convolutions on nhwc, others fall back to auto). CUDA: cuDNN's algorithm "
       "at that rank of its heuristic list (auto = rank 0; clamped to the list's length). "
       "Default auto; unsupported nodes fall back to auto, noted in the build report.",
       [](const GraphIndex& g) { return IfAny(NodesOfType(g, kConvOps)); }, "cpu,cuda"},
      {"kernel.gemm",
       [](const Target& t) -> std::vector<std::string> {
         if (t.IsCuda()) return {"auto", "rank1", "rank2", "rank3"};
         return {"auto", "onednn", "openblas", "native"};
       },
       [](const Target&) -> std::string { return "auto"; },
       "Which library runs MatMul/Gemm. CPU: auto (oneDNN), onednn, openblas or native "
       "(Switchyard's own kernels); quant.weights=int8 needs auto or onednn. CUDA: the "
       "cuBLASLt algorithm at that rank of its heuristic list (auto = rank 0; clamped). "
       "Default auto; unsupported nodes fall back to auto.",
       [](const GraphIndex& g) { return IfAny(NodesOfType(g, kGemmOps)); }, "cpu,cuda"},
      {"precision",
       [](const Target& t) -> std::vector<std::string> {
         if (t.IsCuda()) return {"fp32", "tf32", "fp16", "bf16"};
         if (t.features.HasBf16()) return {"fp32", "bf16"};
         return {"fp32"};
       },
       [](const Target&) -> std::string { return "fp32"; },
       "Compute precision. CPU: of Conv/MatMul/Gemm: fp32, or bf16 (only on CPUs with "
       "AVX512_BF16 or AMX): about 2x faster with AMX or on Zen 4 (slower than fp32 on an "
       "Intel core without AMX), about 3 significant digits, so always measured and "
       "accuracy-gated; at bf16 the convolutions' activations (and those of the pooling, "
       "Add/Mul/Sub and data movement between them) are stored in bf16, with Casts where they "
       "meet float32 ops; bf16 excludes kernel.conv=winograd and quant.weights=int8. CUDA: fp32 "
       "(strict), tf32 (tensor cores on fp32 data, 10-bit mantissa products), fp16 or bf16 "
       "(activations and weights stored in that type, accumulation in fp32; graph inputs and "
       "outputs stay fp32). Default fp32. precision@<glob>=fp32 keeps matching nodes in fp32.",
       [](const GraphIndex& g) { return IfAny(NodesOfType(g, kComputeOps)); }, "cpu,cuda"},
      {"quant.weights",
       [](const Target&) -> std::vector<std::string> { return {"none", "int8"}; },
       [](const Target&) -> std::string { return "none"; },
       "Stores constant Conv/MatMul/Gemm weights as int8 with per-channel scales and runs "
       "those ops with int8 kernels: 4x smaller weights, faster with VNNI/AMX, the largest "
       "accuracy risk. Default none. Needs precision=fp32, kernel.conv auto|onednn|direct "
       "and kernel.gemm auto|onednn.",
       [](const GraphIndex& g) { return IfAny(NodesWithConstWeight(g, kComputeOps)); }},
      {"memory.plan",
       [](const Target&) -> std::vector<std::string> {
         return {"greedy_by_size", "linear_scan", "none"};
       },
       [](const Target&) -> std::string { return "greedy_by_size"; },
       "How intermediate tensors share one arena: greedy_by_size (largest first, usually the "
       "smallest arena), linear_scan (execution order, sometimes larger) or none (a buffer "
       "per tensor, no views and no residual written in place: most memory, rules out "
       "aliasing bugs). Default greedy_by_size; values never change.",
       [](const GraphIndex&) -> Nodes { return std::vector<std::string>{}; }, "cpu,cuda"},
      {"schedule.batch_split",
       [](const Target&) -> std::vector<std::string> { return {"off", "auto"}; },
       [](const Target&) -> std::string { return "auto"; },
       "Runs the first steps of a batch image by image, each image through all of them "
       "before the next, so that their large intermediates stay in the caches instead of "
       "going to memory and back: auto takes the run of per-image steps (convolution, pooling, "
       "elementwise) from the start where the bytes its steps move per image, less 256 KiB per "
       "thread and call and less the weights read again per image (those over 256 KiB), sum "
       "highest, if some tensor of it holds 8 MiB or more for the batch (a fixed batch of 2 or "
       "more, engines of at most 2 threads; the build report notes the run). Engines of 8 "
       "threads or more instead run every per-image step from the start on workers of 2 "
       "threads, one image each, at once, where the steps after them hold at most a tenth of "
       "the tensor bytes. Default auto; values unchanged up to the kernels' per-call choices.",
       [](const GraphIndex& g) { return IfAny(NodesWithConstWeight(g, kConvOps)); }, "cpu"},
      {"cuda.graphs", OnOff, On,
       "Captures the whole engine's launches as one CUDA graph per session and replays it, "
       "removing per-kernel launch overhead (large for small batches). Default on; off "
       "launches each step on the stream. Values never change.",
       [](const GraphIndex&) -> Nodes { return std::vector<std::string>{}; }, "cuda"},
      {"threads",
       [](const Target& t) {
         std::vector<std::string> v;
         for (int i = 1; i <= std::max(1, t.cores); ++i) v.push_back(std::to_string(i));
         return v;
       },
       [](const Target& t) { return std::to_string(std::max(1, t.cores)); },
       "Intra-op threads per inference, 1 to the target's logical CPUs. Default: all of them; "
       "fewer can win for small models or many concurrent sessions. Steps too small for two "
       "(oneDNN convolutions under 256K multiply-adds, broadcast Add/Mul under 32K fp32 or 512K "
       "bf16 elements: squeeze-excite FCs and scales) run on one. Values never change.",
       [](const GraphIndex&) -> Nodes { return std::vector<std::string>{}; }},
  };
  return kTable;
}

namespace {
std::vector<KnobDef>& MutableTestKnobs() {
  static std::vector<KnobDef> knobs;
  return knobs;
}
}  // namespace

bool KnobOnTarget(const KnobDef& def, const Target& target) {
  const std::string list = std::string(",") + def.targets + ",";
  return list.find("," + target.name + ",") != std::string::npos;
}

void RegisterTestKnob(const KnobDef& def) { MutableTestKnobs().push_back(def); }
const std::vector<KnobDef>& TestKnobs() { return MutableTestKnobs(); }

const std::vector<Incompatibility>& IncompatibilityTable() {
  static const std::vector<Incompatibility> kTable = {
      {"kernel.conv", {"winograd"}, "precision", {"bf16"},
       "Winograd convolution is fp32 only (Switchyard's and oneDNN's)"},
      {"quant.weights", {"int8"}, "precision", {"bf16"},
       "int8 weights run with fp32 activations"},
      {"quant.weights", {"int8"}, "kernel.conv", {"im2col_gemm", "winograd", "native"},
       "only oneDNN's direct convolution takes int8 weights"},
      {"quant.weights", {"int8"}, "kernel.gemm", {"openblas", "native"},
       "only oneDNN's GEMM takes int8 weights"},
  };
  return kTable;
}

}  // namespace switchyard::route
