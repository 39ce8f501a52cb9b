// Conformance cases for the training-only ops at inference (regression outputs, SVMOutput,
// MakeLoss, make_loss, softmax_cross_entropy) and the legacy forms BatchNorm_v1,
// Convolution_v1, Pooling_v1 and _contrib_SyncBatchNorm, against plain-loop references.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "conformance.h"
#include "nn_reference.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

RefFn FirstInput(std::function<double(double)> f) {
  return [f](const std::vector<RefTensor>& in) {
    RefTensor out = in[0];
    for (int64_t i = 0; i < out.size(); ++i) out[i] = f(in[0][i]);
    return std::vector<RefTensor>{out};
  };
}

double Same(double x) { return x; }

RefFn CrossEntropyRef() {
  return [](const std::vector<RefTensor>& in) {
    const int64_t n = in[0].shape[0], c = in[0].shape[1];
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < c; ++j) mx = std::max(mx, in[0][i * c + j]);
      for (int64_t j = 0; j < c; ++j) sum += std::exp(in[0][i * c + j] - mx);
      const int64_t k = static_cast<int64_t>(in[1][i]);
      total += -(in[0][i * c + k] - mx - std::log(sum));
    }
    RefTensor out{Shape{1}};
    out[0] = total;
    return std::vector<RefTensor>{out};
  };
}

// The regression outputs' declared gradient, which ignores the output gradient: (y - label), or
// its sign (-1 at 0) for MAE, times grad_scale / (label elements per example); none for the
// label.
RefGradFn RegressionGrad(RefFn forward, bool mae, double grad_scale) {
  return [=](const std::vector<RefTensor>& in, const std::vector<RefTensor>&) {
    const RefTensor y = forward(in)[0];
    const double per_example =
        static_cast<double>(in[1].size() / (in[1].shape.ndim() ? in[1].shape[0] : 1));
    RefTensor dx(in[0].shape);
    for (int64_t i = 0; i < dx.size(); ++i) {
      const double d = y[i] - in[1][i];
      dx[i] = (mae ? (d > 0 ? 1.0 : -1.0) : d) * grad_scale / per_example;
    }
    return std::vector<RefTensor>{dx, RefTensor(in[1].shape)};
  };
}

// SVMOutput's declared gradient (MXNet's L1_SVM/L2_SVM), over rows of the last axis: at the
// label k, -reg [* 2 (margin - y)] where margin > y; elsewhere reg [* 2 (margin + y)] where
// margin > -y; else 0. None for the label.
RefGradFn SVMGrad(double margin, double reg, bool linear) {
  return [=](const std::vector<RefTensor>& in, const std::vector<RefTensor>&) {
    const RefTensor& y = in[0];
    const int64_t classes = y.shape[y.shape.ndim() - 1];
    RefTensor dx(y.shape);
    for (int64_t r = 0; r < y.size() / classes; ++r) {
      const int64_t k = static_cast<int64_t>(in[1][r]);
      for (int64_t x = 0; x < classes; ++x) {
        const double v = y[r * classes + x];
        double d;
        if (x == k) {
          d = margin > v ? -reg * (linear ? 1 : 2 * (margin - v)) : 0;
        } else {
          d = margin > -v ? reg * (linear ? 1 : 2 * (margin + v)) : 0;
        }
        dx[r * classes + x] = d;
      }
    }
    return std::vector<RefTensor>{dx, RefTensor(in[1].shape)};
  };
}

