// Conformance cases: BERT's oneDNN self-attention ops, _sg_mkldnn_selfatt_qk and
// _sg_mkldnn_selfatt_valatt, float and quantized (int32, requantized int8 and float outputs).
// The references are plain loops over the interleaved (T, N, 3 * H * D) projection: the sums in
// exact integers, the scales in float32 in MXNet 1.9.1's order, the scaled sums rounded half to
// even and saturated as oneDNN's output scale converts them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

enum class Output { kInt32, kInt8, kFloat };

// oneDNN-path scale of an int8 (127.5 levels) or uint8 (255.5 levels) tensor over [lo, hi].
float Scale(bool uint8, double lo, double hi) {
  const float range =
      std::max(std::fabs(static_cast<float>(lo)), std::fabs(static_cast<float>(hi)));
  return range == 0.f ? 2147483647.f : (uint8 ? 255.5f : 127.5f) / range;
}

// float(sum) * scale converted to the output type: int8 and int32 rounded half to even and
// saturated, float as it is.
double Convert(int64_t sum, float scale, Output output) {
  const float v = static_cast<float>(sum) * scale;
  if (output == Output::kFloat) return v;
  const double lo = output == Output::kInt8 ? -128.0 : -2147483648.0;
  const double hi = output == Output::kInt8 ? 127.0 : 2147483647.0;
  return std::min(std::max(std::nearbyint(static_cast<double>(v)), lo), hi);
}

struct Geometry {
  int64_t t, n, heads, d;
  // Element c of head h's part (0 queries, 1 keys, 2 values) at time t, batch element n.
  int64_t At(int64_t time, int64_t batch, int64_t h, int64_t part, int64_t c) const {
    return (time * n + batch) * 3 * heads * d + h * 3 * d + part * d + c;
  }
};

Geometry GeometryOf(const Shape& qkv, int64_t heads) {
  return {qkv[0], qkv[1], heads, qkv[2] / (3 * heads)};
}

Symbol FloatSubgraph(const std::string& op, int64_t heads) {
  std::vector<Symbol> in{Symbol::Var("queries_keys_values")};
  if (op == "_contrib_interleaved_matmul_selfatt_valatt") in.push_back(Symbol::Var("attention"));
  return Symbol::Create(op, in, {{"heads", std::to_string(heads)}}, "selfatt");
}

std::string Text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Attributes of the quantized form with this output.
AttrDict QuantizedAttrs(int64_t heads, Output output, double calib_min, double calib_max) {
  AttrDict attrs{{"heads", std::to_string(heads)}, {"quantized", "True"}};
  if (output == Output::kFloat) attrs["enable_float_output"] = "True";
  if (output == Output::kInt8) {
    attrs["min_calib_range"] = Text(calib_min);
    attrs["max_calib_range"] = Text(calib_max);
  }
  return attrs;
}

// ---- _sg_mkldnn_selfatt_qk --------------------------------------------------------------------

// The float form: q . k^T / sqrt(D) in doubles.
RefFn QKFloatRef(int64_t heads) {
  return [=](const std::vector<RefTensor>& in) {
    const Geometry g = GeometryOf(in[0].shape, heads);
    RefTensor out(Shape{g.n * heads, g.t, g.t});
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < g.t; ++i)
          for (int64_t j = 0; j < g.t; ++j) {
            double acc = 0;
            for (int64_t c = 0; c < g.d; ++c)
              acc += in[0][g.At(i, b, h, 0, c)] * in[0][g.At(j, b, h, 1, c)];
            out[((b * heads + h) * g.t + i) * g.t + j] = acc / std::sqrt(static_cast<double>(g.d));
          }
    return std::vector<RefTensor>{out};
  };
}

