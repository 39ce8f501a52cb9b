// Conformance cases for the model-zoo op families: reductions (sum, mean, prod, max, min,
// argmax, argmin), slice and slice_axis, Embedding, Pad, LRN, LayerNorm, InstanceNorm,
// GroupNorm and _contrib_AdaptiveAvgPooling2D, each against a plain-loop reference.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/test_util.h"
#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

using namespace ::hybridnet::testing_util;  // NOLINT: the shared test helpers

// ---- reductions ---------------------------------------------------------------------------------

enum class Red { kSum, kMean, kProd, kMax, kMin };

// `axes` empty = all; exclude flips the set.
RefFn Reduce(Red kind, std::vector<int64_t> axes, bool keepdims, bool exclude) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const size_t nd = s.ndim();
    std::vector<bool> red(nd, axes.empty());
    for (int64_t a : axes)
      red[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(nd) : a)] = true;
    if (exclude && !axes.empty()) red.flip();
    std::vector<int64_t> od;
    for (size_t k = 0; k < nd; ++k) {
      if (!red[k]) od.push_back(s[k]);
      if (red[k] && keepdims) od.push_back(1);
    }
    if (od.empty()) od.push_back(1);
    RefTensor out{Shape(od)};
    std::vector<double> acc(static_cast<size_t>(out.size()), kind == Red::kProd  ? 1.0
                                                             : kind == Red::kMax ? -INFINITY
                                                             : kind == Red::kMin ? INFINITY
                                                                                 : 0.0);
    std::vector<int64_t> count(acc.size(), 0);
    for (int64_t i = 0; i < in[0].size(); ++i) {
      std::vector<int64_t> idx = Unravel(i, s);
      int64_t o = 0;
      for (size_t k = 0; k < nd; ++k)
        if (!red[k]) o = o * s[k] + idx[k];
      const double v = in[0][i];
      double& a = acc[static_cast<size_t>(o)];
      switch (kind) {
        case Red::kSum:
        case Red::kMean:
          a += v;
          break;
        case Red::kProd:
          a *= v;
          break;
        case Red::kMax:
          a = std::max(a, v);
          break;
        case Red::kMin:
          a = std::min(a, v);
          break;
      }
      ++count[static_cast<size_t>(o)];
    }
    for (int64_t o = 0; o < out.size(); ++o) {
      out[o] = acc[static_cast<size_t>(o)];
      if (kind == Red::kMean) out[o] /= static_cast<double>(count[static_cast<size_t>(o)]);
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn ArgReduce(bool is_max, int64_t axis, bool has_axis, bool keepdims) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    if (!has_axis) {
      RefTensor out{keepdims ? Shape(std::vector<int64_t>(s.ndim(), 1)) : Shape{1}};
      int64_t best = 0;
      for (int64_t i = 1; i < in[0].size(); ++i)
        if (is_max ? in[0][i] > in[0][best] : in[0][i] < in[0][best]) best = i;
      out[0] = static_cast<double>(best);
      return std::vector<RefTensor>{out};
    }
    const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(s.ndim()) : axis);
    std::vector<int64_t> od;
    for (size_t k = 0; k < s.ndim(); ++k) {
      if (k != a) od.push_back(s[k]);
      if (k == a && keepdims) od.push_back(1);
    }
    RefTensor out{Shape(od)};
    for (int64_t o = 0; o < out.size(); ++o) {
      std::vector<int64_t> idx = Unravel(o, out.shape);
      if (!keepdims) idx.insert(idx.begin() + static_cast<std::ptrdiff_t>(a), 0);
      int64_t best = 0;
      double best_v = 0;
      for (int64_t k = 0; k < s[a]; ++k) {
        idx[a] = k;
        const double v = in[0][Offset(s, idx)];
        if (k == 0 || (is_max ? v > best_v : v < best_v)) {
          best = k;
          best_v = v;
        }
      }
      out[o] = static_cast<double>(best);
    }
    return std::vector<RefTensor>{out};
  };
}

