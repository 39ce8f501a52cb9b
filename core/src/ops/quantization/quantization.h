// The arithmetic every int8 op shares, as MXNet 1.9.1 defines it
// (src/operator/quantization/quantization_utils.h): a quantized tensor is integers plus the float
// range [min, max] they stand for, symmetric around zero for signed types. One place, so that the
// plain ops, the fused oneDNN forms and the quantizer round the same way.
#pragma once

#include <emmintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "hybridnet/dtype.h"
#include "hybridnet/param.h"

namespace hybridnet {
namespace internal {

// The scale of oneDNN-path quantization maps the range onto 127.5 / 255.5 levels (MXNet's
// kInt8Range / kUint8Range), not 127 / 255: rounding then reaches the end points.
constexpr float kInt8ScaleRange = 127.5f;
constexpr float kUint8ScaleRange = 255.5f;
constexpr float kInt32ScaleRange = 2147483647.0f;

inline float MaxAbs(float a, float b) { return std::max(std::fabs(a), std::fabs(b)); }
inline float MinAbs(float a, float b) { return std::min(std::fabs(a), std::fabs(b)); }

/// x in the range [-MaxAbs(min, max), MaxAbs(min, max)] as T, rounded half away from zero and
/// clipped to T's symmetric levels (MXNet's FloatToQuantized).
template <typename T>
inline T FloatToQuantized(float x, float range_min, float range_max) {
  const float levels = MinAbs(static_cast<float>(std::numeric_limits<T>::max()),
                              static_cast<float>(std::numeric_limits<T>::lowest()));
  const float scale = levels / MaxAbs(range_min, range_max);
  const float magnitude = std::min(std::fabs(x) * scale + 0.5f, levels);
  return static_cast<T>((x > 0.0f) - (x < 0.0f)) * static_cast<T>(magnitude);
}

/// q back in float (MXNet's QuantizedToFloat): the symmetric range over T's symmetric levels.
template <typename T>
inline float QuantizedToFloat(T q, float range_min, float range_max) {
  const float levels = MinAbs(static_cast<float>(std::numeric_limits<T>::max()),
                              static_cast<float>(std::numeric_limits<T>::lowest()));
  return static_cast<float>(q) * (MaxAbs(range_min, range_max) / levels);
}

/// The float value of one step of T over the range; `all_sign` counts the signed levels only
/// (MXNet's FloatForOneQuantizedLevel).
template <typename T>
inline float FloatForOneQuantizedLevel(float range_min, float range_max, bool all_sign) {
  const float levels = all_sign ? MinAbs(static_cast<float>(std::numeric_limits<T>::max()),
                                         static_cast<float>(std::numeric_limits<T>::lowest()))
                                : static_cast<float>(std::numeric_limits<T>::max());
  return MaxAbs(range_min, range_max) / levels;
}

/// The symmetric float range of the TC-typed product of a TA and a TB tensor with the given
/// ranges (MXNet's QuantizationRangeForMultiplication): one step of the product is the product
/// of the steps.
template <typename TA, typename TB, typename TC>
inline void QuantizationRangeForMultiplication(float min_a, float max_a, float min_b, float max_b,
                                               bool all_sign, float* min_c, float* max_c) {
  const float step = FloatForOneQuantizedLevel<TA>(min_a, max_a, all_sign) *
                     FloatForOneQuantizedLevel<TB>(min_b, max_b, all_sign);
  *max_c = step * MinAbs(static_cast<float>(std::numeric_limits<TC>::max()),
                         static_cast<float>(std::numeric_limits<TC>::lowest()));
  *min_c = -*max_c;
}

/// The `out_type` attribute of the quantize ops and the fused quantized forms.
enum class QuantizeOutType { kAuto, kInt8, kUint8 };

inline const EnumNames<QuantizeOutType>& QuantizeOutTypeNames() {
  static const EnumNames<QuantizeOutType> names = {{"auto", QuantizeOutType::kAuto},
                                                   {"int8", QuantizeOutType::kInt8},
                                                   {"uint8", QuantizeOutType::kUint8}};
  return names;
}

/// The element type an out_type gives: auto is uint8 when a calibrated range is known and
/// non-negative, int8 otherwise.
inline DType QuantizedOutputDType(QuantizeOutType out_type, std::optional<float> min_calib_range,
                                  std::optional<float> max_calib_range) {
  switch (out_type) {
    case QuantizeOutType::kInt8:
      return DType::kInt8;
    case QuantizeOutType::kUint8:
      return DType::kUint8;
    case QuantizeOutType::kAuto:
      break;
  }
  return min_calib_range && max_calib_range && *min_calib_range >= 0.0f ? DType::kUint8
                                                                        : DType::kInt8;
}

/// The float range a oneDNN-path int8 or uint8 tensor's levels span (MXNet's kInt8Range /
/// kUint8Range): the scale of such a tensor over [min, max] is this over MaxAbs(min, max).
inline float QuantizedLevels(DType dtype) {
  return dtype == DType::kInt8 ? kInt8ScaleRange : kUint8ScaleRange;
}

/// Float-to-integer scale of the oneDNN path for an int8 or uint8 tensor over [min, max]; a zero
/// range gives INT32_MAX rather than infinity, as MXNet does.
inline float QuantizeScale(DType dtype, float data_min, float data_max) {
  const float range = MaxAbs(data_min, data_max);
  return range != 0.0f ? QuantizedLevels(dtype) / range : kInt32ScaleRange;
}

/// A float already scaled onto T's integers, converted as oneDNN's reorders (and so MXNet's
/// quantize_v2, requantize and the rescaling of its int8 ops) convert it: saturated to T's
/// range, rounded half to even; NaN gives T's maximum for signed T and 0 for uint8, as MXNet
/// 1.9.1 gives.
template <typename T>
inline T SaturateRoundEven(float x) {
  constexpr bool kSigned = std::is_signed_v<T>;
  if (std::isnan(x)) return kSigned ? std::numeric_limits<T>::max() : T(0);
  // float(INT32_MAX) is 2^31, outside int32: compare before converting.
  if (x >= static_cast<float>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  if (x <= static_cast<float>(std::numeric_limits<T>::lowest())) {
    return std::numeric_limits<T>::lowest();
  }
  return static_cast<T>(std::nearbyint(x));
}

/// SaturateRoundEven of `n` floats into int8 or uint8 `y`, 16 at a time with SSE2: min and max
/// put NaN on the end SaturateRoundEven gives it (MINPS and MAXPS return their second operand
/// for NaN), CVTPS2DQ rounds half to even, the packs saturate.
template <typename T>
inline void SaturateRoundEvenN(const float* v, int64_t n, T* y) {
  static_assert(sizeof(T) == 1, "int8 or uint8");
  constexpr bool kSigned = std::is_signed_v<T>;
  const __m128 lowest = _mm_set1_ps(static_cast<float>(std::numeric_limits<T>::lowest()));
  const __m128 highest = _mm_set1_ps(static_cast<float>(std::numeric_limits<T>::max()));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i q[4];
    for (int k = 0; k < 4; ++k) {
      const __m128 a = _mm_loadu_ps(v + i + 4 * k);
      q[k] = _mm_cvtps_epi32(kSigned ? _mm_max_ps(_mm_min_ps(a, highest), lowest)
                                     : _mm_min_ps(_mm_max_ps(a, lowest), highest));
    }
    const __m128i low = _mm_packs_epi32(q[0], q[1]), high = _mm_packs_epi32(q[2], q[3]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     kSigned ? _mm_packs_epi16(low, high) : _mm_packus_epi16(low, high));
  }
  for (; i < n; ++i) y[i] = SaturateRoundEven<T>(v[i]);
}

/// y[i] = SaturateRoundEven<T>(value(i)) for i < n: `value` fills a chunk of floats (a loop the
/// compiler vectorizes), SaturateRoundEvenN converts it.
template <typename T, typename Value>
inline void StoreRoundedEven(int64_t n, T* y, Value value) {
  constexpr int64_t kChunk = 256;
  alignas(64) float chunk[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = std::min(kChunk, n - i);
    for (int64_t j = 0; j < m; ++j) chunk[j] = value(i + j);
    SaturateRoundEvenN(chunk, m, y + i);
  }
}

/// The smallest and largest of `n` floats, NaN skipped (from FLT_MAX and -FLT_MAX, as MXNet's
/// scan starts), four lanes at a time.
inline void DataRange(const float* x, int64_t n, float* lo, float* hi) {
  __m128 low = _mm_set1_ps(std::numeric_limits<float>::max());
  __m128 high = _mm_set1_ps(std::numeric_limits<float>::lowest());
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 a = _mm_loadu_ps(x + i);
    low = _mm_min_ps(a, low);  // NaN in `a` keeps `low`
    high = _mm_max_ps(a, high);
  }
  alignas(16) float lows[4], highs[4];
  _mm_store_ps(lows, low);
  _mm_store_ps(highs, high);
  float l = lows[0], h = highs[0];
  for (int k = 1; k < 4; ++k) {
    l = lows[k] < l ? lows[k] : l;
    h = highs[k] > h ? highs[k] : h;
  }
  for (; i < n; ++i) {
    l = x[i] < l ? x[i] : l;
    h = x[i] > h ? x[i] : h;
  }
  *lo = l;
  *hi = h;
}

/// A calibrated range of a quantized op's attributes: both ends or neither, in order (MXNet uses
/// one only when both ends are given and never checks them, so a range given by halves or upside
/// down would give wrong numbers silently). Called from the ops' parameter inits (Op::SetParam),
/// once per node, whose errors name the op and node.
inline void CheckCalibratedRange(const std::optional<float>& min_calib_range,
                                 const std::optional<float>& max_calib_range) {
  HN_CHECK(min_calib_range.has_value() == max_calib_range.has_value(), kInvalidArgument)
      << "min_calib_range and max_calib_range must be given together (got only "
      << (min_calib_range ? "min_calib_range" : "max_calib_range") << ")";
  if (min_calib_range) {
    HN_CHECK(*min_calib_range <= *max_calib_range, kInvalidArgument)
        << "min_calib_range " << *min_calib_range << " is larger than max_calib_range "
        << *max_calib_range;
  }
}

}  // namespace internal
}  // namespace hybridnet
