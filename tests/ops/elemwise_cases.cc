// Conformance cases: elementwise unary, binary, scalar ops and add_n, on every numeric dtype
// (integer results follow MXNet's kernels: wrap-around, truncation; see reference_helpers.h).
#include <cmath>
#include <limits>

#include "conformance.h"
#include "reference_helpers.h"

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

RefFn SumAll(DType d = DType::kFloat32) {
  return [d](const std::vector<RefTensor>& in) {
    RefTensor out(in[0].shape);
    for (const auto& t : in)
      for (int64_t i = 0; i < out.size(); ++i) out[i] = ConvertTo(out[i] + t[i], d);
    return std::vector<RefTensor>{out};
  };
}

// The scalar as the kernel sees it: converted to the input dtype.
RefFn ScalarAs(DType d, double s, std::function<double(double, double)> f) {
  const double sd = ConvertTo(s, d);
  return Unary([d, sd, f](double x) { return ConvertTo(f(x, sd), d); });
}

// Integer division truncating toward zero, x / 0 = 0.
double IntDiv(double a, double b) { return b == 0 ? 0 : std::trunc(a / b); }

// Nonzero integers of either sign in [1, 9].
InputGen NonzeroIntegers() {
  return [](std::mt19937& rng, size_t, int64_t) {
    const double m = std::uniform_int_distribution<int>(1, 9)(rng);
    return (rng() & 1u) ? m : -m;
  };
}

