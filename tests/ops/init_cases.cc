// Conformance cases: creation ops (no inputs: _zeros, _ones, _full, _eye, _arange, _linspace,
// _zeros_without_dtype), the *_like ops and shape_array / size_array. Each case runs eagerly, as
// a one-node graph with no variables, through JSON and in MXNet.
#include <cmath>
#include <string>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

// A reference that ignores its inputs and returns `shape` filled by f(flat index).
RefFn Filled(Shape shape, std::function<double(int64_t)> f) {
  return [shape, f](const std::vector<RefTensor>&) {
    RefTensor out(shape);
    for (int64_t i = 0; i < out.size(); ++i) out[i] = f(i);
    return std::vector<RefTensor>{out};
  };
}

RefFn Constant(Shape shape, double v) {
  return Filled(shape, [v](int64_t) { return v; });
}

// MXNet's range: start + (i / repeat) * step, converted to the dtype at the end (float32 cases
// are compared within tolerance).
RefFn Range(int64_t n, double start, double step, int repeat = 1) {
  return Filled(Shape{n},
                [=](int64_t i) { return start + static_cast<double>(i / repeat) * step; });
}

// shape of input 0 filled with start + (i / repeat) * step (or 1-D along `axis`).
RefFn RangeLike(double start, double step, int repeat, int axis, bool along_axis) {
  return [=](const std::vector<RefTensor>& in) {
    Shape shape = in[0].shape;
    if (along_axis) {
      const int n = static_cast<int>(shape.ndim());
      shape = Shape{shape[static_cast<size_t>(axis < 0 ? axis + n : axis)]};
    }
    RefTensor out(shape);
    for (int64_t i = 0; i < out.size(); ++i)
      out[i] = start + static_cast<double>(i / repeat) * step;
    return std::vector<RefTensor>{out};
  };
}

RefFn Eye(int64_t n, int64_t m, int64_t k) {
  return Filled(Shape{n, m}, [=](int64_t i) { return i % m - i / m == k ? 1.0 : 0.0; });
}

}  // namespace

