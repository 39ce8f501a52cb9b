// Conformance cases: dot, FullyConnected (+ the fused internal op), Activation, LeakyReLU,
// softmax, log_softmax, SoftmaxOutput, SoftmaxActivation and Dropout (inference).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "conformance.h"
#include "nn_reference.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

// ---- activations ------------------------------------------------------------------------------

const char* const kActTypes[] = {"relu", "sigmoid", "tanh", "softrelu", "softsign"};

// ---- matrix products --------------------------------------------------------------------------

// y[n][h] = sum_k x[n][k] * w[h][k] + b[h], x viewed as (batch, k).
RefFn FullyConnectedRef(int64_t hidden, bool flatten, bool bias, std::string act = "") {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& ds = in[0].shape;
    const int64_t k = flatten ? ds.Size() / ds[0] : ds[ds.ndim() - 1];
    const int64_t batch = ds.Size() / k;
    std::vector<int64_t> od;
    if (flatten) {
      od = {ds[0], hidden};
    } else {
      od.assign(ds.begin(), ds.end());
      od.back() = hidden;
    }
    RefTensor out{Shape(od)};
    auto f = act.empty() ? std::function<double(double)>() : Act(act);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t h = 0; h < hidden; ++h) {
        double acc = bias ? in[2][h] : 0.0;
        for (int64_t j = 0; j < k; ++j) acc += in[0][n * k + j] * in[1][h * k + j];
        out[n * hidden + h] = f ? f(acc) : acc;
      }
    }
    return std::vector<RefTensor>{out};
  };
}

// dot with MXNet's matrix views (see ops/linalg/dot.cc), written as explicit index loops.
RefFn DotRef(bool ta, bool tb) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& ls = in[0].shape;
    const Shape& rs = in[1].shape;
    if (ls.ndim() == 1 && rs.ndim() == 1) {
      RefTensor out(Shape{1});
      for (int64_t i = 0; i < ls[0]; ++i) out[0] += in[0][i] * in[1][i];
      return std::vector<RefTensor>{out};
    }
    // lhs stored as (a0, a1): ta ? (ls[0], rest) : (front, ls[-1]); free part and contraction.
    auto prod = [](const Shape& s, size_t b, size_t e) {
      int64_t p = 1;
      for (size_t i = b; i < e; ++i) p *= s[i];
      return p;
    };
    const int64_t l_rows = ta ? ls[0] : prod(ls, 0, ls.ndim() - 1);
    const int64_t l_cols = ta ? prod(ls, 1, ls.ndim()) : ls[ls.ndim() - 1];
    const int64_t r_rows = tb ? prod(rs, 0, rs.ndim() - 1) : rs[0];
    const int64_t r_cols = tb ? rs[rs.ndim() - 1] : prod(rs, 1, rs.ndim());
    const int64_t m = ta ? l_cols : l_rows, k = ta ? l_rows : l_cols;
    const int64_t n = tb ? r_rows : r_cols;
    std::vector<int64_t> od;
    if (ls.ndim() > 1) {
      if (ta)
        od.insert(od.end(), ls.begin() + 1, ls.end());
      else
        od.insert(od.end(), ls.begin(), ls.end() - 1);
    }
    if (rs.ndim() > 1) {
      if (tb)
        od.insert(od.end(), rs.begin(), rs.end() - 1);
      else
        od.insert(od.end(), rs.begin() + 1, rs.end());
    }
    RefTensor out{Shape(od)};
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          double a = ta ? in[0][p * l_cols + i] : in[0][i * l_cols + p];
          double b = tb ? in[1][j * r_cols + p] : in[1][p * r_cols + j];
          acc += a * b;
        }
        out[i * n + j] = acc;
      }
    }
    return std::vector<RefTensor>{out};
  };
}

// ---- softmax ----------------------------------------------------------------------------------

// Softmax (or log-softmax) of every line along `axis`, input viewed with shape `view`.
RefTensor SoftmaxLines(const RefTensor& x, const Shape& view, size_t axis, double t, bool log) {
  RefTensor out(x.shape);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= view[i];
  for (size_t i = axis + 1; i < view.ndim(); ++i) inner *= view[i];
  const int64_t m = view[axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * m + j) * inner + i; };
      double mx = x[at(0)];
      for (int64_t j = 1; j < m; ++j) mx = std::max(mx, x[at(j)]);
      double sum = 0;
      for (int64_t j = 0; j < m; ++j) sum += std::exp((x[at(j)] - mx) / t);
      for (int64_t j = 0; j < m; ++j) {
        double a = (x[at(j)] - mx) / t;
        out[at(j)] = log ? a - std::log(sum) : std::exp(a) / sum;
      }
    }
  }
  return out;
}

RefFn SoftmaxRef(int axis, double t, bool log) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int>(s.ndim()) : axis);
    return std::vector<RefTensor>{SoftmaxLines(in[0], s, a, t, log)};
  };
}

