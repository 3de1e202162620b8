// Pass fuse_slice (knob fuse.slice): Slice nodes with constant ranges and unit steps.
//  * Several Slices of one tensor along the same axis whose ranges are disjoint and
//    contiguous (e.g. the q/k/v thirds of a packed projection) become one Split; gaps
//    at either end become extra, unread Split outputs.
//  * Slice(Slice(x)) on different axes, the inner one read only by the outer one,
//    becomes one Slice.
//  * A Split along the last axis of a MatMul or FusedMatMul output (read only there) with
//    a constant 2-D B, and a constant bias or none, becomes one GEMM per part over B's
//    columns (and the bias's entries) of that part, split at build time: each part is
//    written where it is read instead of copied out of the packed product (ViT-B/16's
//    q/k/v Splits: 1.1 ms of copies at 2 threads). Parts of at least 64 columns.
// The axis dimension must be static so that ranges can be normalised exactly.
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

#include "passes/pass.h"
#include "passes/pattern.h"

namespace switchyard::passes {
namespace {

struct SliceInfo {
  NodeId node = -1;
  ValueId data = kNoValue;
  std::vector<int64_t> axes, starts, ends;  // normalised: axes >= 0, 0 <= start < end <= dim
};

// Reads a Slice with constant starts/ends/axes and unit steps; ranges normalised against
// static dims. False when anything is unknown or a range is empty.
bool ReadSlice(const Graph& g, NodeId ni, SliceInfo* s) {
  const Node& n = g.nodes[static_cast<size_t>(ni)];
  if (!IsOp(n, "Slice") || n.inputs.empty()) return false;
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.since_version < 10) {
    starts = n.GetInts("starts");
    ends = n.GetInts("ends");
    axes = n.GetInts("axes");
  } else {
    if (!ConstantInts(g, n.inputs[1], &starts) || !ConstantInts(g, n.inputs[2], &ends)) return false;
    if (n.HasInput(3) && !ConstantInts(g, n.inputs[3], &axes)) return false;
    if (n.HasInput(4) && !ConstantInts(g, n.inputs[4], &steps)) return false;
  }
  const TensorType& t = g.value(n.inputs[0]).type;
  if (!t.has_shape || starts.size() != ends.size() || starts.empty()) return false;
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (axes.size() != starts.size()) return false;
  for (int64_t st : steps) {
    if (st != 1) return false;
  }
  const int64_t r = t.rank();
  s->node = ni;
  s->data = n.inputs[0];
  s->axes.clear();
  s->starts.clear();
  s->ends.clear();
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (a < 0 || a >= r || !t.dims[static_cast<size_t>(a)].is_static()) return false;
    const int64_t d = t.dims[static_cast<size_t>(a)].value;
    auto norm = [d](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + d : v, 0, d); };
    const int64_t b = norm(starts[i]), e = norm(ends[i]);
    if (e <= b) return false;
    s->axes.push_back(a);
    s->starts.push_back(b);
    s->ends.push_back(e);
  }
  return true;
}

ValueId IntsConstant(Rewriter& rw, const std::string& base, const std::vector<int64_t>& v) {
  return rw.NewConstant(base, Tensor::FromInt64(v, {static_cast<int64_t>(v.size())}));
}

void SliceToSplit(Rewriter& rw, const std::vector<SliceInfo>& group) {
  Graph& g = rw.graph();
  std::vector<SliceInfo> sorted = group;
  std::sort(sorted.begin(), sorted.end(), [](const SliceInfo& a, const SliceInfo& b) { return a.starts[0] < b.starts[0]; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].starts[0] != sorted[i - 1].ends[0]) return;  // a gap or an overlap
  }
  const int64_t axis = sorted[0].axes[0];
  const int64_t dim = g.value(sorted[0].data).type.dims[static_cast<size_t>(axis)].value;
  std::vector<int64_t> sizes;
  std::vector<ValueId> outs;
  const Node& first = rw.node(sorted[0].node);
  if (sorted[0].starts[0] > 0) {
    sizes.push_back(sorted[0].starts[0]);
    outs.push_back(rw.NewValue(first.name + "_split_head"));
  }
  for (const SliceInfo& s : sorted) {
    sizes.push_back(s.ends[0] - s.starts[0]);
    outs.push_back(rw.node(s.node).outputs[0]);
  }
  if (sorted.back().ends[0] < dim) {
    sizes.push_back(dim - sorted.back().ends[0]);
    outs.push_back(rw.NewValue(first.name + "_split_tail"));
  }
  NodeId earliest = sorted[0].node;
  for (const SliceInfo& s : sorted) earliest = std::min(earliest, s.node);
  Node split = MakeNode("Split", "", rw.node(earliest).name + "_split", {sorted[0].data}, outs);
  SetInt(split, "axis", axis);
  if (g.Opset() >= 13) {
    split.inputs.push_back(IntsConstant(rw, split.name + "_sizes", sizes));
  } else {
    SetInts(split, "split", sizes);
  }
  for (const SliceInfo& s : sorted) {
    if (s.node != earliest) rw.Remove(s.node);
  }
  rw.Replace(earliest, std::move(split));
  rw.CountChange();
}

