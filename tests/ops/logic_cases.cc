// Conformance cases: comparison and logical ops (elementwise, with a scalar, broadcasting),
// logical_not and where. Results are 1 or 0 in the input dtype, as MXNet's legacy ops return.
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

using Predicate = std::function<bool(double, double)>;

struct Comparison {
  const char* name;   // elementwise op; the others are derived from it
  const char* alias;  // elementwise alias
  const char* scalar_alias;
  Predicate pred;
};

const std::vector<Comparison>& Comparisons() {
  auto truthy = [](double v) { return v != 0; };  // NaN is truthy
  static const std::vector<Comparison> list = {
      {"equal", "_Equal", "_EqualScalar", [](double a, double b) { return a == b; }},
      {"not_equal", "_Not_Equal", "_NotEqualScalar", [](double a, double b) { return a != b; }},
      {"greater", "_Greater", "_GreaterScalar", [](double a, double b) { return a > b; }},
      {"greater_equal", "_Greater_Equal", "_GreaterEqualScalar",
       [](double a, double b) { return a >= b; }},
      {"lesser", "_Lesser", "_LesserScalar", [](double a, double b) { return a < b; }},
      {"lesser_equal", "_Lesser_Equal", "_LesserEqualScalar",
       [](double a, double b) { return a <= b; }},
      {"logical_and", "_Logical_And", "_LogicalAndScalar",
       [truthy](double a, double b) { return truthy(a) && truthy(b); }},
      {"logical_or", "_Logical_Or", "_LogicalOrScalar",
       [truthy](double a, double b) { return truthy(a) || truthy(b); }},
      {"logical_xor", "_Logical_Xor", "_LogicalXorScalar",
       [truthy](double a, double b) { return truthy(a) != truthy(b); }},
  };
  return list;
}

RefFn Compare(Predicate p) {
  return Binary([p](double a, double b) { return p(a, b) ? 1.0 : 0.0; });
}

RefFn BroadcastCompare(Predicate p) {
  return [p](const std::vector<RefTensor>& in) {
    RefTensor out(BroadcastShape(in[0].shape, in[1].shape));
    for (int64_t i = 0; i < out.size(); ++i) {
      const std::vector<int64_t> idx = Unravel(i, out.shape);
      out[i] = p(At(in[0], idx), At(in[1], idx)) ? 1.0 : 0.0;
    }
    return std::vector<RefTensor>{out};
  };
}

// Small integers, so that equal values (ties) are common.
InputGen Ties() { return Integers(-2, 2); }

const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

