// Conformance cases of the gradients of Convolution (channel-first and channel-last),
// Deconvolution, Pooling, _contrib_AdaptiveAvgPooling2D and UpSampling: the internal backward ops
// against the vector-Jacobian product of the forward references (nn_reference.h), and Pooling
// cases whose gradients the harness checks by finite differences (OpGradient) on inputs of
// distinct values, so that every max window has one maximum. The forward ops' own cases
// (conv_cases.cc) are gradient-checked too.
#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "conformance.h"
#include "nn_reference.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

// A backward op's reference from its forward's: inputs (out_grad, the forward's inputs...
// [, its output]), outputs the gradient of <out_grad, forward(x)> with respect to each forward
// input, by central differences in double: exact but for rounding for the linear convolutions
// and sum-like poolings these cases use.
RefFn GradientOf(RefFn forward, size_t forward_inputs) {
  return [forward, forward_inputs](const std::vector<RefTensor>& in) {
    const RefTensor& dy = in[0];
    std::vector<RefTensor> x(in.begin() + 1,
                             in.begin() + 1 + static_cast<std::ptrdiff_t>(forward_inputs));
    auto objective = [&] {
      const RefTensor y = forward(x)[0];
      double sum = 0.0;
      for (int64_t j = 0; j < y.size(); ++j) sum += dy[j] * y[j];
      return sum;
    };
    std::vector<RefTensor> grads;
    for (size_t i = 0; i < forward_inputs; ++i) {
      RefTensor g(x[i].shape);
      for (int64_t j = 0; j < g.size(); ++j) {
        const double at = x[i][j];
        x[i][j] = at + 0.5;
        const double up = objective();
        x[i][j] = at - 0.5;
        const double down = objective();
        x[i][j] = at;
        g[j] = up - down;
      }
      grads.push_back(g);
    }
    return grads;
  };
}

OpCase Internal(OpCase c) {
  c = InternalCase(c);
  c.mxnet_skip = "an internal backward op: MXNet's has other inputs";
  return WithTol(WithGen(c, Uniform(-1.0, 1.0)), 1e-4, 1e-4);
}

ConvGeom Geom(Dims kernel, Dims stride, Dims pad, Dims dilate, int64_t num_filter, int64_t groups,
              bool bias) {
  ConvGeom g;
  g.kernel = std::move(kernel);
  g.stride = std::move(stride);
  g.pad = std::move(pad);
  g.dilate = std::move(dilate);
  g.num_filter = num_filter;
  g.num_group = groups;
  g.bias = bias;
  return g;
}

// Distinct values in [-2, 2): element i of an input of fewer than 7919 elements gets
// (i * 4099 mod 7919) steps of 4 / 7919, far apart after rounding to float32.
double Distinct(std::mt19937&, size_t, int64_t i) {
  return -2.0 + 4.0 * static_cast<double>((i * 4099) % 7919) / 7919.0;
}

AttrDict PoolAttrs(const PoolSpec& s) {
  static const char* const kConventions[] = {"valid", "full", "same"};
  AttrDict a = {{"pool_type", s.type},
                {"pooling_convention", kConventions[static_cast<int>(s.convention)]}};
  if (!s.kernel.empty()) a["kernel"] = Shape(s.kernel).ToString();
  if (!s.stride.empty()) a["stride"] = Shape(s.stride).ToString();
  if (!s.pad.empty()) a["pad"] = Shape(s.pad).ToString();
  if (s.include_pad >= 0) a["count_include_pad"] = s.include_pad ? "True" : "False";
  if (s.global) a["global_pool"] = "True";
  if (s.p_value) a["p_value"] = std::to_string(s.p_value);
  if (!s.layout.empty()) a["layout"] = s.layout;
  return a;
}

