// Tensor-scalar operators (MXNet src/operator/tensor/elemwise_binary_scalar_op_*.cc,
// elemwise_scatter_op.cc, contrib/gradient_multiplier_op.cc). As in MXNet 1.9.1:
//  * the scalar is converted to the input's dtype (float32 rounds it; integers truncate it, so
//    int32 x + 2.5 adds 2 while is_int is True, its default);
//  * an integer input with is_int=False gives a float64 output, computed in double;
//  * comparisons and logical ops return 1 or 0 in that output dtype.
#include <cmath>
#include <cstring>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/dtype_switch-inl.h"
#include "ops/elemwise/math_functors-inl.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::IsNumericDType;
using internal::SwitchNumericDType;
namespace m = op_math;

struct ScalarParam {
  double scalar = 1.0;
  bool is_int = true;
  static void Declare(ParamDeclarer<ScalarParam>* d) {
    d->Field("scalar", &ScalarParam::scalar).Default(1.0).Describe("Scalar input value");
    d->Field("is_int", &ScalarParam::is_int)
        .Default(true)
        .Describe(
            "Whether the scalar is an integer: with False, integer inputs give a float64 "
            "result");
  }
};

bool IsIntegerDType(DType d) {
  return IsNumericDType(d) && d != DType::kFloat32 && d != DType::kFloat64;
}

void CheckNumeric(const NodeAttrs& attrs, DType d, const char* what) {
  HN_CHECK(d == DType::kUnknown || IsNumericDType(d), kTypeError)
      << DescribeNode(attrs) << ": " << what << " has dtype " << DTypeName(d)
      << "; this operator computes in float32, float64, uint8, int8, int32 or int64 (Cast the "
         "input first)";
}

bool AssignType(const NodeAttrs& attrs, DType value, DType* slot, const char* what) {
  if (value == DType::kUnknown) return true;
  HN_CHECK(*slot == DType::kUnknown || *slot == value, kTypeError)
      << DescribeNode(attrs) << ": " << what << " dtype " << DTypeName(*slot)
      << " does not match the expected " << DTypeName(value);
  *slot = value;
  return true;
}

// MXNet's NumpyBinaryScalarType: integer input and is_int=False -> float64, else the input's
// dtype both ways. A float64 output with is_int=False does not tell the input's dtype.
bool ScalarType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType& x = (*in)[0];
  DType& y = (*out)[0];
  CheckNumeric(attrs, x, "input 0");
  CheckNumeric(attrs, y, "output 0");
  const bool is_int = attrs.Param<ScalarParam>().is_int;
  if (!is_int && IsIntegerDType(x)) {
    AssignType(attrs, DType::kFloat64, &y, "output 0");
  } else if (!is_int && y == DType::kFloat64) {
    HN_CHECK(x == DType::kUnknown || x == DType::kFloat64 || IsIntegerDType(x), kTypeError)
        << DescribeNode(attrs) << ": a float64 output needs a float64 or integer input, got "
        << DTypeName(x);
  } else {
    AssignType(attrs, x, &y, "output 0");
    AssignType(attrs, y, &x, "input 0");
  }
  return x != DType::kUnknown && y != DType::kUnknown;
}

template <typename F>
void ScalarCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const double scalar = attrs.Param<ScalarParam>().scalar;
  const int64_t n = in[0].Size();
  if (in[0].dtype != out[0].dtype) {  // integer input, is_int=False: in double
    double* y = out[0].ptr<double>();
    SwitchNumericDType(in[0].dtype, [&](auto tag) {
      using I = typename decltype(tag)::type;
      const I* x = in[0].ptr<const I>();
      for (int64_t i = 0; i < n; ++i) y[i] = F::Map(static_cast<double>(x[i]), scalar);
    });
    return;
  }
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T s = m::FromReal<T>(scalar);
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = F::Map(x[i], s);
  });
}

