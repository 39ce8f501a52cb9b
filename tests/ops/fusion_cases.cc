// Conformance cases for the internal _hn_convolution_act (made by the fusion pass; fusion_test.cc
// tests the pass over whole graphs).
#include <cmath>
#include <string>

#include "conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

int64_t Offset(const Shape& s, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t k = 0; k < s.ndim(); ++k) off = off * s[k] + idx[k];
  return off;
}

// 2-D convolution (stride, pad, groups) followed by an activation, in double.
RefFn ConvActRef(
    int64_t stride, int64_t pad, int64_t groups, bool bias, std::function<double(double)> act) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& xs = in[0].shape;
    const Shape& ws = in[1].shape;
    const int64_t F = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
    const int64_t oh = (xs[2] + 2 * pad - kh) / stride + 1,
                  ow = (xs[3] + 2 * pad - kw) / stride + 1;
    RefTensor out{Shape{xs[0], F, oh, ow}};
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> o = Unravel(i, out.shape);
      const int64_t grp = o[1] / (F / groups);
      double acc = bias ? in[2][o[1]] : 0.0;
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t a = 0; a < kh; ++a)
          for (int64_t b = 0; b < kw; ++b) {
            const int64_t y = o[2] * stride - pad + a, x = o[3] * stride - pad + b;
            if (y < 0 || y >= xs[2] || x < 0 || x >= xs[3]) continue;
            acc +=
                in[0][Offset(xs, {o[0], grp * cg + c, y, x})] * in[1][Offset(ws, {o[1], c, a, b})];
          }
      out[i] = act(acc);
    }
    return std::vector<RefTensor>{out};
  };
}

OpCase Internal(OpCase c) {
  c.check_json = false;
  return c;
}

HN_CONFORMANCE_CASES(ConvolutionAct) {
  auto relu = [](double v) { return v > 0 ? v : 0.0; };
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  cases->push_back(Internal(
      Case("_hn_convolution_act",
           {{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"pad", "(1, 1)"}, {"act_type", "relu"}},
           {{2, 3, 6, 5}, {4, 3, 3, 3}, {4}}, ConvActRef(1, 1, 1, true, relu), "relu")));
  cases->push_back(Internal(Case("_hn_convolution_act",
                                 {{"kernel", "(3, 3)"},
                                  {"num_filter", "4"},
                                  {"stride", "(2, 2)"},
                                  {"num_group", "2"},
                                  {"no_bias", "True"},
                                  {"act_type", "sigmoid"}},
                                 {{1, 4, 7, 7}, {4, 2, 3, 3}}, ConvActRef(2, 0, 2, false, sigmoid),
                                 "sigmoid_groups")));
}

}  // namespace
}  // namespace conformance
}  // namespace hybridnet
