// Conformance cases: Convolution, Deconvolution, Pooling, BatchNorm and
// _contrib_BatchNormWithReLU, each against a direct-loop reference (channel-first layouts unless
// a case says otherwise).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/test_util.h"
#include "conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

using namespace ::hybridnet::testing_util;  // NOLINT: the shared test helpers

struct ConvGeom {
  std::vector<int64_t> kernel, stride, dilate, pad, adj;
  int64_t num_filter = 1, num_group = 1;
  bool bias = true;
};

// out[n, f, o...] = bias[f] + sum_{c in group, k...} x[n, c, o*s - p + k*d] * w[f, c', k...].
RefFn ConvRef(ConvGeom g) {
  return [g](const std::vector<RefTensor>& in) {
    const Shape& xs = in[0].shape;
    const Shape& ws = in[1].shape;
    const size_t ns = xs.ndim() - 2;
    std::vector<int64_t> od{xs[0], g.num_filter};
    for (size_t i = 0; i < ns; ++i) {
      od.push_back((xs[2 + i] + 2 * g.pad[i] - (g.dilate[i] * (g.kernel[i] - 1) + 1)) /
                       g.stride[i] + 1);
    }
    RefTensor out{Shape(od)};
    const int64_t cg = ws[1], fg = g.num_filter / g.num_group;
    Shape kshape(g.kernel);
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> o = Unravel(i, out.shape);
      const int64_t n = o[0], f = o[1], grp = f / fg;
      double acc = g.bias ? in[2][f] : 0.0;
      for (int64_t c = 0; c < cg; ++c) {
        for (int64_t kk = 0; kk < kshape.Size(); ++kk) {
          std::vector<int64_t> k = Unravel(kk, kshape);
          std::vector<int64_t> xi{n, grp * cg + c};
          bool inside = true;
          for (size_t d = 0; d < ns; ++d) {
            int64_t p = o[2 + d] * g.stride[d] - g.pad[d] + k[d] * g.dilate[d];
            inside = inside && p >= 0 && p < xs[2 + d];
            xi.push_back(p);
          }
          if (!inside) continue;
          std::vector<int64_t> wi{f, c};
          wi.insert(wi.end(), k.begin(), k.end());
          acc += in[0][Offset(xs, xi)] * in[1][Offset(ws, wi)];
        }
      }
      out[i] = acc;
    }
    return std::vector<RefTensor>{out};
  };
}

// Scatter form of the transposed convolution: every x[n, c, i...] adds x * w[c, f', k...] to
// out[n, group*Fg + f', i*s - p + k*d].
RefFn DeconvRef(ConvGeom g) {
  return [g](const std::vector<RefTensor>& in) {
    const Shape& xs = in[0].shape;
    const Shape& ws = in[1].shape;
    const size_t ns = xs.ndim() - 2;
    std::vector<int64_t> od{xs[0], g.num_filter};
    for (size_t i = 0; i < ns; ++i) {
      od.push_back(g.stride[i] * (xs[2 + i] - 1) + g.dilate[i] * (g.kernel[i] - 1) + 1 -
                   2 * g.pad[i] + g.adj[i]);
    }
    RefTensor out{Shape(od)};
    const int64_t cg = xs[1] / g.num_group, fg = ws[1];
    Shape kshape(g.kernel);
    for (int64_t i = 0; i < in[0].size(); ++i) {
      std::vector<int64_t> xi = Unravel(i, xs);
      const int64_t n = xi[0], c = xi[1], grp = c / cg;
      for (int64_t f = 0; f < fg; ++f) {
        for (int64_t kk = 0; kk < kshape.Size(); ++kk) {
          std::vector<int64_t> k = Unravel(kk, kshape);
          std::vector<int64_t> oi{n, grp * fg + f};
          bool inside = true;
          for (size_t d = 0; d < ns; ++d) {
            int64_t p = xi[2 + d] * g.stride[d] - g.pad[d] + k[d] * g.dilate[d];
            inside = inside && p >= 0 && p < od[2 + d];
            oi.push_back(p);
          }
          if (!inside) continue;
          std::vector<int64_t> wi{c, f};
          wi.insert(wi.end(), k.begin(), k.end());
          out[Offset(out.shape, oi)] += in[0][i] * in[1][Offset(ws, wi)];
        }
      }
    }
    if (g.bias) {
      for (int64_t i = 0; i < out.size(); ++i) out[i] += in[2][Unravel(i, out.shape)[1]];
    }
    return std::vector<RefTensor>{out};
  };
}