HN_CONFORMANCE_CASES(Reduce) {
  const Shape s{2, 3, 4};
  struct R {
    const char* op;
    Red kind;
  };
  for (R r :
       {R{"sum", Red::kSum}, R{"mean", Red::kMean}, R{"max", Red::kMax}, R{"min", Red::kMin}}) {
    cases->push_back(Case(r.op, {}, {s}, Reduce(r.kind, {}, false, false), "all"));
    cases->push_back(Case(r.op, {{"axis", "1"}}, {s}, Reduce(r.kind, {1}, false, false), "axis1"));
    cases->push_back(Case(r.op, {{"axis", "(0, -1)"}, {"keepdims", "True"}}, {s},
                          Reduce(r.kind, {0, -1}, true, false), "axes_keepdims"));
    cases->push_back(Case(r.op, {{"axis", "(1,)"}, {"exclude", "True"}}, {s},
                          Reduce(r.kind, {1}, false, true), "exclude"));
  }
  cases->push_back(Case("sum_axis", {{"axis", "()"}, {"keepdims", "True"}}, {{3, 5}},
                        Reduce(Red::kSum, {}, true, false), "alias_empty_axis"));
  cases->push_back(Case("mean", {{"axis", "(2, 3)"}, {"keepdims", "True"}}, {{2, 3, 5, 7}},
                        Reduce(Red::kMean, {2, 3}, true, false), "spatial"));
  cases->push_back(
      WithGen(Case("prod", {{"axis", "0"}}, {{3, 4}}, Reduce(Red::kProd, {0}, false, false)),
              Uniform(0.5, 1.5)));
  cases->push_back(
      Case("max_axis", {{"axis", "-1"}}, {{4, 6}}, Reduce(Red::kMax, {-1}, false, false), "alias"));
  cases->push_back(Case("argmax", {{"axis", "1"}}, {s}, ArgReduce(true, 1, true, false)));
  cases->push_back(Case("argmax", {}, {s}, ArgReduce(true, 0, false, false), "flat"));
  cases->push_back(Case("argmin", {{"axis", "-1"}, {"keepdims", "True"}}, {s},
                        ArgReduce(false, -1, true, true)));
}

// ---- slice
// ---------------------------------------------------------------------------------------

// Python-style slicing of every axis: (begin, end, step) already resolved to non-negative
// begin and a count.
struct AxisSlice {
  int64_t begin, step, count;
};

RefFn Sliced(std::vector<AxisSlice> axes) {
  return [axes](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    std::vector<int64_t> od;
    for (size_t k = 0; k < s.ndim(); ++k) od.push_back(k < axes.size() ? axes[k].count : s[k]);
    RefTensor out{Shape(od)};
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> idx = Unravel(i, out.shape);
      for (size_t k = 0; k < axes.size(); ++k) idx[k] = axes[k].begin + idx[k] * axes[k].step;
      out[i] = in[0][Offset(s, idx)];
    }
    return std::vector<RefTensor>{out};
  };
}

HN_CONFORMANCE_CASES(Slice) {
  const Shape s{4, 5, 6};
  cases->push_back(Case("slice", {{"begin", "(1, 0)"}, {"end", "(3, 5)"}}, {s},
                        Sliced({{1, 1, 2}, {0, 1, 5}}), "basic"));
  cases->push_back(Case("slice", {{"begin", "(None, -2)"}, {"end", "(None, None)"}}, {s},
                        Sliced({{0, 1, 4}, {3, 1, 2}}), "none_negative"));
  cases->push_back(
      Case("slice", {{"begin", "(3, None, 1)"}, {"end", "(0, None, 6)"}, {"step", "(-1, -2, 2)"}},
           {s}, Sliced({{3, -1, 3}, {4, -2, 3}, {1, 2, 3}}), "steps"));
  cases->push_back(
      Case("slice", {{"begin", "(-9,)"}, {"end", "(2,)"}}, {s}, Sliced({{0, 1, 2}}), "clamped"));
  cases->push_back(Case("crop", {{"begin", "(0, 1, 2)"}, {"end", "(1, 4, 6)"}}, {s},
                        Sliced({{0, 1, 1}, {1, 1, 3}, {2, 1, 4}}), "alias"));
  cases->push_back(Case("slice_axis", {{"axis", "1"}, {"begin", "-3"}, {"end", "None"}}, {s},
                        Sliced({{0, 1, 4}, {2, 1, 3}})));
  cases->push_back(Case("slice_axis", {{"axis", "-1"}, {"begin", "1"}, {"end", "-1"}}, {s},
                        Sliced({{0, 1, 4}, {0, 1, 5}, {1, 1, 4}}), "last"));
}