HN_CONFORMANCE_CASES(Loss) {
  const RefFn sigmoid = FirstInput([](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  cases->push_back(
      WithGradient(Case("LinearRegressionOutput", {}, {{4, 3}, {4, 3}}, FirstInput(Same)),
                   RegressionGrad(FirstInput(Same), false, 1)));
  cases->push_back(WithGradient(Case("LinearRegressionOutput", {{"grad_scale", "2"}}, {{4, 1}, {4}},
                                     FirstInput(Same), "column"),
                                RegressionGrad(FirstInput(Same), false, 2)));
  cases->push_back(
      WithGradient(Case("MAERegressionOutput", {}, {{2, 3, 2}, {2, 3, 2}}, FirstInput(Same)),
                   RegressionGrad(FirstInput(Same), true, 1)));
  cases->push_back(WithGradient(Case("MAERegressionOutput", {{"grad_scale", "0.5"}},
                                     {{3, 4}, {3, 4}}, FirstInput(Same), "scaled"),
                                RegressionGrad(FirstInput(Same), true, 0.5)));
  cases->push_back(WithGradient(Case("LogisticRegressionOutput", {}, {{4, 3}, {4, 3}}, sigmoid),
                                RegressionGrad(sigmoid, false, 1)));
  cases->push_back(WithGradient(
      WithDTypes(Case("LogisticRegressionOutput", {}, {{5, 1}, {5}}, sigmoid, "float64"),
                 {DType::kFloat64, DType::kFloat64}),
      RegressionGrad(sigmoid, false, 1)));
  // SVMOutput's gradient is MXNet's hinge gradient, for integer labels in [0, 3).
  const InputGen svm_labels = [](std::mt19937& rng, size_t input, int64_t) {
    if (input == 1) return static_cast<double>(std::uniform_int_distribution<int>(0, 2)(rng));
    return std::uniform_real_distribution<double>(-2, 2)(rng);
  };
  cases->push_back(
      WithGradient(WithGen(Case("SVMOutput", {{"margin", "0.5"}, {"use_linear", "True"}},
                                {{4, 3}, {4}}, FirstInput(Same)),
                           svm_labels),
                   SVMGrad(0.5, 1, true)));
  cases->push_back(WithGradient(WithGen(Case("SVMOutput", {{"regularization_coefficient", "0.5"}},
                                             {{2, 3, 3}, {2, 3}}, FirstInput(Same), "l2"),
                                        svm_labels),
                                SVMGrad(1, 0.5, false)));
  OpCase svm_backward =
      WithGen(Case("_backward_SVMOutput", {{"margin", "0.5"}}, {{5}, {5, 3}},
                   [](const std::vector<RefTensor>& in) {
                     return std::vector<RefTensor>{SVMGrad(0.5, 1, false)({in[1], in[0]}, {})[0]};
                   }),
              [](std::mt19937& rng, size_t input, int64_t) {
                if (input == 0) {
                  return static_cast<double>(std::uniform_int_distribution<int>(0, 2)(rng));
                }
                return std::uniform_real_distribution<double>(-2, 2)(rng);
              });
  svm_backward.check_json = false;
  cases->push_back(svm_backward);
  // MakeLoss's gradient is grad_scale divided by the count of elements above valid_thresh, not
  // the output gradient.
  cases->push_back(
      WithGradient(Case("MakeLoss", {{"normalization", "valid"}, {"valid_thresh", "0.1"}}, {{2, 3}},
                        FirstInput(Same)),
                   [](const std::vector<RefTensor>& in, const std::vector<RefTensor>&) {
                     int64_t valid = 0;
                     for (int64_t j = 0; j < in[0].size(); ++j)
                       valid += in[0][j] > F32(0.1) ? 1 : 0;
                     RefTensor grad(in[0].shape);
                     for (int64_t j = 0; j < grad.size(); ++j)
                       grad[j] = 1.0 / static_cast<double>(std::max<int64_t>(valid, 1));
                     return std::vector<RefTensor>{grad};
                   }));
  cases->push_back(
      WithGradient(Case("MakeLoss", {{"grad_scale", "0.5"}, {"normalization", "batch"}}, {{4, 3}},
                        FirstInput(Same), "batch"),
                   [](const std::vector<RefTensor>& in, const std::vector<RefTensor>&) {
                     RefTensor grad(in[0].shape);
                     for (int64_t j = 0; j < grad.size(); ++j) grad[j] = 0.5 / 4;
                     return std::vector<RefTensor>{grad};
                   }));
  cases->push_back(
      WithGradient(Case("make_loss", {}, {{2, 3}}, FirstInput(Same)),
                   [](const std::vector<RefTensor>& in, const std::vector<RefTensor>&) {
                     RefTensor grad(in[0].shape);
                     for (double& v : grad.v) v = 1.0;
                     return std::vector<RefTensor>{grad};
                   }));
  const InputGen class_labels = [](std::mt19937& rng, size_t input, int64_t) {
    if (input == 1) return static_cast<double>(std::uniform_int_distribution<int>(0, 4)(rng));
    return std::uniform_real_distribution<double>(-2, 2)(rng);
  };
  cases->push_back(
      WithGen(Case("softmax_cross_entropy", {}, {{4, 5}, {4}}, CrossEntropyRef()), class_labels));
  // The internal backward ops: the regression outputs' (label, output) and
  // softmax_cross_entropy's (out_grad, data, label).
  const RefFn linear_grad = [](const std::vector<RefTensor>& in) {
    return RegressionGrad(FirstInput(Same), false, 2)({in[1], in[0]}, {});
  };
  for (const char* op : {"_backward_linear_reg_out", "_backward_logistic_reg_out"}) {
    OpCase c = Case(op, {{"grad_scale", "2"}}, {{4, 3}, {4, 3}},
                    [linear_grad](const std::vector<RefTensor>& in) {
                      return std::vector<RefTensor>{linear_grad(in)[0]};
                    });
    c.check_json = false;
    cases->push_back(c);
  }
  OpCase mae =
      Case("_backward_mae_reg_out", {}, {{3, 2}, {3, 2}}, [](const std::vector<RefTensor>& in) {
        return std::vector<RefTensor>{
            RegressionGrad(FirstInput(Same), true, 1)({in[1], in[0]}, {})[0]};
      });
  mae.check_json = false;
  cases->push_back(mae);
  OpCase ce = WithGen(Case("_backward_softmax_cross_entropy", {}, {{1}, {3, 5}, {3}},
                           [](const std::vector<RefTensor>& in) {
                             const int64_t n = in[1].shape[0], c = in[1].shape[1];
                             RefTensor dx(in[1].shape);
                             for (int64_t i = 0; i < n; ++i) {
                               double mx = -INFINITY, sum = 0;
                               for (int64_t j = 0; j < c; ++j) mx = std::max(mx, in[1][i * c + j]);
                               for (int64_t j = 0; j < c; ++j)
                                 sum += std::exp(in[1][i * c + j] - mx);
                               for (int64_t j = 0; j < c; ++j) {
                                 const double p = std::exp(in[1][i * c + j] - mx) / sum;
                                 dx[i * c + j] =
                                     in[0][0] * (j == static_cast<int64_t>(in[2][i]) ? p - 1 : p);
                               }
                             }
                             return std::vector<RefTensor>{dx};
                           }),
                      [](std::mt19937& rng, size_t input, int64_t) {
                        if (input == 2)
                          return static_cast<double>(std::uniform_int_distribution<int>(0, 4)(rng));
                        return std::uniform_real_distribution<double>(-2, 2)(rng);
                      });
  ce.check_json = false;
  cases->push_back(ce);
  // The gradient is (softmax - onehot(label)) times the output gradient; the label gets none.
  cases->push_back(WithGen(
      WithDTypes(Case("softmax_cross_entropy", {}, {{3, 5}, {3}}, CrossEntropyRef(), "float64"),
                 {DType::kFloat64, DType::kFloat64}),
      class_labels));
}

HN_ERROR_CASES(Loss) {
  cases->push_back(Rejected("LinearRegressionOutput", {}, {{4, 3}, {3, 4}}, StatusCode::kShapeError,
                            {"LinearRegressionOutput(node)", "label"}));
  cases->push_back(Rejected("SVMOutput", {}, {{4}, {4}}, StatusCode::kShapeError,
                            {"SVMOutput(node)", "at least 2"}));
  cases->push_back(Rejected("softmax_cross_entropy", {}, {{2, 3, 4}, {2}}, StatusCode::kShapeError,
                            {"softmax_cross_entropy(node)", "(batch, classes)"}));
  cases->push_back(Rejected("MakeLoss", {{"normalization", "all"}}, {{2}},
                            StatusCode::kInvalidArgument, {"MakeLoss(node)", "normalization"}));
  cases->push_back(Rejected("make_loss", {}, {{2}}, StatusCode::kTypeError,
                            {"make_loss(node)", "int32"}, {DType::kInt32}));
}

HN_CONFORMANCE_CASES(LegacyForms) {
  // Variances positive, as moving_var is.
  const InputGen bn_gen = [](std::mt19937& rng, size_t input, int64_t) {
    return input == 4 ? std::uniform_real_distribution<double>(0.5, 2)(rng)
                      : std::uniform_real_distribution<double>(-2, 2)(rng);
  };
  // The legacy forms compute what BatchNorm, Convolution and Pooling do at inference.
  const BnSpec fixed_gamma{};  // eps 1e-3
  BnSpec learnt_gamma;
  learnt_gamma.fix_gamma = false;
  BnSpec learnt_gamma_eps = learnt_gamma;
  learnt_gamma_eps.eps = 0.01;
  cases->push_back(WithGen(
      Case("BatchNorm_v1", {}, {{2, 3, 2, 2}, {3}, {3}, {3}, {3}}, BatchNormRef(fixed_gamma)),
      bn_gen));
  cases->push_back(
      WithGen(Case("BatchNorm_v1", {{"fix_gamma", "False"}, {"eps", "0.01"}, {"momentum", "0.8"}},
                   {{4, 3}, {3}, {3}, {3}, {3}}, BatchNormRef(learnt_gamma_eps), "gamma"),
              bn_gen));
  cases->push_back(NoMxnetGradient(
      WithGen(
          Case("_contrib_SyncBatchNorm", {{"key", "bn0"}, {"ndev", "2"}, {"fix_gamma", "False"}},
               {{2, 3, 2, 2}, {3}, {3}, {3}, {3}}, BatchNormRef(learnt_gamma)),
          bn_gen),
      "MXNet's backward waits for the ndev=2 devices' statistics and hangs on one"));
  ConvGeom k3_pad1;
  k3_pad1.kernel = {3, 3};
  k3_pad1.stride = {1, 1};
  k3_pad1.pad = {1, 1};
  k3_pad1.dilate = {1, 1};
  k3_pad1.num_filter = 3;
  cases->push_back(Case("Convolution_v1",
                        {{"kernel", "(3, 3)"}, {"num_filter", "3"}, {"pad", "(1, 1)"}},
                        {{1, 2, 5, 4}, {3, 2, 3, 3}, {3}}, ConvRef(k3_pad1)));
  cases->push_back(Case("Pooling_v1", {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}}, {{1, 2, 5, 4}},
                        PoolRef(Pool("max", {2, 2}, {2, 2}, {}, Convention::kValid))));
  cases->push_back(Case(
      "Pooling_v1",
      {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}, {"pool_type", "avg"}},
      {{2, 1, 5, 5}}, PoolRef(Pool("avg", {3, 3}, {2, 2}, {1, 1}, Convention::kValid)), "avg"));
}

