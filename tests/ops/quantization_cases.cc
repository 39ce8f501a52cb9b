// The int8 conversions and simple quantized ops (ops/quantization/), against plain-loop
// references of MXNet 1.9.1's CPU arithmetic: float32 products, round half to even, saturation.
// Inputs put values on rounding ties (scales of exactly 1 or 0.5), at and past the range ends
// and negative into uint8. Shapes differ between cases of one op: MXNet caches its oneDNN
// elementwise-add primitives by input shapes and ranges only, so two cases alike in those but
// not in the calibrated range would share one in the live-MXNet check.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>

#include "ops/conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

const DType i8 = DType::kInt8, u8 = DType::kUint8, i32 = DType::kInt32, f32 = DType::kFloat32;

// Round half to even with saturation to [lo, hi]; NaN to `nan_to`.
double RoundSat(float x, double lo, double hi, double nan_to) {
  if (std::isnan(x)) return nan_to;
  return std::min(hi, std::max(lo, static_cast<double>(std::nearbyint(x))));
}
double ToInt8(float x) { return RoundSat(x, -128, 127, 127); }
double ToUint8(float x) { return RoundSat(x, 0, 255, 0); }
double ToInt32(float x) { return RoundSat(x, -2147483648.0, 2147483647.0, 2147483647.0); }

float AbsMax(double a, double b) {
  return std::max(std::fabs(static_cast<float>(a)), std::fabs(static_cast<float>(b)));
}

RefTensor Scalar(double v) {
  RefTensor t(Shape{1});
  t[0] = v;
  return t;
}

// Input 0 from `data`, inputs 1.. the fixed range ends `ends`.
InputGen DataThenRange(InputGen data, std::vector<double> ends) {
  return [data, ends](std::mt19937& rng, size_t input, int64_t j) {
    return input == 0 ? data(rng, 0, j) : ends[input - 1];
  };
}

// quantize_v2's reference over [lo, hi] (the data's range when not calibrated).
RefFn QuantizeRef(DType out, std::optional<std::pair<double, double>> calib) {
  return [out, calib](const std::vector<RefTensor>& in) {
    float lo = 0, hi = 0;
    if (calib) {
      lo = static_cast<float>(calib->first);
      hi = static_cast<float>(calib->second);
    } else {
      lo = static_cast<float>(*std::min_element(in[0].v.begin(), in[0].v.end()));
      hi = static_cast<float>(*std::max_element(in[0].v.begin(), in[0].v.end()));
    }
    const float range = AbsMax(lo, hi);
    const float scale = (out == i8 ? 127.5f : 255.5f) / range;
    RefTensor y(in[0].shape);
    for (int64_t i = 0; i < y.size(); ++i) {
      const float v = static_cast<float>(in[0][i]) * scale;
      y[i] = out == i8 ? ToInt8(v) : ToUint8(v);
    }
    return std::vector<RefTensor>{y, Scalar(out == i8 ? -range : lo),
                                  Scalar(out == i8 ? range : hi)};
  };
}

// Integers k + 0.5 for k in [-30, 30), then +-300 and +-1 past the ends.
InputGen Ties() {
  return [](std::mt19937&, size_t, int64_t j) {
    if (j >= 60) return std::vector<double>{300, -300, 128, -129}[static_cast<size_t>(j - 60)];
    return static_cast<double>(j - 30) + 0.5;
  };
}

// `ref` with its output 0 moved from channel-first (N, C, S...) to channel-last (N, S..., C).
RefFn ChannelLastOutput(RefFn ref) {
  return [ref](const std::vector<RefTensor>& in) {
    std::vector<RefTensor> out = ref(in);
    const Shape& x = out[0].shape;
    const int64_t N = x[0], C = x[1], S = x.Size() / (N * C);
    std::vector<int64_t> dims = {N};
    for (size_t d = 2; d < x.ndim(); ++d) dims.push_back(x[d]);
    dims.push_back(C);
    RefTensor y{Shape(dims)};
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t s = 0; s < S; ++s) y[(n * S + s) * C + c] = out[0][(n * C + c) * S + s];
    out[0] = y;
    return out;
  };
}

