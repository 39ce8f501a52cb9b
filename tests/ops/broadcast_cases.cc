// Conformance cases: broadcast_* binary ops and broadcast_to.
#include <algorithm>

#include "conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

// Element of `t` seen at output multi-index `idx` under numpy broadcasting.
double At(const RefTensor& t, const std::vector<int64_t>& idx) {
  const size_t pad = idx.size() - t.shape.ndim();
  int64_t flat = 0;
  for (size_t k = 0; k < t.shape.ndim(); ++k) {
    int64_t i = t.shape[k] == 1 ? 0 : idx[k + pad];
    flat = flat * t.shape[k] + i;
  }
  return t[flat];
}

Shape BroadcastShape(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.ndim(), b.ndim());
  std::vector<int64_t> d(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t x = k + a.ndim() >= n ? a[k + a.ndim() - n] : 1;
    int64_t y = k + b.ndim() >= n ? b[k + b.ndim() - n] : 1;
    d[k] = std::max(x, y);
  }
  return Shape(d);
}

RefFn Broadcast(std::function<double(double, double)> f) {
  return [f](const std::vector<RefTensor>& in) {
    RefTensor out(BroadcastShape(in[0].shape, in[1].shape));
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> idx = Unravel(i, out.shape);
      out[i] = f(At(in[0], idx), At(in[1], idx));
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn BroadcastTo(Shape target) {
  return [target](const std::vector<RefTensor>& in) {
    RefTensor out(target);
    for (int64_t i = 0; i < out.size(); ++i) out[i] = At(in[0], Unravel(i, target));
    return std::vector<RefTensor>{out};
  };
}

}  // namespace

HN_CONFORMANCE_CASES(Broadcast) {
  auto add = Broadcast([](double a, double b) { return a + b; });
  auto sub = Broadcast([](double a, double b) { return a - b; });
  auto mul = Broadcast([](double a, double b) { return a * b; });
  auto div = Broadcast([](double a, double b) { return a / b; });
  auto max = Broadcast([](double a, double b) { return a > b ? a : b; });
  auto min = Broadcast([](double a, double b) { return a < b ? a : b; });
  cases->push_back(Case("broadcast_add", {}, {{2, 3}, {1, 3}}, add));
  cases->push_back(Case("broadcast_add", {}, {{2, 1, 4}, {3, 1}}, add, "both_sides"));
  cases->push_back(Case("broadcast_add", {}, {{4}, {2, 3, 4}}, add, "pad_lhs"));
  cases->push_back(Case("broadcast_add", {}, {{2, 3, 4}, {2, 3, 4}}, add, "same"));
  cases->push_back(Case("broadcast_add", {}, {{2, 2}, {1}}, add, "scalar_like"));
  cases->push_back(Case("broadcast_plus", {}, {{3, 1, 2, 1}, {1, 4, 1, 5}}, add, "alias"));
  cases->push_back(Case("broadcast_sub", {}, {{2, 3, 4}, {2, 1, 4}}, sub));
  cases->push_back(Case("broadcast_minus", {}, {{1, 5}, {3, 1}}, sub, "alias"));
  cases->push_back(Case("broadcast_mul", {}, {{2, 3, 4, 5}, {3, 1, 1}}, mul));
  cases->push_back(Case("broadcast_mul", {}, {{1, 1}, {1, 1}}, mul, "ones"));
  cases->push_back(WithGen(Case("broadcast_div", {}, {{4, 6}, {4, 1}}, div),
                           [](std::mt19937& rng, size_t input, int64_t) {
                             double v = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
                             return input == 1 ? v : v - 1.25;
                           }));
  cases->push_back(Case("broadcast_maximum", {}, {{3, 4}, {4}}, max));
  cases->push_back(Case("broadcast_minimum", {}, {{2, 1, 3}, {1, 5, 1}}, min));
  cases->push_back(Case("broadcast_to", {{"shape", "(2, 4, 3)"}}, {{2, 1, 3}},
                        BroadcastTo({2, 4, 3})));
  cases->push_back(Case("broadcast_to", {{"shape", "(0, 5)"}}, {{3, 1}}, BroadcastTo({3, 5}),
                        "zero_keeps"));
  cases->push_back(Case("broadcast_to", {{"shape", "(4, 2, 3)"}}, {{1, 2, 3}},
                        BroadcastTo({4, 2, 3}), "leading"));
}

HN_ERROR_CASES(Broadcast) {
  cases->push_back(Rejected("broadcast_add", {}, {{2, 3}, {4, 3}}, StatusCode::kShapeError,
                            {"broadcast_add(node)", "(2, 3)", "(4, 3)"}));
  cases->push_back(Rejected("broadcast_to", {{"shape", "(2, 4)"}}, {{2, 3}},
                            StatusCode::kShapeError, {"broadcast_to", "(2, 3)"}));
}

}  // namespace conformance
}  // namespace hybridnet
