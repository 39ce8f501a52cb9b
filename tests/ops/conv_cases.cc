// Conformance, inference and error cases: Convolution, Deconvolution, Pooling, BatchNorm and
// _contrib_BatchNormWithReLU. The references are direct loops over windows in double (no im2col,
// no GEMM), written from MXNet's definitions of each op; every 1-D, 2-D and 3-D window is walked
// in one canonical 3-D form (missing leading dims are 1).
#include <algorithm>
#include <limits>
#include <string>
#include <tuple>

#include "conformance.h"
#include "nn_reference.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

std::string Tup(const Dims& d) { return Shape(d).ToString(); }

// ---- Convolution and Deconvolution -------------------------------------------------------------

// One convolution scenario: data shape, num_filter, kernel, stride, pad, dilate, groups, bias.
struct ConvSpec {
  Dims data;
  int64_t num_filter;
  Dims kernel, stride, pad, dilate;
  int64_t groups;
  bool no_bias;
};

bool AllAre(const Dims& d, int64_t v) {
  return std::all_of(d.begin(), d.end(), [v](int64_t x) { return x == v; });
}

// The attributes as a model file would hold them: only the non-defaults, or (gluon) all of them.
AttrDict ConvAttrs(const ConvSpec& c, bool write_defaults) {
  AttrDict a = {{"kernel", Tup(c.kernel)}, {"num_filter", std::to_string(c.num_filter)}};
  if (write_defaults || !AllAre(c.stride, 1)) a["stride"] = Tup(c.stride);
  if (write_defaults || !AllAre(c.pad, 0)) a["pad"] = Tup(c.pad);
  if (write_defaults || !AllAre(c.dilate, 1)) a["dilate"] = Tup(c.dilate);
  if (write_defaults || c.groups != 1) a["num_group"] = std::to_string(c.groups);
  if (write_defaults || c.no_bias) a["no_bias"] = c.no_bias ? "True" : "False";
  return a;
}

std::vector<Shape> ConvInputs(const ConvSpec& c) {
  Dims wd = {c.num_filter, c.data[1] / c.groups};
  wd.insert(wd.end(), c.kernel.begin(), c.kernel.end());
  std::vector<Shape> in = {Shape(c.data), Shape(wd)};
  if (!c.no_bias) in.push_back(Shape({c.num_filter}));
  return in;
}

ConvGeom GeomOf(const ConvSpec& c) {
  ConvGeom g;
  g.kernel = c.kernel;
  g.stride = c.stride;
  g.pad = c.pad;
  g.dilate = c.dilate;
  g.num_filter = c.num_filter;
  g.num_group = c.groups;
  g.bias = !c.no_bias;
  return g;
}

// Values in [-1, 1): sums over hundreds of taps stay well inside the tolerance.
OpCase ConvCase(const ConvSpec& c, const std::string& note, bool write_defaults = false) {
  return WithTol(WithGen(Case("Convolution", ConvAttrs(c, write_defaults), ConvInputs(c),
                              ConvRef(GeomOf(c)), note),
                         Uniform(-1.0, 1.0)),
                 1e-4, 1e-4);
}

// ---- Pooling -----------------------------------------------------------------------------------

AttrDict PoolAttrs(const PoolSpec& s) {
  static const char* const kConventions[] = {"valid", "full", "same"};
  AttrDict a = {{"pool_type", s.type},
                {"pooling_convention", kConventions[static_cast<int>(s.convention)]}};
  if (!s.kernel.empty()) a["kernel"] = Tup(s.kernel);
  if (!s.stride.empty()) a["stride"] = Tup(s.stride);
  if (!s.pad.empty()) a["pad"] = Tup(s.pad);
  if (s.include_pad >= 0) a["count_include_pad"] = s.include_pad ? "True" : "False";
  if (s.global) a["global_pool"] = "True";
  if (s.p_value) a["p_value"] = std::to_string(s.p_value);
  if (!s.layout.empty()) a["layout"] = s.layout;
  return a;
}

// Whether a max pooling has a window wholly in the padding or past the image: its output is
// -FLT_MAX, which swamps the sums of the finite differences that check the gradient (the
// max-pooling cases of conv_grad_cases.cc check it instead).
bool HasEmptyMaxWindow(const Dims& data, const PoolSpec& spec) {
  if (spec.type != "max" || spec.global) return false;
  const bool cl = !spec.layout.empty() && spec.layout.back() == 'C';
  for (size_t i = 0; i < spec.kernel.size(); ++i) {
    const int64_t image = data[(cl ? 1 : 2) + i], k = spec.kernel[i];
    const int64_t stride = spec.stride.empty() ? 1 : spec.stride[i];
    const int64_t pad = spec.pad.empty() ? 0 : spec.pad[i];
    const int64_t span = image + 2 * pad - k;
    const int64_t grid = spec.convention == Convention::kValid  ? span / stride + 1
                         : spec.convention == Convention::kFull ? (span + stride - 1) / stride + 1
                                                                : (image + stride - 1) / stride;
    for (int64_t o = 0; o < grid; ++o) {
      const int64_t start = o * stride - pad;
      if (std::min(start + k, image) <= std::max<int64_t>(start, 0)) return true;
    }
  }
  return false;
}

OpCase PoolCase(const Dims& data, const PoolSpec& spec, const std::string& note) {
  OpCase c =
      WithTol(Case("Pooling", PoolAttrs(spec), {Shape(data)}, PoolRef(spec), note), 1e-5, 1e-5);
  // lp pooling of negative values has no real root for even p: positive inputs.
  if (spec.type == "lp") c = WithGen(c, Uniform(0.0, 1.0));
  if (HasEmptyMaxWindow(data, spec)) {
    c = NoGradientCheck(c, "a window outside the image gives -FLT_MAX, which swamps the sums");
  }
  return c;
}

// ---- BatchNorm ---------------------------------------------------------------------------------

// moving_var (input 4) positive, gamma (input 1) away from zero.
double BatchNormInput(std::mt19937& rng, size_t input, int64_t) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (input == 4) return 0.1 + 1.9 * u(rng);
  if (input == 1) return 0.5 + u(rng);
  return -2.0 + 4.0 * u(rng);
}

OpCase BnCase(const char* op, AttrDict attrs, Dims data, BnSpec spec, std::string note) {
  const int nd = static_cast<int>(data.size());
  const int64_t C = data[static_cast<size_t>(spec.axis < 0 ? nd + spec.axis : spec.axis)];
  Shape v{C};
  return WithTol(WithGen(Case(op, std::move(attrs), {Shape(data), v, v, v, v}, BatchNormRef(spec),
                              std::move(note)),
                         BatchNormInput),
                 1e-5, 1e-5);
}

}  // namespace