// _hn_log_softmax_label_sum: the sums of log_softmax(data) * label along the last axis.
RefTensor LogSoftmaxLabelSums(const RefTensor& data, const RefTensor& label, const Shape& out) {
  const Shape& s = data.shape;
  const RefTensor log_probs = SoftmaxLines(data, s, s.ndim() - 1, 1, true);
  const int64_t n = s[s.ndim() - 1];
  RefTensor sums(out);
  for (int64_t line = 0; line < sums.size(); ++line) {
    for (int64_t j = 0; j < n; ++j) sums[line] += log_probs[line * n + j] * label[line * n + j];
  }
  return sums;
}

RefFn LogSoftmaxLabelSumRef(const Shape& out) {
  return [out](const std::vector<RefTensor>& in) {
    return std::vector<RefTensor>{LogSoftmaxLabelSums(in[0], in[1], out)};
  };
}

// _backward_hn_log_softmax_label_sum (out_grad, label, y): per line, dy = out_grad * label and
// dx = dy - exp(y) sum(dy).
std::vector<RefTensor> LogSoftmaxLabelSumBackwardRef(const std::vector<RefTensor>& in) {
  const RefTensor &out_grad = in[0], &label = in[1], &y = in[2];
  const int64_t n = y.shape[y.shape.ndim() - 1];
  RefTensor dx(y.shape);
  for (int64_t line = 0; line < out_grad.size(); ++line) {
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += out_grad[line] * label[line * n + j];
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = line * n + j;
      dx[k] = out_grad[line] * label[k] - std::exp(y[k]) * sum;
    }
  }
  return {dx};
}

// SoftmaxOutput / SoftmaxActivation views: "flat" = (N, rest) axis 1; "channel" = axis 1 of the
// real shape; "last" = last axis.
RefFn SoftmaxViewRef(const std::string& view) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    if (view == "flat") {
      return std::vector<RefTensor>{SoftmaxLines(in[0], Shape{s[0], s.Size() / s[0]}, 1, 1, false)};
    }
    size_t axis = view == "channel" ? 1 : s.ndim() - 1;
    return std::vector<RefTensor>{SoftmaxLines(in[0], s, axis, 1, false)};
  };
}

// SoftmaxOutput's declared gradient (not the derivative of its forward): MXNet's
// (softmax - onehot(label)) with its ignore, smoothing and normalization rules; the label gets
// none.
struct SoftmaxOutputGrad {
  double grad_scale = 1;
  bool multi_output = false, preserve_shape = false, use_ignore = false, out_grad = false;
  double ignore_label = -1;
  std::string normalization = "null";
  double smooth_alpha = 0;
};

// The data gradient from the forward's output y and the label. out_grad=True multiplies by y:
// what MXNet 1.9.1 computes (measured), where it means the output gradient.
RefTensor SoftmaxOutputGradOf(const SoftmaxOutputGrad& s, const RefTensor& y,
                              const RefTensor& label) {
  const Shape& sh = y.shape;
  RefTensor dx(sh);
  if (label.shape == sh) {
    for (int64_t i = 0; i < dx.size(); ++i)
      dx[i] = (y[i] - label[i]) * F32(s.grad_scale) * (s.out_grad ? y[i] : 1.0);
    return dx;
  }
  int64_t outer = sh[0], size = sh.Size() / sh[0], inner = 1;
  if (s.multi_output) {
    size = sh[1];
    inner = sh.Size() / outer / size;
  } else if (s.preserve_shape) {
    size = sh[sh.ndim() - 1];
    outer = sh.Size() / size;
  }
  const int ignore = static_cast<int>(s.ignore_label);
  const int64_t labels = label.size();
  int64_t valid = labels;
  for (int64_t i = 0; i < labels; ++i) valid -= static_cast<int>(label[i]) == ignore ? 1 : 0;
  valid = std::max<int64_t>(valid, 1);
  double factor = F32(s.grad_scale);
  if (s.multi_output) {
    if (s.normalization != "valid") factor /= static_cast<double>(inner);
    if (s.normalization == "batch") factor /= static_cast<double>(outer);
    if (s.normalization == "valid") factor /= static_cast<double>(valid);
  } else if (s.normalization != "null") {
    factor /= static_cast<double>(s.normalization == "batch" ? labels : valid);
  }
  const bool smooth = !s.multi_output && s.smooth_alpha != 0;
  const double alpha = F32(s.smooth_alpha);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int k = static_cast<int>(label[o * inner + i]);
      for (int64_t j = 0; j < size; ++j) {
        const int64_t at = (o * size + j) * inner + i;
        double g = 0;
        if (!(s.use_ignore && k == ignore)) {
          g = y[at] - (j == k ? 1.0 : 0.0);
          if (smooth) g += j == k ? alpha : -alpha / static_cast<double>(size - 1);
        }
        dx[at] = g * factor * (s.out_grad ? y[at] : 1.0);
      }
    }
  }
  return dx;
}

RefGradFn SoftmaxOutputGradRef(const SoftmaxOutputGrad& s) {
  return [s](const std::vector<RefTensor>& in, const std::vector<RefTensor>&) {
    const char* view = s.multi_output ? "channel" : s.preserve_shape ? "last" : "flat";
    const RefTensor y = SoftmaxViewRef(view)(in)[0];
    return std::vector<RefTensor>{SoftmaxOutputGradOf(s, y, in[1]), RefTensor(in[1].shape)};
  };
}

