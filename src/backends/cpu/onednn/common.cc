// oneDNN provider machinery: engine/stream singletons, dtype and layout tags, post-ops,
// error conversion, scratch and thread scoping.
#include "backends/cpu/onednn/common.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "backends/cpu/native/native.h"
#include "build/target.h"
#include "reference/ops/common.h"

namespace switchyard::onednn {

dnnl::engine& CpuEngine() {
  static dnnl::engine* e = [] {
    // oneDNN 2.6's primitive cache keys a primitive on its op desc, whose memory-desc
    // equality ignores the strides of size-1 dims: a conv on nchw and on nhwc input with
    // C == 1 (or H == W == 1, as in squeeze-excite) share a key although their primitive
    // descs chose different implementations, weights formats and scratchpad sizes. The
    // cache then hands one route's primitive to another, which reads our weights in the
    // wrong format (wrong outputs) or overruns the scratchpad. Every kernel already keeps
    // its primitives per shape (ShapeCache), so the global cache is off.
    dnnl::set_primitive_cache_capacity(0);
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);  // never destroyed
  }();
  return *e;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream s(CpuEngine());
  return s;
}

Result<Dt> ToDnnl(DataType t) {
  switch (t) {
    case DataType::kFloat: return Dt::f32;
    case DataType::kBfloat16: return Dt::bf16;
    case DataType::kFloat16: return Dt::f16;
    case DataType::kInt8: return Dt::s8;
    case DataType::kUint8: return Dt::u8;
    case DataType::kInt32: return Dt::s32;
    default: return Status::Unsupported(std::string("oneDNN has no ") + DataTypeName(t));
  }
}

memory::dims Dims(const std::vector<int64_t>& shape) {
  return memory::dims(shape.begin(), shape.end());
}

Tag PlainTag(size_t rank) {
  static const Tag kTags[] = {Tag::a, Tag::a, Tag::ab, Tag::abc, Tag::abcd, Tag::abcde, Tag::abcdef};
  return rank < 7 ? kTags[rank] : Tag::undef;
}

namespace {

struct NamedTag {
  const char* name;
  size_t rank;
  Tag tag;
};
// Activation layouts by name. "" is the plain tag of every rank.
const NamedTag kNamedTags[] = {
    {"nwc", 3, Tag::nwc},           {"nCw8c", 3, Tag::nCw8c},       {"nCw16c", 3, Tag::nCw16c},
    {"nhwc", 4, Tag::nhwc},         {"nChw4c", 4, Tag::nChw4c},     {"nChw8c", 4, Tag::nChw8c},
    {"nChw16c", 4, Tag::nChw16c},   {"ndhwc", 5, Tag::ndhwc},       {"nCdhw8c", 5, Tag::nCdhw8c},
    {"nCdhw16c", 5, Tag::nCdhw16c},
};

}  // namespace

Result<Tag> TagFor(const std::string& layout, size_t rank) {
  if (layout.empty() || layout == "nchw" || layout == "ncw" || layout == "ncdhw") {
    const Tag t = PlainTag(rank);
    if (t == Tag::undef) return Status::Unsupported("rank " + std::to_string(rank) + " too large for oneDNN");
    return t;
  }
  for (const NamedTag& n : kNamedTags) {
    if (layout == n.name) {
      if (n.rank != rank) {
        return Status::Invalid("layout '" + layout + "' needs rank " + std::to_string(n.rank) +
                               ", got rank " + std::to_string(rank));
      }
      return n.tag;
    }
  }
  return Status::Invalid("unknown layout '" + layout + "'");
}

std::string LayoutName(const memory::desc& md) {
  const memory::dims dims = md.dims();
  const auto dt = static_cast<Dt>(md.data.data_type);
  if (md == memory::desc(dims, dt, PlainTag(dims.size()))) return "";
  for (const NamedTag& n : kNamedTags) {
    if (n.rank == dims.size() && md == memory::desc(dims, dt, n.tag)) return n.name;
  }
  return "?";
}

std::string DefaultBlockedLayout() {
  static const std::string kLayout = Target::HostCpu().features.avx512f ? "nChw16c" : "nChw8c";
  return kLayout;
}