HN_CONFORMANCE_CASES(Convolution) {
  // 2-D: padding, stride, dilation, groups, pointwise, inception 1x7/7x1, LeNet, the ResNet stem,
  // kernels equal to or larger than the (padded) input, strides equal to or above the kernel,
  // padding wider than the kernel.
  const std::vector<std::pair<ConvSpec, std::string>> conv2d = {
      {{{2, 3, 9, 11}, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false}, "k3_pad1"},
      {{{1, 4, 10, 10}, 6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 2, true}, "groups_stride_no_bias"},
      {{{1, 3, 12, 12}, 4, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 1, false}, "dilate"},
      {{{1, 3, 13, 12}, 5, {3, 2}, {2, 3}, {1, 0}, {2, 1}, 1, false}, "mixed_window"},
      {{{2, 6, 7, 9}, 6, {1, 7}, {1, 1}, {0, 3}, {1, 1}, 1, false}, "inception_1x7"},
      {{{2, 6, 9, 7}, 6, {7, 1}, {1, 1}, {3, 0}, {1, 1}, 1, false}, "inception_7x1"},
      {{{2, 16, 5, 5}, 8, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false}, "pointwise"},
      {{{1, 37, 7, 7}, 70, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false}, "pointwise_70_filters"},
      {{{2, 16, 5, 5}, 8, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 4, true}, "pointwise_groups"},
      {{{2, 8, 6, 7}, 4, {1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, false}, "pointwise_stride"},
      {{{1, 4, 5, 5}, 4, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, false}, "pointwise_pad"},
      {{{1, 1, 28, 28}, 20, {5, 5}, {1, 1}, {0, 0}, {1, 1}, 1, false}, "lenet_conv1"},
      {{{1, 3, 23, 23}, 8, {7, 7}, {2, 2}, {3, 3}, {1, 1}, 1, false}, "resnet_stem"},
      {{{2, 6, 8, 8}, 9, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 3, false}, "groups3"},
      {{{1, 5, 4, 4}, 3, {4, 4}, {1, 1}, {0, 0}, {1, 1}, 1, false}, "kernel_is_input"},
      {{{1, 2, 3, 3}, 2, {5, 5}, {1, 1}, {1, 1}, {1, 1}, 1, false}, "kernel_above_input"},
      {{{1, 2, 9, 9}, 3, {3, 3}, {3, 3}, {0, 0}, {1, 1}, 1, false}, "stride_is_kernel"},
      {{{1, 2, 10, 10}, 3, {2, 2}, {4, 4}, {0, 0}, {1, 1}, 1, false}, "stride_above_kernel"},
      {{{1, 2, 6, 6}, 3, {3, 3}, {1, 1}, {4, 4}, {1, 1}, 1, false}, "pad_above_kernel"},
      {{{2, 3, 6, 5}, 4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false}, "batch2"},
      // Our kernel for few input channels (convolution_few_channels.h): whole and partial register
      // tiles of 4 blocks of 16 filters (7x7 stride 2), 3 blocks with a masked one (40
      // filters), one input channel.
      {{{1, 3, 30, 37}, 64, {7, 7}, {2, 2}, {3, 3}, {1, 1}, 1, false}, "stem_64_filters"},
      {{{2, 3, 33, 35}, 40, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1, true}, "stem_40_filters_no_bias"},
      {{{1, 1, 20, 29}, 16, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false}, "stem_1_channel"},
      // The same kernel on layers of 5-32 channels (channel-last tiles that hold an edge
      // position read zeros there): edge tiles whole and partial (widths 17, 30, 2), stride 2,
      // 5x5 with padding 2, no padding, a kernel wider than the image, masked filter blocks.
      {{{2, 16, 13, 17}, 24, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false}, "few_channels_16"},
      {{{1, 32, 9, 30}, 64, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1, true}, "few_channels_32_s2"},
      {{{1, 8, 11, 11}, 16, {5, 5}, {1, 1}, {2, 2}, {1, 1}, 1, false}, "few_channels_5x5_pad2"},
      {{{1, 20, 6, 40}, 40, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, false}, "few_channels_pad0"},
      {{{1, 5, 3, 2}, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false}, "few_channels_kernel_wider"},
      // Rows wide enough for tiles with no edge position, whose windows are addressed at
      // distances known at compile time, and edge tiles with one window column outside on
      // the left or the right: 16 channels at stride 1 (one and two filter blocks), 32
      // channels, and 16 at stride 2.
      {{{2, 16, 5, 40}, 16, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false}, "few_channels_16_wide"},
      {{{1, 16, 4, 45}, 20, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true}, "few_channels_16_wide_20"},
      {{{1, 32, 5, 30}, 32, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false}, "few_channels_32_wide"},
      {{{1, 16, 7, 49}, 8, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1, false}, "few_channels_16_s2_wide"},
      // A classifier written as a 1x1 convolution of a single 1x1 image (our matrix-vector
      // kernel, gemv.h): a masked last row block (37 filters) and no bias.
      {{{1, 40, 1, 1}, 37, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false}, "classifier_1x1_image"},
      {{{1, 19, 1, 1}, 24, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true}, "classifier_1x1_no_bias"},
  };
  for (const auto& c : conv2d) cases->push_back(ConvCase(c.first, c.second));
  // Depthwise (num_group == channels), with channel multipliers, dilation, 1-D and 3-D.
  const std::vector<std::pair<ConvSpec, std::string>> depthwise = {
      {{{1, 8, 10, 10}, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 8, false}, "depthwise"},
      {{{2, 4, 9, 9}, 8, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 4, true}, "depthwise_multiplier2"},
      {{{2, 6, 11, 8}, 6, {3, 3}, {2, 1}, {2, 1}, {2, 2}, 6, false}, "depthwise_dilate"},
      {{{1, 3, 7, 12}, 3, {1, 5}, {1, 1}, {0, 2}, {1, 1}, 3, false}, "depthwise_1x5"},
      {{{1, 4, 20}, 4, {5}, {2}, {2}, {1}, 4, false}, "depthwise_1d"},
      {{{1, 2, 4, 5, 6}, 4, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 2}, 2, false}, "depthwise_3d"},
      {{{1, 5, 6, 6}, 5, {3, 3}, {1, 1}, {3, 3}, {1, 1}, 5, false}, "depthwise_pad_above_kernel"},
      {{{1, 32, 14, 14}, 32, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 32, false}, "depthwise_mobilenet"},
      // 16-channel multiples (our own 3x3 depthwise kernel): stride 1 and 2, pad 0 and 1,
      // widths that leave positions outside four-wide steps, batch 2.
      {{{2, 16, 9, 19}, 16, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 16, false}, "depthwise16_s1"},
      {{{1, 48, 12, 13}, 48, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 48, true}, "depthwise48_s2"},
      {{{1, 32, 7, 11}, 32, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 32, false}, "depthwise32_pad0"},
      {{{2, 16, 10, 10}, 16, {3, 3}, {2, 2}, {0, 0}, {1, 1}, 16, true}, "depthwise16_s2_pad0"},
  };
  for (const auto& c : depthwise) cases->push_back(ConvCase(c.first, c.second));
  const std::vector<std::pair<ConvSpec, std::string>> other_ranks = {
      {{{2, 4, 20}, 6, {5}, {2}, {2}, {1}, 1, false}, "1d"},
      {{{1, 4, 17}, 4, {3}, {1}, {2}, {2}, 2, true}, "1d_dilate_groups"},
      {{{3, 2, 8}, 5, {1}, {1}, {0}, {1}, 1, false}, "1d_pointwise"},
      {{{1, 3, 5, 6, 7}, 4, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, false}, "3d"},
      {{{2, 4, 6, 5, 4}, 4, {2, 3, 1}, {2, 1, 1}, {0, 1, 0}, {1, 1, 2}, 2, true},
       "3d_mixed_groups"},
      {{{1, 2, 4, 4, 4}, 3, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1, false}, "3d_pointwise"},
      {{{1, 2, 5, 7, 6}, 3, {3, 1, 3}, {2, 2, 2}, {1, 0, 1}, {1, 1, 1}, 1, false}, "3d_strided"},
      // Strided 1x1 convolutions (our pointwise kernel on the subsampled input).
      {{{2, 20, 9, 11}, 24, {1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, false}, "pointwise_s2"},
      {{{1, 8, 10, 9}, 17, {1, 1}, {2, 3}, {0, 0}, {1, 1}, 1, true}, "pointwise_s2x3"},
      {{{2, 6, 13}, 5, {1}, {3}, {0}, {1}, 1, false}, "1d_pointwise_s3"},
      {{{1, 4, 5, 6, 7}, 18, {1, 1, 1}, {2, 1, 2}, {0, 0, 0}, {1, 1, 1}, 1, false},
       "3d_pointwise_strided"},
  };
  for (const auto& c : other_ranks) cases->push_back(ConvCase(c.first, c.second));
  // Inputs far larger than one cache-sized tile of work (a kernel that splits the output into
  // row ranges or channel blocks must cover every range, including ones ending mid-image).
  const std::vector<std::pair<ConvSpec, std::string>> large = {
      {{{1, 64, 56, 56}, 16, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false}, "large_64ch"},
      {{{1, 32, 60, 61}, 8, {5, 5}, {1, 2}, {2, 2}, {1, 1}, 2, false}, "large_odd_rows"},
      {{{1, 16, 10, 24, 24}, 4, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, false}, "large_3d"},
      {{{1, 100, 9, 9}, 130, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false}, "channels_not_16"},
  };
  for (const auto& c : large) cases->push_back(ConvCase(c.first, c.second));

  // Gluon writes every attribute, defaults included.
  cases->push_back(ConvCase({{1, 4, 6, 6}, 4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, false},
                            "gluon_attrs", /*write_defaults=*/true));
  // Attributes that do not change the CPU result, and hidden __x__ keys.
  ConvSpec ignorable{{1, 4, 6, 6}, 4, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, true};
  OpCase ig = ConvCase(ignorable, "ignorable_attrs");
  ig.attrs = {{"kernel", "(3,3)"},   {"num_filter", "4"},       {"no_bias", "True"},
              {"workspace", "2048"}, {"cudnn_tune", "fastest"}, {"cudnn_off", "True"},
              {"layout", "NCHW"},    {"__lr_mult__", "1.0"}};
  cases->push_back(ig);
  OpCase ncw = ConvCase({{2, 2, 9}, 3, {3}, {2}, {1}, {1}, 1, false}, "1d_layout_ncw");
  ncw.attrs["layout"] = "NCW";
  ncw.attrs["cudnn_tune"] = "None";
  cases->push_back(ncw);
  // A kernel written with brackets, as some exporters do.
  OpCase brackets =
      ConvCase({{1, 2, 3, 4, 3}, 2, {2, 2, 2}, {1, 1, 1}, {0, 1, 0}, {1, 1, 1}, 1, false},
               "3d_layout_ncdhw_brackets");
  brackets.attrs["kernel"] = "[2, 2, 2]";
  brackets.attrs["layout"] = "NCDHW";
  cases->push_back(brackets);
}

HN_INFERENCE_CASES(Convolution) {
  // gluon's deferred initialization: the data is known, weight and bias are filled in.
  AttrDict grouped = {{"kernel", "(3, 3)"},
                      {"num_filter", "8"},
                      {"num_group", "2"},
                      {"stride", "(2, 2)"},
                      {"pad", "(1, 1)"}};
  cases->push_back(Infers("Convolution", grouped, {{2, 6, 15, 16}, {}, {}}, {{}},
                          {{2, 6, 15, 16}, {8, 3, 3, 3}, {8}}, {{2, 8, 8, 8}}, true,
                          "deferred_weight_and_bias"));
  cases->push_back(Infers(
      "Convolution", {{"kernel", "(5,)"}, {"num_filter", "4"}, {"no_bias", "True"}},
      {{1, 3, 10}, {}}, {{}}, {{1, 3, 10}, {4, 3, 5}}, {{1, 4, 6}}, true, "deferred_1d_weight"));
  cases->push_back(Infers("Convolution",
                          {{"kernel", "(1, 2, 3)"}, {"num_filter", "4"}, {"dilate", "(1, 2, 1)"}},
                          {{1, 3, 4, 5, 6}, {}, {}}, {{}}, {{1, 3, 4, 5, 6}, {4, 3, 1, 2, 3}, {4}},
                          {{1, 4, 4, 3, 4}}, true, "deferred_3d_weight"));
  // Without the data only the bias follows (from num_filter).
  cases->push_back(Infers("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}}, {{}, {}, {}},
                          {{}}, {{}, {}, {8}}, {{}}, false, "data_unknown"));
  // An unknown channel count leaves the weight's second dim unknown.
  cases->push_back(Infers("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}},
                          {{1, 0, 8, 8}, {}, {}}, {{}}, {{1, 0, 8, 8}, {8, 0, 3, 3}, {8}},
                          {{1, 8, 6, 6}}, false, "channels_unknown"));
  // MXNet's backward fill: the batch from the output, spatial dims where the stride is 1.
  cases->push_back(
      Infers("Convolution",
             {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"pad", "(1, 0)"}, {"stride", "(1, 2)"}},
             {{0, 3, 0, 0}, {}, {}}, {{4, 8, 10, 5}}, {{4, 3, 10, 0}, {8, 3, 3, 3}, {8}},
             {{4, 8, 10, 5}}, false, "backward_from_output"));
}

