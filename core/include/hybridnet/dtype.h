// Element types. The numbers are MXNet's (mshadow TypeFlag), used in .params files and in the
// "__dtype__" attribute of symbol JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

namespace hybridnet {

/// An element type, numbered as MXNet numbers it (kUnknown: not known yet, during inference).
enum class DType : int32_t {
  kUnknown = -1,
  kFloat32 = 0,
  kFloat64 = 1,
  kFloat16 = 2,
  kUint8 = 3,
  kInt32 = 4,
  kInt8 = 5,
  kInt64 = 6,
  kBool = 7,
  kInt16 = 8,
  kUint16 = 9,
  kUint32 = 10,
  kUint64 = 11,
  kBFloat16 = 12,
};

/// True for every flag 0..12.
bool IsKnownDType(int32_t flag);
/// Prints DTypeName(dtype).
std::ostream& operator<<(std::ostream& os, DType dtype);

/// Bytes per element; throws for kUnknown.
size_t DTypeSize(DType dtype);
/// numpy-style name: "float32", "int64", "bfloat16", ...
const char* DTypeName(DType dtype);
/// Parses a numpy-style name; throws kTypeError naming the accepted ones.
DType ParseDType(const std::string& name);

/// Maps a C++ element type to its DType.
/// `DTypeOf<float>::value` is DType::kFloat32, and so on for every element type with a DType.
template <typename T>
struct DTypeOf;
/// @cond specializations
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUint8;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::kInt16;
};
template <>
struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::kUint16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<uint32_t> {
  static constexpr DType value = DType::kUint32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<uint64_t> {
  static constexpr DType value = DType::kUint64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};
/// @endcond

/// IEEE half and bfloat16 conversions (round to nearest even).
///@{
float HalfToFloat(uint16_t bits);
uint16_t FloatToHalf(float value);
float BFloat16ToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);
///@}

/// Converts `count` elements between any two dtypes (C-style value conversion).
void ConvertElements(const void* src, DType src_dtype, void* dst, DType dst_dtype, size_t count);

}  // namespace hybridnet