namespace {

// Physical element offset of logical index `pos` in a blocked desc (oneDNN's own rule:
// inner blocks innermost-first, then the outer strides).
int64_t PhysicalOffset(const dnnl_memory_desc_t& d, std::vector<int64_t> pos) {
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  int64_t off = d.offset0, blk_stride = 1;
  for (int i = b.inner_nblks - 1; i >= 0; --i) {
    const int dim = b.inner_idxs[i];
    off += pos[static_cast<size_t>(dim)] % b.inner_blks[i] * blk_stride;
    pos[static_cast<size_t>(dim)] /= b.inner_blks[i];
    blk_stride *= b.inner_blks[i];
  }
  for (int i = 0; i < d.ndims; ++i) off += pos[static_cast<size_t>(i)] * b.strides[i];
  return off;
}

}  // namespace

bool SameBytes(const memory::desc& a, const memory::desc& b) {
  if (a == b) return true;
  const dnnl_memory_desc_t &da = a.data, &db = b.data;
  if (da.format_kind != dnnl_blocked || db.format_kind != dnnl_blocked || da.ndims != db.ndims ||
      da.data_type != db.data_type || a.get_size() != b.get_size()) {
    return false;
  }
  int64_t n = 1;
  for (int i = 0; i < da.ndims; ++i) {
    if (da.dims[i] != db.dims[i] || da.dims[i] < 0) return false;
    n *= da.dims[i];
  }
  if (n > (int64_t{1} << 16)) return false;  // conservative: large tensors are not walked
  std::vector<int64_t> pos(static_cast<size_t>(da.ndims), 0);
  for (int64_t e = 0; e < n; ++e) {
    if (PhysicalOffset(da, pos) != PhysicalOffset(db, pos)) return false;
    for (int i = da.ndims - 1; i >= 0; --i) {  // next index, last dim fastest
      if (++pos[static_cast<size_t>(i)] < da.dims[i]) break;
      pos[static_cast<size_t>(i)] = 0;
    }
  }
  return true;
}

std::string FormatString(const memory::desc& md) {
  // oneDNN 2.6 exports no md → string helper; spell out the blocking descriptor.
  const dnnl_memory_desc_t& d = md.data;
  auto list = [](const dnnl_dim_t* v, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += (i ? "x" : "") + std::to_string(v[i]);
    return s;
  };
  std::string s = std::string(dnnl_dt2str(d.data_type)) + " dims=" + list(d.dims, d.ndims) +
                  " padded=" + list(d.padded_dims, d.ndims) + " off=" + std::to_string(d.offset0) +
                  " kind=" + std::to_string(static_cast<int>(d.format_kind));
  if (d.format_kind == dnnl_blocked) {
    const dnnl_blocking_desc_t& b = d.format_desc.blocking;
    s += " strides=" + list(b.strides, d.ndims) + " blocks=" + list(b.inner_blks, b.inner_nblks) +
         " idxs=" + list(b.inner_idxs, b.inner_nblks);
  }
  if (d.format_kind == dnnl_format_kind_wino) {
    const dnnl_wino_desc_t& w = d.format_desc.wino_desc;
    s += " wino=" + std::to_string(static_cast<int>(w.wino_format)) + "/" + std::to_string(w.r) + "/" +
         std::to_string(w.alpha) + "/" + std::to_string(w.ic_block) + "/" + std::to_string(w.oc_block) +
         "/" + std::to_string(w.ic2_block) + "/" + std::to_string(w.oc2_block) + "/" + std::to_string(w.size);
  }
  s += " extra=" + std::to_string(d.extra.flags) + "/" + std::to_string(d.extra.compensation_mask) +
       "/" + std::to_string(d.extra.scale_adjust);
  return s;
}

int64_t ConvMacs(const memory::dims& dst, const memory::dims& wei) {
  int64_t macs = 1;
  for (int64_t d : dst) macs *= d;
  for (size_t i = 1; i < wei.size(); ++i) macs *= wei[i];  // C (or M/G x C/G) x kernel
  return wei.size() == dst.size() + 1 ? macs / wei[1] : macs;
}

bool ActivationSupported(const Node& node) {
  dnnl::post_ops ops;
  return AppendActivation(node, ops).ok();
}