HN_ERROR_CASES(Convolution) {
  using S = StatusCode;
  auto conv = [](AttrDict a, std::vector<Shape> in, S code, std::vector<std::string> needles) {
    return Rejected("Convolution", std::move(a), std::move(in), code, std::move(needles));
  };
  const AttrDict k3f4 = {{"kernel", "(3, 3)"}, {"num_filter", "4"}};
  auto with = [&](AttrDict extra) {
    AttrDict a = k3f4;
    for (const auto& kv : extra) a[kv.first] = kv.second;
    return a;
  };
  // Shapes.
  cases->push_back(conv(with({{"num_group", "2"}}), {{1, 3, 8, 8}, {4, 1, 3, 3}, {4}},
                        S::kShapeError, {"Convolution(node)", "num_group 2", "3"}));
  cases->push_back(conv({{"kernel", "(3, 3)"}, {"num_filter", "5"}, {"num_group", "2"}},
                        {{1, 4, 8, 8}, {5, 2, 3, 3}, {5}}, S::kInvalidArgument,
                        {"Convolution(node)", "num_filter 5"}));
  cases->push_back(conv(k3f4, {{1, 3, 8, 8}, {4, 3, 5, 5}, {4}}, S::kShapeError,
                        {"Convolution(node)", "weight", "(4, 3, 3, 3)"}));
  cases->push_back(conv(k3f4, {{1, 3, 8, 8}, {4, 3, 3, 3}, {5}}, S::kShapeError, {"bias"}));
  cases->push_back(
      conv(k3f4, {{3, 8, 8}, {4, 3, 3, 3}, {4}}, S::kShapeError, {"Convolution(node)", "4-D"}));
  cases->push_back(conv(with({{"kernel", "(5, 5)"}, {"pad", "(1, 1)"}}),
                        {{1, 3, 2, 8}, {4, 3, 5, 5}, {4}}, S::kShapeError,
                        {"Convolution(node)", "exceeds"}));
  cases->push_back(WithOutputs(conv(k3f4, {{1, 3, 8, 8}, {}, {}}, S::kShapeError,
                                    {"Convolution(node)", "output", "(1, 4, 6, 6)"}),
                               {{1, 4, 7, 7}}));
  // NHWC and NDHWC run on GPUs only in MXNet.
  cases->push_back(conv(with({{"layout", "NHWC"}}), {{1, 8, 8, 3}, {4, 3, 3, 3}, {4}},
                        S::kUnsupported, {"Convolution(node)", "NHWC"}));
  // Attributes (MXNet's ParamParser), named with the op and node.
  cases->push_back(
      conv({{"num_filter", "4"}}, {}, S::kInvalidArgument, {"Convolution(node)", "kernel"}));
  cases->push_back(conv({{"kernel", "(3, 3)"}}, {}, S::kInvalidArgument, {"num_filter"}));
  cases->push_back(
      conv({{"kernel", "(3, 3)"}, {"num_filter", "0"}}, {}, S::kInvalidArgument, {"num_filter"}));
  cases->push_back(
      conv({{"kernel", "(3, 3)"}, {"num_filter", "4.0"}}, {}, S::kInvalidArgument, {"num_filter"}));
  cases->push_back(conv(with({{"stride", "(1, 1, 1)"}}), {}, S::kInvalidArgument,
                        {"Convolution(node)", "stride"}));
  cases->push_back(conv(with({{"pad", "(1,)"}}), {}, S::kInvalidArgument, {"pad"}));
  cases->push_back(conv(with({{"dilate", "(0, 1)"}}), {}, S::kInvalidArgument, {"dilate"}));
  cases->push_back(conv(with({{"stride", "(1, 0)"}}), {}, S::kInvalidArgument, {"stride"}));
  cases->push_back(conv(with({{"pad", "(-1, 0)"}}), {}, S::kInvalidArgument, {"pad"}));
  cases->push_back(
      conv({{"kernel", "(3, 0)"}, {"num_filter", "4"}}, {}, S::kInvalidArgument, {"kernel"}));
  cases->push_back(
      conv({{"kernel", "(3, 3, 3, 3)"}, {"num_filter", "4"}}, {}, S::kInvalidArgument, {"4-D"}));
  cases->push_back(conv({{"kernel", "()"}, {"num_filter", "4"}}, {}, S::kInvalidArgument, {"0-D"}));
  cases->push_back(conv(with({{"layout", "NCW"}}), {}, S::kInvalidArgument, {"layout"}));
  cases->push_back(conv(with({{"layout", "HWCN"}}), {}, S::kInvalidArgument, {"layout"}));
  cases->push_back(conv(with({{"cudnn_tune", "slow"}}), {}, S::kInvalidArgument, {"cudnn_tune"}));
  cases->push_back(conv(with({{"adj", "(1, 1)"}}), {}, S::kInvalidArgument, {"adj"}));
}

