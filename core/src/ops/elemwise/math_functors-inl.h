// The elementwise math of MXNet's mshadow_op, written once for every numeric dtype and shared
// by the unary, binary, scalar and broadcast ops, so each operation (and its NaN and integer
// rules) has one definition:
//
//   y[i] = op_math::Mod::Map(a[i], b[i]);          // T in {float, double, (u)int8, int32, int64}
//   y[i] = op_math::Unary<op_math::Exp>(x[i]);     // float32 in float, float64 in double,
//                                                  // integers in double, converted back
//
// MXNet's integer semantics, reproduced here:
//  * the math functions (exp, log, sin, sqrt, gamma, ...) compute integers in double and convert
//    the result back with C's truncating conversion; math::id/sqr-based formulas (square,
//    reciprocal, degrees, rdiv, pow, hypot) compute integers in float;
//  * a conversion of NaN or of a value outside the target's range gives what x86-64 gives (the
//    "integer indefinite": INT32_MIN truncated to the type, or INT64_MIN), never undefined
//    behaviour;
//  * +, -, * and negation wrap around; integer division truncates toward zero;
//  * mod follows the sign of the divisor (Python's %), computed in double; x % 0 = 0.
// One deliberate difference: MXNet's process dies (SIGFPE) on integer division by zero and on
// INT_MIN / -1; here x / 0 = 0 and INT_MIN / -1 = INT_MIN.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "hybridnet/base.h"
#include "hybridnet/dtype.h"
#include "kernels/activation-inl.h"
#include "ops/dtype_switch-inl.h"

namespace hybridnet {
namespace op_math {

/// DType(value) as MXNet's x86-64 build converts a float or double: identity for floating types,
/// truncation for integers, the integer indefinite for NaN and out-of-range values.
template <typename T, typename R>
inline T FromReal(R v) {
  static_assert(std::is_floating_point_v<R>, "FromReal converts float or double");
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else if constexpr (sizeof(T) == 8) {
    const bool in_range = v >= R(-9223372036854775808.0) && v < R(9223372036854775808.0);
    return in_range ? static_cast<T>(v) : std::numeric_limits<int64_t>::min();
  } else {
    // Narrower types convert through a 32-bit register, then keep the low bits.
    const bool in_range = v >= R(-2147483648.0) && v < R(2147483648.0);
    const int32_t wide = in_range ? static_cast<int32_t>(v) : std::numeric_limits<int32_t>::min();
    return static_cast<T>(wide);
  }
}

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

template <typename T>
inline bool IsNan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x;  // vectorizes like the compare it is
  } else {
    return false;
  }
}

// +, - and *: integers wrap around (computed as uint64, then truncated to the type).
#define HN_WRAPPING_OP(Name, op)                                                          \
  struct Name {                                                                           \
    template <typename T>                                                                 \
    static T Map(T a, T b) {                                                              \
      if constexpr (std::is_floating_point_v<T>) {                                        \
        return a op b;                                                                    \
      } else {                                                                            \
        return static_cast<T>(static_cast<uint64_t>(static_cast<Unsigned<T>>(a))          \
                                  op static_cast<uint64_t>(static_cast<Unsigned<T>>(b))); \
      }                                                                                   \
    }                                                                                     \
  }
HN_WRAPPING_OP(Add, +);
HN_WRAPPING_OP(Sub, -);
HN_WRAPPING_OP(Mul, *);
#undef HN_WRAPPING_OP

/// The argument integer inputs are computed in: double for MXNet's math:: functions, float for
/// its math::id / math::sqr formulas.
template <typename T, typename Real>
using Compute = std::conditional_t<std::is_floating_point_v<T>, T, Real>;

/// Applies a unary function F (with F::Real the type integers are computed in, and
/// F::Eval(float) / F::Eval(double)) to x of any numeric type.
template <typename F, typename T>
inline T Unary(T x) {
  using C = Compute<T, typename F::Real>;
  return FromReal<T>(F::Eval(static_cast<C>(x)));
}

// ---- unary math -------------------------------------------------------------------------------

#define HN_MATH_FUNCTION(Name, expr)              \
  struct Name {                                   \
    using Real = double;                          \
    static float Eval(float x) { return expr; }   \
    static double Eval(double x) { return expr; } \
  }