Status AppendActivation(const Node& node, dnnl::post_ops& ops) {
  using A = dnnl::algorithm;
  const std::string act = node.GetString("activation", "");
  const std::vector<float> p = node.GetFloats("activation_params", {});
  auto param = [&](size_t i, float def) { return i < p.size() ? p[i] : def; };
  if (act.empty()) {
    // No activation: at most the post_affine below.
  } else if (act == "Relu") {
    ops.append_eltwise(1.f, A::eltwise_relu, 0.f, 0.f);
  } else if (act == "LeakyRelu") {
    ops.append_eltwise(1.f, A::eltwise_relu, param(0, 0.01f), 0.f);
  } else if (act == "Clip") {
    ops.append_eltwise(1.f, A::eltwise_clip_v2, param(0, -3.4028235e38f), param(1, 3.4028235e38f));
  } else if (act == "Sigmoid") {
    ops.append_eltwise(1.f, A::eltwise_logistic, 0.f, 0.f);
  } else if (act == "HardSigmoid") {
    // oneDNN 2.6 has no hardsigmoid: clip(alpha*x + beta, 0, 1).
    ops.append_eltwise(1.f, A::eltwise_linear, param(0, 0.2f), param(1, 0.5f));
    ops.append_eltwise(1.f, A::eltwise_clip_v2, 0.f, 1.f);
  } else if (act == "HardSwish") {
    ops.append_eltwise(1.f, A::eltwise_hardswish, 0.f, 0.f);  // x*relu6(x+3)/6 in 2.x
  } else if (act == "Tanh") {
    ops.append_eltwise(1.f, A::eltwise_tanh, 0.f, 0.f);
  } else if (act == "SiLU") {
    ops.append_eltwise(1.f, A::eltwise_swish, 1.f, 0.f);
  } else if (act == "GeluTanh") {
    ops.append_eltwise(1.f, A::eltwise_gelu_tanh, 0.f, 0.f);
  } else if (act == "Gelu") {
    // activation_params[0] != 0 (or approximate="tanh") selects the tanh approximation.
    const bool tanh = param(0, 0.f) != 0.f || node.GetString("approximate", "none") == "tanh";
    ops.append_eltwise(1.f, tanh ? A::eltwise_gelu_tanh : A::eltwise_gelu_erf, 0.f, 0.f);
  } else {
    return ops::NodeError(node, "activation '" + act + "' has no oneDNN post-op");
  }
  if (node.Has("post_affine")) {  // FusedConv's scale and shift after the activation
    const std::vector<float> pa = node.GetFloats("post_affine");
    if (pa.size() != 2) return ops::NodeError(node, "post_affine takes [scale, shift]");
    ops.append_eltwise(1.f, A::eltwise_linear, pa[0], pa[1]);
  }
  return Status::Ok();
}

Status GuardError(const Node& node, const char* what, const char* message) {
  if (!message) return Status::Internal("node '" + node.name + "': out of memory in oneDNN " + what);
  return Status::Internal("node '" + node.name + "' (" + node.op_type + "): oneDNN " + what + ": " + message);
}

void* ThreadScratch(int slot, size_t bytes) {
  struct Buf {
    void* p = nullptr;
    size_t size = 0;
    ~Buf() { std::free(p); }
  };
  thread_local Buf bufs[kNumSlots];
  Buf& b = bufs[slot];
  if (b.size < bytes) {
    std::free(b.p);
    const size_t rounded = (bytes + 63) / 64 * 64;
    b.p = std::aligned_alloc(64, rounded);
    b.size = b.p ? rounded : 0;
  }
  return b.p;
}

dnnl::primitive_attr UserScratchAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

ArgsKey::ArgsKey() {
  static std::atomic<uint64_t> next{1};
  value = next.fetch_add(1, std::memory_order_relaxed);
}

struct ExecArgs::Slots {
  std::vector<std::pair<int, memory>> mems;
  bool scratch_known = false;
  memory scratch;  // empty when the primitive needs none
  size_t scratch_bytes = 0;
};

namespace {

// The calling thread's slot lists by (entry key, part). Keys of destroyed kernels are never
// asked for again; the map is emptied when it grows past kMaxSlotLists (a process that
// builds and runs thousands of engines), but never while an ExecArgs of this thread holds
// a list (depth > 0).
constexpr size_t kMaxSlotLists = 16384;
struct ThreadSlots {
  std::unordered_map<uint64_t, ExecArgs::Slots> lists;
  int depth = 0;
};
ThreadSlots& MySlots() {
  thread_local ThreadSlots t;
  return t;
}

}  // namespace

ExecArgs::ExecArgs(const ArgsKey& key, int part) {
  ThreadSlots& t = MySlots();
  if (t.depth == 0 && t.lists.size() >= kMaxSlotLists) t.lists.clear();
  ++t.depth;
  slots_ = &t.lists[key.value * 8 + static_cast<uint64_t>(part)];
}

ExecArgs::~ExecArgs() { --MySlots().depth; }

