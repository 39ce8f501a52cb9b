// MXNet 1.9.1's oneDNN self-attention ops of BERT (src/operator/subgraph/mkldnn/
// mkldnn_transformer.cc): _sg_mkldnn_selfatt_qk and _sg_mkldnn_selfatt_valatt stand for
// _contrib_interleaved_matmul_selfatt_qk and _valatt (ops/sequence/attention.cc), whose graph
// they carry in "subgraphs". Float (quantized=False) they compute what those ops compute.
// Quantized, qk multiplies int8 queries by int8 keys and valatt uint8 attention by int8 values;
// the sums are exact int32 and oneDNN's output scale turns them into
//   - int8 in the calibrated range (min_calib_range, max_calib_range): a requantize fused in,
//   - float32 (enable_float_output): a requantize and dequantize fused in,
//   - otherwise int32, with the range MXNet reports for it.
// A scaled sum is float(sum) * scale in float32, rounded half to even and saturated, as
// oneDNN's matmul converts it.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/quantization/quantization.h"
#include "ops/quantization/range_inference.h"
#include "ops/register_ops.h"
#include "ops/sequence/attention.h"

namespace hybridnet {

namespace {

struct SelfAttParam {
  int heads = 0;
  bool quantized = false;
  bool enable_float_output = false;
  std::optional<float> min_calib_range;
  std::optional<float> max_calib_range;
  static void Declare(ParamDeclarer<SelfAttParam>* d) {
    using P = SelfAttParam;
    d->Field("heads", &P::heads).Required().Min(1).Describe("Number of attention heads.");
    d->Field("quantized", &P::quantized)
        .Default(false)
        .Describe("Whether the product runs on int8 (and uint8) data with float ranges.");
    d->Field("enable_float_output", &P::enable_float_output)
        .Default(false)
        .Describe("Quantized: whether the output is float32 (dequantized inside the op).");
    d->Field("min_calib_range", &P::min_calib_range)
        .Default(std::nullopt)
        .Describe(
            "Quantized: the calibrated minimum of the output; with max_calib_range the output "
            "is int8 in that range.");
    d->Field("max_calib_range", &P::max_calib_range)
        .Default(std::nullopt)
        .Describe("Quantized: the calibrated maximum of the output.");
  }
  bool requantized() const { return min_calib_range && max_calib_range; }
};

void InitSelfAtt(SelfAttParam* p) {
  internal::CheckCalibratedRange(p->min_calib_range, p->max_calib_range);
}

// The float inputs of each op; its quantized form adds a (min, max) range per integer input.
constexpr size_t kQKInputs = 1, kValAttInputs = 2;

uint32_t SelfAttNumOutputs(const NodeAttrs& attrs) {
  const auto& p = attrs.Param<SelfAttParam>();
  return p.quantized && !p.enable_float_output ? 3u : 1u;
}

std::vector<std::string> SelfAttOutputNames(const NodeAttrs& attrs) {
  if (SelfAttNumOutputs(attrs) == 1) return {"output"};
  return internal::RangeOutputNames(attrs);
}

std::vector<std::string> QKInputNames(const NodeAttrs& attrs) {
  if (!attrs.Param<SelfAttParam>().quantized) return {"queries_keys_values"};
  return {"queries_keys_values", "min_qkv", "max_qkv"};
}

std::vector<std::string> ValAttInputNames(const NodeAttrs& attrs) {
  if (!attrs.Param<SelfAttParam>().quantized) return {"queries_keys_values", "attention"};
  return {"queries_keys_values", "attention",    "min_qkv", "max_qkv",
          "min_attention",       "max_attention"};
}

// The float op's shape inference on the first `base` inputs; the quantized form's ranges (1,).
bool SelfAttShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out,
                  size_t base,
                  bool (*float_shape)(const NodeAttrs&, int64_t, std::vector<Shape>*,
                                      std::vector<Shape>*)) {
  const auto& p = attrs.Param<SelfAttParam>();
  const int64_t heads = p.heads;
  const FInferShape data_shape = [heads, float_shape](const NodeAttrs& a, std::vector<Shape>* i,
                                                      std::vector<Shape>* o) {
    return float_shape(a, heads, i, o);
  };
  if (!p.quantized) return data_shape(attrs, in, out);
  return internal::RangedShape(attrs, in, out, base, data_shape);
}

bool QKShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return SelfAttShape(attrs, in, out, kQKInputs, internal::SelfAttQKShape);
}

bool ValAttShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return SelfAttShape(attrs, in, out, kValAttInputs, internal::SelfAttValAttShape);
}