// _backward_contrib_AdaptiveAvgPooling2D's reference, (out_grad (N, C, OH, OW), data) -> d data:
// each input gets the gradients of the cells that hold it (rows floor(o * H / OH) ..
// ceil((o + 1) * H / OH) - 1, columns alike), each divided by its cell's size.
std::vector<RefTensor> AdaptivePoolBackwardRef(const std::vector<RefTensor>& in) {
  const Shape& os = in[0].shape;
  const Shape& s = in[1].shape;
  const int64_t H = s[2], W = s[3], OH = os[2], OW = os[3];
  RefTensor dx(s);
  for (int64_t i = 0; i < dx.size(); ++i) {
    const std::vector<int64_t> x = Unravel(i, s);
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
      if (x[2] < h0 || x[2] >= h1) continue;
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
        if (x[3] < w0 || x[3] >= w1) continue;
        const double dy = in[0][((x[0] * os[1] + x[1]) * OH + oh) * OW + ow];
        dx[i] += dy / static_cast<double>((h1 - h0) * (w1 - w0));
      }
    }
  }
  return {dx};
}

// _backward_UpSampling's reference for nearest, (out_grad, inputs...) -> their gradients: input
// pixel (r, q) of scale f gets the sum of the output gradient over rows r*f .. r*f+f-1 and the
// same columns, in its own channels of it (concat) or the same ones (sum).
RefFn NearestUpBackwardRef(bool sum) {
  return [sum](const std::vector<RefTensor>& in) {
    const Shape& os = in[0].shape;
    std::vector<RefTensor> grads;
    int64_t offset = 0;
    for (size_t i = 1; i < in.size(); ++i) {
      const Shape& s = in[i].shape;
      const int64_t f = os[2] / s[2];
      RefTensor g(s);
      for (int64_t j = 0; j < g.size(); ++j) {
        const std::vector<int64_t> x = Unravel(j, s);
        const int64_t c = sum ? x[1] : offset + x[1];
        for (int64_t a = 0; a < f; ++a)
          for (int64_t b = 0; b < f; ++b)
            g[j] += in[0][((x[0] * os[1] + c) * os[2] + x[2] * f + a) * os[3] + x[3] * f + b];
      }
      if (!sum) offset += s[1];
      grads.push_back(g);
    }
    return grads;
  };
}

// _backward_Pooling's reference for max pooling of a constant (2-D, channel-first or channel-last,
// every window inside the image): with every value the maximum, each output's gradient goes to
// its window's first position.
RefFn FirstPositionRef(int64_t stride, int64_t pad, bool channel_last = false) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& os = in[0].shape;
    const Shape& s = in[1].shape;
    const int c_axis = channel_last ? 3 : 1, h_axis = channel_last ? 1 : 2;
    RefTensor dx(s);
    for (int64_t j = 0; j < in[0].size(); ++j) {
      const std::vector<int64_t> o = Unravel(j, os);
      const int64_t h = std::max<int64_t>(o[h_axis] * stride - pad, 0);
      const int64_t w = std::max<int64_t>(o[h_axis + 1] * stride - pad, 0);
      const int64_t n = o[0], c = o[c_axis];
      dx[channel_last ? ((n * s[1] + h) * s[2] + w) * s[3] + c
                      : ((n * s[1] + c) * s[2] + h) * s[3] + w] += in[0][j];
    }
    return std::vector<RefTensor>{dx};
  };
}

}  // namespace

