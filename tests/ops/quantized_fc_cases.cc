// Conformance cases: the quantized dense layers, _contrib_quantized_fully_connected and
// _sg_mkldnn_fully_connected (float and quantized, tensor-wise and channel-wise), with references
// written from MXNet 1.9.1's arithmetic: the scales and the int32 bias in float32 as MXNet
// computes them, the sums in exact integers, the requantized outputs rounded to nearest even.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

constexpr float kInt8Levels = 127.5f, kUint8Levels = 255.5f;

float MaxAbs(double a, double b) {
  return std::max(std::fabs(static_cast<float>(a)), std::fabs(static_cast<float>(b)));
}

float ScaleOf(bool uint8, double lo, double hi) {
  const float range = MaxAbs(lo, hi);
  return range == 0.f ? 2147483647.f : (uint8 ? kUint8Levels : kInt8Levels) / range;
}

// The layer's geometry from its inputs: rows x k data, hidden x k weights.
struct Dims {
  int64_t rows, hidden, k;
};
Dims DimsOf(const std::vector<RefTensor>& in) {
  const int64_t hidden = in[1].shape[0], k = in[1].shape[1];
  return {in[0].size() / k, hidden, k};
}

// sum_j x[r, j] w[h, j] in exact integers (|sum| < 2^31 for these sizes).
double Sum(const std::vector<RefTensor>& in, const Dims& d, int64_t r, int64_t h) {
  int64_t acc = 0;
  for (int64_t j = 0; j < d.k; ++j)
    acc += static_cast<int64_t>(in[0][r * d.k + j]) * static_cast<int64_t>(in[1][h * d.k + j]);
  return static_cast<double>(acc);
}

Shape OutShape(const Shape& data, int64_t hidden, bool flatten) {
  if (flatten) return Shape{data[0], hidden};
  Shape o = data;
  o[o.ndim() - 1] = hidden;
  return o;
}

// Range of the int32 product: one step of each factor, times 2^31 - 1 (as float).
void ProductRange(bool uint8, double lo_d, double hi_d, double lo_w, double hi_w, RefTensor* lo,
                  RefTensor* hi) {
  const float step_d = MaxAbs(lo_d, hi_d) / 127.f;
  const float step_w = MaxAbs(lo_w, hi_w) / (uint8 ? 255.f : 127.f);
  const float top = step_d * step_w * 2147483647.f;
  (*hi)[0] = top;
  (*lo)[0] = -top;
}

// Inputs: data integers in the data dtype's range, weight and bias int8 integers, then ranges
// alternating min < 0 < max.
InputGen QuantizedInputs(bool uint8, size_t base, bool float_weights = false) {
  return [=](std::mt19937& rng, size_t input, int64_t) -> double {
    if (input == 0) {
      return uint8 ? std::uniform_int_distribution<int>(0, 255)(rng)
                   : std::uniform_int_distribution<int>(-127, 127)(rng);
    }
    if (input < base) {
      if (float_weights) return std::uniform_real_distribution<double>(-0.5, 0.5)(rng);
      return std::uniform_int_distribution<int>(-127, 127)(rng);
    }
    const double magnitude = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
    return (input - base) % 2 == 0 ? -magnitude : magnitude;
  };
}

