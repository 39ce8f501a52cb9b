// Conformance cases: the inference forms of AMP casts, storage/device copies, training-only
// regularizers and the finiteness checks.
#include <cmath>
#include <limits>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// float16's nearest value (round to nearest even), for values well inside its normal range.
double F16(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(x, &e);                           // |x| = m * 2^e, m in [0.5, 1)
  const double ulp = std::ldexp(1.0, e - 11);  // 11 significant bits
  return std::nearbyint(x / ulp) * ulp;
}

RefFn Identity() {
  return [](const std::vector<RefTensor>& in) { return std::vector<RefTensor>{in[0]}; };
}

RefFn EachInput(std::function<double(double)> f) {
  return [f](const std::vector<RefTensor>& in) {
    std::vector<RefTensor> out;
    for (const RefTensor& t : in) {
      RefTensor o(t.shape);
      for (int64_t i = 0; i < o.size(); ++i) o[i] = f(t[i]);
      out.push_back(o);
    }
    return out;
  };
}

RefFn AllFinite() {
  return [](const std::vector<RefTensor>& in) {
    RefTensor out(Shape{1});
    out[0] = 1;
    for (const RefTensor& t : in)
      for (int64_t i = 0; i < t.size(); ++i)
        if (!std::isfinite(F32(t[i]))) out[0] = 0;
    return std::vector<RefTensor>{out};
  };
}

}  // namespace

HN_CONFORMANCE_CASES(PassThrough) {
  const Shape s{2, 3, 4};
  const DType f16 = DType::kFloat16, f32 = DType::kFloat32, f64 = DType::kFloat64,
              i32 = DType::kInt32;
  cases->push_back(Case("amp_cast", {{"dtype", "float16"}}, {s}, Unary(F16)));
  cases->push_back(Case("amp_cast", {{"dtype", "float64"}}, {s}, Unary(F32), "to_float64"));
  cases->push_back(
      WithDTypes(Case("amp_cast", {{"dtype", "float32"}}, {s}, Unary(F16), "from_float16"), {f16}));
  cases->push_back(WithGen(Case("amp_cast", {{"dtype", "int32"}}, {s},
                                Unary([](double x) { return std::trunc(x); }), "to_int32"),
                           Uniform(-50, 50)));
  // Inputs that are not float32/16/bfloat16 pass unchanged.
  cases->push_back(
      WithDTypes(WithGen(Case("amp_cast", {{"dtype", "float16"}}, {s}, Identity(), "int32_passes"),
                         Integers(-9, 9)),
                 {i32}));
  cases->push_back(WithDTypes(
      Case("amp_cast", {{"dtype", "float16"}}, {s}, Identity(), "float64_passes"), {f64}));
  // The widest: float32 when present; without float32, input 0's type. Widening keeps values.
  auto same = EachInput([](double x) { return x; });
  cases->push_back(
      WithDTypes(Case("amp_multicast", {{"num_outputs", "2"}}, {s, {5}}, same), {f32, f16}));
  cases->push_back(WithDTypes(Case("amp_multicast", {{"num_outputs", "2"}, {"cast_narrow", "True"}},
                                   {s, {5}}, EachInput(F16), "narrow"),
                              {f32, f16}));
  cases->push_back(WithDTypes(
      Case("amp_multicast", {{"num_outputs", "3"}}, {{4}, {3}, {2}}, same, "float64_first"),
      {f64, f16, i32}));
  cases->push_back(Case("amp_multicast", {{"num_outputs", "1"}}, {s}, same, "one"));

  cases->push_back(Case("cast_storage", {{"stype", "default"}}, {s}, Identity()));
  cases->push_back(Case("cast_storage", {{"stype", "csr"}}, {{3, 4}}, Identity(), "csr"));
  cases->push_back(Case("_sparse_cast_storage", {{"stype", "row_sparse"}}, {{3, 4}}, Identity(),
                        "row_sparse_alias"));
  cases->push_back(
      WithDTypes(WithGen(Case("cast_storage", {{"stype", "default"}}, {s}, Identity(), "int32"),
                         Integers(-9, 9)),
                 {i32}));
  cases->push_back(Case("_CrossDeviceCopy", {}, {s}, Identity()));
  cases->push_back(WithDTypes(Case("_CrossDeviceCopy", {}, {s}, Identity(), "float64"), {f64}));
  cases->push_back(Case("IdentityAttachKLSparseReg", {}, {{4, 3}, {3}}, Identity()));
  cases->push_back(Case("IdentityAttachKLSparseReg",
                        {{"sparseness_target", "0.2"}, {"penalty", "0.01"}, {"momentum", "0.5"}},
                        {{2, 5, 2}, {5}}, Identity(), "attributes"));

  cases->push_back(Case("all_finite", {}, {s}, AllFinite()));
  cases->push_back(WithGen(Case("all_finite", {{"init_output", "True"}}, {{4}}, AllFinite(), "inf"),
                           Values({{1, kInf, 2, 3}})));
  cases->push_back(
      WithGen(Case("all_finite", {}, {{3}}, AllFinite(), "nan"), Values({{kNaN, 0, 1}})));
  // float64 values beyond float's range count as infinite (MXNet tests them as float).
  cases->push_back(WithDTypes(
      WithGen(Case("all_finite", {}, {{3}}, AllFinite(), "float64_huge"), Values({{1, 1e300, 2}})),
      {f64}));
  cases->push_back(Case("multi_all_finite", {{"num_arrays", "2"}}, {s, {5}}, AllFinite()));
  cases->push_back(WithGen(
      Case("multi_all_finite", {{"num_arrays", "3"}}, {{2}, {3}, {2}}, AllFinite(), "nan_in_last"),
      Values({{1, 2}, {3, 4, 5}, {6, kNaN}})));
  cases->push_back(Case("multi_all_finite", {}, {{4}}, AllFinite(), "default_one"));
}