HN_CONFORMANCE_CASES(ConvolutionGradient) {
  // out_grad, data, weight[, bias]: 2-D grouped, strided and padded with a bias; 1-D dilated
  // without; 3-D with a mixed window.
  cases->push_back(Internal(Case(
      "_backward_Convolution",
      {{"kernel", "(3, 3)"},
       {"stride", "(2, 2)"},
       {"pad", "(1, 1)"},
       {"num_filter", "6"},
       {"num_group", "2"}},
      {{2, 6, 4, 4}, {2, 4, 7, 7}, {6, 2, 3, 3}, {6}},
      GradientOf(ConvRef(Geom({3, 3}, {2, 2}, {1, 1}, {1, 1}, 6, 2, true)), 3), "grouped_s2")));
  cases->push_back(Internal(Case("_backward_Convolution",
                                 {{"kernel", "(3,)"},
                                  {"dilate", "(2,)"},
                                  {"pad", "(1,)"},
                                  {"num_filter", "2"},
                                  {"no_bias", "True"}},
                                 {{1, 2, 9}, {1, 3, 11}, {2, 3, 3}},
                                 GradientOf(ConvRef(Geom({3}, {1}, {1}, {2}, 2, 1, false)), 2),
                                 "1d_dilate_no_bias")));
  cases->push_back(Internal(Case(
      "_backward_Convolution", {{"kernel", "(2, 3, 2)"}, {"pad", "(0, 1, 1)"}, {"num_filter", "3"}},
      {{1, 3, 3, 5, 5}, {1, 2, 4, 5, 4}, {3, 2, 2, 3, 2}, {3}},
      GradientOf(ConvRef(Geom({2, 3, 2}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, 3, 1, true)), 3), "3d")));
  // 3x3 windows of stride 1 and padding 1 on channels in multiples of 8 (Winograd's kernel takes
  // them), on images whose sides are no multiples of its 4x4 tiles.
  cases->push_back(Internal(Case(
      "_backward_Convolution", {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "16"}},
      {{2, 16, 7, 6}, {2, 8, 7, 6}, {16, 8, 3, 3}, {16}},
      GradientOf(ConvRef(Geom({3, 3}, {1, 1}, {1, 1}, {1, 1}, 16, 1, true)), 3), "3x3_pad1")));
  // A stride that leaves the last input rows out of every window: their gradient is 0.
  cases->push_back(Internal(Case(
      "_backward_Convolution", {{"kernel", "(2, 2)"}, {"stride", "(3, 3)"}, {"num_filter", "2"}},
      {{1, 2, 2, 3}, {1, 2, 7, 8}, {2, 2, 2, 2}, {2}},
      GradientOf(ConvRef(Geom({2, 2}, {3, 3}, {0, 0}, {1, 1}, 2, 1, true)), 3),
      "rows_outside_windows")));

  // _backward_Convolution as the channel-last training graph runs it (pass/layout.cc): out_grad,
  // data and d data channel-last, the reference's on their channel-first copies.
  auto channel_last = [](RefFn gradient) -> RefFn {
    return [gradient](const std::vector<RefTensor>& in) {
      std::vector<RefTensor> first = in;
      first[0] = ToChannelFirst(in[0]);
      first[1] = ToChannelFirst(in[1]);
      std::vector<RefTensor> grads = gradient(first);
      grads[0] = ToChannelLast(grads[0]);
      return grads;
    };
  };
  cases->push_back(Internal(
      Case("_backward_hn_convolution",
           {{"kernel", "(3, 3)"},
            {"stride", "(2, 2)"},
            {"pad", "(1, 1)"},
            {"num_filter", "6"},
            {"num_group", "2"},
            {"layout", "NHWC"}},
           {{2, 4, 4, 6}, {2, 7, 7, 4}, {6, 2, 3, 3}, {6}},
           channel_last(GradientOf(ConvRef(Geom({3, 3}, {2, 2}, {1, 1}, {1, 1}, 6, 2, true)), 3)),
           "nhwc_grouped_s2")));
  cases->push_back(
      Internal(Case("_backward_hn_convolution",
                    {{"kernel", "(2, 3, 2)"},
                     {"pad", "(0, 1, 1)"},
                     {"num_filter", "3"},
                     {"no_bias", "True"},
                     {"layout", "NDHWC"}},
                    {{1, 3, 5, 5, 3}, {1, 4, 5, 4, 2}, {3, 2, 2, 3, 2}},
                    channel_last(GradientOf(
                        ConvRef(Geom({2, 3, 2}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, 3, 1, false)), 2)),
                    "ndhwc_no_bias")));
  cases->push_back(Internal(
      Case("_backward_hn_convolution",
           {{"kernel", "(3, 3)"},
            {"pad", "(1, 1)"},
            {"num_filter", "8"},
            {"no_bias", "True"},
            {"layout", "NHWC"}},
           {{1, 5, 9, 8}, {1, 5, 9, 16}, {8, 16, 3, 3}},
           channel_last(GradientOf(ConvRef(Geom({3, 3}, {1, 1}, {1, 1}, {1, 1}, 8, 1, false)), 2)),
           "nhwc_3x3_pad1")));

  // out_grad, data, weight[, bias]: stride, pad and adj with groups and a bias; target_shape.
  ConvGeom deconv = Geom({3, 3}, {2, 2}, {1, 1}, {1, 1}, 6, 2, true);
  deconv.adj = {1, 1};
  cases->push_back(Internal(Case("_backward_Deconvolution",
                                 {{"kernel", "(3, 3)"},
                                  {"stride", "(2, 2)"},
                                  {"pad", "(1, 1)"},
                                  {"adj", "(1, 1)"},
                                  {"num_filter", "6"},
                                  {"num_group", "2"},
                                  {"no_bias", "False"}},
                                 {{1, 6, 6, 6}, {1, 4, 3, 3}, {4, 3, 3, 3}, {6}},
                                 GradientOf(DeconvRef(deconv), 3), "adj_groups")));
  ConvGeom target = Geom({3, 3}, {2, 2}, {0, 0}, {1, 1}, 2, 1, false);
  target.adj = {0, 0};
  target.target = {6, 7};
  cases->push_back(Internal(Case(
      "_backward_Deconvolution",
      {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"num_filter", "2"}, {"target_shape", "(6, 7)"}},
      {{1, 2, 6, 7}, {1, 3, 3, 3}, {3, 2, 3, 3}}, GradientOf(DeconvRef(target), 2),
      "target_shape")));
}