// _contrib_quantized_fully_connected: int32 sums plus the bias in the sums' scale, truncated.
RefFn ContribRef(bool uint8, bool no_bias, bool flatten) {
  return [=](const std::vector<RefTensor>& in) {
    const Dims d = DimsOf(in);
    const size_t base = no_bias ? 2 : 3;
    const double lo_d = in[base][0], hi_d = in[base + 1][0];
    const double lo_w = in[base + 2][0], hi_w = in[base + 3][0];
    float rescale = 0.f;
    if (!no_bias) {
      rescale = ScaleOf(uint8, lo_d, hi_d) * ScaleOf(false, lo_w, hi_w) *
                MaxAbs(in[base + 4][0], in[base + 5][0]) / kInt8Levels;
    }
    RefTensor out(OutShape(in[0].shape, d.hidden, flatten)), lo(Shape{1}), hi(Shape{1});
    for (int64_t r = 0; r < d.rows; ++r) {
      for (int64_t h = 0; h < d.hidden; ++h) {
        const double bias = no_bias ? 0.0 : std::trunc(static_cast<float>(in[2][h]) * rescale);
        out[r * d.hidden + h] = Sum(in, d, r, h) + bias;
      }
    }
    ProductRange(uint8, lo_d, hi_d, lo_w, hi_w, &lo, &hi);
    return std::vector<RefTensor>{out, lo, hi};
  };
}

std::vector<DType> ContribDTypes(bool uint8, bool no_bias) {
  std::vector<DType> t{uint8 ? DType::kUint8 : DType::kInt8, DType::kInt8};
  if (!no_bias) t.push_back(DType::kInt8);
  t.resize(no_bias ? 6 : 9, DType::kFloat32);
  return t;
}

std::vector<Shape> WithRanges(std::vector<Shape> shapes, size_t ranges) {
  shapes.resize(shapes.size() + ranges, Shape{1});
  return shapes;
}

OpCase Contrib(bool uint8, bool no_bias, bool flatten, Shape data, int64_t hidden,
               const std::string& note) {
  const int64_t k = flatten ? data.Size() / data[0] : data[data.ndim() - 1];
  std::vector<Shape> shapes{data, Shape{hidden, k}};
  if (!no_bias) shapes.push_back(Shape{hidden});
  const size_t base = shapes.size();
  AttrDict attrs{{"num_hidden", std::to_string(hidden)},
                 {"no_bias", no_bias ? "True" : "False"},
                 {"flatten", flatten ? "True" : "False"}};
  return WithDTypes(
      WithGen(Case("_contrib_quantized_fully_connected", attrs, WithRanges(shapes, 2 * base),
                   ContribRef(uint8, no_bias, flatten), note),
              QuantizedInputs(uint8, base)),
      ContribDTypes(uint8, no_bias));
}

// ---- _sg_mkldnn_fully_connected ---------------------------------------------------------------

Symbol FcSubgraph(int64_t hidden, bool no_bias, const std::string& eltwise, AttrDict act = {}) {
  std::vector<Symbol> in{Symbol::Var("data"), Symbol::Var("weight")};
  if (!no_bias) in.push_back(Symbol::Var("bias"));
  Symbol fc = Symbol::Create(
      "FullyConnected", in,
      {{"num_hidden", std::to_string(hidden)}, {"no_bias", no_bias ? "True" : "False"}}, "fc");
  if (eltwise.empty()) return fc;
  return Symbol::Create(eltwise, {fc}, act, "act");
}

// y = sum + bias, then the elementwise function, in doubles.
double Eltwise(const std::string& kind, double x, double alpha) {
  if (kind == "relu") return x > 0 ? x : 0;
  if (kind == "leaky") return x > 0 ? x : alpha * x;
  if (kind == "sigmoid") return 1 / (1 + std::exp(-x));
  if (kind == "tanh") return std::tanh(x);
  if (kind == "clip") return std::min(std::max(x, 0.0), alpha);
  if (kind == "square") return x * x;
  if (kind == "abs") return std::fabs(x);
  return x;
}

// The float form: FullyConnected then the elementwise op, in doubles rounded to float.
RefFn SgFloatRef(const std::string& kind, double alpha) {
  return [=](const std::vector<RefTensor>& in) {
    const Dims d = DimsOf(in);
    RefTensor out(Shape{d.rows, d.hidden});
    for (int64_t r = 0; r < d.rows; ++r) {
      for (int64_t h = 0; h < d.hidden; ++h) {
        double acc = in.size() > 2 ? in[2][h] : 0.0;
        for (int64_t j = 0; j < d.k; ++j) acc += in[0][r * d.k + j] * in[1][h * d.k + j];
        out[r * d.hidden + h] = F32(Eltwise(kind, F32(acc), alpha));
      }
    }
    return std::vector<RefTensor>{out};
  };
}

