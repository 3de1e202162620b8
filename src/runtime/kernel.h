// The runtime's kernel contract. A Kernel is created once when an engine is loaded and is
// then shared, immutable, by every session: Run must be safe to call from many threads
// at once (no mutable members; per-call scratch on the stack, in thread_local buffers or
// in io.scratch). Kernels read and write plain buffers described by TensorRef; the runtime
// owns every buffer (arena or heap).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "switchyard/status.h"

namespace switchyard {

// A non-owning view of a tensor buffer (row-major in the logical shape unless `layout`
// names a blocked oneDNN layout, e.g. "nChw16c"; then `data` holds that layout and
// `shape` stays logical NCHW).
struct TensorRef {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  void* data = nullptr;
  std::string layout;  // "" = plain row-major

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  template <typename T> T* as() const { return static_cast<T*>(data); }
};

struct KernelIO {
  std::vector<const TensorRef*> inputs;  // nullptr for omitted optional inputs
  std::vector<TensorRef*> outputs;       // shapes and buffers set by the runtime
  int threads = 1;                        // intra-op threads this call may use
  void* device = nullptr;                 // non-CPU targets: the session's execution state
                                          // (cuda::Exec for cuda; backends/cuda/common.h)
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Output shapes for these inputs. Shape-carrying inputs (int64 tensors) have their
  // data available. Called before the runtime allocates the outputs.
  virtual Result<std::vector<std::vector<int64_t>>> OutputShapes(
      const std::vector<const TensorRef*>& inputs) const = 0;
  // Computes the outputs into io.outputs (allocated with the shapes above).
  virtual Status Run(const KernelIO& io) const = 0;
};

}  // namespace switchyard