HN_CONFORMANCE_CASES(Deconvolution) {
  struct DeconvSpec {
    Dims data;
    int64_t num_filter;
    Dims kernel, stride, pad, dilate, adj;
    int64_t groups;
    bool no_bias;
    Dims target;  // empty: not given
    std::string note;
  };
  const std::vector<DeconvSpec> specs = {
      {{1, 4, 5, 5}, 6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, false, {}, "stride_pad_adj"},
      {{2, 3, 4, 6}, 5, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, 1, true, {}, "dcgan"},
      {{1, 4, 5, 4}, 6, {3, 2}, {1, 2}, {0, 1}, {2, 1}, {0, 1}, 2, false, {}, "groups_dilate"},
      {{2, 8, 3, 3}, 4, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, 1, false, {}, "pointwise"},
      {{1, 4, 3, 3}, 4, {1, 1}, {2, 2}, {0, 0}, {1, 1}, {1, 1}, 2, false, {}, "pointwise_stride"},
      {{1, 3, 7, 7}, 3, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 3, false, {}, "depthwise"},
      {{1, 3, 4, 4}, 2, {4, 4}, {2, 2}, {0, 0}, {1, 1}, {0, 0}, 1, true, {8, 8}, "target"},
      {{1, 2, 5, 5},
       3,
       {3, 3},
       {2, 2},
       {0, 0},
       {1, 1},
       {0, 0},
       1,
       false,
       {10, 10},
       "target_odd_excess"},
      {{2, 4, 9}, 6, {5}, {3}, {2}, {1}, {2}, 2, false, {}, "1d"},
      {{1, 2, 6}, 3, {3}, {2}, {1}, {1}, {0}, 1, true, {12}, "1d_target"},
      {{2, 3, 5}, 2, {3}, {2}, {1}, {2}, {0}, 1, true, {}, "1d_dilate"},
      {{1, 2, 3, 4, 3},
       4,
       {3, 3, 2},
       {2, 1, 2},
       {1, 1, 0},
       {1, 1, 1},
       {1, 0, 1},
       2,
       false,
       {},
       "3d"},
      {{1, 4, 48, 47}, 4, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, 1, false, {}, "large"},
      {{1, 8, 70, 70}, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 2, true, {}, "large_groups"},
      {{2, 3, 4, 4}, 2, {3, 3}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, 1, true, {}, "defaults"},
      // target_shape sets pad and adj per axis: 2 * (3 - 1) + 3 - 6 = 1 gives pad 1 and adj 1,
      // 7 - 7 = 0 gives neither.
      {{1, 3, 3, 3}, 2, {3, 3}, {2, 2}, {0, 0}, {1, 1}, {0, 0}, 1, true, {6, 7}, "target_shape"},
  };
  for (const DeconvSpec& d : specs) {
    AttrDict a = {{"kernel", Tup(d.kernel)},
                  {"num_filter", std::to_string(d.num_filter)},
                  {"stride", Tup(d.stride)},
                  {"pad", Tup(d.pad)},
                  {"dilate", Tup(d.dilate)},
                  {"adj", Tup(d.adj)},
                  {"num_group", std::to_string(d.groups)},
                  {"no_bias", d.no_bias ? "True" : "False"}};
    if (!d.target.empty()) a["target_shape"] = Tup(d.target);
    if (d.note == "defaults") a = {{"kernel", "(3, 3)"}, {"num_filter", "2"}};  // no_bias: True
    ConvGeom g;
    g.kernel = d.kernel;
    g.stride = d.stride;
    g.pad = d.pad;
    g.dilate = d.dilate;
    g.adj = d.adj;
    g.target = d.target;
    g.num_filter = d.num_filter;
    g.num_group = d.groups;
    g.bias = !d.no_bias;
    Dims wd = {d.data[1], d.num_filter / d.groups};
    wd.insert(wd.end(), d.kernel.begin(), d.kernel.end());
    std::vector<Shape> in = {Shape(d.data), Shape(wd)};
    if (!d.no_bias) in.push_back(Shape({d.num_filter}));
    cases->push_back(
        WithTol(WithGen(Case("Deconvolution", a, in, DeconvRef(g), d.note), Uniform(-1.0, 1.0)),
                1e-4, 1e-4));
  }
}

