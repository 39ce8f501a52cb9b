// MXNet 1.9.1's conversions between float and int8/uint8 (src/operator/quantization/
// quantize_v2-inl.h, quantize-inl.h, dequantize-inl.h, requantize-inl.h and their mkldnn/ forms,
// which are what its CPU wheel runs): _contrib_quantize_v2, _contrib_quantize,
// _contrib_dequantize and _contrib_requantize. Each
// integer tensor travels with the float range [min, max] it stands for, as two (1,) outputs.
//
// The arithmetic is that of MXNet's oneDNN reorders, checked against MXNet itself:
//  * quantize_v2 scales by 127.5 (int8) or 255.5 (uint8) over MaxAbs(range), rounds half to
//    even and saturates (so -max gives -128 and max 127; negative data into uint8 gives 0); an
//    int8 result's range is [-MaxAbs, MaxAbs], a uint8 one's the data range itself;
//  * quantize (the older form, range as inputs) uses 127 or 255 levels instead;
//  * dequantize multiplies by MaxAbs(range) over 127.5 or 255.5;
//  * requantize maps int32 over its range onto 127 (int8) or 255 (uint8) levels of the
//    calibrated range, or without one of the range the int32 data reach.
#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/quantization/quantization.h"
#include "ops/quantization/range_inference.h"
#include "ops/register_ops.h"

namespace hybridnet {
namespace {

using internal::AssignQuantizedDType;
using internal::MaxAbs;
using internal::QuantizedLevels;
using internal::QuantizedOutputDType;
using internal::QuantizeOutType;
using internal::RangeOutputNames;
using internal::SaturateRoundEven;

// quantize_v2's and requantize's attributes (MXNet's QuantizeV2Param and RequantizeParam are
// the same three fields).
struct QuantizeV2Param {
  QuantizeOutType out_type = QuantizeOutType::kInt8;
  std::optional<float> min_calib_range;
  std::optional<float> max_calib_range;

  static void Declare(ParamDeclarer<QuantizeV2Param>* d) {
    d->Field("out_type", &QuantizeV2Param::out_type, internal::QuantizeOutTypeNames())
        .Default(QuantizeOutType::kInt8)
        .Describe(
            "Output data type; auto gives uint8 when min_calib_range is given and not negative, "
            "else int8.");
    d->Field("min_calib_range", &QuantizeV2Param::min_calib_range)
        .Default(std::nullopt)
        .Describe("The calibrated minimum of the float data; without it the data's own range.");
    d->Field("max_calib_range", &QuantizeV2Param::max_calib_range)
        .Default(std::nullopt)
        .Describe("The calibrated maximum of the float data; without it the data's own range.");
  }

