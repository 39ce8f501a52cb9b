// Elementwise unary operators (MXNet src/operator/tensor/elemwise_unary_op_*.cc,
// contrib/stes_op.cc, contrib/quadratic_op.cc): one input "data", one output of the same shape
// and dtype. Like MXNet's, they run on float32, float64, uint8, int8, int32 and int64, integers
// computed as math_functors-inl.h describes (except hard_sigmoid, float only as in MXNet).
#include <cmath>
#include <cstring>

#include "hybridnet/op.h"
#include "kernels/activation-inl.h"
#include "onnx/onnx_convert.h"
#include "ops/dtype_switch-inl.h"
#include "ops/elemwise/math_functors-inl.h"
#include "ops/gradient_util.h"
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

// ---- gradients (MXNet's _backward_* formulas, written as ops) ----------------------------------

using internal::ActivationInputGradient;
using internal::GradientBuilder;
using internal::IdentityGradient;
using internal::UnaryGradient;
using internal::ZeroGradient;

NodeEntry Square(const GradientBuilder& g, const NodeEntry& a) { return g.Op("square", {a}); }
NodeEntry Reciprocal(const GradientBuilder& g, const NodeEntry& a) {
  return g.Op("reciprocal", {a});
}

FGradient ActivationGradient(internal::ActType act) {
  return [act](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
    GradientBuilder g(n, dy);
    return std::vector<NodeEntry>{ActivationInputGradient(g, act, g.out_grad(0))};
  };
}

// dy * c for a constant derivative c.
FGradient ScaledGradient(double c) {
  return [c](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
    GradientBuilder g(n, dy);
    return std::vector<NodeEntry>{g.Scalar("_mul_scalar", g.out_grad(0), c)};
  };
}

std::vector<NodeEntry> NegativeGradient(const std::shared_ptr<Node>& n,
                                        const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {g.Negative(g.out_grad(0))};
}

// 1 where a_min <= x <= a_max, else 0: MXNet's _backward_clip passes the gradient at the bounds.
NodeEntry ClipDerivative(const GradientBuilder& g) {
  const ClipParam& p = g.attrs().Param<ClipParam>();
  return g.Mul(g.Scalar("_greater_equal_scalar", g.in(0), p.a_min),
               g.Scalar("_lesser_equal_scalar", g.in(0), p.a_max));
}

// alpha where 0 < y < 1, else 0.
NodeEntry HardSigmoidDerivative(const GradientBuilder& g) {
  const HardSigmoidParam& p = g.attrs().Param<HardSigmoidParam>();
  const NodeEntry inside =
      g.Mul(g.Scalar("_greater_scalar", g.out(0), 0.0), g.Scalar("_lesser_scalar", g.out(0), 1.0));
  return g.Scalar("_mul_scalar", inside, p.alpha);
}

