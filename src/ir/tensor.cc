#include "ir/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace switchyard {

Result<int64_t> CheckedNumElements(const std::vector<int64_t>& shape, int64_t limit) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t d = shape[i];
    if (d < 0) {
      return Status::OutOfRange("dimension " + std::to_string(i) + " of shape " +
                                ShapeToString(shape) + " is negative");
    }
    if (d != 0 && n > limit / d) {
      return Status::OutOfRange("shape " + ShapeToString(shape) + " has more than " +
                                std::to_string(limit) + " elements");
    }
    n *= d;
  }
  return n;
}

std::string ShapeToString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Tensor::Tensor(DataType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = 1;
  for (int64_t d : shape_) numel_ *= d;
  if (dtype_ == DataType::kString) {
    strings_.resize(static_cast<size_t>(numel_));
  } else {
    bytes_.resize(static_cast<size_t>(numel_) * DataTypeSize(dtype_), uint8_t{0});
  }
}

Tensor Tensor::Uninitialized(DataType dtype, std::vector<int64_t> shape) {
  assert(dtype != DataType::kString);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = 1;
  for (int64_t d : t.shape_) t.numel_ *= d;
  t.bytes_.resize(static_cast<size_t>(t.numel_) * DataTypeSize(dtype));  // default-init: unwritten
  return t;
}

double Tensor::GetDouble(int64_t i) const {
  const void* p = bytes_.data();
  switch (dtype_) {
    case DataType::kFloat: return static_cast<const float*>(p)[i];
    case DataType::kDouble: return static_cast<const double*>(p)[i];
    case DataType::kFloat16: return HalfToFloat(static_cast<const uint16_t*>(p)[i]);
    case DataType::kBfloat16: return Bfloat16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case DataType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DataType::kUint8: return static_cast<const uint8_t*>(p)[i];
    case DataType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DataType::kUint16: return static_cast<const uint16_t*>(p)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DataType::kUint32: return static_cast<const uint32_t*>(p)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DataType::kUint64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case DataType::kBool: return static_cast<const uint8_t*>(p)[i] ? 1.0 : 0.0;
    default: return 0.0;
  }
}

namespace {
template <typename T>
T CastFromDouble(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return 0;
    // Out-of-range float to integer is undefined in C++; clamp to keep the reference
    // executor free of UB (ONNX leaves the result unspecified).
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo) return std::numeric_limits<T>::min();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}
}  // namespace

void Tensor::SetDouble(int64_t i, double v) {
  void* p = bytes_.data();
  switch (dtype_) {
    case DataType::kFloat: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DataType::kDouble: static_cast<double*>(p)[i] = v; break;
    case DataType::kFloat16:
      static_cast<uint16_t*>(p)[i] = FloatToHalf(static_cast<float>(v));
      break;
    case DataType::kBfloat16:
      static_cast<uint16_t*>(p)[i] = FloatToBfloat16(static_cast<float>(v));
      break;
    case DataType::kInt8: static_cast<int8_t*>(p)[i] = CastFromDouble<int8_t>(v); break;
    case DataType::kUint8: static_cast<uint8_t*>(p)[i] = CastFromDouble<uint8_t>(v); break;
    case DataType::kInt16: static_cast<int16_t*>(p)[i] = CastFromDouble<int16_t>(v); break;
    case DataType::kUint16: static_cast<uint16_t*>(p)[i] = CastFromDouble<uint16_t>(v); break;
    case DataType::kInt32: static_cast<int32_t*>(p)[i] = CastFromDouble<int32_t>(v); break;
    case DataType::kUint32: static_cast<uint32_t*>(p)[i] = CastFromDouble<uint32_t>(v); break;
    case DataType::kInt64: static_cast<int64_t*>(p)[i] = CastFromDouble<int64_t>(v); break;
    case DataType::kUint64: static_cast<uint64_t*>(p)[i] = CastFromDouble<uint64_t>(v); break;
    case DataType::kBool: static_cast<uint8_t*>(p)[i] = (v != 0.0) ? 1 : 0; break;
    default: break;
  }
}

int64_t Tensor::GetInt64(int64_t i) const {
  const void* p = bytes_.data();
  switch (dtype_) {
    case DataType::kInt64: return static_cast<const int64_t*>(p)[i];
    case DataType::kUint64: return static_cast<int64_t>(static_cast<const uint64_t*>(p)[i]);
    case DataType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DataType::kUint32: return static_cast<const uint32_t*>(p)[i];
    case DataType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DataType::kUint16: return static_cast<const uint16_t*>(p)[i];
    case DataType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DataType::kUint8: return static_cast<const uint8_t*>(p)[i];
    case DataType::kBool: return static_cast<const uint8_t*>(p)[i] ? 1 : 0;
    default: return CastFromDouble<int64_t>(GetDouble(i));
  }
}

void Tensor::SetInt64(int64_t i, int64_t v) {
  void* p = bytes_.data();
  switch (dtype_) {
    case DataType::kInt64: static_cast<int64_t*>(p)[i] = v; break;
    case DataType::kUint64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); break;
    case DataType::kInt32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
    case DataType::kUint32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); break;
    case DataType::kInt16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); break;
    case DataType::kUint16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); break;
    case DataType::kInt8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
    case DataType::kUint8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
    case DataType::kBool: static_cast<uint8_t*>(p)[i] = v != 0; break;
    default: SetDouble(i, static_cast<double>(v)); break;
  }
}

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = GetInt64(i);
  return out;
}

std::vector<double> Tensor::ToDoubleVector() const {
  std::vector<double> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = GetDouble(i);
  return out;
}

Tensor Tensor::Reshaped(std::vector<int64_t> shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::FromInt64(const std::vector<int64_t>& values, std::vector<int64_t> shape) {
  Tensor t(DataType::kInt64, std::move(shape));
  assert(static_cast<size_t>(t.numel()) == values.size());
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size() * 8);
  return t;
}

Tensor Tensor::FromFloat(const std::vector<float>& values, std::vector<int64_t> shape) {
  Tensor t(DataType::kFloat, std::move(shape));
  assert(static_cast<size_t>(t.numel()) == values.size());
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size() * 4);
  return t;
}

Tensor Tensor::Scalar(DataType dtype, double v) {
  Tensor t(dtype, {});
  t.SetDouble(0, v);
  return t;
}

bool Tensor::operator==(const Tensor& o) const {
  return dtype_ == o.dtype_ && shape_ == o.shape_ && bytes_ == o.bytes_ &&
         strings_ == o.strings_;
}

}  // namespace switchyard