// ---- Embedding
// -----------------------------------------------------------------------------------

HN_CONFORMANCE_CASES(Embedding) {
  auto ref = [](const std::vector<RefTensor>& in) {
    const int64_t rows = in[1].shape[0], cols = in[1].shape[1];
    std::vector<int64_t> od(in[0].shape.begin(), in[0].shape.end());
    od.push_back(cols);
    RefTensor out{Shape(od)};
    for (int64_t i = 0; i < in[0].size(); ++i) {
      int64_t r = static_cast<int64_t>(std::trunc(in[0][i]));
      r = std::min(std::max<int64_t>(r, 0), rows - 1);
      for (int64_t c = 0; c < cols; ++c) out[i * cols + c] = in[1][r * cols + c];
    }
    return std::vector<RefTensor>{out};
  };
  // Indices include out-of-range and fractional values (clipped and truncated as MXNet does).
  InputGen gen = [](std::mt19937& rng, size_t input, int64_t) {
    if (input == 0) return std::uniform_int_distribution<int>(-2, 14)(rng) * 0.5;
    return std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  };
  cases->push_back(WithGen(
      Case("Embedding", {{"input_dim", "6"}, {"output_dim", "4"}}, {{2, 5}, {6, 4}}, ref), gen));
  OpCase ints = WithGen(
      Case(
          "Embedding",
          {{"input_dim", "5"}, {"output_dim", "3"}, {"dtype", "float32"}, {"sparse_grad", "False"}},
          {{7}, {5, 3}}, ref, "int32_indices"),
      Integers(0, 4));
  ints.dtypes = {DType::kInt32, DType::kFloat32};
  cases->push_back(ints);
}

// ---- Pad
// -----------------------------------------------------------------------------------------

RefFn Padded(std::string mode, std::vector<int64_t> width, double value) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    std::vector<int64_t> od;
    for (size_t k = 0; k < s.ndim(); ++k) od.push_back(s[k] + width[2 * k] + width[2 * k + 1]);
    RefTensor out{Shape(od)};
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> idx = Unravel(i, out.shape);
      bool constant = false;
      for (size_t k = 0; k < s.ndim(); ++k) {
        int64_t p = idx[k] - width[2 * k];
        const int64_t n = s[k];
        if (p < 0 || p >= n) {
          if (mode == "constant") constant = true;
          if (mode == "edge") p = p < 0 ? 0 : n - 1;
          if (mode == "reflect") p = p < 0 ? -p : 2 * (n - 1) - p;
        }
        idx[k] = p;
      }
      out[i] = constant ? value : in[0][Offset(s, idx)];
    }
    return std::vector<RefTensor>{out};
  };
}

HN_CONFORMANCE_CASES(Pad) {
  const std::vector<int64_t> w4{0, 0, 0, 0, 1, 2, 2, 1};
  cases->push_back(Case(
      "Pad",
      {{"mode", "constant"}, {"pad_width", "(0, 0, 0, 0, 1, 2, 2, 1)"}, {"constant_value", "0.5"}},
      {{2, 3, 4, 5}}, Padded("constant", w4, 0.5), "constant"));
  cases->push_back(Case("Pad", {{"mode", "edge"}, {"pad_width", "(0, 0, 0, 0, 1, 2, 2, 1)"}},
                        {{2, 3, 4, 5}}, Padded("edge", w4, 0), "edge"));
  cases->push_back(Case("pad", {{"mode", "reflect"}, {"pad_width", "(0, 0, 0, 0, 1, 2, 2, 1)"}},
                        {{1, 2, 4, 5}}, Padded("reflect", w4, 0), "reflect"));
  cases->push_back(
      Case("Pad", {{"mode", "reflect"}, {"pad_width", "(0, 0, 0, 0, 1, 1, 0, 2, 2, 0)"}},
           {{1, 2, 3, 4, 5}}, Padded("reflect", {0, 0, 0, 0, 1, 1, 0, 2, 2, 0}, 0), "reflect_3d"));
}