HN_CONFORMANCE_CASES(Comparison) {
  const Shape s{3, 4, 5};
  const DType i32 = DType::kInt32, u8 = DType::kUint8, f64 = DType::kFloat64, i64 = DType::kInt64,
              i8 = DType::kInt8;
  for (const Comparison& c : Comparisons()) {
    const std::string op = std::string("_") + c.name;
    cases->push_back(WithGen(Case(op, {}, {s, s}, Compare(c.pred)), Ties()));
    cases->push_back(WithGen(Case(c.alias, {}, {{6}, {6}}, Compare(c.pred), "alias_nan"),
                             Values({{kNaN, 1, kNaN, 0, 0, 2}, {1, kNaN, kNaN, 0, 3, 2}})));
    cases->push_back(
        WithDTypes(WithGen(Case(op, {}, {s, s}, Compare(c.pred), "int32"), Ties()), {i32, i32}));
    cases->push_back(WithDTypes(
        WithGen(Case(op, {}, {{9}, {9}}, Compare(c.pred), "uint8"), Integers(0, 2)), {u8, u8}));

    // The scalar is converted to the input dtype first: 1.5 compares as 1 with integers.
    const std::string scalar_op = op + "_scalar";
    auto with_scalar = [&c](double scalar, DType d) {
      const double sd = ConvertTo(scalar, d);
      const Predicate p = c.pred;
      return Unary([p, sd](double x) { return p(x, sd) ? 1.0 : 0.0; });
    };
    cases->push_back(
        WithGen(Case(scalar_op, {{"scalar", "1"}}, {s}, with_scalar(1, DType::kFloat32)), Ties()));
    cases->push_back(WithGen(
        Case(scalar_op, {{"scalar", "0.5"}}, {s}, with_scalar(0.5, DType::kFloat32), "fraction"),
        Halves(-2, 2)));
    cases->push_back(WithGen(Case(c.scalar_alias, {{"scalar", "0"}}, {{6}},
                                  with_scalar(0, DType::kFloat32), "alias_nan"),
                             Values({{kNaN, 1, 0, -1, kNaN, 0}})));
    cases->push_back(WithDTypes(WithGen(Case(scalar_op, {{"scalar", "1.5"}}, {s},
                                             with_scalar(1.5, i32), "int32_truncated_scalar"),
                                        Ties()),
                                {i32}));
    cases->push_back(WithDTypes(
        WithGen(Case(scalar_op, {{"scalar", "-1"}}, {s}, with_scalar(-1, i8), "int8"), Ties()),
        {i8}));
    // is_int=False on an integer input: float64 result, the scalar kept as is.
    cases->push_back(WithDTypes(WithGen(Case(scalar_op, {{"scalar", "0.5"}, {"is_int", "False"}},
                                             {s}, with_scalar(0.5, f64), "int64_float_scalar"),
                                        Ties()),
                                {i64}));

    const std::string broadcast_op = std::string("broadcast_") + c.name;
    cases->push_back(
        WithGen(Case(broadcast_op, {}, {{2, 3, 4}, {3, 1}}, BroadcastCompare(c.pred)), Ties()));
    cases->push_back(WithGen(
        Case(broadcast_op, {}, {{5}, {4, 1}}, BroadcastCompare(c.pred), "both_sides"), Ties()));
    cases->push_back(WithDTypes(
        WithGen(Case(broadcast_op, {}, {{2, 1, 3}, {2, 4, 1}}, BroadcastCompare(c.pred), "int32"),
                Ties()),
        {i32, i32}));
    cases->push_back(WithDTypes(
        WithGen(Case(broadcast_op, {}, {{3, 4}, {4}}, BroadcastCompare(c.pred), "float64"), Ties()),
        {f64, f64}));
  }

  auto logical_not = Unary([](double x) { return x != 0 ? 0.0 : 1.0; });
  cases->push_back(WithGen(Case("logical_not", {}, {s}, logical_not), Ties()));
  cases->push_back(
      WithGen(Case("logical_not", {}, {{4}}, logical_not, "nan"), Values({{kNaN, 0, -0.0, 0.5}})));
  cases->push_back(
      WithDTypes(WithGen(Case("logical_not", {}, {s}, logical_not, "int8"), Ties()), {i8}));
  cases->push_back(WithDTypes(
      WithGen(Case("logical_not", {}, {s}, logical_not, "uint8"), Integers(0, 2)), {u8}));
}