// Columns [c0, c1) of a 2-D constant (rows [c0, c1) when `rows`), or of a 1-D one.
Tensor ColumnsOf(const Tensor& t, int64_t c0, int64_t c1, bool rows) {
  const size_t es = DataTypeSize(t.dtype());
  const auto* src = static_cast<const uint8_t*>(t.raw());
  if (t.rank() == 1 || rows) {
    const int64_t inner = t.rank() == 1 ? 1 : t.dim(1);
    std::vector<int64_t> shape = t.shape();
    shape[0] = c1 - c0;
    Tensor out(t.dtype(), shape);
    std::memcpy(out.raw(), src + static_cast<size_t>(c0 * inner) * es, static_cast<size_t>((c1 - c0) * inner) * es);
    return out;
  }
  const int64_t r = t.dim(0), n = t.dim(1), w = c1 - c0;
  Tensor out(t.dtype(), {r, w});
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (int64_t i = 0; i < r; ++i) {
    std::memcpy(dst + static_cast<size_t>(i * w) * es, src + static_cast<size_t>(i * n + c0) * es, static_cast<size_t>(w) * es);
  }
  return out;
}

// The part sizes of a Split along `axis` of a dimension `dim` (attribute, input or equal).
bool SplitSizes(const Graph& g, const Node& n, int64_t dim, std::vector<int64_t>* sizes) {
  sizes->clear();
  if (n.HasInput(1)) {
    if (!ConstantInts(g, n.inputs[1], sizes)) return false;
  } else if (n.Has("split")) {
    *sizes = n.GetInts("split");
  } else {
    const int64_t parts = static_cast<int64_t>(n.outputs.size());
    if (parts == 0 || dim % parts != 0) return false;  // opset 18's uneven last part: left alone
    sizes->assign(static_cast<size_t>(parts), dim / parts);
  }
  int64_t total = 0;
  for (int64_t v : *sizes) {
    if (v <= 0) return false;
    total += v;
  }
  return total == dim && sizes->size() == n.outputs.size();
}

constexpr int64_t kMinSplitGemmColumns = 64;

