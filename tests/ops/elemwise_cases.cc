// Conformance cases: elementwise unary, binary, scalar ops and add_n.
#include <cmath>

#include "conformance.h"

namespace hybridnet {
namespace conformance {
namespace {

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Nonzero values of either sign, away from 0 (for division).
InputGen AwayFromZero() {
  return [](std::mt19937& rng, size_t, int64_t) {
    double m = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
    return (rng() & 1u) ? m : -m;
  };
}

// rhs (input 1) away from zero, lhs anywhere.
InputGen SafeDivisor() {
  return [](std::mt19937& rng, size_t input, int64_t) {
    double m = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
    if (input == 0) return std::uniform_real_distribution<double>(-2.0, 2.0)(rng);
    return (rng() & 1u) ? m : -m;
  };
}

RefFn Scalar(double s, std::function<double(double, double)> f) {
  const double sf = F32(s);  // kernels use the scalar as float32
  return Unary([sf, f](double x) { return f(x, sf); });
}

RefFn SumAll() {
  return [](const std::vector<RefTensor>& in) {
    RefTensor out(in[0].shape);
    for (const auto& t : in)
      for (int64_t i = 0; i < out.size(); ++i) out[i] += t[i];
    return std::vector<RefTensor>{out};
  };
}

}  // namespace

HN_CONFORMANCE_CASES(ElemwiseUnary) {
  const Shape s{2, 3, 4};
  auto relu = Unary([](double x) { return x > 0 ? x : 0.0; });
  cases->push_back(Case("relu", {}, {s}, relu));
  cases->push_back(Case("relu", {}, {{1}}, relu, "one_element"));
  cases->push_back(Case("sigmoid", {}, {s}, Unary(Sigmoid)));
  cases->push_back(WithGen(Case("sigmoid", {}, {{37}}, Unary(Sigmoid), "wide"), Uniform(-30, 30)));
  cases->push_back(Case("tanh", {}, {s}, Unary([](double x) { return std::tanh(x); })));
  cases->push_back(
      Case("softsign", {}, {s}, Unary([](double x) { return x / (1 + std::fabs(x)); })));
  cases->push_back(Case("exp", {}, {s}, Unary([](double x) { return std::exp(x); })));
  cases->push_back(Case("expm1", {}, {s}, Unary([](double x) { return std::expm1(x); })));
  cases->push_back(WithGen(Case("log", {}, {s}, Unary([](double x) { return std::log(x); })),
                           Uniform(0.1, 5)));
  cases->push_back(WithGen(Case("log1p", {}, {s}, Unary([](double x) { return std::log1p(x); })),
                           Uniform(-0.5, 5)));
  cases->push_back(WithGen(Case("sqrt", {}, {s}, Unary([](double x) { return std::sqrt(x); })),
                           Uniform(0, 5)));
  cases->push_back(
      WithGen(Case("rsqrt", {}, {s}, Unary([](double x) { return 1 / std::sqrt(x); })),
              Uniform(0.1, 5)));
  cases->push_back(Case("square", {}, {s}, Unary([](double x) { return x * x; })));
  cases->push_back(Case("abs", {}, {s}, Unary([](double x) { return std::fabs(x); })));
  cases->push_back(
      Case("sign", {}, {s}, Unary([](double x) { return x < 0 ? -1.0 : (x > 0 ? 1.0 : 0.0); })));
  cases->push_back(Case("negative", {}, {s}, Unary([](double x) { return -x; })));
  cases->push_back(WithGen(Case("reciprocal", {}, {s}, Unary([](double x) { return 1 / x; })),
                           AwayFromZero()));
  cases->push_back(Case("floor", {}, {s}, Unary([](double x) { return std::floor(x); })));
  cases->push_back(Case("ceil", {}, {s}, Unary([](double x) { return std::ceil(x); })));
  auto id = Unary([](double x) { return x; });
  cases->push_back(Case("_copy", {}, {s}, id));
  cases->push_back(Case("identity", {}, {{5}}, id, "alias"));
  cases->push_back(Case("BlockGrad", {}, {s}, id));
  cases->push_back(Case("stop_gradient", {}, {{3, 2}}, id, "alias"));
  cases->push_back(Case("clip", {{"a_min", "-0.5"}, {"a_max", "1"}}, {s},
                        Unary([](double x) { return x > 1 ? 1.0 : (x < -0.5 ? -0.5 : x); })));
  // a_min > a_max: the upper bound is tested first.
  cases->push_back(Case("clip", {{"a_min", "1"}, {"a_max", "-0.5"}}, {s},
                        Unary([](double x) { return x > -0.5 ? -0.5 : 1.0; }), "inverted"));
  // MobileNetV2's relu6.
  cases->push_back(WithGen(Case("clip", {{"a_max", "6"}, {"a_min", "0"}}, {{4, 8}},
                                Unary([](double x) { return x > 6 ? 6.0 : (x < 0 ? 0.0 : x); }),
                                "relu6"),
                           Uniform(-3, 9)));
}

HN_CONFORMANCE_CASES(ElemwiseBinary) {
  const Shape s{3, 4, 5};
  auto add = Binary([](double a, double b) { return a + b; });
  auto mul = Binary([](double a, double b) { return a * b; });
  cases->push_back(Case("elemwise_add", {}, {s, s}, add));
  cases->push_back(Case("_Plus", {}, {{7}, {7}}, add, "alias"));
  cases->push_back(Case("_plus", {}, {{2, 2}, {2, 2}}, add, "alias2"));
  auto sub = Binary([](double a, double b) { return a - b; });
  cases->push_back(Case("elemwise_sub", {}, {s, s}, sub));
  cases->push_back(Case("_Minus", {}, {{6}, {6}}, sub, "alias"));
  cases->push_back(Case("elemwise_mul", {}, {s, s}, mul));
  cases->push_back(Case("_Mul", {}, {{2, 3}, {2, 3}}, mul, "alias"));
  cases->push_back(WithGen(
      Case("elemwise_div", {}, {s, s}, Binary([](double a, double b) { return a / b; })),
      SafeDivisor()));
  cases->push_back(Case("add_n", {{"num_args", "3"}}, {s, s, s}, SumAll()));
  cases->push_back(Case("add_n", {{"num_args", "1"}}, {{4}}, SumAll(), "single"));
  cases->push_back(
      Case("ElementWiseSum", {{"num_args", "2"}}, {{2, 5}, {2, 5}}, SumAll(), "alias"));
  cases->push_back(Case("add_n", {{"num_args", "5"}}, {{9}, {9}, {9}, {9}, {9}}, SumAll(), "five"));
}

HN_CONFORMANCE_CASES(ScalarOps) {
  const Shape s{2, 3, 4};
  cases->push_back(Case("_plus_scalar", {{"scalar", "1.5"}}, {s},
                        Scalar(1.5, [](double x, double c) { return x + c; })));
  cases->push_back(Case("_PlusScalar", {{"scalar", "1"}}, {{5}},
                        Scalar(1, [](double x, double c) { return x + c; }), "alias"));
  cases->push_back(Case("_minus_scalar", {{"scalar", "0.3"}, {"is_int", "False"}}, {s},
                        Scalar(0.3, [](double x, double c) { return x - c; })));
  cases->push_back(Case("_rminus_scalar", {{"scalar", "2"}}, {s},
                        Scalar(2, [](double x, double c) { return c - x; })));
  cases->push_back(Case("_mul_scalar", {{"scalar", "-0.7"}}, {s},
                        Scalar(-0.7, [](double x, double c) { return x * c; })));
  cases->push_back(Case("_MulScalar", {}, {{3}},
                        Scalar(1, [](double x, double c) { return x * c; }), "default_scalar"));
  cases->push_back(Case("_div_scalar", {{"scalar", "3"}}, {s},
                        Scalar(3, [](double x, double c) { return x / c; })));
  cases->push_back(WithGen(Case("_rdiv_scalar", {{"scalar", "2.5"}}, {s},
                                Scalar(2.5, [](double x, double c) { return c / x; })),
                           AwayFromZero()));
  cases->push_back(WithGen(Case("_power_scalar", {{"scalar", "2.5"}}, {s},
                                Scalar(2.5, [](double x, double c) { return std::pow(x, c); })),
                           Uniform(0.1, 3)));
  cases->push_back(Case("_power_scalar", {{"scalar", "2"}}, {s},
                        Scalar(2, [](double x, double c) { return std::pow(x, c); }), "square"));
  cases->push_back(Case("_rpower_scalar", {{"scalar", "1.5"}}, {s},
                        Scalar(1.5, [](double x, double c) { return std::pow(c, x); })));
  cases->push_back(Case("_maximum_scalar", {{"scalar", "0.25"}}, {s},
                        Scalar(0.25, [](double x, double c) { return x > c ? x : c; })));
  cases->push_back(Case("_minimum_scalar", {{"scalar", "-0.25"}}, {s},
                        Scalar(-0.25, [](double x, double c) { return x < c ? x : c; })));
}

HN_ERROR_CASES(ElemwiseBinary) {
  cases->push_back(Rejected("elemwise_add", {}, {{2, 3}, {3, 2}}, StatusCode::kShapeError,
                            {"elemwise_add(node)", "(2, 3)", "(3, 2)"}));
}

}  // namespace conformance
}  // namespace hybridnet
