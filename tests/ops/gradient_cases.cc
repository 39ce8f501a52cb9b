// Conformance cases for the internal ops gradients are built from (never in a model file):
// _hn_reduce_sum_like and _backward_sum / _backward_mean. The gradients themselves are checked
// by the harness's OpGradient tests on the forward ops' cases.
#include <algorithm>
#include <cmath>
#include <vector>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

OpCase Internal(OpCase c) {
  c.check_json = false;
  return c;
}

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

}  // namespace

HN_CONFORMANCE_CASES(GradientOps) {
  const DType f64 = DType::kFloat64;
  cases->push_back(Internal(Case("_hn_reduce_sum_like", {}, {{2, 3, 4}, {3, 1}}, SumLikeRef)));
  cases->push_back(
      Internal(Case("_hn_reduce_sum_like", {}, {{2, 3}, {2, 3}}, SumLikeRef, "same_shape")));
  cases->push_back(Internal(Case("_hn_reduce_sum_like", {}, {{5, 4}, {1}}, SumLikeRef, "to_one")));
  cases->push_back(Internal(WithDTypes(
      Case("_hn_reduce_sum_like", {}, {{3, 4, 2}, {1, 4, 1}}, SumLikeRef, "float64"), {f64, f64})));

  cases->push_back(Internal(Case("_backward_sum", {{"axis", "(1,)"}}, {{2, 4}, {2, 3, 4}},
                                 ReduceBackwardRef({false, true, false}, false))));
  cases->push_back(Internal(Case("_backward_sum", {{"axis", "(0, 2)"}, {"keepdims", "True"}},
                                 {{1, 3, 1}, {2, 3, 4}},
                                 ReduceBackwardRef({true, false, true}, false), "keepdims")));
  cases->push_back(Internal(
      Case("_backward_sum", {}, {{1}, {2, 3}}, ReduceBackwardRef({true, true}, false), "all")));
  cases->push_back(Internal(Case("_backward_mean", {{"axis", "(1,)"}, {"exclude", "True"}},
                                 {{3}, {2, 3, 4}}, ReduceBackwardRef({true, false, true}, true))));
}

HN_ERROR_CASES(GradientOps) {
  cases->push_back(Rejected("_hn_reduce_sum_like", {}, {{2, 3}, {4}}, StatusCode::kShapeError,
                            {"_hn_reduce_sum_like(node)", "(2, 3)", "(4,)"}));
  cases->push_back(Rejected("_backward_sum", {{"axis", "(1,)"}}, {{3}, {2, 3}},
                            StatusCode::kShapeError, {"_backward_sum(node)", "(2,)"}));
}

}  // namespace conformance
}  // namespace hybridnet
