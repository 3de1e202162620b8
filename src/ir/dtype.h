// Element types, numbered as ONNX's TensorProto.DataType so conversions are identities.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace switchyard {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
};

// Bytes per element; 0 for kUndefined and kString (strings are stored out of line).
size_t DataTypeSize(DataType t);
// Lower-case numpy-style name: float32, int64, bool, float16, bfloat16, string ...
const char* DataTypeName(DataType t);
// Parses a numpy-style name ("float32", "int64", "float" as float32). kUndefined if unknown.
DataType DataTypeFromName(const std::string& name);
// True for the ONNX numbers this build knows (incl. string); false for complex, fp8, ...
bool IsKnownDataType(int32_t onnx_type);
bool IsFloatType(DataType t);   // float16, bfloat16, float32, float64
bool IsIntegerType(DataType t); // signed and unsigned integers (not bool)
bool IsSignedType(DataType t);

// IEEE half and bfloat16 conversions (round to nearest even).
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
inline float Bfloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t FloatToBfloat16(float f);

}  // namespace switchyard