// ---- LeakyReLU --------------------------------------------------------------------------------

RefFn LeakyRef(const std::string& act, double slope = 0.25) {
  const double alpha = 1.6732632423543772848170429916717;
  const double lambda = 1.0507009873554804934193349852946;
  if (act == "leaky") return Unary([slope](double x) { return x > 0 ? x : slope * x; });
  if (act == "elu") return Unary([slope](double x) { return x > 0 ? x : slope * std::expm1(x); });
  if (act == "selu") {
    return Unary([=](double x) { return lambda * (x > 0 ? x : alpha * std::expm1(x)); });
  }
  if (act == "gelu") {
    return Unary([](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); });
  }
  if (act == "rrelu") {
    const double mean = (F32(0.125) + F32(0.334)) / 2;
    return Unary([mean](double x) { return x > 0 ? x : mean * x; });
  }
  // prelu: gamma per channel (axis 1), or one value.
  return [](const std::vector<RefTensor>& in) {
    const RefTensor& x = in[0];
    const RefTensor& g = in[1];
    RefTensor out(x.shape);
    for (int64_t i = 0; i < x.size(); ++i) {
      int64_t c = g.size() == 1 ? 0 : Unravel(i, x.shape)[1];
      out[i] = x[i] > 0 ? x[i] : g[c] * x[i];
    }
    return std::vector<RefTensor>{out};
  };
}

// _backward_LeakyReLU (out_grad, data, output[, gamma]) with MXNet's derivatives: from the given
// output y for leaky, rrelu, elu and selu, from the data x for gelu and prelu.
RefFn LeakyBackwardRef(const std::string& act, double slope = 0.25) {
  const double alpha = 1.6732632423543772848170429916717;
  const double lambda = 1.0507009873554804934193349852946;
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor &dy = in[0], &x = in[1], &y = in[2];
    RefTensor dx(x.shape);
    if (act == "prelu") {
      const RefTensor& gamma = in[3];
      RefTensor dgamma(gamma.shape);
      const int64_t channels = gamma.size();
      const int64_t inner = channels == 1 ? x.size() : x.size() / x.shape[0] / x.shape[1];
      for (int64_t i = 0; i < x.size(); ++i) {
        const int64_t c = channels == 1 ? 0 : (i / inner) % channels;
        dx[i] = dy[i] * (x[i] > 0 ? 1.0 : gamma[c]);
        dgamma[c] += dy[i] * (x[i] > 0 ? 0.0 : x[i]);
      }
      return std::vector<RefTensor>{dx, dgamma};
    }
    for (int64_t i = 0; i < x.size(); ++i) {
      double d;
      if (act == "gelu") {
        const double z = x[i] / std::sqrt(2.0);
        d = 0.5 *
            (1 + std::erf(z) + x[i] * 1.12837916709551257390 * std::exp(-z * z) / std::sqrt(2.0));
      } else if (act == "elu") {
        d = y[i] > 0 ? 1 : y[i] + slope;
      } else if (act == "selu") {
        d = lambda * (y[i] > 0 ? 1 : alpha + y[i]);
      } else {
        d = y[i] > 0 ? 1 : slope;
      }
      dx[i] = dy[i] * d;
    }
    return std::vector<RefTensor>{dx};
  };
}

}  // namespace

HN_CONFORMANCE_CASES(Dot) {
  const double tol = 1e-5;
  cases->push_back(WithTol(Case("dot", {}, {{3, 4}, {4, 5}}, DotRef(false, false)), tol, tol));
  cases->push_back(
      WithTol(Case("dot", {{"transpose_a", "True"}}, {{4, 3}, {4, 5}}, DotRef(true, false), "ta"),
              tol, tol));
  cases->push_back(
      WithTol(Case("dot", {{"transpose_b", "True"}}, {{3, 4}, {5, 4}}, DotRef(false, true), "tb"),
              tol, tol));
  cases->push_back(WithTol(Case("dot", {{"transpose_a", "True"}, {"transpose_b", "True"}},
                                {{4, 3}, {5, 4}}, DotRef(true, true), "ta_tb"),
                           tol, tol));
  cases->push_back(WithTol(Case("dot", {}, {{7}, {7}}, DotRef(false, false), "vec_vec"), tol, tol));
  cases->push_back(
      WithTol(Case("dot", {}, {{4}, {4, 3}}, DotRef(false, false), "vec_mat"), tol, tol));
  cases->push_back(
      WithTol(Case("dot", {}, {{2, 4}, {4}}, DotRef(false, false), "mat_vec"), tol, tol));
  cases->push_back(
      WithTol(Case("dot", {}, {{2, 3, 4}, {4, 2, 3}}, DotRef(false, false), "nd"), tol, tol));
  cases->push_back(WithTol(Case("dot", {{"transpose_a", "True"}, {"forward_stype", "default"}},
                                {{2, 3, 4}, {2, 5}}, DotRef(true, false), "nd_ta"),
                           tol, tol));
  cases->push_back(WithTol(
      Case("dot", {{"transpose_b", "True"}}, {{3, 6}, {2, 3, 6}}, DotRef(false, true), "nd_tb"),
      tol, tol));
}