HN_CONFORMANCE_CASES(Where) {
  auto where = [](const std::vector<RefTensor>& in) {
    RefTensor out(in[1].shape);
    const int64_t per = out.size() / in[0].size();  // 1, or a row per condition value
    for (int64_t i = 0; i < out.size(); ++i) out[i] = in[0][i / per] != 0 ? in[1][i] : in[2][i];
    return std::vector<RefTensor>{out};
  };
  // The condition (input 0) holds small integers, so that zeros are common.
  auto gen = [](std::mt19937& rng, size_t input, int64_t) {
    return input == 0 ? static_cast<double>(std::uniform_int_distribution<int>(-1, 1)(rng))
                      : std::uniform_real_distribution<double>(-2, 2)(rng);
  };
  const Shape s{3, 4, 2};
  cases->push_back(WithGen(Case("where", {}, {s, s, s}, where), gen));
  cases->push_back(WithGen(NonDefaultInputs(Case("where", {}, {{3}, s, s}, where, "rows")), gen));
  cases->push_back(
      WithGen(NonDefaultInputs(Case("where", {}, {{5}, {5, 3}, {5, 3}}, where, "rows_2d")), gen));
  cases->push_back(WithGen(Case("where", {}, {{6}, {6}, {6}}, where, "one_d"), gen));
  cases->push_back(
      WithGen(Case("_sparse_where", {}, {{4, 2}, {4, 2}, {4, 2}}, where, "alias"), gen));
  // The condition's dtype is its own.
  cases->push_back(WithDTypes(WithGen(Case("where", {}, {s, s, s}, where, "int32_x_float_cond"),
                                      [](std::mt19937& rng, size_t input, int64_t) {
                                        return static_cast<double>(
                                            std::uniform_int_distribution<int>(
                                                input == 0 ? 0 : -50, input == 0 ? 1 : 50)(rng));
                                      }),
                              {DType::kFloat32, DType::kInt32, DType::kInt32}));
  cases->push_back(
      WithDTypes(WithGen(Case("where", {}, {s, s, s}, where, "float64_int8_cond"), gen),
                 {DType::kInt8, DType::kFloat64, DType::kFloat64}));
  cases->push_back(WithDTypes(
      WithGen(NonDefaultInputs(Case("where", {}, {{3}, s, s}, where, "rows_int64_cond")), gen),
      {DType::kInt64, DType::kFloat32, DType::kFloat32}));
  cases->push_back(WithGen(Case("where", {}, {{4}, {4}, {4}}, where, "nan_condition"),
                           Values({{kNaN, 0, 1, -0.0}, {1, 2, 3, 4}, {5, 6, 7, 8}})));
}

HN_ERROR_CASES(Comparison) {
  for (const Comparison& c : Comparisons()) {
    const std::string op = std::string("_") + c.name;
    cases->push_back(Rejected(op, {}, {{2, 3}, {3, 2}}, StatusCode::kShapeError, {op + "(node)"}));
    cases->push_back(Rejected(op + "_scalar", {}, {{2}}, StatusCode::kTypeError,
                              {op + "_scalar(node)", "float16"}, {DType::kFloat16}));
    const std::string broadcast_op = std::string("broadcast_") + c.name;
    cases->push_back(Rejected(broadcast_op, {}, {{2, 3}, {4, 3}}, StatusCode::kShapeError,
                              {broadcast_op + "(node)", "(2, 3)", "(4, 3)"}));
  }
  cases->push_back(Rejected("logical_not", {}, {{2}}, StatusCode::kTypeError,
                            {"logical_not(node)", "float16"}, {DType::kFloat16}));
}

HN_ERROR_CASES(Where) {
  cases->push_back(
      Rejected("where", {}, {{2, 3}, {2, 3}, {3, 2}}, StatusCode::kShapeError, {"where(node)"}));
  cases->push_back(Rejected("where", {}, {{3, 3}, {2, 3}, {2, 3}}, StatusCode::kShapeError,
                            {"where(node)", "condition", "(3, 3)"}));
  cases->push_back(Rejected("where", {}, {{3}, {2, 3}, {2, 3}}, StatusCode::kShapeError,
                            {"where(node)", "x.shape[0]"}));
  cases->push_back(Rejected("where", {}, {{2}, {2}, {2}}, StatusCode::kTypeError, {"where(node)"},
                            {DType::kFloat32, DType::kInt32, DType::kFloat32}));
  cases->push_back(Rejected("where", {}, {{2}, {2}, {2}}, StatusCode::kTypeError,
                            {"where(node)", "condition", "float16"},
                            {DType::kFloat16, DType::kFloat32, DType::kFloat32}));
}

}  // namespace conformance
}  // namespace hybridnet