// ---- LRN
// -----------------------------------------------------------------------------------------

RefFn LRNRef(int64_t nsize, double alpha, double beta, double knorm) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    RefTensor out(s);
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> idx = Unravel(i, s);
      const int64_t c = idx[1];
      double sum = 0;
      for (int64_t k = c - nsize / 2; k <= c + nsize / 2; ++k) {
        if (k < 0 || k >= s[1]) continue;
        idx[1] = k;
        const double v = in[0][Offset(s, idx)];
        sum += v * v;
      }
      out[i] = in[0][i] * std::pow(knorm + alpha / static_cast<double>(nsize) * sum, -beta);
    }
    return std::vector<RefTensor>{out};
  };
}

HN_CONFORMANCE_CASES(LRN) {
  cases->push_back(Case("LRN", {{"nsize", "3"}}, {{2, 5, 3, 4}}, LRNRef(3, 1e-4, 0.75, 2)));
  cases->push_back(Case("LRN",
                        {{"nsize", "5"}, {"alpha", "0.5"}, {"beta", "0.5"}, {"knorm", "1.0"}},
                        {{1, 7, 2, 3}}, LRNRef(5, 0.5, 0.5, 1), "params"));
  // An even nsize sums nsize + 1 channels (c - nsize/2 .. c + nsize/2). MXNet has no answer to
  // compare with: its plain CPU kernel refuses an even nsize, its MKLDNN path uses another window.
  cases->push_back(NotInMXNet(Case("LRN", {{"nsize", "4"}, {"alpha", "0.3"}}, {{1, 6, 2, 2}},
                                   LRNRef(4, 0.3, 0.75, 2), "even_nsize"),
                              "MXNet's plain CPU kernel refuses an even nsize; its MKLDNN path "
                              "sums another window"));
  for (uint32_t nsize : {3u, 4u}) {
    OpCase c = WithTol(Case("_backward_LRN", {{"nsize", std::to_string(nsize)}, {"alpha", "0.3"}},
                            {{1, 6, 2, 2}, {1, 6, 2, 2}},
                            VjpRef(LRNRef(nsize, F32(0.3), 0.75, 2), AfterOutGrad, {0}),
                            "nsize" + std::to_string(nsize)),
                       1e-4, 1e-5);
    c.check_json = false;
    cases->push_back(c);
  }
}

// ---- LayerNorm, InstanceNorm, GroupNorm
// ----------------------------------------------------------

// Normalizes groups: element i belongs to group key(i); affine index aff(i).
RefFn NormRef(std::function<int64_t(const std::vector<int64_t>&)> key,
              std::function<int64_t(const std::vector<int64_t>&)> aff, double eps,
              Shape stats_shape, bool std_outputs) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    const int64_t groups = stats_shape.Size();
    std::vector<double> sum(static_cast<size_t>(groups), 0), sq(sum), cnt(sum);
    for (int64_t i = 0; i < in[0].size(); ++i) {
      const size_t g = static_cast<size_t>(key(Unravel(i, s)));
      sum[g] += in[0][i];
      cnt[g] += 1;
    }
    for (int64_t i = 0; i < in[0].size(); ++i) {
      const size_t g = static_cast<size_t>(key(Unravel(i, s)));
      const double d = in[0][i] - sum[g] / cnt[g];
      sq[g] += d * d;
    }
    RefTensor out(s), mean(stats_shape), sd(stats_shape);
    for (int64_t i = 0; i < in[0].size(); ++i) {
      std::vector<int64_t> idx = Unravel(i, s);
      const size_t g = static_cast<size_t>(key(idx));
      const double m = sum[g] / cnt[g];
      const double st = std::sqrt(sq[g] / cnt[g] + eps);
      const int64_t a = aff(idx);
      out[i] = (in[0][i] - m) / st * in[1][a] + in[2][a];
    }
    for (int64_t g = 0; g < groups; ++g) {
      mean[g] = sum[static_cast<size_t>(g)] / cnt[static_cast<size_t>(g)];
      sd[g] = std::sqrt(sq[static_cast<size_t>(g)] / cnt[static_cast<size_t>(g)] + eps);
    }
    if (!std_outputs) return std::vector<RefTensor>{out};
    return std::vector<RefTensor>{out, mean, sd};
  };
}

