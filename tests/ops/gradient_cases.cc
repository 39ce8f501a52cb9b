// Conformance cases for the internal ops gradients are built from (never in a model file):
// _hn_reduce_sum_like, _backward_sum / _backward_mean, _backward_FullyConnected, the softmax
// backward ops and _backward_MakeLoss. The gradients themselves are checked by the harness's
// OpGradient tests on the forward ops' cases.
#include <algorithm>
#include <cmath>
#include <vector>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

// Sums in[0] over the axes in[1] is broadcast along (right-aligned, dims of 1).
std::vector<RefTensor> SumLikeRef(const std::vector<RefTensor>& in) {
  const Shape& data = in[0].shape;
  const Shape& like = in[1].shape;
  RefTensor out(like);
  const size_t pad = data.ndim() - like.ndim();
  for (int64_t i = 0; i < in[0].size(); ++i) {
    const std::vector<int64_t> idx = Unravel(i, data);
    int64_t o = 0;
    for (size_t k = 0; k < like.ndim(); ++k) o = o * like[k] + (like[k] == 1 ? 0 : idx[k + pad]);
    out[o] += in[0][i];
  }
  return {out};
}

// The gradient of a reduction over `reduced` axes of in[1]: each element gets the output
// gradient (in[0]) of the element it was reduced into, divided by the count for a mean.
RefFn ReduceBackwardRef(std::vector<bool> reduced, bool mean) {
  return [reduced, mean](const std::vector<RefTensor>& in) {
    const Shape& s = in[1].shape;
    RefTensor out(s);
    int64_t count = 1;
    for (size_t k = 0; k < s.ndim(); ++k) count *= reduced[k] ? s[k] : 1;
    for (int64_t i = 0; i < out.size(); ++i) {
      const std::vector<int64_t> idx = Unravel(i, s);
      int64_t o = 0;
      for (size_t k = 0; k < s.ndim(); ++k)
        if (!reduced[k]) o = o * s[k] + idx[k];
      out[i] = mean ? F32(in[0][o] / F32(static_cast<double>(count))) : in[0][o];
    }
    return std::vector<RefTensor>{out};
  };
}

// (out_grad (N, H), data (N, ...K), weight (H, K)[, bias]) -> d data, d weight[, d bias].
std::vector<RefTensor> FullyConnectedBackwardRef(const std::vector<RefTensor>& in) {
  const RefTensor& dy = in[0];
  const RefTensor& x = in[1];
  const RefTensor& w = in[2];
  const int64_t hidden = w.shape[0], k = w.shape[1], batch = x.size() / k;
  RefTensor dx(x.shape), dw(w.shape);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t j = 0; j < k; ++j) {
      double acc = 0;
      for (int64_t h = 0; h < hidden; ++h) acc += dy[n * hidden + h] * w[h * k + j];
      dx[n * k + j] = acc;
    }
  }
  for (int64_t h = 0; h < hidden; ++h) {
    for (int64_t j = 0; j < k; ++j) {
      double acc = 0;
      for (int64_t n = 0; n < batch; ++n) acc += dy[n * hidden + h] * x[n * k + j];
      dw[h * k + j] = acc;
    }
  }
  std::vector<RefTensor> out{dx, dw};
  if (in.size() > 3) {
    RefTensor db(in[3].shape);
    for (int64_t h = 0; h < hidden; ++h)
      for (int64_t n = 0; n < batch; ++n) db[h] += dy[n * hidden + h];
    out.push_back(db);
  }
  return out;
}

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kSoftmin };

// (out_grad, output) along the last axis, temperature t.
RefFn SoftmaxBackwardRef(SoftmaxKind kind, double t) {
  return [kind, t](const std::vector<RefTensor>& in) {
    const RefTensor& dy = in[0];
    const RefTensor& y = in[1];
    const int64_t size = y.shape[y.shape.ndim() - 1], lines = y.size() / size;
    RefTensor dx(y.shape);
    for (int64_t l = 0; l < lines; ++l) {
      double sum = 0;
      for (int64_t j = 0; j < size; ++j) {
        const int64_t i = l * size + j;
        sum += kind == SoftmaxKind::kLogSoftmax ? dy[i] : dy[i] * y[i];
      }
      for (int64_t j = 0; j < size; ++j) {
        const int64_t i = l * size + j;
        double g =
            kind == SoftmaxKind::kLogSoftmax ? dy[i] - std::exp(y[i]) * sum : y[i] * (dy[i] - sum);
        dx[i] = (kind == SoftmaxKind::kSoftmin ? -g : g) / t;
      }
    }
    return std::vector<RefTensor>{dx};
  };
}

RefFn Filled(double value) {
  return [value](const std::vector<RefTensor>& in) {
    RefTensor out(in[0].shape);
    for (double& v : out.v) v = value;
    return std::vector<RefTensor>{out};
  };
}

}  // namespace