HN_CONFORMANCE_CASES(FullyConnected) {
  const double tol = 1e-5;
  auto fc = [&](AttrDict attrs, std::vector<Shape> in, RefFn ref, std::string note) {
    return WithTol(
        Case("FullyConnected", std::move(attrs), std::move(in), std::move(ref), std::move(note)),
        tol, tol);
  };
  cases->push_back(
      fc({{"num_hidden", "5"}}, {{4, 3}, {5, 3}, {5}}, FullyConnectedRef(5, true, true), "basic"));
  cases->push_back(fc({{"num_hidden", "5"}}, {{1, 7}, {5, 7}, {5}},
                      FullyConnectedRef(5, true, true), "batch1_gemv"));
  cases->push_back(fc({{"num_hidden", "6"}, {"no_bias", "True"}}, {{3, 8}, {6, 8}},
                      FullyConnectedRef(6, true, false), "no_bias"));
  cases->push_back(fc({{"num_hidden", "6"}, {"no_bias", "True"}}, {{1, 8}, {6, 8}},
                      FullyConnectedRef(6, true, false), "no_bias_batch1"));
  cases->push_back(fc({{"num_hidden", "4"}}, {{2, 3, 2, 2}, {4, 12}, {4}},
                      FullyConnectedRef(4, true, true), "flatten_4d"));
  cases->push_back(fc({{"num_hidden", "4"}, {"flatten", "False"}}, {{2, 3, 5}, {4, 5}, {4}},
                      FullyConnectedRef(4, false, true), "no_flatten_3d"));
  cases->push_back(fc({{"num_hidden", "3"}, {"flatten", "False"}, {"no_bias", "False"}},
                      {{1, 1, 6}, {3, 6}, {3}}, FullyConnectedRef(3, false, true),
                      "no_flatten_batch1"));
  cases->push_back(
      NoMxnetGradient(NonDefaultInputs(fc({{"num_hidden", "3"}}, {{2, 4}, {3, 4}, {3, 1}},
                                          FullyConnectedRef(3, true, true), "bias_column")),
                      "MXNet's FullyConnected backward rejects a (num_hidden, 1) bias"));
  // Rows and outputs enough for oneDNN's inner product (kernels/dense.cc), k and the outputs not
  // multiples of its 16-lane blocks.
  cases->push_back(fc({{"num_hidden", "18"}}, {{19, 21}, {18, 21}, {18}},
                      FullyConnectedRef(18, true, true), "inner_product"));
  cases->push_back(fc({{"num_hidden", "17"}, {"no_bias", "True"}}, {{16, 2, 5}, {17, 10}},
                      FullyConnectedRef(17, true, false), "inner_product_no_bias"));
  for (const char* act : kActTypes) {
    OpCase c = WithTol(Case("_hn_fully_connected_act", {{"num_hidden", "5"}, {"act_type", act}},
                            {{3, 4}, {5, 4}, {5}}, FullyConnectedRef(5, true, true, act), act),
                       tol, tol);
    c.check_json = false;
    if (std::string(act) == "softsign") {
      c.gradient_skip =
          "no gradient: softsign's derivative reads the product, which the fused op hides "
          "(training graphs never fuse it)";
    }
    cases->push_back(c);
  }
  OpCase rows = WithTol(Case("_hn_fully_connected_act",
                             {{"num_hidden", "20"}, {"act_type", "relu"}}, {{17, 9}, {20, 9}, {20}},
                             FullyConnectedRef(20, true, true, "relu"), "relu_inner_product"),
                        tol, tol);
  rows.check_json = false;
  cases->push_back(rows);
  OpCase single =
      WithTol(Case("_hn_fully_connected_act",
                   {{"num_hidden", "2"}, {"act_type", "relu"}, {"no_bias", "True"}},
                   {{1, 4}, {2, 4}}, FullyConnectedRef(2, true, false, "relu"), "batch1_no_bias"),
              tol, tol);
  single.check_json = false;
  cases->push_back(single);
}

