// exp, sigmoid and tanh of float written in arithmetic only, so that a loop over them vectorizes
// (`#pragma omp simd`, in a file compiled with -fno-trapping-math: see core/CMakeLists.txt); the
// libm calls do not, and dominated the RNN's gates and softmax's lines.
// exp(x) = 2^n e^r with n = round(x / ln 2), r = x - n ln 2 (ln 2 split in two so r is exact),
// e^r a degree-7 Taylor polynomial on |r| <= ln 2 / 2: within 2 ulp of the correctly rounded
// value, 0 below -87.3 (where floats go subnormal) and capped at exp(88.3) above. Sigmoid is
// within 4 ulp, tanh within 6 (tests/cpp/vector_math_test.cc).
//
// These are for kernels that state it (RNN, softmax in float); Activation and the unary ops keep
// libm's (activation-inl.h), whose bits the fused paths reproduce.
#pragma once

#include <cstdint>

namespace hybridnet {
namespace internal {

inline float VectorExp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;  // exact in 9 bits, so n * kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer
  constexpr float kMin = -87.3f, kMax = 88.3f;
  const float clamped = x < kMin ? kMin : (x > kMax ? kMax : x);
  const float n = (clamped * kLog2e + kRound) - kRound;
  const float r = (clamped - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.f / 5040.f;
  p = p * r + 1.f / 720.f;
  p = p * r + 1.f / 120.f;
  p = p * r + 1.f / 24.f;
  p = p * r + 1.f / 6.f;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  const float scale = __builtin_bit_cast(float, bits);
  return x < kMin ? 0.f : p * scale;
}

inline float VectorSigmoid(float x) { return 1.f / (1.f + VectorExp(-x)); }

/// tanh(x) = 1 - 2 / (e^(2x) + 1); below |x| = 0.4, where that form loses relative precision,
/// the Taylor polynomial to x^13 (within 4e-9 of tanh there).
inline float VectorTanh(float x) {
  const float x2 = x * x;
  float p = 21844.f / 6081075.f;
  p = p * x2 - 1382.f / 155925.f;
  p = p * x2 + 62.f / 2835.f;
  p = p * x2 - 17.f / 315.f;
  p = p * x2 + 2.f / 15.f;
  p = p * x2 - 1.f / 3.f;
  const float small = x + x * x2 * p;
  const float large = 1.f - 2.f / (VectorExp(2.f * x) + 1.f);
  return (x < 0.4f && x > -0.4f) ? small : large;
}

}  // namespace internal
}  // namespace hybridnet
