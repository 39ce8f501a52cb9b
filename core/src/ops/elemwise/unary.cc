// Elementwise unary operators (MXNet src/operator/tensor/elemwise_unary_op_*.cc,
// contrib/stes_op.cc, contrib/quadratic_op.cc): one input "data", one output of the same shape
// and dtype. Like MXNet's, they run on float32, float64, uint8, int8, int32 and int64, integers
// computed as math_functors-inl.h describes (except hard_sigmoid, float only as in MXNet).
#include <cmath>
#include <cstring>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/dtype_switch-inl.h"
#include "ops/elemwise/math_functors-inl.h"
#include "kernels/activation-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::NumericType;
using internal::SwitchNumericDType;
namespace m = op_math;

struct ClipParam {
  float a_min = 0.f;
  float a_max = 0.f;
  static void Declare(ParamDeclarer<ClipParam>* d) {
    d->Field("a_min", &ClipParam::a_min).Required().Describe("Minimum value");
    d->Field("a_max", &ClipParam::a_max).Required().Describe("Maximum value");
  }
};

struct HardSigmoidParam {
  float alpha = 0.2f;
  float beta = 0.5f;
  static void Declare(ParamDeclarer<HardSigmoidParam>* d) {
    d->Field("alpha", &HardSigmoidParam::alpha).Default(0.2f).Describe("Slope of hard sigmoid");
    d->Field("beta", &HardSigmoidParam::beta).Default(0.5f).Describe("Bias of hard sigmoid.");
  }
};

struct QuadraticParam {
  float a = 0.f;
  float b = 0.f;
  float c = 0.f;
  static void Declare(ParamDeclarer<QuadraticParam>* d) {
    d->Field("a", &QuadraticParam::a).Default(0.f).Describe("Coefficient of the quadratic term.");
    d->Field("b", &QuadraticParam::b).Default(0.f).Describe("Coefficient of the linear term.");
    d->Field("c", &QuadraticParam::c).Default(0.f).Describe("Constant term.");
  }
};

// y[i] = f(x[i]) for the element type T; contiguous, so the compiler vectorizes the float32 loop
// exactly as before these ops took other dtypes.
template <typename T, typename F>
void MapElements(const TBlob& in, const TBlob& out, F f) {
  const T* x = in.ptr<const T>();
  T* y = out.ptr<T>();
  const int64_t n = in.Size();
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

template <typename Op>
void UnaryCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    MapElements<T>(in[0], out[0], [](T x) { return Op::Map(x); });
  });
}

template <typename F>
void MathCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  UnaryCompute<m::Math<F>>(ctx, attrs, in, out);
}

// The identity ops: the graph executor aliases output to input (identity view); eager
// invocation copies.
void CopyCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  if (in[0].data != out[0].data && in[0].Size() > 0) {
    std::memcpy(out[0].data, in[0].data,
                static_cast<size_t>(in[0].Size()) * DTypeSize(in[0].dtype));
  }
}

// MXNet's clip (ClipOf, shared with the fused convolution epilogue), with the bounds converted
// to the element type.
void ClipCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const ClipParam& p = attrs.Param<ClipParam>();
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T lo = m::FromReal<T>(p.a_min), hi = m::FromReal<T>(p.a_max);
    MapElements<T>(in[0], out[0], [lo, hi](T x) { return internal::ClipOf(x, lo, hi); });
  });
}

// clip(alpha * x + beta, 0, 1) with float alpha and beta (double inputs compute in double).
void HardSigmoidCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  const HardSigmoidParam& p = attrs.Param<HardSigmoidParam>();
  m::SwitchFloatDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T alpha = p.alpha, beta = p.beta;
    MapElements<T>(in[0], out[0], [alpha, beta](T x) {
      const T v = alpha * x + beta;
      return T(1) < v ? T(1) : (T(0) > v ? T(0) : v);
    });
  });
}

bool FloatType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool complete = ElemwiseType(attrs, in, out);
  for (size_t i = 0; i < in->size(); ++i) {
    const DType d = (*in)[i];
    HN_CHECK(d == DType::kUnknown || d == DType::kFloat32 || d == DType::kFloat64, kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName(d)
        << "; this operator takes float32 or float64 only, as in MXNet (Cast the input first)";
  }
  return complete;
}