// lhs integers in [-20, 20], rhs nonzero integers in [-6, 6].
InputGen IntegerDivision() {
  return [](std::mt19937& rng, size_t input, int64_t) {
    if (input == 0) return static_cast<double>(std::uniform_int_distribution<int>(-20, 20)(rng));
    const double m = std::uniform_int_distribution<int>(1, 6)(rng);
    return (rng() & 1u) ? m : -m;
  };
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

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
  cases->push_back(
      WithGen(Case("log", {}, {s}, Unary([](double x) { return std::log(x); })), Uniform(0.1, 5)));
  cases->push_back(WithGen(Case("log1p", {}, {s}, Unary([](double x) { return std::log1p(x); })),
                           Uniform(-0.5, 5)));
  cases->push_back(
      WithGen(Case("sqrt", {}, {s}, Unary([](double x) { return std::sqrt(x); })), Uniform(0, 5)));
  cases->push_back(WithGen(Case("rsqrt", {}, {s}, Unary([](double x) { return 1 / std::sqrt(x); })),
                           Uniform(0.1, 5)));
  cases->push_back(Case("square", {}, {s}, Unary([](double x) { return x * x; })));
  cases->push_back(Case("abs", {}, {s}, Unary([](double x) { return std::fabs(x); })));
  cases->push_back(
      Case("sign", {}, {s}, Unary([](double x) { return x < 0 ? -1.0 : (x > 0 ? 1.0 : 0.0); })));
  cases->push_back(Case("negative", {}, {s}, Unary([](double x) { return -x; })));
  cases->push_back(
      WithGen(Case("reciprocal", {}, {s}, Unary([](double x) { return 1 / x; })), AwayFromZero()));
  cases->push_back(Case("floor", {}, {s}, Unary([](double x) { return std::floor(x); })));
  cases->push_back(Case("ceil", {}, {s}, Unary([](double x) { return std::ceil(x); })));
  auto id = Unary([](double x) { return x; });
  cases->push_back(Case("_copy", {}, {s}, id));
  cases->push_back(Case("identity", {}, {{5}}, id, "alias"));
  cases->push_back(WithGradient(Case("BlockGrad", {}, {s}, id), ScaledOutGrad(0)));
  cases->push_back(
      WithGradient(Case("stop_gradient", {}, {{3, 2}}, id, "alias"), ScaledOutGrad(0)));
  cases->push_back(Case("clip", {{"a_min", "-0.5"}, {"a_max", "1"}}, {s},
                        Unary([](double x) { return x > 1 ? 1.0 : (x < -0.5 ? -0.5 : x); })));
  // a_min > a_max: the upper bound is tested first.
  cases->push_back(Case("clip", {{"a_min", "1"}, {"a_max", "-0.5"}}, {s},
                        Unary([](double x) { return x > -0.5 ? -0.5 : 1.0; }), "inverted"));
  // MobileNetV2's relu6.
  cases->push_back(
      WithGen(Case("clip", {{"a_max", "6"}, {"a_min", "0"}}, {{4, 8}},
                   Unary([](double x) { return x > 6 ? 6.0 : (x < 0 ? 0.0 : x); }), "relu6"),
              Uniform(-3, 9)));

  // Other dtypes: integers compute the float formulas and truncate (MXNet's kernels).
  const DType i8 = DType::kInt8, u8 = DType::kUint8, i32 = DType::kInt32, i64 = DType::kInt64,
              f64 = DType::kFloat64;
  cases->push_back(
      WithDTypes(WithGen(Case("relu", {}, {s}, relu, "int32"), Integers(-50, 50)), {i32}));
  cases->push_back(
      WithDTypes(WithGen(Case("relu", {}, {{17}}, relu, "int8"), Integers(-128, 127)), {i8}));
  cases->push_back(WithDTypes(Case("relu", {}, {s}, relu, "float64"), {f64}));
  cases->push_back(
      WithGen(Case("relu", {}, {{6}},
                   Unary([](double x) { return (x > 0 || std::isnan(x)) ? x : 0.0; }), "nan"),
              Values({{kNaN, -1, 0, 2, -kNaN, 3}})));
  cases->push_back(WithDTypes(Case("sigmoid", {}, {s}, Unary(Sigmoid), "float64"), {f64}));
  cases->push_back(WithDTypes(
      WithGen(Case("sigmoid", {}, {s}, UnaryAs(i32, Sigmoid), "int32"), Integers(-3, 800)), {i32}));
  cases->push_back(WithDTypes(
      WithGen(Case("exp", {}, {s}, UnaryAs(i32, [](double x) { return std::exp(x); }), "int32"),
              Integers(-3, 12)),
      {i32}));
  cases->push_back(WithDTypes(
      WithGen(
          Case("exp", {}, {{9}}, UnaryAs(i8, [](double x) { return std::exp(x); }), "int8_wraps"),
          Integers(0, 5)),
      {i8}));
  cases->push_back(WithDTypes(
      WithGen(Case("sqrt", {}, {s}, UnaryAs(i64, [](double x) { return std::sqrt(x); }), "int64"),
              Integers(0, 200)),
      {i64}));
  cases->push_back(WithDTypes(
      WithGen(Case("log", {}, {s}, UnaryAs(u8, [](double x) { return std::log(x); }), "uint8"),
              Integers(1, 255)),
      {u8}));
  cases->push_back(WithDTypes(
      WithGen(Case("log", {}, {s}, Unary([](double x) { return std::log(x); }), "float64"),
              Uniform(0.01, 9)),
      {f64}));
  cases->push_back(WithDTypes(
      WithGen(Case("abs", {}, {s}, UnaryAs(i8, [](double x) { return std::fabs(x); }), "int8"),
              Integers(-127, 127)),
      {i8}));
  cases->push_back(
      WithDTypes(WithGen(Case("sign", {}, {s},
                              UnaryAs(i32, [](double x) { return x < 0 ? -1 : (x > 0); }), "int32"),
                         Integers(-2, 2)),
                 {i32}));
  cases->push_back(WithDTypes(
      WithGen(Case("sign", {}, {{8}}, UnaryAs(u8, [](double x) { return x > 0 ? 1 : 0; }), "uint8"),
              Integers(0, 3)),
      {u8}));
  cases->push_back(WithDTypes(
      WithGen(Case("negative", {}, {s}, UnaryAs(u8, [u8](double x) { return WrapTo(-x, u8); }),
                   "uint8_wraps"),
              Integers(0, 255)),
      {u8}));
  cases->push_back(WithDTypes(
      WithGen(Case("negative", {}, {s}, UnaryAs(i64, [](double x) { return -x; }), "int64"),
              Integers(-1000000, 1000000)),
      {i64}));
  cases->push_back(WithDTypes(
      WithGen(Case("square", {}, {s}, UnaryAs(i32, [](double x) { return x * x; }), "int32"),
              Integers(-300, 300)),
      {i32}));
  cases->push_back(WithDTypes(
      WithGen(Case("reciprocal", {}, {s}, UnaryAs(i32, [](double x) { return 1 / x; }), "int32"),
              NonzeroIntegers()),
      {i32}));
  cases->push_back(WithDTypes(
      WithGen(Case("rsqrt", {}, {s}, Unary([](double x) { return 1 / std::sqrt(x); }), "float64"),
              Uniform(0.1, 5)),
      {f64}));
  cases->push_back(
      WithDTypes(WithGen(Case("floor", {}, {s}, UnaryAs(i64, [](double x) { return x; }), "int64"),
                         Integers(-99, 99)),
                 {i64}));
  cases->push_back(WithDTypes(
      Case("ceil", {}, {s}, Unary([](double x) { return std::ceil(x); }), "float64"), {f64}));
  cases->push_back(WithDTypes(
      WithGen(Case("tanh", {}, {s}, UnaryAs(i32, [](double x) { return std::tanh(x); }), "int32"),
              Integers(-3, 3)),
      {i32}));
  cases->push_back(WithDTypes(
      WithGen(Case("softsign", {}, {s},
                   UnaryAs(i64, [](double x) { return x / (1 + std::fabs(x)); }), "int64"),
              Integers(-9, 9)),
      {i64}));
  cases->push_back(WithDTypes(
      WithGen(Case("expm1", {}, {s}, UnaryAs(i32, [](double x) { return std::expm1(x); }), "int32"),
              Integers(-4, 8)),
      {i32}));
  cases->push_back(WithDTypes(
      WithGen(Case("log1p", {}, {s}, UnaryAs(i32, [](double x) { return std::log1p(x); }), "int32"),
              Integers(0, 1000)),
      {i32}));
  cases->push_back(
      WithDTypes(WithGen(Case("_copy", {}, {s}, id, "int64"), Integers(-5, 5)), {i64}));
  cases->push_back(
      WithDTypes(WithGen(Case("BlockGrad", {}, {s}, id, "uint8"), Integers(0, 255)), {u8}));
  cases->push_back(Case("_sparse_relu", {}, {{5}}, relu, "sparse_alias"));
  // The bounds are converted to the dtype: -1.5 -> -1, 2.7 -> 2.
  cases->push_back(WithDTypes(
      WithGen(Case("clip", {{"a_min", "-1.5"}, {"a_max", "2.7"}}, {s},
                   Unary([](double x) { return x > 2 ? 2.0 : (x < -1 ? -1.0 : x); }), "int32"),
              Integers(-5, 5)),
      {i32}));
  cases->push_back(WithDTypes(
      Case("clip", {{"a_min", "-0.25"}, {"a_max", "0.5"}}, {s},
           Unary([](double x) { return x > 0.5 ? 0.5 : (x < -0.25 ? -0.25 : x); }), "float64"),
      {f64}));
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
  cases->push_back(
      WithGen(Case("elemwise_div", {}, {s, s}, Binary([](double a, double b) { return a / b; })),
              SafeDivisor()));
  cases->push_back(Case("add_n", {{"num_args", "3"}}, {s, s, s}, SumAll()));
  cases->push_back(Case("add_n", {{"num_args", "1"}}, {{4}}, SumAll(), "single"));
  cases->push_back(
      Case("ElementWiseSum", {{"num_args", "2"}}, {{2, 5}, {2, 5}}, SumAll(), "alias"));
  cases->push_back(Case("add_n", {{"num_args", "5"}}, {{9}, {9}, {9}, {9}, {9}}, SumAll(), "five"));

  const DType i8 = DType::kInt8, u8 = DType::kUint8, i32 = DType::kInt32, i64 = DType::kInt64,
              f64 = DType::kFloat64;
  // Integers wrap around.
  cases->push_back(WithDTypes(
      WithGen(Case("elemwise_add", {}, {s, s},
                   Binary([i8](double a, double b) { return WrapTo(a + b, i8); }), "int8_wraps"),
              Integers(-128, 127)),
      {i8, i8}));
  cases->push_back(WithDTypes(
      WithGen(Case("elemwise_sub", {}, {s, s},
                   Binary([u8](double a, double b) { return WrapTo(a - b, u8); }), "uint8_wraps"),
              Integers(0, 255)),
      {u8, u8}));
  cases->push_back(WithDTypes(
      WithGen(Case("elemwise_mul", {}, {s, s}, mul, "int32"), Integers(-1000, 1000)), {i32, i32}));
  cases->push_back(WithDTypes(Case("elemwise_mul", {}, {s, s}, mul, "float64"), {f64, f64}));
  cases->push_back(WithDTypes(
      WithGen(Case("elemwise_add", {}, {s, s}, add, "int64"), Integers(-1000000000, 1000000000)),
      {i64, i64}));
  cases->push_back(
      WithDTypes(WithGen(Case("elemwise_div", {}, {s, s}, Binary(IntDiv), "int32_truncates"),
                         IntegerDivision()),
                 {i32, i32}));
  cases->push_back(
      WithDTypes(WithGen(Case("elemwise_div", {}, {s, s},
                              Binary([](double a, double b) { return a / b; }), "float64"),
                         SafeDivisor()),
                 {f64, f64}));
  cases->push_back(NotInMXNet(
      WithDTypes(
          WithGen(Case("elemwise_div", {}, {{6}, {6}}, BinaryAs(i32, IntDiv), "int32_by_zero"),
                  Values({{7, -7, 0, 5, -2147483648.0, 3}, {0, 0, 0, 2, -1, -1}})),
          {i32, i32}),
      "MXNet's process dies (SIGFPE) on integer division by zero and INT_MIN / -1; here x / 0 "
      "= 0 and INT_MIN / -1 wraps to INT_MIN"));
  cases->push_back(
      WithDTypes(WithGen(Case("add_n", {{"num_args", "3"}}, {s, s, s}, SumAll(i8), "int8_wraps"),
                         Integers(-128, 127)),
                 {i8, i8, i8}));
  cases->push_back(
      WithDTypes(Case("add_n", {{"num_args", "2"}}, {s, s}, SumAll(f64), "float64"), {f64, f64}));
  cases->push_back(
      Case("_sparse_add_n", {{"num_args", "2"}}, {{3}, {3}}, SumAll(), "alias_sparse"));
  cases->push_back(NoMxnetGradient(Case("_grad_add", {}, {s, s}, add),
                                   "MXNet registers no gradient for _grad_add"));
  cases->push_back(WithDTypes(
      WithGen(Case("_grad_add", {}, {s, s}, add, "int32"), Integers(-50, 50)), {i32, i32}));
  cases->push_back(WithGen(
      Case("_scatter_elemwise_div", {}, {s, s}, Binary([](double a, double b) { return a / b; })),
      SafeDivisor()));
  cases->push_back(
      WithDTypes(WithGen(Case("_scatter_elemwise_div", {}, {s, s}, Binary(IntDiv), "int64"),
                         IntegerDivision()),
                 {i64, i64}));

  auto pow = Binary([](double a, double b) { return std::pow(a, b); });
  cases->push_back(
      WithGen(Case("_power", {}, {s, s}, pow), [](std::mt19937& rng, size_t input, int64_t) {
        return input == 0 ? std::uniform_real_distribution<double>(0.1, 3)(rng)
                          : std::uniform_real_distribution<double>(-2, 2)(rng);
      }));
  cases->push_back(WithGen(Case("_Power", {}, {{6}, {6}}, pow, "alias_negative_base"),
                           Values({{-2, -1.5, -3, 0, 2, 4}, {2, 3, 0.5, 2, -1, 0.5}})));
  cases->push_back(WithDTypes(
      WithGen(Case("_power", {}, {s, s},
                   BinaryAs(i32, [](double a, double b) { return std::pow(a, b); }), "int32"),
              [](std::mt19937& rng, size_t input, int64_t) {
                return static_cast<double>(input == 0
                                               ? std::uniform_int_distribution<int>(-5, 5)(rng)
                                               : std::uniform_int_distribution<int>(0, 4)(rng));
              }),
      {i32, i32}));
  cases->push_back(
      WithDTypes(WithGen(Case("_power", {}, {s, s}, pow, "float64"), Uniform(0.5, 2)), {f64, f64}));

  auto mod = Binary(PyMod);
  cases->push_back(WithGen(Case("_mod", {}, {s, s}, mod), SafeDivisor()));
  cases->push_back(WithGen(Case("_Mod", {}, {{8}, {8}}, mod, "alias_signs_and_zero"),
                           Values({{5, -5, 5, -5, 4.5, -0.5, 3, 6}, {3, 3, -3, -3, 2, 2, 0, 3}})));
  cases->push_back(
      WithDTypes(WithGen(Case("_mod", {}, {s, s}, mod, "int32"), IntegerDivision()), {i32, i32}));
  cases->push_back(WithDTypes(WithGen(Case("_mod", {}, {s, s}, mod, "uint8"),
                                      [](std::mt19937& rng, size_t input, int64_t) {
                                        return static_cast<double>(
                                            std::uniform_int_distribution<int>(
                                                static_cast<int>(input), 255)(rng));
                                      }),
                              {u8, u8}));
  cases->push_back(
      WithDTypes(WithGen(Case("_mod", {}, {s, s}, mod, "float64"), SafeDivisor()), {f64, f64}));

  auto max = Binary([](double a, double b) { return (a > b || std::isnan(a)) ? a : b; });
  auto min = Binary([](double a, double b) { return (a < b || std::isnan(a)) ? a : b; });
  cases->push_back(Case("_maximum", {}, {s, s}, max));
  cases->push_back(Case("_minimum", {}, {s, s}, min));
  cases->push_back(WithGen(Case("_Maximum", {}, {{4}, {4}}, max, "alias_nan"),
                           Values({{kNaN, 1, kNaN, 2}, {1, kNaN, kNaN, 3}})));
  cases->push_back(WithGen(Case("_Minimum", {}, {{4}, {4}}, min, "alias_nan"),
                           Values({{kNaN, 1, kNaN, 2}, {1, kNaN, kNaN, 3}})));
  // relu's gradient from its output: lhs where rhs > 0, lhs * 0 where rhs <= 0, NaN where rhs is.
  auto relu_grad =
      Binary([](double dy, double y) { return dy * (std::isnan(y) ? y : (y > 0 ? 1.0 : 0.0)); });
  cases->push_back(Case("_backward_relu", {}, {s, s}, relu_grad));
  cases->push_back(WithGen(Case("_backward_relu", {}, {{6}, {6}}, relu_grad, "zero_nan"),
                           Values({{1, 2, -3, kNaN, 5, kNaN}, {0, 1, kNaN, 2, -1, -2}})));
  cases->push_back(WithDTypes(
      WithGen(Case("_maximum", {}, {s, s}, max, "int8"), Integers(-128, 127)), {i8, i8}));
  cases->push_back(
      WithDTypes(WithGen(Case("_minimum", {}, {s, s}, min, "int64"), Integers(-9, 9)), {i64, i64}));

  auto hypot = Binary([](double a, double b) { return std::hypot(a, b); });
  cases->push_back(Case("_hypot", {}, {s, s}, hypot));
  cases->push_back(Case("_Hypot", {}, {{5}, {5}}, hypot, "alias"));
  cases->push_back(WithDTypes(
      WithGen(Case("_hypot", {}, {s, s},
                   BinaryAs(i32, [](double a, double b) { return std::hypot(a, b); }), "int32"),
              Integers(-20, 20)),
      {i32, i32}));
  cases->push_back(WithDTypes(Case("_hypot", {}, {s, s}, hypot, "float64"), {f64, f64}));

  cases->push_back(
      Case("_identity_with_attr_like_rhs", {}, {s, s},
           [](const std::vector<RefTensor>& in) { return std::vector<RefTensor>{in[0]}; }));
  cases->push_back(WithDTypes(
      WithGen(Case(
                  "_identity_with_attr_like_rhs", {}, {{4}, {4}},
                  [](const std::vector<RefTensor>& in) { return std::vector<RefTensor>{in[0]}; },
                  "int64"),
              Integers(-9, 9)),
      {i64, i64}));
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

  const DType i8 = DType::kInt8, u8 = DType::kUint8, i32 = DType::kInt32, i64 = DType::kInt64,
              f64 = DType::kFloat64;
  auto plus = [](double x, double c) { return x + c; };
  // is_int (default True): the scalar is converted to the input dtype, 2.5 -> 2.
  cases->push_back(WithDTypes(WithGen(Case("_plus_scalar", {{"scalar", "2.5"}}, {s},
                                           ScalarAs(i32, 2.5, plus), "int32_truncated_scalar"),
                                      Integers(-9, 9)),
                              {i32}));
  // is_int=False: an integer input gives float64, computed in double.
  cases->push_back(
      WithDTypes(WithGen(Case("_plus_scalar", {{"scalar", "2.5"}, {"is_int", "False"}}, {s},
                              Unary([](double x) { return x + 2.5; }), "int32_float_scalar"),
                         Integers(-9, 9)),
                 {i32}));
  cases->push_back(
      WithDTypes(WithGen(Case("_mul_scalar", {{"scalar", "0.5"}, {"is_int", "False"}}, {s},
                              Unary([](double x) { return x * 0.5; }), "uint8_float_scalar"),
                         Integers(0, 255)),
                 {u8}));
  cases->push_back(WithDTypes(Case("_minus_scalar", {{"scalar", "0.3"}, {"is_int", "False"}}, {s},
                                   Unary([](double x) { return x - 0.3; }), "float64"),
                              {f64}));
  cases->push_back(WithDTypes(
      WithGen(Case("_rminus_scalar", {{"scalar", "100"}}, {s},
                   ScalarAs(i8, 100, [i8](double x, double c) { return WrapTo(c - x, i8); }),
                   "int8_wraps"),
              Integers(-128, 127)),
      {i8}));
  cases->push_back(
      WithDTypes(WithGen(Case("_mul_scalar", {{"scalar", "3"}}, {s},
                              ScalarAs(i64, 3, [](double x, double c) { return x * c; }), "int64"),
                         Integers(-1000, 1000)),
                 {i64}));
  cases->push_back(WithDTypes(
      WithGen(Case("_div_scalar", {{"scalar", "-3"}}, {s}, ScalarAs(i32, -3, IntDiv), "int32"),
              Integers(-20, 20)),
      {i32}));
  cases->push_back(
      WithDTypes(WithGen(Case("_rdiv_scalar", {{"scalar", "7"}}, {s},
                              ScalarAs(i32, 7, [](double x, double c) { return c / x; }), "int32"),
                         NonzeroIntegers()),
                 {i32}));
  cases->push_back(WithDTypes(
      WithGen(Case("_power_scalar", {{"scalar", "3"}}, {s},
                   ScalarAs(i32, 3, [](double x, double c) { return std::pow(x, c); }), "int32"),
              Integers(-9, 9)),
      {i32}));
  cases->push_back(WithDTypes(
      WithGen(Case("_rpower_scalar", {{"scalar", "2"}}, {s},
                   ScalarAs(i64, 2, [](double x, double c) { return std::pow(c, x); }), "int64"),
              Integers(0, 40)),
      {i64}));
  cases->push_back(WithDTypes(
      WithGen(Case("_maximum_scalar", {{"scalar", "2.5"}}, {s},
                   ScalarAs(u8, 2.5, [](double x, double c) { return x > c ? x : c; }), "uint8"),
              Integers(0, 255)),
      {u8}));
  cases->push_back(WithDTypes(
      WithGen(Case("_minimum_scalar", {{"scalar", "-1"}}, {s},
                   ScalarAs(i8, -1, [](double x, double c) { return x < c ? x : c; }), "int8"),
              Integers(-128, 127)),
      {i8}));
  cases->push_back(Case("_MaximumScalar", {{"scalar", "0"}}, {{4}},
                        Scalar(0, [](double x, double c) { return x > c ? x : c; }), "alias"));
  cases->push_back(
      WithGen(Case("_maximum_scalar", {{"scalar", "0"}}, {{4}},
                   Unary([](double x) { return (x > 0 || std::isnan(x)) ? x : 0.0; }), "nan"),
              Values({{kNaN, 1, -1, kNaN}})));

  cases->push_back(WithGen(Case("_mod_scalar", {{"scalar", "-2"}}, {s},
                                Scalar(-2, [](double x, double c) { return PyMod(x, c); })),
                           Uniform(-5, 5)));
  cases->push_back(Case("_ModScalar", {{"scalar", "0.75"}}, {{6}},
                        Scalar(0.75, [](double x, double c) { return PyMod(x, c); }), "alias"));
  cases->push_back(Case("_mod_scalar", {{"scalar", "0"}}, {{4}},
                        Scalar(0, [](double x, double c) { return PyMod(x, c); }), "by_zero"));
  cases->push_back(WithDTypes(
      WithGen(Case("_mod_scalar", {{"scalar", "-3"}}, {s}, ScalarAs(i32, -3, PyMod), "int32"),
              Integers(-20, 20)),
      {i32}));
  cases->push_back(WithGen(Case("_rmod_scalar", {{"scalar", "7"}}, {s},
                                Scalar(7, [](double x, double c) { return PyMod(c, x); })),
                           AwayFromZero()));
  cases->push_back(WithDTypes(
      WithGen(
          Case("_RModScalar", {{"scalar", "-7"}}, {s},
               ScalarAs(i64, -7, [](double x, double c) { return PyMod(c, x); }), "alias_int64"),
          NonzeroIntegers()),
      {i64}));
  cases->push_back(Case("_hypot_scalar", {{"scalar", "3"}}, {s},
                        Scalar(3, [](double x, double c) { return std::hypot(x, c); })));
  cases->push_back(
      WithDTypes(WithGen(Case("_HypotScalar", {{"scalar", "4"}}, {s},
                              ScalarAs(i32, 4, [](double x, double c) { return std::hypot(x, c); }),
                              "alias_int32"),
                         Integers(-20, 20)),
                 {i32}));
  cases->push_back(Case("_npi_hypot_scalar", {{"scalar", "0.5"}}, {{3}},
                        Scalar(0.5, [](double x, double c) { return std::hypot(x, c); }),
                        "npi_alias"));

  cases->push_back(Case("_scatter_plus_scalar", {{"scalar", "1.5"}}, {s}, Scalar(1.5, plus)));
  cases->push_back(
      WithDTypes(WithGen(Case("_scatter_minus_scalar", {{"scalar", "2"}}, {s},
                              ScalarAs(i32, 2, [](double x, double c) { return x - c; })),
                         Integers(-9, 9)),
                 {i32}));
  cases->push_back(Case("_scatter_minus_scalar", {{"scalar", "1.5"}}, {s},
                        Scalar(1.5, [](double a, double b) { return a - b; }), "float32"));

  auto smooth_l1 = [](double sigma) {
    const double s2 = F32(sigma) * F32(sigma);
    return [s2](double x) {
      return x > 1 / s2 ? x - 0.5 / s2 : (x < -1 / s2 ? -x - 0.5 / s2 : 0.5 * x * x * s2);
    };
  };
  cases->push_back(
      WithGen(Case("smooth_l1", {{"scalar", "1"}}, {s}, Unary(smooth_l1(1))), Uniform(-3, 3)));
  cases->push_back(WithGen(Case("smooth_l1", {}, {{16}}, Unary(smooth_l1(1)), "default_scalar"),
                           Uniform(-3, 3)));
  cases->push_back(WithGen(Case("smooth_l1", {{"scalar", "2"}}, {s}, Unary(smooth_l1(2)), "sigma2"),
                           Uniform(-1, 1)));
  cases->push_back(WithDTypes(WithGen(Case("_npx_smooth_l1", {{"scalar", "0.5"}}, {s},
                                           Unary(smooth_l1(0.5)), "alias_float64"),
                                      Uniform(-8, 8)),
                              {f64}));
  cases->push_back(WithDTypes(
      WithGen(Case("smooth_l1", {{"scalar", "1"}}, {s}, UnaryAs(i32, smooth_l1(1)), "int32"),
              Integers(-5, 5)),
      {i32}));
  cases->push_back(WithGradient(Case("_contrib_gradientmultiplier", {{"scalar", "2"}}, {s},
                                     Unary([](double x) { return x; })),
                                ScaledOutGrad(2)));
  cases->push_back(WithDTypes(WithGen(Case("_contrib_gradientmultiplier", {}, {s},
                                           Unary([](double x) { return x; }), "int8"),
                                      Integers(-128, 127)),
                              {i8}));
}