// How the quantized form writes its output.
enum class Output { kInt32, kRequantized, kFloat };

struct SgForm {
  bool uint8 = false;
  bool channel_wise = false;
  Output output = Output::kInt32;
  std::string eltwise;  // "", "relu", "tanh", ...
  double alpha = 0;
  double calib_min = -3, calib_max = 3;
};

// Nearest even integer of x saturated to the output type.
double Saturate(double x, DType t) {
  const double r = std::nearbyint(x);
  if (t == DType::kUint8) return std::min(std::max(r, 0.0), 255.0);
  if (t == DType::kInt8) return std::min(std::max(r, -128.0), 127.0);
  return r;
}

DType SgOutType(const SgForm& f) {
  if (f.output == Output::kFloat) return DType::kFloat32;
  if (f.output == Output::kInt32) return DType::kInt32;
  const bool non_negative = f.eltwise == "relu" || f.eltwise == "sigmoid" || f.eltwise == "clip" ||
                            f.eltwise == "square" || f.eltwise == "abs" || f.eltwise == "leaky";
  return non_negative ? DType::kUint8 : DType::kInt8;
}

// The quantized form (mkldnn_fc.cc): weight scales (per channel from the float weights, or the
// int8 weights' range), the bias in the sums' scale, the output scale of the requantized or float
// output, the elementwise op (scaled by the output scale when requantizing), then rounding.
RefFn SgQuantizedRef(const SgForm& f, bool no_bias) {
  return [=](const std::vector<RefTensor>& in) {
    const Dims d = DimsOf(in);
    const size_t base = no_bias ? 2 : 3;
    const float data_scale = ScaleOf(f.uint8, in[base][0], in[base + 1][0]);
    std::vector<float> wscale(static_cast<size_t>(d.hidden));
    std::vector<double> q(in[1].v), bias(static_cast<size_t>(d.hidden), 0.0);
    for (int64_t h = 0; h < d.hidden; ++h) {
      if (f.channel_wise) {
        float lo = 1e30f, hi = -1e30f;
        for (int64_t j = 0; j < d.k; ++j) {
          lo = std::min(lo, static_cast<float>(in[1][h * d.k + j]));
          hi = std::max(hi, static_cast<float>(in[1][h * d.k + j]));
        }
        wscale[h] = ScaleOf(false, lo, hi);
        for (int64_t j = 0; j < d.k; ++j)
          q[h * d.k + j] =
              Saturate(static_cast<float>(in[1][h * d.k + j]) * wscale[h], DType::kInt8);
        if (!no_bias)
          bias[h] = std::nearbyint(static_cast<float>(in[2][h]) * (wscale[h] * data_scale));
      } else {
        wscale[h] = ScaleOf(false, in[base + 2][0], in[base + 3][0]);
        if (!no_bias) {
          const float rescale =
              data_scale * wscale[h] / ScaleOf(false, in[base + 4][0], in[base + 5][0]);
          bias[h] = std::round(static_cast<float>(in[2][h]) * rescale);
        }
      }
    }
    const DType out_type = SgOutType(f);
    const float out_scale = f.output == Output::kRequantized
                                ? ScaleOf(out_type == DType::kUint8, f.calib_min, f.calib_max)
                                : 1.f;
    RefTensor out(Shape{d.rows, d.hidden});
    for (int64_t r = 0; r < d.rows; ++r) {
      for (int64_t h = 0; h < d.hidden; ++h) {
        double acc = bias[h];
        for (int64_t j = 0; j < d.k; ++j) acc += in[0][r * d.k + j] * q[h * d.k + j];
        double y = acc;
        if (f.output != Output::kInt32) y = acc / data_scale / wscale[h];
        y = Eltwise(f.eltwise, y, f.alpha) * out_scale;
        out[r * d.hidden + h] = out_type == DType::kFloat32 ? F32(y) : Saturate(y, out_type);
      }
    }
    if (f.output == Output::kFloat) return std::vector<RefTensor>{out};
    RefTensor lo(Shape{1}), hi(Shape{1});
    if (f.output == Output::kRequantized) {
      lo[0] = f.calib_min;
      hi[0] = f.calib_max;
    } else {
      ProductRange(f.uint8, in[base][0], in[base + 1][0], in[base + 2][0], in[base + 3][0], &lo,
                   &hi);
    }
    return std::vector<RefTensor>{out, lo, hi};
  };
}