size_t ExecArgs::ListsOfThisThread() { return MySlots().lists.size(); }

ExecArgs& ExecArgs::Add(int arg, const memory::desc& md, const void* data) {
  if (n_ == slots_->mems.size()) {
    slots_->mems.emplace_back(arg, memory(md, CpuEngine(), const_cast<void*>(data)));
  } else {
    auto& [a, m] = slots_->mems[n_];
    if (a != arg) throw dnnl::error(dnnl_invalid_arguments, "ExecArgs: arguments added in another order");
    m.set_data_handle(const_cast<void*>(data));
  }
  ++n_;
  return *this;
}

void ExecArgs::Run(const dnnl::primitive& prim, const dnnl::primitive_desc_base* pd) {
  if (n_ != slots_->mems.size()) throw dnnl::error(dnnl_invalid_arguments, "ExecArgs: fewer arguments than before");
  if (pd && !slots_->scratch_known) {
    const memory::desc sd = pd->scratchpad_desc();
    slots_->scratch_bytes = sd.get_size();
    if (slots_->scratch_bytes > 0) slots_->scratch = memory(sd, CpuEngine(), nullptr);
    slots_->scratch_known = true;
  }
  constexpr size_t kMaxArgs = 16;  // one of them kept for the scratchpad
  if (n_ >= kMaxArgs) throw dnnl::error(dnnl_invalid_arguments, "ExecArgs: too many arguments");
  dnnl_exec_arg_t args[kMaxArgs];
  size_t n = 0;
  for (size_t i = 0; i < n_; ++i) args[n++] = {slots_->mems[i].first, slots_->mems[i].second.get()};
  if (pd && slots_->scratch) {
    void* p = ThreadScratch(kScratchpad, slots_->scratch_bytes);
    if (!p) throw std::bad_alloc();
    slots_->scratch.set_data_handle(p);
    args[n++] = {DNNL_ARG_SCRATCHPAD, slots_->scratch.get()};
  }
  dnnl::stream& s = ThreadStream();
  dnnl::error::wrap_c_api(dnnl_primitive_execute(prim.get(), s.get(), static_cast<int>(n), args),
                          "could not execute a primitive");
  s.wait();
}

Result<std::vector<uint8_t>> ReorderBytes(const Node& node, const memory::desc& src_md,
                                          const void* src, const memory::desc& dst_md) {
  std::vector<uint8_t> out(dst_md.get_size(), 0);
  Status st = Guard(node, "weights reorder", [&]() -> Status {
    dnnl::engine& e = CpuEngine();
    memory s(src_md, e, const_cast<void*>(src));
    memory d(dst_md, e, out.data());
    try {
      dnnl::reorder(s, d).execute(ThreadStream(), s, d);
    } catch (const dnnl::error&) {
      // Some packed formats (e.g. with s8 compensation) only reorder from plain.
      const memory::desc plain(src_md.dims(), static_cast<Dt>(src_md.data.data_type),
                               PlainTag(src_md.dims().size()));
      std::vector<uint8_t> tmp(plain.get_size());
      memory m(plain, e, tmp.data());
      dnnl::reorder(s, m).execute(ThreadStream(), s, m);
      dnnl::reorder(m, d).execute(ThreadStream(), m, d);
    }
    ThreadStream().wait();
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

std::vector<std::string> LayoutsFromParams(const nlohmann::json& params, const char* key,
                                           size_t n) {
  std::vector<std::string> out(n);
  if (params.contains(key) && params[key].is_array()) {
    for (size_t i = 0; i < n && i < params[key].size(); ++i) out[i] = params[key][i].get<std::string>();
  }
  return out;
}

std::vector<int64_t>& KeyBuffer() {
  thread_local std::vector<int64_t> key;
  key.clear();
  return key;
}

const std::vector<int64_t>& ShapeKey(std::initializer_list<const TensorRef*> inputs) {
  std::vector<int64_t>& key = KeyBuffer();
  for (const TensorRef* r : inputs) {
    if (r) key.insert(key.end(), r->shape.begin(), r->shape.end());
    key.push_back(-1);
  }
  return key;
}

std::vector<int64_t> Concretize(const std::vector<int64_t>& shape, int64_t fill) {
  std::vector<int64_t> out = shape;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] < 0) out[i] = i == 0 ? 1 : fill;
  }
  return out;
}

