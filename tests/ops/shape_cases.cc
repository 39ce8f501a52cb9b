// Conformance cases: Reshape (every special code of MXNet's documentation), Flatten,
// expand_dims, transpose, Concat, SliceChannel, Cast and _hn_cast_like (Cast's gradient).
#include <cmath>
#include <cstdint>

#include "conformance.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

// Same values, new shape.
RefFn Reshaped(Shape s) {
  return [s](const std::vector<RefTensor>& in) {
    RefTensor out(s);
    out.v = in[0].v;
    return std::vector<RefTensor>{out};
  };
}

RefFn Transposed(std::vector<size_t> perm) {
  return [perm](const std::vector<RefTensor>& in) {
    const Shape& is = in[0].shape;
    std::vector<int64_t> od;
    for (size_t p : perm) od.push_back(is[p]);
    RefTensor out{Shape(od)};
    std::vector<int64_t> st = Strides(is);
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> idx = Unravel(i, out.shape);
      int64_t src = 0;
      for (size_t k = 0; k < perm.size(); ++k) src += idx[k] * st[perm[k]];
      out[i] = in[0][src];
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn Concatenated(size_t axis) {
  return [axis](const std::vector<RefTensor>& in) {
    std::vector<int64_t> od(in[0].shape.begin(), in[0].shape.end());
    od[axis] = 0;
    for (const auto& t : in) od[axis] += t.shape[axis];
    RefTensor out{Shape(od)};
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> idx = Unravel(i, out.shape);
      size_t which = 0;
      while (idx[axis] >= in[which].shape[axis]) idx[axis] -= in[which++].shape[axis];
      const RefTensor& t = in[which];
      std::vector<int64_t> st = Strides(t.shape);
      int64_t src = 0;
      for (size_t k = 0; k < idx.size(); ++k) src += idx[k] * st[k];
      out[i] = t[src];
    }
    return std::vector<RefTensor>{out};
  };
}

RefFn Split(size_t axis, int64_t parts, bool squeeze) {
  return [axis, parts, squeeze](const std::vector<RefTensor>& in) {
    const Shape& is = in[0].shape;
    std::vector<int64_t> pd(is.begin(), is.end());
    pd[axis] /= parts;
    std::vector<int64_t> od = pd;
    if (squeeze) od.erase(od.begin() + static_cast<std::ptrdiff_t>(axis));
    std::vector<RefTensor> outs;
    std::vector<int64_t> st = Strides(is);
    for (int64_t k = 0; k < parts; ++k) {
      RefTensor out{Shape(od)};
      for (int64_t i = 0; i < out.size(); ++i) {
        std::vector<int64_t> idx = Unravel(i, Shape(pd));
        idx[axis] += k * pd[axis];
        int64_t src = 0;
        for (size_t d = 0; d < idx.size(); ++d) src += idx[d] * st[d];
        out[i] = in[0][src];
      }
      outs.push_back(out);
    }
    return outs;
  };
}

OpCase CastCase(DType from, const char* to, std::function<double(double)> convert, InputGen gen,
                std::string note) {
  OpCase c = WithGen(Case("Cast", {{"dtype", to}}, {{3, 4}}, Unary(std::move(convert)), note),
                     std::move(gen));
  c.dtypes = {from};
  return c;
}

}  // namespace