  bool calibrated() const { return min_calib_range.has_value(); }
  DType output_dtype() const {
    return QuantizedOutputDType(out_type, min_calib_range, max_calib_range);
  }
};

// MXNet uses a calibrated range only when both ends are given and never checks them; a range
// given by halves, upside down, or negative for uint8 would give wrong numbers silently.
void QuantizeV2ParamInit(QuantizeV2Param* p) {
  HN_CHECK(p->min_calib_range.has_value() == p->max_calib_range.has_value(), kInvalidArgument)
      << "min_calib_range and max_calib_range must be given together (got only "
      << (p->min_calib_range ? "min_calib_range" : "max_calib_range") << ")";
  if (!p->calibrated()) return;
  const float lo = *p->min_calib_range, hi = *p->max_calib_range;
  HN_CHECK(lo <= hi, kInvalidArgument)
      << "min_calib_range " << lo << " is larger than max_calib_range " << hi;
  HN_CHECK(!(p->out_type == QuantizeOutType::kUint8 && lo < 0.0f), kInvalidArgument)
      << "out_type uint8 cannot hold the negative min_calib_range " << lo;
}

// _contrib_quantize's attribute: the older form, whose range comes as inputs.
struct QuantizeParam {
  DType out_type = DType::kUint8;
  static void Declare(ParamDeclarer<QuantizeParam>* d) {
    d->Field("out_type", &QuantizeParam::out_type,
             {{"int8", DType::kInt8}, {"uint8", DType::kUint8}})
        .Default(DType::kUint8)
        .Describe("Output data type.");
  }
};

struct DequantizeParam {
  DType out_type = DType::kFloat32;
  static void Declare(ParamDeclarer<DequantizeParam>* d) {
    d->Field("out_type", &DequantizeParam::out_type, {{"float32", DType::kFloat32}})
        .Default(DType::kFloat32)
        .Describe("Output data type.");
  }
};

// ---- inference --------------------------------------------------------------------------------

// Output 0 has input 0's shape; the other inputs and outputs are range ends.
bool QuantizeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return internal::RangedShape(attrs, in, out, 1, ElemwiseShape);
}

bool QuantizeV2Type(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const auto& p = attrs.Param<QuantizeV2Param>();
  const DType x = (*in)[0];
  HN_CHECK(x == DType::kUnknown || x == DType::kFloat32 || x == DType::kInt8 || x == DType::kUint8,
           kTypeError)
      << DescribeNode(attrs) << ": data has dtype " << DTypeName(x)
      << "; expected float32 (or int8/uint8, passed through)";
  const DType y = p.output_dtype();
  // Quantized data passes through unchanged (MXNet copies its bytes even into the other type).
  HN_CHECK(x == DType::kUnknown || x == DType::kFloat32 || x == y, kTypeError)
      << DescribeNode(attrs) << ": " << DTypeName(x) << " data passes through unchanged, but "
      << "out_type gives " << DTypeName(y) << "; set out_type to " << DTypeName(x);
  AssignQuantizedDType(attrs, out, 0, y, "output");
  AssignQuantizedDType(attrs, out, 1, DType::kFloat32, "output");
  AssignQuantizedDType(attrs, out, 2, DType::kFloat32, "output");
  return x != DType::kUnknown;
}

bool QuantizeType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  for (size_t i = 0; i < 3; ++i) AssignQuantizedDType(attrs, in, i, DType::kFloat32, "input");
  AssignQuantizedDType(attrs, out, 0, attrs.Param<QuantizeParam>().out_type, "output");
  AssignQuantizedDType(attrs, out, 1, DType::kFloat32, "output");
  AssignQuantizedDType(attrs, out, 2, DType::kFloat32, "output");
  return true;
}

bool DequantizeType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const DType x = (*in)[0];
  HN_CHECK(x == DType::kUnknown || x == DType::kInt8 || x == DType::kUint8, kTypeError)
      << DescribeNode(attrs) << ": data has dtype " << DTypeName(x)
      << "; dequantize takes int8 or uint8 (int32 results go through requantize first)";
  AssignQuantizedDType(attrs, in, 1, DType::kFloat32, "input");
  AssignQuantizedDType(attrs, in, 2, DType::kFloat32, "input");
  AssignQuantizedDType(attrs, out, 0, DType::kFloat32, "output");
  return x != DType::kUnknown;
}

bool RequantizeType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  AssignQuantizedDType(attrs, in, 0, DType::kInt32, "input");
  AssignQuantizedDType(attrs, in, 1, DType::kFloat32, "input");
  AssignQuantizedDType(attrs, in, 2, DType::kFloat32, "input");
  AssignQuantizedDType(attrs, out, 0, attrs.Param<QuantizeV2Param>().output_dtype(), "output");
  AssignQuantizedDType(attrs, out, 1, DType::kFloat32, "output");
  AssignQuantizedDType(attrs, out, 2, DType::kFloat32, "output");
  return true;
}

// ---- kernels ----------------------------------------------------------------------------------

template <typename T>
void ScaleInto(const float* x, int64_t n, float scale, T* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = SaturateRoundEven<T>(x[i] * scale);
}