// 2 a x + b.
NodeEntry QuadraticDerivative(const GradientBuilder& g) {
  const QuadraticParam& p = g.attrs().Param<QuadraticParam>();
  return g.Scalar("_plus_scalar", g.Scalar("_mul_scalar", g.in(0), 2.0 * p.a), p.b);
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
      .SetOnnx(FloatSameOp("Relu"))
      .SetGradient(ActivationGradient(internal::ActType::kRelu));
  RegisterUnary(r, "sigmoid", "Logistic sigmoid: y = 1 / (1 + exp(-x)).", MathCompute<m::Sigmoid>,
                {"_sparse_sigmoid"})
      .SetOnnx(FloatSameOp("Sigmoid"))
      .SetGradient(ActivationGradient(internal::ActType::kSigmoid));
  RegisterUnary(r, "tanh", "Hyperbolic tangent, elementwise.", MathCompute<m::Tanh>,
                {"_sparse_tanh"})
      .SetOnnx(FloatSameOp("Tanh"))
      .SetGradient(ActivationGradient(internal::ActType::kTanh));
  RegisterUnary(r, "softsign", "Softsign: y = x / (1 + |x|).", MathCompute<m::Softsign>)
      .SetOnnx(FloatSameOp("Softsign"))
      .SetGradient(ActivationGradient(internal::ActType::kSoftsign));
  RegisterUnary(r, "exp", "Natural exponential, elementwise.", MathCompute<m::Exp>, {"_sparse_exp"})
      .SetOnnx(FloatSameOp("Exp"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) { return g.out(0); }));
  RegisterUnary(r, "expm1", "exp(x) - 1, accurate near 0.", MathCompute<m::Expm1>,
                {"_sparse_expm1"})
      .SetOnnx(ThenConstant("Exp", "Sub", 1.0))
      .SetGradient(UnaryGradient(
          [](const GradientBuilder& g) { return g.Scalar("_plus_scalar", g.out(0), 1.0); }));
  RegisterUnary(r, "log", "Natural logarithm, elementwise.", MathCompute<m::Log>, {"_sparse_log"})
      .SetOnnx(FloatSameOp("Log"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) { return Reciprocal(g, g.in(0)); }));
  RegisterUnary(r, "log1p", "log(1 + x), accurate near 0.", MathCompute<m::Log1p>,
                {"_sparse_log1p"})
      .SetOnnx(FloatOnnx({"Add", "Log"}, Log1pOnnx))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return Reciprocal(g, g.Scalar("_plus_scalar", g.in(0), 1.0));
      }));
  RegisterUnary(r, "log2", "Base-2 logarithm, elementwise.", MathCompute<m::Log2>, {"_sparse_log2"})
      .SetOnnx(ThenConstant("Log", "Div", std::log(2.0)))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Scalar("_mul_scalar", Reciprocal(g, g.in(0)), 1.0 / std::log(2.0));
      }));
  RegisterUnary(r, "log10", "Base-10 logarithm, elementwise.", MathCompute<m::Log10>,
                {"_sparse_log10"})
      .SetOnnx(ThenConstant("Log", "Div", std::log(10.0)))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Scalar("_mul_scalar", Reciprocal(g, g.in(0)), 1.0 / std::log(10.0));
      }));
  RegisterUnary(r, "sqrt", "Square root, elementwise.", MathCompute<m::Sqrt>, {"_sparse_sqrt"})
      .SetOnnx(FloatSameOp("Sqrt"))
      .SetGradient(UnaryGradient(
          [](const GradientBuilder& g) { return g.Scalar("_rdiv_scalar", g.out(0), 0.5); }));
  RegisterUnary(r, "rsqrt", "Reciprocal square root: y = 1 / sqrt(x).", MathCompute<m::Rsqrt>,
                {"_sparse_rsqrt"})
      .SetOnnx(FloatOnnx({"Sqrt", "Reciprocal"}, RsqrtOnnx))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Scalar("_mul_scalar", g.Mul(g.out(0), Square(g, g.out(0))), -0.5);
      }));
  RegisterUnary(r, "cbrt", "Cube root, elementwise.", MathCompute<m::Cbrt>, {"_sparse_cbrt"})
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Scalar("_rdiv_scalar", Square(g, g.out(0)), 1.0 / 3.0);
      }));
  RegisterUnary(r, "rcbrt", "Reciprocal cube root: y = 1 / cbrt(x).", MathCompute<m::Rcbrt>)
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Scalar("_mul_scalar", Square(g, Square(g, g.out(0))), -1.0 / 3.0);
      }));
  RegisterUnary(r, "square", "Square: y = x * x.", MathCompute<m::Square>, {"_sparse_square"})
      .SetOnnx(FloatOnnx({"Mul"}, SquareOnnx))
      .SetGradient(UnaryGradient(
          [](const GradientBuilder& g) { return g.Scalar("_mul_scalar", g.in(0), 2.0); }));
  RegisterUnary(r, "abs", "Absolute value, elementwise.", MathCompute<m::Abs>, {"_sparse_abs"})
      .SetOnnx({"Abs"}, OnnxSameOp("Abs"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) { return g.Op("sign", {g.in(0)}); }));
  RegisterUnary(r, "sign", "Sign: -1, 0 or 1 (0 for NaN).", UnaryCompute<m::Sign>, {"_sparse_sign"})
      .SetOnnx({"Sign"}, OnnxSameOp("Sign"))
      .SetGradient(ZeroGradient);
  RegisterUnary(r, "negative", "Numerical negative: y = -x.", UnaryCompute<m::Negative>,
                {"_sparse_negative"})
      .SetOnnx({"Neg"}, NegativeOnnx, "unsigned dtypes")
      .SetGradient(NegativeGradient);
  RegisterUnary(r, "reciprocal", "Reciprocal: y = 1 / x.", MathCompute<m::Reciprocal>)
      .SetOnnx(FloatSameOp("Reciprocal"))
      .SetGradient(
          UnaryGradient([](const GradientBuilder& g) { return g.Negative(Square(g, g.out(0))); }));
  RegisterUnary(r, "floor", "Largest integer <= x, elementwise.", MathCompute<m::Floor>,
                {"_sparse_floor"})
      .SetOnnx(FloatSameOp("Floor"))
      .SetGradient(ZeroGradient);
  RegisterUnary(r, "ceil", "Smallest integer >= x, elementwise.", MathCompute<m::Ceil>,
                {"_sparse_ceil"})
      .SetOnnx(FloatSameOp("Ceil"))
      .SetGradient(ZeroGradient);
  RegisterUnary(r, "trunc", "Rounds toward zero (the integer part of x).", MathCompute<m::Trunc>,
                {"_sparse_trunc"})
      .SetOnnx(FloatOnnx({"Sign", "Abs", "Floor", "Mul"}, TruncOnnx))
      .SetGradient(ZeroGradient);
  RegisterUnary(r, "fix", "Rounds toward zero: the one of floor(x) and ceil(x) nearer to 0.",
                MathCompute<m::Fix>, {"_sparse_fix"})
      .SetOnnx(FloatOnnx({"Sign", "Abs", "Floor", "Mul"}, TruncOnnx))
      .SetGradient(ZeroGradient);
  RegisterUnary(r, "round", "Rounds to the nearest integer, halfway cases away from zero.",
                MathCompute<m::Round>, {"_sparse_round"})
      .SetGradient(ZeroGradient);
  RegisterUnary(r, "rint",
                "Rounds to the nearer of floor(x) and ceil(x); halfway cases go to floor(x) "
                "(so rint(-2.5) = -3, rint(2.5) = 2), as MXNet's kernel does.",
                MathCompute<m::Rint>, {"_sparse_rint"})
      .SetGradient(ZeroGradient);
  RegisterUnary(r, "sin", "Sine (radians), elementwise.", MathCompute<m::Sin>, {"_sparse_sin"})
      .SetOnnx(FloatSameOp("Sin"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) { return g.Op("cos", {g.in(0)}); }));
  RegisterUnary(r, "cos", "Cosine (radians), elementwise.", MathCompute<m::Cos>, {"_sparse_cos"})
      .SetOnnx(FloatSameOp("Cos"))
      .SetGradient(UnaryGradient(
          [](const GradientBuilder& g) { return g.Negative(g.Op("sin", {g.in(0)})); }));
  RegisterUnary(r, "tan", "Tangent (radians), elementwise.", MathCompute<m::Tan>, {"_sparse_tan"})
      .SetOnnx(FloatSameOp("Tan"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Scalar("_plus_scalar", Square(g, g.out(0)), 1.0);
      }));
  RegisterUnary(r, "arcsin", "Inverse sine, in [-pi/2, pi/2].", MathCompute<m::Arcsin>,
                {"_sparse_arcsin"})
      .SetOnnx(FloatSameOp("Asin"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Op("rsqrt", {g.Scalar("_rminus_scalar", Square(g, g.in(0)), 1.0)});
      }));
  RegisterUnary(r, "arccos", "Inverse cosine, in [0, pi].", MathCompute<m::Arccos>,
                {"_sparse_arccos"})
      .SetOnnx(FloatSameOp("Acos"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Negative(g.Op("rsqrt", {g.Scalar("_rminus_scalar", Square(g, g.in(0)), 1.0)}));
      }));
  RegisterUnary(r, "arctan", "Inverse tangent, in (-pi/2, pi/2).", MathCompute<m::Arctan>,
                {"_sparse_arctan"})
      .SetOnnx(FloatSameOp("Atan"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return Reciprocal(g, g.Scalar("_plus_scalar", Square(g, g.in(0)), 1.0));
      }));
  RegisterUnary(r, "sinh", "Hyperbolic sine, elementwise.", MathCompute<m::Sinh>, {"_sparse_sinh"})
      .SetOnnx(FloatSameOp("Sinh"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) { return g.Op("cosh", {g.in(0)}); }));
  RegisterUnary(r, "cosh", "Hyperbolic cosine, elementwise.", MathCompute<m::Cosh>,
                {"_sparse_cosh"})
      .SetOnnx(FloatSameOp("Cosh"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) { return g.Op("sinh", {g.in(0)}); }));
  RegisterUnary(r, "arcsinh", "Inverse hyperbolic sine, elementwise.", MathCompute<m::Arcsinh>,
                {"_sparse_arcsinh"})
      .SetOnnx(FloatSameOp("Asinh"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Op("rsqrt", {g.Scalar("_plus_scalar", Square(g, g.in(0)), 1.0)});
      }));
  RegisterUnary(r, "arccosh", "Inverse hyperbolic cosine (x >= 1), elementwise.",
                MathCompute<m::Arccosh>, {"_sparse_arccosh"})
      .SetOnnx(FloatSameOp("Acosh"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Op("rsqrt", {g.Scalar("_minus_scalar", Square(g, g.in(0)), 1.0)});
      }));
  RegisterUnary(r, "arctanh", "Inverse hyperbolic tangent (|x| < 1), elementwise.",
                MathCompute<m::Arctanh>, {"_sparse_arctanh"})
      .SetOnnx(FloatSameOp("Atanh"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return Reciprocal(g, g.Scalar("_rminus_scalar", Square(g, g.in(0)), 1.0));
      }));
  RegisterUnary(r, "degrees", "Radians to degrees: y = x * 180 / pi.", MathCompute<m::Degrees>,
                {"_sparse_degrees"})
      .SetOnnx(ThenConstant("", "Mul", double{180.0f / m::kPiF}))
      .SetGradient(ScaledGradient(double{180.0f / m::kPiF}));
  RegisterUnary(r, "radians", "Degrees to radians: y = x * pi / 180.", MathCompute<m::Radians>,
                {"_sparse_radians"})
      .SetOnnx(ThenConstant("", "Mul", double{m::kPiF / 180.0f}))
      .SetGradient(ScaledGradient(double{m::kPiF / 180.0f}));
  RegisterUnary(r, "erf", "Gauss error function, elementwise.", MathCompute<m::Erf>, {"_npx_erf"})
      .SetOnnx(FloatSameOp("Erf"))
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Scalar("_mul_scalar", g.Op("exp", {g.Negative(Square(g, g.in(0)))}),
                        2.0 / std::sqrt(M_PI));
      }));
  RegisterUnary(r, "erfinv", "Inverse error function: +-inf at +-1, NaN outside [-1, 1].",
                MathCompute<m::Erfinv>, {"_npx_erfinv"})
      .SetGradient(UnaryGradient([](const GradientBuilder& g) {
        return g.Scalar("_mul_scalar", g.Op("exp", {Square(g, g.out(0))}), std::sqrt(M_PI) / 2.0);
      }));
  RegisterUnary(r, "gamma", "Gamma function, elementwise.", MathCompute<m::Gamma>,
                {"_npx_gamma", "_sparse_gamma"});
  RegisterUnary(r, "gammaln", "Natural logarithm of the absolute value of the gamma function.",
                MathCompute<m::Gammaln>, {"_npx_gammaln", "_sparse_gammaln"});
  RegisterUnary(r, "logical_not", "Logical negation: 1 where x == 0, else 0 (input dtype).",
                UnaryCompute<m::LogicalNot>)
      .SetOnnx({"Cast", "Not"}, LogicalNotOnnx)
      .SetGradient(ZeroGradient);
  RegisterUnary(r, "_contrib_round_ste",
                "round(x) (a straight-through estimator: its gradient is 1 in training).",
                MathCompute<m::Round>, {"_sparse__contrib_round_ste"})
      .SetGradient(IdentityGradient);
  RegisterUnary(r, "_contrib_sign_ste",
                "sign(x) (a straight-through estimator: its gradient is 1 in training).",
                UnaryCompute<m::Sign>, {"_sparse__contrib_sign_ste"})
      .SetOnnx({"Sign"}, OnnxSameOp("Sign"))
      .SetGradient(IdentityGradient);
  RegisterUnary(r, "_copy", "Returns a copy of the input.", CopyCompute, {"identity"})
      .SetIdentityView()
      .SetOnnx({"Identity"}, OnnxSameOp("Identity"))
      .SetGradient(IdentityGradient);
  RegisterUnary(r, "BlockGrad",
                "Returns the input unchanged and stops gradients from flowing through it.",
                CopyCompute, {"stop_gradient", "_sparse_stop_gradient"})
      .SetIdentityView()
      .SetOnnx({"Identity"}, OnnxSameOp("Identity"))
      .SetGradient(ZeroGradient);
  RegisterUnary(r, "clip",
                "Clips values to [a_min, a_max]: y = x > a_max ? a_max : max(x, a_min), the "
                "bounds converted to the input dtype.",
                ClipCompute, {"_npi_clip", "_sparse_clip"})
      .SetParam<ClipParam>()
      .SetOnnx({"Clip", "Greater", "Where"}, ClipOnnx)
      .SetGradient(UnaryGradient(ClipDerivative));
  RegisterUnary(r, "hard_sigmoid", "Hard sigmoid: y = clip(alpha * x + beta, 0, 1).",
                HardSigmoidCompute)
      .SetParam<HardSigmoidParam>()
      .SetInferType(FloatType)
      .SetOnnx({"HardSigmoid"}, HardSigmoidOnnx)
      .SetGradient(UnaryGradient(HardSigmoidDerivative));
  RegisterUnary(r, "_contrib_quadratic", "Quadratic function: y = a * x^2 + b * x + c.",
                QuadraticCompute)
      .SetParam<QuadraticParam>()
      .SetOnnx(FloatOnnx({"Mul", "Add"}, QuadraticOnnx))
      .SetGradient(UnaryGradient(QuadraticDerivative));
}

}  // namespace hybridnet