RefFn QKQuantizedRef(int64_t heads, Output output, double calib_min, double calib_max) {
  return [=](const std::vector<RefTensor>& in) {
    const Geometry g = GeometryOf(in[0].shape, heads);
    const float data_scale = Scale(false, in[1][0], in[2][0]);
    float scale = 1.f;
    if (output == Output::kInt8) {
      scale = Scale(false, calib_min, calib_max) / (data_scale * data_scale);
    } else if (output == Output::kFloat) {
      scale = 1.f / (data_scale * data_scale);
    }
    scale /= std::sqrt(static_cast<float>(g.d));
    RefTensor out(Shape{g.n * heads, g.t, g.t}), lo(Shape{1}), hi(Shape{1});
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < g.t; ++i)
          for (int64_t j = 0; j < g.t; ++j) {
            int64_t acc = 0;
            for (int64_t c = 0; c < g.d; ++c) {
              acc += static_cast<int64_t>(in[0][g.At(i, b, h, 0, c)]) *
                     static_cast<int64_t>(in[0][g.At(j, b, h, 1, c)]);
            }
            out[((b * heads + h) * g.t + i) * g.t + j] = Convert(acc, scale, output);
          }
    if (output == Output::kFloat) return std::vector<RefTensor>{out};
    // Requantized: the calibrated range; int32: MXNet 1.9.1's range of zeros.
    lo[0] = output == Output::kInt8 ? static_cast<float>(calib_min) : -0.0;
    hi[0] = output == Output::kInt8 ? static_cast<float>(calib_max) : 0.0;
    return std::vector<RefTensor>{out, lo, hi};
  };
}

// int8 projections, then its range min < 0 < max.
double QKInput(std::mt19937& rng, size_t input, int64_t) {
  if (input == 0) return std::uniform_int_distribution<int>(-127, 127)(rng);
  const double magnitude = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
  return input == 1 ? -magnitude : magnitude;
}

OpCase QKFloat(Shape qkv, int64_t heads, const std::string& note) {
  OpCase c = Case("_sg_mkldnn_selfatt_qk", {{"heads", std::to_string(heads)}}, {qkv},
                  QKFloatRef(heads), note);
  c.subgraphs = [=] {
    return std::vector<Symbol>{FloatSubgraph("_contrib_interleaved_matmul_selfatt_qk", heads)};
  };
  return WithTol(c, 1e-5, 1e-5);
}

OpCase QKQuantized(Shape qkv, int64_t heads, Output output, const std::string& note,
                   double calib_min = -20, double calib_max = 25) {
  OpCase c = WithDTypes(
      WithGen(Case("_sg_mkldnn_selfatt_qk", QuantizedAttrs(heads, output, calib_min, calib_max),
                   {qkv, Shape{1}, Shape{1}}, QKQuantizedRef(heads, output, calib_min, calib_max),
                   note),
              QKInput),
      {DType::kInt8, DType::kFloat32, DType::kFloat32});
  c.subgraphs = [=] {
    return std::vector<Symbol>{FloatSubgraph("_contrib_interleaved_matmul_selfatt_qk", heads)};
  };
  // Integers exactly; float outputs within float32 rounding of the scaled sums.
  c.atol = output == Output::kFloat ? 1e-5 : 0.0;
  c.rtol = output == Output::kFloat ? 1e-6 : 0.0;
  return c;
}

// ---- _sg_mkldnn_selfatt_valatt ----------------------------------------------------------------

// out[t, n, h * D + c] = sum_j att[n * H + h, t, j] * v[j, n, h, c]; `finish` converts the sum.
template <typename T, typename Finish>
RefTensor ValAtt(const std::vector<RefTensor>& in, int64_t heads, Finish finish) {
  const Geometry g = GeometryOf(in[0].shape, heads);
  RefTensor out(Shape{g.t, g.n, heads * g.d});
  for (int64_t t = 0; t < g.t; ++t)
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t c = 0; c < g.d; ++c) {
          T acc = 0;
          for (int64_t j = 0; j < g.t; ++j) {
            acc += static_cast<T>(in[1][((b * heads + h) * g.t + t) * g.t + j]) *
                   static_cast<T>(in[0][g.At(j, b, h, 2, c)]);
          }
          out[(t * g.n + b) * heads * g.d + h * g.d + c] = finish(acc);
        }
  return out;
}

RefFn ValAttFloatRef(int64_t heads) {
  return [=](const std::vector<RefTensor>& in) {
    return std::vector<RefTensor>{ValAtt<double>(in, heads, [](double s) { return s; })};
  };
}