// x * (a * x + b) + c with float coefficients: integers compute in float, as MXNet's kernel.
void QuadraticCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const QuadraticParam& p = attrs.Param<QuadraticParam>();
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = m::Compute<T, float>;
    const C a = static_cast<C>(p.a), b = static_cast<C>(p.b), c = static_cast<C>(p.c);
    MapElements<T>(in[0], out[0], [a, b, c](T v) {
      const C x = static_cast<C>(v);
      return m::FromReal<T>(x * (a * x + b) + c);
    });
  });
}

// ---- ONNX -------------------------------------------------------------------------------------

// Math ops export for float dtypes: MXNet computes integer inputs in float and rounds back,
// which ONNX's float ops do not express.
OnnxMapping FloatOnnx(std::vector<std::string> onnx_ops, FOnnxConvert convert) {
  auto checked = [convert](OnnxNodeContext* ctx) {
    const DType d = ctx->in(0).dtype;
    if (d != DType::kFloat32 && d != DType::kFloat64 && d != DType::kFloat16) {
      ctx->NotExportable(std::string("input dtype ") + DTypeName(d) +
                         "; this operator exports for float dtypes only (MXNet computes "
                         "integers in float and rounds back)");
    }
    convert(ctx);
  };
  return OnnxMapping{std::move(onnx_ops), checked, "integer dtypes"};
}

OnnxMapping FloatSameOp(const std::string& op_type) {
  return FloatOnnx({op_type}, OnnxSameOp(op_type));
}

// y = f(x) <op> c for a float constant c in the input dtype (expm1 = Exp(x) - 1, log2 = Log(x)
// / ln 2, degrees = x * 180 / pi); `f` empty: x itself.
OnnxMapping ThenConstant(const std::string& f, const std::string& op_type, double c) {
  std::vector<std::string> ops = {op_type};
  if (!f.empty()) ops.push_back(f);
  return FloatOnnx(ops, [f, op_type, c](OnnxNodeContext* ctx) {
    const std::string x = f.empty() ? ctx->in(0).name : ctx->Add(f, {ctx->in(0).name});
    ctx->Add(op_type, {x, ctx->Scalar(c, ctx->in(0).dtype)}, {}, ctx->out(0).name);
  });
}

void Log1pOnnx(OnnxNodeContext* ctx) {
  const OnnxValue& x = ctx->in(0);
  ctx->Add("Log", {ctx->Add("Add", {x.name, ctx->Scalar(1.0, x.dtype)})}, {}, ctx->out(0).name);
}

void RsqrtOnnx(OnnxNodeContext* ctx) {
  ctx->Add("Reciprocal", {ctx->Add("Sqrt", {ctx->in(0).name})}, {}, ctx->out(0).name);
}

void SquareOnnx(OnnxNodeContext* ctx) {
  ctx->Add("Mul", {ctx->in(0).name, ctx->in(0).name}, {}, ctx->out(0).name);
}

// Toward zero: sign(x) * floor(|x|), exact in float.
void TruncOnnx(OnnxNodeContext* ctx) {
  const std::string& x = ctx->in(0).name;
  ctx->Add("Mul", {ctx->Add("Sign", {x}), ctx->Add("Floor", {ctx->Add("Abs", {x})})}, {},
           ctx->out(0).name);
}

// ONNX Neg takes signed dtypes only (MXNet wraps unsigned ones).
void NegativeOnnx(OnnxNodeContext* ctx) {
  const DType d = ctx->in(0).dtype;
  if (d == DType::kUint8 || d == DType::kUint16 || d == DType::kUint32 || d == DType::kUint64) {
    ctx->NotExportable(std::string("input dtype ") + DTypeName(d) +
                       " (ONNX's Neg takes signed dtypes only)");
  }
  ctx->Add("Neg", {ctx->in(0).name}, {}, ctx->out(0).name);
}

void LogicalNotOnnx(OnnxNodeContext* ctx) {
  ctx->Cast(ctx->Add("Not", {ctx->Cast(ctx->in(0).name, DType::kBool)}), ctx->out(0).dtype,
            ctx->out(0).name);
}

// MXNet tests the upper bound first: with a_min > a_max it gives a_max above a_max and a_min
// elsewhere, which ONNX Clip (lower bound first) does not. The bounds take the input dtype.
void ClipOnnx(OnnxNodeContext* ctx) {
  const ClipParam& p = ctx->param<ClipParam>();
  const OnnxValue& x = ctx->in(0);
  const std::string lo = ctx->Scalar(p.a_min, x.dtype), hi = ctx->Scalar(p.a_max, x.dtype);
  if (p.a_min <= p.a_max) {
    ctx->Add("Clip", {x.name, lo, hi}, {}, ctx->out(0).name);
  } else {
    ctx->Add("Where", {ctx->Add("Greater", {x.name, hi}), hi, lo}, {}, ctx->out(0).name);
  }
}