struct PoolGeom {
  std::string type = "max";
  std::vector<int64_t> kernel, stride, pad;
  bool full = false;
  bool global = false;
  bool count_pad = true;
  int p = 2;
  bool channel_last = false;
  bool same = false;  // 1-D "same" convention: ceil(x / s) windows, no padding
};

// Windows start at o*s - p and end at min(start + k, x + p); avg divides by that (padded)
// window size, or with count_include_pad=False by the part inside the image.
RefFn PoolRef(PoolGeom g) {
  return [g](const std::vector<RefTensor>& in) {
    const Shape& xs = in[0].shape;
    const size_t ns = xs.ndim() - 2;
    const size_t sp0 = g.channel_last ? 1 : 2;
    const size_t cax = g.channel_last ? xs.ndim() - 1 : 1;
    std::vector<int64_t> od = xs.dims();
    std::vector<int64_t> k(ns), s(ns), p(ns);
    for (size_t d = 0; d < ns; ++d) {
      const int64_t x = xs[sp0 + d];
      k[d] = g.global ? x : g.kernel[d];
      s[d] = g.global ? 1 : g.stride[d];
      p[d] = g.global ? 0 : g.pad[d];
      const int64_t span = x + 2 * p[d] - k[d];
      od[sp0 + d] = g.same   ? (x + s[d] - 1) / s[d]
                    : g.full ? 1 + (span + s[d] - 1) / s[d]
                             : 1 + span / s[d];
    }
    RefTensor out{Shape(od)};
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> o = Unravel(i, out.shape);
      std::vector<int64_t> lo(ns), hi(ns);
      double padded = 1, inside = 1;
      for (size_t d = 0; d < ns; ++d) {
        const int64_t x = xs[sp0 + d];
        int64_t start = o[sp0 + d] * s[d] - p[d];
        int64_t end = std::min(start + k[d], x + p[d]);
        padded *= static_cast<double>(end - start);
        lo[d] = std::max<int64_t>(start, 0);
        hi[d] = std::min(end, x);
        inside *= static_cast<double>(hi[d] - lo[d]);
      }
      double acc = g.type == "max" ? -std::numeric_limits<double>::infinity() : 0.0;
      std::vector<int64_t> w(ns);
      for (size_t d = 0; d < ns; ++d) w[d] = hi[d] - lo[d];
      Shape wshape(w);
      for (int64_t j = 0; j < wshape.Size(); ++j) {
        std::vector<int64_t> wi = Unravel(j, wshape);
        std::vector<int64_t> xi = o;
        for (size_t d = 0; d < ns; ++d) xi[sp0 + d] = lo[d] + wi[d];
        xi[cax] = o[cax];
        const double v = in[0][Offset(xs, xi)];
        if (g.type == "max") {
          acc = std::max(acc, v);
        } else if (g.type == "lp") {
          acc += std::pow(v, g.p);
        } else {
          acc += v;
        }
      }
      if (g.type == "avg") acc /= g.count_pad ? padded : inside;
      if (g.type == "lp") acc = g.p == 2 ? std::sqrt(acc) : (g.p == 3 ? std::cbrt(acc) : acc);
      out[i] = acc;
    }
    return std::vector<RefTensor>{out};
  };
}

// Inference batch norm: y = (x - mean) / sqrt(var + eps) * gamma + beta; outputs mean and
// 1 / sqrt(var + eps) too when output_mean_var.
RefFn BatchNormRef(double eps, bool fix_gamma, int axis, bool relu, bool mean_var) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& xs = in[0].shape;
    const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int>(xs.ndim()) : axis);
    RefTensor out(xs);
    RefTensor mean(in[3].shape), invstd(in[4].shape);
    for (int64_t c = 0; c < mean.size(); ++c) {
      mean[c] = in[3][c];
      invstd[c] = 1.0 / std::sqrt(in[4][c] + F32(eps));
    }
    for (int64_t i = 0; i < out.size(); ++i) {
      const int64_t c = Unravel(i, xs)[a];
      const double gamma = fix_gamma ? 1.0 : in[1][c];
      double y = (in[0][i] - mean[c]) * invstd[c] * gamma + in[2][c];
      out[i] = relu && y < 0 ? 0.0 : y;
    }
    if (mean_var) return std::vector<RefTensor>{out, mean, invstd};
    return std::vector<RefTensor>{out};
  };
}

// moving_var (input 4) positive.
double BatchNormInput(std::mt19937& rng, size_t input, int64_t) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (input == 4) return 0.2 + 2.0 * u(rng);
  return -2.0 + 4.0 * u(rng);
}

}  // namespace