std::string Text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

OpCase SgQuantized(const SgForm& f, bool no_bias, Shape data, int64_t hidden,
                   const std::string& note) {
  const int64_t k = data.Size() / data[0];
  std::vector<Shape> shapes{data, Shape{hidden, k}};
  if (!no_bias) shapes.push_back(Shape{hidden});
  const size_t base = shapes.size();
  std::vector<DType> types{f.uint8 ? DType::kUint8 : DType::kInt8};
  for (size_t i = 1; i < base; ++i)
    types.push_back(f.channel_wise ? DType::kFloat32 : DType::kInt8);
  const size_t ranges = f.channel_wise ? 2 : 2 * base;
  types.resize(base + ranges, DType::kFloat32);
  AttrDict attrs{{"quantized", "True"}};
  if (!f.eltwise.empty()) attrs["with_eltwise"] = "True";
  if (f.channel_wise) attrs["channel_wise_quantize"] = "True";
  if (f.output == Output::kFloat) attrs["enable_float_output"] = "True";
  if (f.output == Output::kRequantized) {
    attrs["min_calib_range"] = Text(f.calib_min);
    attrs["max_calib_range"] = Text(f.calib_max);
  }
  AttrDict act;
  std::string eltwise_op;
  if (f.eltwise == "relu" || f.eltwise == "sigmoid" || f.eltwise == "tanh") {
    eltwise_op = "Activation";
    act = {{"act_type", f.eltwise}};
  } else if (f.eltwise == "leaky") {
    eltwise_op = "LeakyReLU";
    act = {{"act_type", "leaky"}, {"slope", Text(f.alpha)}};
  } else if (f.eltwise == "clip") {
    eltwise_op = "clip";
    act = {{"a_min", "0"}, {"a_max", Text(f.alpha)}};
  } else if (!f.eltwise.empty()) {
    eltwise_op = f.eltwise;
  }
  OpCase c = WithDTypes(WithGen(Case("_sg_mkldnn_fully_connected", attrs,
                                     WithRanges(shapes, ranges), SgQuantizedRef(f, no_bias), note),
                                QuantizedInputs(f.uint8, base, f.channel_wise)),
                        types);
  c.subgraphs = [=] { return std::vector<Symbol>{FcSubgraph(hidden, no_bias, eltwise_op, act)}; };
  // Requantized outputs: within one step of the exact value, where oneDNN's float scaling rounds
  // the other way; float outputs within float rounding of the scaled sums.
  c.atol = f.output == Output::kRequantized ? 1.0 : 1e-5;
  c.rtol = f.output == Output::kFloat ? 1e-5 : 0.0;
  return c;
}

}  // namespace

