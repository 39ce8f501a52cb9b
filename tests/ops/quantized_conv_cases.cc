// _contrib_quantized_conv and _sg_mkldnn_conv (float and quantized): references written with plain
// loops from MXNet 1.9.1's arithmetic (src/operator/subgraph/mkldnn/mkldnn_conv.cc,
// mkldnn_common.h): BatchNorm folded in float with alpha in double, weight scales per output
// channel (calibrated) or per tensor, weights and bias rounded to nearest even, the int32 sums
// plus bias times the requantization scale, the activations and the sum in float, the output
// rounded to nearest even and saturated. The integers must be equal.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ops/conformance.h"
#include "ops/nn_reference.h"

namespace hybridnet {
namespace conformance {
namespace {

constexpr double kDataMin = -1.5, kDataMax = 2.0;  // the data's range (uint8 data: 0 to max)
constexpr double kSumMin = -1.0, kSumMax = 3.0;

double Levels(DType t) { return t == DType::kUint8 ? 255.5 : 127.5; }
float MaxAbs(double a, double b) {
  return static_cast<float>(std::max(std::fabs(a), std::fabs(b)));
}

// Integers of `type` (uint8 0..255, int8 -128..127) for the data and sum inputs.
double Int8Value(std::mt19937& rng, DType type) {
  std::uniform_int_distribution<int> d(type == DType::kUint8 ? 0 : -128,
                                       type == DType::kUint8 ? 255 : 127);
  return d(rng);
}

// ---- _contrib_quantized_conv ------------------------------------------------------------------

// Inputs data, weight, [bias], then the ranges: data int8 or uint8, weight and bias int8.
OpCase QuantizedConv(ConvGeom g, Shape data, DType data_type, std::string note) {
  const int64_t C = data[1];
  Dims w{g.num_filter, C / g.num_group};
  w.insert(w.end(), g.kernel.begin(), g.kernel.end());
  std::vector<Shape> inputs = {data, Shape(w)};
  std::vector<DType> dtypes = {data_type, DType::kInt8};
  if (g.bias) {
    inputs.push_back(Shape({g.num_filter}));
    dtypes.push_back(DType::kInt8);
  }
  const size_t n = inputs.size();
  for (size_t i = 0; i < 2 * n; ++i) {
    inputs.push_back(Shape({1}));
    dtypes.push_back(DType::kFloat32);
  }
  AttrDict attrs = {{"kernel", Shape(g.kernel).ToString()},
                    {"stride", Shape(g.stride).ToString()},
                    {"pad", Shape(g.pad).ToString()},
                    {"dilate", Shape(g.dilate).ToString()},
                    {"num_filter", std::to_string(g.num_filter)},
                    {"num_group", std::to_string(g.num_group)},
                    {"no_bias", g.bias ? "False" : "True"}};
  const RefFn conv = ConvRef(g);
  // int32 sums plus the int8 bias as integers; the range: one step of the product times 2^31.
  RefFn ref = [conv, n](const std::vector<RefTensor>& in) {
    std::vector<RefTensor> out = conv(in);
    const double step =
        MaxAbs(in[n][0], in[n + 1][0]) / 127.0 * (MaxAbs(in[n + 2][0], in[n + 3][0]) / 127.0);
    RefTensor lo(Shape({1})), hi(Shape({1}));
    hi[0] = step * 2147483648.0;
    lo[0] = -hi[0];
    out.push_back(lo);
    out.push_back(hi);
    return out;
  };
  OpCase c = Case("_contrib_quantized_conv", attrs, inputs, ref, note);
  c.dtypes = dtypes;
  c.rtol = 1e-6;
  c.atol = 0;
  c.gen = [data_type, n](std::mt19937& rng, size_t input, int64_t) -> double {
    if (input == 0) return Int8Value(rng, data_type);
    if (input < n) return Int8Value(rng, DType::kInt8);
    const double ranges[6] = {
        data_type == DType::kUint8 ? 0.0 : kDataMin, kDataMax, -0.5, 0.25, -4.0, 3.0};
    return ranges[input - n];
  };
  return c;
}

// ---- _sg_mkldnn_conv ---------------------------------------------------------------------------

struct SgForm {
  ConvGeom g;
  bool bn = false;
  bool relu = false;          // with_act: relu after the convolution (and BatchNorm)
  bool sum = false;           // with_sum
  bool postsum_relu = false;  // with_postsum_act
  bool quantized = false;
  DType data = DType::kUint8;
  DType sum_type = DType::kUint8;
  std::optional<std::pair<double, double>> calib;  // min_calib_range, max_calib_range
};

AttrDict ConvAttrs(const ConvGeom& g) {
  return {{"kernel", Shape(g.kernel).ToString()},
          {"stride", Shape(g.stride).ToString()},
          {"pad", Shape(g.pad).ToString()},
          {"dilate", Shape(g.dilate).ToString()},
          {"num_filter", std::to_string(g.num_filter)},
          {"num_group", std::to_string(g.num_group)},
          {"no_bias", g.bias ? "False" : "True"}};
}

// The nested graph MXNet writes: Convolution [BatchNorm] [relu] [elemwise_add sum] [relu].
Symbol SgGraph(const SgForm& f) {
  std::vector<Symbol> conv_in = {Symbol::Var("data"), Symbol::Var("weight")};
  if (f.g.bias) conv_in.push_back(Symbol::Var("bias"));
  Symbol y = Symbol::Create("Convolution", conv_in, ConvAttrs(f.g), "conv");
  if (f.bn) {
    y = Symbol::Create(
        "BatchNorm",
        {y, Symbol::Var("gamma"), Symbol::Var("beta"), Symbol::Var("mean"), Symbol::Var("var")},
        {{"eps", "1e-05"}, {"fix_gamma", "False"}}, "bn");
  }
  if (f.relu) y = Symbol::Create("Activation", {y}, {{"act_type", "relu"}}, "relu");
  if (f.sum) y = Symbol::Create("elemwise_add", {y, Symbol::Var("sum")}, {}, "add");
  if (f.postsum_relu) y = Symbol::Create("Activation", {y}, {{"act_type", "relu"}}, "relu2");
  return y;
}

float RoundToEven(float x) { return std::nearbyint(x); }

template <typename T>
double Saturated(float x) {
  const float lo = static_cast<float>(std::numeric_limits<T>::lowest());
  const float hi = static_cast<float>(std::numeric_limits<T>::max());
  return RoundToEven(std::min(std::max(x, lo), hi));
}

// MXNet's quantized form, step by step (see the file comment). Inputs in MXNet's order.
RefFn SgQuantizedRef(SgForm f, DType out_type) {
  return [f, out_type](const std::vector<RefTensor>& in) {
    const ConvGeom& g = f.g;
    size_t at = 2;
    const size_t bias_at = g.bias ? at++ : 0;
    const size_t bn_at = f.bn ? at : 0;
    if (f.bn) at += 4;
    const size_t sum_at = f.sum ? at++ : 0;
    const size_t range_at = at;
    const int64_t F = g.num_filter, per = in[1].size() / F;
    // BatchNorm folded in.
    std::vector<float> w(static_cast<size_t>(in[1].size())), b;
    for (int64_t i = 0; i < in[1].size(); ++i) w[i] = static_cast<float>(in[1][i]);
    if (g.bias || f.bn) b.assign(static_cast<size_t>(F), 0.f);
    for (int64_t c = 0; c < F && g.bias; ++c) b[c] = static_cast<float>(in[bias_at][c]);
    for (int64_t c = 0; c < F && f.bn; ++c) {
      const float gamma = static_cast<float>(in[bn_at][c]),
                  beta = static_cast<float>(in[bn_at + 1][c]);
      const float mean = static_cast<float>(in[bn_at + 2][c]),
                  var = static_cast<float>(in[bn_at + 3][c]);
      const float alpha = static_cast<float>(gamma / std::sqrt(static_cast<double>(var) + 1e-5));
      b[c] = g.bias ? beta + alpha * (b[c] - mean) : beta - alpha * mean;
      for (int64_t k = 0; k < per; ++k) w[c * per + k] = w[c * per + k] * alpha;
    }
    const float data_min = static_cast<float>(in[range_at][0]);
    const float data_max = static_cast<float>(in[range_at + 1][0]);
    const float data_scale = static_cast<float>(Levels(f.data)) / MaxAbs(data_min, data_max);
    std::vector<float> ws(static_cast<size_t>(F)), out_scale;
    float range_min = 0, range_max = 0, output_scale;
    if (f.calib) {
      for (int64_t c = 0; c < F; ++c) {
        float lo = w[c * per], hi = w[c * per];
        for (int64_t k = 0; k < per; ++k) {
          lo = std::min(lo, w[c * per + k]);
          hi = std::max(hi, w[c * per + k]);
        }
        ws[c] = 127.5f / MaxAbs(lo, hi);
        if (!b.empty() && b[c] != 0.f) {
          const float limit = b[c] > 0 ? 2147483648.f : -2147483648.f;
          ws[c] = std::min(ws[c], limit / 2 / b[c] / data_scale);
        }
      }
      output_scale = static_cast<float>(Levels(out_type)) / MaxAbs(f.calib->first, f.calib->second);
      for (int64_t c = 0; c < F; ++c) out_scale.push_back(output_scale / data_scale / ws[c]);
      range_min = static_cast<float>(f.calib->first);
      range_max = static_cast<float>(f.calib->second);
    } else {
      const float lo = *std::min_element(w.begin(), w.end());
      const float hi = *std::max_element(w.begin(), w.end());
      std::fill(ws.begin(), ws.end(), 127.5f / MaxAbs(lo, hi));
      // One step of the int8 weights times one step of the data, times 2^31 levels.
      const bool s8 = f.data == DType::kInt8;
      const float step =
          (MaxAbs(lo, hi) / 127.f) * (MaxAbs(data_min, data_max) / (s8 ? 127.f : 255.f));
      range_max = step * 2147483648.f;
      range_min = -range_max;
      output_scale = data_scale * ws[0];
    }
    // Quantized weights and bias, the int32 sums.
    RefTensor wq(in[1].shape);
    for (int64_t c = 0; c < F; ++c) {
      // MXNet masks per-channel weight scales on the group dimension: channel c of a grouped
      // convolution is quantized by the scale of channel c / (F / G).
      const float scale = ws[g.num_group > 1 ? c / (F / g.num_group) : c];
      for (int64_t k = 0; k < per; ++k) wq[c * per + k] = Saturated<int8_t>(w[c * per + k] * scale);
    }
    ConvGeom plain = g;
    plain.bias = false;
    const RefTensor acc = ConvRef(plain)({in[0], wq})[0];
    float sum_scale = 1.f;
    if (f.sum) {
      const float sum_min = static_cast<float>(in[range_at + 2][0]);
      const float sum_max = static_cast<float>(in[range_at + 3][0]);
      sum_scale =
          output_scale / (static_cast<float>(Levels(f.sum_type)) / MaxAbs(sum_min, sum_max));
    }
    RefTensor y(acc.shape);
    const int64_t positions = acc.size() / (acc.shape[0] * F);
    for (int64_t i = 0; i < acc.size(); ++i) {
      const int64_t c = (i / positions) % F;
      float d = static_cast<float>(acc[i]);
      if (!b.empty()) d = d + static_cast<float>(Saturated<int32_t>(b[c] * (ws[c] * data_scale)));
      if (!out_scale.empty()) d = d * out_scale[c];
      if (f.relu) d = std::max(d, 0.f);
      if (f.sum) d = d + sum_scale * static_cast<float>(in[sum_at][i]);
      if (f.postsum_relu) d = std::max(d, 0.f);
      // MXNet writes a uint8 output with an int8 sum through the sum's memory: int8 saturation.
      const bool int8_saturation = f.sum && f.sum_type == DType::kInt8;
      y[i] = out_type == DType::kUint8 && !int8_saturation ? Saturated<uint8_t>(d)
             : out_type == DType::kUint8                   ? Saturated<int8_t>(d)
             : out_type == DType::kInt8                    ? Saturated<int8_t>(d)
                                                           : Saturated<int32_t>(d);
    }
    RefTensor lo(Shape({1})), hi(Shape({1}));
    lo[0] = range_min;
    hi[0] = range_max;
    return std::vector<RefTensor>{y, lo, hi};
  };
}

// conv [+ BatchNorm] [+ relu] [+ sum] [+ relu] in double.
RefFn SgFloatRef(SgForm f) {
  return [f](const std::vector<RefTensor>& in) {
    size_t at = f.g.bias ? 3 : 2;
    RefTensor y = ConvRef(f.g)(in)[0];
    const int64_t F = f.g.num_filter, positions = y.size() / (y.shape[0] * F);
    for (int64_t i = 0; i < y.size(); ++i) {
      const int64_t c = (i / positions) % F;
      double v = y[i];
      if (f.bn) {
        const double scale = in[at][c] / std::sqrt(in[at + 3][c] + 1e-5);
        v = (v - in[at + 2][c]) * scale + in[at + 1][c];
      }
      if (f.relu) v = std::max(v, 0.0);
      if (f.sum) v += in[at + (f.bn ? 4 : 0)][i];
      if (f.postsum_relu) v = std::max(v, 0.0);
      y[i] = v;
    }
    return std::vector<RefTensor>{y};
  };
}

OpCase SgConv(SgForm f, Shape data, std::string note) {
  const ConvGeom& g = f.g;
  Dims w{g.num_filter, data[1] / g.num_group};
  w.insert(w.end(), g.kernel.begin(), g.kernel.end());
  std::vector<Shape> inputs = {data, Shape(w)};
  if (g.bias) inputs.push_back(Shape({g.num_filter}));
  const size_t bn_at = inputs.size();
  for (int i = 0; f.bn && i < 4; ++i) inputs.push_back(Shape({g.num_filter}));
  std::vector<DType> dtypes(inputs.size(), DType::kFloat32);
  if (f.quantized) dtypes[0] = f.data;
  const size_t sum_at = inputs.size();
  if (f.sum) {
    // The output's shape: that of the convolution.
    Dims out{data[0], g.num_filter};
    for (size_t i = 0; i < g.kernel.size(); ++i) {
      out.push_back(
          (data[2 + i] + 2 * g.pad[i] - (g.dilate[i] * (g.kernel[i] - 1) + 1)) / g.stride[i] + 1);
    }
    inputs.push_back(Shape(out));
    dtypes.push_back(f.quantized ? f.sum_type : DType::kFloat32);
  }
  const size_t range_at = inputs.size();
  const size_t ranges = f.quantized ? (f.sum ? 4 : 2) : 0;
  for (size_t i = 0; i < ranges; ++i) {
    inputs.push_back(Shape({1}));
    dtypes.push_back(DType::kFloat32);
  }
  AttrDict attrs;
  if (f.bn) attrs["with_bn"] = "true";
  if (f.relu) attrs["with_act"] = "true";
  if (f.sum) attrs["with_sum"] = "true";
  if (f.postsum_relu) attrs["with_postsum_act"] = "true";
  if (f.quantized) attrs["quantized"] = "true";
  if (f.calib) {
    attrs["min_calib_range"] = std::to_string(f.calib->first);
    attrs["max_calib_range"] = std::to_string(f.calib->second);
    f.calib = std::make_pair(static_cast<double>(std::stof(attrs["min_calib_range"])),
                             static_cast<double>(std::stof(attrs["max_calib_range"])));
  }
  DType out_type = DType::kFloat32;
  if (f.quantized) {
    const bool uint8 = (!f.sum && f.relu) || f.postsum_relu;
    out_type = !f.calib ? DType::kInt32 : uint8 ? DType::kUint8 : DType::kInt8;
  }
  OpCase c = Case("_sg_mkldnn_conv", attrs, inputs,
                  f.quantized ? SgQuantizedRef(f, out_type) : SgFloatRef(f), note);
  c.dtypes = dtypes;
  if (f.quantized) {
    c.rtol = 1e-6;
    c.atol = 0;
  } else {
    c.rtol = 1e-4;
    c.atol = 1e-4;
  }
  c.subgraphs = [f] { return std::vector<Symbol>{SgGraph(f)}; };
  c.gen = [f, bn_at, sum_at, range_at](std::mt19937& rng, size_t input, int64_t) -> double {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    if (input == 0) return f.quantized ? Int8Value(rng, f.data) : 2 * u(rng);
    if (f.bn && input >= bn_at && input < bn_at + 4) {
      const size_t k = input - bn_at;  // gamma, beta, mean, var
      return k == 3 ? 0.5 + std::fabs(u(rng)) : k == 0 ? 1.0 + 0.5 * u(rng) : 0.5 * u(rng);
    }
    if (f.sum && input == sum_at) return f.quantized ? Int8Value(rng, f.sum_type) : 2 * u(rng);
    if (f.quantized && input >= range_at) {
      const double range_values[4] = {f.data == DType::kUint8 ? 0.0 : kDataMin, kDataMax,
                                      f.sum_type == DType::kUint8 ? 0.0 : kSumMin, kSumMax};
      return range_values[input - range_at];
    }
    return u(rng);
  };
  return c;
}

ConvGeom Geom(Dims kernel, Dims stride, Dims pad, int64_t F, int64_t G, bool bias) {
  ConvGeom g;
  g.kernel = kernel;
  g.stride = stride;
  g.pad = pad;
  g.dilate = Dims(kernel.size(), 1);
  g.num_filter = F;
  g.num_group = G;
  g.bias = bias;
  return g;
}

}  // namespace

HN_CONFORMANCE_CASES(QuantizedConvolution) {
  // MXNet's oneDNN 2.4 runs few channels on its SSE4.1 / AVX2 int8 kernels, whose pairwise int16
  // sums saturate: it checks the 32-channel case, which gets its VNNI kernel.
  const std::string saturates =
      "few channels: MXNet's oneDNN picks a non-VNNI int8 kernel whose int16 pair sums saturate";
  cases->push_back(QuantizedConv(Geom({3, 3}, {1, 1}, {1, 1}, 32, 1, true), Shape({1, 32, 6, 5}),
                                 DType::kUint8, "uint8_bias_32"));
  cases->push_back(NotInMXNet(QuantizedConv(Geom({3, 3}, {1, 1}, {1, 1}, 8, 1, true),
                                            Shape({1, 3, 6, 5}), DType::kUint8, "uint8_bias"),
                              saturates));
  cases->push_back(NotInMXNet(QuantizedConv(Geom({3, 3}, {2, 2}, {1, 1}, 16, 1, false),
                                            Shape({2, 8, 7, 7}), DType::kInt8, "int8_stride2"),
                              "MXNet's oneDNN quantized_conv takes uint8 data only"));
  cases->push_back(NotInMXNet(QuantizedConv(Geom({3, 3}, {1, 1}, {1, 1}, 8, 2, true),
                                            Shape({1, 4, 5, 5}), DType::kUint8, "grouped"),
                              "MXNet's quantized_conv takes one group only"));
  cases->push_back(NotInMXNet(QuantizedConv(Geom({1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 4, 1, false),
                                            Shape({1, 3, 2, 3, 3}), DType::kUint8, "3d_1x1"),
                              saturates));

  SgForm f;
  f.g = Geom({3, 3}, {1, 1}, {1, 1}, 8, 1, false);
  f.bn = f.relu = true;
  cases->push_back(SgConv(f, Shape({1, 4, 6, 6}), "float_bn_relu"));
  f.quantized = true;
  cases->push_back(SgConv(f, Shape({1, 4, 6, 6}), "uint8_bn_relu_int32"));
  f.calib = std::make_pair(0.0, 3.5);
  cases->push_back(SgConv(f, Shape({1, 4, 6, 6}), "uint8_bn_relu_calibrated"));
  f.data = DType::kInt8;
  f.g.bias = true;
  cases->push_back(SgConv(f, Shape({1, 4, 6, 6}), "int8_bias_bn_relu_calibrated"));
  f.relu = false;
  f.calib = std::make_pair(-2.5, 3.0);
  cases->push_back(SgConv(f, Shape({1, 4, 6, 6}), "int8_bias_bn_int8_out"));

  SgForm residual;
  residual.g = Geom({3, 3}, {1, 1}, {1, 1}, 8, 1, false);
  residual.bn = residual.sum = residual.postsum_relu = true;
  cases->push_back(SgConv(residual, Shape({1, 8, 5, 5}), "float_bn_sum_relu"));
  residual.quantized = true;
  residual.calib = std::make_pair(0.0, 4.0);
  cases->push_back(SgConv(residual, Shape({1, 8, 5, 5}), "uint8_bn_sum_relu_calibrated"));
  residual.sum_type = DType::kInt8;
  cases->push_back(SgConv(residual, Shape({1, 8, 5, 5}), "int8_sum_uint8_out"));

  SgForm depthwise;
  depthwise.g = Geom({3, 3}, {2, 2}, {1, 1}, 8, 8, true);
  depthwise.relu = true;
  depthwise.quantized = true;
  depthwise.calib = std::make_pair(0.0, 2.0);
  cases->push_back(SgConv(depthwise, Shape({1, 8, 7, 7}), "depthwise_calibrated"));
  SgForm grouped;
  grouped.g = Geom({3, 3}, {1, 1}, {1, 1}, 8, 2, true);
  grouped.quantized = true;
  grouped.data = DType::kInt8;
  grouped.calib = std::make_pair(-3.0, 3.0);
  cases->push_back(SgConv(grouped, Shape({2, 4, 5, 5}), "grouped_calibrated"));
  grouped.calib.reset();
  cases->push_back(SgConv(grouped, Shape({2, 4, 5, 5}), "grouped_int32"));
}

HN_ERROR_CASES(QuantizedConvolution) {
  // A 3x3 conv of 4 filters without bias, its inputs (data, weight, four ranges) given `types` and
  // the data's range `range_shape`.
  const auto plain_conv = [](std::vector<DType> types, Shape range_shape, StatusCode code,
                             std::vector<std::string> message) {
    return Rejected("_contrib_quantized_conv",
                    {{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"no_bias", "True"}},
                    {{1, 3, 5, 5}, {4, 3, 3, 3}, range_shape, {1}, {1}, {1}}, code,
                    std::move(message), std::move(types));
  };
  const DType f32 = DType::kFloat32;
  cases->push_back(plain_conv({f32, DType::kInt8, f32, f32, f32, f32}, {1}, StatusCode::kTypeError,
                              {"_contrib_quantized_conv", "data", "float32"}));
  cases->push_back(plain_conv({DType::kUint8, f32, f32, f32, f32, f32}, {1}, StatusCode::kTypeError,
                              {"_contrib_quantized_conv", "weight", "int8"}));
  cases->push_back(plain_conv({DType::kUint8, DType::kInt8, f32, f32, f32, f32}, {2},
                              StatusCode::kShapeError,
                              {"_contrib_quantized_conv", "range", "(2,)"}));
  // The fused form's calibrated range: half of one, and one upside down (refused at parse).
  cases->push_back(Rejected("_sg_mkldnn_conv", {{"quantized", "true"}, {"max_calib_range", "4"}},
                            {{1, 3, 5, 5}}, StatusCode::kInvalidArgument,
                            {"_sg_mkldnn_conv", "(got only max_calib_range)"}));
  cases->push_back(
      Rejected("_sg_mkldnn_conv",
               {{"quantized", "true"}, {"min_calib_range", "4"}, {"max_calib_range", "1"}},
               {{1, 3, 5, 5}}, StatusCode::kInvalidArgument,
               {"_sg_mkldnn_conv", "min_calib_range 4 is larger than max_calib_range 1"}));
}

}  // namespace conformance
}  // namespace hybridnet