HN_CONFORMANCE_CASES(Convolution) {
  const double tol = 1e-5;
  auto conv = [&](AttrDict attrs, std::vector<Shape> in, ConvGeom g, std::string note) {
    return WithTol(Case("Convolution", std::move(attrs), std::move(in), ConvRef(g), note), tol,
                   tol);
  };
  ConvGeom g2{{3, 3}, {1, 1}, {1, 1}, {1, 1}, {}, 4, 1, true};
  cases->push_back(conv({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"pad", "(1, 1)"}},
                        {{2, 3, 6, 5}, {4, 3, 3, 3}, {4}}, g2, "k3_pad1"));
  ConvGeom strided{{3, 2}, {2, 1}, {1, 2}, {0, 1}, {}, 2, 1, false};
  cases->push_back(conv({{"kernel", "(3, 2)"}, {"stride", "(2, 1)"}, {"dilate", "(1, 2)"},
                         {"pad", "(0, 1)"}, {"num_filter", "2"}, {"no_bias", "True"}},
                        {{1, 2, 7, 6}, {2, 2, 3, 2}}, strided, "stride_dilate_no_bias"));
  ConvGeom grouped{{3, 3}, {1, 1}, {1, 1}, {1, 1}, {}, 4, 2, true};
  cases->push_back(conv({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"num_group", "2"},
                         {"pad", "(1, 1)"}},
                        {{2, 4, 5, 5}, {4, 2, 3, 3}, {4}}, grouped, "groups"));
  ConvGeom depthwise{{3, 3}, {2, 2}, {1, 1}, {1, 1}, {}, 3, 3, false};
  cases->push_back(conv({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"num_filter", "3"},
                         {"num_group", "3"}, {"pad", "(1, 1)"}, {"no_bias", "True"}},
                        {{2, 3, 6, 6}, {3, 1, 3, 3}}, depthwise, "depthwise"));
  ConvGeom pointwise{{1, 1}, {1, 1}, {1, 1}, {0, 0}, {}, 5, 1, true};
  cases->push_back(conv({{"kernel", "(1, 1)"}, {"num_filter", "5"}},
                        {{2, 3, 4, 4}, {5, 3, 1, 1}, {5}}, pointwise, "pointwise"));
  ConvGeom c1{{3}, {2}, {1}, {1}, {}, 3, 1, true};
  cases->push_back(conv({{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pad", "(1,)"},
                         {"num_filter", "3"}, {"layout", "NCW"}},
                        {{2, 2, 9}, {3, 2, 3}, {3}}, c1, "1d"));
  ConvGeom c3{{2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 1, 0}, {}, 2, 1, true};
  cases->push_back(conv({{"kernel", "(2, 2, 2)"}, {"pad", "(0, 1, 0)"}, {"num_filter", "2"}},
                        {{1, 2, 3, 4, 3}, {2, 2, 2, 2, 2}, {2}}, c3, "3d"));
  // gluon's full attribute set.
  ConvGeom gl{{3, 3}, {1, 1}, {1, 1}, {1, 1}, {}, 2, 1, false};
  cases->push_back(conv({{"kernel", "(3, 3)"}, {"stride", "(1, 1)"}, {"pad", "(1, 1)"},
                         {"dilate", "(1, 1)"}, {"layout", "NCHW"}, {"num_group", "1"},
                         {"no_bias", "True"}, {"num_filter", "2"}, {"workspace", "1024"},
                         {"cudnn_tune", "None"}, {"cudnn_off", "False"}},
                        {{1, 3, 4, 4}, {2, 3, 3, 3}}, gl, "gluon_attrs"));
}

