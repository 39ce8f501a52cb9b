// Conformance cases for the fused optimizer update ops (core/src/ops/optimizer/update_ops.cc):
// float64 references written from the update rules, one element at a time. Each reference
// returns the new weight and then every input after the call, so the harness checks the states
// the op updates in place as well (conformance.cc, UpdatesInputs).
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

double ClipTo(double x, double bound) {
  return bound >= 0 ? std::fmax(-bound, std::fmin(x, bound)) : x;
}
double SignOf(double x) { return static_cast<double>((x > 0) - (x < 0)); }

// One element of an update: `v` holds every input's value at that position (an input of one
// element, such as LAMB's norms, its only value); the step updates the states in `v` and returns
// the output.
using ElementStep = std::function<double(std::vector<double>* v)>;

// The reference of a single-weight update op: the output has input 0's shape.
RefFn UpdateReference(ElementStep step) {
  return [step](const std::vector<RefTensor>& in) {
    std::vector<RefTensor> result{RefTensor(in[0].shape)};
    for (const RefTensor& x : in) result.push_back(x);
    for (int64_t i = 0; i < in[0].size(); ++i) {
      std::vector<double> v;
      for (const RefTensor& x : in) v.push_back(x[x.size() == 1 ? 0 : i]);
      result[0][i] = step(&v);
      for (size_t k = 0; k < in.size(); ++k) {
        if (in[k].size() == in[0].size()) result[1 + k][i] = v[k];
      }
    }
    return result;
  };
}

// The reference of a multi-weight op: weights of `stride` inputs each; `step(k)` updates weight k.
RefFn MultiReference(size_t stride, std::function<ElementStep(size_t k)> step) {
  return [stride, step](const std::vector<RefTensor>& in) {
    const size_t n = in.size() / stride;
    std::vector<RefTensor> outputs, after = in;
    for (size_t k = 0; k < n; ++k) {
      const ElementStep one = step(k);
      RefTensor out(in[k * stride].shape);
      for (int64_t i = 0; i < out.size(); ++i) {
        std::vector<double> v;
        for (size_t j = 0; j < stride; ++j) v.push_back(in[k * stride + j][i]);
        out[i] = one(&v);
        for (size_t j = 0; j < stride; ++j) after[k * stride + j][i] = v[j];
      }
      outputs.push_back(out);
    }
    outputs.insert(outputs.end(), after.begin(), after.end());
    return outputs;
  };
}

// Inputs drawn per position: `ranges[i]` is input i's [lo, hi).
InputGen Ranges(std::vector<std::pair<double, double>> ranges) {
  return [ranges](std::mt19937& rng, size_t input, int64_t) {
    const auto& r = ranges[input];
    return r.first + (r.second - r.first) * std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  };
}

OpCase Update(std::string op, AttrDict attrs, std::vector<Shape> inputs, ElementStep step,
              std::vector<std::pair<double, double>> ranges, std::string note = "") {
  OpCase c = WithGen(Case(std::move(op), std::move(attrs), std::move(inputs),
                          UpdateReference(std::move(step)), std::move(note)),
                     Ranges(std::move(ranges)));
  return WithTol(c, 1e-4, 1e-5);
}

// A float16 weight and gradient with float32 states: the output is rounded to float16.
OpCase MixedPrecision(OpCase c, size_t num_low) {
  c.dtypes.assign(c.inputs.size(), DType::kFloat32);
  for (size_t i = 0; i < num_low; ++i) c.dtypes[i] = DType::kFloat16;
  return WithTol(c, 2e-3, 2e-3);
}

const std::pair<double, double> kAny{-2, 2};
const std::pair<double, double> kPositive{0.5, 2};
const std::pair<double, double> kSmall{-0.5, 0.5};

// sgd_update's step from weight w: (1 - lr wd) w - lr clip(rescale g).
double SGDFrom(double w, double g, double lr, double wd, double rescale, double clip) {
  return (1 - lr * wd) * w - lr * ClipTo(rescale * g, clip);
}