HN_CONFORMANCE_CASES(Reshape) {
  struct Example {
    Shape in;
    const char* shape;
    Shape out;
    bool reverse;
    const char* note;
  };
  // The examples of MXNet's Reshape documentation.
  const Example examples[] = {
      {{2, 3, 4}, "(4, 0, 2)", {4, 3, 2}, false, "code0"},
      {{2, 3, 4}, "(2, 0, 0)", {2, 3, 4}, false, "code0_twice"},
      {{2, 3, 4}, "(6, 1, -1)", {6, 1, 4}, false, "infer_last"},
      {{2, 3, 4}, "(3, -1, 8)", {3, 1, 8}, false, "infer_middle"},
      {{2, 3, 4}, "(-1,)", {24}, false, "infer_only"},
      {{2, 3, 4}, "(-2,)", {2, 3, 4}, false, "copy_rest"},
      {{2, 3, 4}, "(2, -2)", {2, 3, 4}, false, "copy_rest_after"},
      {{2, 3, 4}, "(-2, 1, 1)", {2, 3, 4, 1, 1}, false, "copy_rest_then_ones"},
      {{2, 3, 4}, "(-3, 4)", {6, 4}, false, "merge"},
      {{2, 3, 4, 5}, "(-3, -3)", {6, 20}, false, "merge_twice"},
      {{2, 3, 4}, "(0, -3)", {2, 12}, false, "copy_merge"},
      {{2, 3, 4}, "(-3, -2)", {6, 4}, false, "merge_copy_rest"},
      {{2, 3, 4}, "(-4, 1, 2, -2)", {1, 2, 3, 4}, false, "split"},
      {{2, 3, 4}, "(2, -4, -1, 3, -2)", {2, 1, 3, 4}, false, "split_infer"},
      {{10, 5, 4}, "(-1, 0)", {40, 5}, false, "forward"},
      {{10, 5, 4}, "(-1, 0)", {50, 4}, true, "reverse"},
      {{2, 3, 4}, "[4, 6]", {4, 6}, false, "list_syntax"},
      {{6}, "(2, 3)", {2, 3}, false, "plain"},
  };
  for (const Example& e : examples) {
    AttrDict attrs{{"shape", e.shape}};
    if (e.reverse) attrs["reverse"] = "True";
    cases->push_back(Case("Reshape", attrs, {e.in}, Reshaped(e.out), e.note));
  }
  cases->push_back(Case("reshape", {{"shape", "(3, 2)"}}, {{2, 3}}, Reshaped({3, 2}), "alias"));
  cases->push_back(Case("Reshape", {{"target_shape", "(0, 4)"}}, {{2, 3, 4}}, Reshaped({6, 4}),
                        "legacy_target_shape"));
  cases->push_back(Case("Reshape", {{"target_shape", "(5, 0)"}, {"keep_highest", "True"}},
                        {{2, 3, 4}}, Reshaped({2, 12}), "legacy_keep_highest"));
}

HN_CONFORMANCE_CASES(ShapeOps) {
  cases->push_back(Case("Flatten", {}, {{2, 3, 4, 5}}, Reshaped({2, 60})));
  cases->push_back(Case("flatten", {}, {{3, 4}}, Reshaped({3, 4}), "alias_2d"));
  cases->push_back(Case("Flatten", {}, {{5}}, Reshaped({5, 1}), "1d"));
  cases->push_back(Case("expand_dims", {{"axis", "1"}}, {{2, 3}}, Reshaped({2, 1, 3})));
  cases->push_back(Case("expand_dims", {{"axis", "-1"}}, {{2, 3}}, Reshaped({2, 3, 1}), "neg"));
  cases->push_back(Case("expand_dims", {{"axis", "0"}}, {{4}}, Reshaped({1, 4}), "front"));
  // Views of any dtype (Mask R-CNN's box clipping expands the int64 image shape).
  cases->push_back(WithDTypes(
      Case("expand_dims", {{"axis", "0"}}, {{2}}, Reshaped({1, 2}), "int64"), {DType::kInt64}));
  cases->push_back(
      WithDTypes(Case("Reshape", {{"shape", "(3, 2)"}}, {{2, 3}}, Reshaped({3, 2}), "int32"),
                 {DType::kInt32}));
  cases->push_back(
      WithDTypes(Case("Flatten", {}, {{2, 2, 2}}, Reshaped({2, 4}), "uint8"), {DType::kUint8}));
  cases->push_back(Case("transpose", {}, {{2, 3, 4}}, Transposed({2, 1, 0})));
  cases->push_back(
      Case("transpose", {{"axes", "(0, 2, 1)"}}, {{2, 3, 4}}, Transposed({0, 2, 1}), "axes"));
  cases->push_back(Case("transpose", {{"axes", "(1, 0)"}}, {{5, 7}}, Transposed({1, 0}), "2d"));
  cases->push_back(Case("transpose", {{"axes", "(3, 1, 0, 2)"}}, {{2, 3, 4, 5}},
                        Transposed({3, 1, 0, 2}), "4d"));
  cases->push_back(
      Case("Concat", {{"num_args", "2"}, {"dim", "1"}}, {{2, 3, 4}, {2, 5, 4}}, Concatenated(1)));
  cases->push_back(Case("concat", {{"num_args", "3"}, {"dim", "0"}}, {{1, 3}, {2, 3}, {4, 3}},
                        Concatenated(0), "alias_dim0"));
  cases->push_back(Case("Concat", {{"num_args", "2"}, {"dim", "-1"}}, {{2, 3}, {2, 2}},
                        Concatenated(1), "neg_dim"));
  cases->push_back(Case("Concat", {{"num_args", "2"}}, {{2, 3, 2, 2}, {2, 1, 2, 2}},
                        Concatenated(1), "default_dim"));
  cases->push_back(Case("Concat", {{"num_args", "1"}}, {{2, 3}}, Concatenated(1), "single"));
  cases->push_back(WithDTypes(
      Case("Concat", {{"num_args", "2"}, {"dim", "0"}}, {{2}, {3}}, Concatenated(0), "int64"),
      {DType::kInt64, DType::kInt64}));
  cases->push_back(Case("SliceChannel", {{"num_outputs", "2"}}, {{2, 4, 3}}, Split(1, 2, false)));
  cases->push_back(Case("split", {{"num_outputs", "3"}, {"axis", "0"}}, {{6, 2}},
                        Split(0, 3, false), "alias_axis0"));
  cases->push_back(Case("SliceChannel",
                        {{"num_outputs", "3"}, {"axis", "-1"}, {"squeeze_axis", "True"}},
                        {{2, 4, 3}}, Split(2, 3, true), "squeeze"));
  // Any dtype, as MXNet (GluonCV's CenterNet splits an int64 shape_array).
  cases->push_back(WithDTypes(
      Case("split", {{"num_outputs", "2"}, {"axis", "0"}}, {{4}}, Split(0, 2, false), "int64"),
      {DType::kInt64}));
}