HN_CONFORMANCE_CASES(PoolingGradient) {
  const Convention V = Convention::kValid, F = Convention::kFull, S = Convention::kSame;
  // The internal op (out_grad, data, output): avg and sum read no output, so any output will do.
  const PoolSpec avg = Pool("avg", {3, 3}, {2, 2}, {1, 1}, F, 0);
  cases->push_back(
      Internal(Case("_backward_Pooling", PoolAttrs(avg), {{1, 2, 4, 4}, {1, 2, 7, 7}, {1, 2, 4, 4}},
                    GradientOf(PoolRef(avg), 1), "avg_full_exclude_pad")));
  const PoolSpec sum = Pool("sum", {3}, {2}, {}, V);
  cases->push_back(
      Internal(Case("_backward_Pooling", PoolAttrs(sum), {{2, 3, 5}, {2, 3, 11}, {2, 3, 5}},
                    GradientOf(PoolRef(sum), 1), "1d_sum")));

  // Max pooling of a constant: all ties, so the first position of every window takes the
  // gradient (MXNet's rule); rows wide enough for 16 windows at once at strides 1, 2 and 3.
  auto constant_data = [](std::mt19937& rng, size_t input, int64_t) {
    return input == 0 ? std::uniform_real_distribution<double>(-1.0, 1.0)(rng) : 0.5;
  };
  for (int64_t stride : {1, 2, 3}) {
    const int64_t H = 7, W = 60, k = 3, pad = 1;
    const int64_t OH = (H + 2 * pad - k) / stride + 1, OW = (W + 2 * pad - k) / stride + 1;
    OpCase c = Internal(Case("_backward_Pooling",
                             PoolAttrs(Pool("max", {k, k}, {stride, stride}, {pad, pad}, V)),
                             {{2, 2, OH, OW}, {2, 2, H, W}, {2, 2, OH, OW}},
                             FirstPositionRef(stride, pad), "max_ties_s" + std::to_string(stride)));
    cases->push_back(WithGen(c, constant_data));
  }
  // The same channel-last, as the channel-last training graph runs it: 20 channels, a whole and
  // a partial block of 16.
  {
    const int64_t H = 7, W = 9, C = 20, k = 3, stride = 2, pad = 1;
    const int64_t OH = (H + 2 * pad - k) / stride + 1, OW = (W + 2 * pad - k) / stride + 1;
    OpCase c = Internal(
        Case("_backward_Pooling",
             PoolAttrs(Pool("max", {k, k}, {stride, stride}, {pad, pad}, V, -1, false, 0, "NHWC")),
             {{2, OH, OW, C}, {2, H, W, C}, {2, OH, OW, C}}, FirstPositionRef(stride, pad, true),
             "max_ties_nhwc"));
    cases->push_back(WithGen(c, constant_data));
  }

  // Overlapping cells (7 rows into 3: 0-2, 2-4, 4-6).
  cases->push_back(
      Internal(Case("_backward_contrib_AdaptiveAvgPooling2D", {{"output_size", "(3, 2)"}},
                    {{2, 3, 3, 2}, {2, 3, 7, 5}}, AdaptivePoolBackwardRef, "overlapping_cells")));

  cases->push_back(Internal(Case(
      "_backward_UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "2"}},
      {{2, 3, 4, 6}, {2, 2, 2, 3}, {2, 1, 4, 6}}, NearestUpBackwardRef(false), "nearest_concat")));
  cases->push_back(Internal(Case(
      "_backward_UpSampling",
      {{"scale", "3"}, {"sample_type", "nearest"}, {"num_args", "2"}, {"multi_input_mode", "sum"}},
      {{1, 2, 6, 3}, {1, 2, 2, 1}, {1, 2, 6, 3}}, NearestUpBackwardRef(true), "nearest_sum")));

  // Max pooling on distinct values (one maximum per window) in every rank, convention and
  // layout, with overlapping windows (stride below the kernel), so the gradients of shared
  // positions add up.
  const std::vector<std::tuple<Dims, PoolSpec, std::string>> max_specs = {
      {{2, 3, 7, 9}, Pool("max", {3, 3}, {2, 2}, {1, 1}, V), "grad_max_overlap"},
      {{1, 2, 8, 7}, Pool("max", {3, 2}, {2, 1}, {1, 0}, F), "grad_max_full"},
      {{1, 2, 10}, Pool("max", {4}, {3}, {}, S), "grad_1d_max_same"},
      {{2, 2, 9}, Pool("max", {3}, {1}, {1}, V), "grad_1d_max_stride1"},
      {{1, 2, 5, 6, 5}, Pool("max", {3, 2, 3}, {2, 2, 1}, {1, 0, 1}, F), "grad_3d_max_full"},
      {{2, 3, 5, 6}, Pool("max", {}, {}, {}, V, -1, true), "grad_global_max"},
      {{2, 7, 6, 5},
       Pool("max", {3, 3}, {2, 2}, {1, 1}, F, -1, false, 0, "NHWC"),
       "grad_nhwc_max_full"},
      {{1, 4, 5, 6, 3},
       Pool("max", {2, 3, 2}, {1, 2, 2}, {1, 1, 0}, V, -1, false, 0, "NDHWC"),
       "grad_ndhwc_max"},
  };
  for (const auto& [data, spec, note] : max_specs) {
    OpCase c = WithGen(
        WithTol(Case("Pooling", PoolAttrs(spec), {Shape(data)}, PoolRef(spec), note), 1e-5, 1e-5),
        Distinct);
    if (spec.convention == S) {
      c = NotInMXNet(c, "MXNet 1.9.1's shape inference fails on pooling_convention 'same'");
    }
    cases->push_back(c);
  }
  // avg (with and without the padding counted), sum and lp in the ranks and layouts the
  // forward cases leave out.
  const std::vector<std::tuple<Dims, PoolSpec, std::string>> sum_specs = {
      {{1, 2, 9, 8}, Pool("avg", {3, 3}, {1, 2}, {1, 1}, F, 1), "grad_avg_overlap_include_pad"},
      {{1, 2, 9, 8}, Pool("avg", {3, 3}, {1, 2}, {1, 1}, F, 0), "grad_avg_overlap_exclude_pad"},
      {{2, 6, 5, 4},
       Pool("avg", {2, 2}, {1, 1}, {1, 1}, V, 0, false, 0, "NHWC"),
       "grad_nhwc_avg_exclude_pad"},
      {{1, 2, 4, 5, 6},
       Pool("lp", {2, 2, 3}, {1, 2, 2}, {0, 1, 1}, V, -1, false, 2),
       "grad_3d_lp2"},
      {{2, 3, 10}, Pool("lp", {3}, {2}, {1}, F, -1, false, 3), "grad_1d_lp3"},
      {{1, 2, 7, 5}, Pool("lp", {2, 2}, {1, 1}, {}, V, -1, false, 1), "grad_lp1_overlap"},
      {{2, 9, 4}, Pool("sum", {3}, {2}, {1}, F, -1, false, 0, "NWC"), "grad_nwc_sum"},
  };
  for (const auto& [data, spec, note] : sum_specs) {
    OpCase c =
        WithTol(Case("Pooling", PoolAttrs(spec), {Shape(data)}, PoolRef(spec), note), 1e-5, 1e-5);
    // lp of negative values has no real root for even p: positive inputs, away from 0.
    if (spec.type == "lp") c = WithGen(c, Uniform(0.2, 1.0));
    cases->push_back(c);
  }
}

