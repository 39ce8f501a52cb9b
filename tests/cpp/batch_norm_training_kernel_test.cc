// Training BatchNorm's kernels (kernels/batch_norm.h): the batch statistics and the gradient sum
// in one fixed order, so the AVX-512 versions must give the scalar versions' bits at every row
// length (full blocks of partial sums, tails, rows shorter than a register), and both must be the
// statistics and gradient a double-precision reference gives, to float rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/avx512-inl.h"
#include "kernels/batch_norm.h"
#include "kernels/workspace.h"

namespace hybridnet {
namespace {

constexpr int64_t kInners[] = {1, 7, 16, 31, 32, 49, 63, 64, 65, 100, 1024};

std::vector<float> Random(size_t n, std::mt19937* rng, float shift) {
  std::uniform_real_distribution<float> any(-2.f, 2.f);
  std::vector<float> v(n);
  for (float& f : v) f = any(*rng) + shift;
  return v;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(BatchNormTrainingKernel, BatchStatsAvx512GivesTheScalarBitsAndTheMeanAndVariance) {
  if (!internal::CpuHasAvx512()) GTEST_SKIP() << "this CPU has no AVX-512F: one version only";
  std::mt19937 rng(11);
  for (const int64_t inner : kInners) {
    const internal::BatchNormDims dims{3, 2, inner};
    const std::vector<float> x = Random(static_cast<size_t>(3 * 2 * inner), &rng, 0.5f);
    for (int64_t c = 0; c < dims.channels; ++c) {
      float mean_scalar, invstd_scalar, mean_vec, invstd_vec;
      internal::BatchNormBatchStatsScalar(x.data(), dims, c, 1e-5, &mean_scalar, &invstd_scalar);
      internal::BatchNormBatchStatsAvx512(x.data(), dims, c, 1e-5, &mean_vec, &invstd_vec);
      EXPECT_EQ(std::memcmp(&mean_scalar, &mean_vec, sizeof(float)), 0) << "inner=" << inner;
      EXPECT_EQ(std::memcmp(&invstd_scalar, &invstd_vec, sizeof(float)), 0) << "inner=" << inner;
      double sum = 0, sq = 0;
      for (int64_t o = 0; o < dims.outer; ++o)
        for (int64_t i = 0; i < inner; ++i) sum += x[static_cast<size_t>((o * 2 + c) * inner + i)];
      const double mean = sum / static_cast<double>(dims.count());
      for (int64_t o = 0; o < dims.outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const double d = x[static_cast<size_t>((o * 2 + c) * inner + i)] - mean;
          sq += d * d;
        }
      }
      EXPECT_NEAR(mean_vec, mean, 1e-5) << "inner=" << inner;
      EXPECT_NEAR(invstd_vec, 1.0 / std::sqrt(sq / static_cast<double>(dims.count()) + 1e-5),
                  1e-4 / std::sqrt(sq / static_cast<double>(dims.count()) + 1e-5))
          << "inner=" << inner;
    }
  }
}

struct GradResult {
  std::vector<float> dx, dgamma, dbeta, moving_mean, moving_var;
};

GradResult RunBackward(bool avx512, const std::vector<float>& dy, const std::vector<float>& x,
                       const std::vector<float>& gamma, const internal::BatchNormDims& dims,
                       bool fix_gamma, bool batch_stats) {
  const size_t C = static_cast<size_t>(dims.channels);
  GradResult r{std::vector<float>(x.size()), std::vector<float>(C), std::vector<float>(C),
               std::vector<float>(C, 0.25f), std::vector<float>(C, 1.5f)};
  const internal::BatchNormGradArgs args{dy.data(),
                                         x.data(),
                                         gamma.data(),
                                         r.moving_mean.data(),
                                         r.moving_var.data(),
                                         r.dx.data(),
                                         r.dgamma.data(),
                                         r.dbeta.data(),
                                         1e-5,
                                         0.9f,
                                         fix_gamma,
                                         batch_stats};
  if (avx512) {
    internal::BatchNormBackwardAvx512(args, dims);
  } else {
    internal::BatchNormBackwardScalar(args, dims);
  }
  return r;
}

TEST(BatchNormTrainingKernel, BackwardAvx512GivesTheScalarBitsAndTheReferenceGradient) {
  if (!internal::CpuHasAvx512()) GTEST_SKIP() << "this CPU has no AVX-512F: one version only";
  std::mt19937 rng(13);
  for (const int64_t inner : kInners) {
    const internal::BatchNormDims dims{4, 3, inner};
    const size_t n = static_cast<size_t>(4 * 3 * inner);
    const std::vector<float> x = Random(n, &rng, 0.3f), dy = Random(n, &rng, -0.1f),
                             gamma = Random(3, &rng, 1.f);
    for (const bool batch_stats : {true, false}) {
      for (const bool fix_gamma : {false, true}) {
        const GradResult scalar = RunBackward(false, dy, x, gamma, dims, fix_gamma, batch_stats);
        const GradResult vec = RunBackward(true, dy, x, gamma, dims, fix_gamma, batch_stats);
        const std::string where = "inner=" + std::to_string(inner) +
                                  " batch_stats=" + std::to_string(batch_stats) +
                                  " fix_gamma=" + std::to_string(fix_gamma);
        EXPECT_TRUE(SameBits(scalar.dx, vec.dx)) << where;
        EXPECT_TRUE(SameBits(scalar.dgamma, vec.dgamma)) << where;
        EXPECT_TRUE(SameBits(scalar.dbeta, vec.dbeta)) << where;
        EXPECT_TRUE(SameBits(scalar.moving_mean, vec.moving_mean)) << where;
        EXPECT_TRUE(SameBits(scalar.moving_var, vec.moving_var)) << where;
        // The reference, in double: dbeta = sum dy; with batch statistics, dx has zero sum.
        for (int64_t c = 0; c < 3; ++c) {
          double sum_dy = 0, sum_dx = 0;
          for (int64_t o = 0; o < 4; ++o) {
            for (int64_t i = 0; i < inner; ++i) {
              const size_t at = static_cast<size_t>((o * 3 + c) * inner + i);
              sum_dy += dy[at];
              sum_dx += vec.dx[at];
            }
          }
          EXPECT_NEAR(vec.dbeta[static_cast<size_t>(c)], sum_dy, 1e-4) << where;
          if (batch_stats) {
            EXPECT_NEAR(sum_dx, 0.0, 1e-3) << where;
          }
          if (fix_gamma) {
            EXPECT_EQ(vec.dgamma[static_cast<size_t>(c)], 0.f) << where;
          }
        }
      }
    }
  }
}

// Channel-last data (N, S, C) against the channel-first kernels on the same values (N, C, S): the
// same bits, for rows (S) shorter than, not a multiple of and a multiple of the lanes, one sample,
// and channel counts not a multiple of a register's 16 or 8.
struct ChannelLastCase {
  int64_t N, C, S;
};
constexpr ChannelLastCase kChannelLastCases[] = {{1, 3, 7},    {3, 17, 65},   {2, 40, 1},
                                                 {4, 33, 100}, {2, 16, 1024}, {5, 64, 31},
                                                 {1, 1, 130},  {2, 130, 9}};

// (N, C, S) to (N, S, C), and back.
std::vector<float> ToChannelLast(const std::vector<float>& v, const ChannelLastCase& k) {
  std::vector<float> out(v.size());
  for (int64_t n = 0; n < k.N; ++n)
    for (int64_t c = 0; c < k.C; ++c)
      for (int64_t s = 0; s < k.S; ++s)
        out[static_cast<size_t>((n * k.S + s) * k.C + c)] =
            v[static_cast<size_t>((n * k.C + c) * k.S + s)];
  return out;
}

std::vector<float> ToChannelFirst(const std::vector<float>& v, const ChannelLastCase& k) {
  std::vector<float> out(v.size());
  for (int64_t n = 0; n < k.N; ++n)
    for (int64_t c = 0; c < k.C; ++c)
      for (int64_t s = 0; s < k.S; ++s)
        out[static_cast<size_t>((n * k.C + c) * k.S + s)] =
            v[static_cast<size_t>((n * k.S + s) * k.C + c)];
  return out;
}

std::vector<bool> ChannelLastVersions() {
  if (internal::CpuHasAvx512()) return {false, true};
  return {false};
}

TEST(BatchNormTrainingKernel, ChannelLastBatchStatsGiveTheChannelFirstBits) {
  std::mt19937 rng(17);
  internal::Workspace workspace;
  for (const ChannelLastCase& k : kChannelLastCases) {
    const internal::BatchNormDims dims{k.N, k.C, k.S};
    std::vector<float> x = Random(static_cast<size_t>(k.N * k.C * k.S), &rng, 0.7f);
    // NaNs of either sign in some channels.
    for (size_t i = 0; i < x.size(); i += 11) x[i] = std::copysign(NAN, i % 2 ? 1.f : -1.f);
    const std::vector<float> x_last = ToChannelLast(x, k);
    std::vector<float> mean_first(static_cast<size_t>(k.C)), invstd_first(mean_first.size());
    for (int64_t c = 0; c < k.C; ++c) {
      internal::BatchNormBatchStats(x.data(), dims, c, 1e-5, &mean_first[static_cast<size_t>(c)],
                                    &invstd_first[static_cast<size_t>(c)]);
    }
    for (const bool avx512 : ChannelLastVersions()) {
      std::vector<float> mean(mean_first.size()), invstd(mean_first.size());
      internal::BatchNormBatchStatsChannelLastWith(avx512, x_last.data(), dims, 1e-5, mean.data(),
                                                   invstd.data(), &workspace);
      const std::string where = "N=" + std::to_string(k.N) + " C=" + std::to_string(k.C) +
                                " S=" + std::to_string(k.S) + " avx512=" + std::to_string(avx512);
      EXPECT_TRUE(SameBits(mean, mean_first)) << where;
      EXPECT_TRUE(SameBits(invstd, invstd_first)) << where;
    }
  }
}

TEST(BatchNormTrainingKernel, ChannelLastBackwardGivesTheChannelFirstBits) {
  std::mt19937 rng(19);
  internal::Workspace workspace;
  for (const ChannelLastCase& k : kChannelLastCases) {
    const internal::BatchNormDims dims{k.N, k.C, k.S};
    const size_t n = static_cast<size_t>(k.N * k.C * k.S), C = static_cast<size_t>(k.C);
    std::vector<float> x = Random(n, &rng, 0.3f), dy = Random(n, &rng, -0.1f),
                       gamma = Random(C, &rng, 1.f);
    // NaNs of either sign in some channels: the NaN each result keeps is the channel-first one.
    for (size_t i = 0; i < n; i += 7) (i % 2 ? x : dy)[i] = std::copysign(NAN, i % 3 ? 1.f : -1.f);
    const std::vector<float> x_last = ToChannelLast(x, k), dy_last = ToChannelLast(dy, k);
    for (const bool batch_stats : {true, false}) {
      for (const bool fix_gamma : {false, true}) {
        for (const bool avx512 : ChannelLastVersions()) {
          const GradResult first = RunBackward(avx512, dy, x, gamma, dims, fix_gamma, batch_stats);
          GradResult last{std::vector<float>(n), std::vector<float>(C), std::vector<float>(C),
                          std::vector<float>(C, 0.25f), std::vector<float>(C, 1.5f)};
          const internal::BatchNormGradArgs args{dy_last.data(),
                                                 x_last.data(),
                                                 gamma.data(),
                                                 last.moving_mean.data(),
                                                 last.moving_var.data(),
                                                 last.dx.data(),
                                                 last.dgamma.data(),
                                                 last.dbeta.data(),
                                                 1e-5,
                                                 0.9f,
                                                 fix_gamma,
                                                 batch_stats};
          internal::BatchNormBackwardChannelLastWith(avx512, args, dims, &workspace);
          const std::string where = "N=" + std::to_string(k.N) + " C=" + std::to_string(k.C) +
                                    " S=" + std::to_string(k.S) +
                                    " avx512=" + std::to_string(avx512) +
                                    " batch_stats=" + std::to_string(batch_stats) +
                                    " fix_gamma=" + std::to_string(fix_gamma);
          EXPECT_TRUE(SameBits(ToChannelFirst(last.dx, k), first.dx)) << where;
          EXPECT_TRUE(SameBits(last.dgamma, first.dgamma)) << where;
          EXPECT_TRUE(SameBits(last.dbeta, first.dbeta)) << where;
          EXPECT_TRUE(SameBits(last.moving_mean, first.moving_mean)) << where;
          EXPECT_TRUE(SameBits(last.moving_var, first.moving_var)) << where;
        }
      }
    }
  }
}

}  // namespace
}  // namespace hybridnet