void HardSigmoidOnnx(OnnxNodeContext* ctx) {
  const HardSigmoidParam& p = ctx->param<HardSigmoidParam>();
  ctx->Add("HardSigmoid", {ctx->in(0).name}, {{"alpha", p.alpha}, {"beta", p.beta}},
           ctx->out(0).name);
}

// x * (a * x + b) + c, in MXNet's order of operations.
void QuadraticOnnx(OnnxNodeContext* ctx) {
  const QuadraticParam& p = ctx->param<QuadraticParam>();
  const OnnxValue& x = ctx->in(0);
  const std::string ax = ctx->Add("Mul", {ctx->Scalar(p.a, x.dtype), x.name});
  const std::string axb = ctx->Add("Add", {ax, ctx->Scalar(p.b, x.dtype)});
  ctx->Add("Add", {ctx->Add("Mul", {x.name, axb}), ctx->Scalar(p.c, x.dtype)}, {},
           ctx->out(0).name);
}

Op& RegisterUnary(OpRegistry* r, const char* name, const char* description, FCompute compute,
                  std::initializer_list<const char*> aliases = {}) {
  Op& op = r->Register(name)
               .Describe(description)
               .SetInputNames({"data"})
               .SetInferShape(ElemwiseShape)
               .SetInferType(NumericType)
               .SetCompute(std::move(compute))
               .SetInplace({{0, 0}})
               .SetPattern(OpPattern::kElemwise);
  for (const char* alias : aliases) op.AddAlias(alias);
  return op;
}

}  // namespace