// MXNet's smooth_l1_loss with sigma = scalar: 0.5 (sigma x)^2 for |x| < 1 / sigma^2, else
// |x| - 0.5 / sigma^2; computed in float for every type but float64.
struct SmoothL1 {
  template <typename T>
  static T Map(T x, T sigma) {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const C b = static_cast<C>(sigma);
    const C bsq = b * b;
    const C ibsq = 1.0f / bsq;
    const C a = static_cast<C>(x);
    if (a > ibsq) return m::FromReal<T>(a - 0.5f * ibsq);
    if (a < -ibsq) return m::FromReal<T>(-a - 0.5f * ibsq);
    return m::FromReal<T>(0.5f * a * a * bsq);
  }
};

void IdentityCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  if (in[0].data != out[0].data && in[0].Size() > 0) {
    std::memcpy(out[0].data, in[0].data,
                static_cast<size_t>(in[0].Size()) * DTypeSize(in[0].dtype));
  }
}

// The ONNX form: the binary function with the scalar as a 0-D constant of the dtype MXNet
// computes in (the output's: an integer input with is_int=False is cast to float64 first), on
// the left for the reversed ops (_rminus_scalar: scalar - x).
OnnxMapping ScalarOnnx(const OnnxBinaryForm& form, bool scalar_first = false) {
  auto convert = [emit = form.emit, scalar_first](OnnxNodeContext* ctx) {
    const OnnxValue& x = ctx->in(0);
    // Comparisons and logical ops compute in the input dtype unless is_int=False widens it.
    const DType dtype = ctx->out(0).dtype;
    const std::string c = ctx->Scalar(ctx->param<ScalarParam>().scalar, dtype);
    const std::string a = x.dtype == dtype ? x.name : ctx->Cast(x.name, dtype);
    if (scalar_first) {
      emit(ctx, c, a, dtype, ctx->out(0).name);
    } else {
      emit(ctx, a, c, dtype, ctx->out(0).name);
    }
  };
  std::vector<std::string> ops = form.onnx_ops;
  ops.push_back("Cast");
  return OnnxMapping{ops, convert, form.limits};
}

// ---- gradients (MXNet's _backward_*_scalar formulas, written as ops) ---------------------------

using internal::GradientBuilder;
using internal::UnaryGradient;

double ScalarOf(const GradientBuilder& g) { return g.attrs().Param<ScalarParam>().scalar; }

// dy op scalar, for the gradients that are the output gradient scaled: _mul_scalar's (dy * s),
// _div_scalar's (dy / s), _contrib_gradientmultiplier's (dy * s).
FGradient ScalarOpGradient(const char* op_name) {
  return [op_name](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
    GradientBuilder g(n, dy);
    return std::vector<NodeEntry>{g.Scalar(op_name, g.out_grad(0), ScalarOf(g))};
  };
}

std::vector<NodeEntry> RMinusGradient(const std::shared_ptr<Node>& n,
                                      const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {g.Negative(g.out_grad(0))};
}

// -s / x^2.
NodeEntry RDivDerivative(const GradientBuilder& g) {
  return g.Scalar("_rdiv_scalar", g.Op("square", {g.in(0)}), -ScalarOf(g));
}

// s x^(s - 1).
NodeEntry PowerDerivative(const GradientBuilder& g) {
  const double s = ScalarOf(g);
  return g.Scalar("_mul_scalar", g.Scalar("_power_scalar", g.in(0), s - 1.0), s);
}

// y log(s).
NodeEntry RPowerDerivative(const GradientBuilder& g) {
  return g.Scalar("_mul_scalar", g.out(0), std::log(ScalarOf(g)));
}

// x / y.
NodeEntry HypotDerivative(const GradientBuilder& g) { return g.Div(g.in(0), g.out(0)); }

// 1 where x >= s (maximum) or x <= s (minimum), as MXNet's ge / le.
FGradient PickGradient(const char* comparison) {
  return UnaryGradient([comparison](const GradientBuilder& g) {
    return g.Scalar(comparison, g.in(0), ScalarOf(g));
  });
}

// s^2 x where |x| < 1 / s^2, else sign(x).
NodeEntry SmoothL1Derivative(const GradientBuilder& g) {
  const double s2 = ScalarOf(g) * ScalarOf(g);
  const NodeEntry inside = g.Scalar("_lesser_scalar", g.Op("abs", {g.in(0)}), 1.0 / s2);
  return g.Op("where", {inside, g.Scalar("_mul_scalar", g.in(0), s2), g.Op("sign", {g.in(0)})});
}

