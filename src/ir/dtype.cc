#include "ir/dtype.h"

#include <cmath>

namespace switchyard {

size_t DataTypeSize(DataType t) {
  switch (t) {
    case DataType::kFloat: return 4;
    case DataType::kUint8: return 1;
    case DataType::kInt8: return 1;
    case DataType::kUint16: return 2;
    case DataType::kInt16: return 2;
    case DataType::kInt32: return 4;
    case DataType::kInt64: return 8;
    case DataType::kBool: return 1;
    case DataType::kFloat16: return 2;
    case DataType::kDouble: return 8;
    case DataType::kUint32: return 4;
    case DataType::kUint64: return 8;
    case DataType::kBfloat16: return 2;
    case DataType::kString:
    case DataType::kUndefined: return 0;
  }
  return 0;
}

const char* DataTypeName(DataType t) {
  switch (t) {
    case DataType::kFloat: return "float32";
    case DataType::kUint8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUint16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kDouble: return "float64";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
    case DataType::kBfloat16: return "bfloat16";
    case DataType::kUndefined: return "undefined";
  }
  return "undefined";
}

DataType DataTypeFromName(const std::string& n) {
  if (n == "float32" || n == "float" || n == "f32") return DataType::kFloat;
  if (n == "float64" || n == "double" || n == "f64") return DataType::kDouble;
  if (n == "float16" || n == "half" || n == "f16") return DataType::kFloat16;
  if (n == "bfloat16" || n == "bf16") return DataType::kBfloat16;
  if (n == "int8") return DataType::kInt8;
  if (n == "int16") return DataType::kInt16;
  if (n == "int32") return DataType::kInt32;
  if (n == "int64") return DataType::kInt64;
  if (n == "uint8") return DataType::kUint8;
  if (n == "uint16") return DataType::kUint16;
  if (n == "uint32") return DataType::kUint32;
  if (n == "uint64") return DataType::kUint64;
  if (n == "bool") return DataType::kBool;
  if (n == "string") return DataType::kString;
  return DataType::kUndefined;
}

bool IsKnownDataType(int32_t v) {
  return (v >= 1 && v <= 13) || v == 16;
}

bool IsFloatType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 ||
         t == DataType::kBfloat16;
}

bool IsIntegerType(DataType t) {
  switch (t) {
    case DataType::kUint8: case DataType::kInt8: case DataType::kUint16:
    case DataType::kInt16: case DataType::kInt32: case DataType::kInt64:
    case DataType::kUint32: case DataType::kUint64: return true;
    default: return false;
  }
}

bool IsSignedType(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt16 || t == DataType::kInt32 ||
         t == DataType::kInt64 || IsFloatType(t);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  return sign ? -v : v;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t abs = x & 0x7fffffff;
  if (abs >= 0x7f800000) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0));
  }
  if (abs >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // overflow to inf
  if (abs < 0x38800000) {  // subnormal half (or zero)
    // value = abs_float; half subnormal units are 2^-24.
    float a;
    std::memcpy(&a, &abs, 4);
    const float scaled = a * 16777216.0f;  // 2^24
    const uint32_t m = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t e = ((abs >> 23) - 112) << 10;
  uint32_t m = (abs >> 13) & 0x3ff;
  uint32_t rest = abs & 0x1fff;
  uint32_t h = e | m;
  if (rest > 0x1000 || (rest == 0x1000 && (m & 1))) h += 1;  // round to nearest even
  return static_cast<uint16_t>(sign | h);
}

uint16_t FloatToBfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // nan
  const uint32_t lsb = (x >> 16) & 1;
  x += 0x7fff + lsb;
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace switchyard