HN_MATH_FUNCTION(Exp, std::exp(x));
HN_MATH_FUNCTION(Expm1, std::expm1(x));
HN_MATH_FUNCTION(Log, std::log(x));
HN_MATH_FUNCTION(Log1p, std::log1p(x));
HN_MATH_FUNCTION(Log2, std::log2(x));
HN_MATH_FUNCTION(Log10, std::log10(x));
HN_MATH_FUNCTION(Sqrt, std::sqrt(x));
HN_MATH_FUNCTION(Cbrt, std::cbrt(x));
HN_MATH_FUNCTION(Sin, std::sin(x));
HN_MATH_FUNCTION(Cos, std::cos(x));
HN_MATH_FUNCTION(Tan, std::tan(x));
HN_MATH_FUNCTION(Arcsin, std::asin(x));
HN_MATH_FUNCTION(Arccos, std::acos(x));
HN_MATH_FUNCTION(Arctan, std::atan(x));
HN_MATH_FUNCTION(Sinh, std::sinh(x));
HN_MATH_FUNCTION(Cosh, std::cosh(x));
HN_MATH_FUNCTION(Arcsinh, std::asinh(x));
HN_MATH_FUNCTION(Arccosh, std::acosh(x));
HN_MATH_FUNCTION(Arctanh, std::atanh(x));
HN_MATH_FUNCTION(Tanh, std::tanh(x));
HN_MATH_FUNCTION(Erf, std::erf(x));
HN_MATH_FUNCTION(Gamma, std::tgamma(x));
HN_MATH_FUNCTION(Gammaln, std::lgamma(x));
HN_MATH_FUNCTION(Abs, std::fabs(x));
HN_MATH_FUNCTION(Floor, std::floor(x));
HN_MATH_FUNCTION(Ceil, std::ceil(x));
HN_MATH_FUNCTION(Trunc, std::trunc(x));
// Halfway cases away from zero (C's round).
HN_MATH_FUNCTION(Round, std::round(x));
// 1.0f / math::sqrt(a): integers get sqrt in double, so the quotient is double too.
HN_MATH_FUNCTION(Rsqrt, 1.0f / std::sqrt(x));
HN_MATH_FUNCTION(Rcbrt, 1.0f / std::cbrt(x));
// MXNet's rint: the nearer of floor and ceil, ties to floor (rint(-2.5) = -3, unlike C's rint).
HN_MATH_FUNCTION(Rint, (x - std::floor(x)) <= (std::ceil(x) - x) ? std::floor(x) : std::ceil(x));
// Toward zero: the one of floor and ceil with the smaller magnitude.
HN_MATH_FUNCTION(Fix,
                 std::fabs(std::floor(x)) < std::fabs(std::ceil(x)) ? std::floor(x) : std::ceil(x));

#undef HN_MATH_FUNCTION

// Formulas over math::id / math::sqr: integers are computed in float.
struct Square {
  using Real = float;
  static float Eval(float x) { return x * x; }
  static double Eval(double x) { return x * x; }
};
struct Reciprocal {
  using Real = float;
  static float Eval(float x) { return 1.f / x; }
  static double Eval(double x) { return 1.0 / x; }
};

// mshadow_op's PI is a float constant; 180 / PI is folded in float, also for float64 inputs.
constexpr float kPiF = 3.14159265358979323846f;
struct Degrees {
  using Real = float;
  static float Eval(float x) { return 180.0f / kPiF * x; }
  static double Eval(double x) { return static_cast<double>(180.0f / kPiF) * x; }
};
struct Radians {
  using Real = float;
  static float Eval(float x) { return kPiF / 180.0f * x; }
  static double Eval(double x) { return static_cast<double>(kPiF / 180.0f) * x; }
};

// The sigmoid family: float32 shares Activation's definitions (activation-inl.h).
struct Sigmoid {
  using Real = double;
  static float Eval(float x) { return internal::SigmoidOf(x); }
  static double Eval(double x) { return 1.0 / (1.0 + std::exp(-x)); }
};
struct Softsign {
  using Real = double;
  static float Eval(float x) { return internal::SoftsignOf(x); }
  static double Eval(double x) { return x / (1.0 + std::fabs(x)); }
};

/// The inverse error function in double (Winitzki's closed-form start, then Halley steps on
/// erf): +-inf at +-1, NaN outside [-1, 1], y * sqrt(pi) / 2 below 1e-7 in magnitude.
inline double ErfInv(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1.0 || y == -1.0) return std::copysign(std::numeric_limits<double>::infinity(), y);
  const double half_sqrt_pi = 0.88622692545275801365;  // sqrt(pi) / 2
  if (std::fabs(y) < 1e-7) return y * half_sqrt_pi;
  const double a = 0.147;
  const double ln = std::log((1.0 - y) * (1.0 + y));
  const double t = 2.0 / (3.14159265358979323846 * a) + 0.5 * ln;
  double x = std::copysign(std::sqrt(std::sqrt(t * t - ln / a) - t), y);
  for (int step = 0; step < 3; ++step) {
    // f = erf(x) - y, f' = exp(-x^2) / (sqrt(pi) / 2), f'' = -2 x f'.
    const double f = std::erf(x) - y;
    const double df = std::exp(-x * x) / half_sqrt_pi;
    if (df == 0.0) break;
    x -= f / (df + x * f);
  }
  return x;
}
struct Erfinv {
  using Real = double;
  static float Eval(float x) { return static_cast<float>(ErfInv(static_cast<double>(x))); }
  static double Eval(double x) { return ErfInv(x); }
};

