// Tensor: a dense, row-major, owning n-d array of one DataType. Value semantics (copy
// copies the bytes, move is cheap). Not synchronised: share const Tensors across threads.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "ir/dtype.h"
#include "switchyard/status.h"

namespace switchyard {

// Number of elements of `shape`, or an error when a dimension is negative or the
// product overflows `limit` elements.
Result<int64_t> CheckedNumElements(const std::vector<int64_t>& shape,
                                   int64_t limit = (int64_t{1} << 40));
std::string ShapeToString(const std::vector<int64_t>& shape);  // "[1,3,224,224]"

// An allocator whose value-less construct() default-initialises: vector::resize(n) leaves
// the new bytes unwritten, resize(n, 0) still zeroes them.
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U> struct rebind { using other = DefaultInitAllocator<U>; };
  DefaultInitAllocator() = default;
  template <typename U> DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <typename U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
  template <typename U, typename... Args> void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor. The shape must be valid (checked by callers for user data).
  Tensor(DataType dtype, std::vector<int64_t> shape);
  // A tensor whose bytes are not written (not for strings): for outputs that a kernel
  // overwrites entirely, saving a pass over the memory (GPT-2's 25 MB logits).
  static Tensor Uninitialized(DataType dtype, std::vector<int64_t> shape);

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return bytes_.size(); }
  bool defined() const { return dtype_ != DataType::kUndefined; }

  void* raw() { return bytes_.data(); }
  const void* raw() const { return bytes_.data(); }
  template <typename T> T* data() { return reinterpret_cast<T*>(bytes_.data()); }
  template <typename T> const T* data() const {
    return reinterpret_cast<const T*>(bytes_.data());
  }
  std::vector<std::string>& strings() { return strings_; }
  const std::vector<std::string>& strings() const { return strings_; }

  // Element access through double / int64 for dtype-generic reference code. Float16
  // and bfloat16 convert exactly to double; int64 above 2^53 loses bits via double, so
  // integer code should use the int64 accessors.
  double GetDouble(int64_t i) const;
  void SetDouble(int64_t i, double v);  // rounds/casts like a C++ static_cast (saturating not implied)
  int64_t GetInt64(int64_t i) const;
  void SetInt64(int64_t i, int64_t v);
  std::vector<int64_t> ToInt64Vector() const;  // for int32/int64/... shape tensors
  std::vector<double> ToDoubleVector() const;

  // Same bytes, new shape with the same element count.
  Tensor Reshaped(std::vector<int64_t> shape) const;

  static Tensor FromInt64(const std::vector<int64_t>& values, std::vector<int64_t> shape);
  static Tensor FromFloat(const std::vector<float>& values, std::vector<int64_t> shape);
  static Tensor Scalar(DataType dtype, double v);

  // Bytewise equality of dtype, shape and contents.
  bool operator==(const Tensor& o) const;

 private:
  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::vector<uint8_t, DefaultInitAllocator<uint8_t>> bytes_;
  std::vector<std::string> strings_;
};

}  // namespace switchyard