HN_CONFORMANCE_CASES(Activation) {
  for (const char* act : kActTypes) {
    cases->push_back(Case("Activation", {{"act_type", act}}, {{2, 3, 4}}, Unary(Act(act)), act));
  }
  cases->push_back(WithGen(Case("Activation", {{"act_type", "softrelu"}}, {{50}},
                                Unary(Act("softrelu")), "softrelu_wide"),
                           Uniform(-30, 30)));
  // relu is max(x, 0) as oneDNN (MXNet's MKLDNN path, and our fused convolutions) computes
  // it: NaN gives 0, -0 gives +0.
  cases->push_back(WithGen(Case("Activation", {{"act_type", "relu"}}, {{1, 2, 3, 4}},
                                Unary(Act("relu")), "relu_nan_and_negative_zero"),
                           [](std::mt19937& rng, size_t, int64_t i) {
                             if (i % 5 == 0) return std::numeric_limits<double>::quiet_NaN();
                             if (i % 5 == 1) return -0.0;
                             return std::uniform_real_distribution<double>(-2, 2)(rng);
                           }));
  cases->push_back(Case("LeakyReLU", {}, {{2, 3, 4}}, LeakyRef("leaky"), "default"));
  cases->push_back(Case("LeakyReLU", {{"act_type", "leaky"}, {"slope", "0.1"}}, {{2, 3, 4}},
                        LeakyRef("leaky", F32(0.1)), "leaky"));
  cases->push_back(Case("LeakyReLU", {{"act_type", "elu"}, {"slope", "1.0"}}, {{2, 3, 4}},
                        LeakyRef("elu", 1.0), "elu"));
  cases->push_back(
      Case("LeakyReLU", {{"act_type", "gelu"}}, {{2, 3, 4}}, LeakyRef("gelu"), "gelu"));
  // MXNet's selu gradient is lambda * (alpha + y) where y <= 0, not the derivative y + lambda
  // alpha.
  cases->push_back(
      WithGradient(Case("LeakyReLU", {{"act_type", "selu"}}, {{2, 3, 4}}, LeakyRef("selu"), "selu"),
                   [](const std::vector<RefTensor>& in, const std::vector<RefTensor>& w) {
                     const double alpha = 1.6732632423543772848170429916717;
                     const double lambda = 1.0507009873554804934193349852946;
                     const RefTensor y = LeakyRef("selu")(in)[0];
                     RefTensor dx(in[0].shape);
                     for (int64_t i = 0; i < dx.size(); ++i)
                       dx[i] = w[0][i] * lambda * (y[i] > 0 ? 1.0 : alpha + y[i]);
                     return std::vector<RefTensor>{dx};
                   }));
  cases->push_back(Case("LeakyReLU", {{"act_type", "elu"}, {"slope", "0.3"}}, {{3, 5}},
                        LeakyRef("elu", F32(0.3)), "elu_slope"));
  // Measured: MXNet's forward uses the slope 0.2295, its gradient -0.38 to -0.42.
  cases->push_back(NoMxnetGradient(
      Case("LeakyReLU", {{"act_type", "rrelu"}}, {{2, 3, 4}}, LeakyRef("rrelu"), "rrelu"),
      "MXNet 1.9.1's rrelu backward in predict mode does not use the slope its forward used"));
  cases->push_back(
      Case("LeakyReLU", {{"act_type", "prelu"}}, {{2, 3, 4}, {3}}, LeakyRef("prelu"), "prelu"));
  cases->push_back(NonDefaultInputs(Case("LeakyReLU", {{"act_type", "prelu"}}, {{4, 5}, {1}},
                                         LeakyRef("prelu"), "prelu_shared")));
  cases->push_back(Case("LeakyReLU", {{"act_type", "prelu"}}, {{2, 3, 2, 2}, {3}},
                        LeakyRef("prelu"), "prelu_4d"));

  const Shape s{2, 3, 4};
  cases->push_back(
      InternalCase(Case("_backward_LeakyReLU", {}, {s, s, s}, LeakyBackwardRef("leaky"), "leaky")));
  cases->push_back(InternalCase(Case("_backward_LeakyReLU", {{"act_type", "elu"}, {"slope", "0.5"}},
                                     {s, s, s}, LeakyBackwardRef("elu", 0.5), "elu")));
  cases->push_back(InternalCase(WithTol(Case("_backward_LeakyReLU", {{"act_type", "selu"}},
                                             {s, s, s}, LeakyBackwardRef("selu"), "selu"),
                                        1e-5, 1e-5)));
  cases->push_back(InternalCase(WithTol(Case("_backward_LeakyReLU", {{"act_type", "gelu"}},
                                             {s, s, s}, LeakyBackwardRef("gelu"), "gelu"),
                                        1e-5, 1e-5)));
  cases->push_back(
      InternalCase(Case("_backward_LeakyReLU", {{"act_type", "rrelu"}}, {s, s, s},
                        LeakyBackwardRef("rrelu", (F32(0.125) + F32(0.334)) / 2), "rrelu")));
  cases->push_back(InternalCase(WithTol(Case("_backward_LeakyReLU", {{"act_type", "prelu"}},
                                             {s, s, s, {3}}, LeakyBackwardRef("prelu"), "prelu"),
                                        1e-5, 1e-5)));
}