HN_ERROR_CASES(ElemwiseBinary) {
  cases->push_back(Rejected("elemwise_add", {}, {{2, 3}, {3, 2}}, StatusCode::kShapeError,
                            {"elemwise_add(node)", "(2, 3)", "(3, 2)"}));
  cases->push_back(Rejected("elemwise_mul", {}, {{2, 3}, {2, 3}}, StatusCode::kTypeError,
                            {"elemwise_mul(node)", "dtype"}, {DType::kInt32, DType::kFloat32}));
  cases->push_back(
      Rejected("_mod", {}, {{4}, {5}}, StatusCode::kShapeError, {"_mod(node)", "(4,)"}));
  cases->push_back(Rejected("_power", {}, {{2}, {2}}, StatusCode::kTypeError,
                            {"_power(node)", "float16"}, {DType::kFloat16, DType::kFloat16}));
  cases->push_back(
      Rejected("_grad_add", {}, {{2}, {3}}, StatusCode::kShapeError, {"_grad_add(node)"}));
  cases->push_back(Rejected("_scatter_elemwise_div", {}, {{2}, {2}}, StatusCode::kTypeError,
                            {"_scatter_elemwise_div(node)", "bool"}, {DType::kBool, DType::kBool}));
  cases->push_back(
      Rejected("_maximum", {}, {{1, 2}, {2, 1}}, StatusCode::kShapeError, {"_maximum(node)"}));
  cases->push_back(Rejected("_minimum", {}, {{3}, {3}}, StatusCode::kTypeError, {"_minimum(node)"},
                            {DType::kInt8, DType::kUint8}));
  cases->push_back(Rejected("_hypot", {}, {{3}, {4}}, StatusCode::kShapeError, {"_hypot(node)"}));
  cases->push_back(Rejected("_identity_with_attr_like_rhs", {}, {{3}, {4}}, StatusCode::kShapeError,
                            {"_identity_with_attr_like_rhs(node)"}));
  cases->push_back(Rejected("add_n", {{"num_args", "2"}}, {{3}, {3}}, StatusCode::kTypeError,
                            {"add_n(node)"}, {DType::kInt32, DType::kInt64}));
}