void RegisterElemwiseUnaryOps(OpRegistry* r) {
  RegisterUnary(r, "relu", "Rectified linear unit: y = max(x, 0) (NaN stays NaN).",
                UnaryCompute<m::Relu>, {"_sparse_relu"})
      .SetOnnx(FloatSameOp("Relu"));
  RegisterUnary(r, "sigmoid", "Logistic sigmoid: y = 1 / (1 + exp(-x)).", MathCompute<m::Sigmoid>,
                {"_sparse_sigmoid"})
      .SetOnnx(FloatSameOp("Sigmoid"));
  RegisterUnary(r, "tanh", "Hyperbolic tangent, elementwise.", MathCompute<m::Tanh>,
                {"_sparse_tanh"})
      .SetOnnx(FloatSameOp("Tanh"));
  RegisterUnary(r, "softsign", "Softsign: y = x / (1 + |x|).", MathCompute<m::Softsign>)
      .SetOnnx(FloatSameOp("Softsign"));
  RegisterUnary(r, "exp", "Natural exponential, elementwise.", MathCompute<m::Exp>,
                {"_sparse_exp"})
      .SetOnnx(FloatSameOp("Exp"));
  RegisterUnary(r, "expm1", "exp(x) - 1, accurate near 0.", MathCompute<m::Expm1>,
                {"_sparse_expm1"})
      .SetOnnx(ThenConstant("Exp", "Sub", 1.0));
  RegisterUnary(r, "log", "Natural logarithm, elementwise.", MathCompute<m::Log>,
                {"_sparse_log"})
      .SetOnnx(FloatSameOp("Log"));
  RegisterUnary(r, "log1p", "log(1 + x), accurate near 0.", MathCompute<m::Log1p>,
                {"_sparse_log1p"})
      .SetOnnx(FloatOnnx({"Add", "Log"}, Log1pOnnx));
  RegisterUnary(r, "log2", "Base-2 logarithm, elementwise.", MathCompute<m::Log2>,
                {"_sparse_log2"})
      .SetOnnx(ThenConstant("Log", "Div", std::log(2.0)));
  RegisterUnary(r, "log10", "Base-10 logarithm, elementwise.", MathCompute<m::Log10>,
                {"_sparse_log10"})
      .SetOnnx(ThenConstant("Log", "Div", std::log(10.0)));
  RegisterUnary(r, "sqrt", "Square root, elementwise.", MathCompute<m::Sqrt>, {"_sparse_sqrt"})
      .SetOnnx(FloatSameOp("Sqrt"));
  RegisterUnary(r, "rsqrt", "Reciprocal square root: y = 1 / sqrt(x).", MathCompute<m::Rsqrt>,
                {"_sparse_rsqrt"})
      .SetOnnx(FloatOnnx({"Sqrt", "Reciprocal"}, RsqrtOnnx));
  RegisterUnary(r, "cbrt", "Cube root, elementwise.", MathCompute<m::Cbrt>, {"_sparse_cbrt"});
  RegisterUnary(r, "rcbrt", "Reciprocal cube root: y = 1 / cbrt(x).", MathCompute<m::Rcbrt>);
  RegisterUnary(r, "square", "Square: y = x * x.", MathCompute<m::Square>, {"_sparse_square"})
      .SetOnnx(FloatOnnx({"Mul"}, SquareOnnx));
  RegisterUnary(r, "abs", "Absolute value, elementwise.", MathCompute<m::Abs>, {"_sparse_abs"})
      .SetOnnx({"Abs"}, OnnxSameOp("Abs"));
  RegisterUnary(r, "sign", "Sign: -1, 0 or 1 (0 for NaN).", UnaryCompute<m::Sign>,
                {"_sparse_sign"})
      .SetOnnx({"Sign"}, OnnxSameOp("Sign"));
  RegisterUnary(r, "negative", "Numerical negative: y = -x.", UnaryCompute<m::Negative>,
                {"_sparse_negative"})
      .SetOnnx({"Neg"}, NegativeOnnx, "unsigned dtypes");
  RegisterUnary(r, "reciprocal", "Reciprocal: y = 1 / x.", MathCompute<m::Reciprocal>)
      .SetOnnx(FloatSameOp("Reciprocal"));
  RegisterUnary(r, "floor", "Largest integer <= x, elementwise.", MathCompute<m::Floor>,
                {"_sparse_floor"})
      .SetOnnx(FloatSameOp("Floor"));
  RegisterUnary(r, "ceil", "Smallest integer >= x, elementwise.", MathCompute<m::Ceil>,
                {"_sparse_ceil"})
      .SetOnnx(FloatSameOp("Ceil"));
  RegisterUnary(r, "trunc", "Rounds toward zero (the integer part of x).", MathCompute<m::Trunc>,
                {"_sparse_trunc"})
      .SetOnnx(FloatOnnx({"Sign", "Abs", "Floor", "Mul"}, TruncOnnx));
  RegisterUnary(r, "fix", "Rounds toward zero: the one of floor(x) and ceil(x) nearer to 0.",
                MathCompute<m::Fix>, {"_sparse_fix"})
      .SetOnnx(FloatOnnx({"Sign", "Abs", "Floor", "Mul"}, TruncOnnx));
  RegisterUnary(r, "round", "Rounds to the nearest integer, halfway cases away from zero.",
                MathCompute<m::Round>, {"_sparse_round"});
  RegisterUnary(r, "rint",
                "Rounds to the nearer of floor(x) and ceil(x); halfway cases go to floor(x) "
                "(so rint(-2.5) = -3, rint(2.5) = 2), as MXNet's kernel does.",
                MathCompute<m::Rint>, {"_sparse_rint"});
  RegisterUnary(r, "sin", "Sine (radians), elementwise.", MathCompute<m::Sin>, {"_sparse_sin"})
      .SetOnnx(FloatSameOp("Sin"));
  RegisterUnary(r, "cos", "Cosine (radians), elementwise.", MathCompute<m::Cos>, {"_sparse_cos"})
      .SetOnnx(FloatSameOp("Cos"));
  RegisterUnary(r, "tan", "Tangent (radians), elementwise.", MathCompute<m::Tan>,
                {"_sparse_tan"})
      .SetOnnx(FloatSameOp("Tan"));
  RegisterUnary(r, "arcsin", "Inverse sine, in [-pi/2, pi/2].", MathCompute<m::Arcsin>,
                {"_sparse_arcsin"})
      .SetOnnx(FloatSameOp("Asin"));
  RegisterUnary(r, "arccos", "Inverse cosine, in [0, pi].", MathCompute<m::Arccos>,
                {"_sparse_arccos"})
      .SetOnnx(FloatSameOp("Acos"));
  RegisterUnary(r, "arctan", "Inverse tangent, in (-pi/2, pi/2).", MathCompute<m::Arctan>,
                {"_sparse_arctan"})
      .SetOnnx(FloatSameOp("Atan"));
  RegisterUnary(r, "sinh", "Hyperbolic sine, elementwise.", MathCompute<m::Sinh>,
                {"_sparse_sinh"})
      .SetOnnx(FloatSameOp("Sinh"));
  RegisterUnary(r, "cosh", "Hyperbolic cosine, elementwise.", MathCompute<m::Cosh>,
                {"_sparse_cosh"})
      .SetOnnx(FloatSameOp("Cosh"));
  RegisterUnary(r, "arcsinh", "Inverse hyperbolic sine, elementwise.", MathCompute<m::Arcsinh>,
                {"_sparse_arcsinh"})
      .SetOnnx(FloatSameOp("Asinh"));
  RegisterUnary(r, "arccosh", "Inverse hyperbolic cosine (x >= 1), elementwise.",
                MathCompute<m::Arccosh>, {"_sparse_arccosh"})
      .SetOnnx(FloatSameOp("Acosh"));
  RegisterUnary(r, "arctanh", "Inverse hyperbolic tangent (|x| < 1), elementwise.",
                MathCompute<m::Arctanh>, {"_sparse_arctanh"})
      .SetOnnx(FloatSameOp("Atanh"));
  RegisterUnary(r, "degrees", "Radians to degrees: y = x * 180 / pi.", MathCompute<m::Degrees>,
                {"_sparse_degrees"})
      .SetOnnx(ThenConstant("", "Mul", double{180.0f / m::kPiF}));
  RegisterUnary(r, "radians", "Degrees to radians: y = x * pi / 180.", MathCompute<m::Radians>,
                {"_sparse_radians"})
      .SetOnnx(ThenConstant("", "Mul", double{m::kPiF / 180.0f}));
  RegisterUnary(r, "erf", "Gauss error function, elementwise.", MathCompute<m::Erf>,
                {"_npx_erf"})
      .SetOnnx(FloatSameOp("Erf"));
  RegisterUnary(r, "erfinv",
                "Inverse error function: +-inf at +-1, NaN outside [-1, 1].",
                MathCompute<m::Erfinv>, {"_npx_erfinv"});
  RegisterUnary(r, "gamma", "Gamma function, elementwise.", MathCompute<m::Gamma>,
                {"_npx_gamma", "_sparse_gamma"});
  RegisterUnary(r, "gammaln", "Natural logarithm of the absolute value of the gamma function.",
                MathCompute<m::Gammaln>, {"_npx_gammaln", "_sparse_gammaln"});
  RegisterUnary(r, "logical_not", "Logical negation: 1 where x == 0, else 0 (input dtype).",
                UnaryCompute<m::LogicalNot>)
      .SetOnnx({"Cast", "Not"}, LogicalNotOnnx);
  RegisterUnary(r, "_contrib_round_ste",
                "round(x) (a straight-through estimator: its gradient is 1 in training).",
                MathCompute<m::Round>, {"_sparse__contrib_round_ste"});
  RegisterUnary(r, "_contrib_sign_ste",
                "sign(x) (a straight-through estimator: its gradient is 1 in training).",
                UnaryCompute<m::Sign>, {"_sparse__contrib_sign_ste"})
      .SetOnnx({"Sign"}, OnnxSameOp("Sign"));
  RegisterUnary(r, "_copy", "Returns a copy of the input.", CopyCompute, {"identity"})
      .SetIdentityView()
      .SetOnnx({"Identity"}, OnnxSameOp("Identity"));
  RegisterUnary(r, "BlockGrad",
                "Returns the input unchanged and stops gradients from flowing through it.",
                CopyCompute, {"stop_gradient", "_sparse_stop_gradient"})
      .SetIdentityView()
      .SetOnnx({"Identity"}, OnnxSameOp("Identity"));
  RegisterUnary(r, "clip",
                "Clips values to [a_min, a_max]: y = x > a_max ? a_max : max(x, a_min), the "
                "bounds converted to the input dtype.",
                ClipCompute, {"_npi_clip", "_sparse_clip"})
      .SetParam<ClipParam>()
      .SetOnnx({"Clip", "Greater", "Where"}, ClipOnnx);
  RegisterUnary(r, "hard_sigmoid", "Hard sigmoid: y = clip(alpha * x + beta, 0, 1).",
                HardSigmoidCompute)
      .SetParam<HardSigmoidParam>()
      .SetInferType(FloatType)
      .SetOnnx({"HardSigmoid"}, HardSigmoidOnnx);
  RegisterUnary(r, "_contrib_quadratic", "Quadratic function: y = a * x^2 + b * x + c.",
                QuadraticCompute)
      .SetParam<QuadraticParam>()
      .SetOnnx(FloatOnnx({"Mul", "Add"}, QuadraticOnnx));
}

}  // namespace hybridnet
