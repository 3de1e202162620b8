#include "build/builder.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "backends/cpu/op_impl.h"
#include "build/batch_split.h"
#include "build/kernel_table.h"
#include "build/memory_plan.h"
#include "engine/batch_split.h"
#include "io/memory_budget.h"
#include "passes/lower_precision.h"
#include "reference/op_registry.h"
#include "ir/shape_inference.h"
#include "ir/verifier.h"
#include "switchyard/version.h"

namespace switchyard {
namespace {

// Applies --shapes to the graph inputs: fixed sizes become static dims; ranges keep a
// symbolic dim (named after the input and axis unless the model named it). Returns the
// per-input ranges in graph input order.
Result<std::vector<std::vector<DimRange>>> ApplyShapes(Graph& g, const BuildOptions& opt) {
  for (const auto& [name, dims] : opt.shapes) {
    bool found = false;
    for (ValueId id : g.inputs) found |= g.value(id).name == name;
    if (!found) {
      std::string names;
      for (ValueId id : g.inputs) names += (names.empty() ? "" : ", ") + g.value(id).name;
      return Status::NotFound("--shapes: the model has no input '" + name + "'; its inputs are: " + names);
    }
  }
  std::vector<std::vector<DimRange>> ranges;
  for (ValueId id : g.inputs) {
    Value& v = g.value(id);
    std::vector<DimRange> r;
    auto it = opt.shapes.find(v.name);
    if (it != opt.shapes.end()) {
      if (!v.type.has_shape || v.type.dims.size() != it->second.size()) {
        return Status::Invalid("--shapes " + v.name + ": the model declares " + v.type.ToString() +
                               " (rank " + std::to_string(v.type.rank()) + "), " +
                               std::to_string(it->second.size()) + " sizes were given");
      }
      for (size_t d = 0; d < it->second.size(); ++d) {
        const DimRange& dr = it->second[d];
        Dim& dim = v.type.dims[d];
        if (dim.is_static() && (dr.min != dim.value || dr.max != dim.value)) {
          return Status::Invalid("--shapes " + v.name + ": dimension " + std::to_string(d) +
                                 " is fixed at " + std::to_string(dim.value) + " by the model");
        }
        if (dr.min == dr.max) {
          dim = Dim(dr.min);
        } else if (dim.symbol.empty()) {
          dim = Dim::Symbol(v.name + "_dim" + std::to_string(d));
        }
        r.push_back(dr);
      }
    } else if (v.type.has_shape) {
      for (const Dim& d : v.type.dims) {
        r.push_back(d.is_static() ? DimRange{d.value, d.value, d.value} : DimRange{0, -1, -1});
      }
    }
    ranges.push_back(std::move(r));
  }
  return ranges;
}

// The same graph with every ranged input at its max size, for memory planning.
Result<Graph> AtMaxShapes(const Graph& g, const std::vector<std::vector<DimRange>>& ranges) {
  Graph m = g;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    Value& v = m.value(m.inputs[i]);
    for (size_t d = 0; d < ranges[i].size() && d < v.type.dims.size(); ++d) {
      if (ranges[i][d].max >= 0) v.type.dims[d] = Dim(ranges[i][d].max);
    }
  }
  SY_RETURN_IF_ERROR(InferShapes(m));
  return m;
}

int64_t StaticBytes(const TensorType& t) {
  if (!t.is_static() || t.dtype == DataType::kString) return -1;
  int64_t n = static_cast<int64_t>(DataTypeSize(t.dtype));
  for (const Dim& d : t.dims) n *= d.value;
  return n;
}

std::string LayoutAt(const nlohmann::json& params, const char* key, size_t i) {
  if (!params.contains(key) || !params[key].is_array() || i >= params[key].size()) return "";
  return params[key][i].get<std::string>();
}

// A view step (its provider marked params "view": Reshape and the other ops that only
// relabel dims) whose input and output are plain intermediates of the same size: the
// output can share the input's bytes, and the kernel's copy finds source == destination.
bool CanShareBytes(const Engine& e, const EngineStep& st) {
  if (!st.params.is_object() || !st.params.value("view", false) || st.inputs.empty() || st.outputs.size() != 1 ||
      st.inputs[0] < 0 || st.outputs[0] < 0) {
    return false;
  }
  const EngineTensor& a = e.tensors[static_cast<size_t>(st.inputs[0])];
  const EngineTensor& b = e.tensors[static_cast<size_t>(st.outputs[0])];
  // A Reorder marked as a view moves between layouts that place every byte alike (its
  // provider checked), so its tensors may carry layouts.
  const bool relayout = st.op_type == "Reorder";
  auto plain = [relayout](const EngineTensor& t) {
    return t.kind == EngineTensor::Kind::kIntermediate && !t.is_output && (relayout || t.layout.empty()) &&
           t.bytes >= 0;
  };
  return plain(a) && plain(b) && a.bytes == b.bytes && a.dtype == b.dtype;
}

// A step whose provider marked params "inplace": k (its kernel computes output 0 on top of
// a copy of input k, e.g. a convolution's residual sum, and skips the copy when both are
// one buffer) may write its output over input k when that input dies here: an intermediate
// of the same layout and size that no later step reads (through any tensor sharing its
// bytes, `group_last`) and that is not also another input of this step. Returns k or -1.
int InPlaceInput(const Engine& e, const EngineStep& st, const std::vector<int>& root,
                 const std::vector<int>& group_last, int s) {
  if (!st.params.is_object() || !st.params.contains("inplace") || !st.params["inplace"].is_number_integer() ||
      st.outputs.empty() || st.outputs[0] < 0) {
    return -1;
  }
  const int k = st.params["inplace"].get<int>();
  if (k < 0 || static_cast<size_t>(k) >= st.inputs.size() || st.inputs[static_cast<size_t>(k)] < 0) return -1;
  const size_t in = static_cast<size_t>(st.inputs[static_cast<size_t>(k)]);
  const EngineTensor& a = e.tensors[in];
  const EngineTensor& b = e.tensors[static_cast<size_t>(st.outputs[0])];
  auto planned = [](const EngineTensor& t) {
    return t.kind == EngineTensor::Kind::kIntermediate && !t.is_output && t.bytes >= 0;
  };
  if (!planned(a) || !planned(b) || a.bytes != b.bytes || a.dtype != b.dtype || a.layout != b.layout) return -1;
  const int r = root[in];
  if (group_last[static_cast<size_t>(r)] != s) return -1;
  for (size_t i = 0; i < st.inputs.size(); ++i) {
    if (static_cast<int>(i) != k && st.inputs[i] >= 0 && root[static_cast<size_t>(st.inputs[i])] == r) return -1;
  }
  return k;
}

// Places every tensor produced by a step with a known size in one arena. Outputs of view
// steps, and of in-place steps whose input dies there, join their input's group (one
// record: the group's first write to its last read), unless the strategy is "none" (every
// tensor its own bytes). *views counts the view joins, *inplace the in-place ones.
Result<MemoryPlan> PlanArena(Engine& e, const std::string& strategy, int* views, int* inplace) {
  const size_t n = e.tensors.size();
  std::vector<int> root(n), first(n, -1), last(n, -1);
  for (size_t t = 0; t < n; ++t) root[t] = static_cast<int>(t);
  *views = 0;
  *inplace = 0;
  // The last step reading each group's bytes, kept up to date as views join groups (an
  // in-place join needs the whole group dead after its step).
  std::vector<int> reads_last(n, -1);
  for (size_t s = 0; s < e.steps.size(); ++s) {
    for (int t : e.steps[s].inputs) {
      if (t >= 0) reads_last[static_cast<size_t>(t)] = static_cast<int>(s);
    }
  }
  std::vector<int> group_last = reads_last;
  // Batch-split segments: their boundary tensors live over the whole segment (every chunk
  // reads or writes its rows of them), and never share bytes with another tensor through a
  // view or in place (a chunk's rows sit at an offset of their own).
  SY_ASSIGN_OR_RETURN(const std::vector<BatchSegment> segments, ReadBatchSegments(e));
  auto at_boundary = [&](const EngineStep& st, int s) {
    const BatchSegment* seg = SegmentAt(segments, s);
    if (!seg) return false;
    for (const std::vector<int>* ts : {&st.inputs, &st.outputs}) {
      for (int t : *ts) {
        if (t >= 0 && seg->boundary[static_cast<size_t>(t)]) return true;
      }
    }
    return false;
  };
  for (size_t s = 0; s < e.steps.size(); ++s) {
    const EngineStep& st = e.steps[s];
    int join = -1;
    if (at_boundary(st, static_cast<int>(s))) {
      // no join
    } else if (strategy != "none" && CanShareBytes(e, st)) {
      join = st.inputs[0];
      ++*views;
    } else if (strategy != "none") {
      if (const int k = InPlaceInput(e, st, root, group_last, static_cast<int>(s)); k >= 0) {
        join = st.inputs[static_cast<size_t>(k)];
        ++*inplace;
      }
    }
    if (join >= 0) {
      const size_t out = static_cast<size_t>(st.outputs[0]);
      const size_t r = static_cast<size_t>(root[static_cast<size_t>(join)]);
      root[out] = static_cast<int>(r);
      group_last[r] = std::max(group_last[r], reads_last[out]);
    }
    for (int t : st.outputs) {
      if (t >= 0 && first[static_cast<size_t>(root[static_cast<size_t>(t)])] < 0) {
        first[static_cast<size_t>(root[static_cast<size_t>(t)])] = static_cast<int>(s);
      }
    }
    for (int t : st.inputs) {
      if (t >= 0) last[static_cast<size_t>(root[static_cast<size_t>(t)])] = static_cast<int>(s);
    }
  }
  // A group holding a segment's boundary tensor lives over the whole segment.
  std::vector<int> span_first(n, static_cast<int>(e.steps.size())), span_last(n, -1);
  for (const BatchSegment& seg : segments) {
    for (size_t t = 0; t < n; ++t) {
      if (!seg.boundary[t]) continue;
      const size_t r = static_cast<size_t>(root[t]);
      span_first[r] = std::min(span_first[r], seg.first);
      span_last[r] = std::max(span_last[r], seg.end - 1);
    }
  }
  std::vector<UsageRecord> records;
  std::vector<size_t> planned;
  const int end = static_cast<int>(e.steps.size());
  for (size_t t = 0; t < n; ++t) {
    const EngineTensor& et = e.tensors[t];
    if (root[t] != static_cast<int>(t) || first[t] < 0 || et.bytes < 0 || et.kind == EngineTensor::Kind::kConstant) {
      continue;
    }
    const int f = std::min(first[t], span_first[t]);
    const int l = std::max(et.is_output ? end : std::max(first[t], last[t]), span_last[t]);
    records.push_back({f, l, et.bytes});
    planned.push_back(t);
  }
  SY_ASSIGN_OR_RETURN(MemoryPlan plan, PlanMemory(records, strategy));
  for (size_t i = 0; i < planned.size(); ++i) e.tensors[planned[i]].offset = plan.offsets[i];
  for (size_t t = 0; t < n; ++t) {
    if (root[t] != static_cast<int>(t)) e.tensors[t].offset = e.tensors[static_cast<size_t>(root[t])].offset;
  }
  return plan;
}

class EngineAssembler {
 public:
  EngineAssembler(const Graph& g, const Graph& gmax, Engine& e) : g_(g), gmax_(gmax), e_(e) {}