HN_INFERENCE_CASES(Deconvolution) {
  // no_bias defaults to True: two inputs; the weight follows from the data.
  cases->push_back(Infers("Deconvolution",
                          {{"kernel", "(4, 4)"},
                           {"num_filter", "6"},
                           {"stride", "(2, 2)"},
                           {"pad", "(1, 1)"},
                           {"num_group", "2"}},
                          {{2, 4, 7, 5}, {}}, {{}}, {{2, 4, 7, 5}, {4, 3, 4, 4}}, {{2, 6, 14, 10}},
                          true, "deferred_weight"));
  cases->push_back(Infers("Deconvolution",
                          {{"kernel", "(3,)"},
                           {"num_filter", "2"},
                           {"no_bias", "False"},
                           {"target_shape", "(9,)"},
                           {"stride", "(2,)"}},
                          {{1, 5, 5}, {}, {}}, {{}}, {{1, 5, 5}, {5, 2, 3}, {2}}, {{1, 2, 9}}, true,
                          "target_shape"));
}

HN_ERROR_CASES(Deconvolution) {
  using S = StatusCode;
  auto deconv = [](AttrDict a, std::vector<Shape> in, S code, std::vector<std::string> needles) {
    return Rejected("Deconvolution", std::move(a), std::move(in), code, std::move(needles));
  };
  cases->push_back(
      deconv({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"stride", "(2, 2)"}, {"adj", "(2, 0)"}},
             {{1, 2, 4, 4}, {2, 4, 3, 3}}, S::kShapeError, {"Deconvolution(node)", "adj"}));
  cases->push_back(deconv({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"target_shape", "(20, 20)"}},
                          {{1, 2, 4, 4}, {2, 4, 3, 3}}, S::kShapeError, {"target_shape"}));
  cases->push_back(deconv({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"num_group", "2"}},
                          {{1, 3, 4, 4}, {3, 2, 3, 3}}, S::kShapeError,
                          {"Deconvolution(node)", "num_group"}));
  cases->push_back(deconv({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"pad", "(3, 3)"}},
                          {{1, 2, 2, 2}, {2, 4, 3, 3}}, S::kShapeError, {"not positive"}));
  cases->push_back(deconv({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"layout", "NHWC"}},
                          {{1, 4, 4, 2}, {2, 4, 3, 3}}, S::kUnsupported, {"NHWC"}));
  cases->push_back(deconv({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"adj", "(1,)"}}, {},
                          S::kInvalidArgument, {"Deconvolution(node)", "adj"}));
  cases->push_back(deconv({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"adj", "(-1, 0)"}}, {},
                          S::kInvalidArgument, {"adj"}));
  cases->push_back(deconv({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"target_shape", "(8,)"}}, {},
                          S::kInvalidArgument, {"target_shape"}));
}