HN_CONFORMANCE_CASES(Init) {
  const DType i32 = DType::kInt32, u8 = DType::kUint8, i64 = DType::kInt64, f64 = DType::kFloat64;
  cases->push_back(Case("_zeros", {{"shape", "(2, 3)"}}, {}, Constant({2, 3}, 0)));
  cases->push_back(
      Case("_zeros", {{"shape", "(4,)"}, {"dtype", "int32"}}, {}, Constant({4}, 0), "int32"));
  cases->push_back(Case("_zeros", {{"shape", "(2, 2)"}, {"dtype", "float16"}}, {},
                        Constant({2, 2}, 0), "float16"));
  cases->push_back(Case("_zeros", {{"shape", "(3,)"}, {"dtype", "bool"}, {"ctx", "cpu(0)"}}, {},
                        Constant({3}, 0), "bool"));
  cases->push_back(Case("_ones", {{"shape", "(3, 2)"}}, {}, Constant({3, 2}, 1)));
  cases->push_back(
      Case("_ones", {{"shape", "(5,)"}, {"dtype", "int8"}}, {}, Constant({5}, 1), "int8"));
  cases->push_back(Case("_ones", {{"shape", "(2, 1, 2)"}, {"dtype", "float64"}}, {},
                        Constant({2, 1, 2}, 1), "float64"));
  cases->push_back(
      Case("_ones", {{"shape", "(2,)"}, {"dtype", "bool"}}, {}, Constant({2}, 1), "bool"));
  cases->push_back(
      Case("_full", {{"shape", "(2, 3)"}, {"value", "2.5"}}, {}, Constant({2, 3}, 2.5)));
  // The value is converted to the dtype as C converts: 2.7 -> 2, -1 -> 255 for uint8.
  cases->push_back(Case("_full", {{"shape", "(4,)"}, {"value", "2.7"}, {"dtype", "int32"}}, {},
                        Constant({4}, 2), "int32"));
  cases->push_back(Case("_full", {{"shape", "(3,)"}, {"value", "-1"}, {"dtype", "uint8"}}, {},
                        Constant({3}, 255), "uint8"));
  cases->push_back(Case("_full", {{"shape", "(2, 2)"}, {"value", "-3.25"}, {"dtype", "float64"}},
                        {}, Constant({2, 2}, -3.25), "float64"));
  cases->push_back(Case("_full", {{"shape", "(2,)"}, {"value", "0.1"}, {"dtype", "float16"}}, {},
                        Constant({2}, 0.0999755859375), "float16"));
  cases->push_back(
      Case("_npi_full", {{"shape", "(3,)"}, {"value", "7"}}, {}, Constant({3}, 7), "alias"));
  cases->push_back(
      Case("_zeros_without_dtype", {{"shape", "(2, 2)"}, {"dtype", "4"}}, {}, Constant({2, 2}, 0)));
  cases->push_back(Case("_zeros_without_dtype", {{"shape", "(3,)"}, {"dtype", "1"}}, {},
                        Constant({3}, 0), "float64"));

  cases->push_back(Case("_eye", {{"N", "3"}}, {}, Eye(3, 3, 0)));
  cases->push_back(Case("_eye", {{"N", "3"}, {"M", "4"}, {"k", "1"}}, {}, Eye(3, 4, 1), "upper"));
  cases->push_back(Case("_eye", {{"N", "4"}, {"M", "2"}, {"k", "-1"}}, {}, Eye(4, 2, -1), "lower"));
  cases->push_back(Case("_eye", {{"N", "2"}, {"k", "5"}}, {}, Eye(2, 2, 5), "outside"));
  cases->push_back(Case("_eye", {{"N", "3"}, {"dtype", "int64"}}, {}, Eye(3, 3, 0), "int64"));

  cases->push_back(Case("_arange", {{"start", "2"}, {"stop", "7"}}, {}, Range(5, 2, 1)));
  cases->push_back(Case("_arange", {{"start", "5"}}, {}, Range(5, 0, 1), "stop_none"));
  cases->push_back(Case("_arange", {{"start", "1"}, {"stop", "2"}, {"step", "0.25"}}, {},
                        Range(4, 1, 0.25), "fractional_step"));
  cases->push_back(Case("_arange", {{"start", "0.1"}, {"stop", "1"}, {"step", "0.1"}}, {},
                        Range(9, 0.1, 0.1), "rounding"));
  cases->push_back(Case("_arange", {{"start", "5"}, {"stop", "-1"}, {"step", "-1.5"}}, {},
                        Range(4, 5, -1.5), "negative_step"));
  cases->push_back(Case("_arange", {{"start", "0"}, {"stop", "3"}, {"repeat", "2"}}, {},
                        Range(6, 0, 1, 2), "repeat"));
  cases->push_back(Case("_arange", {{"start", "-3"}, {"stop", "4"}, {"dtype", "int32"}}, {},
                        Range(7, -3, 1), "int32"));
  // Integers take the step converted first: 0.5 -> 0, every value is start.
  cases->push_back(Case("_arange",
                        {{"start", "1"}, {"stop", "4"}, {"step", "0.5"}, {"dtype", "int32"}}, {},
                        Constant({6}, 1), "int32_fractional_step"));
  cases->push_back(Case(
      "_arange", {{"start", "250"}, {"stop", "260"}, {"dtype", "uint8"}}, {},
      Filled({10}, [](int64_t i) { return static_cast<double>((250 + i) % 256); }), "uint8_wraps"));
  cases->push_back(Case("_arange",
                        {{"start", "0"}, {"stop", "1"}, {"step", "0.125"}, {"dtype", "float64"}},
                        {}, Range(8, 0, 0.125), "float64"));

  cases->push_back(
      Case("_linspace", {{"start", "0"}, {"stop", "1"}, {"num", "5"}}, {}, Range(5, 0, 0.25)));
  cases->push_back(Case("_linspace",
                        {{"start", "-1"}, {"stop", "1"}, {"num", "4"}, {"endpoint", "False"}}, {},
                        Range(4, -1, 0.5), "no_endpoint"));
  cases->push_back(Case("_linspace", {{"start", "3"}, {"stop", "9"}, {"num", "1"}}, {},
                        Constant({1}, 3), "one"));
  cases->push_back(
      Case("_linspace", {{"start", "0"}, {"stop", "10"}, {"num", "4"}, {"dtype", "int32"}}, {},
           Filled({4}, [](int64_t i) { return std::trunc(10.0 / 3 * static_cast<double>(i)); }),
           "int32"));
  cases->push_back(Case("_npi_linspace", {{"start", "2"}, {"stop", "3"}, {"num", "3"}}, {},
                        Range(3, 2, 0.5), "alias"));

  auto zeros = Unary([](double) { return 0.0; });
  auto ones = Unary([](double) { return 1.0; });
  cases->push_back(Case("zeros_like", {}, {{2, 3}}, zeros));
  cases->push_back(WithDTypes(Case("zeros_like", {}, {{4}}, zeros, "int32"), {i32}));
  cases->push_back(Case("_sparse_zeros_like", {}, {{3, 1}}, zeros, "alias"));
  // MXNet ignores dtype here (GluonCV's CenterNet writes it): float32 in, float32 out.
  cases->push_back(Case("zeros_like", {{"dtype", "int64"}}, {{2, 3}}, zeros, "dtype_ignored"));
  cases->push_back(Case("ones_like", {{"dtype", "int64"}}, {{3}}, ones, "dtype_ignored"));
  cases->push_back(Case("ones_like", {}, {{2, 3}}, ones));
  cases->push_back(WithDTypes(Case("ones_like", {}, {{5}}, ones, "uint8"), {u8}));
  cases->push_back(WithDTypes(Case("ones_like", {}, {{2, 2}}, ones, "float64"), {f64}));

  cases->push_back(Case("_contrib_arange_like", {}, {{2, 3}}, RangeLike(0, 1, 1, 0, false)));
  cases->push_back(Case("_contrib_arange_like", {{"start", "1"}, {"step", "0.5"}}, {{3, 2}},
                        RangeLike(1, 0.5, 1, 0, false), "start_step"));
  cases->push_back(Case("_contrib_arange_like", {{"repeat", "2"}}, {{2, 4}},
                        RangeLike(0, 1, 2, 0, false), "repeat"));
  cases->push_back(Case("_contrib_arange_like", {{"axis", "-1"}}, {{3, 5}},
                        RangeLike(0, 1, 1, -1, true), "axis_last"));
  cases->push_back(Case("_contrib_arange_like", {{"axis", "0"}, {"start", "2"}}, {{4, 2, 3}},
                        RangeLike(2, 1, 1, 0, true), "axis0"));
  cases->push_back(WithDTypes(Case("_contrib_arange_like", {{"start", "-2"}}, {{5}},
                                   RangeLike(-2, 1, 1, 0, false), "int32"),
                              {i32}));
  cases->push_back(Case("_npx_arange_like", {}, {{4}}, RangeLike(0, 1, 1, 0, false), "alias"));

  auto shape_of = [](const std::vector<RefTensor>& in) {
    RefTensor out(Shape{static_cast<int64_t>(in[0].shape.ndim())});
    for (size_t i = 0; i < in[0].shape.ndim(); ++i)
      out[static_cast<int64_t>(i)] = static_cast<double>(in[0].shape[i]);
    return std::vector<RefTensor>{out};
  };
  auto size_of = [](const std::vector<RefTensor>& in) {
    RefTensor out(Shape{1});
    out[0] = static_cast<double>(in[0].shape.Size());
    return std::vector<RefTensor>{out};
  };
  cases->push_back(Case("shape_array", {}, {{2, 3, 4}}, shape_of));
  cases->push_back(WithDTypes(Case("shape_array", {}, {{7}}, shape_of, "int32"), {i32}));
  cases->push_back(Case("_npx_shape_array", {}, {{1, 5}}, shape_of, "alias"));
  cases->push_back(Case("size_array", {}, {{2, 3}}, size_of));
  cases->push_back(WithDTypes(Case("size_array", {}, {{4, 1, 3}}, size_of, "uint8"), {u8}));
  cases->push_back(WithDTypes(Case("size_array", {}, {{2}}, size_of, "int64"), {i64}));
}

