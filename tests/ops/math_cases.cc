// Conformance cases: unary math (trigonometric, hyperbolic, logarithms, roots, rounding, error and
// gamma functions, angle conversion), hard_sigmoid, _contrib_quadratic, the straight-through
// estimators and softmin. Integer inputs compute in double and truncate, as MXNet's kernels.
#include <cmath>
#include <limits>
#include <string>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

const double kPi = 3.14159265358979323846;
const double kInf = std::numeric_limits<double>::infinity();

// The inverse error function by bisection on erf (slow and independent of the kernel's method).
double ErfInvByBisection(double y) {
  if (std::isnan(y) || y < -1 || y > 1) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1 || y == -1) return y * kInf;
  double lo = -6, hi = 6;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// MXNet's rint: the nearer of floor and ceil, ties to floor.
double RintTiesToFloor(double x) {
  const double f = std::floor(x), c = std::ceil(x);
  return (x - f) <= (c - x) ? f : c;
}

struct MathOp {
  const char* name;
  const char* alias;  // "" when none
  double (*f)(double);
  double lo, hi;       // float input domain
  int int_lo, int_hi;  // integer input domain
};

const std::vector<MathOp>& MathOps() {
  static const std::vector<MathOp> list = {
      {"sin", "_sparse_sin", [](double x) { return std::sin(x); }, -4, 4, -6, 6},
      {"cos", "_sparse_cos", [](double x) { return std::cos(x); }, -4, 4, -6, 6},
      {"tan", "_sparse_tan", [](double x) { return std::tan(x); }, -1.2, 1.2, -1, 1},
      {"arcsin", "_sparse_arcsin", [](double x) { return std::asin(x); }, -0.99, 0.99, -1, 1},
      {"arccos", "_sparse_arccos", [](double x) { return std::acos(x); }, -0.99, 0.99, -1, 1},
      {"arctan", "_sparse_arctan", [](double x) { return std::atan(x); }, -5, 5, -50, 50},
      {"sinh", "_sparse_sinh", [](double x) { return std::sinh(x); }, -3, 3, -5, 5},
      {"cosh", "_sparse_cosh", [](double x) { return std::cosh(x); }, -3, 3, -5, 5},
      {"arcsinh", "_sparse_arcsinh", [](double x) { return std::asinh(x); }, -5, 5, -50, 50},
      {"arccosh", "_sparse_arccosh", [](double x) { return std::acosh(x); }, 1, 6, 1, 50},
      {"arctanh", "_sparse_arctanh", [](double x) { return std::atanh(x); }, -0.95, 0.95, 0, 0},
      {"log2", "_sparse_log2", [](double x) { return std::log2(x); }, 0.01, 20, 1, 1024},
      {"log10", "_sparse_log10", [](double x) { return std::log10(x); }, 0.01, 200, 1, 10000},
      {"cbrt", "_sparse_cbrt", [](double x) { return std::cbrt(x); }, -8, 8, -125, 125},
      {"rcbrt", "", [](double x) { return 1 / std::cbrt(x); }, 0.2, 8, 1, 8},
      {"erf", "_npx_erf", [](double x) { return std::erf(x); }, -2.5, 2.5, -2, 2},
      {"erfinv", "_npx_erfinv", ErfInvByBisection, -0.99, 0.99, 0, 0},
      {"gamma", "_npx_gamma", [](double x) { return std::tgamma(x); }, 0.2, 5, 1, 10},
      {"gammaln", "_npx_gammaln", [](double x) { return std::lgamma(x); }, 0.1, 10, 1, 30},
      {"degrees", "_sparse_degrees", [](double x) { return x * 180 / kPi; }, -7, 7, -100, 100},
      {"radians", "_sparse_radians", [](double x) { return x * kPi / 180; }, -400, 400, -900, 900},
      {"trunc", "_sparse_trunc", [](double x) { return std::trunc(x); }, -5, 5, -99, 99},
      {"fix", "_sparse_fix", [](double x) { return std::trunc(x); }, -5, 5, -99, 99},
      {"round", "_sparse_round", [](double x) { return std::round(x); }, -5, 5, -99, 99},
      {"rint", "_sparse_rint", RintTiesToFloor, -5, 5, -99, 99},
  };
  return list;
}

}  // namespace