// The momentum step: mom = momentum mom - lr wd w - lr clip(rescale g).
double MomentumFrom(double mom, double w, double g, double lr, double momentum, double wd,
                    double rescale, double clip) {
  return momentum * mom - lr * wd * w - lr * ClipTo(rescale * g, clip);
}

// Nesterov: returns the new weight from w and updates mom, whose weight decay reads the old
// weight, or the new one (`decay_new`: mp_nag_mom_update, as MXNet's kernel).
double NesterovFrom(double* mom, double w, double g, double lr, double momentum, double wd,
                    double rescale, double clip, bool decay_new = false) {
  const double r = ClipTo(rescale * g, clip);
  *mom = momentum * *mom;
  const double next = w - *mom + (momentum + 1) * (*mom - lr * (r + wd * w));
  *mom -= lr * (r + wd * (decay_new ? next : w));
  return next;
}

// LAMB's direction from weight w and the moments at positions m, s of v.
double LambDirection(std::vector<double>* v, double w, double g, double beta1, double beta2,
                     double eps, int t, bool bias_correction, double wd, double rescale,
                     double clip) {
  double& mean = (*v)[2];
  double& var = (*v)[3];
  const double r = ClipTo(rescale * g, clip);
  mean = beta1 * mean + (1 - beta1) * r;
  var = beta2 * var + (1 - beta2) * r * r;
  double m = mean, s = var;
  if (bias_correction) {
    m = mean / (1 - std::pow(beta1, t));
    s = var / (1 - std::pow(beta2, t));
  }
  return m / (std::sqrt(s) + eps) + wd * w;
}

// LAMB's second phase: the trust ratio r1 / r2 with r1 bounded, 1 when a norm is 0.
double LambRatio(double r1, double r2, double lower, double upper) {
  if (lower >= 0) r1 = std::fmax(r1, lower);
  if (upper >= 0) r1 = std::fmin(r1, upper);
  return (r1 == 0 || r2 == 0) ? 1.0 : r1 / r2;
}

// The reference of a preloaded_multi_*sgd* op: weights of `stride` inputs (weight, grad,
// [mom], [weight32]), then the inputs lrs and wds.
RefFn PreloadedReference(size_t stride, bool momentum, bool mp, double momentum_value) {
  return [=](const std::vector<RefTensor>& in) {
    const size_t n = (in.size() - 2) / stride;
    const RefTensor& lrs = in[in.size() - 2];
    const RefTensor& wds = in[in.size() - 1];
    std::vector<RefTensor> outputs, after = in;
    for (size_t k = 0; k < n; ++k) {
      const double lr = lrs[static_cast<int64_t>(k)], wd = wds[static_cast<int64_t>(k)];
      RefTensor out(in[k * stride].shape);
      for (int64_t i = 0; i < out.size(); ++i) {
        double w = in[k * stride + (mp ? stride - 1 : 0)][i];
        const double mom = momentum ? in[k * stride + 2][i] : 0.0;
        const double m = MomentumFrom(mom, w, in[k * stride + 1][i], lr, momentum_value, wd, 1, -1);
        if (momentum) after[k * stride + 2][i] = m;
        w += m;
        if (mp) after[k * stride + stride - 1][i] = w;
        out[i] = w;
      }
      outputs.push_back(out);
    }
    outputs.insert(outputs.end(), after.begin(), after.end());
    return outputs;
  };
}

}  // namespace

