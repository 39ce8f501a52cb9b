// Conformance cases: nansum, nanprod, norm, moments and cumsum (_np_cumsum).
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Output shape and, per input element, its output position for a reduction over `axes`
// (empty = all), legacy semantics: no keepdims and all axes reduced give (1,).
struct Reduction {
  Shape out;
  std::vector<int64_t> target;  // per input element
};

Reduction Reduce(const Shape& in, std::set<int64_t> axes, bool keepdims, bool exclude = false) {
  const int64_t n = static_cast<int64_t>(in.ndim());
  std::set<int64_t> reduced;
  for (int64_t a : axes) reduced.insert(a < 0 ? a + n : a);
  if (axes.empty()) {
    for (int64_t a = 0; a < n; ++a) reduced.insert(a);
  } else if (exclude) {
    std::set<int64_t> kept = reduced;
    reduced.clear();
    for (int64_t a = 0; a < n; ++a)
      if (!kept.count(a)) reduced.insert(a);
  }
  std::vector<int64_t> out_dims, kept_dims;
  for (int64_t a = 0; a < n; ++a) {
    const bool r = reduced.count(a) > 0;
    if (!r) kept_dims.push_back(in[static_cast<size_t>(a)]);
    if (!r)
      out_dims.push_back(in[static_cast<size_t>(a)]);
    else if (keepdims)
      out_dims.push_back(1);
  }
  if (out_dims.empty()) out_dims.push_back(1);
  Reduction red;
  red.out = Shape(out_dims);
  for (int64_t i = 0; i < in.Size(); ++i) {
    const std::vector<int64_t> idx = Unravel(i, in);
    int64_t flat = 0;
    for (int64_t a = 0; a < n; ++a) {
      if (reduced.count(a)) continue;
      flat = flat * in[static_cast<size_t>(a)] + idx[static_cast<size_t>(a)];
    }
    red.target.push_back(flat);
  }
  return red;
}

// fold(acc, x) over each output's elements, then finish(acc, count).
RefFn Fold(std::set<int64_t> axes, bool keepdims, bool exclude, double init,
           std::function<double(double, double)> fold,
           std::function<double(double, int64_t)> finish) {
  return [=](const std::vector<RefTensor>& in) {
    const Reduction red = Reduce(in[0].shape, axes, keepdims, exclude);
    RefTensor out(red.out);
    std::vector<int64_t> count(static_cast<size_t>(out.size()), 0);
    for (int64_t i = 0; i < out.size(); ++i) out[i] = init;
    for (int64_t i = 0; i < in[0].size(); ++i) {
      const int64_t o = red.target[static_cast<size_t>(i)];
      out[o] = fold(out[o], in[0][i]);
      ++count[static_cast<size_t>(o)];
    }
    for (int64_t i = 0; i < out.size(); ++i) out[i] = finish(out[i], count[static_cast<size_t>(i)]);
    return std::vector<RefTensor>{out};
  };
}

double Same(double v, int64_t) { return v; }

RefFn NanSum(std::set<int64_t> axes = {}, bool keepdims = false, bool exclude = false) {
  return Fold(
      axes, keepdims, exclude, 0, [](double a, double x) { return std::isnan(x) ? a : a + x; },
      Same);
}
RefFn NanProd(std::set<int64_t> axes = {}, bool keepdims = false, bool exclude = false) {
  return Fold(
      axes, keepdims, exclude, 1, [](double a, double x) { return std::isnan(x) ? a : a * x; },
      Same);
}
RefFn Norm(int ord, std::set<int64_t> axes = {}, bool keepdims = false) {
  return Fold(
      axes, keepdims, false, 0,
      [ord](double a, double x) { return a + (ord == 1 ? std::fabs(x) : x * x); },
      [ord](double v, int64_t) { return ord == 1 ? v : std::sqrt(v); });
}

// moments: population mean and variance; `integer` truncates both divisions (integer inputs).
RefFn Moments(std::set<int64_t> axes, bool keepdims, bool integer = false) {
  return [=](const std::vector<RefTensor>& in) {
    auto div = [integer](double a, int64_t n) {
      return integer ? std::trunc(a / static_cast<double>(n)) : a / static_cast<double>(n);
    };
    RefTensor mean = Fold(
        axes, keepdims, false, 0, [](double a, double x) { return a + x; }, div)(in)[0];
    if (!integer) {
      for (int64_t i = 0; i < mean.size(); ++i) mean[i] = F32(mean[i]);
    }
    const Reduction red = Reduce(in[0].shape, axes, keepdims);
    RefTensor var(red.out);
    std::vector<int64_t> count(static_cast<size_t>(var.size()), 0);
    for (int64_t i = 0; i < in[0].size(); ++i) {
      const int64_t o = red.target[static_cast<size_t>(i)];
      const double d = in[0][i] - mean[o];
      var[o] += d * d;
      ++count[static_cast<size_t>(o)];
    }
    for (int64_t i = 0; i < var.size(); ++i) var[i] = div(var[i], count[static_cast<size_t>(i)]);
    return std::vector<RefTensor>{mean, var};
  };
}