HN_ERROR_CASES(LegacyForms) {
  cases->push_back(Rejected("Pooling_v1", {{"kernel", "(2, 2)"}, {"p_value", "2"}}, {{1, 1, 4, 4}},
                            StatusCode::kInvalidArgument, {"Pooling_v1(node)", "p_value"}));
  cases->push_back(Rejected("_contrib_SyncBatchNorm", {}, {{2, 3}, {3}, {3}, {3}, {3}},
                            StatusCode::kInvalidArgument, {"_contrib_SyncBatchNorm(node)", "key"}));
  cases->push_back(Rejected("BatchNorm_v1", {{"axis", "1"}}, {{2, 3}, {3}, {3}, {3}, {3}},
                            StatusCode::kInvalidArgument, {"BatchNorm_v1(node)", "axis"}));
  cases->push_back(Rejected("Convolution_v1", {{"kernel", "(3, 3)"}, {"num_filter", "2"}},
                            {{1, 2, 5, 5}, {2, 3, 3, 3}, {2}}, StatusCode::kShapeError,
                            {"Convolution_v1(node)", "weight"}));
}

}  // namespace
}  // namespace conformance
}  // namespace hybridnet

namespace hybridnet {
namespace conformance {
namespace {

// CTC by enumeration: the probability of a label sequence is the sum, over every path of
// classes of length T whose collapse (merge repeats, drop blanks) is the sequence, of the
// product of the per-step softmax probabilities.
struct CTCEnumeration {
  int64_t steps = 0;
  std::vector<std::vector<double>> prob;       // [t][c], the softmax
  double total = 0;                            // p(label)
  std::vector<std::vector<double>> posterior;  // [t][c], sum of p(path) over paths with c at t
};

CTCEnumeration EnumerateCTC(const std::vector<RefTensor>& in, int64_t b, bool blank_first,
                            bool data_lengths, bool label_lengths) {
  const int64_t steps = in[0].shape[0], batch = in[0].shape[1], classes = in[0].shape[2];
  const int64_t width = in[1].shape[1];
  const int64_t blank = blank_first ? 0 : classes - 1;
  CTCEnumeration e;
  e.steps = data_lengths ? static_cast<int64_t>(in[2][b]) : steps;
  std::vector<int64_t> label;
  const int64_t n = label_lengths ? static_cast<int64_t>(in[data_lengths ? 3 : 2][b]) : width;
  for (int64_t l = 0; l < n; ++l) {
    const double v = in[1][b * width + l];
    if (!label_lengths && v == (blank_first ? 0.0 : -1.0)) break;
    label.push_back(static_cast<int64_t>(v));
  }
  e.prob.resize(static_cast<size_t>(e.steps));
  e.posterior.assign(static_cast<size_t>(e.steps),
                     std::vector<double>(static_cast<size_t>(classes), 0.0));
  for (int64_t t = 0; t < e.steps; ++t) {
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(in[0][(t * batch + b) * classes + c]);
    for (int64_t c = 0; c < classes; ++c)
      e.prob[static_cast<size_t>(t)].push_back(std::exp(in[0][(t * batch + b) * classes + c]) /
                                               sum);
  }
  int64_t paths = 1;
  for (int64_t t = 0; t < e.steps; ++t) paths *= classes;
  for (int64_t code = 0; code < paths; ++code) {
    std::vector<int64_t> path;
    int64_t rest = code;
    double p = 1;
    for (int64_t t = 0; t < e.steps; ++t) {
      path.push_back(rest % classes);
      p *= e.prob[static_cast<size_t>(t)][static_cast<size_t>(rest % classes)];
      rest /= classes;
    }
    std::vector<int64_t> collapsed;
    for (size_t t = 0; t < path.size(); ++t)
      if (path[t] != blank && (t == 0 || path[t] != path[t - 1])) collapsed.push_back(path[t]);
    if (collapsed != label) continue;
    e.total += p;
    for (size_t t = 0; t < path.size(); ++t) e.posterior[t][static_cast<size_t>(path[t])] += p;
  }
  return e;
}

RefFn CTCRef(bool blank_first, bool data_lengths, bool label_lengths) {
  return [=](const std::vector<RefTensor>& in) {
    RefTensor out{Shape{in[0].shape[1]}};
    for (int64_t b = 0; b < out.size(); ++b)
      out[b] = -std::log(EnumerateCTC(in, b, blank_first, data_lengths, label_lengths).total);
    return std::vector<RefTensor>{out};
  };
}

// _backward_CTCLoss: (out_grad, the forward inputs) -> d data[t, b, c] = out_grad[b] *
// (softmax - posterior / p) for t within the sequence, zeros elsewhere and for the other inputs.
RefFn CTCBackwardRef(bool blank_first, bool data_lengths, bool label_lengths) {
  return [=](const std::vector<RefTensor>& in) {
    const std::vector<RefTensor> forward(in.begin() + 1, in.end());
    std::vector<RefTensor> grads;
    for (const RefTensor& x : forward) grads.emplace_back(x.shape);
    const int64_t batch = forward[0].shape[1], classes = forward[0].shape[2];
    for (int64_t b = 0; b < batch; ++b) {
      const CTCEnumeration e = EnumerateCTC(forward, b, blank_first, data_lengths, label_lengths);
      for (int64_t t = 0; t < e.steps; ++t)
        for (int64_t c = 0; c < classes; ++c) {
          const size_t ts = static_cast<size_t>(t), cs = static_cast<size_t>(c);
          grads[0][(t * batch + b) * classes + c] =
              in[0][b] * (e.prob[ts][cs] - e.posterior[ts][cs] / e.total);
        }
    }
    return grads;
  };
}

// Labels of width 2 in [lo, hi]; lengths (inputs 2, 3) from their own ranges.
InputGen CTCGen(int64_t lo, int64_t hi, int64_t len_lo, int64_t len_hi, bool second_is_labels) {
  return [=](std::mt19937& rng, size_t input, int64_t) {
    if (input == 0) return std::uniform_real_distribution<double>(-2, 2)(rng);
    if (input == 1) return static_cast<double>(std::uniform_int_distribution<int64_t>(lo, hi)(rng));
    if (input == 3 || second_is_labels)
      return static_cast<double>(std::uniform_int_distribution<int64_t>(0, 2)(rng));
    return static_cast<double>(std::uniform_int_distribution<int64_t>(len_lo, len_hi)(rng));
  };
}

HN_CONFORMANCE_CASES(CTCLoss) {
  cases->push_back(WithGen(Case("CTCLoss", {}, {{5, 3, 4}, {3, 2}}, CTCRef(true, false, false)),
                           CTCGen(0, 3, 0, 0, false)));
  cases->push_back(WithGen(Case("ctc_loss", {{"blank_label", "last"}}, {{4, 3, 3}, {3, 2}},
                                CTCRef(false, false, false), "last"),
                           CTCGen(-1, 1, 0, 0, false)));
  cases->push_back(
      WithGen(Case("_contrib_CTCLoss", {{"use_data_lengths", "True"}}, {{5, 2, 3}, {2, 2}, {2}},
                   CTCRef(true, true, false), "data_lengths"),
              CTCGen(0, 2, 3, 5, false)));
  cases->push_back(WithGen(
      Case("_contrib_ctc_loss",
           {{"use_data_lengths", "True"}, {"use_label_lengths", "True"}, {"blank_label", "last"}},
           {{5, 2, 3}, {2, 2}, {2}, {2}}, CTCRef(false, true, true), "lengths"),
      CTCGen(0, 1, 3, 5, false)));
  cases->push_back(
      WithGen(Case("CTCLoss", {{"use_label_lengths", "True"}}, {{4, 3, 3}, {3, 2}, {3}},
                   CTCRef(true, false, true), "label_lengths"),
              CTCGen(1, 2, 0, 0, true)));
}

// The backward op's cases: out_grad first, then the forward inputs drawn as above.
InputGen AfterOutGrad(InputGen gen) {
  return [gen](std::mt19937& rng, size_t input, int64_t index) {
    if (input == 0) return std::uniform_real_distribution<double>(-1, 1)(rng);
    return gen(rng, input - 1, index);
  };
}

HN_CONFORMANCE_CASES(CTCLossBackward) {
  cases->push_back(
      InternalCase(WithTol(WithGen(Case("_backward_CTCLoss", {}, {{3}, {5, 3, 4}, {3, 2}},
                                        CTCBackwardRef(true, false, false)),
                                   AfterOutGrad(CTCGen(0, 3, 0, 0, false))),
                           1e-5, 1e-6)));
  cases->push_back(InternalCase(WithTol(WithGen(Case("_backward_CTCLoss",
                                                     {{"use_data_lengths", "True"},
                                                      {"use_label_lengths", "True"},
                                                      {"blank_label", "last"}},
                                                     {{2}, {5, 2, 3}, {2, 2}, {2}, {2}},
                                                     CTCBackwardRef(false, true, true), "lengths"),
                                                AfterOutGrad(CTCGen(0, 1, 3, 5, false))),
                                        1e-5, 1e-6)));
}

HN_ERROR_CASES(CTCLoss) {
  cases->push_back(Rejected("_backward_CTCLoss", {}, {{2}, {5, 3, 4}, {3, 2}},
                            StatusCode::kShapeError, {"_backward_CTCLoss(node)", "out_grad"}));
  cases->push_back(Rejected("CTCLoss", {}, {{5, 3}, {3, 2}}, StatusCode::kShapeError,
                            {"CTCLoss(node)", "seq_len, batch, classes"}));
  cases->push_back(Rejected("CTCLoss", {}, {{5, 3, 4}, {2, 2}}, StatusCode::kShapeError,
                            {"CTCLoss(node)", "label"}));
  cases->push_back(Rejected("CTCLoss", {{"blank_label", "middle"}}, {{5, 3, 4}, {3, 2}},
                            StatusCode::kInvalidArgument, {"CTCLoss(node)", "blank_label"}));
  cases->push_back(Rejected("CTCLoss", {}, {{5, 3, 4}, {3, 2}}, StatusCode::kTypeError,
                            {"CTCLoss(node)", "float32"}, {DType::kFloat64, DType::kFloat32}));
}

}  // namespace
}  // namespace conformance
}  // namespace hybridnet