// Integer inputs `integer_types`, then float32 ranges; the output as the attributes say.
bool SelfAttType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out,
                 const std::vector<DType>& integer_types) {
  const auto& p = attrs.Param<SelfAttParam>();
  if (!p.quantized) {
    for (size_t i = 0; i < in->size(); ++i)
      internal::AssignQuantizedDType(attrs, in, i, DType::kFloat32, "input");
    internal::AssignQuantizedDType(attrs, out, 0, DType::kFloat32, "output");
    return true;
  }
  // MXNet 1.9.1 would write int8 into a float32 output; its own passes never set both.
  HN_CHECK(!(p.enable_float_output && (p.min_calib_range || p.max_calib_range)), kInvalidArgument)
      << DescribeNode(attrs)
      << ": enable_float_output and min_calib_range/max_calib_range exclude each other";
  for (size_t i = 0; i < in->size(); ++i) {
    internal::AssignQuantizedDType(
        attrs, in, i, i < integer_types.size() ? integer_types[i] : DType::kFloat32, "input");
  }
  const DType result = p.enable_float_output ? DType::kFloat32
                       : p.requantized()     ? DType::kInt8
                                             : DType::kInt32;
  internal::AssignQuantizedDType(attrs, out, 0, result, "output");
  for (size_t i = 1; i < out->size(); ++i)
    internal::AssignQuantizedDType(attrs, out, i, DType::kFloat32, "output");
  return true;
}

bool QKType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return SelfAttType(attrs, in, out, {DType::kInt8});
}

bool ValAttType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return SelfAttType(attrs, in, out, {DType::kInt8, DType::kUint8});
}

float RangeEnd(const TBlob& b) { return b.ptr<const float>()[0]; }

// Writes the exact int32 sum(i) of element i, i < n, scaled into `out` as the op's output type.
template <typename Sum>
void StoreScaled(const TBlob& out, int64_t n, float scale, Sum sum) {
  switch (out.dtype) {
    case DType::kInt8:
      internal::StoreRoundedEven(n, out.ptr<int8_t>(),
                                 [&](int64_t i) { return static_cast<float>(sum(i)) * scale; });
      break;
    case DType::kFloat32: {
      float* y = out.ptr<float>();
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(sum(i)) * scale;
      break;
    }
    default: {
      // Unscaled int32 sums are stored as they are; float would round those beyond 2^24.
      int32_t* y = out.ptr<int32_t>();
      for (int64_t i = 0; i < n; ++i) {
        y[i] = scale == 1.f
                   ? sum(i)
                   : internal::SaturateRoundEven<int32_t>(static_cast<float>(sum(i)) * scale);
      }
      break;
    }
  }
}

// The geometry of a (T, N, 3 * H * D) projection: batch k = n * H + h reads head h of batch
// element n; row t of its queries starts at t * row + k * 3 * D (keys + D, values + 2 * D).
struct Projection {
  int64_t t, batches, d, row;
  Projection(const Shape& s, int64_t heads)
      : t(s[0]), batches(s[1] * heads), d(s[2] / (3 * heads)), row(s[1] * s[2]) {}
};

void QKCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
               const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<SelfAttParam>();
  if (!p.quantized) {
    internal::SelfAttQKFloat(in[0], p.heads, out[0]);
    return;
  }
  const Projection g(in[0].shape, p.heads);
  const float min_data = RangeEnd(in[1]), max_data = RangeEnd(in[2]);
  const float data_scale = internal::QuantizeScale(DType::kInt8, min_data, max_data);
  // MXNet's scale, in its order of float operations: the output's over the product's, then
  // 1 / sqrt(D).
  float scale = 1.f;
  if (p.requantized()) {
    scale = internal::QuantizeScale(DType::kInt8, *p.min_calib_range, *p.max_calib_range) /
            (data_scale * data_scale);
  } else if (p.enable_float_output) {
    scale = 1.f / (data_scale * data_scale);
  }
  scale /= std::sqrt(static_cast<float>(g.d));
  const int8_t* x = in[0].ptr<const int8_t>();
  const int64_t tt = g.t * g.t;
  StoreScaled(out[0], g.batches * tt, scale, [&](int64_t i) {
    const int64_t k = i / tt, r = i % tt;
    const int8_t* q = x + (r / g.t) * g.row + k * 3 * g.d;
    const int8_t* key = x + (r % g.t) * g.row + k * 3 * g.d + g.d;
    int32_t acc = 0;
    for (int64_t j = 0; j < g.d; ++j) acc += int32_t{q[j]} * int32_t{key[j]};
    return acc;
  });
  if (out.size() == 3) {
    float* min_out = out[1].ptr<float>();
    float* max_out = out[2].ptr<float>();
    if (p.requantized()) {
      *min_out = *p.min_calib_range;
      *max_out = *p.max_calib_range;
    } else {
      // MXNet 1.9.1 takes this range from zero-initialized locals, not from the data's range,
      // so the int32 scores it reports span [-0, 0]; kept for identical outputs.
      internal::QuantizationRangeForMultiplication<int8_t, int8_t, int32_t>(0.f, 0.f, 0.f, 0.f,
                                                                            true, min_out, max_out);
    }
  }
}

void ValAttCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const auto& p = attrs.Param<SelfAttParam>();
  if (!p.quantized) {
    internal::SelfAttValAttFloat(in[0], in[1], p.heads, out[0]);
    return;
  }
  const Projection g(in[0].shape, p.heads);
  const float min_qkv = RangeEnd(in[2]), max_qkv = RangeEnd(in[3]);
  const float min_att = RangeEnd(in[4]), max_att = RangeEnd(in[5]);
  const float qkv_scale = internal::QuantizeScale(DType::kInt8, min_qkv, max_qkv);
  const float att_scale = internal::QuantizeScale(DType::kUint8, min_att, max_att);
  float scale = 1.f;  // the int32 form has no output scale
  if (p.requantized()) {
    scale = internal::QuantizeScale(DType::kInt8, *p.min_calib_range, *p.max_calib_range) /
            (qkv_scale * att_scale);
  } else if (p.enable_float_output) {
    scale = 1.f / (qkv_scale * att_scale);
  }
  const int8_t* x = in[0].ptr<const int8_t>();
  const uint8_t* att = in[1].ptr<const uint8_t>();
  // Output (T, N, H * D): element (t, k, c) with k = n * H + h is row t of batch k, column c.
  const int64_t row_out = g.batches * g.d;
  StoreScaled(out[0], g.t * row_out, scale, [&](int64_t i) {
    const int64_t t = i / row_out, k = (i % row_out) / g.d, c = i % g.d;
    const uint8_t* a = att + (k * g.t + t) * g.t;
    const int8_t* v = x + k * 3 * g.d + 2 * g.d + c;
    int32_t acc = 0;
    for (int64_t j = 0; j < g.t; ++j) acc += int32_t{a[j]} * int32_t{v[j * g.row]};
    return acc;
  });
  if (out.size() == 3) {
    float* min_out = out[1].ptr<float>();
    float* max_out = out[2].ptr<float>();
    if (p.requantized()) {
      *min_out = *p.min_calib_range;
      *max_out = *p.max_calib_range;
    } else {
      internal::QuantizationRangeForMultiplication<int8_t, uint8_t, int32_t>(
          min_qkv, max_qkv, min_att, max_att, false, min_out, max_out);
    }
  }
}

}  // namespace

void RegisterQuantizedAttentionOps(OpRegistry* r) {
  r->Register("_sg_mkldnn_selfatt_qk")
      .Describe(
          "MXNet's oneDNN _contrib_interleaved_matmul_selfatt_qk: the scores q . k^T / sqrt(D) "
          "of an interleaved (T, N, 3 * H * D) projection, (N * H, T, T); float, or quantized "
          "(int8 projection with its range) with an int32, requantized int8 or float output.")
      .SetParam<SelfAttParam>(InitSelfAtt)
      .SetInputNames(QKInputNames)
      .SetNumOutputs(SelfAttNumOutputs)
      .SetOutputNames(SelfAttOutputNames)
      .SetInferShape(QKShape)
      .SetInferType(QKType)
      .SetCompute(QKCompute);

  r->Register("_sg_mkldnn_selfatt_valatt")
      .Describe(
          "MXNet's oneDNN _contrib_interleaved_matmul_selfatt_valatt: attention (N * H, T, T) "
          "applied to the values of an interleaved (T, N, 3 * H * D) projection, (T, N, H * D); "
          "float, or quantized (int8 projection, uint8 attention, each with its range) with an "
          "int32, requantized int8 or float output.")
      .SetParam<SelfAttParam>(InitSelfAtt)
      .SetInputNames(ValAttInputNames)
      .SetNumOutputs(SelfAttNumOutputs)
      .SetOutputNames(SelfAttOutputNames)
      .SetInferShape(ValAttShape)
      .SetInferType(ValAttType)
      .SetCompute(ValAttCompute);
}

}  // namespace hybridnet