HN_CONFORMANCE_CASES(Norms) {
  // LayerNorm over the last axis of (2, 3, 5), and over axis 1 with mean/std outputs.
  cases->push_back(WithTol(
      Case(
          "LayerNorm", {}, {{2, 3, 5}, {5}, {5}},
          NormRef([](const std::vector<int64_t>& i) { return i[0] * 3 + i[1]; },
                  [](const std::vector<int64_t>& i) { return i[2]; }, 1e-5, Shape{2, 3, 1}, false)),
      1e-4, 1e-5));
  const std::string mean_var_grad =
      "MXNet's gradient ignores the gradients of the mean and std outputs (the case without "
      "them checks it)";
  cases->push_back(NoGradientCheck(
      WithTol(Case("LayerNorm", {{"axis", "1"}, {"eps", "0.01"}, {"output_mean_var", "True"}},
                   {{2, 4, 3}, {4}, {4}},
                   NormRef([](const std::vector<int64_t>& i) { return i[0] * 3 + i[2]; },
                           [](const std::vector<int64_t>& i) { return i[1]; }, 0.01f,
                           Shape{2, 1, 3}, true),
                   "axis1_mean_var"),
              1e-4, 1e-5),
      mean_var_grad));
  const RefFn layer_norm_axis1 =
      NormRef([](const std::vector<int64_t>& i) { return i[0] * 3 + i[2]; },
              [](const std::vector<int64_t>& i) { return i[1]; }, 0.01f, Shape{2, 1, 3}, false);
  cases->push_back(WithTol(Case("LayerNorm", {{"axis", "1"}, {"eps", "0.01"}},
                                {{2, 4, 3}, {4}, {4}}, layer_norm_axis1, "axis1"),
                           1e-4, 1e-5));
  cases->push_back(WithTol(
      Case("InstanceNorm", {{"eps", "0.001"}}, {{2, 3, 4, 5}, {3}, {3}},
           NormRef([](const std::vector<int64_t>& i) { return i[0] * 3 + i[1]; },
                   [](const std::vector<int64_t>& i) { return i[1]; }, 0.001f, Shape{2, 3}, false)),
      1e-4, 1e-5));
  cases->push_back(NoGradientCheck(
      WithTol(Case("GroupNorm", {{"num_groups", "2"}, {"output_mean_var", "True"}},
                   {{2, 4, 3, 2}, {2}, {2}},
                   NormRef([](const std::vector<int64_t>& i) { return i[0] * 2 + i[1] / 2; },
                           [](const std::vector<int64_t>& i) { return i[1] / 2; }, 1e-5,
                           Shape{2, 2}, true)),
              1e-4, 1e-5),
      mean_var_grad));
  const RefFn group_norm_2 =
      NormRef([](const std::vector<int64_t>& i) { return i[0] * 2 + i[1] / 2; },
              [](const std::vector<int64_t>& i) { return i[1] / 2; }, 1e-5, Shape{2, 2}, false);
  cases->push_back(WithTol(Case("GroupNorm", {{"num_groups", "2"}}, {{2, 4, 3, 2}, {2}, {2}},
                                group_norm_2, "two_groups"),
                           1e-4, 1e-5));
  const RefFn instance_norm =
      NormRef([](const std::vector<int64_t>& i) { return i[0] * 3 + i[1]; },
              [](const std::vector<int64_t>& i) { return i[1]; }, 0.001f, Shape{2, 3}, false);
  // The gradients (out_grad, data, gamma) -> d data, d gamma, d beta: the forward's, with beta's
  // value irrelevant.
  auto norm_backward = [](const char* op, AttrDict attrs, std::vector<Shape> shapes, RefFn forward,
                          std::string note) {
    OpCase c =
        WithTol(Case(op, std::move(attrs), std::move(shapes),
                     VjpRef(forward,
                            [](const std::vector<RefTensor>& in) {
                              return std::vector<RefTensor>{in[1], in[2], RefTensor(in[2].shape)};
                            },
                            {0, 1, 2}),
                     std::move(note)),
                1e-4, 1e-5);
    c.check_json = false;
    return c;
  };
  cases->push_back(norm_backward("_backward_LayerNorm", {{"axis", "1"}, {"eps", "0.01"}},
                                 {{2, 4, 3}, {2, 4, 3}, {4}}, layer_norm_axis1, "axis1"));
  cases->push_back(norm_backward("_backward_InstanceNorm", {{"eps", "0.001"}},
                                 {{2, 3, 4, 5}, {2, 3, 4, 5}, {3}}, instance_norm, "eps"));
  cases->push_back(norm_backward("_backward_GroupNorm", {{"num_groups", "2"}},
                                 {{2, 4, 3, 2}, {2, 4, 3, 2}, {2}}, group_norm_2, "two_groups"));
  cases->push_back(WithTol(Case("GroupNorm", {}, {{2, 3, 5}, {1}, {1}},
                                NormRef([](const std::vector<int64_t>& i) { return i[0]; },
                                        [](const std::vector<int64_t>&) { return int64_t{0}; },
                                        1e-5, Shape{2, 1}, false),
                                "one_group"),
                           1e-4, 1e-5));
}