HN_CONFORMANCE_CASES(UnaryMath) {
  const Shape s{2, 3, 4};
  const DType f64 = DType::kFloat64, i32 = DType::kInt32, i64 = DType::kInt64, u8 = DType::kUint8,
              i8 = DType::kInt8;
  for (const MathOp& m : MathOps()) {
    auto ref = Unary(m.f);
    cases->push_back(WithGen(Case(m.name, {}, {s}, ref), Uniform(m.lo, m.hi)));
    cases->push_back(
        WithDTypes(WithGen(Case(m.name, {}, {s}, ref, "float64"), Uniform(m.lo, m.hi)), {f64}));
    if (m.alias[0] != '\0') {
      cases->push_back(WithGen(Case(m.alias, {}, {{5}}, ref, "alias"), Uniform(m.lo, m.hi)));
    }
    if (m.int_lo < m.int_hi) {
      cases->push_back(WithDTypes(
          WithGen(Case(m.name, {}, {s}, UnaryAs(i32, m.f), "int32"), Integers(m.int_lo, m.int_hi)),
          {i32}));
    }
  }
  // Rounding ties: round goes away from zero, rint to floor (MXNet's rule), fix and trunc to 0.
  for (const char* op : {"round", "rint", "fix", "trunc"}) {
    const MathOp* m = nullptr;
    for (const MathOp& candidate : MathOps())
      if (std::string(candidate.name) == op) m = &candidate;
    cases->push_back(WithGen(Case(op, {}, {{40}}, Unary(m->f), "ties"), Halves(-5, 5)));
    cases->push_back(WithDTypes(
        WithGen(Case(op, {}, {{40}}, Unary(m->f), "ties_float64"), Halves(-5, 5)), {f64}));
  }
  cases->push_back(WithGen(Case("erfinv", {}, {{8}}, Unary(ErfInvByBisection), "edges"),
                           Values({{-1, 1, 0, 1e-9, -1e-8, 0.999999, -0.9999, 0.5}})));
  cases->push_back(WithGen(Case("erfinv", {}, {{4}}, Unary(ErfInvByBisection), "outside_domain"),
                           Values({{1.5, -2, 3, 0.25}})));
  cases->push_back(
      WithGen(Case("gamma", {}, {{6}}, Unary([](double x) { return std::tgamma(x); }), "negative"),
              Values({{-0.5, -1.5, -2.5, 0.5, 3, 4.5}})));
  cases->push_back(WithDTypes(
      WithGen(Case("gamma", {}, {{8}}, UnaryAs(i64, [](double x) { return std::tgamma(x); }),
                   "int64_factorials"),
              Integers(1, 20)),
      {i64}));
  cases->push_back(
      WithDTypes(WithGen(Case("log2", {}, {{11}},
                              UnaryAs(u8, [](double x) { return std::log2(x); }), "uint8_powers"),
                         Values({{1, 2, 4, 8, 16, 32, 64, 128, 3, 255, 100}})),
                 {u8}));
  cases->push_back(WithDTypes(
      WithGen(
          Case("cbrt", {}, {{9}}, UnaryAs(i8, [](double x) { return std::cbrt(x); }), "int8_cubes"),
          Values({{-125, -64, -27, -8, -1, 0, 1, 8, 27}})),
      {i8}));
  cases->push_back(
      WithDTypes(WithGen(Case("degrees", {}, {s},
                              UnaryAs(i8, [](double x) { return x * 180 / kPi; }), "int8_wraps"),
                         Integers(-5, 5)),
                 {i8}));

  // hard_sigmoid: clip(alpha * x + beta, 0, 1), float types only.
  auto hard_sigmoid = [](double alpha, double beta) {
    const double a = F32(alpha), b = F32(beta);
    return Unary([a, b](double x) { return std::min(1.0, std::max(0.0, a * x + b)); });
  };
  cases->push_back(WithGen(Case("hard_sigmoid", {}, {s}, hard_sigmoid(0.2, 0.5)), Uniform(-4, 4)));
  cases->push_back(WithGen(Case("hard_sigmoid", {{"alpha", "0.5"}, {"beta", "0.25"}}, {s},
                                hard_sigmoid(0.5, 0.25), "alpha_beta"),
                           Uniform(-3, 3)));
  cases->push_back(WithDTypes(
      WithGen(Case("hard_sigmoid", {{"alpha", "1"}}, {s}, hard_sigmoid(1, 0.5), "float64"),
              Uniform(-2, 2)),
      {f64}));

  // _contrib_quadratic: a x^2 + b x + c with float coefficients.
  auto quadratic = [](double a, double b, double c) {
    return Unary([a, b, c](double x) { return x * (a * x + b) + c; });
  };
  cases->push_back(Case("_contrib_quadratic", {{"a", "1.5"}, {"b", "-2"}, {"c", "0.25"}}, {s},
                        quadratic(1.5, -2, 0.25)));
  cases->push_back(Case("_contrib_quadratic", {}, {{4}}, quadratic(0, 0, 0), "defaults"));
  cases->push_back(WithDTypes(
      Case("_contrib_quadratic", {{"a", "-1"}, {"c", "3"}}, {s}, quadratic(-1, 0, 3), "float64"),
      {f64}));
  cases->push_back(
      WithDTypes(WithGen(Case(
                             "_contrib_quadratic", {{"a", "0.5"}, {"b", "1"}, {"c", "2"}}, {s},
                             [](const std::vector<RefTensor>& in) {
                               RefTensor out(in[0].shape);
                               for (int64_t i = 0; i < out.size(); ++i) {
                                 const double x = in[0][i];
                                 out[i] = ConvertTo(x * (0.5 * x + 1) + 2, DType::kInt32);
                               }
                               return std::vector<RefTensor>{out};
                             },
                             "int32"),
                         Integers(-20, 20)),
                 {i32}));

  // The straight-through estimators are round and sign at inference.
  // Their gradient passes the output gradient through (straight through).
  cases->push_back(WithGradient(
      WithGen(Case("_contrib_round_ste", {}, {{20}}, Unary([](double x) { return std::round(x); })),
              Halves(-5, 5)),
      ScaledOutGrad(1)));
  cases->push_back(
      WithGradient(WithGen(Case("_sparse__contrib_round_ste", {}, {{6}},
                                Unary([](double x) { return std::round(x); }), "alias"),
                           Halves(-3, 3)),
                   ScaledOutGrad(1)));
  auto sign = Unary([](double x) { return x < 0 ? -1.0 : (x > 0 ? 1.0 : 0.0); });
  cases->push_back(WithGradient(WithGen(Case("_contrib_sign_ste", {}, {s}, sign), Integers(-2, 2)),
                                ScaledOutGrad(1)));
  cases->push_back(WithGradient(
      WithGen(Case("_sparse__contrib_sign_ste", {}, {{6}}, sign, "alias"), Uniform(-1, 1)),
      ScaledOutGrad(1)));
  cases->push_back(WithDTypes(
      WithGen(Case("_contrib_sign_ste", {}, {s}, sign, "int32"), Integers(-5, 5)), {i32}));

  // softmin: the softmax of -x / temperature along axis.
  auto softmin = [](int axis, double t) {
    return [axis, t](const std::vector<RefTensor>& in) {
      const Shape& shape = in[0].shape;
      const size_t k = static_cast<size_t>(axis < 0 ? axis + static_cast<int>(shape.ndim()) : axis);
      const std::vector<int64_t> st = Strides(shape);
      RefTensor out(shape);
      for (int64_t i = 0; i < out.size(); ++i) {
        const std::vector<int64_t> idx = Unravel(i, shape);
        const int64_t base = i - idx[k] * st[k];
        double sum = 0, mx = -kInf;
        for (int64_t j = 0; j < shape[k]; ++j) mx = std::max(mx, -in[0][base + j * st[k]] / t);
        for (int64_t j = 0; j < shape[k]; ++j) sum += std::exp(-in[0][base + j * st[k]] / t - mx);
        out[i] = std::exp(-in[0][i] / t - mx) / sum;
      }
      return std::vector<RefTensor>{out};
    };
  };
  cases->push_back(Case("softmin", {}, {{3, 5}}, softmin(-1, 1)));
  cases->push_back(Case("softmin", {{"axis", "0"}}, {{4, 3, 2}}, softmin(0, 1), "axis0"));
  cases->push_back(Case("softmin", {{"axis", "1"}, {"temperature", "2.5"}}, {{2, 6, 3}},
                        softmin(1, 2.5), "temperature"));
}