HN_CONFORMANCE_CASES(Pooling) {
  const Convention V = Convention::kValid, F = Convention::kFull, S = Convention::kSame;
  const std::vector<std::tuple<Dims, PoolSpec, std::string>> specs = {
      {{2, 3, 7, 9}, Pool("max", {3, 3}, {2, 2}, {1, 1}, V), "max_k3s2p1"},
      {{2, 3, 7, 9}, Pool("max", {3, 3}, {2, 2}, {1, 1}, F), "max_k3s2p1_full"},
      {{1, 2, 8, 8}, Pool("max", {2, 2}, {2, 2}, {}, V), "max_k2s2"},
      {{1, 2, 9, 6}, Pool("max", {3, 3}, {}, {}, V), "max_default_stride"},
      {{1, 2, 6, 7}, Pool("max", {2, 3}, {3, 2}, {0, 1}, F), "max_mixed_full"},
      {{1, 2, 6, 6}, Pool("max", {3, 3}, {2, 2}, {0, 0}, F), "max_full"},
      {{1, 3, 7, 7}, Pool("avg", {3, 3}, {2, 2}, {1, 1}, V), "avg_include_pad_default"},
      {{1, 3, 7, 7}, Pool("avg", {3, 3}, {2, 2}, {1, 1}, V, 1), "avg_include_pad"},
      {{1, 3, 7, 7}, Pool("avg", {3, 3}, {2, 2}, {1, 1}, V, 0), "avg_exclude_pad"},
      {{1, 3, 8, 8}, Pool("avg", {3, 3}, {2, 2}, {1, 1}, F, 1), "avg_past_padded_edge"},
      {{1, 3, 8, 8}, Pool("avg", {3, 3}, {2, 2}, {1, 1}, F, 0), "avg_past_padded_edge_exclude"},
      {{1, 2, 10, 7}, Pool("avg", {4, 2}, {3, 2}, {2, 1}, F, 1), "avg_mixed_full"},
      {{1, 2, 6, 6}, Pool("avg", {2, 2}, {2, 2}, {}, V), "avg_k2s2"},
      {{1, 2, 5, 5}, Pool("avg", {2, 2}, {2, 2}, {0, 0}, F), "avg_full"},
      {{1, 2, 7, 5}, Pool("sum", {3, 2}, {2, 1}, {1, 1}, F), "sum_full"},
      {{1, 3, 4, 5}, Pool("sum", {2, 3}, {1, 2}, {0, 1}, V), "sum"},
      {{1, 2, 7, 5}, Pool("lp", {3, 3}, {1, 2}, {1, 0}, V, -1, false, 1), "lp1"},
      {{1, 2, 7, 5}, Pool("lp", {3, 3}, {1, 2}, {1, 0}, V, -1, false, 2), "lp2"},
      {{1, 2, 7, 5}, Pool("lp", {2, 3}, {2, 2}, {1, 1}, F, -1, false, 3), "lp3_full"},
      {{2, 3, 11}, Pool("max", {3}, {2}, {1}, F), "1d_max_full"},
      {{2, 3, 11}, Pool("avg", {4}, {3}, {2}, F, 0), "1d_avg_full_exclude"},
      {{2, 3, 11}, Pool("sum", {3}, {2}, {}, V), "1d_sum"},
      {{2, 3, 8}, Pool("max", {3}, {2}, {1}, V), "1d_max"},
      {{1, 2, 10}, Pool("max", {3}, {3}, {}, S), "1d_max_same"},
      {{1, 2, 10}, Pool("avg", {4}, {3}, {}, S), "1d_avg_same"},
      {{1, 2, 5, 6, 7}, Pool("max", {2, 3, 2}, {2, 1, 2}, {1, 1, 0}, F), "3d_max_full"},
      {{1, 2, 5, 6, 7}, Pool("avg", {2, 3, 2}, {2, 2, 2}, {1, 1, 1}, F, 0), "3d_avg_full_exclude"},
      {{1, 2, 5, 6, 7}, Pool("avg", {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, V, 1), "3d_avg"},
      {{1, 2, 4, 4, 4}, Pool("avg", {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, V), "3d_avg_k2s2"},
      {{1, 2, 4, 5, 6}, Pool("sum", {2, 2, 2}, {1, 2, 2}, {}, V), "3d_sum"},
      // Global pooling, as gluon writes it (kernel, stride and pad are ignored).
      {{2, 4, 7, 7}, Pool("avg", {}, {}, {}, F, -1, true), "global_avg_gluon"},
      {{2, 3, 4, 5}, Pool("avg", {1, 1}, {1, 1}, {0, 0}, F, -1, true), "global_avg"},
      {{2, 4, 7, 7}, Pool("max", {1, 1}, {1, 1}, {0, 0}, F, -1, true), "global_max"},
      {{2, 3, 3, 3}, Pool("max", {}, {}, {}, V, -1, true), "global_max_no_kernel"},
      {{2, 4, 9}, Pool("sum", {}, {}, {}, V, -1, true), "global_sum_1d"},
      {{1, 3, 3, 4, 5}, Pool("avg", {}, {}, {}, V, -1, true), "global_avg_3d"},
      {{1, 3, 3, 4}, Pool("lp", {}, {}, {}, V, -1, true, 2), "global_lp2"},
      // The ResNet stem's pooling.
      {{1, 64, 112, 112}, Pool("max", {3, 3}, {2, 2}, {1, 1}, V), "resnet_stem"},
      // Channel-first max pooling 16 outputs of a row at a time on AVX-512: stride 2 from two
      // loads, other strides gathered; whole and masked blocks between the edge outputs.
      {{1, 2, 4, 40}, Pool("max", {2, 3}, {1, 1}, {0, 1}, V), "max_stride1_wide_rows"},
      {{2, 3, 5, 70}, Pool("max", {3, 3}, {3, 3}, {1, 1}, F), "max_stride3_wide_rows"},
      {{1, 3, 6, 67}, Pool("max", {3, 2}, {2, 2}, {1, 0}, F), "max_stride2_wide_rows"},
      // Channel-last layouts.
      {{1, 4, 4, 3}, Pool("max", {2, 2}, {2, 2}, {0, 0}, V, -1, false, 0, "NHWC"), "nhwc_max"},
      {{2, 7, 6, 3}, Pool("max", {3, 2}, {2, 2}, {1, 1}, F, -1, false, 0, "NHWC"), "nhwc_max_full"},
      {{2, 7, 6, 3}, Pool("avg", {3, 2}, {2, 2}, {1, 1}, F, -1, false, 0, "NHWC"), "nhwc_avg_full"},
      {{2, 9, 5}, Pool("avg", {}, {}, {}, V, -1, true, 0, "NWC"), "nwc_global_avg"},
      {{2, 8, 5}, Pool("max", {3}, {2}, {1}, V, -1, false, 0, "NWC"), "nwc_max"},
      {{1, 4, 5, 6, 3},
       Pool("avg", {2, 2, 2}, {2, 2, 2}, {1, 0, 1}, F, 0, false, 0, "NDHWC"),
       "ndhwc_avg"},
      {{2, 5, 5, 32}, Pool("avg", {}, {}, {}, V, -1, true, 0, "NHWC"), "nhwc_global_avg"},
      // Channel-last max pooling 16 channels at a time on AVX-512: whole and masked blocks.
      {{2, 9, 11, 37},
       Pool("max", {3, 3}, {2, 2}, {1, 1}, V, -1, false, 0, "NHWC"),
       "nhwc_max_k3s2p1_37_channels"},
      {{1, 4, 5, 6, 20},
       Pool("max", {2, 3, 2}, {2, 1, 2}, {1, 1, 0}, F, -1, false, 0, "NDHWC"),
       "ndhwc_max_full"},
      {{1, 1, 1, 20},
       Pool("max", {1, 1}, {}, {1, 1}, V, -1, false, 0, "NHWC"),
       "nhwc_empty_window_max"},
  };
  for (const auto& s : specs) {
    OpCase c = PoolCase(std::get<0>(s), std::get<1>(s), std::get<2>(s));
    if (std::get<1>(s).convention == S) {
      c = NotInMXNet(c,
                     "MXNet 1.9.1's shape inference fails on pooling_convention 'same' "
                     "(tuple index 1 out of range for the 1-D kernel)");
    }
    cases->push_back(c);
  }

  // MXNet's average divisor, on x = 1..n: kernel 3, stride 2, pad 1, full on 5 values gives the
  // windows [-1, 2), [1, 4), [3, 6); the last stops at the padded edge (6), so it divides by 3
  // including padding and by 2 without; kernel 4, stride 3, full on 6 divides by 4 and 3.
  auto ramp = [](std::mt19937&, size_t, int64_t i) { return static_cast<double>(i + 1); };
  cases->push_back(
      WithGen(PoolCase({1, 1, 5}, Pool("avg", {3}, {2}, {1}, F), "divisor_include_pad"), ramp));
  cases->push_back(
      WithGen(PoolCase({1, 1, 5}, Pool("avg", {3}, {2}, {1}, F, 0), "divisor_exclude_pad"), ramp));
  cases->push_back(
      WithGen(PoolCase({1, 1, 6}, Pool("avg", {4}, {3}, {}, F), "divisor_past_edge"), ramp));
  // Windows entirely in the padding: max gives -FLT_MAX, average without padding 0 (1-D/2-D) or
  // NaN (3-D), as MXNet's reference kernel does.
  cases->push_back(PoolCase({1, 1, 1, 1}, Pool("max", {1, 1}, {}, {1, 1}, V), "empty_window_max"));
  cases->push_back(
      PoolCase({1, 1, 1, 1}, Pool("avg", {1, 1}, {}, {1, 1}, V, 0), "empty_window_avg_2d"));
  cases->push_back(PoolCase({1, 1, 1, 1, 1}, Pool("avg", {1, 1, 1}, {}, {1, 1, 1}, V, 0),
                            "empty_window_avg_3d"));
  // Max pooling skips NaN unless the window holds nothing else.
  auto nan_every_other = [](std::mt19937&, size_t, int64_t i) {
    return i % 2 == 0 ? std::numeric_limits<double>::quiet_NaN() : -2.0 - static_cast<double>(i);
  };
  cases->push_back(WithGen(PoolCase({1, 1, 1, 3}, Pool("max", {1, 3}, {}, {}, V), "max_skips_nan"),
                           nan_every_other));
}

HN_INFERENCE_CASES(Pooling) {
  auto out = [&](AttrDict a, Shape in, Shape want, const char* note) {
    cases->push_back(Infers("Pooling", std::move(a), {in}, {{}}, {in}, {want}, true, note));
  };
  out({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}}, {1, 1, 6, 6}, {1, 1, 2, 2}, "valid");
  out({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pooling_convention", "full"}}, {1, 1, 6, 6},
      {1, 1, 3, 3}, "full");
  out({{"kernel", "(3, 3)"}}, {1, 1, 6, 6}, {1, 1, 4, 4}, "default_stride");
  out({{"kernel", "(2,)"}, {"stride", "(3,)"}, {"pooling_convention", "same"}}, {1, 1, 10},
      {1, 1, 4}, "same_1d");
  out({{"global_pool", "True"}}, {4, 8, 7, 7}, {4, 8, 1, 1}, "global");
  out({{"global_pool", "True"}, {"kernel", "(1, 1)"}}, {4, 8, 5, 7, 7}, {4, 8, 1, 1, 1},
      "global_3d");
  out({{"global_pool", "True"}, {"layout", "NWC"}, {"kernel", "(1,)"}}, {2, 9, 5}, {2, 1, 5},
      "global_nwc");
  out({{"kernel", "(3, 2)"},
       {"stride", "(2, 2)"},
       {"pad", "(1, 1)"},
       {"layout", "NHWC"},
       {"pooling_convention", "full"}},
      {2, 7, 6, 3}, {2, 4, 4, 3}, "nhwc_full");
  // Unknown spatial dims stay unknown; unknown data gives nothing.
  cases->push_back(Infers("Pooling", {{"kernel", "(2, 2)"}}, {{0, 3, 0, 8}}, {{}}, {{0, 3, 0, 8}},
                          {{0, 3, 0, 7}}, false, "spatial_unknown"));
  cases->push_back(
      Infers("Pooling", {{"kernel", "(2, 2)"}}, {{}}, {{}}, {{}}, {{}}, false, "data_unknown"));
}

HN_ERROR_CASES(Pooling) {
  using S = StatusCode;
  auto pool = [](AttrDict a, std::vector<Shape> in, S code, std::vector<std::string> needles) {
    return Rejected("Pooling", std::move(a), std::move(in), code, std::move(needles));
  };
  cases->push_back(
      pool({{"pool_type", "max"}}, {}, S::kInvalidArgument, {"Pooling(node)", "kernel"}));
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"pool_type", "median"}}, {}, S::kInvalidArgument,
                        {"pool_type", "median"}));
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"pooling_convention", "ceil"}}, {},
                        S::kInvalidArgument, {"pooling_convention"}));
  cases->push_back(pool({{"kernel", "(2, 0)"}}, {}, S::kInvalidArgument, {"kernel"}));
  cases->push_back(
      pool({{"kernel", "(2, 2)"}, {"stride", "(0, 1)"}}, {}, S::kInvalidArgument, {"stride"}));
  cases->push_back(
      pool({{"kernel", "(2, 2)"}, {"pad", "(-1, 0)"}}, {}, S::kInvalidArgument, {"pad"}));
  cases->push_back(
      pool({{"kernel", "(2, 2)"}, {"stride", "(1, 1, 1)"}}, {}, S::kInvalidArgument, {"stride"}));
  cases->push_back(
      pool({{"kernel", "(2, 2)"}, {"pad", "(1, 1, 1)"}}, {}, S::kInvalidArgument, {"pad"}));
  cases->push_back(pool({{"kernel", "(2, 2, 2, 2)"}}, {}, S::kInvalidArgument, {"4-D"}));
  cases->push_back(
      pool({{"kernel", "(2, 2)"}, {"layout", "NCW"}}, {}, S::kInvalidArgument, {"layout"}));
  cases->push_back(
      pool({{"kernel", "(2, 2)"}}, {{1, 3, 8}}, S::kShapeError, {"Pooling(node)", "4-D"}));
  cases->push_back(pool({{"kernel", "(5, 5)"}, {"pad", "(1, 1)"}}, {{1, 3, 2, 8}}, S::kShapeError,
                        {"Pooling(node)", "exceeds"}));
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"pool_type", "lp"}}, {{1, 3, 8, 8}},
                        S::kInvalidArgument, {"p_value"}));
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"pool_type", "lp"}, {"p_value", "4"}},
                        {{1, 3, 8, 8}}, S::kUnsupported, {"p_value"}));
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"pooling_convention", "same"}}, {{1, 3, 8, 8}},
                        S::kShapeError, {"same"}));
  cases->push_back(pool({{"kernel", "(2,)"}, {"pad", "(1,)"}, {"pooling_convention", "same"}},
                        {{1, 3, 8}}, S::kInvalidArgument, {"pad"}));
  cases->push_back(pool({{"global_pool", "True"}}, {{1, 3}}, S::kShapeError, {"3-D"}));
  cases->push_back(pool({{"global_pool", "True"}}, {{1, 3, 2, 2, 2, 2}}, S::kShapeError, {"5-D"}));
  cases->push_back(WithOutputs(pool({{"kernel", "(2, 2)"}}, {{1, 3, 8, 8}}, S::kShapeError,
                                    {"Pooling(node)", "output", "(1, 3, 7, 7)"}),
                               {{1, 3, 4, 4}}));
}