Op& RegisterScalar(OpRegistry* r, const char* name, const char* description, FCompute f,
                   std::initializer_list<const char*> aliases) {
  Op& op = r->Register(name)
               .Describe(description)
               .SetParam<ScalarParam>()
               .SetInputNames({"data"})
               .SetInferShape(ElemwiseShape)
               .SetInferType(ScalarType)
               .SetCompute(std::move(f))
               .SetInplace({{0, 0}})
               .SetPattern(OpPattern::kElemwise);
  for (const char* alias : aliases) op.AddAlias(alias);
  return op;
}

}  // namespace

void RegisterScalarOps(OpRegistry* r) {
  using m::Swapped;
  RegisterScalar(r, "_plus_scalar", "y = x + scalar", ScalarCompute<m::Add>, {"_PlusScalar"})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Add", false)))
      .SetGradient(internal::IdentityGradient);
  RegisterScalar(r, "_minus_scalar", "y = x - scalar", ScalarCompute<m::Sub>, {"_MinusScalar"})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Sub", false)))
      .SetGradient(internal::IdentityGradient);
  RegisterScalar(r, "_rminus_scalar", "y = scalar - x", ScalarCompute<Swapped<m::Sub>>,
                 {"_RMinusScalar"})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Sub", false), true))
      .SetGradient(RMinusGradient);
  RegisterScalar(r, "_mul_scalar", "y = x * scalar", ScalarCompute<m::Mul>, {"_MulScalar"})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Mul", false)))
      .SetGradient(ScalarOpGradient("_mul_scalar"));
  RegisterScalar(r, "_div_scalar", "y = x / scalar (integers: truncated, x / 0 = 0)",
                 ScalarCompute<m::Div>, {"_DivScalar"})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Div", true)))
      .SetGradient(ScalarOpGradient("_div_scalar"));
  RegisterScalar(r, "_rdiv_scalar", "y = scalar / x (integers divide in float)",
                 ScalarCompute<m::RDiv>, {"_RDivScalar"})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Div", true), true))
      .SetGradient(UnaryGradient(RDivDerivative));
  RegisterScalar(r, "_mod_scalar", "y = x % scalar, with the sign of the divisor; x % 0 = 0",
                 ScalarCompute<m::Mod>, {"_ModScalar"});
  RegisterScalar(r, "_rmod_scalar", "y = scalar % x, with the sign of the divisor; s % 0 = 0",
                 ScalarCompute<Swapped<m::Mod>>, {"_RModScalar"});
  RegisterScalar(r, "_power_scalar", "y = x ** scalar", ScalarCompute<m::Power>, {"_PowerScalar"})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Pow", true)))
      .SetGradient(UnaryGradient(PowerDerivative));
  RegisterScalar(r, "_rpower_scalar", "y = scalar ** x", ScalarCompute<Swapped<m::Power>>,
                 {"_RPowerScalar"})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Pow", true), true))
      .SetGradient(UnaryGradient(RPowerDerivative));
  RegisterScalar(r, "_hypot_scalar", "y = sqrt(x^2 + scalar^2)", ScalarCompute<m::Hypot>,
                 {"_HypotScalar", "_npi_hypot_scalar"})
      .SetGradient(UnaryGradient(HypotDerivative));
  RegisterScalar(r, "_maximum_scalar", "y = max(x, scalar) (NaN in x propagates)",
                 ScalarCompute<m::Maximum>, {"_MaximumScalar", "_npi_maximum_scalar"})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Max", false)))
      .SetGradient(PickGradient("_greater_equal_scalar"));
  RegisterScalar(r, "_minimum_scalar", "y = min(x, scalar) (NaN in x propagates)",
                 ScalarCompute<m::Minimum>, {"_MinimumScalar", "_npi_minimum_scalar"})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Min", false)))
      .SetGradient(PickGradient("_lesser_equal_scalar"));
  RegisterScalar(r, "_equal_scalar", "1 where x == scalar, else 0", ScalarCompute<m::Equal>,
                 {"_EqualScalar"})
      .SetOnnx(ScalarOnnx(OnnxComparison("Equal")))
      .SetGradient(internal::ZeroGradient);
  RegisterScalar(r, "_not_equal_scalar", "1 where x != scalar, else 0", ScalarCompute<m::NotEqual>,
                 {"_NotEqualScalar"})
      .SetOnnx(ScalarOnnx(OnnxComparison("Equal", true)))
      .SetGradient(internal::ZeroGradient);
  RegisterScalar(r, "_greater_scalar", "1 where x > scalar, else 0", ScalarCompute<m::Greater>,
                 {"_GreaterScalar"})
      .SetOnnx(ScalarOnnx(OnnxComparison("Greater")))
      .SetGradient(internal::ZeroGradient);
  RegisterScalar(r, "_greater_equal_scalar", "1 where x >= scalar, else 0",
                 ScalarCompute<m::GreaterEqual>, {"_GreaterEqualScalar"})
      .SetOnnx(ScalarOnnx(OnnxComparison("GreaterOrEqual")))
      .SetGradient(internal::ZeroGradient);
  RegisterScalar(r, "_lesser_scalar", "1 where x < scalar, else 0", ScalarCompute<m::Lesser>,
                 {"_LesserScalar"})
      .SetOnnx(ScalarOnnx(OnnxComparison("Less")))
      .SetGradient(internal::ZeroGradient);
  RegisterScalar(r, "_lesser_equal_scalar", "1 where x <= scalar, else 0",
                 ScalarCompute<m::LesserEqual>, {"_LesserEqualScalar"})
      .SetOnnx(ScalarOnnx(OnnxComparison("LessOrEqual")))
      .SetGradient(internal::ZeroGradient);
  RegisterScalar(r, "_logical_and_scalar", "1 where x and scalar are both nonzero, else 0",
                 ScalarCompute<m::LogicalAnd>, {"_LogicalAndScalar"})
      .SetOnnx(ScalarOnnx(OnnxLogical("And")))
      .SetGradient(internal::ZeroGradient);
  RegisterScalar(r, "_logical_or_scalar", "1 where x or scalar is nonzero, else 0",
                 ScalarCompute<m::LogicalOr>, {"_LogicalOrScalar"})
      .SetOnnx(ScalarOnnx(OnnxLogical("Or")))
      .SetGradient(internal::ZeroGradient);
  RegisterScalar(r, "_logical_xor_scalar", "1 where exactly one of x and scalar is nonzero",
                 ScalarCompute<m::LogicalXor>, {"_LogicalXorScalar"})
      .SetOnnx(ScalarOnnx(OnnxLogical("Xor")))
      .SetGradient(internal::ZeroGradient);
  RegisterScalar(r, "_scatter_plus_scalar", "y = x + scalar (dense arrays)", ScalarCompute<m::Add>,
                 {})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Add", false)))
      .SetGradient(internal::IdentityGradient);
  RegisterScalar(r, "_scatter_minus_scalar", "y = x - scalar (dense arrays)", ScalarCompute<m::Sub>,
                 {})
      .SetOnnx(ScalarOnnx(OnnxArithmetic("Sub", false)))
      .SetGradient(internal::IdentityGradient);
  // smooth_l1 keeps the input dtype whatever is_int says (MXNet declares it ElemwiseType).
  RegisterScalar(r, "smooth_l1",
                 "Smooth L1: 0.5 (scalar x)^2 where |x| < 1 / scalar^2, else |x| - 0.5 / "
                 "scalar^2.",
                 ScalarCompute<SmoothL1>, {"_npx_smooth_l1"})
      .SetInferType(internal::NumericType)
      .SetGradient(UnaryGradient(SmoothL1Derivative));
  RegisterScalar(r, "_contrib_gradientmultiplier",
                 "Returns the input unchanged (training multiplies its gradient by scalar).",
                 IdentityCompute, {})
      .SetInferType(internal::NumericType)
      .SetIdentityView()
      .SetOnnx({"Identity"}, OnnxSameOp("Identity"))
      .SetGradient(ScalarOpGradient("_mul_scalar"));
}

}  // namespace hybridnet