HN_ERROR_CASES(UnaryMath) {
  for (const MathOp& m : MathOps()) {
    cases->push_back(Rejected(m.name, {}, {{2}}, StatusCode::kTypeError,
                              {std::string(m.name) + "(node)", "bool"}, {DType::kBool}));
  }
  cases->push_back(Rejected("hard_sigmoid", {}, {{2}}, StatusCode::kTypeError,
                            {"hard_sigmoid(node)", "int32", "float"}, {DType::kInt32}));
  cases->push_back(Rejected("hard_sigmoid", {{"alpha", "fast"}}, {{2}},
                            StatusCode::kInvalidArgument, {"hard_sigmoid(node)", "alpha"}));
  cases->push_back(Rejected("_contrib_quadratic", {{"d", "1"}}, {{2}}, StatusCode::kInvalidArgument,
                            {"_contrib_quadratic(node)", "d"}));
  cases->push_back(Rejected("_contrib_round_ste", {}, {{2}}, StatusCode::kTypeError,
                            {"_contrib_round_ste(node)"}, {DType::kFloat16}));
  cases->push_back(Rejected("_contrib_sign_ste", {}, {{2}}, StatusCode::kTypeError,
                            {"_contrib_sign_ste(node)"}, {DType::kBool}));
  cases->push_back(Rejected("softmin", {{"axis", "2"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"softmin(node)", "axis"}));
  cases->push_back(Rejected("softmin", {{"use_length", "True"}}, {{2, 3}, {2}},
                            StatusCode::kInvalidArgument, {"softmin(node)", "use_length"}));
}

}  // namespace conformance
}  // namespace hybridnet
