// Conformance cases for the internal ops the graph optimizer makes: _hn_convolution (Convolution
// with BatchNorm, residual add and activation fused, channel-first or channel-last) and
// _hn_relayout. fusion_test.cc tests the passes over whole graphs.
#include <algorithm>
#include <cfloat>
#include <string>

#include "conformance.h"
#include "nn_reference.h"
#include "ops/nn/convolution_fusions.h"

namespace hybridnet {
namespace conformance {
namespace {

struct FusedSpec {
  ConvGeom conv;
  bool bn = false;
  bool fix_gamma = false;
  bool residual = false;
  std::string act;  // empty: none; "clip" is clip(0, 6)
  bool channel_last = false;
  bool channel_first_data = false;  // with channel_last: the data alone stays channel-first
  // > 0: a 1x1 convolution to that many channels, with its own epilogue, computes the data.
  int64_t expand_filters = 0;
  bool expand_bias = false;
  bool expand_bn = false;
  std::string expand_act;  // empty, "relu" or "clip"
  // Non-empty: a 2-D max pooling of the result (Pooling, pool_type max) is the output.
  Dims pool_kernel, pool_stride, pool_pad;
  bool pool_full = false;  // pooling_convention full, else valid
};

// Where a case's inputs are (FusedInputs in convolution.cc).
struct InputAt {
  explicit InputAt(const FusedSpec& f) {
    size_t next = f.conv.bias ? 3 : 2;
    bn = next;
    if (f.bn) next += 4;
    expand_weight = next;
    if (f.expand_filters > 0) next += 1 + (f.expand_bias ? 1 : 0);
    expand_bn = next;
    if (f.expand_filters > 0 && f.expand_bn) next += 4;
    residual = next;
  }
  size_t bn, expand_weight, expand_bn, residual;
};

void ApplyAct(const std::string& act, RefTensor* y) {
  if (act == "clip") {
    for (int64_t i = 0; i < y->size(); ++i) (*y)[i] = std::min(std::max((*y)[i], 0.0), 6.0);
  } else if (!act.empty()) {
    auto fn = Act(act);
    for (int64_t i = 0; i < y->size(); ++i) (*y)[i] = fn((*y)[i]);
  }
}

// Pooling with pool_type max on (N, C, H, W), as MXNet defines it: windows start at
// o * stride - pad and stop at the image, each from -FLT_MAX, NaN never winning.
RefTensor MaxPoolOf(const RefTensor& y, const FusedSpec& f) {
  const Dims& d = y.shape.dims();
  Dims od = d;
  for (size_t i = 0; i < 2; ++i) {
    const int64_t span = d[2 + i] + 2 * f.pool_pad[i] - f.pool_kernel[i];
    od[2 + i] = 1 + (f.pool_full ? (span + f.pool_stride[i] - 1) / f.pool_stride[i]
                                 : span / f.pool_stride[i]);
  }
  RefTensor out{Shape(od)};
  for (int64_t nc = 0; nc < d[0] * d[1]; ++nc) {
    for (int64_t oh = 0; oh < od[2]; ++oh) {
      for (int64_t ow = 0; ow < od[3]; ++ow) {
        const int64_t h0 = oh * f.pool_stride[0] - f.pool_pad[0];
        const int64_t w0 = ow * f.pool_stride[1] - f.pool_pad[1];
        double m = -static_cast<double>(FLT_MAX);
        for (int64_t h = std::max<int64_t>(h0, 0); h < std::min(h0 + f.pool_kernel[0], d[2]); ++h)
          for (int64_t w = std::max<int64_t>(w0, 0); w < std::min(w0 + f.pool_kernel[1], d[3]);
               ++w) {
            const double v = y[(nc * d[2] + h) * d[3] + w];
            if (v > m) m = v;
          }
        out[(nc * od[2] + oh) * od[3] + ow] = m;
      }
    }
  }
  return out;
}

RefTensor BatchNormOf(const RefTensor& y, const std::vector<RefTensor>& in, size_t first,
                      bool fix_gamma) {
  BnSpec b;
  b.eps = 1e-5;
  b.fix_gamma = fix_gamma;
  return BatchNormRef(b)({y, in[first], in[first + 1], in[first + 2], in[first + 3]})[0];
}

// The composition of the ops' own references: [the 1x1 convolution, its BatchNorm and
// activation,] Convolution, then BatchNorm (inference), then the residual add, then the
// activation, [then the max pooling,] on channel-first copies of channel-last tensors.
RefFn FusedConvRef(FusedSpec f) {
  return [f](const std::vector<RefTensor>& in) {
    auto first = [&](const RefTensor& t) { return f.channel_last ? ToChannelFirst(t) : t; };
    const InputAt at(f);
    RefTensor data = f.channel_first_data ? in[0] : first(in[0]);
    if (f.expand_filters > 0) {
      ConvGeom e;
      e.kernel = e.stride = e.dilate = Dims(f.conv.kernel.size(), 1);
      e.pad = Dims(f.conv.kernel.size(), 0);
      e.num_filter = f.expand_filters;
      e.num_group = 1;
      e.bias = f.expand_bias;
      std::vector<RefTensor> e_in = {data, in[at.expand_weight]};
      if (f.expand_bias) e_in.push_back(in[at.expand_weight + 1]);
      data = ConvRef(e)(e_in)[0];
      if (f.expand_bn) data = BatchNormOf(data, in, at.expand_bn, false);
      ApplyAct(f.expand_act, &data);
    }
    std::vector<RefTensor> conv_in = {data, in[1]};
    if (f.conv.bias) conv_in.push_back(in[2]);
    RefTensor y = ConvRef(f.conv)(conv_in)[0];
    if (f.bn) y = BatchNormOf(y, in, at.bn, f.fix_gamma);
    if (f.residual) {
      const RefTensor r = first(in[at.residual]);
      for (int64_t i = 0; i < y.size(); ++i) y[i] += r[i];
    }
    ApplyAct(f.act, &y);
    if (!f.pool_kernel.empty()) y = MaxPoolOf(y, f);
    return std::vector<RefTensor>{f.channel_last ? ToChannelLast(y) : y};
  };
}

// Inputs: moving_var positive, gamma away from zero (BatchNorms' inputs from each of
// `bn_firsts`).
double FusedInput(const std::vector<size_t>& bn_firsts, std::mt19937& rng, size_t input, int64_t) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (size_t bn_first : bn_firsts) {
    if (input == bn_first + 3) return 0.1 + 1.9 * u(rng);
    if (input == bn_first) return 0.5 + u(rng);
  }
  return -1.0 + 2.0 * u(rng);
}

OpCase FusedCase(const Dims& data, FusedSpec f, std::string note) {
  const ConvGeom& g = f.conv;
  AttrDict a = {{"kernel", Shape(g.kernel).ToString()},
                {"stride", Shape(g.stride).ToString()},
                {"pad", Shape(g.pad).ToString()},
                {"dilate", Shape(g.dilate).ToString()},
                {"num_filter", std::to_string(g.num_filter)},
                {"num_group", std::to_string(g.num_group)},
                {"no_bias", g.bias ? "False" : "True"}};
  const size_t nd = g.kernel.size();
  Dims out = {data[0], g.num_filter};
  for (size_t i = 0; i < nd; ++i) {
    out.push_back(
        (data[2 + i] + 2 * g.pad[i] - (g.dilate[i] * (g.kernel[i] - 1) + 1)) / g.stride[i] + 1);
  }
  auto layout = [&](const Dims& d) {
    if (!f.channel_last) return Shape(d);
    Dims l = {d[0]};
    l.insert(l.end(), d.begin() + 2, d.end());
    l.push_back(d[1]);
    return Shape(l);
  };
  if (f.channel_last) a["layout"] = nd == 1 ? "NWC" : nd == 2 ? "NHWC" : "NDHWC";
  const int64_t conv_channels = f.expand_filters > 0 ? f.expand_filters : data[1];
  Dims wd = {g.num_filter, conv_channels / g.num_group};
  wd.insert(wd.end(), g.kernel.begin(), g.kernel.end());
  std::vector<Shape> in = {f.channel_first_data ? Shape(data) : layout(data), Shape(wd)};
  internal::ConvolutionFusions fusions;
  fusions.channel_first_data = f.channel_first_data;
  const internal::BatchNormFold fold{1e-5, f.fix_gamma};
  const internal::ClipBounds relu6{0.f, 6.f};
  if (g.bias) in.push_back(Shape({g.num_filter}));
  std::vector<size_t> bn_firsts = {in.size()};
  if (f.bn) {
    fusions.bn = fold;
    for (int i = 0; i < 4; ++i) in.push_back(Shape({g.num_filter}));
  }
  if (f.expand_filters > 0) {
    const int64_t e = f.expand_filters;
    internal::Expansion& expand = fusions.expand.emplace();
    expand.num_filter = static_cast<uint32_t>(e);
    expand.bias = f.expand_bias;
    Dims ew = {e, data[1]};
    ew.insert(ew.end(), nd, 1);
    in.push_back(Shape(ew));
    if (f.expand_bias) in.push_back(Shape({e}));
    if (f.expand_bn) {
      expand.bn = internal::BatchNormFold{1e-5, false};
      bn_firsts.push_back(in.size());
      for (int i = 0; i < 4; ++i) in.push_back(Shape({e}));
    }
    if (f.expand_act == "clip") expand.clip = relu6;
    expand.relu = f.expand_act == "relu";
  }
  if (f.residual) {
    fusions.residual = true;
    in.push_back(layout(out));
  }
  if (!f.pool_kernel.empty()) {
    fusions.pool = internal::MaxPoolAfter{f.pool_kernel, f.pool_stride, f.pool_pad, f.pool_full};
  }
  if (f.act == "clip") {
    fusions.clip = relu6;
  } else if (!f.act.empty()) {
    fusions.act = internal::ParseEnum(f.act, internal::ActTypeNames());
  }
  OpCase c = Case("_hn_convolution", a, in, FusedConvRef(f), note);
  c.typed_attrs = [fusions](const AttrDict& attrs) {
    return internal::FusedConvolutionAttrs("node", attrs, fusions);
  };
  c = WithGen(c, [bn_firsts](std::mt19937& rng, size_t input, int64_t i) {
    return FusedInput(bn_firsts, rng, input, i);
  });
  return InternalCase(WithTol(c, 1e-4, 1e-4));
}

ConvGeom Geom(Dims k, Dims s, Dims p, int64_t filters, int64_t groups, bool bias) {
  ConvGeom g;
  g.kernel = k;
  g.stride = std::move(s);
  g.pad = std::move(p);
  g.dilate = Dims(k.size(), 1);
  g.num_filter = filters;
  g.num_group = groups;
  g.bias = bias;
  return g;
}

FusedSpec Spec(ConvGeom g, bool bn, bool residual, std::string act, bool channel_last) {
  FusedSpec f;
  f.conv = std::move(g);
  f.bn = bn;
  f.residual = residual;
  f.act = std::move(act);
  f.channel_last = channel_last;
  return f;
}

}  // namespace

HN_CONFORMANCE_CASES(FusedConvolution) {
  const ConvGeom k3 = Geom({3, 3}, {1, 1}, {1, 1}, 8, 1, false);
  // Each epilogue step alone and all of them, channel-first and channel-last.
  for (bool cl : {false, true}) {
    const std::string l = cl ? "_nhwc" : "";
    cases->push_back(FusedCase({2, 6, 7, 5}, Spec(k3, true, false, "", cl), "bn" + l));
    cases->push_back(FusedCase({2, 6, 7, 5}, Spec(k3, false, true, "", cl), "residual" + l));
    cases->push_back(FusedCase({2, 6, 7, 5}, Spec(k3, false, false, "relu", cl), "relu" + l));
    cases->push_back(
        FusedCase({2, 6, 7, 5}, Spec(k3, true, true, "relu", cl), "bn_residual_relu" + l));
    // A ResNet block's convolution: whole channel blocks, which oneDNN's blocked layouts take
    // (onednn_convolution.h, OneDnnBlockedTakes), the epilogue then run on them.
    cases->push_back(
        FusedCase({2, 16, 6, 7}, Spec(Geom({3, 3}, {1, 1}, {1, 1}, 16, 1, false), true, true,
                                      "relu", cl),
                  "resnet_block_16_filters_bn_residual_relu" + l));
    cases->push_back(FusedCase(
        {1, 4, 9, 9}, Spec(Geom({3, 3}, {2, 2}, {1, 1}, 4, 2, true), true, false, "sigmoid", cl),
        "groups_bias_bn_sigmoid" + l));
    // Depthwise and pointwise, as in MobileNet.
    cases->push_back(FusedCase(
        {1, 16, 8, 8}, Spec(Geom({3, 3}, {1, 1}, {1, 1}, 16, 16, false), true, false, "relu", cl),
        "depthwise_bn_relu" + l));
    cases->push_back(FusedCase({1, 16, 8, 8},
                               Spec(Geom({1, 1}, {1, 1}, {0, 0}, 24, 1, false), true, true, "", cl),
                               "pointwise_bn_residual" + l));
    // ReLU6 after a pointwise and a depthwise convolution (MobileNet v2), stride 2 and a
    // residual too.
    cases->push_back(FusedCase(
        {1, 16, 9, 9}, Spec(Geom({1, 1}, {1, 1}, {0, 0}, 32, 1, false), true, false, "clip", cl),
        "pointwise_bn_clip" + l));
    // Our pointwise kernel's edges: positions not a multiple of a register tile's rows (70),
    // filters not a multiple of 16 (72: a masked block; 150: 10 blocks in groups of 3, 3, 4),
    // bias, every epilogue step, a batch of 2.
    cases->push_back(FusedCase(
        {2, 20, 5, 7}, Spec(Geom({1, 1}, {1, 1}, {0, 0}, 72, 1, true), true, true, "relu", cl),
        "pointwise_partial_tiles_bias_bn_residual_relu" + l));
    cases->push_back(FusedCase(
        {1, 33, 3, 3}, Spec(Geom({1, 1}, {1, 1}, {0, 0}, 150, 1, false), true, false, "clip", cl),
        "pointwise_150_filters_bn_clip" + l));
    // An output over 1 MiB (1369 x 200 floats), whose tiles fetch their lines ahead: fewer
    // input channels than a tile's prefetching steps (20) and more (40), a masked last block.
    for (int64_t channels : {20, 40}) {
      cases->push_back(FusedCase(
          {1, channels, 37, 37},
          Spec(Geom({1, 1}, {1, 1}, {0, 0}, 200, 1, false), true, true, "relu", cl),
          "pointwise_large_output_" + std::to_string(channels) + "_channels_bn_residual_relu" + l));
    }
    // Strided 1x1 (ResNet's downsampling): our pointwise kernel on the subsampled input.
    cases->push_back(FusedCase(
        {2, 20, 9, 11}, Spec(Geom({1, 1}, {2, 2}, {0, 0}, 40, 1, false), true, true, "relu", cl),
        "pointwise_s2_bn_residual_relu" + l));
    cases->push_back(FusedCase({1, 64, 28, 28},
                               Spec(Geom({1, 1}, {2, 2}, {0, 0}, 48, 1, true), true, false, "", cl),
                               "pointwise_s2_large_bias_bn" + l));
    cases->push_back(FusedCase(
        {2, 32, 9, 11}, Spec(Geom({3, 3}, {1, 1}, {1, 1}, 32, 32, true), true, true, "clip", cl),
        "depthwise_bn_residual_clip" + l));
    cases->push_back(FusedCase(
        {1, 48, 10, 10}, Spec(Geom({3, 3}, {2, 2}, {1, 1}, 48, 48, false), true, false, "clip", cl),
        "depthwise_s2_bn_clip" + l));
    // An image network's first layer on our kernel for few input channels, every epilogue step.
    cases->push_back(FusedCase(
        {2, 3, 17, 19}, Spec(Geom({3, 3}, {2, 2}, {1, 1}, 32, 1, true), true, true, "clip", cl),
        "stem_bias_bn_residual_clip" + l));
    // And on a CIFAR ResNet layer (16 channels at 10 px): BatchNorm, residual, relu.
    cases->push_back(FusedCase(
        {2, 16, 10, 10}, Spec(Geom({3, 3}, {1, 1}, {1, 1}, 16, 1, false), true, true, "relu", cl),
        "few_channels_bn_residual_relu" + l));
    cases->push_back(FusedCase(
        {1, 16, 4, 40}, Spec(Geom({3, 3}, {1, 1}, {1, 1}, 16, 1, false), true, true, "relu", cl),
        "few_channels_wide_bn_residual_relu" + l));
    // A 1x1 convolution computing a depthwise one's data (MobileNet v2's expansion): small
    // images run the two one after the other; expanded images above 1 MiB (64 x 67 x 70
    // floats), channel-last on AVX-512, a few rows at a time.
    FusedSpec expanded = Spec(Geom({3, 3}, {1, 1}, {1, 1}, 32, 32, false), true, true, "clip", cl);
    expanded.expand_filters = 32;
    expanded.expand_bn = true;
    expanded.expand_act = "clip";
    cases->push_back(FusedCase({2, 8, 9, 11}, expanded, "expand_bn_clip_depthwise" + l));
    FusedSpec large = Spec(Geom({3, 3}, {1, 1}, {1, 1}, 64, 64, false), true, true, "clip", cl);
    large.expand_filters = 64;
    large.expand_bn = true;
    large.expand_act = "clip";
    cases->push_back(FusedCase({2, 8, 67, 70}, large, "large_expand_depthwise" + l));
    FusedSpec strided = Spec(Geom({3, 3}, {2, 2}, {1, 1}, 64, 64, true), false, false, "", cl);
    strided.expand_filters = 64;
    strided.expand_bias = true;
    strided.expand_act = "relu";
    cases->push_back(FusedCase({1, 8, 67, 71}, strided, "large_expand_bias_relu_depthwise_s2" + l));
    FusedSpec unpadded = Spec(Geom({3, 3}, {1, 1}, {0, 0}, 64, 64, false), true, false, "relu", cl);
    unpadded.expand_filters = 64;
    cases->push_back(FusedCase({1, 16, 66, 66}, unpadded, "large_expand_depthwise_pad0" + l));
  }
  FusedSpec fixed = Spec(k3, true, false, "relu", true);
  fixed.fix_gamma = true;
  cases->push_back(FusedCase({1, 5, 6, 6}, fixed, "bn_fix_gamma_nhwc"));
  cases->push_back(FusedCase(
      {2, 3, 11}, Spec(Geom({3}, {2}, {1}, 4, 1, true), true, true, "tanh", true), "1d_nwc"));
  // Channel-last convolutions reading channel-first data: our kernel for few channels reads it
  // as it is (3x3 and 7x7, stride 2); the others get it re-laid-out (a 1x1 convolution on our
  // pointwise kernel, a dilated one on oneDNN).
  auto data_first = [](FusedSpec f) {
    f.channel_first_data = true;
    return f;
  };
  cases->push_back(FusedCase(
      {2, 3, 17, 19},
      data_first(Spec(Geom({3, 3}, {2, 2}, {1, 1}, 32, 1, true), true, true, "clip", true)),
      "channel_first_data_stem_bias_bn_residual_clip"));
  cases->push_back(FusedCase(
      {1, 3, 30, 37},
      data_first(Spec(Geom({7, 7}, {2, 2}, {3, 3}, 64, 1, false), true, false, "relu", true)),
      "channel_first_data_stem_7x7"));
  cases->push_back(
      FusedCase({2, 4, 6, 7},
                data_first(Spec(Geom({1, 1}, {1, 1}, {0, 0}, 24, 1, false), true, true, "", true)),
                "channel_first_data_pointwise"));
  ConvGeom dilated = Geom({3, 3}, {1, 1}, {2, 2}, 8, 1, true);
  dilated.dilate = {2, 2};
  cases->push_back(FusedCase({1, 3, 11, 12}, data_first(Spec(dilated, false, false, "relu", true)),
                             "channel_first_data_dilated"));
  // A max pooling of the result (an image network's stem): on our few-channel kernel row by row
  // (channel-last, the data channel-first or not), else after the whole convolution in scratch
  // (channel-first; 40 channels on oneDNN); overlapping windows (stride 1), rows no window reads
  // (stride 3 over kernel 2), and full windows, one entirely in the padding (-FLT_MAX).
  auto pooled = [](FusedSpec f, Dims kernel, Dims stride, Dims pad, bool full) {
    f.pool_kernel = std::move(kernel);
    f.pool_stride = std::move(stride);
    f.pool_pad = std::move(pad);
    f.pool_full = full;
    return f;
  };
  for (bool cl : {false, true}) {
    const std::string l = cl ? "_nhwc" : "";
    cases->push_back(
        FusedCase({2, 3, 29, 31},
                  pooled(Spec(Geom({7, 7}, {2, 2}, {3, 3}, 16, 1, false), true, false, "relu", cl),
                         {3, 3}, {2, 2}, {1, 1}, false),
                  "pool_stem" + l));
    cases->push_back(
        FusedCase({1, 4, 5, 6},
                  pooled(Spec(Geom({3, 3}, {1, 1}, {1, 1}, 8, 1, true), false, false, "relu", cl),
                         {2, 2}, {2, 2}, {1, 1}, true),
                  "pool_full_empty_window" + l));
    cases->push_back(
        FusedCase({1, 40, 10, 12},
                  pooled(Spec(Geom({3, 3}, {1, 1}, {1, 1}, 24, 1, false), true, false, "", cl),
                         {3, 3}, {1, 1}, {1, 1}, false),
                  "pool_overlapping_40_channels" + l));
    cases->push_back(
        FusedCase({2, 8, 14, 13},
                  pooled(Spec(Geom({3, 3}, {1, 1}, {1, 1}, 16, 1, false), false, false, "clip", cl),
                         {2, 2}, {3, 3}, {0, 0}, false),
                  "pool_stride_above_kernel" + l));
  }
  cases->push_back(FusedCase(
      {1, 3, 30, 37},
      data_first(pooled(Spec(Geom({7, 7}, {2, 2}, {3, 3}, 64, 1, false), true, false, "relu", true),
                        {3, 3}, {2, 2}, {1, 1}, false)),
      "channel_first_data_pool_stem"));
  // The expansion on other ranks: the two convolutions one after the other.
  FusedSpec expand_3d =
      Spec(Geom({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, 4, 4, false), true, false, "relu", true);
  expand_3d.expand_filters = 4;
  expand_3d.expand_act = "clip";
  cases->push_back(FusedCase({1, 2, 4, 5, 6}, expand_3d, "expand_3d_ndhwc"));
  FusedSpec expand_1d = Spec(Geom({3}, {2}, {1}, 6, 6, true), false, true, "", false);
  expand_1d.expand_filters = 6;
  expand_1d.expand_bn = true;
  cases->push_back(FusedCase({2, 3, 11}, expand_1d, "expand_1d"));
  cases->push_back(
      FusedCase({1, 2, 4, 5, 6},
                Spec(Geom({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, 3, 1, false), true, true, "relu", true),
                "3d_ndhwc"));
}

HN_CONFORMANCE_CASES(Relayout) {
  auto to_last = [](const std::vector<RefTensor>& in) {
    return std::vector<RefTensor>{ToChannelLast(in[0])};
  };
  auto to_first = [](const std::vector<RefTensor>& in) {
    return std::vector<RefTensor>{ToChannelFirst(in[0])};
  };
  cases->push_back(InternalCase(
      Case("_hn_relayout", {{"channel_last", "True"}}, {{2, 3, 4, 5}}, to_last, "nchw_to_nhwc")));
  cases->push_back(InternalCase(
      Case("_hn_relayout", {{"channel_last", "False"}}, {{2, 4, 5, 3}}, to_first, "nhwc_to_nchw")));
  cases->push_back(InternalCase(Case("_hn_relayout", {}, {{1, 5, 7}}, to_last, "ncw_to_nwc")));
  cases->push_back(InternalCase(Case("_hn_relayout", {{"channel_last", "False"}}, {{1, 2, 3, 4, 6}},
                                     to_first, "ndhwc_to_ncdhw")));
}

HN_ERROR_CASES(FusedConvolution) {
  cases->push_back(Rejected("_hn_relayout", {}, {{2, 3}}, StatusCode::kShapeError,
                            {"_hn_relayout(node)", "spatial"}));
}

}  // namespace conformance
}  // namespace hybridnet