// Split(GEMM(A, B, bias), last axis) -> one GEMM per part.
void SplitGemm(Rewriter& rw, NodeId si) {
  Graph& g = rw.graph();
  const Node& split = rw.node(si);
  if (!IsOp(split, "Split") || split.inputs.empty()) return;
  const ValueId y = split.inputs[0];
  const TensorType& yt = g.value(y).type;
  if (!yt.has_shape || yt.rank() < 2 || !yt.dims.back().is_static()) return;
  int64_t axis = split.GetInt("axis", 0);
  if (axis < 0) axis += yt.rank();
  if (axis != yt.rank() - 1) return;
  const NodeId pi = rw.Producer(y);
  if (pi < 0 || rw.SoleConsumer(y) != si) return;
  const Node& mm = rw.node(pi);
  const bool fused = mm.domain == kSwitchyardDomain && mm.op_type == "FusedMatMul";
  if (!fused && !IsOp(mm, "MatMul")) return;
  if (mm.HasInput(3) || mm.inputs.size() < 2) return;  // a residual would have to be split too
  const Tensor* b = g.Constant(mm.inputs[1]);
  const Tensor* bias = mm.HasInput(2) ? g.Constant(mm.inputs[2]) : nullptr;
  if (!b || b->rank() != 2 || (mm.HasInput(2) && (!bias || bias->rank() != 1))) return;
  const bool trans_b = fused && mm.GetInt("trans_b", 0) != 0;
  const int64_t n = trans_b ? b->dim(0) : b->dim(1);
  std::vector<int64_t> sizes;
  if (n != yt.dims.back().value || (bias && bias->dim(0) != n) || !SplitSizes(g, split, n, &sizes)) return;
  // Narrow parts would run at a fraction of the GEMM's speed: copies are cheaper then.
  if (*std::min_element(sizes.begin(), sizes.end()) < kMinSplitGemmColumns) return;
  std::vector<Node> parts;
  int64_t c0 = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t c1 = c0 + sizes[i];
    Node part = mm;
    part.name = mm.name + "_part" + std::to_string(i);
    part.inputs[1] = rw.NewConstant(part.name + "_b", ColumnsOf(*b, c0, c1, trans_b));
    if (bias) part.inputs[2] = rw.NewConstant(part.name + "_bias", ColumnsOf(*bias, c0, c1, false));
    part.outputs = {split.outputs[i]};
    parts.push_back(std::move(part));
    c0 = c1;
  }
  rw.Remove(pi);
  for (size_t i = 0; i + 1 < parts.size(); ++i) rw.InsertBefore(si, std::move(parts[i]));
  rw.Replace(si, std::move(parts.back()));
  rw.CountChange();
}

Status FuseSliceSweep(Rewriter& rw) {
  Graph& g = rw.graph();
  // Split: group single-axis slices by (data, axis).
  std::map<std::pair<ValueId, int64_t>, std::vector<SliceInfo>> groups;
  for (NodeId i = 0; i < static_cast<NodeId>(g.nodes.size()); ++i) {
    SliceInfo s;
    if (ReadSlice(g, i, &s) && s.axes.size() == 1) groups[{s.data, s.axes[0]}].push_back(s);
  }
  for (const auto& [key, group] : groups) {
    if (group.size() >= 2) SliceToSplit(rw, group);
  }
  for (NodeId i = 0; i < static_cast<NodeId>(g.nodes.size()); ++i) {
    if (!rw.Touched(i)) SplitGemm(rw, i);
  }
  // Merge Slice(Slice(x)) on different axes (opset >= 10 form: ranges as inputs).
  if (g.Opset() < 10) return Status::Ok();
  for (NodeId i = 0; i < static_cast<NodeId>(g.nodes.size()); ++i) {
    SliceInfo outer, inner;
    if (rw.Touched(i) || !ReadSlice(g, i, &outer)) continue;
    const NodeId p = rw.Producer(outer.data);
    if (p < 0 || rw.SoleConsumer(outer.data) != i || !ReadSlice(g, p, &inner)) continue;
    bool disjoint = true;
    for (int64_t a : outer.axes) {
      disjoint &= std::find(inner.axes.begin(), inner.axes.end(), a) == inner.axes.end();
    }
    if (!disjoint) continue;
    std::vector<int64_t> axes = inner.axes, starts = inner.starts, ends = inner.ends;
    axes.insert(axes.end(), outer.axes.begin(), outer.axes.end());
    starts.insert(starts.end(), outer.starts.begin(), outer.starts.end());
    ends.insert(ends.end(), outer.ends.begin(), outer.ends.end());
    const std::string name = rw.node(p).name;
    Node merged = MakeNode("Slice", "", name, {inner.data}, {rw.node(i).outputs[0]});
    merged.inputs.push_back(IntsConstant(rw, name + "_starts", starts));
    merged.inputs.push_back(IntsConstant(rw, name + "_ends", ends));
    merged.inputs.push_back(IntsConstant(rw, name + "_axes", axes));
    rw.Remove(p);
    rw.Replace(i, std::move(merged));
    rw.CountChange();
  }
  return Status::Ok();
}

}  // namespace

Status RunFuseSlice(Graph& graph, PassContext& ctx) {
  SY_ASSIGN_OR_RETURN(int n, RunSweeps(graph, FuseSliceSweep));
  if (n) ctx.report.fired["fuse.slice"] += n;
  return Status::Ok();
}

}  // namespace switchyard::passes