HN_CONFORMANCE_CASES(OptimizerUpdates) {
  const Shape s{3, 4};
  // ---- SGD family
  cases->push_back(
      Update("sgd_update", {{"lr", "0.1"}, {"wd", "0.01"}, {"rescale_grad", "0.5"}}, {s, s},
             [](std::vector<double>* v) { return SGDFrom((*v)[0], (*v)[1], 0.1, 0.01, 0.5, -1); },
             {kAny, kAny}));
  cases->push_back(Update(
      "sgd_update", {{"lr", "0.1"}, {"wd", "0.01"}, {"clip_gradient", "0.5"}}, {s, s},
      [](std::vector<double>* v) { return SGDFrom((*v)[0], (*v)[1], 0.1, 0.01, 1, 0.5); },
      {kAny, kAny}, "clip"));
  cases->push_back(Update("sgd_mom_update",
                          {{"lr", "0.1"},
                           {"momentum", "0.9"},
                           {"wd", "0.01"},
                           {"rescale_grad", "0.5"},
                           {"clip_gradient", "0.6"}},
                          {s, s, s},
                          [](std::vector<double>* v) {
                            double& mom = (*v)[2];
                            mom = MomentumFrom(mom, (*v)[0], (*v)[1], 0.1, 0.9, 0.01, 0.5, 0.6);
                            return (*v)[0] + mom;
                          },
                          {kAny, kAny, kSmall}));
  cases->push_back(MixedPrecision(
      Update("mp_sgd_update", {{"lr", "0.1"}, {"wd", "0.01"}, {"rescale_grad", "0.5"}}, {s, s, s},
             [](std::vector<double>* v) {
               double& w32 = (*v)[2];
               w32 = SGDFrom(w32, (*v)[1], 0.1, 0.01, 0.5, -1);
               return w32;
             },
             {kAny, kAny, kAny}),
      2));
  cases->push_back(MixedPrecision(
      Update("mp_sgd_mom_update",
             {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}, {"clip_gradient", "1"}},
             {s, s, s, s},
             [](std::vector<double>* v) {
               double& mom = (*v)[2];
               double& w32 = (*v)[3];
               mom = MomentumFrom(mom, w32, (*v)[1], 0.1, 0.9, 0.01, 1, 1);
               w32 += mom;
               return w32;
             },
             {kAny, kAny, kSmall, kAny}),
      2));
  cases->push_back(Update("nag_mom_update", {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}},
                          {s, s, s},
                          [](std::vector<double>* v) {
                            return NesterovFrom(&(*v)[2], (*v)[0], (*v)[1], 0.1, 0.9, 0.01, 1, -1);
                          },
                          {kAny, kAny, kSmall}));
  cases->push_back(MixedPrecision(Update("mp_nag_mom_update",
                                         {{"lr", "0.1"},
                                          {"momentum", "0.8"},
                                          {"wd", "0.05"},
                                          {"rescale_grad", "0.5"},
                                          {"clip_gradient", "0.7"}},
                                         {s, s, s, s},
                                         [](std::vector<double>* v) {
                                           double& w32 = (*v)[3];
                                           w32 = NesterovFrom(&(*v)[2], w32, (*v)[1], 0.1, 0.8,
                                                              0.05, 0.5, 0.7, true);
                                           return w32;
                                         },
                                         {kAny, kAny, kSmall, kAny}),
                                  2));
  cases->push_back(Update(
      "signsgd_update", {{"lr", "0.1"}, {"wd", "0.05"}}, {s, s},
      [](std::vector<double>* v) { return (1 - 0.1 * 0.05) * (*v)[0] - 0.1 * SignOf((*v)[1]); },
      {kAny, kAny}));
  cases->push_back(Update("signum_update",
                          {{"lr", "0.1"},
                           {"momentum", "0.9"},
                           {"wd", "0.01"},
                           {"wd_lh", "0.02"},
                           {"clip_gradient", "1"}},
                          {s, s, s},
                          [](std::vector<double>* v) {
                            double& mom = (*v)[2];
                            const double w = (*v)[0];
                            mom = 0.9 * mom - (1 - 0.9) * 0.01 * w - (1 - 0.9) * ClipTo((*v)[1], 1);
                            return (1 - 0.1 * 0.02) * w + 0.1 * SignOf(mom);
                          },
                          {kAny, kAny, kSmall}));

  // ---- multi-weight SGD: weights of different shapes in one call
  const Shape t{5};
  cases->push_back(WithTol(WithGen(Case("multi_sgd_update",
                                        {{"lrs", "(0.1, 0.2)"},
                                         {"wds", "(0.01, 0)"},
                                         {"rescale_grad", "0.5"},
                                         {"num_weights", "2"}},
                                        {s, s, t, t},
                                        MultiReference(2,
                                                       [](size_t k) -> ElementStep {
                                                         const double lr = k == 0 ? 0.1 : 0.2;
                                                         const double wd = k == 0 ? 0.01 : 0;
                                                         return [lr, wd](std::vector<double>* v) {
                                                           return (*v)[0] + (-lr * wd * (*v)[0] -
                                                                             lr * 0.5 * (*v)[1]);
                                                         };
                                                       })),
                                   Ranges({kAny, kAny, kAny, kAny})),
                           1e-4, 1e-5));
  cases->push_back(WithTol(WithGen(Case("multi_sgd_mom_update",
                                        {{"lrs", "(0.1, 0.2)"},
                                         {"wds", "(0.01, 0.02)"},
                                         {"momentum", "0.9"},
                                         {"clip_gradient", "1"},
                                         {"num_weights", "2"}},
                                        {s, s, s, t, t, t},
                                        MultiReference(3,
                                                       [](size_t k) -> ElementStep {
                                                         const double lr = k == 0 ? 0.1 : 0.2;
                                                         const double wd = k == 0 ? 0.01 : 0.02;
                                                         return [lr, wd](std::vector<double>* v) {
                                                           double& mom = (*v)[2];
                                                           mom = MomentumFrom(mom, (*v)[0], (*v)[1],
                                                                              lr, 0.9, wd, 1, 1);
                                                           return (*v)[0] + mom;
                                                         };
                                                       })),
                                   Ranges({kAny, kAny, kSmall, kAny, kAny, kSmall})),
                           1e-4, 1e-5));
  {
    OpCase c = WithGen(Case("multi_mp_sgd_update",
                            {{"lrs", "(0.1, 0.2)"}, {"wds", "(0.01, 0)"}, {"num_weights", "2"}},
                            {s, s, s, t, t, t},
                            MultiReference(3,
                                           [](size_t k) -> ElementStep {
                                             const double lr = k == 0 ? 0.1 : 0.2;
                                             const double wd = k == 0 ? 0.01 : 0;
                                             return [lr, wd](std::vector<double>* v) {
                                               double& w32 = (*v)[2];
                                               w32 += -lr * wd * w32 - lr * (*v)[1];
                                               return w32;
                                             };
                                           })),
                       Ranges({kAny, kAny, kAny, kAny, kAny, kAny}));
    c.dtypes = {DType::kFloat16, DType::kFloat16, DType::kFloat32,
                DType::kFloat16, DType::kFloat16, DType::kFloat32};
    cases->push_back(WithTol(c, 2e-3, 2e-3));
  }
  {
    OpCase c =
        WithGen(Case("multi_mp_sgd_mom_update",
                     {{"lrs", "(0.1, 0.2)"},
                      {"wds", "(0.01, 0)"},
                      {"momentum", "0.5"},
                      {"num_weights", "2"}},
                     {s, s, s, s, t, t, t, t},
                     MultiReference(4,
                                    [](size_t k) -> ElementStep {
                                      const double lr = k == 0 ? 0.1 : 0.2;
                                      const double wd = k == 0 ? 0.01 : 0;
                                      return [lr, wd](std::vector<double>* v) {
                                        double& mom = (*v)[2];
                                        double& w32 = (*v)[3];
                                        mom = MomentumFrom(mom, w32, (*v)[1], lr, 0.5, wd, 1, -1);
                                        w32 += mom;
                                        return w32;
                                      };
                                    })),
                Ranges({kAny, kAny, kSmall, kAny, kAny, kAny, kSmall, kAny}));
    c.dtypes = {DType::kFloat16, DType::kFloat16, DType::kFloat32, DType::kFloat32,
                DType::kFloat16, DType::kFloat16, DType::kFloat32, DType::kFloat32};
    cases->push_back(WithTol(c, 2e-3, 2e-3));
  }

  // ---- the preloaded forms: learning rates and weight decays as inputs
  struct Preloaded {
    const char* op;
    size_t stride;
    bool momentum, mp;
  };
  for (const Preloaded& form : {Preloaded{"preloaded_multi_sgd_update", 2, false, false},
                                Preloaded{"preloaded_multi_sgd_mom_update", 3, true, false},
                                Preloaded{"preloaded_multi_mp_sgd_update", 3, false, true},
                                Preloaded{"preloaded_multi_mp_sgd_mom_update", 4, true, true}}) {
    std::vector<Shape> shapes;
    std::vector<std::pair<double, double>> ranges;
    std::vector<DType> dtypes;
    for (const Shape& weight : {s, t}) {
      for (size_t j = 0; j < form.stride; ++j) {
        shapes.push_back(weight);
        ranges.push_back(j == 2 && form.momentum ? kSmall : kAny);
        dtypes.push_back(form.mp && j < 2 ? DType::kFloat16 : DType::kFloat32);
      }
    }
    shapes.insert(shapes.end(), {Shape{2}, Shape{2}});
    ranges.insert(ranges.end(), {{0.05, 0.2}, {0, 0.05}});
    dtypes.insert(dtypes.end(), {DType::kFloat32, DType::kFloat32});
    AttrDict attrs{{"num_weights", "2"}};
    if (form.momentum) attrs["momentum"] = "0.9";
    OpCase c = WithGen(
        Case(form.op, attrs, shapes, PreloadedReference(form.stride, form.momentum, form.mp, 0.9)),
        Ranges(ranges));
    c.dtypes = dtypes;
    cases->push_back(form.mp ? WithTol(c, 2e-3, 2e-3) : WithTol(c, 1e-4, 1e-5));
  }

  // ---- Adam family
  auto adam = [](std::vector<double>* v, double lr, double wd, double rescale, double clip) {
    const double w = (*v)[0];
    const double r = ClipTo(rescale * (*v)[1] + wd * w, clip);
    double& mean = (*v)[2];
    double& var = (*v)[3];
    mean = 0.9 * mean + 0.1 * r;
    var = 0.999 * var + 0.001 * r * r;
    return w - lr * mean / (std::sqrt(var) + 1e-8);
  };
  cases->push_back(Update("adam_update", {{"lr", "0.01"}, {"wd", "0.1"}, {"rescale_grad", "0.5"}},
                          {s, s, s, s},
                          [adam](std::vector<double>* v) { return adam(v, 0.01, 0.1, 0.5, -1); },
                          {kAny, kAny, kSmall, kPositive}));
  cases->push_back(Update(
      "adam_update", {{"lr", "0.01"}, {"clip_gradient", "0.5"}}, {s, s, s, s},
      [adam](std::vector<double>* v) { return adam(v, 0.01, 0, 1, 0.5); },
      {kAny, kAny, kSmall, kPositive}, "clip"));
  auto adamw = [](std::vector<double>* v, double w, double rescale) {
    const double g = ClipTo(rescale * (*v)[1], 1.0);
    double& mean = (*v)[2];
    double& var = (*v)[3];
    mean = 0.9 * mean + 0.1 * g;
    var = 0.99 * var + 0.01 * g * g;
    return w - 0.5 * (0.01 * mean / (std::sqrt(var) + 1e-6) + 0.1 * w);
  };
  const AttrDict adamw_attrs{{"lr", "0.01"}, {"beta2", "0.99"}, {"epsilon", "1e-6"},
                             {"wd", "0.1"},  {"eta", "0.5"},    {"clip_gradient", "1"}};
  cases->push_back(Update("_adamw_update", adamw_attrs, {s, s, s, s, Shape{1}},
                          [adamw](std::vector<double>* v) { return adamw(v, (*v)[0], (*v)[4]); },
                          {kAny, kAny, kSmall, kPositive, kPositive}));
  // A zero rescale_grad (a loss scaler's overflow) skips the step: weight and states stay.
  cases->push_back(NotInMXNet(
      Update(
          "_adamw_update", adamw_attrs, {s, s, s, s, Shape{1}},
          [](std::vector<double>* v) { return (*v)[0]; }, {kAny, kAny, kSmall, kPositive, {0, 0}},
          "skipped"),
      "MXNet leaves a separate output unwritten when it skips (its optimizer passes out=weight)"));
  cases->push_back(MixedPrecision(Update("_mp_adamw_update", adamw_attrs, {s, s, s, s, s, Shape{1}},
                                         [adamw](std::vector<double>* v) {
                                           double& w32 = (*v)[4];
                                           w32 = adamw(v, w32, (*v)[5]);
                                           return w32;
                                         },
                                         {kAny, kAny, kSmall, kPositive, kAny, kPositive}),
                                  2));

  // ---- RMSProp, FTML, FTRL
  cases->push_back(
      Update("rmsprop_update",
             {{"lr", "0.01"}, {"gamma1", "0.9"}, {"wd", "0.1"}, {"clip_weights", "1.5"}}, {s, s, s},
             [](std::vector<double>* v) {
               const double r = (*v)[1] + 0.1 * (*v)[0];
               double& n = (*v)[2];
               n = 0.1 * r * r + 0.9 * n;
               return ClipTo((*v)[0] - 0.01 * r / std::sqrt(n + 1e-8), 1.5);
             },
             {kAny, kAny, kPositive}));
  cases->push_back(Update("rmspropalex_update",
                          {{"lr", "0.01"},
                           {"gamma1", "0.9"},
                           {"gamma2", "0.8"},
                           {"rescale_grad", "0.5"},
                           {"clip_gradient", "0.8"}},
                          {s, s, s, s, s},
                          [](std::vector<double>* v) {
                            const double r = ClipTo(0.5 * (*v)[1], 0.8);
                            double& n = (*v)[2];
                            double& g = (*v)[3];
                            double& delta = (*v)[4];
                            n = 0.1 * r * r + 0.9 * n;
                            g = 0.1 * r + 0.9 * g;
                            delta = 0.8 * delta - 0.01 * r / std::sqrt(n - g * g + 1e-8);
                            return (*v)[0] + delta;
                          },
                          {kAny, kAny, {1.5, 2}, {-1, 1}, kSmall}));
  cases->push_back(Update("ftml_update",
                          {{"lr", "0.05"}, {"t", "3"}, {"wd", "0.01"}, {"clip_grad", "1.5"}},
                          {s, s, s, s, s},
                          [](std::vector<double>* v) {
                            const double w = (*v)[0];
                            const double grad = ClipTo((*v)[1] + 0.01 * w, 1.5);
                            double& d = (*v)[2];
                            double& var = (*v)[3];
                            double& z = (*v)[4];
                            var = 0.999 * var + 0.001 * grad * grad;
                            const double d_t = (1 - std::pow(0.6, 3)) / 0.05 *
                                               (std::sqrt(var / (1 - std::pow(0.999, 3))) + 1e-8);
                            z = 0.6 * z + 0.4 * grad - (d_t - 0.6 * d) * w;
                            d = d_t;
                            return -z / d_t;
                          },
                          {kAny, kAny, kPositive, kPositive, kAny}));
  cases->push_back(Update(
      "ftrl_update", {{"lr", "0.1"}, {"lamda1", "0.3"}, {"beta", "1"}, {"wd", "0.01"}},
      {s, s, s, s},
      [](std::vector<double>* v) {
        const double r = (*v)[1];
        double& z = (*v)[2];
        double& n = (*v)[3];
        z += r - (std::sqrt(n + r * r) - std::sqrt(n)) * (*v)[0] / 0.1;
        n += r * r;
        return std::fabs(z) > 0.3 ? (SignOf(z) * 0.3 - z) / ((1 + std::sqrt(n)) / 0.1 + 0.01) : 0.0;
      },
      {kAny, kAny, kAny, kPositive}));

  // ---- LAMB
  const AttrDict phase1{{"t", "2"}, {"wd", "0.01"}, {"rescale_grad", "0.5"}};
  cases->push_back(Update("lamb_update_phase1", phase1, {s, s, s, s},
                          [](std::vector<double>* v) {
                            return LambDirection(v, (*v)[0], (*v)[1], 0.9, 0.999, 1e-6, 2, true,
                                                 0.01, 0.5, -1);
                          },
                          {kAny, kAny, kSmall, kPositive}));
  cases->push_back(Update(
      "lamb_update_phase1",
      {{"t", "2"}, {"wd", "0"}, {"bias_correction", "False"}, {"clip_gradient", "0.5"}},
      {s, s, s, s},
      [](std::vector<double>* v) {
        return LambDirection(v, (*v)[0], (*v)[1], 0.9, 0.999, 1e-6, 2, false, 0, 1, 0.5);
      },
      {kAny, kAny, kSmall, kPositive}, "no_bias_correction"));
  cases->push_back(Update("lamb_update_phase2", {{"lr", "0.01"}, {"lower_bound", "1.5"}},
                          {s, s, Shape{1}, Shape{1}},
                          [](std::vector<double>* v) {
                            return (*v)[0] - 0.01 * LambRatio((*v)[2], (*v)[3], 1.5, -1) * (*v)[1];
                          },
                          {kAny, kAny, kPositive, kPositive}));
  cases->push_back(Update(
      "lamb_update_phase2", {{"lr", "0.01"}, {"upper_bound", "0.7"}}, {s, s, Shape{1}, Shape{1}},
      [](std::vector<double>* v) {
        return (*v)[0] - 0.01 * LambRatio((*v)[2], (*v)[3], -1, 0.7) * (*v)[1];
      },
      {kAny, kAny, kPositive, kPositive}, "upper_bound"));
  {
    OpCase c = Update("mp_lamb_update_phase1", phase1, {s, s, s, s, s},
                      [](std::vector<double>* v) {
                        return LambDirection(v, (*v)[4], (*v)[1], 0.9, 0.999, 1e-6, 2, true, 0.01,
                                             0.5, -1);
                      },
                      {kAny, kAny, kSmall, kPositive, kAny});
    c.dtypes = {DType::kFloat16, DType::kFloat16, DType::kFloat32, DType::kFloat32,
                DType::kFloat32};
    cases->push_back(c);  // the direction is float32: the float32 tolerance holds
  }
  cases->push_back(MixedPrecision(
      Update("mp_lamb_update_phase2", {{"lr", "0.01"}}, {s, Shape{3, 4}, Shape{1}, Shape{1}, s},
             [](std::vector<double>* v) {
               return (*v)[4] - 0.01 * LambRatio((*v)[2], (*v)[3], -1, -1) * (*v)[1];
             },
             {kAny, kAny, kPositive, kPositive, kAny}),
      1));
}