HN_ERROR_CASES(PassThrough) {
  const auto invalid = StatusCode::kInvalidArgument;
  cases->push_back(Rejected("amp_cast", {}, {{2}}, invalid, {"amp_cast(node)", "dtype"}));
  cases->push_back(
      Rejected("amp_cast", {{"dtype", "int16"}}, {{2}}, invalid, {"amp_cast(node)", "int16"}));
  cases->push_back(Rejected("amp_multicast", {{"num_outputs", "2"}}, {{2}}, invalid,
                            {"amp_multicast(node)", "2 inputs"}));
  cases->push_back(Rejected("amp_multicast", {{"num_outputs", "0"}}, {}, invalid,
                            {"amp_multicast(node)", "num_outputs"}));
  cases->push_back(Rejected("cast_storage", {{"stype", "dense"}}, {{2}}, invalid,
                            {"cast_storage(node)", "stype", "dense"}));
  cases->push_back(
      Rejected("_CrossDeviceCopy", {}, {{2}, {2}}, invalid, {"_CrossDeviceCopy(node)", "inputs"}));
  cases->push_back(Rejected("IdentityAttachKLSparseReg", {}, {{4}, {4}}, StatusCode::kShapeError,
                            {"IdentityAttachKLSparseReg(node)", "2 dimensions"}));
  cases->push_back(Rejected("IdentityAttachKLSparseReg", {{"momentum", "1.5"}}, {{2, 3}, {3}},
                            invalid, {"IdentityAttachKLSparseReg(node)", "momentum"}));
  cases->push_back(Rejected("IdentityAttachKLSparseReg", {}, {{2, 3}, {3}}, StatusCode::kTypeError,
                            {"IdentityAttachKLSparseReg(node)", "float64"},
                            {DType::kFloat64, DType::kFloat64}));
  cases->push_back(Rejected("all_finite", {{"init_output", "False"}}, {{2}}, invalid,
                            {"all_finite(node)", "init_output"}));
  cases->push_back(Rejected("all_finite", {}, {{2}}, StatusCode::kTypeError,
                            {"all_finite(node)", "int32"}, {DType::kInt32}));
  cases->push_back(Rejected("multi_all_finite", {{"num_arrays", "2"}}, {{2}, {2}},
                            StatusCode::kTypeError, {"multi_all_finite(node)"},
                            {DType::kFloat32, DType::kFloat64}));
  cases->push_back(Rejected("multi_all_finite", {{"num_arrays", "2"}, {"init_output", "0"}},
                            {{2}, {2}}, invalid, {"multi_all_finite(node)", "init_output"}));
}

}  // namespace conformance
}  // namespace hybridnet