RefFn DequantizeRef(double levels) {
  return [levels](const std::vector<RefTensor>& in) {
    const float scale = AbsMax(in[1][0], in[2][0]) / static_cast<float>(levels);
    RefTensor y(in[0].shape);
    for (int64_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(in[0][i]) * scale;
    return std::vector<RefTensor>{y};
  };
}

RefFn RequantizeRef(DType out, std::optional<double> calib_absmax) {
  return [out, calib_absmax](const std::vector<RefTensor>& in) {
    const float in_range = AbsMax(in[1][0], in[2][0]);
    float real = 0;
    if (calib_absmax) {
      real = static_cast<float>(*calib_absmax);
    } else {
      double reach = 0;
      for (double v : in[0].v) reach = std::max(reach, std::fabs(v));
      real = static_cast<float>(static_cast<int32_t>(static_cast<float>(reach))) * in_range /
             2147483648.0f;
    }
    const float scale = (in_range / 2147483648.0f) * ((out == i8 ? 127.0f : 255.0f) / real);
    RefTensor y(in[0].shape);
    for (int64_t i = 0; i < y.size(); ++i) {
      const float v = static_cast<float>(in[0][i]) * scale;
      y[i] = out == i8 ? ToInt8(v) : ToUint8(v);
    }
    return std::vector<RefTensor>{y, Scalar(out == i8 ? -real : 0.0), Scalar(real)};
  };
}

// 2-D pooling of NCHW (or NHWC) integer data, max or oneDNN's avg: the window's sum over the
// kernel size (include_pad) or over the values inside, rounded half to even.
RefFn PoolRef(bool avg, int64_t k, int64_t s, int64_t pad, bool full, bool include_pad, bool global,
              bool nhwc, DType t) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& x = in[0].shape;
    const int64_t N = x[0], C = nhwc ? x[3] : x[1], H = nhwc ? x[1] : x[2], W = nhwc ? x[2] : x[3];
    const int64_t kh = global ? H : k, kw = global ? W : k, st = global ? 1 : s,
                  pd = global ? 0 : pad;
    auto out_size = [&](int64_t n, int64_t kk) {
      const int64_t span = n + 2 * pd - kk;
      return 1 + (full ? (span + st - 1) / st : span / st);
    };
    const int64_t OH = out_size(H, kh), OW = out_size(W, kw);
    RefTensor y(nhwc ? Shape{N, OH, OW, C} : Shape{N, C, OH, OW});
    auto at = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
      return nhwc ? ((n * H + h) * W + w) * C + c : ((n * C + c) * H + h) * W + w;
    };
    auto out_at = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
      return nhwc ? ((n * OH + h) * OW + w) * C + c : ((n * C + c) * OH + h) * OW + w;
    };
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            double best = -1e9, sum = 0;
            int64_t inside = 0;
            for (int64_t h = oh * st - pd; h < oh * st - pd + kh; ++h)
              for (int64_t w = ow * st - pd; w < ow * st - pd + kw; ++w) {
                if (h < 0 || w < 0 || h >= H || w >= W) continue;
                const double v = in[0][at(n, c, h, w)];
                best = std::max(best, v);
                sum += v;
                ++inside;
              }
            const double divisor =
                include_pad ? static_cast<double>(kh * kw) : static_cast<double>(inside);
            const float mean = static_cast<float>(sum) / static_cast<float>(divisor);
            y[out_at(n, c, oh, ow)] = avg ? (t == i8 ? ToInt8(mean) : ToUint8(mean)) : best;
          }
    return std::vector<RefTensor>{y, in[1], in[2]};
  };
}

OpCase PoolCase(AttrDict attrs, Shape x, DType t, RefFn ref, std::string note) {
  OpCase c = Case("_contrib_quantized_pooling", std::move(attrs), {x, {1}, {1}}, std::move(ref),
                  std::move(note));
  c.dtypes = {t, f32, f32};
  c.gen = DataThenRange(t == i8 ? Integers(-128, 127) : Integers(0, 255), {-3.0, 3.0});
  c.atol = 0;
  c.rtol = 0;
  return c;
}

// quantized_elemwise_add's reference: the uint8 input of a mixed pair first rescaled into int8.
RefFn AddRef(DType ta, DType tb, std::optional<std::pair<double, double>> calib) {
  return [=](const std::vector<RefTensor>& in) {
    const float ra = AbsMax(in[2][0], in[3][0]), rb = AbsMax(in[4][0], in[5][0]);
    auto levels = [](DType t) { return t == i8 ? 127.5f : 255.5f; };
    const DType ty = !calib ? i32 : ta == tb ? ta : i8;
    const float ly = ty == i32 ? 2147483648.0f : levels(ty);
    float sa = 0, sb = 0, lo = 0, hi = 0;
    if (calib) {
      lo = static_cast<float>(calib->first);
      hi = static_cast<float>(calib->second);
      const float out_scale = ly / AbsMax(lo, hi);
      sa = out_scale / (levels(ta) / ra);
      sb = out_scale / (levels(tb) / rb);
    } else {
      hi = ra + rb;
      lo = -hi;
      sa = ra * ly / ((ra + rb) * levels(ta));
      sb = rb * ly / ((ra + rb) * levels(tb));
    }
    RefTensor y(in[0].shape);
    for (int64_t i = 0; i < y.size(); ++i) {
      float a = static_cast<float>(in[0][i]), b = static_cast<float>(in[1][i]);
      float fa = sa, fb = sb;
      if (ta != tb && ta == u8) {
        a = static_cast<float>(ToInt8(a * sa));
        fa = 1;
      } else if (ta != tb) {
        b = static_cast<float>(ToInt8(b * sb));
        fb = 1;
      }
      const float sum = b * fb + a * fa;
      y[i] = ty == i32 ? ToInt32(sum) : ty == i8 ? ToInt8(sum) : ToUint8(sum);
    }
    return std::vector<RefTensor>{y, Scalar(lo), Scalar(hi)};
  };
}