HN_ERROR_CASES(OptimizerUpdates) {
  const Shape s{3, 4};
  cases->push_back(
      Rejected("sgd_update", {}, {s, s}, StatusCode::kInvalidArgument, {"sgd_update", "lr"}));
  cases->push_back(Rejected("sgd_mom_update", {{"lr", "0.1"}}, {s, s, Shape{4, 3}},
                            StatusCode::kShapeError, {"sgd_mom_update", "mom", "(4, 3)"}));
  cases->push_back(Rejected("adam_update", {{"lr", "0.1"}}, {s, s, s, s}, StatusCode::kTypeError,
                            {"adam_update", "float64"},
                            {DType::kFloat64, DType::kFloat64, DType::kFloat64, DType::kFloat64}));
  cases->push_back(Rejected("mp_sgd_update", {{"lr", "0.1"}}, {s, s, s}, StatusCode::kTypeError,
                            {"mp_sgd_update", "weight32", "float16"},
                            {DType::kFloat16, DType::kFloat16, DType::kFloat16}));
  cases->push_back(Rejected(
      "multi_sgd_update", {{"lrs", "(0.1,)"}, {"wds", "(0, 0)"}, {"num_weights", "2"}},
      {s, s, s, s}, StatusCode::kInvalidArgument, {"multi_sgd_update", "num_weights", "lrs"}));
  cases->push_back(Rejected("lamb_update_phase2", {{"lr", "0.1"}}, {s, s, Shape{2}, Shape{1}},
                            StatusCode::kShapeError, {"lamb_update_phase2", "r1", "one value"}));
}

}  // namespace conformance
}  // namespace hybridnet