HN_CONFORMANCE_CASES(Deconvolution) {
  const double tol = 1e-5;
  auto deconv = [&](AttrDict attrs, std::vector<Shape> in, ConvGeom g, std::string note) {
    return WithTol(Case("Deconvolution", std::move(attrs), std::move(in), DeconvRef(g), note),
                   tol, tol);
  };
  ConvGeom basic{{3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 2, 1, false};
  cases->push_back(deconv({{"kernel", "(3, 3)"}, {"num_filter", "2"}}, {{2, 3, 4, 4}, {3, 2, 3, 3}},
                          basic, "basic"));
  ConvGeom up{{4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 0}, 3, 1, true};
  cases->push_back(deconv({{"kernel", "(4, 4)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"},
                           {"adj", "(1, 0)"}, {"num_filter", "3"}, {"no_bias", "False"}},
                          {{1, 2, 3, 3}, {2, 3, 4, 4}, {3}}, up, "stride_pad_adj_bias"));
  ConvGeom grouped{{3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, 4, 2, false};
  cases->push_back(deconv({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"},
                           {"num_filter", "4"}, {"num_group", "2"}},
                          {{1, 4, 3, 3}, {4, 2, 3, 3}}, grouped, "groups"));
  ConvGeom d1{{3}, {2}, {2}, {1}, {0}, 2, 1, false};
  cases->push_back(deconv({{"kernel", "(3,)"}, {"stride", "(2,)"}, {"dilate", "(2,)"},
                           {"pad", "(1,)"}, {"num_filter", "2"}},
                          {{2, 3, 5}, {3, 2, 3}}, d1, "1d_dilate"));
  // target_shape sets pad and adj: (2*(3-1) + 3) - 6 = 1 -> pad 1, adj 1; 7 - 7 = 0 -> none.
  ConvGeom target{{3, 3}, {2, 2}, {1, 1}, {1, 0}, {1, 0}, 2, 1, false};
  cases->push_back(deconv({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"num_filter", "2"},
                           {"target_shape", "(6, 7)"}},
                          {{1, 3, 3, 3}, {3, 2, 3, 3}}, target, "target_shape"));
}

HN_CONFORMANCE_CASES(Pooling) {
  auto pool = [](AttrDict attrs, Shape in, PoolGeom g, std::string note) {
    return Case("Pooling", std::move(attrs), {std::move(in)}, PoolRef(g), note);
  };
  PoolGeom max{"max", {2, 2}, {2, 2}, {0, 0}};
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "max"}},
                        {2, 3, 6, 6}, max, "max_k2s2"));
  PoolGeom max_pad{"max", {3, 3}, {2, 2}, {1, 1}};
  cases->push_back(pool({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}},
                        {1, 2, 7, 6}, max_pad, "max_k3s2p1"));
  PoolGeom max_full{"max", {3, 3}, {2, 2}, {0, 0}, true};
  cases->push_back(pool({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"},
                         {"pooling_convention", "full"}},
                        {1, 2, 6, 6}, max_full, "max_full"));
  PoolGeom avg{"avg", {3, 3}, {1, 1}, {1, 1}};
  cases->push_back(pool({{"kernel", "(3, 3)"}, {"stride", "(1, 1)"}, {"pad", "(1, 1)"},
                         {"pool_type", "avg"}, {"count_include_pad", "True"}},
                        {2, 2, 5, 4}, avg, "avg_pad"));
  PoolGeom avg_ex = avg;
  avg_ex.count_pad = false;
  cases->push_back(pool({{"kernel", "(3, 3)"}, {"stride", "(1, 1)"}, {"pad", "(1, 1)"},
                         {"pool_type", "avg"}, {"count_include_pad", "False"}},
                        {2, 2, 5, 4}, avg_ex, "avg_exclude_pad"));
  PoolGeom avg_full{"avg", {2, 2}, {2, 2}, {0, 0}, true};
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "avg"},
                         {"pooling_convention", "full"}},
                        {1, 2, 5, 5}, avg_full, "avg_full"));
  PoolGeom sum{"sum", {2, 3}, {1, 2}, {0, 1}};
  cases->push_back(pool({{"kernel", "(2, 3)"}, {"stride", "(1, 2)"}, {"pad", "(0, 1)"},
                         {"pool_type", "sum"}},
                        {1, 3, 4, 5}, sum, "sum"));
  PoolGeom lp{"lp", {2, 2}, {2, 2}, {0, 0}};
  lp.p = 2;
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "lp"},
                         {"p_value", "2"}},
                        {1, 2, 4, 4}, lp, "lp2"));
  PoolGeom gavg;
  gavg.type = "avg";
  gavg.global = true;
  cases->push_back(pool({{"kernel", "(1, 1)"}, {"stride", "(1, 1)"}, {"pad", "(0, 0)"},
                         {"global_pool", "True"}, {"pool_type", "avg"},
                         {"pooling_convention", "full"}},
                        {2, 3, 4, 5}, gavg, "global_avg"));
  PoolGeom gmax;
  gmax.global = true;
  cases->push_back(pool({{"global_pool", "True"}}, {2, 3, 3, 3}, gmax, "global_max"));
  PoolGeom p1{"max", {3}, {2}, {1}};
  cases->push_back(pool({{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pad", "(1,)"}}, {2, 3, 8}, p1,
                        "1d"));
  PoolGeom p3{"avg", {2, 2, 2}, {2, 2, 2}, {0, 0, 0}};
  cases->push_back(pool({{"kernel", "(2, 2, 2)"}, {"stride", "(2, 2, 2)"}, {"pool_type", "avg"}},
                        {1, 2, 4, 4, 4}, p3, "3d"));
  PoolGeom nhwc{"max", {2, 2}, {2, 2}, {0, 0}};
  nhwc.channel_last = true;
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"layout", "NHWC"}},
                        {1, 4, 4, 3}, nhwc, "nhwc"));
  // "full" windows that overhang the padded input (the ONNX export pads them explicitly).
  PoolGeom avg_full_pad{"avg", {3, 3}, {2, 2}, {1, 1}, true};
  cases->push_back(pool({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"},
                         {"pool_type", "avg"}, {"pooling_convention", "full"}},
                        {1, 2, 6, 7}, avg_full_pad, "avg_full_pad"));
  PoolGeom avg_full_nopad = avg_full_pad;
  avg_full_nopad.count_pad = false;
  cases->push_back(pool({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"},
                         {"pool_type", "avg"}, {"pooling_convention", "full"},
                         {"count_include_pad", "False"}},
                        {1, 2, 6, 7}, avg_full_nopad, "avg_full_exclude_pad"));
  PoolGeom max_full_pad{"max", {3, 3}, {2, 2}, {1, 1}, true};
  cases->push_back(pool({{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"},
                         {"pooling_convention", "full"}},
                        {1, 2, 6, 7}, max_full_pad, "max_full_pad"));
  PoolGeom sum_full{"sum", {2, 2}, {2, 2}, {0, 0}, true};
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "sum"},
                         {"pooling_convention", "full"}},
                        {1, 2, 5, 5}, sum_full, "sum_full"));
  PoolGeom lp1{"lp", {2, 2}, {1, 1}, {1, 1}};
  lp1.p = 1;
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"stride", "(1, 1)"}, {"pad", "(1, 1)"},
                         {"pool_type", "lp"}, {"p_value", "1"}},
                        {1, 2, 4, 4}, lp1, "lp1_pad"));
  PoolGeom lp3{"lp", {2, 2}, {2, 2}, {0, 0}};
  lp3.p = 3;
  cases->push_back(pool({{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "lp"},
                         {"p_value", "3"}},
                        {1, 2, 4, 4}, lp3, "lp3"));
  PoolGeom same{"avg", {3}, {2}, {0}};
  same.same = true;
  cases->push_back(NotInMXNet(pool({{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pool_type", "avg"},
                                    {"pooling_convention", "same"}},
                                   {2, 3, 8}, same, "same_1d"),
                              "MXNet 1.9.1 fails a tuple index check on 1-D 'same' pooling"));
}