HN_ERROR_CASES(Init) {
  const auto invalid = StatusCode::kInvalidArgument;
  cases->push_back(Rejected("_arange", {{"start", "0"}, {"stop", "3"}, {"step", "0"}}, {}, invalid,
                            {"_arange(node)", "step"}));
  cases->push_back(Rejected("_arange", {{"start", "5"}, {"stop", "1"}}, {}, invalid,
                            {"_arange(node)", "invalid range"}));
  cases->push_back(
      Rejected("_arange", {{"start", "0"}}, {}, invalid, {"_arange(node)", "invalid range"}));
  cases->push_back(Rejected("_arange", {{"start", "0"}, {"stop", "nan"}}, {}, invalid,
                            {"_arange(node)", "invalid range"}));
  cases->push_back(Rejected("_arange", {{"start", "0"}, {"stop", "1e30"}}, {},
                            StatusCode::kOutOfMemory,
                            {"_arange(node)", "HN_LIMIT_MAX_TENSOR_ELEMENTS"}));
  cases->push_back(Rejected("_arange", {{"start", "0"}, {"stop", "1"}, {"step", "1e-300"}}, {},
                            StatusCode::kOutOfMemory, {"_arange(node)", "tensor limit"}));
  cases->push_back(Rejected("_arange", {{"start", "0"}, {"stop", "3"}, {"repeat", "0"}}, {},
                            invalid, {"_arange(node)", "repeat"}));
  cases->push_back(Rejected("_arange", {{"start", "0"}, {"stop", "3"}, {"dtype", "float16"}}, {},
                            StatusCode::kUnsupported, {"_arange(node)", "float16"}));
  cases->push_back(Rejected("_full", {{"shape", "(2,)"}}, {}, invalid, {"_full(node)", "value"}));
  cases->push_back(Rejected("_full", {{"shape", "(100000, 100000, 100000)"}, {"value", "1"}}, {},
                            StatusCode::kOutOfMemory,
                            {"_full(node)", "HN_LIMIT_MAX_TENSOR_ELEMENTS"}));
  cases->push_back(Rejected("_full", {{"shape", "(-1, 3)"}, {"value", "1"}}, {},
                            StatusCode::kShapeError, {"_full(node)", "negative"}));
  cases->push_back(Rejected("_zeros", {{"shape", "(4294967296, 4294967296, 4294967296)"}}, {},
                            StatusCode::kOutOfMemory, {"_zeros(node)", "tensor limit"}));
  cases->push_back(Rejected("_zeros", {{"shape", "(2, 3)"}, {"dtype", "int16"}}, {}, invalid,
                            {"_zeros(node)", "dtype", "int16"}));
  cases->push_back(Rejected("_ones", {{"shape", "(2, 3)"}, {"dtype", "complex64"}}, {}, invalid,
                            {"_ones(node)", "dtype"}));
  cases->push_back(Rejected("_eye", {{"N", "0"}}, {}, invalid, {"_eye(node)", "N"}));
  cases->push_back(Rejected("_eye", {{"N", "2"}, {"M", "-1"}}, {}, invalid, {"_eye(node)", "M"}));
  cases->push_back(
      Rejected("_eye", {{"N", "2"}, {"dtype", "bool"}}, {}, invalid, {"_eye(node)", "dtype"}));
  cases->push_back(Rejected("_eye", {{"N", "3000000000"}, {"M", "3000000000"}}, {},
                            StatusCode::kOutOfMemory, {"_eye(node)", "tensor limit"}));
  cases->push_back(Rejected("_linspace", {{"start", "0"}, {"stop", "1"}, {"num", "0"}}, {}, invalid,
                            {"_linspace(node)", "num"}));
  cases->push_back(Rejected("_linspace", {{"start", "0"}, {"stop", "1"}}, {}, invalid,
                            {"_linspace(node)", "num"}));
  cases->push_back(Rejected("_linspace",
                            {{"start", "0"}, {"stop", "1"}, {"num", "3"}, {"step", "1"}}, {},
                            invalid, {"_linspace(node)", "step"}));
  cases->push_back(Rejected("_zeros_without_dtype", {{"shape", "(2,)"}, {"dtype", "99"}}, {},
                            invalid, {"_zeros_without_dtype(node)", "dtype", "99"}));
  cases->push_back(Rejected("_zeros_without_dtype", {{"shape", "(2,)"}}, {}, StatusCode::kTypeError,
                            {"_zeros_without_dtype(node)"}));
  cases->push_back(Rejected("_contrib_arange_like", {{"axis", "2"}}, {{2, 3}},
                            StatusCode::kShapeError, {"_contrib_arange_like(node)", "axis 2"}));
  cases->push_back(Rejected("_contrib_arange_like", {{"repeat", "0"}}, {{2, 3}}, invalid,
                            {"_contrib_arange_like(node)", "repeat"}));
  cases->push_back(Rejected("zeros_like", {}, {{2}, {2}}, invalid, {"zeros_like(node)", "inputs"}));
  cases->push_back(
      Rejected("ones_like", {{"value", "2"}}, {{2}}, invalid, {"ones_like(node)", "value"}));
  cases->push_back(Rejected("shape_array", {}, {}, invalid, {"shape_array(node)", "inputs"}));
  cases->push_back(
      Rejected("size_array", {{"axis", "0"}}, {{2}}, invalid, {"size_array(node)", "axis"}));
}

}  // namespace conformance
}  // namespace hybridnet