HN_CONFORMANCE_CASES(BatchNorm) {
  const double def_eps = static_cast<double>(1e-3f);
  // Inference over data ranks, channel axes, fix_gamma and eps, for both registered ops.
  struct Config {
    Dims data;
    int axis;
    bool fix_gamma;
    std::string eps;  // empty: the default
    std::string note;
  };
  const std::vector<Config> configs = {
      {{2, 4, 5, 6}, 1, true, "", "defaults"},
      {{2, 4, 5, 6}, 1, false, "1e-05", "gluon"},
      {{3, 7}, 1, false, "0.001", "2d"},
      {{2, 5, 6, 4}, -1, false, "1e-05", "axis_last"},
      {{2, 5, 6, 4}, 3, true, "2e-05", "axis3_fix_gamma"},
      {{2, 3, 4, 5}, 2, false, "1e-05", "axis2"},
      {{2, 3, 4, 5, 3}, 1, false, "0.1", "5d"},
      {{6}, 0, false, "1e-05", "1d_axis0"},
      {{1, 64, 56, 56}, 1, false, "1e-05", "resnet"},
  };
  for (const Config& c : configs) {
    AttrDict a = {{"axis", std::to_string(c.axis)}, {"fix_gamma", c.fix_gamma ? "True" : "False"}};
    if (!c.eps.empty()) a["eps"] = c.eps;
    BnSpec b;
    b.eps = c.eps.empty() ? def_eps : std::stod(c.eps);
    b.fix_gamma = c.fix_gamma;
    b.axis = c.axis;
    cases->push_back(BnCase("BatchNorm", a, c.data, b, c.note));
    b.relu = true;
    // Measured on the _gluon case: MXNet's gradient is 1.0 (relative) away from its own
    // BatchNorm + relu, which ours matches within 1.3e-7.
    OpCase with_relu = NoMxnetGradient(
        BnCase("_contrib_BatchNormWithReLU", a, c.data, b, c.note),
        "MXNet 1.9.1's inference-mode backward of _contrib_BatchNormWithReLU is not that of its "
        "BatchNorm followed by relu");
    if (c.data.size() != 4 || c.axis != 1) {
      with_relu = NotInMXNet(with_relu,
                             "MXNet runs _contrib_BatchNormWithReLU only through "
                             "MKLDNN, on 4-D data normalized along axis 1");
    }
    if (Shape(c.data).Size() > 300) {
      with_relu = NoGradientCheck(with_relu,
                                  "gamma's and beta's steps move many of its outputs across the "
                                  "ReLU's kink (the smaller cases check the gradient)");
    }
    cases->push_back(with_relu);
  }
  // Every attribute at its default.
  cases->push_back(BnCase("BatchNorm", {}, {2, 3, 4, 4}, BnSpec{}, "no_attrs"));
  // The optional outputs: moving mean and 1 / sqrt(moving_var + eps).
  BnSpec mv;
  mv.fix_gamma = false;
  mv.mean_var = true;
  cases->push_back(BnCase("BatchNorm", {{"fix_gamma", "False"}, {"output_mean_var", "True"}},
                          {2, 3, 2}, mv, "output_mean_var"));
  // Every other attribute MXNet declares is accepted and changes nothing at inference.
  cases->push_back(BnCase("BatchNorm",
                          {{"momentum", "0.8"},
                           {"cudnn_off", "True"},
                           {"min_calib_range", "-1.5"},
                           {"max_calib_range", "None"}},
                          {2, 3, 3}, BnSpec{}, "ignorable_attrs"));
  // Training forward: batch mean and biased variance, returned when output_mean_var.
  BnSpec train;
  train.fix_gamma = false;
  train.eps = 1e-5;
  train.mean_var = true;
  train.batch_stats = true;
  cases->push_back(NoGradientCheck(
      WithTol(
          Training(BnCase("BatchNorm",
                          {{"fix_gamma", "False"}, {"eps", "1e-05"}, {"output_mean_var", "True"}},
                          {4, 3, 5, 5}, train, "training")),
          1e-4, 1e-4),
      "MXNet's gradient ignores the gradients of the mean and var outputs (training_cases.cc "
      "checks training gradients)"));
  BnSpec train_relu = train;
  train_relu.relu = true;
  train_relu.mean_var = false;
  cases->push_back(WithTol(
      Training(BnCase("_contrib_BatchNormWithReLU", {{"fix_gamma", "False"}, {"eps", "1e-05"}},
                      {3, 2, 4, 3}, train_relu, "training")),
      1e-4, 1e-4));
  // use_global_stats keeps the moving statistics in training too.
  BnSpec global;
  global.fix_gamma = false;
  cases->push_back(
      Training(BnCase("BatchNorm", {{"fix_gamma", "False"}, {"use_global_stats", "True"}},
                      {2, 4, 3, 3}, global, "use_global_stats_training")));
}