HN_CONFORMANCE_CASES(Softmax) {
  cases->push_back(Case("softmax", {}, {{3, 5}}, SoftmaxRef(-1, 1, false)));
  cases->push_back(Case("softmax", {{"axis", "1"}}, {{2, 4, 3}}, SoftmaxRef(1, 1, false), "axis1"));
  cases->push_back(Case("softmax", {{"axis", "0"}, {"temperature", "2.5"}}, {{4, 3}},
                        SoftmaxRef(0, 2.5, false), "temperature"));
  cases->push_back(NoGradientCheck(
      Case("softmax", {{"temperature", "None"}, {"dtype", "float32"}, {"use_length", "False"}},
           {{2, 6}}, SoftmaxRef(-1, 1, false), "explicit_defaults"),
      "dtype is given: softmax's gradient supports an output of the input's dtype only"));
  cases->push_back(
      WithGen(Case("softmax", {}, {{2, 8}}, SoftmaxRef(-1, 1, false), "large"), Uniform(50, 90)));
  cases->push_back(Case("log_softmax", {}, {{3, 5}}, SoftmaxRef(-1, 1, true)));
  cases->push_back(Case("log_softmax", {{"axis", "-2"}, {"temperature", "0.5"}}, {{2, 4, 3}},
                        SoftmaxRef(1, 0.5, true), "axis_temperature"));

  // The fused cross-entropy of training graphs: lines of 37 (two rounds of LineSum's 16 lanes
  // and a tail), keepdims, and lines enough to split between threads.
  cases->push_back(InternalCase(
      Case("_hn_log_softmax_label_sum", {}, {{3, 37}, {3, 37}}, LogSoftmaxLabelSumRef(Shape{3}))));
  cases->push_back(
      InternalCase(Case("_hn_log_softmax_label_sum", {{"keepdims", "True"}}, {{2, 3, 5}, {2, 3, 5}},
                        LogSoftmaxLabelSumRef(Shape{2, 3, 1}), "keepdims")));
  cases->push_back(InternalCase(
      NoGradientCheck(Case("_hn_log_softmax_label_sum", {}, {{20, 2000}, {20, 2000}},
                           LogSoftmaxLabelSumRef(Shape{20}), "threads"),
                      "finite differences over 80000 inputs; the small cases check the gradient")));
  cases->push_back(InternalCase(Case("_backward_hn_log_softmax_label_sum", {},
                                     {{3}, {3, 37}, {3, 37}}, LogSoftmaxLabelSumBackwardRef)));
  cases->push_back(InternalCase(Case("_backward_hn_log_softmax_label_sum", {{"keepdims", "True"}},
                                     {{20, 1}, {20, 2000}, {20, 2000}},
                                     LogSoftmaxLabelSumBackwardRef, "threads")));

  SoftmaxOutputGrad plain;
  cases->push_back(WithGradient(Case("SoftmaxOutput", {}, {{4, 6}, {4}}, SoftmaxViewRef("flat")),
                                SoftmaxOutputGradRef(plain)));
  SoftmaxOutputGrad valid_ignore;
  valid_ignore.normalization = "valid";
  valid_ignore.use_ignore = true;
  cases->push_back(
      WithGradient(Case("SoftmaxOutput", {{"normalization", "valid"}, {"use_ignore", "True"}},
                        {{2, 3, 2, 2}, {2, 3, 2}}, SoftmaxViewRef("flat"), "flat_4d"),
                   SoftmaxOutputGradRef(valid_ignore)));
  SoftmaxOutputGrad multi;
  multi.multi_output = true;
  cases->push_back(
      WithGradient(Case("SoftmaxOutput", {{"multi_output", "True"}}, {{2, 3, 4}, {2, 4}},
                        SoftmaxViewRef("channel"), "multi_output"),
                   SoftmaxOutputGradRef(multi)));
  SoftmaxOutputGrad preserve;
  preserve.preserve_shape = true;
  cases->push_back(WithGradient(Case("SoftmaxOutput", {{"preserve_shape", "True"}},
                                     {{2, 3, 4}, {2, 3}}, SoftmaxViewRef("last"), "preserve_shape"),
                                SoftmaxOutputGradRef(preserve)));
  SoftmaxOutputGrad probability;
  probability.grad_scale = 2;
  cases->push_back(
      WithGradient(NonDefaultInputs(Case("SoftmaxOutput", {{"grad_scale", "2"}}, {{3, 4}, {3, 4}},
                                         SoftmaxViewRef("flat"), "probability_label")),
                   SoftmaxOutputGradRef(probability)));
  cases->push_back(WithGradient(Case("Softmax", {}, {{2, 5}, {2}}, SoftmaxViewRef("flat"), "alias"),
                                SoftmaxOutputGradRef(plain)));
  // The gradient's options: labels in [-1, 5] (-1 ignored), each normalization, smoothing,
  // the output gradient.
  const InputGen labels = [](std::mt19937& rng, size_t input, int64_t) {
    if (input == 1) return static_cast<double>(std::uniform_int_distribution<int>(-1, 5)(rng));
    return std::uniform_real_distribution<double>(-2, 2)(rng);
  };
  SoftmaxOutputGrad batch_smooth;
  batch_smooth.normalization = "batch";
  batch_smooth.smooth_alpha = 0.1;
  batch_smooth.grad_scale = 0.5;
  cases->push_back(WithGradient(
      WithGen(Case("SoftmaxOutput",
                   {{"normalization", "batch"}, {"smooth_alpha", "0.1"}, {"grad_scale", "0.5"}},
                   {{5, 6}, {5}}, SoftmaxViewRef("flat"), "batch_smooth"),
              labels),
      SoftmaxOutputGradRef(batch_smooth)));
  SoftmaxOutputGrad ignore_smooth = batch_smooth;
  ignore_smooth.use_ignore = true;
  ignore_smooth.normalization = "valid";
  ignore_smooth.out_grad = true;
  cases->push_back(WithGradient(
      WithGen(Case("SoftmaxOutput",
                   {{"normalization", "valid"},
                    {"smooth_alpha", "0.1"},
                    {"grad_scale", "0.5"},
                    {"use_ignore", "True"},
                    {"out_grad", "True"}},
                   {{6, 6}, {6}}, SoftmaxViewRef("flat"), "valid_ignore_smooth_out_grad"),
              labels),
      SoftmaxOutputGradRef(ignore_smooth)));
  // _backward_SoftmaxOutput (label, output), with an output that is not a softmax.
  const InputGen label_first = [labels](std::mt19937& rng, size_t input, int64_t j) {
    return labels(rng, 1 - input, j);
  };
  cases->push_back(InternalCase(WithGen(Case(
                                            "_backward_SoftmaxOutput",
                                            {{"normalization", "valid"},
                                             {"smooth_alpha", "0.1"},
                                             {"grad_scale", "0.5"},
                                             {"use_ignore", "True"},
                                             {"out_grad", "True"}},
                                            {{6}, {6, 6}},
                                            [ignore_smooth](const std::vector<RefTensor>& in) {
                                              return std::vector<RefTensor>{
                                                  SoftmaxOutputGradOf(ignore_smooth, in[1], in[0])};
                                            },
                                            "valid_ignore_smooth_out_grad"),
                                        label_first)));
  SoftmaxOutputGrad multi_batch;
  multi_batch.multi_output = true;
  multi_batch.normalization = "batch";
  cases->push_back(InternalCase(
      WithGen(Case(
                  "_backward_SoftmaxOutput", {{"multi_output", "True"}, {"normalization", "batch"}},
                  {{2, 3}, {2, 6, 3}},
                  [multi_batch](const std::vector<RefTensor>& in) {
                    return std::vector<RefTensor>{SoftmaxOutputGradOf(multi_batch, in[1], in[0])};
                  },
                  "multi_output_batch"),
              label_first)));
  for (const char* normalization : {"null", "batch", "valid"}) {
    SoftmaxOutputGrad m;
    m.multi_output = true;
    m.use_ignore = true;
    m.normalization = normalization;
    cases->push_back(WithGradient(WithGen(Case("SoftmaxOutput",
                                               {{"multi_output", "True"},
                                                {"use_ignore", "True"},
                                                {"normalization", normalization}},
                                               {{2, 6, 3, 2}, {2, 6}}, SoftmaxViewRef("channel"),
                                               std::string("multi_output_ignore_") + normalization),
                                          labels),
                                  SoftmaxOutputGradRef(m)));
  }
  // Measured: MXNet's forward is the last-axis softmax; its gradient is 1.35 (relative) from
  // that softmax's, which ours matches (and finite differences check).
  cases->push_back(NoMxnetGradient(
      Case("SoftmaxActivation", {}, {{3, 2, 2}}, SoftmaxViewRef("last")),
      "MXNet 1.9.1's SoftmaxActivation backward on 3-D data is not the derivative of its forward"));
  cases->push_back(Case("SoftmaxActivation", {}, {{2, 5}}, SoftmaxViewRef("last"), "2d"));
  cases->push_back(Case("SoftmaxActivation", {{"mode", "channel"}}, {{2, 3, 2, 2}},
                        SoftmaxViewRef("channel"), "channel"));
}

