// Elementwise activation functions (MXNet's mshadow_op formulas), defined once and shared by
// Activation, the unary ops (relu, sigmoid, tanh, softsign, clip) and the fused ops
// (FullyConnected + Activation, the convolution epilogue), so every path produces bit-identical
// float32 results.
//
//   d->Field("act_type", &P::act_type, ActTypeNames());   // parsed once into ActType
//   ApplyActivation(p.act_type, in, out, n);             // in may equal out
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "hybridnet/param.h"
#include "kernels/activation_type.h"

namespace hybridnet {
namespace internal {

/// max(x, 0) as oneDNN's relu computes it (MXNet's default, MKLDNN, CPU path; the fused
/// convolution epilogue): x when x > 0, else +0, so NaN gives 0 and -0 gives +0.
inline float ReluOf(float x) { return x > 0.f ? x : 0.f; }
inline float SigmoidOf(float x) { return 1.f / (1.f + std::exp(-x)); }
inline float TanhOf(float x) { return std::tanh(x); }
/// log(1 + e^x); returns x above 20, where the two agree in float.
inline float SoftreluOf(float x) { return x > 20.f ? x : std::log1p(std::exp(x)); }
inline float SoftsignOf(float x) { return x / (1.f + std::fabs(x)); }
/// MXNet's clip, upper bound first: NaN passes through, and so does -0 with a bound of 0.
template <typename T>
inline T ClipOf(T x, T lo, T hi) {
  return x > hi ? hi : (x < lo ? lo : x);
}

/// An activation of one double (float64 data), with the float functions' formulas above.
inline double ActivationOf(ActType act, double x) {
  switch (act) {
    case ActType::kRelu:
      return x > 0.0 ? x : 0.0;
    case ActType::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case ActType::kTanh:
      return std::tanh(x);
    case ActType::kSoftrelu:
      return x > 20.0 ? x : std::log1p(std::exp(x));
    case ActType::kSoftsign:
      break;
  }
  return x / (1.0 + std::fabs(x));
}

template <typename F>
inline void MapFloat(F f, const float* in, float* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

/// out[i] = act(in[i]) for i < n, in float or double; `in` may equal `out`.
inline void ApplyActivation(ActType act, const float* in, float* out, int64_t n) {
  switch (act) {
    case ActType::kRelu:
      MapFloat(ReluOf, in, out, n);
      break;
    case ActType::kSigmoid:
      MapFloat(SigmoidOf, in, out, n);
      break;
    case ActType::kTanh:
      MapFloat(TanhOf, in, out, n);
      break;
    case ActType::kSoftrelu:
      MapFloat(SoftreluOf, in, out, n);
      break;
    case ActType::kSoftsign:
      MapFloat(SoftsignOf, in, out, n);
      break;
  }
}
inline void ApplyActivation(ActType act, const double* in, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = ActivationOf(act, in[i]);
}

}  // namespace internal
}  // namespace hybridnet