HN_ERROR_CASES(ElemwiseUnary) {
  cases->push_back(Rejected("exp", {}, {{2}}, StatusCode::kTypeError, {"exp(node)", "float16"},
                            {DType::kFloat16}));
  cases->push_back(
      Rejected("relu", {}, {{2}}, StatusCode::kTypeError, {"relu(node)", "bool"}, {DType::kBool}));
  cases->push_back(Rejected("clip", {{"a_min", "0"}, {"a_max", "x"}}, {{2}},
                            StatusCode::kInvalidArgument, {"clip(node)", "a_max"}));
}

HN_ERROR_CASES(ScalarOps) {
  cases->push_back(Rejected("_plus_scalar", {{"scalar", "abc"}}, {{2}},
                            StatusCode::kInvalidArgument, {"_plus_scalar(node)", "scalar", "abc"}));
  cases->push_back(Rejected("_mod_scalar", {}, {{2}}, StatusCode::kTypeError,
                            {"_mod_scalar(node)", "bool"}, {DType::kBool}));
  cases->push_back(Rejected("_greater_scalar", {{"is_int", "maybe"}}, {{2}},
                            StatusCode::kInvalidArgument, {"_greater_scalar(node)", "is_int"}));
  cases->push_back(Rejected("smooth_l1", {}, {{2}}, StatusCode::kTypeError,
                            {"smooth_l1(node)", "float16"}, {DType::kFloat16}));
  cases->push_back(Rejected("_contrib_gradientmultiplier", {{"scalr", "1"}}, {{2}},
                            StatusCode::kInvalidArgument,
                            {"_contrib_gradientmultiplier(node)", "scalr"}));
}

}  // namespace conformance
}  // namespace hybridnet