// An output gradient of another shape than the forward's output is rejected by name.
HN_ERROR_CASES(ConvolutionGradient) {
  const StatusCode shape = StatusCode::kShapeError;
  cases->push_back(Rejected("_backward_Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "4"}},
                            {{1, 4, 5, 5}, {1, 2, 8, 8}, {4, 2, 3, 3}, {4}}, shape,
                            {"_backward_Convolution(node)", "(1, 4, 6, 6)"}));
  cases->push_back(Rejected("_backward_Deconvolution",
                            {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"num_filter", "3"}},
                            {{1, 3, 7, 7}, {1, 2, 3, 3}, {2, 3, 2, 2}}, shape,
                            {"_backward_Deconvolution(node)", "(1, 3, 6, 6)"}));
  cases->push_back(Rejected("_backward_Pooling", {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}},
                            {{1, 2, 3, 3}, {1, 2, 8, 8}, {1, 2, 4, 4}}, shape,
                            {"_backward_Pooling(node)", "out_grad"}));
  cases->push_back(Rejected("_backward_contrib_AdaptiveAvgPooling2D", {{"output_size", "2"}},
                            {{1, 2, 3, 3}, {1, 2, 8, 8}}, shape,
                            {"_backward_contrib_AdaptiveAvgPooling2D(node)", "(1, 2, 2, 2)"}));
  cases->push_back(Rejected(
      "_backward_UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "1"}},
      {{1, 2, 5, 5}, {1, 2, 2, 2}}, shape, {"_backward_UpSampling(node)", "(1, 2, 4, 4)"}));
}

