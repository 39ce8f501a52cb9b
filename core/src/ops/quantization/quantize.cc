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
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "hybridnet/op.h"
#include "kernels/avx512-inl.h"
#include "kernels/layout.h"
#include "kernels/onednn.h"
#include "kernels/workspace.h"
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
  std::optional<internal::Layout> layout;

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
    d->Field("layout", &QuantizeV2Param::layout, internal::PoolingLayoutNames())
        .Default(std::nullopt)
        .Describe(
            "quantize_v2 only: channel-last (NWC, NHWC, NDHWC) writes channel-first data's "
            "integers channel-last, as the graph optimizer sets before int8 convolutions; "
            "default: the data's layout.");
  }

  bool calibrated() const { return min_calib_range.has_value(); }
  bool channel_last() const { return layout && internal::IsChannelLast(*layout); }
  DType output_dtype() const {
    return QuantizedOutputDType(out_type, min_calib_range, max_calib_range);
  }
};

// A negative range for uint8 would give wrong numbers silently too (MXNet does not check it).
void QuantizeV2ParamInit(QuantizeV2Param* p) {
  internal::CheckCalibratedRange(p->min_calib_range, p->max_calib_range);
  HN_CHECK(!(p->calibrated() && p->out_type == QuantizeOutType::kUint8 && *p->min_calib_range < 0),
           kInvalidArgument)
      << "out_type uint8 cannot hold the negative min_calib_range " << *p->min_calib_range;
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

// quantize_v2's output has the data's shape, or with a channel-last layout its channels last.
bool QuantizeV2DataShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& p = attrs.Param<QuantizeV2Param>();
  if (!p.layout) return ElemwiseShape(attrs, in, out);
  Shape& x = (*in)[0];
  Shape& y = (*out)[0];
  const size_t ndim = internal::LayoutRank(*p.layout) + 2;
  for (const Shape* s : {&x, &y}) {
    HN_CHECK(s->ndim() == 0 || s->ndim() == ndim, kShapeError)
        << DescribeNode(attrs) << ": layout " << internal::LayoutName(*p.layout) << " takes "
        << ndim << "-D data, got " << *s;
  }
  const bool last = p.channel_last();
  if (x.ndim() != 0) {
    const Shape want = last ? internal::ChannelLastShape(x) : x;
    HN_CHECK(y.ndim() == 0 || y == want, kShapeError)
        << DescribeNode(attrs) << ": output shape " << y << ", expected " << want;
    y = want;
  } else if (y.ndim() != 0) {
    x = last ? internal::ChannelFirstShape(y) : y;
  }
  return x.IsKnown() && y.IsKnown();
}

bool QuantizeV2Shape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return internal::RangedShape(attrs, in, out, 1, QuantizeV2DataShape);
}

bool RequantizeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  HN_CHECK(!attrs.Param<QuantizeV2Param>().layout, kInvalidArgument)
      << DescribeNode(attrs) << ": layout is quantize_v2's attribute; requantize keeps the layout";
  return QuantizeShape(attrs, in, out);
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
  internal::StoreRoundedEven(n, y, [=](int64_t i) { return x[i] * scale; });
}

// Three channels of S positions (x, x + S, x + 2S), 16 positions at a time, scaled, rounded and
// saturated as SaturateRoundEven does (MAXPS and MINPS give NaN the same end, CVTPS2DQ rounds half
// to even), interleaved into 48 bytes of (position, channel) order by byte shuffles.
template <typename T>
HN_AVX512 void ScaleThreeChannelsLast(const float* x, int64_t S, float scale, T* y) {
  constexpr bool kSigned = std::is_signed_v<T>;
  const __m512 lowest = _mm512_set1_ps(static_cast<float>(std::numeric_limits<T>::lowest()));
  const __m512 highest = _mm512_set1_ps(static_cast<float>(std::numeric_limits<T>::max()));
  const __m512 factor = _mm512_set1_ps(scale);
  // pick[v][k]: where output vector v's bytes come from in channel k's 16 (0x80: elsewhere).
  alignas(16) int8_t pick[3][3][16];
  for (int v = 0; v < 3; ++v) {
    for (int j = 0; j < 16; ++j) {
      const int byte = 16 * v + j;
      for (int k = 0; k < 3; ++k) {
        pick[v][k][j] = static_cast<int8_t>(byte % 3 == k ? byte / 3 : 0x80);
      }
    }
  }
  int64_t i = 0;
  for (; i + 16 <= S; i += 16) {
    __m128i q[3];
    for (int k = 0; k < 3; ++k) {
      const __m512 a = _mm512_mul_ps(_mm512_loadu_ps(x + k * S + i), factor);
      const __m512 clamped = kSigned ? _mm512_max_ps(_mm512_min_ps(a, highest), lowest)
                                     : _mm512_min_ps(_mm512_max_ps(a, lowest), highest);
      q[k] = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(clamped));
    }
    for (int v = 0; v < 3; ++v) {
      __m128i out = _mm_setzero_si128();
      for (int k = 0; k < 3; ++k) {
        const __m128i m = _mm_load_si128(reinterpret_cast<const __m128i*>(pick[v][k]));
        out = _mm_or_si128(out, _mm_shuffle_epi8(q[k], m));
      }
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + 3 * i + 16 * v), out);
    }
  }
  for (; i < S; ++i) {
    for (int64_t k = 0; k < 3; ++k) y[3 * i + k] = SaturateRoundEven<T>(x[k * S + i] * scale);
  }
}

