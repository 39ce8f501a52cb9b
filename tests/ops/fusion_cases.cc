// Conformance cases for the internal ops the graph optimizer makes: _hn_convolution (Convolution
// with BatchNorm, residual add and activation fused, channel-first or channel-last) and
// _hn_relayout. fusion_test.cc tests the passes over whole graphs.
#include <algorithm>
#include <string>

#include "conformance.h"
#include "nn_reference.h"

namespace hybridnet {
namespace conformance {
namespace {

OpCase Internal(OpCase c) {
  c.check_json = false;
  return c;
}

struct FusedSpec {
  ConvGeom conv;
  bool bn = false;
  bool fix_gamma = false;
  bool residual = false;
  std::string act;  // empty: none; "clip" is clip(0, 6)
  bool channel_last = false;
};

// The composition of the ops' own references: Convolution, then BatchNorm (inference), then
// the residual add, then the activation, on channel-first copies of channel-last tensors.
RefFn FusedConvRef(FusedSpec f) {
  return [f](const std::vector<RefTensor>& in) {
    auto first = [&](const RefTensor& t) { return f.channel_last ? ToChannelFirst(t) : t; };
    size_t next = f.conv.bias ? 3 : 2;
    std::vector<RefTensor> conv_in = {first(in[0]), in[1]};
    if (f.conv.bias) conv_in.push_back(in[2]);
    RefTensor y = ConvRef(f.conv)(conv_in)[0];
    if (f.bn) {
      BnSpec b;
      b.eps = 1e-5;
      b.fix_gamma = f.fix_gamma;
      y = BatchNormRef(b)({y, in[next], in[next + 1], in[next + 2], in[next + 3]})[0];
      next += 4;
    }
    if (f.residual) {
      const RefTensor r = first(in[next]);
      for (int64_t i = 0; i < y.size(); ++i) y[i] += r[i];
    }
    if (f.act == "clip") {
      for (int64_t i = 0; i < y.size(); ++i) y[i] = std::min(std::max(y[i], 0.0), 6.0);
    } else if (!f.act.empty()) {
      auto act = Act(f.act);
      for (int64_t i = 0; i < y.size(); ++i) y[i] = act(y[i]);
    }
    return std::vector<RefTensor>{f.channel_last ? ToChannelLast(y) : y};
  };
}

// Inputs: moving_var positive, gamma away from zero.
double FusedInput(size_t bn_first, std::mt19937& rng, size_t input, int64_t) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (input == bn_first + 3) return 0.1 + 1.9 * u(rng);
  if (input == bn_first) return 0.5 + u(rng);
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
    out.push_back((data[2 + i] + 2 * g.pad[i] - (g.dilate[i] * (g.kernel[i] - 1) + 1)) /
                      g.stride[i] + 1);
  }
  auto layout = [&](const Dims& d) {
    if (!f.channel_last) return Shape(d);
    Dims l = {d[0]};
    l.insert(l.end(), d.begin() + 2, d.end());
    l.push_back(d[1]);
    return Shape(l);
  };
  if (f.channel_last) a["layout"] = nd == 1 ? "NWC" : nd == 2 ? "NHWC" : "NDHWC";
  Dims wd = {g.num_filter, data[1] / g.num_group};
  wd.insert(wd.end(), g.kernel.begin(), g.kernel.end());
  std::vector<Shape> in = {layout(data), Shape(wd)};
  if (g.bias) in.push_back(Shape({g.num_filter}));
  const size_t bn_first = in.size();
  if (f.bn) {
    a["bn"] = "True";
    a["bn_eps"] = "1e-05";
    a["bn_fix_gamma"] = f.fix_gamma ? "True" : "False";
    for (int i = 0; i < 4; ++i) in.push_back(Shape({g.num_filter}));
  }
  if (f.residual) {
    a["residual"] = "True";
    in.push_back(layout(out));
  }
  if (f.act == "clip") {
    a["clip"] = "True";
    a["clip_a_min"] = "0";
    a["clip_a_max"] = "6";
  } else if (!f.act.empty()) {
    a["act_type"] = f.act;
  }
  OpCase c = Case("_hn_convolution", a, in, FusedConvRef(f), note);
  c = WithGen(c, [bn_first](std::mt19937& rng, size_t input, int64_t i) {
    return FusedInput(bn_first, rng, input, i);
  });
  return Internal(WithTol(c, 1e-4, 1e-4));
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
    cases->push_back(FusedCase(
        {1, 4, 9, 9}, Spec(Geom({3, 3}, {2, 2}, {1, 1}, 4, 2, true), true, false, "sigmoid", cl),
        "groups_bias_bn_sigmoid" + l));
    // Depthwise and pointwise, as in MobileNet.
    cases->push_back(FusedCase(
        {1, 16, 8, 8}, Spec(Geom({3, 3}, {1, 1}, {1, 1}, 16, 16, false), true, false, "relu", cl),
        "depthwise_bn_relu" + l));
    cases->push_back(FusedCase(
        {1, 16, 8, 8}, Spec(Geom({1, 1}, {1, 1}, {0, 0}, 24, 1, false), true, true, "", cl),
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
    cases->push_back(FusedCase(
        {2, 32, 9, 11}, Spec(Geom({3, 3}, {1, 1}, {1, 1}, 32, 32, true), true, true, "clip", cl),
        "depthwise_bn_residual_clip" + l));
    cases->push_back(FusedCase(
        {1, 48, 10, 10}, Spec(Geom({3, 3}, {2, 2}, {1, 1}, 48, 48, false), true, false, "clip", cl),
        "depthwise_s2_bn_clip" + l));
  }
  FusedSpec fixed = Spec(k3, true, false, "relu", true);
  fixed.fix_gamma = true;
  cases->push_back(FusedCase({1, 5, 6, 6}, fixed, "bn_fix_gamma_nhwc"));
  cases->push_back(FusedCase(
      {2, 3, 11}, Spec(Geom({3}, {2}, {1}, 4, 1, true), true, true, "tanh", true), "1d_nwc"));
  cases->push_back(FusedCase({1, 2, 4, 5, 6},
                             Spec(Geom({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, 3, 1, false), true, true,
                                  "relu", true),
                             "3d_ndhwc"));
}

HN_CONFORMANCE_CASES(Relayout) {
  auto to_last = [](const std::vector<RefTensor>& in) {
    return std::vector<RefTensor>{ToChannelLast(in[0])};
  };
  auto to_first = [](const std::vector<RefTensor>& in) {
    return std::vector<RefTensor>{ToChannelFirst(in[0])};
  };
  cases->push_back(Internal(Case("_hn_relayout", {{"channel_last", "True"}}, {{2, 3, 4, 5}},
                                 to_last, "nchw_to_nhwc")));
  cases->push_back(Internal(Case("_hn_relayout", {{"channel_last", "False"}}, {{2, 4, 5, 3}},
                                 to_first, "nhwc_to_nchw")));
  cases->push_back(Internal(Case("_hn_relayout", {}, {{1, 5, 7}}, to_last, "ncw_to_nwc")));
  cases->push_back(Internal(Case("_hn_relayout", {{"channel_last", "False"}}, {{1, 2, 3, 4, 6}},
                                 to_first, "ndhwc_to_ncdhw")));
}

HN_ERROR_CASES(FusedConvolution) {
  cases->push_back(Rejected("_hn_relayout", {}, {{2, 3}}, StatusCode::kShapeError,
                            {"_hn_relayout(node)", "spatial"}));
}

}  // namespace conformance
}  // namespace hybridnet