OpCase AddCase(Shape s, DType ta, DType tb, std::vector<double> ranges,
               std::optional<std::pair<double, double>> calib, std::string note) {
  AttrDict attrs;
  if (calib) {
    attrs = {{"min_calib_range", std::to_string(calib->first)},
             {"max_calib_range", std::to_string(calib->second)}};
  }
  OpCase c = Case("_contrib_quantized_elemwise_add", attrs, {s, s, {1}, {1}, {1}, {1}},
                  AddRef(ta, tb, calib), std::move(note));
  c.dtypes = {ta, tb, f32, f32, f32, f32};
  c.gen = [ta, tb, ranges](std::mt19937& rng, size_t input, int64_t) {
    if (input >= 2) return ranges[input - 2];
    const DType t = input == 0 ? ta : tb;
    return t == i8 ? Integers(-128, 127)(rng, 0, 0) : Integers(0, 255)(rng, 0, 0);
  };
  c.atol = 0;
  c.rtol = 0;
  return c;
}

// quantized_concat along axis 1 of 2-D inputs: each rescaled onto the range covering all.
RefFn ConcatRef(std::vector<DType> types) {
  return [types](const std::vector<RefTensor>& in) {
    const size_t n = types.size();
    double lo = 0, hi = 0;
    bool any_int8 = false;
    for (size_t i = 0; i < n; ++i) {
      lo = std::min(lo, in[n + 2 * i][0]);
      hi = std::max(hi, in[n + 2 * i + 1][0]);
      any_int8 = any_int8 || types[i] == i8;
    }
    auto levels = [](DType t) { return t == i8 ? 127.5f : 255.5f; };
    const DType ty = any_int8 ? i8 : u8;
    const float out_scale = levels(ty) / AbsMax(lo, hi);
    const int64_t rows = in[0].shape[0];
    int64_t cols = 0;
    for (size_t i = 0; i < n; ++i) cols += in[i].shape[1];
    RefTensor y(Shape{rows, cols});
    int64_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
      const float in_scale = levels(types[i]) / AbsMax(in[n + 2 * i][0], in[n + 2 * i + 1][0]);
      const int64_t w = in[i].shape[1];
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < w; ++j) {
          const double v = in[i][r * w + j];
          const float f = static_cast<float>(v) * (out_scale / in_scale);
          y[r * cols + offset + j] = in_scale == out_scale && types[i] == ty ? v
                                     : ty == i8                              ? ToInt8(f)
                                                                             : ToUint8(f);
        }
      offset += w;
    }
    return std::vector<RefTensor>{y, Scalar(lo), Scalar(hi)};
  };
}

OpCase Exact(OpCase c, std::vector<DType> dtypes) {
  c.dtypes = std::move(dtypes);
  c.atol = 0;
  c.rtol = 0;
  return c;
}

}  // namespace

