// Shared machinery of the oneDNN kernel provider: the CPU engine, dtype and layout-tag
// mapping, post-ops from a fused node's `activation`, dnnl::error → Status, per-thread
// scratch, thread-count scoping and a per-shape primitive cache.
//
// Thread safety: the engine is created once and shared; oneDNN primitives are immutable
// and may execute concurrently with different memory objects, so kernels keep their
// dnnl::memory objects per thread (ExecArgs) and use user-mode scratchpads from
// thread-local buffers.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cpu/op_impl.h"
#include "ir/graph.h"
#include "runtime/threads.h"
#include "switchyard/status.h"

namespace switchyard::onednn {

using dnnl::memory;
using Tag = dnnl::memory::format_tag;
using Dt = dnnl::memory::data_type;

// A convolution's or GEMM's compute precision (the route's precision and quant.weights) and
// the source data type its primitive takes for it (int8: u8 activations).
enum class Prec { kF32, kBf16, kInt8 };
inline Dt SrcDt(Prec p) { return p == Prec::kBf16 ? Dt::bf16 : p == Prec::kInt8 ? Dt::u8 : Dt::f32; }

dnnl::engine& CpuEngine();
// A stream of the calling thread (CPU streams are cheap but not free to create).
dnnl::stream& ThreadStream();

// f32, bf16, f16, s8, u8, s32; error for other types.
Result<Dt> ToDnnl(DataType t);
memory::dims Dims(const std::vector<int64_t>& shape);

// Layout strings are "" (plain row-major) or a oneDNN tag name ("nhwc", "nChw16c", ...).
// The plain tag of a rank (a, ab, abc, ...).
Tag PlainTag(size_t rank);
// Tag for a layout string at `rank`; error for unknown names or a rank mismatch.
Result<Tag> TagFor(const std::string& layout, size_t rank);
// The layout string of `md` when it equals one of the named tags of its rank ("" for
// plain), else "?" (a layout without a name, e.g. a padded weights format).
std::string LayoutName(const memory::desc& md);
// The blocked activation tag used when the primitive's own choice has no name:
// nChw16c with AVX-512, else nChw8c.
std::string DefaultBlockedLayout();
// True when `a` and `b` place every element at the same byte (e.g. nchw and nhwc of a
// [N,C,1,1] tensor): a reorder between them moves nothing. Walks tensors of at most 65,536
// elements; larger ones that are not equal descs are reported different.
bool SameBytes(const memory::desc& a, const memory::desc& b);
// oneDNN's own description of a memory format ("f32::blocked:ABcd16b16a::f0"), stored in
// engines so that a load on another CPU can tell that the packing differs.
std::string FormatString(const memory::desc& md);

// Multiply-adds of a convolution: dst [N, M, spatial...] by weights [M, C, k...] or, grouped,
// [G, M/G, C/G, k...].
int64_t ConvMacs(const memory::dims& dst, const memory::dims& wei);

// Appends the eltwise post-ops of `activation`/`activation_params` (fused ops); nothing
// for an empty activation. Errors name the node for unknown activations.
Status AppendActivation(const Node& node, dnnl::post_ops& ops);
// True when the activation string is one AppendActivation maps.
bool ActivationSupported(const Node& node);

// Runs `fn` converting dnnl::error into a Status naming the node and the step. A template,
// not a std::function: a capturing lambda would be copied to the heap on every call.
Status GuardError(const Node& node, const char* what, const char* message);
template <typename Fn>
Status Guard(const Node& node, const char* what, const Fn& fn) {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    return GuardError(node, what, e.what());
  } catch (const std::bad_alloc&) {
    return GuardError(node, what, nullptr);
  }
}

// Per-thread, 64-byte aligned scratch; `slot` separates concurrent uses within a call.
// The pointer stays valid until the same thread asks for the same slot again.
void* ThreadScratch(int slot, size_t bytes);
enum ScratchSlot {
  kScratchpad = 0, kSrcConvert = 1, kAux = 2, kAux2 = 3, kDstConvert = 4, kSrcStage = 5,
  kScaledWeights = 6, kScaledPacked = 7, kNumSlots = 8
};

// Per-tensor dynamic quantization of `n` floats into the calling thread's kSrcConvert
// scratch: u8 when nothing is negative, else symmetric s8. Sets the scale and type.
Result<const void*> QuantizePerTensor(const Node& node, const float* p, int64_t n, float* scale, Dt* dt);
// oneDNN 2.6 implements Winograd convolution with AVX-512 only: true where one 3x3
// convolution of that algorithm can be created on this CPU (probed once).
bool WinogradAvailable();
// Symmetric int8 quantization of `rows` rows of `per` floats (a convolution's weights per
// output channel): scales[r] = max |row| / 127 (1 for a zero row), q rounded and clamped to
// [-127, 127].
void QuantizeRowsInt8(const float* w, int64_t rows, int64_t per, int8_t* q, float* scales);

// A unique key per cached primitive (ShapeCache entries hold one: `ArgsKey args_key`).
struct ArgsKey {
  ArgsKey();
  uint64_t value;
};