RefFn ValAttQuantizedRef(int64_t heads, Output output, double calib_min, double calib_max) {
  return [=](const std::vector<RefTensor>& in) {
    const float qkv_scale = Scale(false, in[2][0], in[3][0]);
    const float att_scale = Scale(true, in[4][0], in[5][0]);
    float scale = 1.f;
    if (output == Output::kInt8) {
      scale = Scale(false, calib_min, calib_max) / (qkv_scale * att_scale);
    } else if (output == Output::kFloat) {
      scale = 1.f / (qkv_scale * att_scale);
    }
    RefTensor out = ValAtt<int64_t>(in, heads, [&](int64_t s) {
      return output == Output::kInt32 ? static_cast<double>(s) : Convert(s, scale, output);
    });
    if (output == Output::kFloat) return std::vector<RefTensor>{out};
    RefTensor lo(Shape{1}), hi(Shape{1});
    if (output == Output::kInt8) {
      lo[0] = static_cast<float>(calib_min);
      hi[0] = static_cast<float>(calib_max);
    } else {
      // One int32 step is one int8 step of the values times one uint8 step of the attention.
      const float qkv_step = std::max(std::fabs(static_cast<float>(in[2][0])),
                                      std::fabs(static_cast<float>(in[3][0]))) /
                             127.f;
      const float att_step = std::max(std::fabs(static_cast<float>(in[4][0])),
                                      std::fabs(static_cast<float>(in[5][0]))) /
                             255.f;
      hi[0] = qkv_step * att_step * 2147483647.f;
      lo[0] = -hi[0];
    }
    return std::vector<RefTensor>{out, lo, hi};
  };
}

// An int8 projection, uint8 attention, then the ranges: the projection's around zero, the
// attention's [0, max] as a softmax's.
double ValAttInput(std::mt19937& rng, size_t input, int64_t) {
  if (input == 0) return std::uniform_int_distribution<int>(-127, 127)(rng);
  if (input == 1) return std::uniform_int_distribution<int>(0, 255)(rng);
  const double magnitude = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
  if (input == 4) return 0.0;
  return input == 2 ? -magnitude : magnitude;
}

OpCase ValAttFloat(Shape qkv, int64_t heads, const std::string& note) {
  const Shape att{qkv[1] * heads, qkv[0], qkv[0]};
  OpCase c = Case("_sg_mkldnn_selfatt_valatt", {{"heads", std::to_string(heads)}}, {qkv, att},
                  ValAttFloatRef(heads), note);
  c.subgraphs = [=] {
    return std::vector<Symbol>{FloatSubgraph("_contrib_interleaved_matmul_selfatt_valatt", heads)};
  };
  return WithTol(c, 1e-5, 1e-5);
}

OpCase ValAttQuantized(Shape qkv, int64_t heads, Output output, const std::string& note,
                       double calib_min = -3, double calib_max = 2) {
  const Shape att{qkv[1] * heads, qkv[0], qkv[0]};
  OpCase c = WithDTypes(
      WithGen(Case("_sg_mkldnn_selfatt_valatt", QuantizedAttrs(heads, output, calib_min, calib_max),
                   {qkv, att, Shape{1}, Shape{1}, Shape{1}, Shape{1}},
                   ValAttQuantizedRef(heads, output, calib_min, calib_max), note),
              ValAttInput),
      {DType::kInt8, DType::kUint8, DType::kFloat32, DType::kFloat32, DType::kFloat32,
       DType::kFloat32});
  c.subgraphs = [=] {
    return std::vector<Symbol>{FloatSubgraph("_contrib_interleaved_matmul_selfatt_valatt", heads)};
  };
  c.atol = output == Output::kFloat ? 1e-5 : 0.0;
  c.rtol = output == Output::kFloat ? 1e-6 : 0.0;
  return c;
}

}  // namespace