HN_CONFORMANCE_CASES(Quantization) {
  // ---- quantize_v2: scale 1 over [-127.5, 127.5] or [0, 255.5] puts k + 0.5 on a tie.
  const Shape ties{64};
  cases->push_back(
      WithGen(Exact(Case("_contrib_quantize_v2",
                         {{"min_calib_range", "-127.5"}, {"max_calib_range", "127.5"}}, {ties},
                         QuantizeRef(i8, std::make_pair(-127.5, 127.5)), "int8_ties"),
                    {f32}),
              Ties()));
  cases->push_back(WithGen(
      Exact(Case("_contrib_quantize_v2",
                 {{"out_type", "uint8"}, {"min_calib_range", "0"}, {"max_calib_range", "255.5"}},
                 {ties}, QuantizeRef(u8, std::make_pair(0.0, 255.5)), "uint8_ties"),
            {f32}),
      Ties()));
  cases->push_back(WithGen(
      Exact(Case("_contrib_quantize_v2",
                 {{"out_type", "auto"}, {"min_calib_range", "0"}, {"max_calib_range", "255.5"}},
                 {ties}, QuantizeRef(u8, std::make_pair(0.0, 255.5)), "auto_uint8"),
            {f32}),
      Ties()));
  // NaN, infinities and huge values, past the vector path's 16 lanes: NaN gives 127 (int8) or
  // 0 (uint8), as MXNet's oneDNN reorder does.
  const InputGen specials = [](std::mt19937&, size_t, int64_t j) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> v{std::nan(""), inf, -inf, 1e30, -1e30, 0.2, -0.2, 0.5};
    return v[static_cast<size_t>(j) % v.size()];
  };
  for (DType t : {i8, u8}) {
    cases->push_back(WithGen(Exact(Case("_contrib_quantize_v2",
                                        {{"out_type", t == i8 ? "int8" : "uint8"},
                                         {"min_calib_range", "0"},
                                         {"max_calib_range", "1"}},
                                        {{40}}, QuantizeRef(t, std::make_pair(0.0, 1.0)),
                                        t == i8 ? "int8_nan_inf" : "uint8_nan_inf"),
                                   {f32}),
                             specials));
  }
  // Uncalibrated: the data's own range, its ends reaching -128 (half to even) and 127.
  cases->push_back(WithGen(
      Exact(Case("_contrib_quantize_v2", {}, {{2, 3, 4}}, QuantizeRef(i8, std::nullopt),
                 "int8_data_range"),
            {f32}),
      [](std::mt19937&, size_t, int64_t j) { return (static_cast<double>(j) - 11.5) / 11.5; }));
  cases->push_back(WithGen(Exact(Case("_contrib_quantize_v2", {{"out_type", "uint8"}}, {{8, 50}},
                                      QuantizeRef(u8, std::nullopt), "uint8_data_range"),
                                 {f32}),
                           Uniform(-1.0, 3.0)));
  // A zero range: MXNet's infinite scale makes zeros NaN, then 127.
  cases->push_back(WithGen(
      Exact(Case("_contrib_quantize_v2", {}, {{5}}, QuantizeRef(i8, std::nullopt), "zeros"), {f32}),
      [](std::mt19937&, size_t, int64_t) { return 0.0; }));
  // int8 data passes through, with the range of its levels.
  cases->push_back(
      WithGen(Exact(Case(
                        "_contrib_quantize_v2", {}, {{6}},
                        [](const std::vector<RefTensor>& in) {
                          return std::vector<RefTensor>{in[0], Scalar(-127.5), Scalar(127.5)};
                        },
                        "int8_passthrough"),
                    {i8}),
              Integers(-128, 127)));

  // Channel-last output (the layout pass's form before int8 convolutions): three channels (the
  // vector path, with NaN, infinities and ties, 35 positions: two blocks and a tail), four (the
  // general path), and int8 data re-laid-out as it passes through. (Ties() fills at most 64.)
  const std::string no_layout_in_mxnet = "MXNet's quantize_v2 has no layout attribute";
  for (DType t : {i8, u8}) {
    cases->push_back(NotInMXNet(
        WithGen(
            Exact(Case("_contrib_quantize_v2",
                       {{"out_type", t == i8 ? "int8" : "uint8"},
                        {"min_calib_range", "0"},
                        {"max_calib_range", "1"},
                        {"layout", "NHWC"}},
                       {{2, 3, 5, 7}}, ChannelLastOutput(QuantizeRef(t, std::make_pair(0.0, 1.0))),
                       t == i8 ? "int8_nhwc_nan_inf" : "uint8_nhwc_nan_inf"),
                  {f32}),
            specials),
        no_layout_in_mxnet));
  }
  cases->push_back(NotInMXNet(
      WithGen(
          Exact(
              Case(
                  "_contrib_quantize_v2",
                  {{"min_calib_range", "-127.5"}, {"max_calib_range", "127.5"}, {"layout", "NHWC"}},
                  {{1, 3, 3, 7}}, ChannelLastOutput(QuantizeRef(i8, std::make_pair(-127.5, 127.5))),
                  "int8_nhwc_ties"),
              {f32}),
          Ties()),
      no_layout_in_mxnet));
  cases->push_back(NotInMXNet(
      WithGen(Exact(Case("_contrib_quantize_v2", {{"layout", "NWC"}}, {{2, 4, 9}},
                         ChannelLastOutput(QuantizeRef(i8, std::nullopt)), "int8_nwc_data_range"),
                    {f32}),
              Uniform(-1.0, 3.0)),
      no_layout_in_mxnet));
  cases->push_back(NotInMXNet(
      WithGen(Exact(Case("_contrib_quantize_v2", {{"out_type", "int8"}, {"layout", "NHWC"}},
                         {{1, 3, 2, 5}}, ChannelLastOutput([](const std::vector<RefTensor>& in) {
                           return std::vector<RefTensor>{in[0], Scalar(-127.5), Scalar(127.5)};
                         }),
                         "int8_passthrough_nhwc"),
                    {i8}),
              Integers(-128, 127)),
      no_layout_in_mxnet));

  // ---- quantize (range as inputs): 127 or 255 levels; scale 127 over [-127, 127] makes ties.
  cases->push_back(WithGen(Exact(Case(
                                     "_contrib_quantize", {{"out_type", "int8"}}, {ties, {1}, {1}},
                                     [](const std::vector<RefTensor>& in) {
                                       RefTensor y(in[0].shape);
                                       for (int64_t i = 0; i < y.size(); ++i)
                                         y[i] = ToInt8(static_cast<float>(in[0][i]));
                                       return std::vector<RefTensor>{y, Scalar(-127), Scalar(127)};
                                     },
                                     "int8_ties"),
                                 {f32, f32, f32}),
                           [](std::mt19937& rng, size_t input, int64_t j) {
                             return input == 0 ? Ties()(rng, 0, j) : input == 1 ? -127.0 : 127.0;
                           }));
  cases->push_back(WithGen(Exact(Case(
                                     "_contrib_quantize", {}, {{3, 7}, {1}, {1}},
                                     [](const std::vector<RefTensor>& in) {
                                       const float scale = 255.0f / AbsMax(in[1][0], in[2][0]);
                                       RefTensor y(in[0].shape);
                                       for (int64_t i = 0; i < y.size(); ++i)
                                         y[i] = ToUint8(static_cast<float>(in[0][i]) * scale);
                                       return std::vector<RefTensor>{y, in[1], in[2]};
                                     },
                                     "uint8"),
                                 {f32, f32, f32}),
                           DataThenRange(Uniform(-0.5, 2.5), {0.0, 2.0})));

  // ---- elemwise_mul (int8 only)
  const InputGen mul_gen = [](std::mt19937& rng, size_t input, int64_t) {
    if (input >= 2) return std::vector<double>{-1, 1, -2, 2}[input - 2];
    return Integers(-89, 89)(rng, 0, 0);  // products stay inside the int8 case's range
  };
  auto mul_ref = [](int mode) {  // 0 int32, 1 int8 over [-1, 1], 2 float
    return [mode](const std::vector<RefTensor>& in) {
      const float ls = 127.5f / AbsMax(in[2][0], in[3][0]),
                  rs = 127.5f / AbsMax(in[4][0], in[5][0]);
      const float scale = mode == 1 ? 127.5f / ls / rs : static_cast<float>(1.0 / ls / rs);
      RefTensor y(in[0].shape);
      for (int64_t i = 0; i < y.size(); ++i) {
        const double prod = in[0][i] * in[1][i];
        const float v = static_cast<float>(prod) * scale;
        y[i] = mode == 0   ? prod
               : mode == 2 ? v
                           : std::max(-128.0, std::min(127.0, std::trunc(static_cast<double>(v))));
      }
      const double range = 2147483647.0f * ((AbsMax(in[2][0], in[3][0]) / 127.0f) *
                                            (AbsMax(in[4][0], in[5][0]) / 127.0f));
      if (mode == 2) return std::vector<RefTensor>{y};
      return std::vector<RefTensor>{y, Scalar(mode == 1 ? -1.0 : -range),
                                    Scalar(mode == 1 ? 1.0 : range)};
    };
  };
  const std::vector<DType> mul_types{i8, i8, f32, f32, f32, f32};
  cases->push_back(
      WithTol(WithGen(Exact(Case("_contrib_quantized_elemwise_mul", {},
                                 {{2, 7}, {2, 7}, {1}, {1}, {1}, {1}}, mul_ref(0), "int32"),
                            mul_types),
                      mul_gen),
              1e-6, 0));
  cases->push_back(WithGen(Exact(Case("_contrib_quantized_elemwise_mul",
                                      {{"min_calib_range", "-1"}, {"max_calib_range", "1"}},
                                      {{3, 6}, {3, 6}, {1}, {1}, {1}, {1}}, mul_ref(1), "int8"),
                                 mul_types),
                           mul_gen));
  cases->push_back(WithTol(
      WithGen(Exact(Case("_contrib_quantized_elemwise_mul", {{"enable_float_output", "True"}},
                         {{4, 5}, {4, 5}, {1}, {1}, {1}, {1}}, mul_ref(2), "float"),
                    mul_types),
              mul_gen),
      1e-6, 0));

  // ---- dequantize
  cases->push_back(WithGen(
      Exact(Case("_contrib_dequantize", {}, {{20, 25}, {1}, {1}}, DequantizeRef(127.5), "int8"),
            {i8, f32, f32}),
      DataThenRange(Integers(-128, 127), {-3.0, 2.0})));
  cases->push_back(WithGen(
      Exact(Case("_contrib_dequantize", {}, {{30, 14}, {1}, {1}}, DequantizeRef(255.5), "uint8"),
            {u8, f32, f32}),
      DataThenRange(Integers(0, 255), {-0.5, 1.5})));

  // ---- requantize
  const InputGen int32_data = [](std::mt19937& rng, size_t input, int64_t j) {
    if (input > 0) return input == 1 ? -2.0 : 2.0;
    if (j < 4) return std::vector<double>{-2147483647.0, 2147483647.0, 0.0, 123456789.0}[j];
    return Integers(-300000000, 300000000)(rng, 0, 0);
  };
  cases->push_back(WithGen(
      Exact(Case("_contrib_requantize", {{"min_calib_range", "-0.5"}, {"max_calib_range", "0.5"}},
                 {{20}, {1}, {1}}, RequantizeRef(i8, 0.5), "int8_calibrated"),
            {i32, f32, f32}),
      int32_data));
  cases->push_back(WithGen(
      Exact(Case("_contrib_requantize",
                 {{"out_type", "auto"}, {"min_calib_range", "0"}, {"max_calib_range", "0.7"}},
                 {{21}, {1}, {1}}, RequantizeRef(u8, 0.7), "uint8_calibrated"),
            {i32, f32, f32}),
      int32_data));
  cases->push_back(WithGen(Exact(Case("_contrib_requantize", {}, {{20, 30}, {1}, {1}},
                                      RequantizeRef(i8, std::nullopt), "int8_data_range"),
                                 {i32, f32, f32}),
                           DataThenRange(Integers(-5000000, 7000000), {-1.5, 3.0})));

  // ---- pooling
  cases->push_back(PoolCase({{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "avg"}},
                            {1, 3, 6, 4}, i8, PoolRef(true, 2, 2, 0, false, true, false, false, i8),
                            "avg_ties"));
  cases->push_back(
      PoolCase({{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"pool_type", "avg"}}, {2, 8, 15, 15}, i8,
               PoolRef(true, 3, 1, 1, false, true, false, false, i8), "avg_include_pad"));
  cases->push_back(PoolCase(
      {{"kernel", "(3, 3)"},
       {"pad", "(1, 1)"},
       {"pool_type", "avg"},
       {"count_include_pad", "False"}},
      {1, 2, 5, 6}, u8, PoolRef(true, 3, 1, 1, false, false, false, false, u8), "avg_exclude_pad"));
  cases->push_back(PoolCase({{"kernel", "(3, 3)"},
                             {"stride", "(2, 2)"},
                             {"pool_type", "avg"},
                             {"pooling_convention", "full"}},
                            {1, 2, 6, 4}, i8, PoolRef(true, 3, 2, 0, true, true, false, false, i8),
                            "avg_full"));
  cases->push_back(PoolCase({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}},
                            {2, 8, 17, 17}, i8,
                            PoolRef(false, 3, 2, 1, false, true, false, false, i8), "max"));
  cases->push_back(PoolCase({{"kernel", "(1, 1)"}, {"global_pool", "True"}, {"pool_type", "avg"}},
                            {2, 3, 4, 4}, u8, PoolRef(true, 1, 1, 0, false, true, true, false, u8),
                            "global_avg"));
  cases->push_back(NotInMXNet(
      PoolCase(
          {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "avg"}, {"layout", "NHWC"}},
          {1, 4, 6, 5}, i8, PoolRef(true, 2, 2, 0, false, true, false, true, i8), "avg_nhwc"),
      "MXNet's quantized pooling takes NCHW only; the layout pass hands hybridnet NHWC data"));
  // ResNet's max pooling after its first int8 convolution: NHWC, padded, int8 and uint8.
  for (DType t : {i8, u8}) {
    cases->push_back(NotInMXNet(
        PoolCase(
            {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}, {"layout", "NHWC"}},
            {2, 9, 8, 19}, t, PoolRef(false, 3, 2, 1, false, true, false, true, t),
            t == i8 ? "max_nhwc_int8" : "max_nhwc_uint8"),
        "MXNet's quantized pooling takes NCHW only; the layout pass hands hybridnet NHWC data"));
  }
  // A network's last pooling after int8 convolutions: global average of NHWC data, uint8, and
  // int8 over 2x2 images (halves to round to even).
  for (const auto& [x, t, note] :
       {std::tuple<Shape, DType, std::string>{{2, 5, 7, 19}, u8, "global_avg_nhwc"},
        std::tuple<Shape, DType, std::string>{{3, 2, 2, 21}, i8, "global_avg_nhwc_ties"}}) {
    cases->push_back(NotInMXNet(
        PoolCase({{"kernel", "(1, 1)"},
                  {"global_pool", "True"},
                  {"pool_type", "avg"},
                  {"layout", "NHWC"}},
                 x, t, PoolRef(true, 1, 1, 0, false, true, true, true, t), note),
        "MXNet's quantized pooling takes NCHW only; the layout pass hands hybridnet NHWC data"));
  }

  // ---- flatten and relu keep the range
  cases->push_back(WithGen(Exact(Case("_contrib_quantized_flatten", {}, {{2, 3, 4}, {1}, {1}},
                                      [](const std::vector<RefTensor>& in) {
                                        RefTensor y = in[0];
                                        y.shape = Shape{2, 12};
                                        return std::vector<RefTensor>{y, in[1], in[2]};
                                      }),
                                 {i8, f32, f32}),
                           DataThenRange(Integers(-128, 127), {-2.0, 3.0})));
  cases->push_back(
      WithGen(Exact(Case("_contrib_quantized_act", {{"act_type", "relu"}}, {{3, 5}, {1}, {1}},
                         [](const std::vector<RefTensor>& in) {
                           RefTensor y(in[0].shape);
                           for (int64_t i = 0; i < y.size(); ++i) y[i] = std::max(0.0, in[0][i]);
                           return std::vector<RefTensor>{y, in[1], in[2]};
                         }),
                    {i8, f32, f32}),
              DataThenRange(Integers(-128, 127), {-2.0, 3.0})));

  // ---- elemwise_add (ranges lhs_min, lhs_max, rhs_min, rhs_max)
  cases->push_back(AddCase({16, 33}, i8, i8, {-1, 1, -2, 0.5}, std::nullopt, "int8_int32"));
  cases->push_back(
      AddCase({12, 31}, i8, i8, {-1, 1, -2, 0.5}, std::make_pair(-2.0, 2.0), "int8_calibrated"));
  cases->push_back(
      AddCase({14, 29}, u8, u8, {0, 1, 0, 3}, std::make_pair(0.0, 3.0), "uint8_calibrated"));
  cases->push_back(
      AddCase({20, 19}, i8, u8, {-1, 1, 0, 2}, std::make_pair(-2.0, 2.0), "int8_uint8_calibrated"));
  cases->push_back(AddCase({2, 10, 25}, u8, i8, {0, 2, -1, 1}, std::make_pair(0.0, 3.0),
                           "uint8_int8_calibrated"));
  cases->push_back(AddCase({24, 17}, u8, u8, {0, 1, 0, 3}, std::nullopt, "uint8_int32"));

  // ---- batch_norm: scale and shift onto the calibrated int8 range (oneDNN divides the scale by
  // sqrt(1 + eps) once more, its variance being 1).
  {
    const double eps = static_cast<double>(1e-3f);
    OpCase c = Case(
        "_contrib_quantized_batch_norm", {{"min_calib_range", "-4"}, {"max_calib_range", "3"}},
        {{2, 3, 2, 2}, {3}, {3}, {3}, {3}, {1}, {1}},
        [eps](const std::vector<RefTensor>& in) {
          const float data_abs = AbsMax(in[5][0], in[6][0]), out_abs = 4.0f;
          RefTensor y(in[0].shape);
          for (int64_t i = 0; i < y.size(); ++i) {
            const int64_t ch = (i / 4) % 3;
            const float invstd = static_cast<float>(1.0 / std::sqrt(F32(in[4][ch]) + eps));
            const float g = static_cast<float>(in[1][ch]);
            const float scale =
                g * invstd * data_abs / out_abs / std::sqrt(1.0f + static_cast<float>(eps));
            const float shift =
                (static_cast<float>(in[2][ch]) - static_cast<float>(in[3][ch]) * g * invstd) *
                127.5f / out_abs;
            y[i] = ToInt8(scale * static_cast<float>(in[0][i]) + shift);
          }
          return std::vector<RefTensor>{y, Scalar(-4), Scalar(3)};
        },
        "calibrated");
    c.gen = [](std::mt19937& rng, size_t input, int64_t) {
      switch (input) {
        case 0:
          return Integers(-128, 127)(rng, 0, 0);
        case 4:
          return Uniform(0.5, 2.0)(rng, 0, 0);
        case 5:
          return -2.0;
        case 6:
          return 1.5;
        default:
          return Uniform(-1.0, 1.0)(rng, 0, 0);
      }
    };
    cases->push_back(Exact(c, {i8, f32, f32, f32, f32, f32, f32}));
  }

  // ---- embedding: int8 rows, indices clipped into [0, input_dim - 1]
  {
    OpCase c = Case("_contrib_quantized_embedding", {{"input_dim", "5"}, {"output_dim", "3"}},
                    {{2, 3}, {5, 3}, {1}, {1}}, [](const std::vector<RefTensor>& in) {
                      RefTensor y(Shape{2, 3, 3});
                      for (int64_t i = 0; i < 6; ++i) {
                        const int64_t row = std::min<int64_t>(
                            4, std::max<int64_t>(0, static_cast<int64_t>(in[0][i])));
                        for (int64_t k = 0; k < 3; ++k) y[i * 3 + k] = in[1][row * 3 + k];
                      }
                      return std::vector<RefTensor>{y, in[2], in[3]};
                    });
    c.gen = [](std::mt19937& rng, size_t input, int64_t j) {
      if (input == 0) return std::vector<double>{0, 4, 2, 7, -1, 3}[static_cast<size_t>(j)];
      if (input == 1) return Integers(-128, 127)(rng, 0, 0);
      return input == 2 ? -0.8 : 0.6;
    };
    cases->push_back(Exact(c, {f32, i8, f32, f32}));
  }

  // ---- concat (data, then each input's min and max)
  {
    OpCase c = Case("_contrib_quantized_concat", {{"num_args", "3"}, {"dim", "1"}},
                    {{2, 5}, {2, 3}, {2, 4}, {1}, {1}, {1}, {1}, {1}, {1}}, ConcatRef({i8, u8, i8}),
                    "mixed");
    c.gen = [](std::mt19937& rng, size_t input, int64_t) {
      if (input >= 3) return std::vector<double>{-1, 1, 0, 2, -0.5, 0.25}[input - 3];
      return input == 1 ? Integers(0, 255)(rng, 0, 0) : Integers(-128, 127)(rng, 0, 0);
    };
    cases->push_back(Exact(c, {i8, u8, i8, f32, f32, f32, f32, f32, f32}));
    OpCase u = Case("_contrib_quantized_concat", {{"num_args", "2"}, {"dim", "1"}},
                    {{3, 4}, {3, 2}, {1}, {1}, {1}, {1}}, ConcatRef({u8, u8}), "uint8");
    u.gen = [](std::mt19937& rng, size_t input, int64_t) {
      if (input >= 2) return std::vector<double>{0, 2, 0, 1}[input - 2];
      return Integers(0, 255)(rng, 0, 0);
    };
    cases->push_back(Exact(u, {u8, u8, f32, f32, f32, f32}));
  }
}