// ---- _contrib_AdaptiveAvgPooling2D
// ---------------------------------------------------------------

RefFn AdaptiveRef(int64_t oh, int64_t ow) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    RefTensor out{Shape{s[0], s[1], oh, ow}};
    const int64_t H = s[2], W = s[3];
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> o = Unravel(i, out.shape);
      auto fl = [](int64_t a, int64_t b) {
        return static_cast<int64_t>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
      };
      auto ce = [](int64_t a, int64_t b) {
        return static_cast<int64_t>(std::ceil(static_cast<double>(a) / static_cast<double>(b)));
      };
      const int64_t h0 = fl(o[2] * H, oh), h1 = ce((o[2] + 1) * H, oh);
      const int64_t w0 = fl(o[3] * W, ow), w1 = ce((o[3] + 1) * W, ow);
      double sum = 0;
      for (int64_t h = h0; h < h1; ++h)
        for (int64_t w = w0; w < w1; ++w) sum += in[0][Offset(s, {o[0], o[1], h, w})];
      out[i] = sum / static_cast<double>((h1 - h0) * (w1 - w0));
    }
    return std::vector<RefTensor>{out};
  };
}

HN_CONFORMANCE_CASES(AdaptivePooling) {
  cases->push_back(Case("_contrib_AdaptiveAvgPooling2D", {{"output_size", "(3, 4)"}},
                        {{2, 3, 5, 7}}, AdaptiveRef(3, 4)));
  cases->push_back(Case("_contrib_AdaptiveAvgPooling2D", {{"output_size", "2"}}, {{1, 2, 6, 6}},
                        AdaptiveRef(2, 2), "square"));
  cases->push_back(
      Case("_contrib_AdaptiveAvgPooling2D", {}, {{1, 3, 4, 5}}, AdaptiveRef(1, 1), "global"));
}

}  // namespace
}  // namespace conformance
}  // namespace hybridnet
