// Reference helpers shared by the case files: the integer rules of MXNet's kernels (two's
// complement wrap-around, C's truncating conversion with x86's result for NaN and overflow) and
// numpy broadcasting, written over doubles with plain arithmetic, independently of the kernels.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "conformance.h"

namespace hybridnet {
namespace conformance {

inline OpCase WithDTypes(OpCase c, std::vector<DType> dtypes) {
  c.dtypes = std::move(dtypes);
  return c;
}

inline int DTypeBits(DType d) {
  switch (d) {
    case DType::kUint8:
    case DType::kInt8:
      return 8;
    case DType::kInt32:
      return 32;
    default:
      return 64;
  }
}

/// An integer-valued v wrapped into the range of the integer dtype d (two's complement).
inline double WrapTo(double v, DType d) {
  if (d == DType::kInt64) return v;  // cases keep int64 results in range
  const double span = std::ldexp(1.0, DTypeBits(d));
  const double low = d == DType::kUint8 ? 0.0 : -span / 2;
  double r = std::fmod(v - low, span);
  if (r < 0) r += span;
  return r + low;
}

/// v converted to dtype d as MXNet's DType(v) on x86-64: float32 rounds; integers truncate, and
/// NaN or a value beyond int32 (int64 for int64) gives the minimum, wrapped for 8-bit types.
inline double ConvertTo(double v, DType d) {
  if (d == DType::kFloat64) return v;
  if (d == DType::kFloat32) return F32(v);
  if (d == DType::kInt64) {
    const double lim = std::ldexp(1.0, 63);
    return (v >= -lim && v < lim) ? std::trunc(v) : -lim;
  }
  const double lim = std::ldexp(1.0, 31);
  const double wide = (v >= -lim && v < lim) ? std::trunc(v) : -lim;
  return WrapTo(wide, d);
}

/// A unary reference whose double result is converted to the output dtype d.
inline RefFn UnaryAs(DType d, std::function<double(double)> f) {
  return Unary([d, f](double x) { return ConvertTo(f(x), d); });
}

/// A binary reference whose double result is converted to the output dtype d.
inline RefFn BinaryAs(DType d, std::function<double(double, double)> f) {
  return Binary([d, f](double a, double b) { return ConvertTo(f(a, b), d); });
}

/// Element of `t` seen at output multi-index `idx` under numpy broadcasting.
inline double At(const RefTensor& t, const std::vector<int64_t>& idx) {
  const size_t pad = idx.size() - t.shape.ndim();
  int64_t flat = 0;
  for (size_t k = 0; k < t.shape.ndim(); ++k) {
    const int64_t i = t.shape[k] == 1 ? 0 : idx[k + pad];
    flat = flat * t.shape[k] + i;
  }
  return t[flat];
}

/// The numpy broadcast of two shapes (they are assumed compatible).
inline Shape BroadcastShape(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.ndim(), b.ndim());
  std::vector<int64_t> d(n);
  for (size_t k = 0; k < n; ++k) {
    const int64_t x = k + a.ndim() >= n ? a[k + a.ndim() - n] : 1;
    const int64_t y = k + b.ndim() >= n ? b[k + b.ndim() - n] : 1;
    d[k] = std::max(x, y);
  }
  return Shape(d);
}

/// Python's % (the sign of the divisor), 0 for a zero divisor: MXNet's mod.
/// The reference of a backward op whose outputs are the vector-Jacobian products of a forward
/// reference: backward input 0 is the output gradient dy, `forward_inputs` makes the forward's
/// inputs from the backward's, and each output is d <dy, forward(x)[0]> / d x[i] for i in `wrt`,
/// by central differences in double (step 1e-6 relative: accurate to about 1e-9 away from
/// kinks, far within the float kernels' tolerance).
inline RefFn VjpRef(
    RefFn forward,
    std::function<std::vector<RefTensor>(const std::vector<RefTensor>&)> forward_inputs,
    std::vector<size_t> wrt) {
  return [=](const std::vector<RefTensor>& in) {
    const RefTensor& dy = in[0];
    const std::vector<RefTensor> x = forward_inputs(in);
    auto objective = [&](const std::vector<RefTensor>& at) {
      const RefTensor y = forward(at)[0];
      double sum = 0;
      for (int64_t k = 0; k < y.size(); ++k) sum += dy[k] * y[k];
      return sum;
    };
    std::vector<RefTensor> grads;
    for (size_t i : wrt) {
      RefTensor g(x[i].shape);
      std::vector<RefTensor> moved = x;
      for (int64_t j = 0; j < g.size(); ++j) {
        const double h = 1e-6 * std::max(1.0, std::fabs(x[i][j]));
        moved[i][j] = x[i][j] + h;
        const double up = objective(moved);
        moved[i][j] = x[i][j] - h;
        const double down = objective(moved);
        moved[i][j] = x[i][j];
        g[j] = (up - down) / (2 * h);
      }
      grads.push_back(std::move(g));
    }
    return grads;
  };
}

/// VjpRef's forward_inputs: the backward's inputs after the output gradient, in order.
inline std::vector<RefTensor> AfterOutGrad(const std::vector<RefTensor>& in) {
  return std::vector<RefTensor>(in.begin() + 1, in.end());
}

inline double PyMod(double a, double b) {
  if (b == 0) return 0;
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/// Values of a list in turn (input i takes values[i], one list per input).
inline InputGen Values(std::vector<std::vector<double>> values) {
  return [values](std::mt19937&, size_t input, int64_t index) {
    const auto& v = values[input];
    return v[static_cast<size_t>(index) % v.size()];
  };
}

/// Multiples of 0.5 in [lo, hi] (ties for the rounding ops).
inline InputGen Halves(int lo, int hi) {
  return [lo, hi](std::mt19937& rng, size_t, int64_t) {
    return 0.5 * std::uniform_int_distribution<int>(2 * lo, 2 * hi)(rng);
  };
}

}  // namespace conformance
}  // namespace hybridnet