// Dropout(p) in training: every element 0 or x / (1 - p) (in float), about 1 - p of them kept,
// and with `shared_axis` the same choice along that axis.
StatCheck DropoutDraws(double p, int shared_axis = -1) {
  return [p, shared_axis](const std::vector<RefTensor>& in, const std::vector<RefTensor>& out) {
    const RefTensor &x = in[0], &y = out[0];
    const double scale = F32(1.0 / F32(1.0 - p));
    int64_t kept = 0;
    for (int64_t i = 0; i < x.size(); ++i) {
      const bool is_kept = y[i] != 0;
      if (is_kept && y[i] != F32(x[i] * scale)) {
        return "element " + std::to_string(i) + " is " + std::to_string(y[i]) +
               ", not 0 or x/(1-p)";
      }
      kept += is_kept;
    }
    const double fraction = static_cast<double>(kept) / static_cast<double>(x.size());
    if (std::fabs(fraction - (1 - p)) > 0.03) return "kept fraction " + std::to_string(fraction);
    if (shared_axis >= 0) {
      const Shape& s = x.shape;
      int64_t inner = 1;
      for (size_t k = static_cast<size_t>(shared_axis) + 1; k < s.ndim(); ++k) inner *= s[k];
      const int64_t n = s[static_cast<size_t>(shared_axis)];
      for (int64_t i = 0; i < x.size(); ++i) {
        const int64_t first = i - ((i / inner) % n) * inner;
        if ((y[i] != 0) != (y[first] != 0)) return "mask not shared at " + std::to_string(i);
      }
    }
    return std::string();
  };
}