HN_ERROR_CASES(Quantization) {
  const StatusCode bad = StatusCode::kInvalidArgument, type = StatusCode::kTypeError;
  cases->push_back(Rejected("_contrib_quantize_v2",
                            {{"min_calib_range", "1"}, {"max_calib_range", "-1"}}, {{3}}, bad,
                            {"_contrib_quantize_v2(node)", "min_calib_range", "larger"}));
  cases->push_back(Rejected("_contrib_quantize_v2", {{"min_calib_range", "-1"}}, {{3}}, bad,
                            {"_contrib_quantize_v2(node)", "together"}));
  cases->push_back(
      Rejected("_contrib_quantize_v2",
               {{"out_type", "uint8"}, {"min_calib_range", "-1"}, {"max_calib_range", "1"}}, {{3}},
               bad, {"_contrib_quantize_v2(node)", "uint8", "negative"}));
  cases->push_back(Rejected("_contrib_quantize_v2", {{"layout", "NHWC"}}, {{2, 3, 4}},
                            StatusCode::kShapeError,
                            {"_contrib_quantize_v2(node)", "layout NHWC", "4-D"}));
  cases->push_back(Rejected("_contrib_requantize", {{"layout", "NHWC"}}, {{1, 2, 3, 4}, {1}, {1}},
                            bad, {"_contrib_requantize(node)", "layout", "quantize_v2"},
                            {i32, f32, f32}));
  cases->push_back(Rejected("_contrib_quantize_v2", {{"out_type", "int4"}}, {{3}}, bad,
                            {"_contrib_quantize_v2(node)", "out_type", "int4"}));
  cases->push_back(Rejected("_contrib_quantize_v2", {{"scale", "2"}}, {{3}}, bad,
                            {"_contrib_quantize_v2(node)", "scale"}));
  cases->push_back(Rejected("_contrib_quantize_v2", {{"out_type", "int8"}}, {{3}}, type,
                            {"_contrib_quantize_v2(node)", "uint8", "out_type"}, {u8}));
  cases->push_back(Rejected("_contrib_dequantize", {}, {{3}, {1}, {1}}, type,
                            {"_contrib_dequantize(node)", "int32", "requantize"}, {i32, f32, f32}));
  cases->push_back(Rejected("_contrib_dequantize", {}, {{3}, {2}, {1}}, StatusCode::kShapeError,
                            {"_contrib_dequantize(node)", "range end"}, {i8, f32, f32}));
  cases->push_back(Rejected("_contrib_requantize", {}, {{3}, {1}, {1}}, type,
                            {"_contrib_requantize(node)", "int8", "int32"}, {i8, f32, f32}));
  cases->push_back(Rejected("_contrib_requantize", {{"max_calib_range", "1"}}, {{3}, {1}, {1}}, bad,
                            {"_contrib_requantize(node)", "together"}, {i32, f32, f32}));
  cases->push_back(Rejected("_contrib_quantized_act", {{"act_type", "sigmoid"}}, {{3}, {1}, {1}},
                            bad, {"_contrib_quantized_act(node)", "relu"}, {i8, f32, f32}));
  cases->push_back(Rejected("_contrib_quantized_act", {{"act_type", "relu"}}, {{3}, {1}, {1}}, type,
                            {"_contrib_quantized_act(node)", "uint8"}, {u8, f32, f32}));
  cases->push_back(Rejected("_contrib_quantized_pooling",
                            {{"kernel", "(2, 2)"}, {"pool_type", "sum"}}, {{1, 1, 4, 4}, {1}, {1}},
                            StatusCode::kUnsupported,
                            {"_contrib_quantized_pooling(node)", "max and avg"}, {i8, f32, f32}));
  cases->push_back(
      Rejected("_contrib_quantized_pooling", {{"kernel", "(2, 2)"}}, {{1, 1, 4, 4}, {1}, {1}}, type,
               {"_contrib_quantized_pooling(node)", "float32", "int8 or uint8"}, {f32, f32, f32}));
  cases->push_back(Rejected("_contrib_quantized_elemwise_add", {}, {{3}, {3}, {1}, {1}, {1}, {1}},
                            type, {"_contrib_quantized_elemwise_add(node)", "int32"},
                            {i32, i8, f32, f32, f32, f32}));
  cases->push_back(Rejected(
      "_contrib_quantized_elemwise_add", {{"min_calib_range", "2"}, {"max_calib_range", "1"}},
      {{3}, {3}, {1}, {1}, {1}, {1}}, bad, {"_contrib_quantized_elemwise_add(node)", "larger"},
      {i8, i8, f32, f32, f32, f32}));
  cases->push_back(Rejected("_contrib_quantized_concat", {{"num_args", "2"}},
                            {{2, 3}, {3, 3}, {1}, {1}, {1}, {1}}, StatusCode::kShapeError,
                            {"_contrib_quantized_concat(node)"}, {i8, i8, f32, f32, f32, f32}));
  cases->push_back(Rejected("_contrib_quantized_batch_norm", {},
                            {{1, 2, 2, 2}, {2}, {2}, {2}, {2}, {1}, {1}}, bad,
                            {"_contrib_quantized_batch_norm(node)", "min_calib_range", "required"},
                            {i8, f32, f32, f32, f32, f32, f32}));
  cases->push_back(Rejected("_contrib_quantized_elemwise_mul", {}, {{3}, {3}, {1}, {1}, {1}, {1}},
                            type, {"_contrib_quantized_elemwise_mul(node)", "uint8", "int8"},
                            {u8, i8, f32, f32, f32, f32}));
  cases->push_back(Rejected("_contrib_quantize", {}, {{3}, {1}, {1}}, type,
                            {"_contrib_quantize(node)", "int8", "float32"}, {i8, f32, f32}));
}

}  // namespace conformance
}  // namespace hybridnet
