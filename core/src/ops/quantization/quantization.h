// The arithmetic every int8 op shares, as MXNet 1.9.1 defines it
// (src/operator/quantization/quantization_utils.h): a quantized tensor is integers plus the float
// range [min, max] they stand for, symmetric around zero for signed types. One place, so that the
// plain ops, the fused oneDNN forms and the quantizer round the same way.
#pragma once

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
  const float lowest = static_cast<float>(std::numeric_limits<T>::lowest());
  const float highest = static_cast<float>(std::numeric_limits<T>::max());
  if (x >= highest) return std::numeric_limits<T>::max();
  if (x <= lowest) return std::numeric_limits<T>::lowest();
  return static_cast<T>(std::nearbyint(x));
}

}  // namespace internal
}  // namespace hybridnet
