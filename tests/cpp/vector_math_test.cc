// The vectorizable float exp, sigmoid and tanh (kernels/vector_math-inl.h) against the double
// functions, in units in the last place of the float result.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/vector_math-inl.h"

namespace hybridnet {
namespace internal {
namespace {

// |got - want| in ulps of the float nearest want (the spacing at want's magnitude).
double Ulps(float got, double want) {
  const float nearest = static_cast<float>(want);
  const float up = std::nextafter(std::fabs(nearest), std::numeric_limits<float>::infinity());
  const double ulp = static_cast<double>(up) - std::fabs(static_cast<double>(nearest));
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

// The largest error over 2^21 evenly spaced points of [lo, hi] and, for relative precision near
// 0, the points +-2^-k, k = 1..120; where it is, in *worst_x.
template <typename F, typename D>
double WorstUlps(F f, D want, float lo, float hi, float* worst_x) {
  double worst = 0;
  auto check = [&](float x) {
    const double u = Ulps(f(x), want(static_cast<double>(x)));
    if (u > worst) {
      worst = u;
      *worst_x = x;
    }
  };
  constexpr int kPoints = 1 << 21;
  for (int k = 0; k <= kPoints; ++k)
    check(lo + (hi - lo) * static_cast<float>(k) / static_cast<float>(kPoints));
  for (int k = 1; k <= 120; ++k) {
    check(std::ldexp(1.f, -k));
    check(-std::ldexp(1.f, -k));
  }
  return worst;
}

TEST(VectorMath, ExpWithin2UlpsOverTheNormalRange) {
  float at = 0;
  const double worst = WorstUlps(
      VectorExp, [](double x) { return std::exp(x); }, -87.f, 88.f, &at);
  EXPECT_LE(worst, 2.0) << "at x = " << at;
  EXPECT_EQ(VectorExp(-100.f), 0.f);
  EXPECT_EQ(VectorExp(0.f), 1.f);
  EXPECT_TRUE(std::isfinite(VectorExp(1000.f)));
}

TEST(VectorMath, SigmoidWithin4UlpsTanhWithin6) {
  float at = 0;
  double worst = WorstUlps(
      VectorSigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -80.f, 80.f, &at);
  EXPECT_LE(worst, 4.0) << "sigmoid at x = " << at;
  worst = WorstUlps(
      VectorTanh, [](double x) { return std::tanh(x); }, -20.f, 20.f, &at);
  EXPECT_LE(worst, 6.0) << "tanh at x = " << at;
  EXPECT_EQ(VectorTanh(0.f), 0.f);
  EXPECT_EQ(VectorTanh(30.f), 1.f);
  EXPECT_EQ(VectorTanh(-30.f), -1.f);
}

}  // namespace
}  // namespace internal
}  // namespace hybridnet