  // Tensor index of (value, layout), creating it on first use.
  int TensorFor(ValueId id, const std::string& layout = "") {
    auto key = std::make_pair(id, layout);
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    const Value& v = g_.value(id);
    EngineTensor t;
    t.name = layout.empty() ? v.name : v.name + "@" + layout;
    t.dtype = v.type.dtype;
    t.shape = gmax_.value(id).type.has_shape ? gmax_.value(id).type.StaticShape() : std::vector<int64_t>{};
    t.layout = layout;
    t.bytes = StaticBytes(gmax_.value(id).type);
    if (const Tensor* c = g_.Constant(id); c && layout.empty()) {
      t.kind = EngineTensor::Kind::kConstant;
      t.constant = static_cast<int>(e_.constants.size());
      e_.constants.push_back(*c);
      t.bytes = static_cast<int64_t>(c->nbytes());
    }
    const int idx = static_cast<int>(e_.tensors.size());
    e_.tensors.push_back(std::move(t));
    index_[key] = idx;
    return idx;
  }
  bool Has(ValueId id, const std::string& layout) const { return index_.count({id, layout}) != 0; }

 private:
  const Graph& g_;
  const Graph& gmax_;
  Engine& e_;
  std::map<std::pair<ValueId, std::string>, int> index_;
};

// CPU precision=bf16: the nodes whose activations are stored in bf16 between steps. A
// convolution (Conv, FusedConv) is lowered where a kernel takes bf16 X (and residual) for
// it on this route; a pooling or data movement follows when its float inputs are already
// bf16 (the Concat of a feature pyramid, the Reshape after a patch embedding). Every other node keeps
// float32, with a Cast where bf16 meets float32 (LowerPrecision; a lowered node's weights,
// bias and input scale are stored in bf16 too, as the IR's type rules want). The conversions a bf16
// convolution made of its f32 input before are then Casts at the boundaries only, and the
// convolutions read and write half the bytes (a 1x1 expansion and 3x3 depthwise pair of
// MobileNetV2 at 56x56: 0.137 ms with f32, 0.089 ms with bf16 activations, oneDNN alone).
std::set<std::string> CpuBf16Nodes(const Graph& g, const RouteSpace& space, const Route& route,
                                   const Target& target, const std::string& layout,
                                   const std::string& quant, int threads) {
  static const std::set<std::string> kAnchors = {"Conv", "FusedConv"};
  // Pooling, Add/Mul/Sub (residuals, squeeze-excite scales) and data movement: exact (max,
  // copies) or rounding once, like the conv itself.
  static const std::set<std::string> kFollowers = {
      "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Add", "Mul", "Sub", "Concat", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
      "Transpose", "Slice", "Split", "Pad", "DepthToSpace", "SpaceToDepth"};
  std::set<std::string> lowered_nodes;
  std::set<ValueId> lowered;
  for (const Node& node : g.nodes) {
    const bool anchor = kAnchors.count(node.op_type) != 0, follower = kFollowers.count(node.op_type) != 0;
    if ((!anchor && !follower) || space.PrecisionFor(route, node.name) != "bf16") continue;
    KernelBuildContext ctx{g, target, route, space};
    ctx.precision = "bf16";
    ctx.quant_weights = quant;
    ctx.layout = layout;
    ctx.threads = threads;
    bool all_lowered = true;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId id = node.inputs[i];
      DataType d = id == kNoValue ? DataType::kUndefined : g.value(id).type.dtype;
      if (id != kNoValue && d == DataType::kFloat) {  // LowerPrecision converts constants too
        all_lowered = all_lowered && (g.IsConstant(id) || lowered.count(id));
        d = DataType::kBfloat16;
      }
      ctx.input_shapes.push_back(id == kNoValue ? std::vector<int64_t>{} : g.value(id).type.StaticShape());
      ctx.input_dtypes.push_back(d);
      ctx.constants.push_back(id == kNoValue ? nullptr : g.Constant(id));
      ctx.input_layouts.push_back("");
    }
    if (follower && !all_lowered) continue;
    BuildReport scratch;
    if (!ChooseCpuImpl(node, ctx, scratch).ok()) continue;
    lowered_nodes.insert(node.name);
    for (ValueId o : node.outputs) {
      if (o != kNoValue && g.value(o).type.dtype == DataType::kFloat) lowered.insert(o);
    }
  }
  return lowered_nodes;
}

}  // namespace