HN_CONFORMANCE_CASES(Cast) {
  auto identity = [](double x) { return x; };
  auto truncate = [](double x) { return std::trunc(x); };
  cases->push_back(CastCase(DType::kFloat32, "int32", truncate, Uniform(-100, 100), "f32_i32"));
  cases->push_back(CastCase(DType::kInt32, "float32", identity, Integers(-1000, 1000), "i32_f32"));
  cases->push_back(CastCase(DType::kFloat32, "float64", identity, Uniform(-2, 2), "f32_f64"));
  // A cast to float32 narrows the float64 the gradient check runs in (here and in "same"): its
  // gradient (the output gradient converted back) is given, as finite differences would measure
  // the output's rounding.
  cases->push_back(WithGradient(
      CastCase(DType::kFloat64, "float32", F32, Uniform(-2, 2), "f64_f32"), ScaledOutGrad(1)));
  // float16 keeps 11 significant bits.
  cases->push_back(
      WithTol(CastCase(DType::kFloat32, "float16", identity, Uniform(-2, 2), "f32_f16"), 1e-3, 0));
  cases->push_back(CastCase(DType::kUint8, "float32", identity, Integers(0, 255), "u8_f32"));
  cases->push_back(CastCase(DType::kFloat32, "uint8", truncate, Uniform(0, 255), "f32_u8"));
  cases->push_back(CastCase(DType::kInt64, "int8", identity, Integers(-128, 127), "i64_i8"));
  cases->push_back(CastCase(
      DType::kFloat32, "bool", [](double x) { return x != 0 ? 1.0 : 0.0; }, Integers(-1, 1),
      "f32_bool"));
  cases->push_back(WithGradient(
      CastCase(DType::kFloat32, "float32", identity, Uniform(-2, 2), "same"), ScaledOutGrad(1)));
  OpCase alias = CastCase(DType::kInt32, "int64", identity, Integers(-5, 5), "alias");
  alias.op = "cast";
  cases->push_back(alias);
  // The conversions' gradient: data converted to like's dtype.
  cases->push_back(
      InternalCase(WithDTypes(Case("_hn_cast_like", {}, {{3, 4}, {3, 4}}, Unary(F32), "f64_f32"),
                              {DType::kFloat64, DType::kFloat32})));
  cases->push_back(InternalCase(
      WithDTypes(Case("_hn_cast_like", {}, {{2, 5}, {2, 5}}, Unary(identity), "f32_f64"),
                 {DType::kFloat32, DType::kFloat64})));
}

HN_ERROR_CASES(Shape) {
  cases->push_back(Rejected("Concat", {{"num_args", "2"}}, {{2, 3}, {3, 3}},
                            StatusCode::kShapeError, {"Concat(node)"}));
  cases->push_back(Rejected("Reshape", {{"shape", "(4, -1)"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"Reshape(node)", "(2, 3)"}));
  cases->push_back(Rejected("Reshape", {{"shape", "(5, 2)"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"Reshape(node)"}));
  cases->push_back(Rejected("Reshape", {{"shape", "(-1, -1)"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"Reshape(node)", "-1"}));
  cases->push_back(Rejected("transpose", {{"axes", "(0, 0)"}}, {{2, 3}}, StatusCode::kShapeError,
                            {"transpose(node)", "axes"}));
  cases->push_back(Rejected("SliceChannel", {{"num_outputs", "2"}}, {{2, 3}},
                            StatusCode::kShapeError, {"SliceChannel(node)", "num_outputs=2"}));
}

}  // namespace conformance
}  // namespace hybridnet