// Running sums along `axis` (-1 = over the flattened input), each step converted to d.
RefFn Cumsum(int axis, DType d) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& s = in[0].shape;
    RefTensor out(axis < 0 ? Shape{s.Size()} : s);
    if (axis < 0) {
      double acc = 0;
      for (int64_t i = 0; i < out.size(); ++i)
        out[i] = acc = ConvertTo(acc + ConvertTo(in[0][i], d), d);
      return std::vector<RefTensor>{out};
    }
    const std::vector<int64_t> st = Strides(s);
    for (int64_t i = 0; i < out.size(); ++i) {
      const std::vector<int64_t> idx = Unravel(i, s);
      const int64_t k = idx[static_cast<size_t>(axis)];
      const int64_t prev = i - st[static_cast<size_t>(axis)];
      out[i] = ConvertTo((k == 0 ? 0.0 : out[prev]) + ConvertTo(in[0][i], d), d);
    }
    return std::vector<RefTensor>{out};
  };
}

// Uniform values in [-2, 2) with about one NaN in five.
InputGen WithNaNs() {
  return [](std::mt19937& rng, size_t, int64_t) {
    if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) return kNaN;
    return std::uniform_real_distribution<double>(-2, 2)(rng);
  };
}

}  // namespace

HN_CONFORMANCE_CASES(Statistics) {
  const Shape s{2, 3, 4};
  const DType i32 = DType::kInt32, f64 = DType::kFloat64, i8 = DType::kInt8, u8 = DType::kUint8,
              i64 = DType::kInt64;
  cases->push_back(WithGen(Case("nansum", {}, {s}, NanSum()), WithNaNs()));
  cases->push_back(WithGen(Case("nansum", {{"axis", "1"}}, {s}, NanSum({1}), "axis"), WithNaNs()));
  cases->push_back(WithGen(Case("nansum", {{"axis", "(0, 2)"}, {"keepdims", "True"}}, {s},
                                NanSum({0, 2}, true), "axes_keepdims"),
                           WithNaNs()));
  cases->push_back(WithGen(Case("nansum", {{"axis", "-1"}, {"exclude", "True"}}, {s},
                                NanSum({-1}, false, true), "exclude"),
                           WithNaNs()));
  cases->push_back(WithDTypes(
      WithGen(Case("nansum", {{"axis", "0"}}, {s}, NanSum({0}), "int32"), Integers(-50, 50)),
      {i32}));
  cases->push_back(
      WithDTypes(WithGen(Case("nansum", {}, {s}, NanSum(), "float64"), WithNaNs()), {f64}));
  auto positive_nans = [](std::mt19937& rng, size_t, int64_t) {
    if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) return kNaN;
    return std::uniform_real_distribution<double>(0.5, 1.5)(rng);
  };
  cases->push_back(WithGen(Case("nanprod", {}, {s}, NanProd()), positive_nans));
  cases->push_back(WithGen(Case("nanprod", {{"axis", "2"}, {"keepdims", "True"}}, {s},
                                NanProd({2}, true), "axis_keepdims"),
                           positive_nans));
  cases->push_back(WithDTypes(
      WithGen(Case("nanprod", {{"axis", "1"}}, {s}, NanProd({1}), "int64"), Integers(-4, 4)),
      {i64}));
  // Without NaNs: the cases the gradient check can difference (finite inputs only).
  cases->push_back(Case("nansum", {{"axis", "(0, 2)"}}, {s}, NanSum({0, 2}), "finite"));
  cases->push_back(
      WithGen(Case("nanprod", {{"axis", "1"}}, {s}, NanProd({1}), "finite"), Uniform(0.5, 1.5)));

  cases->push_back(Case("norm", {}, {s}, Norm(2)));
  cases->push_back(Case("norm", {{"ord", "1"}, {"axis", "1"}}, {s}, Norm(1, {1}), "l1_axis"));
  cases->push_back(Case("norm", {{"axis", "(1, 2)"}, {"keepdims", "True"}}, {s},
                        Norm(2, {1, 2}, true), "axes_keepdims"));
  cases->push_back(Case("norm", {{"axis", "-1"}, {"ord", "2"}}, {s}, Norm(2, {-1}), "last_axis"));
  cases->push_back(Case("norm", {{"keepdims", "True"}}, {{3, 4}}, Norm(2, {}, true), "keepdims"));
  cases->push_back(
      Case("norm", {{"axis", "0"}, {"out_dtype", "float32"}}, {s}, Norm(2, {0}), "out_dtype_same"));
  cases->push_back(WithDTypes(
      Case("norm", {{"ord", "1"}, {"out_dtype", "float64"}}, {s}, Norm(1), "out_dtype_float64"),
      {f64}));
  cases->push_back(
      WithDTypes(Case("norm", {{"axis", "(0, 1)"}}, {s}, Norm(2, {0, 1}), "float64"), {f64}));
  cases->push_back(Case("_sparse_norm", {{"ord", "1"}}, {{5}}, Norm(1), "alias"));

  cases->push_back(Case("moments", {{"axes", "(1,)"}}, {s}, Moments({1}, false)));
  cases->push_back(Case("moments", {{"axes", "(0, 2)"}, {"keepdims", "True"}}, {s},
                        Moments({0, 2}, true), "axes_keepdims"));
  cases->push_back(
      Case("moments", {{"axes", "(0, 1, 2)"}}, {s}, Moments({0, 1, 2}, false), "all_axes"));
  cases->push_back(WithDTypes(
      Case("moments", {{"axes", "(-1,)"}}, {s}, Moments({-1}, false), "float64"), {f64}));
  cases->push_back(WithDTypes(WithGen(Case("moments", {{"axes", "(2,)"}}, {s},
                                           Moments({2}, false, true), "int32_truncates"),
                                      Integers(-20, 20)),
                              {i32}));

  cases->push_back(Case("_np_cumsum", {}, {s}, Cumsum(-1, DType::kFloat64)));
  cases->push_back(Case("_np_cumsum", {{"axis", "0"}}, {s}, Cumsum(0, DType::kFloat64), "axis0"));
  cases->push_back(Case("cumsum", {{"axis", "2"}}, {s}, Cumsum(2, DType::kFloat64), "alias_axis2"));
  cases->push_back(Case("_np_cumsum", {{"axis", "1"}, {"dtype", "float64"}}, {s},
                        Cumsum(1, DType::kFloat64), "float64_accumulator"));
  cases->push_back(
      WithDTypes(WithGen(Case("_np_cumsum", {{"axis", "1"}}, {s}, Cumsum(1, i32), "int32"),
                         Integers(-100, 100)),
                 {i32}));
  cases->push_back(WithDTypes(
      WithGen(Case("_np_cumsum", {}, {{40}}, Cumsum(-1, u8), "uint8_wraps"), Integers(0, 255)),
      {u8}));
  cases->push_back(WithDTypes(
      WithGen(Case("_np_cumsum", {{"dtype", "int32"}}, {{6, 7}}, Cumsum(-1, i32), "int8_to_int32"),
              Integers(-128, 127)),
      {i8}));
  cases->push_back(WithGen(Case("_np_cumsum", {{"axis", "0"}, {"dtype", "int64"}}, {{5, 3}},
                                Cumsum(0, i64), "float_to_int64"),
                           Uniform(-9, 9)));
}