Result<Engine> BuildEngine(Graph model, const RouteSpace& space, const Route& route,
                           const Target& target, const BuildOptions& options, BuildReport* report_out) {
  BuildReport local;
  BuildReport& report = report_out ? *report_out : local;
  SY_RETURN_IF_ERROR(space.CheckCompatible(route));
  Graph g = std::move(model);
  SY_ASSIGN_OR_RETURN(std::vector<std::vector<DimRange>> ranges, ApplyShapes(g, options));
  SY_RETURN_IF_ERROR(InferShapes(g));
  PassContext pctx{[&](const std::string& knob) { return space.Find(knob) && space.On(route, knob); },
                   target, report,
                   [&](const std::string& knob) { return space.Find(knob) ? space.Value(route, knob) : std::string(); }};
  SY_RETURN_IF_ERROR(RunPasses(g, pctx));
  if (target.IsCuda()) {
    // The cuda target runs fixed shapes only (kernels, the arena and the CUDA graph are
    // planned for them).
    for (ValueId id : g.inputs) {
      const Value& v = g.value(id);
      if (!v.type.is_static()) {
        return Status::Unsupported("target cuda builds fixed input shapes only: input '" + v.name +
                                   "' is " + v.type.ToString() + "; pass --shapes " + v.name +
                                   "=DIMS (e.g. 1x3x224x224)");
      }
    }
    const std::string precision = space.Find("precision") ? space.Value(route, "precision") : "fp32";
    if (precision == "fp16" || precision == "bf16") {
      SY_RETURN_IF_ERROR(LowerPrecision(
          g, [&](const Node& n) { return space.PrecisionFor(route, n.name); }, report));
    }
  } else if (space.Find("precision") && space.Value(route, "precision") == "bf16") {
    const std::set<std::string> bf16 = CpuBf16Nodes(
        g, space, route, target,
        space.Find("layout.activations") ? space.Value(route, "layout.activations") : "nchw",
        space.Find("quant.weights") ? space.Value(route, "quant.weights") : "none",
        space.Find("threads") ? std::max(1, std::atoi(space.Value(route, "threads").c_str())) : 1);
    if (!bf16.empty()) {
      SY_RETURN_IF_ERROR(LowerPrecision(
          g, [&](const Node& n) { return bf16.count(n.name) ? std::string("bf16") : std::string("fp32"); },
          report));
    }
  }
  SY_ASSIGN_OR_RETURN(Graph gmax, AtMaxShapes(g, ranges));

  Engine e;
  e.header.tool_version = SWITCHYARD_VERSION;
  e.header.tool_commit = SWITCHYARD_GIT_COMMIT;
  e.header.model_sha256 = options.model_sha256;
  e.header.route = route.Canonical();
  e.header.target = target.name;
  e.header.target_fingerprint = target.Fingerprint();
  e.header.required_features = target.IsCuda() ? std::vector<std::string>{target.gpu.Arch()}
                                                : target.features.Names();
  const std::string threads = space.Find("threads") ? space.Value(route, "threads") : "1";
  e.header.threads = std::max(1, std::atoi(threads.c_str()));
  e.header.cuda_graphs = target.IsCuda() && (!space.Find("cuda.graphs") || space.On(route, "cuda.graphs"));
  e.input_ranges = ranges;

  EngineAssembler asmb(g, gmax, e);
  for (ValueId id : g.inputs) {
    const int t = asmb.TensorFor(id);
    e.tensors[static_cast<size_t>(t)].kind = EngineTensor::Kind::kInput;
    e.inputs.push_back(t);
  }
  const std::string layout = space.Find("layout.activations") ? space.Value(route, "layout.activations") : "nchw";
  const std::string quant = space.Find("quant.weights") ? space.Value(route, "quant.weights") : "none";
  const CpuOpImpl* reorder = nullptr;  // the target's layout reorder kernel, if any
  for (const CpuOpImpl* impl : CpuImplRegistry::Global().ForOp("switchyard", "Reorder")) {
    const auto& providers = ProvidersFor(target);
    if (std::find(providers.begin(), providers.end(), impl->provider) != providers.end()) reorder = impl;
  }
  std::map<ValueId, std::string> value_layout;  // layout each produced value is stored in

  // Inserts a Reorder step so that `id` is available in `want`; returns its tensor.
  // Constants are stored plain: one a step wants in another layout is reordered like an
  // activation (once per run, shared by its readers), unless both layouts place its bytes
  // alike (the Reorder's `view`: a [1,C,1,1] operand in nhwc). Before, a constant was
  // handed over plain whatever the step wanted, and a [N,C,H,W] constant operand of an
  // Add/Mul/Sub or a residual was read as nhwc or blocked bytes (rel L2 0.4-0.6).
  auto ensure_layout = [&](ValueId id, const std::string& want, const std::string& why) -> Result<int> {
    const std::string have = value_layout.count(id) ? value_layout[id] : "";
    if (have == want) return asmb.TensorFor(id, have);
    if (asmb.Has(id, want)) return asmb.TensorFor(id, want);
    if (!reorder) return Status::Unsupported(why + ": needs a layout reorder and no Reorder kernel exists");
    Node rn;
    rn.name = g.value(id).name + "/reorder_" + (want.empty() ? "plain" : want);
    rn.op_type = "Reorder";
    rn.domain = "switchyard";
    rn.attrs["from"].kind = Attribute::Kind::kString;
    rn.attrs["from"].s = have;
    rn.attrs["to"].kind = Attribute::Kind::kString;
    rn.attrs["to"].s = want;
    rn.inputs = {id};
    rn.outputs = {id};
    KernelBuildContext rctx{g, target, route, space};
    rctx.layout = layout;
    rctx.threads = e.header.threads;
    rctx.input_shapes = {g.value(id).type.StaticShape()};
    rctx.input_dtypes = {g.value(id).type.dtype};
    rctx.constants = {nullptr};
    StepSpec rspec;
    Status rs = reorder->prepare(rn, rctx, rspec);
    if (!rs.ok()) return rs.WithContext(why);
    if (g.IsConstant(id) && rspec.params.value("view", false)) return asmb.TensorFor(id, have);
    EngineStep st;
    st.name = rn.name;
    st.op_type = "Reorder";
    st.domain = "switchyard";
    st.since_version = 1;
    st.provider = reorder->provider;
    st.variant = reorder->variant;
    SY_ASSIGN_OR_RETURN(st.attrs, AttrsToJson(rn, &e.constants));
    st.params = rspec.params;
    st.params["input_layouts"] = {have};
    st.params["output_layouts"] = {want};
    st.inputs = {asmb.TensorFor(id, have)};
    st.input_shapes = rctx.input_shapes;
    st.output_shapes = rctx.input_shapes;
    st.input_dtypes = st.output_dtypes = {static_cast<int>(g.value(id).type.dtype)};
    const int out = asmb.TensorFor(id, want);
    if (rspec.params.contains("output_bytes") && !rspec.params["output_bytes"].empty()) {
      e.tensors[static_cast<size_t>(out)].bytes = rspec.params["output_bytes"][0].get<int64_t>();
    } else if (!want.empty()) {
      e.tensors[static_cast<size_t>(out)].bytes = -1;  // unknown padded size: allocated per run
    }
    st.outputs = {out};
    e.steps.push_back(std::move(st));
    report.fired["layout.reorders"]++;
    return out;
  };

  for (const Node& node : g.nodes) {
    KernelBuildContext ctx{g, target, route, space};
    ctx.precision = space.Find("precision") ? space.PrecisionFor(route, node.name) : "fp32";
    ctx.quant_weights = quant;
    ctx.layout = layout;
    ctx.threads = e.header.threads;
    for (ValueId id : node.inputs) {
      ctx.input_shapes.push_back(id == kNoValue ? std::vector<int64_t>{} : g.value(id).type.StaticShape());
      ctx.input_dtypes.push_back(id == kNoValue ? DataType::kUndefined : g.value(id).type.dtype);
      ctx.constants.push_back(id == kNoValue ? nullptr : g.Constant(id));
      ctx.input_layouts.push_back(id != kNoValue && value_layout.count(id) ? value_layout[id] : "");
    }
    SY_ASSIGN_OR_RETURN(const CpuOpImpl* impl, ChooseCpuImpl(node, ctx, report));
    StepSpec spec;
    Status s = impl->prepare(node, ctx, spec);
    if (!s.ok()) return s.WithContext(impl->provider + " kernel");
    EngineStep st;
    st.name = node.name;
    st.op_type = node.op_type;
    st.domain = node.domain;
    st.since_version = node.since_version;
    st.provider = impl->provider;
    st.variant = impl->variant;
    SY_ASSIGN_OR_RETURN(st.attrs, AttrsToJson(node, &e.constants));
    st.params = spec.params;
    st.input_shapes = ctx.input_shapes;
    for (DataType d : ctx.input_dtypes) st.input_dtypes.push_back(static_cast<int>(d));
    for (ValueId id : node.outputs) {
      st.output_shapes.push_back(id == kNoValue ? std::vector<int64_t>{} : g.value(id).type.StaticShape());
      st.output_dtypes.push_back(id == kNoValue ? 0 : static_cast<int>(g.value(id).type.dtype));
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId id = node.inputs[i];
      const bool consumed = std::find(spec.consumed_inputs.begin(), spec.consumed_inputs.end(),
                                      static_cast<int>(i)) != spec.consumed_inputs.end();
      if (id == kNoValue || consumed) {
        st.inputs.push_back(-1);
        continue;
      }
      SY_ASSIGN_OR_RETURN(int t, ensure_layout(id, LayoutAt(spec.params, "input_layouts", i), NodeLabel(node)));
      st.inputs.push_back(t);
    }
    for (Tensor& p : spec.packed) {
      st.packed.push_back(static_cast<int>(e.constants.size()));
      e.constants.push_back(std::move(p));
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const ValueId id = node.outputs[i];
      if (id == kNoValue) {
        st.outputs.push_back(-1);
        continue;
      }
      const std::string out_layout = LayoutAt(spec.params, "output_layouts", i);
      value_layout[id] = out_layout;
      const int t = asmb.TensorFor(id, out_layout);
      if (spec.params.contains("output_bytes") && i < spec.params["output_bytes"].size()) {
        e.tensors[static_cast<size_t>(t)].bytes = spec.params["output_bytes"][i].get<int64_t>();
      }
      st.outputs.push_back(t);
    }
    report.kernels[(node.domain.empty() ? "" : node.domain + ".") + node.op_type]
                  [impl->provider + (impl->variant.empty() ? "" : "/" + impl->variant)]++;
    e.steps.push_back(std::move(st));
  }
  for (ValueId id : g.outputs) {
    SY_ASSIGN_OR_RETURN(int t, ensure_layout(id, "", "graph output '" + g.value(id).name + "'"));
    EngineTensor& et = e.tensors[static_cast<size_t>(t)];
    et.is_output = true;
    if (et.kind == EngineTensor::Kind::kIntermediate) et.kind = EngineTensor::Kind::kOutput;
    e.outputs.push_back(t);
  }

  if (!target.IsCuda() && space.Find("schedule.batch_split") && space.Value(route, "schedule.batch_split") == "auto") {
    const BatchSplitChoice split = PlanBatchSplit(e);
    report.notes.push_back(DescribeBatchSplit(e, split));
    if (split.steps > 0) report.fired["schedule.batch_split"]++;
  }
  const std::string strategy = space.Find("memory.plan") ? space.Value(route, "memory.plan") : "greedy_by_size";
  SY_ASSIGN_OR_RETURN(MemoryPlan plan, PlanArena(e, strategy, &report.views, &report.inplace));
  e.arena_bytes = plan.arena_bytes;
  report.arena_bytes = plan.arena_bytes;
  report.constant_bytes = 0;
  for (const Tensor& c : e.constants) report.constant_bytes += static_cast<int64_t>(c.nbytes());
  // --max-memory: the engine's constants and one session's arena (host memory; a cuda
  // engine's arena lives on the GPU).
  const int64_t host_arena = target.IsCuda() ? 0 : plan.arena_bytes;
  SY_RETURN_IF_ERROR(memory_budget::Check(
      "the engine being built: " + memory_budget::FormatBytes(report.constant_bytes) +
          " of constants and a " + memory_budget::FormatBytes(host_arena) + " arena",
      report.constant_bytes + host_arena));
  report.steps = static_cast<int>(e.steps.size());
  return e;
}

std::string FormatBuildReport(const BuildReport& r) {
  std::ostringstream o;
  o << "knobs fired:\n";
  if (r.fired.empty()) o << "  (none)\n";
  for (const auto& [k, n] : r.fired) {
    const bool fuse = k.rfind("fuse.", 0) == 0;
    o << "  " << k << ": " << n << (fuse ? (n == 1 ? " fusion" : " fusions") : (n == 1 ? " rewrite" : " rewrites")) << "\n";
  }
  o << "kernels:\n";
  for (const auto& [op, providers] : r.kernels) {
    o << "  " << op << ":";
    for (const auto& [p, n] : providers) o << " " << p << " x" << n;
    o << "\n";
  }
  for (const std::string& note : r.notes) o << "note: " << note << "\n";
  o << "steps: " << r.steps << "\nviews: " << r.views << " (steps whose output shares its input's bytes)"
    << "\nin place: " << r.inplace << " (steps that write their output over an input that dies there)"
    << "\narena bytes: " << r.arena_bytes << "\nconstant bytes: " << r.constant_bytes << "\n";
  return o.str();
}

}  // namespace switchyard