HN_CONFORMANCE_CASES(QuantizedFullyConnected) {
  cases->push_back(Contrib(false, false, true, Shape{4, 24}, 8, "int8"));
  cases->push_back(Contrib(true, false, true, Shape{4, 24}, 8, "uint8"));
  cases->push_back(Contrib(false, true, true, Shape{3, 2, 5}, 6, "no_bias_flatten"));
  cases->push_back(Contrib(true, false, false, Shape{2, 3, 16}, 5, "rows_of_last_axis"));
  cases->push_back(Contrib(false, false, true, Shape{32, 64}, 32, "wide"));

  OpCase fp32 = Case("_sg_mkldnn_fully_connected", {{"with_eltwise", "True"}},
                     {{5, 12}, {7, 12}, {7}}, SgFloatRef("relu", 0), "float_relu");
  fp32.subgraphs = [] {
    return std::vector<Symbol>{FcSubgraph(7, false, "Activation", {{"act_type", "relu"}})};
  };
  cases->push_back(fp32);
  OpCase fp32_plain = Case("_sg_onednn_fully_connected", {}, {{3, 9}, {4, 9}}, SgFloatRef("", 0),
                           "float_alias_no_bias");
  fp32_plain.subgraphs = [] { return std::vector<Symbol>{FcSubgraph(4, true, "")}; };
  cases->push_back(fp32_plain);

  SgForm f;
  cases->push_back(SgQuantized(f, false, Shape{4, 24}, 8, "int32_out"));
  f.uint8 = true;
  cases->push_back(SgQuantized(f, true, Shape{4, 24}, 8, "uint8_int32_out_no_bias"));
  f = SgForm();
  f.output = Output::kRequantized;
  cases->push_back(SgQuantized(f, false, Shape{6, 20}, 10, "requantized_int8"));
  f.eltwise = "relu";
  f.calib_min = 0;
  f.calib_max = 2.5;
  cases->push_back(SgQuantized(f, false, Shape{6, 20}, 10, "requantized_relu_uint8"));
  f.uint8 = true;
  cases->push_back(SgQuantized(f, false, Shape{32, 64}, 32, "uint8_requantized_relu_wide"));
  f = SgForm();
  f.output = Output::kFloat;
  cases->push_back(SgQuantized(f, false, Shape{4, 24}, 8, "float_out"));
  f.eltwise = "tanh";
  cases->push_back(SgQuantized(f, false, Shape{4, 24}, 8, "float_out_tanh"));
  f = SgForm();
  f.channel_wise = true;
  f.output = Output::kRequantized;
  cases->push_back(SgQuantized(f, false, Shape{6, 20}, 10, "channel_wise_requantized"));
  f.output = Output::kFloat;
  f.uint8 = true;
  cases->push_back(SgQuantized(f, false, Shape{6, 20}, 10, "channel_wise_float_out"));
  f = SgForm();
  f.output = Output::kRequantized;
  f.eltwise = "clip";
  f.alpha = 1.5;
  f.calib_min = 0;
  f.calib_max = 1.5;
  cases->push_back(SgQuantized(f, false, Shape{4, 24}, 8, "requantized_clip"));
  f.eltwise = "leaky";
  f.alpha = 0.1;
  f.calib_min = -0.5;
  f.calib_max = 3;
  cases->push_back(SgQuantized(f, false, Shape{4, 24}, 8, "requantized_leaky"));
}

HN_ERROR_CASES(QuantizedFullyConnected) {
  cases->push_back(
      Rejected("_contrib_quantized_fully_connected", {{"num_hidden", "4"}},
               {{2, 6}, {4, 6}, {4}, {1}, {1}, {1}, {1}, {1}, {1}}, StatusCode::kTypeError,
               {"_contrib_quantized_fully_connected(node)", "'data'", "int8", "float32"}));
  cases->push_back(
      Rejected("_contrib_quantized_fully_connected", {{"num_hidden", "4"}},
               {{2, 6}, {4, 5}, {4}, {1}, {1}, {1}, {1}, {1}, {1}}, StatusCode::kShapeError,
               {"_contrib_quantized_fully_connected(node)", "weight", "(4, 5)"},
               {DType::kInt8, DType::kInt8, DType::kInt8, DType::kFloat32, DType::kFloat32,
                DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kFloat32}));
}

}  // namespace conformance
}  // namespace hybridnet