HN_CONFORMANCE_CASES(BatchNorm) {
  const double def_eps = static_cast<double>(1e-3f);
  auto bn = [](const char* op, AttrDict attrs, Shape x, int64_t c, RefFn ref, std::string note) {
    Shape v{c};
    OpCase cs = WithTol(WithGen(Case(op, std::move(attrs), {std::move(x), v, v, v, v},
                                     std::move(ref), note),
                                BatchNormInput),
                        1e-5, 1e-5);
    return cs;
  };
  cases->push_back(bn("BatchNorm", {}, {2, 3, 4, 4}, 3,
                      BatchNormRef(def_eps, true, 1, false, false),
                      "defaults_fix_gamma"));
  cases->push_back(bn("BatchNorm",
                      {{"axis", "1"}, {"eps", "1e-05"}, {"fix_gamma", "False"},
                       {"momentum", "0.9"}, {"use_global_stats", "False"}},
                      {2, 4, 3, 3}, 4, BatchNormRef(1e-5, false, 1, false, false), "gluon_attrs"));
  cases->push_back(bn("BatchNorm", {{"fix_gamma", "False"}, {"axis", "-1"}}, {3, 5}, 5,
                      BatchNormRef(def_eps, false, -1, false, false), "axis_last"));
  cases->push_back(bn("BatchNorm", {{"fix_gamma", "False"}, {"output_mean_var", "True"}},
                      {2, 3, 2}, 3, BatchNormRef(def_eps, false, 1, false, true),
                      "output_mean_var"));
  cases->push_back(bn("_contrib_BatchNormWithReLU", {{"fix_gamma", "False"}, {"eps", "2e-05"}},
                      {2, 3, 3, 3}, 3, BatchNormRef(2e-5, false, 1, true, false), "relu"));
}

}  // namespace conformance
}  // namespace hybridnet