HN_CONFORMANCE_CASES(QuantizedSelfAttention) {
  cases->push_back(QKFloat(Shape{5, 2, 24}, 2, "float"));
  cases->push_back(QKQuantized(Shape{5, 2, 24}, 2, Output::kInt32, "int32_out"));
  cases->push_back(QKQuantized(Shape{6, 3, 36}, 3, Output::kInt8, "requantized"));
  // A narrow calibrated range: most scores saturate at -128 or 127.
  cases->push_back(QKQuantized(Shape{4, 1, 48}, 1, Output::kInt8, "saturated", -0.5, 0.5));
  cases->push_back(QKQuantized(Shape{5, 2, 24}, 4, Output::kFloat, "float_out"));

  cases->push_back(ValAttFloat(Shape{5, 2, 24}, 2, "float"));
  cases->push_back(ValAttQuantized(Shape{5, 2, 24}, 2, Output::kInt32, "int32_out"));
  cases->push_back(ValAttQuantized(Shape{6, 3, 36}, 3, Output::kInt8, "requantized"));
  cases->push_back(ValAttQuantized(Shape{7, 1, 12}, 1, Output::kInt8, "saturated", -0.1, 0.1));
  cases->push_back(ValAttQuantized(Shape{5, 2, 24}, 4, Output::kFloat, "float_out"));
}

HN_ERROR_CASES(QuantizedSelfAttention) {
  // The projection's last dimension is no multiple of 3 * heads.
  cases->push_back(Rejected("_sg_mkldnn_selfatt_qk", {{"heads", "2"}}, {{4, 2, 20}},
                            StatusCode::kShapeError,
                            {"_sg_mkldnn_selfatt_qk(node)", "multiple of 3 * heads (6)"}));
  // Attention of the wrong shape.
  cases->push_back(Rejected("_sg_mkldnn_selfatt_valatt", {{"heads", "2"}}, {{4, 2, 12}, {4, 4, 5}},
                            StatusCode::kShapeError,
                            {"_sg_mkldnn_selfatt_valatt(node)", "attention", "(4, 4, 4)"}));
  // Quantized qk on float data.
  cases->push_back(Rejected("_sg_mkldnn_selfatt_qk", {{"heads", "1"}, {"quantized", "True"}},
                            {{3, 1, 6}, {1}, {1}}, StatusCode::kTypeError,
                            {"_sg_mkldnn_selfatt_qk(node)", "int8", "float32"}));
  // Quantized valatt with int8 attention (it takes uint8).
  cases->push_back(Rejected("_sg_mkldnn_selfatt_valatt", {{"heads", "1"}, {"quantized", "True"}},
                            {{3, 1, 6}, {1, 3, 3}, {1}, {1}, {1}, {1}}, StatusCode::kTypeError,
                            {"_sg_mkldnn_selfatt_valatt(node)", "input 1", "uint8"},
                            {DType::kInt8, DType::kInt8, DType::kFloat32, DType::kFloat32,
                             DType::kFloat32, DType::kFloat32}));
  // A range input that is not (1,).
  cases->push_back(Rejected("_sg_mkldnn_selfatt_qk", {{"heads", "1"}, {"quantized", "True"}},
                            {{3, 1, 6}, {2}, {1}}, StatusCode::kShapeError,
                            {"_sg_mkldnn_selfatt_qk(node)", "input 1", "(1,)"},
                            {DType::kInt8, DType::kFloat32, DType::kFloat32}));
  // A float output and a calibrated int8 one at once.
  cases->push_back(Rejected("_sg_mkldnn_selfatt_qk",
                            {{"heads", "1"},
                             {"quantized", "True"},
                             {"enable_float_output", "True"},
                             {"min_calib_range", "-1"},
                             {"max_calib_range", "1"}},
                            {{3, 1, 6}, {1}, {1}}, StatusCode::kInvalidArgument,
                            {"_sg_mkldnn_selfatt_qk(node)", "enable_float_output"},
                            {DType::kInt8, DType::kFloat32, DType::kFloat32}));
  // Half a calibrated range.
  cases->push_back(Rejected("_sg_mkldnn_selfatt_valatt",
                            {{"heads", "1"}, {"quantized", "True"}, {"min_calib_range", "-1"}},
                            {{3, 1, 6}, {1, 3, 3}, {1}, {1}, {1}, {1}},
                            StatusCode::kInvalidArgument,
                            {"_sg_mkldnn_selfatt_valatt(node)", "max_calib_range"},
                            {DType::kInt8, DType::kUint8, DType::kFloat32, DType::kFloat32,
                             DType::kFloat32, DType::kFloat32}));
  // No heads.
  cases->push_back(
      Rejected("_sg_mkldnn_selfatt_qk", {}, {{3, 1, 6}}, StatusCode::kInvalidArgument, {"heads"}));
}

}  // namespace conformance
}  // namespace hybridnet
