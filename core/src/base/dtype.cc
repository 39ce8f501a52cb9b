#include "hybridnet/dtype.h"

#include <cstring>
#include <vector>

#include "hybridnet/base.h"

namespace hybridnet {

namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat32, "float32", 4},   {DType::kFloat64, "float64", 8},
    {DType::kFloat16, "float16", 2},   {DType::kUint8, "uint8", 1},
    {DType::kInt32, "int32", 4},       {DType::kInt8, "int8", 1},
    {DType::kInt64, "int64", 8},       {DType::kBool, "bool", 1},
    {DType::kInt16, "int16", 2},       {DType::kUint16, "uint16", 2},
    {DType::kUint32, "uint32", 4},     {DType::kUint64, "uint64", 8},
    {DType::kBFloat16, "bfloat16", 2},
};

const DTypeInfo& Info(DType dtype) {
  int32_t flag = static_cast<int32_t>(dtype);
  HN_CHECK(IsKnownDType(flag), kTypeError) << "unknown dtype flag " << flag;
  return kDTypes[flag];
}

}  // namespace

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << DTypeName(dtype); }

bool IsKnownDType(int32_t flag) { return flag >= 0 && flag <= 12; }

size_t DTypeSize(DType dtype) { return Info(dtype).size; }

const char* DTypeName(DType dtype) {
  return dtype == DType::kUnknown ? "unknown" : Info(dtype).name;
}

DType ParseDType(const std::string& name) {
  for (const auto& info : kDTypes)
    if (name == info.name) return info.dtype;
  std::string known;
  for (const auto& info : kDTypes) known += std::string(known.empty() ? "" : ", ") + info.name;
  HN_THROW(kTypeError) << "unknown dtype '" << name << "' (known: " << known << ")";
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t FloatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (abs < 0x38800000u) {                                      // subnormal or zero in half
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the smallest step
    uint32_t exp = abs >> 23;
    uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    // value = mant * 2^(exp - 150) and a half subnormal step is 2^-24.
    uint32_t shift = 126 - exp;
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);  // round to nearest even
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

float BFloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t FloatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

namespace {

// Converts n elements of any source dtype to Dst with C value conversion.
template <typename Dst>
void ConvertTo(const void* src, DType src_dtype, Dst* dst, size_t n) {
  auto run = [&](auto* typed_src) {
    for (size_t i = 0; i < n; ++i) dst[i] = static_cast<Dst>(typed_src[i]);
  };
  switch (src_dtype) {
    case DType::kFloat32:
      run(static_cast<const float*>(src));
      break;
    case DType::kFloat64:
      run(static_cast<const double*>(src));
      break;
    case DType::kUint8:
      run(static_cast<const uint8_t*>(src));
      break;
    case DType::kInt8:
      run(static_cast<const int8_t*>(src));
      break;
    case DType::kInt16:
      run(static_cast<const int16_t*>(src));
      break;
    case DType::kUint16:
      run(static_cast<const uint16_t*>(src));
      break;
    case DType::kInt32:
      run(static_cast<const int32_t*>(src));
      break;
    case DType::kUint32:
      run(static_cast<const uint32_t*>(src));
      break;
    case DType::kInt64:
      run(static_cast<const int64_t*>(src));
      break;
    case DType::kUint64:
      run(static_cast<const uint64_t*>(src));
      break;
    case DType::kBool:
      run(static_cast<const bool*>(src));
      break;
    case DType::kFloat16:
    case DType::kBFloat16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < n; ++i) {
        float f = src_dtype == DType::kFloat16 ? HalfToFloat(h[i]) : BFloat16ToFloat(h[i]);
        dst[i] = static_cast<Dst>(f);
      }
      break;
    }
    case DType::kUnknown:
      HN_THROW(kTypeError) << "cannot convert from an unknown dtype";
  }
}

}  // namespace

void ConvertElements(const void* src, DType src_dtype, void* dst, DType dst_dtype, size_t n) {
  if (n == 0) return;  // empty arrays may have no storage: memcpy must not see their NULLs
  if (src_dtype == dst_dtype) {
    std::memcpy(dst, src, n * DTypeSize(src_dtype));
    return;
  }
  switch (dst_dtype) {
    case DType::kFloat32:
      ConvertTo(src, src_dtype, static_cast<float*>(dst), n);
      break;
    case DType::kFloat64:
      ConvertTo(src, src_dtype, static_cast<double*>(dst), n);
      break;
    case DType::kUint8:
      ConvertTo(src, src_dtype, static_cast<uint8_t*>(dst), n);
      break;
    case DType::kInt8:
      ConvertTo(src, src_dtype, static_cast<int8_t*>(dst), n);
      break;
    case DType::kInt16:
      ConvertTo(src, src_dtype, static_cast<int16_t*>(dst), n);
      break;
    case DType::kUint16:
      ConvertTo(src, src_dtype, static_cast<uint16_t*>(dst), n);
      break;
    case DType::kInt32:
      ConvertTo(src, src_dtype, static_cast<int32_t*>(dst), n);
      break;
    case DType::kUint32:
      ConvertTo(src, src_dtype, static_cast<uint32_t*>(dst), n);
      break;
    case DType::kInt64:
      ConvertTo(src, src_dtype, static_cast<int64_t*>(dst), n);
      break;
    case DType::kUint64:
      ConvertTo(src, src_dtype, static_cast<uint64_t*>(dst), n);
      break;
    case DType::kBool:
      ConvertTo(src, src_dtype, static_cast<bool*>(dst), n);
      break;
    case DType::kFloat16:
    case DType::kBFloat16: {
      std::vector<float> tmp(n);
      ConvertTo(src, src_dtype, tmp.data(), n);
      auto* h = static_cast<uint16_t*>(dst);
      for (size_t i = 0; i < n; ++i)
        h[i] = dst_dtype == DType::kFloat16 ? FloatToHalf(tmp[i]) : FloatToBFloat16(tmp[i]);
      break;
    }
    case DType::kUnknown:
      HN_THROW(kTypeError) << "cannot convert to an unknown dtype";
  }
}

}  // namespace hybridnet