bool WinogradAvailable() {
  static const bool kAvailable = [] {
    try {
      const memory::desc src({1, 16, 8, 8}, Dt::f32, Tag::any), wei({16, 16, 3, 3}, Dt::f32, Tag::any),
          dst({1, 16, 8, 8}, Dt::f32, Tag::any);
      dnnl::convolution_forward::primitive_desc pd(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd,
                                          src, wei, dst, {1, 1}, {1, 1}, {1, 1}),
          CpuEngine());
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return kAvailable;
}

void QuantizeRowsInt8(const float* w, int64_t rows, int64_t per, int8_t* q, float* scales) {
  for (int64_t o = 0; o < rows; ++o) {
    const float* r = w + o * per;
    float amax = 0.f;
    for (int64_t i = 0; i < per; ++i) amax = std::max(amax, std::fabs(r[i]));
    const float s = amax > 0.f ? amax / 127.f : 1.f;
    scales[o] = s;
    for (int64_t i = 0; i < per; ++i) {
      q[o * per + i] = static_cast<int8_t>(std::clamp(std::nearbyint(r[i] / s), -127.f, 127.f));
    }
  }
}

Result<const void*> QuantizePerTensor(const Node& node, const float* p, int64_t n, float* scale, Dt* dt) {
  float lo = 0.f, hi = 0.f;
#pragma omp parallel for reduction(min : lo) reduction(max : hi)
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, p[i]);
    hi = std::max(hi, p[i]);
  }
  if (!std::isfinite(lo) || !std::isfinite(hi)) return ops::NodeError(node, "non-finite input to an int8 kernel");
  *dt = lo < 0.f ? Dt::s8 : Dt::u8;
  const float range = lo < 0.f ? std::max(-lo, hi) / 127.f : hi / 255.f;
  *scale = range > 0.f ? range : 1.f;
  const float inv = 1.f / *scale;
  void* buf = ThreadScratch(kSrcConvert, static_cast<size_t>(n));
  if (*dt == Dt::u8) {
    uint8_t* q = static_cast<uint8_t*>(buf);
#pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) q[i] = static_cast<uint8_t>(std::min(255.f, std::nearbyint(p[i] * inv)));
  } else {
    int8_t* q = static_cast<int8_t*>(buf);
#pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(std::clamp(std::nearbyint(p[i] * inv), -127.f, 127.f));
  }
  return static_cast<const void*>(buf);
}

bool PlainConversionToBf16(const memory::desc& from, const memory::desc& to) {
  const dnnl_memory_desc_t& a = from.data;
  const dnnl_memory_desc_t& b = to.data;
  if (a.data_type != dnnl_f32 || b.data_type != dnnl_bf16) return false;
  if (a.format_kind != dnnl_blocked || b.format_kind != dnnl_blocked) return false;
  if (a.ndims != b.ndims || a.offset0 != 0 || b.offset0 != 0 || a.extra.flags || b.extra.flags) return false;
  if (a.format_desc.blocking.inner_nblks != 0 || b.format_desc.blocking.inner_nblks != 0) return false;
  int64_t n = 1;
  for (int d = 0; d < a.ndims; ++d) {
    if (a.dims[d] != b.dims[d] || a.padded_dims[d] != a.dims[d] || b.padded_dims[d] != b.dims[d] ||
        a.padded_offsets[d] != 0 || b.padded_offsets[d] != 0 ||
        a.format_desc.blocking.strides[d] != b.format_desc.blocking.strides[d]) {
      return false;
    }
    n *= a.dims[d];
  }
  // Dense: strides with gaps would make the descs larger than the elements.
  return from.get_size() == static_cast<size_t>(n) * 4 && to.get_size() == static_cast<size_t>(n) * 2;
}

void SrcConversion::Init(const memory::desc& from, const memory::desc& to) {
  from_ = from;
  to_ = to;
  if (from == to) return;
  if (PlainConversionToBf16(from, to)) {
    native_ = true;
    elements_ = static_cast<int64_t>(from.get_size() / sizeof(float));
    return;
  }
  reorder_.emplace(dnnl::reorder::primitive_desc(CpuEngine(), from, CpuEngine(), to));
}

void SrcConversion::Run(const void* x, void* out, const ArgsKey& key, int part, int threads) const {
  if (native_) {
    native::ConvertToBf16(static_cast<const float*>(x), static_cast<uint16_t*>(out), elements_, threads);
  } else if (reorder_) {
    ExecArgs(key, part).Add(DNNL_ARG_FROM, from_, x).Add(DNNL_ARG_TO, to_, out).Run(*reorder_);
  }
}

}  // namespace switchyard::onednn