HN_INFERENCE_CASES(BatchNorm) {
  // Every per-channel input and output follows from the data's channel axis...
  cases->push_back(Infers("BatchNorm", {{"axis", "-1"}}, {{2, 5, 7}, {}, {}, {}, {}}, {{}, {}, {}},
                          {{2, 5, 7}, {7}, {7}, {7}, {7}}, {{2, 5, 7}, {7}, {7}}, true,
                          "from_data"));
  // ...or the data's unknown channel count from gamma.
  cases->push_back(Infers("BatchNorm", {}, {{2, 0, 4}, {6}, {}, {}, {}}, {{}},
                          {{2, 6, 4}, {6}, {6}, {6}, {6}}, {{2, 6, 4}}, true, "from_gamma"));
  cases->push_back(Infers("BatchNorm", {}, {{}, {}, {}, {}, {}}, {{}}, {{}, {}, {}, {}, {}}, {{}},
                          false, "nothing_known"));
}

HN_ERROR_CASES(BatchNorm) {
  using S = StatusCode;
  auto bn = [](AttrDict a, std::vector<Shape> in, S code, std::vector<std::string> needles) {
    return Rejected("BatchNorm", std::move(a), std::move(in), code, std::move(needles));
  };
  cases->push_back(bn({{"axis", "3"}}, {{2, 3, 4}, {4}, {4}, {4}, {4}}, S::kShapeError,
                      {"BatchNorm(node)", "axis 3"}));
  cases->push_back(
      bn({{"axis", "-4"}}, {{2, 3, 4}, {3}, {3}, {3}, {3}}, S::kShapeError, {"axis -4"}));
  cases->push_back(
      bn({}, {{2, 3, 4}, {4}, {3}, {3}, {3}}, S::kShapeError, {"BatchNorm(node)", "gamma"}));
  cases->push_back(bn({}, {{2, 3, 4}, {3}, {3}, {3}, {3, 1}}, S::kShapeError, {"moving_var"}));
  cases->push_back(bn({{"eps", "tiny"}}, {}, S::kInvalidArgument, {"BatchNorm(node)", "eps"}));
  cases->push_back(bn({{"scale", "True"}}, {}, S::kInvalidArgument, {"scale"}));
  cases->push_back(Rejected("_contrib_BatchNormWithReLU", {}, {{2, 3, 4}, {3}, {2}, {3}, {3}},
                            StatusCode::kShapeError, {"_contrib_BatchNormWithReLU(node)", "beta"}));
}

// float64 models (the float64 whole-model gradient checks) run Pooling and BatchNorm in float64:
// their plain double kernels, each against the reference, with finite-difference gradients
// through their backward ops. (Convolution's float64 forward is checked in conv_grad_test.cc:
// the graph executor lays convolutions out channel-last, in float32 only.)
HN_CONFORMANCE_CASES(Float64PoolBatchNorm) {
  const DType f64 = DType::kFloat64;
  cases->push_back(WithDTypes(
      PoolCase({2, 3, 7, 7}, Pool("max", {3, 3}, {2, 2}, {1, 1}, Convention::kValid), "float64"),
      {f64}));
  cases->push_back(
      WithDTypes(PoolCase({2, 3, 5, 5}, Pool("avg", {3, 3}, {2, 2}, {1, 1}, Convention::kFull, 0),
                          "float64_avg_exclude_pad"),
                 {f64}));
  cases->push_back(
      WithDTypes(PoolCase({2, 3, 4, 4}, Pool("avg", {1, 1}, {}, {}, Convention::kValid, -1, true),
                          "float64_global_avg"),
                 {f64}));
  cases->push_back(WithDTypes(
      WithGen(PoolCase({1, 2, 6}, Pool("lp", {3}, {1}, {}, Convention::kValid, -1, false, 2),
                       "float64_lp2"),
              Uniform(0.0, 1.0)),
      {f64}));
  BnSpec bn;
  bn.fix_gamma = false;
  bn.eps = 1e-5;
  const std::vector<DType> bn_dtypes(5, f64);
  cases->push_back(WithDTypes(
      BnCase("BatchNorm", {{"fix_gamma", "False"}, {"eps", "1e-05"}}, {2, 3, 4, 4}, bn, "float64"),
      bn_dtypes));
  BnSpec relu = bn;
  relu.relu = true;
  cases->push_back(WithDTypes(
      NotInMXNet(BnCase("_contrib_BatchNormWithReLU", {{"fix_gamma", "False"}, {"eps", "1e-05"}},
                        {2, 3, 2, 2}, relu, "float64"),
                 "MXNet runs _contrib_BatchNormWithReLU only through MKLDNN, which has no "
                 "float64"),
      bn_dtypes));
}

}  // namespace conformance
}  // namespace hybridnet