HN_ERROR_CASES(Statistics) {
  cases->push_back(Rejected("nansum", {{"axis", "3"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"nansum(node)", "axis 3"}));
  cases->push_back(Rejected("nanprod", {}, {{2}}, StatusCode::kTypeError, {"nanprod(node)", "bool"},
                            {DType::kBool}));
  cases->push_back(Rejected("norm", {{"ord", "3"}}, {{2, 3}}, StatusCode::kInvalidArgument,
                            {"norm(node)", "ord"}));
  cases->push_back(Rejected("norm", {}, {{2, 3}}, StatusCode::kTypeError, {"norm(node)", "int32"},
                            {DType::kInt32}));
  cases->push_back(Rejected("norm", {{"axis", "(0, 0)"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"norm(node)", "twice"}));
  cases->push_back(Rejected("norm", {{"out_dtype", "uint8"}}, {{2, 3}},
                            StatusCode::kInvalidArgument, {"norm(node)", "out_dtype"}));
  cases->push_back(Rejected("norm", {{"out_dtype", "float64"}}, {{2, 3}}, StatusCode::kUnsupported,
                            {"norm(node)", "out_dtype=float64"}));
  cases->push_back(
      Rejected("moments", {}, {{2, 3}}, StatusCode::kInvalidArgument, {"moments(node)", "axes"}));
  cases->push_back(Rejected("moments", {{"axes", "()"}}, {{2, 3}}, StatusCode::kInvalidArgument,
                            {"moments(node)", "axes"}));
  cases->push_back(Rejected("moments", {{"axes", "(5,)"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"moments(node)", "axis 5"}));
  cases->push_back(Rejected("_np_cumsum", {{"axis", "-1"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"_np_cumsum(node)", "negative"}));
  cases->push_back(Rejected("_np_cumsum", {{"axis", "2"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"_np_cumsum(node)", "axis 2"}));
  cases->push_back(Rejected("_np_cumsum", {{"dtype", "float16"}}, {{2, 3}},
                            StatusCode::kUnsupported, {"_np_cumsum(node)", "float16"}));
}

}  // namespace conformance
}  // namespace hybridnet