HN_CONFORMANCE_CASES(Dropout) {
  auto id = Unary([](double x) { return x; });
  // Training draws masks from the seeded generator.
  cases->push_back(
      Statistical(Training(Case("Dropout", {{"p", "0.3"}}, {{50, 40}}, nullptr, "training")),
                  DropoutDraws(0.3)));
  cases->push_back(Statistical(Training(Case("Dropout", {{"p", "0.5"}, {"axes", "(1,)"}},
                                             {{40, 6, 30}}, nullptr, "training_axes")),
                               DropoutDraws(0.5, 1)));
  // _backward_Dropout (out_grad, data, output): the identity where the call does not drop; else
  // dy / (1 - p) where the output kept the data, 0 where it dropped it (a zero's sign tells).
  cases->push_back(InternalCase(Case(
      "_backward_Dropout", {{"p", "0.5"}}, {{3, 4}, {3, 4}, {3, 4}},
      [](const std::vector<RefTensor>& in) { return std::vector<RefTensor>{in[0]}; },
      "inference")));
  cases->push_back(InternalCase(
      WithGen(Case(
                  "_backward_Dropout", {{"p", "0.5"}, {"mode", "always"}}, {{4, 5}, {4, 5}, {4, 5}},
                  [](const std::vector<RefTensor>& in) {
                    RefTensor dx(in[0].shape);
                    for (int64_t i = 0; i < dx.size(); ++i) {
                      const double x = in[1][i], y = in[2][i];
                      const bool kept = x == 0 ? std::signbit(x) == std::signbit(y) : y != 0;
                      dx[i] = kept ? in[0][i] * 2 : 0.0;
                    }
                    return std::vector<RefTensor>{dx};
                  },
                  "always"),
              [](std::mt19937& rng, size_t input, int64_t j) {
                const double u = std::uniform_real_distribution<double>(-2, 2)(rng);
                if (input == 1) return j % 5 == 0 ? 0.0 : u;
                if (input == 2)
                  return j % 5 == 0 ? (j % 2 == 0 ? -0.0 : 0.0) : j % 3 == 0 ? 0.0 : u;
                return u;
              })));
  cases->push_back(Case("Dropout", {}, {{3, 4}}, id, "inference_identity"));
  cases->push_back(Case("Dropout", {{"p", "0.5"}, {"axes", "()"}, {"cudnn_off", "False"}},
                        {{2, 3, 4}}, id, "gluon_attrs"));
  cases->push_back(Case("Dropout", {{"p", "0"}, {"mode", "always"}}, {{5}}, id, "always_p0"));
}

HN_ERROR_CASES(Nn) {
  cases->push_back(Rejected("FullyConnected", {{"num_hidden", "4"}}, {{2, 3}, {4, 5}, {4}},
                            StatusCode::kShapeError, {"FullyConnected(node)", "weight", "(4, 5)"}));
  cases->push_back(Rejected("FullyConnected", {{"num_hidden", "4"}}, {{2, 3}, {4, 3}, {5}},
                            StatusCode::kShapeError, {"FullyConnected(node)", "bias"}));
  cases->push_back(Rejected("dot", {}, {{2, 3}, {4, 5}}, StatusCode::kShapeError,
                            {"dot(node)", "(2, 3)", "(4, 5)"}));
  cases->push_back(Rejected("softmax", {{"axis", "2"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"softmax(node)", "axis"}));
  cases->push_back(Rejected("_hn_log_softmax_label_sum", {}, {{2, 3}, {2, 4}},
                            StatusCode::kShapeError,
                            {"_hn_log_softmax_label_sum(node)", "label", "(2, 4)", "(2, 3)"}));
}

// float64 models (the float64 whole-model gradient checks) run Activation and FullyConnected in
// float64, with finite-difference gradients through their backward graphs.
HN_CONFORMANCE_CASES(Float64ActivationFullyConnected) {
  const DType f64 = DType::kFloat64;
  for (const char* act : kActTypes) {
    cases->push_back(WithDTypes(Case("Activation", {{"act_type", act}}, {{2, 3, 4}},
                                     Unary(Act(act)), std::string(act) + "_float64"),
                                {f64}));
  }
  cases->push_back(
      WithDTypes(WithTol(Case("FullyConnected", {{"num_hidden", "5"}}, {{2, 3, 2, 2}, {5, 12}, {5}},
                              FullyConnectedRef(5, true, true), "float64"),
                         1e-5, 1e-5),
                 {f64, f64, f64}));
  cases->push_back(WithDTypes(
      WithTol(
          Case("FullyConnected", {{"num_hidden", "4"}, {"no_bias", "True"}, {"flatten", "False"}},
               {{2, 3, 5}, {4, 5}}, FullyConnectedRef(4, false, false), "float64_no_bias_3d"),
          1e-5, 1e-5),
      {f64, f64}));
}

}  // namespace conformance
}  // namespace hybridnet
