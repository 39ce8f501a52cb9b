// Conformance cases: broadcast_* arithmetic ops and broadcast_to, on every numeric dtype (the
// comparison and logical broadcast ops are in logic_cases.cc).
#include <algorithm>
#include <cmath>
#include <string>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

RefFn Broadcast(std::function<double(double, double)> f, DType d = DType::kFloat64) {
  return [f, d](const std::vector<RefTensor>& in) {
    RefTensor out(BroadcastShape(in[0].shape, in[1].shape));
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> idx = Unravel(i, out.shape);
      out[i] = ConvertTo(f(At(in[0], idx), At(in[1], idx)), d);
    }
    return std::vector<RefTensor>{out};
  };
}

// rhs (input 1) nonzero, of either sign.
double Nonzero(std::mt19937& rng, double lo, double hi) {
  const double m = std::uniform_real_distribution<double>(lo, hi)(rng);
  return (rng() & 1u) ? m : -m;
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
  cases->push_back(
      Case("broadcast_to", {{"shape", "(2, 4, 3)"}}, {{2, 1, 3}}, BroadcastTo({2, 4, 3})));
  cases->push_back(
      Case("broadcast_to", {{"shape", "(0, 5)"}}, {{3, 1}}, BroadcastTo({3, 5}), "zero_keeps"));
  cases->push_back(Case("broadcast_to", {{"shape", "(4, 2, 3)"}}, {{1, 2, 3}},
                        BroadcastTo({4, 2, 3}), "leading"));

  const DType i8 = DType::kInt8, u8 = DType::kUint8, i32 = DType::kInt32, i64 = DType::kInt64,
              f64 = DType::kFloat64;
  cases->push_back(WithDTypes(
      WithGen(Case("broadcast_add", {}, {{2, 3}, {3}},
                   Broadcast([i8](double a, double b) { return WrapTo(a + b, i8); }), "int8_wraps"),
              Integers(-128, 127)),
      {i8, i8}));
  cases->push_back(WithDTypes(
      WithGen(Case("broadcast_sub", {}, {{4, 1}, {1, 5}}, sub, "int64"), Integers(-1000, 1000)),
      {i64, i64}));
  cases->push_back(WithDTypes(
      WithGen(
          Case("broadcast_mul", {}, {{3, 1}, {3, 4}},
               Broadcast([u8](double a, double b) { return WrapTo(a * b, u8); }), "uint8_wraps"),
          Integers(0, 255)),
      {u8, u8}));
  cases->push_back(WithDTypes(
      WithGen(Case("broadcast_div", {}, {{2, 6}, {6}},
                   Broadcast([](double a, double b) { return std::trunc(a / b); }), "int32"),
              [](std::mt19937& rng, size_t input, int64_t) {
                return input == 0 ? std::round(std::uniform_real_distribution<double>(-30, 30)(rng))
                                  : std::round(Nonzero(rng, 1, 7));
              }),
      {i32, i32}));
  cases->push_back(
      WithDTypes(Case("broadcast_add", {}, {{2, 3, 4}, {1, 4}}, add, "float64"), {f64, f64}));
  cases->push_back(WithDTypes(
      WithGen(Case("broadcast_maximum", {}, {{3, 4}, {4}}, max, "int32"), Integers(-9, 9)),
      {i32, i32}));
  cases->push_back(WithDTypes(
      WithGen(Case("broadcast_minimum", {}, {{2, 2}, {2, 1}}, min, "uint8"), Integers(0, 255)),
      {u8, u8}));
  cases->push_back(Case("_npi_maximum", {}, {{2, 3}, {3}}, max, "npi_alias"));
  cases->push_back(Case("_npi_minimum", {}, {{2, 3}, {3}}, min, "npi_alias"));
  cases->push_back(Case("_sparse_broadcast_add", {}, {{2, 3}, {1, 3}}, add, "sparse_alias"));

  auto mod = Broadcast(PyMod);
  auto mod_gen = [](std::mt19937& rng, size_t input, int64_t) {
    return input == 0 ? std::uniform_real_distribution<double>(-5, 5)(rng) : Nonzero(rng, 0.5, 3);
  };
  cases->push_back(WithGen(Case("broadcast_mod", {}, {{3, 4}, {4}}, mod), mod_gen));
  cases->push_back(
      WithGen(Case("broadcast_mod", {}, {{2, 1, 3}, {4, 1}}, mod, "both_sides"), mod_gen));
  cases->push_back(WithDTypes(
      WithGen(Case("broadcast_mod", {}, {{4, 5}, {5}}, Broadcast(PyMod, i32), "int32"),
              [](std::mt19937& rng, size_t input, int64_t) {
                return input == 0 ? std::round(std::uniform_real_distribution<double>(-30, 30)(rng))
                                  : std::round(Nonzero(rng, 1, 7));
              }),
      {i32, i32}));
  cases->push_back(WithDTypes(
      WithGen(Case("broadcast_mod", {}, {{3, 2}, {1}}, mod, "float64"), mod_gen), {f64, f64}));
  auto pow = Broadcast([](double a, double b) { return std::pow(a, b); });
  cases->push_back(WithGen(Case("broadcast_power", {}, {{3, 4}, {3, 1}}, pow),
                           [](std::mt19937& rng, size_t input, int64_t) {
                             return input == 0 ? std::uniform_real_distribution<double>(0.1, 3)(rng)
                                               : std::uniform_real_distribution<double>(-2, 2)(rng);
                           }));
  cases->push_back(WithDTypes(
      WithGen(Case("broadcast_power", {}, {{2, 3}, {3}},
                   Broadcast([](double a, double b) { return std::pow(a, b); }, i64), "int64"),
              [](std::mt19937& rng, size_t input, int64_t) {
                return static_cast<double>(input == 0
                                               ? std::uniform_int_distribution<int>(-4, 4)(rng)
                                               : std::uniform_int_distribution<int>(0, 5)(rng));
              }),
      {i64, i64}));
  auto hypot = Broadcast([](double a, double b) { return std::hypot(a, b); });
  cases->push_back(Case("broadcast_hypot", {}, {{2, 3, 4}, {4}}, hypot));
  cases->push_back(
      WithDTypes(Case("broadcast_hypot", {}, {{3, 1}, {1, 3}}, hypot, "float64"), {f64, f64}));
  cases->push_back(WithDTypes(
      WithGen(Case("broadcast_hypot", {}, {{3, 2}, {2}},
                   Broadcast([](double a, double b) { return std::hypot(a, b); }, i8), "int8"),
              Integers(-20, 20)),
      {i8, i8}));
  cases->push_back(WithDTypes(
      WithGen(Case("broadcast_to", {{"shape", "(3, 4)"}}, {{1, 4}}, BroadcastTo({3, 4}), "int64"),
              Integers(-9, 9)),
      {i64}));
  cases->push_back(WithDTypes(WithGen(Case("broadcast_to", {{"shape", "(2, 0, 3)"}}, {{1, 5, 1}},
                                           BroadcastTo({2, 5, 3}), "uint8"),
                                      Integers(0, 255)),
                              {u8}));
}

HN_ERROR_CASES(Broadcast) {
  for (const char* op : {"broadcast_mod", "broadcast_power", "broadcast_hypot"}) {
    cases->push_back(Rejected(op, {}, {{2, 3}, {2, 2}}, StatusCode::kShapeError,
                              {std::string(op) + "(node)", "(2, 3)", "(2, 2)"}));
  }
  cases->push_back(Rejected("broadcast_add", {}, {{2}, {2}}, StatusCode::kTypeError,
                            {"broadcast_add(node)"}, {DType::kInt32, DType::kFloat64}));
  cases->push_back(Rejected("broadcast_add", {}, {{2, 3}, {4, 3}}, StatusCode::kShapeError,
                            {"broadcast_add(node)", "(2, 3)", "(4, 3)"}));
  cases->push_back(Rejected("broadcast_to", {{"shape", "(2, 4)"}}, {{2, 3}},
                            StatusCode::kShapeError, {"broadcast_to", "(2, 3)"}));
}

}  // namespace conformance
}  // namespace hybridnet
