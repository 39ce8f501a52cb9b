// BatchNorm's per-channel scale and shift (kernels/batch_norm.h): the AVX-512 version must
// give the scalar version's bits, since eager BatchNorm, graph BatchNorm and the fused
// convolution epilogue all rely on one result.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/avx512-inl.h"
#include "kernels/batch_norm.h"

namespace hybridnet {
namespace {

TEST(BatchNormAffine, Avx512GivesTheScalarBitsAtEveryChannelCount) {
  if (!internal::CpuHasAvx512()) GTEST_SKIP() << "this CPU has no AVX-512F: one version only";
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> any(-3.f, 3.f), positive(0.f, 5.f);
  for (const int64_t C : {1, 2, 15, 16, 17, 31, 33, 100, 1000}) {
    std::vector<float> gamma(C), beta(C), mean(C), var(C);
    for (int64_t c = 0; c < C; ++c) {
      gamma[c] = any(rng);
      beta[c] = any(rng);
      mean[c] = any(rng);
      var[c] = positive(rng);
    }
    // The edges: zero variance with eps 0 (an infinite scale), a negative variance (NaN), and
    // a denormal variance.
    var[0] = 0.f;
    if (C > 1) var[1] = -1.f;
    if (C > 2) var[2] = std::numeric_limits<float>::denorm_min();
    for (const double eps : {0.0, 1e-5, 1e-3}) {
      for (const bool fix_gamma : {false, true}) {
        // One float past the end of each output: the masked tail must not write there.
        std::vector<float> scalar(2 * C + 2, 42.f), vec(2 * C + 2, 42.f);
        internal::BatchNormScaleShiftScalar(gamma.data(), beta.data(), mean.data(), var.data(), eps,
                                            fix_gamma, C, scalar.data(), scalar.data() + C + 1);
        internal::BatchNormScaleShiftAvx512(gamma.data(), beta.data(), mean.data(), var.data(), eps,
                                            fix_gamma, C, vec.data(), vec.data() + C + 1);
        EXPECT_EQ(std::memcmp(scalar.data(), vec.data(), scalar.size() * sizeof(float)), 0)
            << "C=" << C << " eps=" << eps << " fix_gamma=" << fix_gamma;
        EXPECT_EQ(vec[C], 42.f);
        EXPECT_EQ(vec[2 * C + 1], 42.f);
      }
    }
  }
}

// The channel-last forward's last step, in the copy this CPU runs (AVX2 where it has it): each
// value x * scale + shift in two float roundings (no multiply-add), then the relu, with NaN to 0
// as ReluOf; a tail of channels short of a register too.
TEST(BatchNormAffine, ApplyChannelLastGivesTheScalarFormulasBits) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> any(-3.f, 3.f);
  for (const int64_t C : {1, 7, 8, 9, 16, 17, 64}) {
    const int64_t positions = 5, n = positions * C;
    std::vector<float> x(n), scale(C), shift(C);
    for (float& v : x) v = any(rng);
    for (int64_t c = 0; c < C; ++c) {
      scale[c] = any(rng);
      shift[c] = any(rng);
    }
    x[0] = std::numeric_limits<float>::quiet_NaN();
    for (const bool relu : {false, true}) {
      std::vector<float> y(n + 1, 42.f), expected(n + 1, 42.f);
      internal::BatchNormApplyChannelLast(x.data(), scale.data(), shift.data(), positions, C, relu,
                                          y.data());
      for (int64_t i = 0; i < n; ++i) {
        volatile float product = x[i] * scale[i % C];  // rounded, as the kernel's multiply
        const float v = product + shift[i % C];
        expected[i] = relu ? (v > 0.f ? v : 0.f) : v;
      }
      EXPECT_EQ(std::memcmp(y.data(), expected.data(), y.size() * sizeof(float)), 0)
          << "C=" << C << " relu=" << relu;
    }
  }
}

}  // namespace
}  // namespace hybridnet