// ScaleInto writing channel-first (N, C, S) floats as channel-last (N, S, C) integers: a run of
// positions of each channel scaled and rounded as ScaleInto does, then interleaved.
template <typename T>
void ScaleIntoChannelLast(const OpContext& ctx, const float* x, int64_t N, int64_t C, int64_t S,
                          float scale, T* y) {
  if (C == 3 && internal::CpuHasAvx512()) {
    for (int64_t n = 0; n < N; ++n) ScaleThreeChannelsLast(x + n * C * S, S, scale, y + n * S * C);
    return;
  }
  constexpr int64_t kRun = 256;
  T* run = ctx.workspace->Get<T>(internal::kOpSlot0, static_cast<size_t>(C * kRun));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t s0 = 0; s0 < S; s0 += kRun) {
      const int64_t m = std::min(kRun, S - s0);
      for (int64_t c = 0; c < C; ++c) {
        const float* plane = x + (n * C + c) * S + s0;
        internal::StoreRoundedEven(m, run + c * kRun, [=](int64_t i) { return plane[i] * scale; });
      }
      T* to = y + (n * S + s0) * C;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t c = 0; c < C; ++c) to[i * C + c] = run[c * kRun + i];
      }
    }
  }
}

void QuantizeV2Compute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
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
    const Shape& x = in[0].shape;
    if (p.channel_last() && n > 0) {
      internal::Relayout(in[0].data, out[0].data, dnnl::memory::data_type::u8, x[0], x[1],
                         n / (x[0] * x[1]), true, ctx.workspace);
    } else if (in[0].data != out[0].data) {
      std::memcpy(out[0].data, in[0].data, static_cast<size_t>(n));
    }
    return;
  }
  const float* x = in[0].ptr<const float>();
  float data_min = 0.0f, data_max = 0.0f;
  if (p.calibrated()) {
    data_min = *p.min_calib_range;
    data_max = *p.max_calib_range;
  } else {
    internal::DataRange(x, n, &data_min, &data_max);
  }
  const DType y = out[0].dtype;
  const float range = MaxAbs(data_min, data_max);
  *out_min = y == DType::kUint8 ? data_min : -range;
  *out_max = y == DType::kUint8 ? data_max : range;
  // A zero range gives an infinite scale, as in MXNet: zeros become NaN, then 127 (int8) or 0.
  const float scale = QuantizedLevels(y) / range;
  if (p.channel_last() && n > 0) {
    const Shape& shape = in[0].shape;
    const int64_t N = shape[0], C = shape[1], S = n / (N * C);
    if (y == DType::kUint8) {
      ScaleIntoChannelLast(ctx, x, N, C, S, scale, out[0].ptr<uint8_t>());
    } else {
      ScaleIntoChannelLast(ctx, x, N, C, S, scale, out[0].ptr<int8_t>());
    }
  } else if (y == DType::kUint8) {
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
  internal::StoreRoundedEven(n, y, [=](int64_t i) { return static_cast<float>(q[i]) * scale; });
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
      .SetInferShape(QuantizeV2Shape)
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
      .SetInferShape(RequantizeShape)
      .SetInferType(RequantizeType)
      .SetCompute(RequantizeCompute);
}

}  // namespace hybridnet