HN_CONFORMANCE_CASES(GradientOps) {
  const DType f64 = DType::kFloat64;
  cases->push_back(InternalCase(Case("_hn_reduce_sum_like", {}, {{2, 3, 4}, {3, 1}}, SumLikeRef)));
  cases->push_back(
      InternalCase(Case("_hn_reduce_sum_like", {}, {{2, 3}, {2, 3}}, SumLikeRef, "same_shape")));
  cases->push_back(
      InternalCase(Case("_hn_reduce_sum_like", {}, {{5, 4}, {1}}, SumLikeRef, "to_one")));
  cases->push_back(InternalCase(WithDTypes(
      Case("_hn_reduce_sum_like", {}, {{3, 4, 2}, {1, 4, 1}}, SumLikeRef, "float64"), {f64, f64})));

  cases->push_back(InternalCase(Case("_backward_sum", {{"axis", "(1,)"}}, {{2, 4}, {2, 3, 4}},
                                     ReduceBackwardRef({false, true, false}, false))));
  cases->push_back(InternalCase(Case("_backward_sum", {{"axis", "(0, 2)"}, {"keepdims", "True"}},
                                     {{1, 3, 1}, {2, 3, 4}},
                                     ReduceBackwardRef({true, false, true}, false), "keepdims")));
  cases->push_back(InternalCase(
      Case("_backward_sum", {}, {{1}, {2, 3}}, ReduceBackwardRef({true, true}, false), "all")));
  // Runs of several axes: trailing reduced ones (one value repeated), trailing kept ones (copied).
  cases->push_back(InternalCase(Case("_backward_sum", {{"axis", "(1, 2)"}}, {{2}, {2, 3, 4}},
                                     ReduceBackwardRef({false, true, true}, false), "trailing")));
  cases->push_back(InternalCase(Case("_backward_mean", {{"axis", "(0,)"}}, {{3, 4}, {2, 3, 4}},
                                     ReduceBackwardRef({true, false, false}, true), "leading")));
  cases->push_back(
      InternalCase(Case("_backward_mean", {{"axis", "(1,)"}, {"exclude", "True"}}, {{3}, {2, 3, 4}},
                        ReduceBackwardRef({true, false, true}, true))));

  cases->push_back(InternalCase(Case("_backward_FullyConnected", {{"num_hidden", "4"}},
                                     {{2, 4}, {2, 3}, {4, 3}, {4}}, FullyConnectedBackwardRef)));
  cases->push_back(InternalCase(
      Case("_backward_FullyConnected", {{"num_hidden", "3"}, {"no_bias", "True"}},
           {{2, 3}, {2, 2, 2}, {3, 4}}, FullyConnectedBackwardRef, "no_bias_flatten")));
  cases->push_back(InternalCase(
      Case("_backward_FullyConnected", {{"num_hidden", "2"}, {"flatten", "False"}},
           {{2, 3, 2}, {2, 3, 5}, {2, 5}, {2}}, FullyConnectedBackwardRef, "no_flatten")));
  cases->push_back(InternalCase(
      WithDTypes(Case("_backward_FullyConnected", {{"num_hidden", "4"}},
                      {{2, 4}, {2, 3}, {4, 3}, {4}}, FullyConnectedBackwardRef, "float64"),
                 {f64, f64, f64, f64})));

  cases->push_back(InternalCase(Case("_backward_softmax", {}, {{3, 4}, {3, 4}},
                                     SoftmaxBackwardRef(SoftmaxKind::kSoftmax, 1.0))));
  cases->push_back(
      InternalCase(Case("_backward_softmax", {{"temperature", "2"}}, {{2, 5}, {2, 5}},
                        SoftmaxBackwardRef(SoftmaxKind::kSoftmax, 2.0), "temperature")));
  cases->push_back(InternalCase(Case("_backward_log_softmax", {}, {{3, 4}, {3, 4}},
                                     SoftmaxBackwardRef(SoftmaxKind::kLogSoftmax, 1.0))));
  cases->push_back(
      InternalCase(WithDTypes(Case("_backward_log_softmax", {}, {{2, 3}, {2, 3}},
                                   SoftmaxBackwardRef(SoftmaxKind::kLogSoftmax, 1.0), "float64"),
                              {f64, f64})));
  cases->push_back(InternalCase(Case("_backward_softmin", {}, {{3, 4}, {3, 4}},
                                     SoftmaxBackwardRef(SoftmaxKind::kSoftmin, 1.0))));

  cases->push_back(
      InternalCase(Case("_backward_MakeLoss", {{"grad_scale", "2"}}, {{2, 3}}, Filled(2.0))));
  cases->push_back(InternalCase(
      Case("_backward_MakeLoss", {{"normalization", "batch"}}, {{4, 3}}, Filled(0.25), "batch")));
  cases->push_back(InternalCase(
      WithGen(Case("_backward_MakeLoss", {{"normalization", "valid"}, {"valid_thresh", "0.5"}},
                   {{2, 4}}, Filled(1.0 / 3.0), "valid"),
              [](std::mt19937&, size_t, int64_t j) { return j < 3 ? 1.0 : 0.0; })));
}

HN_ERROR_CASES(GradientOps) {
  cases->push_back(Rejected("_hn_reduce_sum_like", {}, {{2, 3}, {4}}, StatusCode::kShapeError,
                            {"_hn_reduce_sum_like(node)", "(2, 3)", "(4,)"}));
  cases->push_back(Rejected("_backward_sum", {{"axis", "(1,)"}}, {{3}, {2, 3}},
                            StatusCode::kShapeError, {"_backward_sum(node)", "(2,)"}));
  cases->push_back(Rejected("_backward_FullyConnected", {{"num_hidden", "4"}},
                            {{2, 5}, {2, 3}, {4, 3}, {4}}, StatusCode::kShapeError,
                            {"_backward_FullyConnected(node)"}));
}

}  // namespace conformance
}  // namespace hybridnet