// The memory arguments of one primitive execution, made without heap allocation once warm.
// A dnnl::memory object costs several allocations, and building them per call (plus the
// argument map) took most of a small step's time (a [1,64]x[64,64] MatMul step: 40 heap
// allocations). The objects are made once per thread and per (entry key, `part`: several
// executions of one entry, e.g. a layout conversion before the primitive) and re-pointed at
// each call's buffers with set_data_handle; Add must be called in the same order with the
// same descs each time. Kernels are shared by sessions on many threads: nothing is shared.
class ExecArgs {
 public:
  explicit ExecArgs(const ArgsKey& key, int part = 0);
  ~ExecArgs();
  ExecArgs(const ExecArgs&) = delete;
  ExecArgs& operator=(const ExecArgs&) = delete;
  // `md` is read only the first time this slot is made.
  ExecArgs& Add(int arg, const memory::desc& md, const void* data);
  // Executes `prim` on the thread's stream and waits; with `pd`, adds a user-mode
  // scratchpad of its size (queried once per slot list).
  void Run(const dnnl::primitive& prim, const dnnl::primitive_desc_base* pd = nullptr);
  // How many slot lists the calling thread holds (tests).
  static size_t ListsOfThisThread();

  struct Slots;

 private:
  Slots* slots_;
  size_t n_ = 0;
};
// A kernel's conversion of its f32 input into the desc its primitive reads (bf16
// precision, another layout, or both). A plain f32 -> bf16 conversion that keeps the layout
// (same dims and strides, dense, no blocking: every bf16 conv and MatMul input here) runs
// natively over the run's threads (native::ConvertToBf16); oneDNN 2.6's jit:uni reorder did
// it at 2-7 GB/s, a fifth of a bf16 ResNet-50 run on a 2-core Zen 5. Others are oneDNN
// reorders. Set up once per cached entry, then only read.
class SrcConversion {
 public:
  // Nothing to convert when from == to. May throw dnnl::error (creating a reorder).
  void Init(const memory::desc& from, const memory::desc& to);
  bool needed() const { return native_ || reorder_.has_value(); }
  // Converts `x` (laid out as `from`) into `out` (`to`'s size); `key`/`part` as ExecArgs.
  void Run(const void* x, void* out, const ArgsKey& key, int part, int threads) const;

 private:
  memory::desc from_, to_;
  bool native_ = false;
  int64_t elements_ = 0;
  std::optional<dnnl::reorder> reorder_;
};

// True when `to` is `from` with data type bf16 instead of f32, both dense and unblocked.
bool PlainConversionToBf16(const memory::desc& from, const memory::desc& to);

// A primitive attribute with a user scratchpad (set before creating any primitive desc).
dnnl::primitive_attr UserScratchAttr();

// Reorders `src` (desc + data) into `dst_md`, returning the bytes (zero-padded). Used to
// pack weights; tries a direct reorder, then through the plain layout of the same dims.
Result<std::vector<uint8_t>> ReorderBytes(const Node& node, const memory::desc& src_md,
                                          const void* src, const memory::desc& dst_md);

// Layout strings from params[key] (missing → `n` plain entries).
std::vector<std::string> LayoutsFromParams(const nlohmann::json& params, const char* key,
                                           size_t n);

// Cache of per-shape state (primitives for a runtime shape). Entries are built once under
// the mutex and then only read. The entry found last is checked first without the lock
// (map nodes never move or go away while the cache lives), so a step whose shape does not
// change takes no lock.
template <typename Entry>
class ShapeCache {
 public:
  using Ptr = std::shared_ptr<const Entry>;
  template <typename Maker>
  Result<Ptr> Get(const std::vector<int64_t>& key, const Maker& make) const {
    if (const Item* last = last_.load(std::memory_order_acquire); last && last->first == key) {
      return last->second;
    }
    const std::vector<int64_t> own(key);  // `key` may be a reused buffer (KeyBuffer)
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(own);
    if (it == map_.end()) {
      Result<Ptr> made = make();
      if (!made.ok()) return made.status();
      it = map_.emplace(own, made.value()).first;
    }
    last_.store(&*it, std::memory_order_release);
    return it->second;
  }

 private:
  using Item = std::pair<const std::vector<int64_t>, Ptr>;
  mutable std::mutex mu_;
  mutable std::map<std::vector<int64_t>, Ptr> map_;
  mutable std::atomic<const Item*> last_{nullptr};
};

// The calling thread's key buffer, cleared: cache keys are built in it without allocating
// once it has grown. Valid until the thread's next KeyBuffer() call.
std::vector<int64_t>& KeyBuffer();
// Concatenation of input shapes (with a separator) as a cache key, in KeyBuffer().
const std::vector<int64_t>& ShapeKey(std::initializer_list<const TensorRef*> inputs);

// Static shape with dynamic (-1) dimensions replaced: dim 0 by 1, others by `fill`. Build-
// time primitives need concrete dims; runtime shapes get their own primitives.
std::vector<int64_t> Concretize(const std::vector<int64_t>& shape, int64_t fill = 32);

}  // namespace switchyard::onednn