void QuantizeV2Compute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<QuantizeV2Param>();
  float* out_min = out[1].ptr<float>();
  float* out_max = out[2].ptr<float>();
  const int64_t n = in[0].Size();
  if (in[0].dtype != DType::kFloat32) {
    if (p.calibrated()) {
      *out_min = *p.min_calib_range;
      *out_max = *p.max_calib_range;
    } else {
      *out_min = in[0].dtype == DType::kUint8 ? 0.0f : -internal::kInt8ScaleRange;
      *out_max = QuantizedLevels(in[0].dtype);
    }
    if (in[0].data != out[0].data) std::memcpy(out[0].data, in[0].data, static_cast<size_t>(n));
    return;
  }
  const float* x = in[0].ptr<const float>();
  float data_min = FLT_MAX, data_max = -FLT_MAX;
  if (p.calibrated()) {
    data_min = *p.min_calib_range;
    data_max = *p.max_calib_range;
  } else {
    for (int64_t i = 0; i < n; ++i) {
      data_min = x[i] < data_min ? x[i] : data_min;
      data_max = x[i] > data_max ? x[i] : data_max;
    }
  }
  const DType y = out[0].dtype;
  const float range = MaxAbs(data_min, data_max);
  *out_min = y == DType::kUint8 ? data_min : -range;
  *out_max = y == DType::kUint8 ? data_max : range;
  // A zero range gives an infinite scale, as in MXNet: zeros become NaN, then 127 (int8) or 0.
  const float scale = QuantizedLevels(y) / range;
  if (y == DType::kUint8) {
    ScaleInto(x, n, scale, out[0].ptr<uint8_t>());
  } else {
    ScaleInto(x, n, scale, out[0].ptr<int8_t>());
  }
}

// Over the range given as inputs, onto 127 (int8) or 255 (uint8) levels; a uint8 result keeps
// the range, an int8 one gets [-MaxAbs, MaxAbs].
void QuantizeCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const float lo = in[1].ptr<const float>()[0], hi = in[2].ptr<const float>()[0];
  const float range = MaxAbs(lo, hi);
  const bool to_uint8 = out[0].dtype == DType::kUint8;
  out[1].ptr<float>()[0] = to_uint8 ? lo : -range;
  out[2].ptr<float>()[0] = to_uint8 ? hi : range;
  const float scale = (to_uint8 ? 255.0f : 127.0f) / range;
  if (to_uint8) {
    ScaleInto(in[0].ptr<const float>(), in[0].Size(), scale, out[0].ptr<uint8_t>());
  } else {
    ScaleInto(in[0].ptr<const float>(), in[0].Size(), scale, out[0].ptr<int8_t>());
  }
}

template <typename T>
void DequantizeInto(const T* q, int64_t n, float scale, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(q[i]) * scale;
}

void DequantizeCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  const float scale = MaxAbs(in[1].ptr<const float>()[0], in[2].ptr<const float>()[0]) /
                      QuantizedLevels(in[0].dtype);
  if (in[0].dtype == DType::kUint8) {
    DequantizeInto(in[0].ptr<const uint8_t>(), in[0].Size(), scale, out[0].ptr<float>());
  } else {
    DequantizeInto(in[0].ptr<const int8_t>(), in[0].Size(), scale, out[0].ptr<float>());
  }
}

template <typename T>
void RequantizeInto(const int32_t* q, int64_t n, float scale, T* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = SaturateRoundEven<T>(static_cast<float>(q[i]) * scale);
}

void RequantizeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<QuantizeV2Param>();
  const int32_t* q = in[0].ptr<const int32_t>();
  const int64_t n = in[0].Size();
  const float in_range = MaxAbs(in[1].ptr<const float>()[0], in[2].ptr<const float>()[0]);
  float real_range = 0.0f;
  if (p.calibrated()) {
    real_range = MaxAbs(*p.min_calib_range, *p.max_calib_range);
  } else {
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (int64_t i = 0; i < n; ++i) {
      lo = std::min(lo, q[i]);
      hi = std::max(hi, q[i]);
    }
    // MXNet takes the largest magnitude through float back to int32; where that overflows (at
    // 2^31) it gives a negative range, here INT32_MAX.
    const float reached = MaxAbs(static_cast<float>(lo), static_cast<float>(hi));
    const int32_t reached_int =
        reached >= internal::kInt32ScaleRange ? INT32_MAX : static_cast<int32_t>(reached);
    real_range = static_cast<float>(reached_int) * in_range / internal::kInt32ScaleRange;
  }
  const DType y = out[0].dtype;
  const float levels = y == DType::kUint8 ? 255.0f : 127.0f;
  const float scale = (in_range / internal::kInt32ScaleRange) * (levels / real_range);
  out[1].ptr<float>()[0] = y == DType::kUint8 ? 0.0f : -real_range;
  out[2].ptr<float>()[0] = real_range;
  if (y == DType::kUint8) {
    RequantizeInto(q, n, scale, out[0].ptr<uint8_t>());
  } else {
    RequantizeInto(q, n, scale, out[0].ptr<int8_t>());
  }
}

}  // namespace

void RegisterQuantizeOps(OpRegistry* r) {
  r->Register("_contrib_quantize_v2")
      .Describe(
          "Quantizes float32 data to int8 or uint8 over [min_calib_range, max_calib_range] "
          "(or the data's own range): x * 127.5 (int8) or 255.5 (uint8) / MaxAbs(range), "
          "rounded half to even and saturated; outputs the integers and their float range "
          "(symmetric for int8). int8 or uint8 data passes through.")
      .SetParam<QuantizeV2Param>(QuantizeV2ParamInit)
      .SetInputNames({"data"})
      .SetNumOutputs(3)
      .SetOutputNames(RangeOutputNames)
      .SetInferShape(QuantizeShape)
      .SetInferType(QuantizeV2Type)
      .SetCompute(QuantizeV2Compute);
  r->Register("_contrib_quantize")
      .Describe(
          "Quantizes float32 data over [min_range, max_range], given as inputs, to uint8 "
          "(x * 255 / MaxAbs(range)) or int8 (x * 127 / MaxAbs(range)), rounded half to even "
          "and saturated; outputs the integers and their range.")
      .SetParam<QuantizeParam>()
      .SetInputNames({"data", "min_range", "max_range"})
      .SetNumOutputs(3)
      .SetOutputNames(RangeOutputNames)
      .SetInferShape(QuantizeShape)
      .SetInferType(QuantizeType)
      .SetCompute(QuantizeCompute);
  r->Register("_contrib_dequantize")
      .Describe(
          "Converts int8 or uint8 data over the float range [min_range, max_range] back to "
          "float32: q * MaxAbs(range) / 127.5 (int8) or 255.5 (uint8).")
      .SetParam<DequantizeParam>()
      .SetInputNames({"data", "min_range", "max_range"})
      .SetInferShape(QuantizeShape)
      .SetInferType(DequantizeType)
      .SetCompute(DequantizeCompute);
  r->Register("_contrib_requantize")
      .Describe(
          "Converts int32 data over the float range [min_range, max_range] to int8 (127 levels) "
          "or uint8 (255 levels) over the calibrated range, or without one over the range the "
          "data reach; rounded half to even and saturated.")
      .SetParam<QuantizeV2Param>(QuantizeV2ParamInit)
      .SetInputNames({"data", "min_range", "max_range"})
      .SetNumOutputs(3)
      .SetOutputNames(RangeOutputNames)
      .SetInferShape(QuantizeShape)
      .SetInferType(RequantizeType)
      .SetCompute(RequantizeCompute);
}

}  // namespace hybridnet