// Unary ops with their own integer rules (compare, negate).
struct Relu {
  template <typename T>
  static T Map(T x) {
    // MXNet's relu op keeps NaN on both its CPU paths (unlike Activation's relu on MKLDNN,
    // ReluOf), so it is not fused into convolutions.
    return (x > T(0) || IsNan(x)) ? x : T(0);
  }
};
struct Sign {
  template <typename T>
  static T Map(T x) {
    if constexpr (std::is_signed_v<T> || std::is_floating_point_v<T>) {
      if (x < T(0)) return static_cast<T>(-1);
    }
    return x > T(0) ? T(1) : T(0);
  }
};
struct Negative {
  template <typename T>
  static T Map(T x) {
    if constexpr (std::is_floating_point_v<T>) {
      return -x;
    } else {
      return Sub::Map(T(0), x);
    }
  }
};
struct LogicalNot {
  template <typename T>
  static T Map(T x) {
    return x != T(0) ? T(0) : T(1);
  }
};

/// Adapts a math function (Exp, ...) to the Map interface of the ops above.
template <typename F>
struct Math {
  template <typename T>
  static T Map(T x) {
    return Unary<F>(x);
  }
};

// ---- binary math (also the scalar ops, with b = the scalar) ------------------------------------

struct Div {
  template <typename T>
  static T Map(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return a / b;
    } else {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return Sub::Map(T(0), a);  // INT_MIN / -1 wraps instead of trapping
      }
      return static_cast<T>(a / b);
    }
  }
};
// mshadow_op::mod: the sign of the divisor, computed in double; b == 0 gives 0.
struct Mod {
  template <typename T>
  static T Map(T a, T b) {
    if (b == T(0)) return T(0);
    const double da = static_cast<double>(a), db = static_cast<double>(b);
    if constexpr (std::is_unsigned_v<T>) {
      return FromReal<T>(std::fmod(da, db));
    } else if (b < T(0)) {
      if (a < T(0)) return FromReal<T>(-std::fmod(-da, -db));
      const double r = std::fmod(da, -db);
      return FromReal<T>(r + (r != 0.0 ? db : 0.0));
    } else {
      if (a >= T(0)) return FromReal<T>(std::fmod(da, db));
      const double r = std::fmod(-da, db);
      return FromReal<T>(-r + (r != 0.0 ? db : 0.0));
    }
  }
};
// math::pow / math::hypot: float for every type but double.
struct Power {
  template <typename T>
  static T Map(T a, T b) {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    return FromReal<T>(std::pow(static_cast<C>(a), static_cast<C>(b)));
  }
};
struct Hypot {
  template <typename T>
  static T Map(T a, T b) {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    return FromReal<T>(std::hypot(static_cast<C>(a), static_cast<C>(b)));
  }
};
// NaN in the first operand propagates (MXNet tests IsNan(a) first).
struct Maximum {
  template <typename T>
  static T Map(T a, T b) {
    return (a > b || IsNan(a)) ? a : b;
  }
};
struct Minimum {
  template <typename T>
  static T Map(T a, T b) {
    return (a < b || IsNan(a)) ? a : b;
  }
};

#define HN_PREDICATE(Name, expr)   \
  struct Name {                    \
    template <typename T>          \
    static T Map(T a, T b) {       \
      return (expr) ? T(1) : T(0); \
    }                              \
  }
HN_PREDICATE(Equal, a == b);
HN_PREDICATE(NotEqual, a != b);
HN_PREDICATE(Greater, a > b);
HN_PREDICATE(GreaterEqual, a >= b);
HN_PREDICATE(Lesser, a < b);
HN_PREDICATE(LesserEqual, a <= b);
HN_PREDICATE(LogicalAnd, a != T(0) && b != T(0));
HN_PREDICATE(LogicalOr, a != T(0) || b != T(0));
HN_PREDICATE(LogicalXor, (a != T(0)) != (b != T(0)));
#undef HN_PREDICATE

/// relu's input gradient from its output y, as MXNet's _backward_relu: dy times 1 where y > 0, 0
/// where y <= 0, and NaN where y is (the relu op keeps NaN; Activation's relu never outputs it).
struct ReluGrad {
  template <typename T>
  static T Map(T dy, T y) {
    // Both tests always run: a compare the NaN test guarded could trap, which kept GCC from
    // vectorizing the loop (a scalar branch per element, 4x the two unfused ops' time).
    const T positive = Greater::Map(y, T(0));
    return Mul::Map(dy, IsNan(y) ? y : positive);
  }
};

/// F with its operands swapped: the r* scalar ops (scalar - x, scalar / x, ...).
template <typename F>
struct Swapped {
  template <typename T>
  static T Map(T a, T b) {
    return F::Map(b, a);
  }
};
// mshadow_op::rdiv divides math::id values: float for integers.
struct RDiv {
  template <typename T>
  static T Map(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return b / a;
    } else {
      return FromReal<T>(static_cast<float>(b) / static_cast<float>(a));
    }
  }
};

// ---- dtype dispatch for float-only kernels ----------------------------------------------------

template <typename Fn>
void SwitchFloatDType(DType dtype, Fn&& fn) {
  if (dtype == DType::kFloat32) {
    fn(internal::TypeTag<float>{});
  } else if (dtype == DType::kFloat64) {
    fn(internal::TypeTag<double>{});
  } else {
    HN_THROW(kInternal) << "no float kernel for dtype " << DTypeName(dtype)
                        << " (type inference should have rejected it)";
  }
}

}  // namespace op_math
}  // namespace hybridnet