// The backward ops in float64 (float64 models' training graphs).
HN_CONFORMANCE_CASES(Float64ConvolutionPoolingGradient) {
  const DType f64 = DType::kFloat64;
  cases->push_back(WithDTypes(
      Internal(Case("_backward_Convolution",
                    {{"kernel", "(3, 3)"},
                     {"stride", "(2, 2)"},
                     {"pad", "(1, 1)"},
                     {"num_filter", "6"},
                     {"num_group", "2"}},
                    {{2, 6, 4, 4}, {2, 4, 7, 7}, {6, 2, 3, 3}, {6}},
                    GradientOf(ConvRef(Geom({3, 3}, {2, 2}, {1, 1}, {1, 1}, 6, 2, true)), 3),
                    "grouped_s2_float64")),
      {f64, f64, f64, f64}));
  cases->push_back(
      WithDTypes(Internal(Case("_backward_Convolution",
                               {{"kernel", "(3,)"},
                                {"dilate", "(2,)"},
                                {"pad", "(1,)"},
                                {"num_filter", "2"},
                                {"no_bias", "True"}},
                               {{1, 2, 9}, {1, 3, 11}, {2, 3, 3}},
                               GradientOf(ConvRef(Geom({3}, {1}, {1}, {2}, 2, 1, false)), 2),
                               "1d_dilated_float64")),
                 {f64, f64, f64}));
  const PoolSpec avg = Pool("avg", {3, 3}, {2, 2}, {1, 1}, Convention::kFull, 0);
  cases->push_back(WithDTypes(
      Internal(Case("_backward_Pooling", PoolAttrs(avg), {{1, 2, 4, 4}, {1, 2, 7, 7}, {1, 2, 4, 4}},
                    GradientOf(PoolRef(avg), 1), "avg_full_exclude_pad_float64")),
      {f64, f64, f64}));
}

}  // namespace conformance
}  // namespace hybridnet
