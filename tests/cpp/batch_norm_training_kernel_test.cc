// Training BatchNorm's kernels (kernels/batch_norm.h): the batch statistics and the gradient sum
// in one fixed order, so the AVX-512 versions must give the scalar versions' bits at every row
// length (full blocks of partial sums, tails, rows shorter than a register), and both must be the
// statistics and gradient a double-precision reference gives, to float rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/autograd.h"
#include "hybridnet/imperative.h"
#include "hybridnet/ndarray.h"
#include "kernels/avx512-inl.h"
#include "kernels/batch_norm.h"
#include "kernels/threads.h"
#include "kernels/vector_isa.h"
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

// The statistics the training forward saves from channel-first x, which the backward reads.
struct SavedStats {
  std::vector<float> mean, invstd;
  SavedStats(const std::vector<float>& x, const internal::BatchNormDims& dims)
      : mean(static_cast<size_t>(dims.channels)), invstd(mean.size()) {
    for (int64_t c = 0; c < dims.channels; ++c) {
      internal::BatchNormBatchStats(x.data(), dims, c, 1e-5, &mean[static_cast<size_t>(c)],
                                    &invstd[static_cast<size_t>(c)]);
    }
  }
};

// With `relu_beta`, _backward_BatchNormWithReLU's kernel.
GradResult RunBackward(bool avx512, const std::vector<float>& dy, const std::vector<float>& x,
                       const std::vector<float>& gamma, const internal::BatchNormDims& dims,
                       bool fix_gamma, bool batch_stats, const float* relu_beta = nullptr) {
  const size_t C = static_cast<size_t>(dims.channels);
  GradResult r{std::vector<float>(x.size()), std::vector<float>(C), std::vector<float>(C),
               std::vector<float>(C, 0.25f), std::vector<float>(C, 1.5f)};
  const SavedStats saved(x, dims);
  const internal::BatchNormGradArgs args{dy.data(),
                                         x.data(),
                                         gamma.data(),
                                         r.moving_mean.data(),
                                         r.moving_var.data(),
                                         saved.mean.data(),
                                         saved.invstd.data(),
                                         relu_beta,
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

// _contrib_BatchNormWithReLU's gradient in one op, _backward_BatchNormWithReLU, gives the bits of
// the two it stands for: _backward_relu on the forward's output, then _backward_BatchNorm; on
// batch and on moving statistics (and a training backward of a predict-mode forward, which reads
// the moving statistics the forward saved), in float32 and float64, with signs of zero and ties
// at the relu's kink (x at the mean with beta 0).
TEST(BatchNormTrainingKernel, ReluVariantGradientGivesTheBitsOfReluThenBatchNormGradients) {
  std::mt19937 rng(17);
  const int64_t N = 3, C = 5, H = 7, W = 9;
  for (const DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const auto& [forward_training, training] :
         {std::pair{true, true}, std::pair{false, false}, std::pair{false, true}}) {
      for (const std::string fix_gamma : {"False", "True"}) {
        std::vector<float> xv = Random(static_cast<size_t>(N * C * H * W), &rng, 0.1f);
        for (size_t i = 0; i < xv.size(); i += 11) xv[i] = 0.f;  // many equal values
        const std::vector<float> dyv = Random(xv.size(), &rng, 0.f);
        std::vector<float> beta_v = Random(static_cast<size_t>(C), &rng, 0.f);
        beta_v[0] = 0.f;
        auto array = [&](const Shape& shape, const std::vector<float>& v) {
          return Invoke("Cast", {NDArray::FromVector(shape, v)},
                        {{"dtype", dtype == DType::kFloat64 ? "float64" : "float32"}})[0];
        };
        const NDArray x = array({N, C, H, W}, xv), dy = array({N, C, H, W}, dyv);
        const NDArray gamma = array({C}, Random(static_cast<size_t>(C), &rng, 1.f));
        const NDArray beta = array({C}, beta_v);
        const std::string where = std::string(dtype == DType::kFloat64 ? "float64" : "float32") +
                                  " forward training=" + std::to_string(forward_training) +
                                  " backward training=" + std::to_string(training) +
                                  " fix_gamma=" + fix_gamma;
        const AttrDict attrs{{"fix_gamma", fix_gamma}, {"eps", "1e-05"}};
        AttrDict forward_attrs = attrs;
        forward_attrs["output_mean_var"] = "True";  // the saved statistics, to give the backward
        auto moving = [&] {
          return std::vector<NDArray>{array({C}, std::vector<float>(C, 0.25f)),
                                      array({C}, std::vector<float>(C, 1.5f))};
        };
        std::vector<NDArray> m1 = moving(), m2 = moving();
        autograd::SetTraining(forward_training);
        const std::vector<NDArray> forward =
            Invoke("_contrib_BatchNormWithReLU", {x, gamma, beta, m1[0], m1[1]}, forward_attrs);
        const NDArray &y = forward[0], &mean = forward[1], &var = forward[2];
        autograd::SetTraining(training);
        const NDArray masked = Invoke("_backward_relu", {dy, y})[0];
        const std::vector<NDArray> two_ops =
            Invoke("_backward_BatchNorm", {masked, x, gamma, m1[0], m1[1], mean, var}, attrs);
        const std::vector<NDArray> one_op = Invoke(
            "_backward_BatchNormWithReLU", {dy, x, gamma, m2[0], m2[1], mean, var, beta}, attrs);
        autograd::SetTraining(false);
        ASSERT_EQ(two_ops.size(), one_op.size()) << where;
        for (size_t i = 0; i < one_op.size(); ++i) {
          ASSERT_EQ(two_ops[i].nbytes(), one_op[i].nbytes()) << where;
          EXPECT_EQ(std::memcmp(two_ops[i].raw_data(), one_op[i].raw_data(), one_op[i].nbytes()), 0)
              << where << " output " << i;
        }
        for (size_t i = 0; i < 2; ++i) {
          EXPECT_EQ(std::memcmp(m1[i].raw_data(), m2[i].raw_data(), m1[i].nbytes()), 0)
              << where << " moving statistic " << i;
        }
      }
    }
  }
}

// Channel-last data (N, S, C) against the channel-first kernels on the same values (N, C, S): the
// same bits, for rows (S) shorter than, not a multiple of and a multiple of the lanes, one sample,
// and channel counts not a multiple of a register's 16 or 8; the backward also with a relu.
struct ChannelLastCase {
  int64_t N, C, S;
};
// The last five are large enough to be split between threads (kThreadCounts): by groups of
// samples (S 700: one sample a group; S 500: groups of two, the last of one; S 49: groups of 20,
// the last shorter), and, in a single group, by lanes (S 4096: rows of at least the lanes) or by
// channels (S 9).
constexpr ChannelLastCase kChannelLastCases[] = {
    {1, 3, 7},    {3, 17, 65},  {2, 40, 1},   {4, 33, 100},  {2, 16, 1024}, {5, 64, 31},
    {1, 1, 130},  {2, 130, 9},  {2, 50, 700}, {7, 20, 500},  {24, 64, 49},  {1, 32, 4096},
    {40, 200, 9}};
constexpr int kThreadCounts[] = {1, 2, 3};

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

TEST(BatchNormTrainingKernel, ChannelLastBatchStatsGiveTheChannelFirstBits) {
  std::mt19937 rng(17);
  internal::Workspace workspace;
  for (const ChannelLastCase& k : kChannelLastCases) {
    const internal::BatchNormDims dims{k.N, k.C, k.S};
    std::vector<float> x = Random(static_cast<size_t>(k.N * k.C * k.S), &rng, 0.7f);
    // NaNs of either sign in the even channels; the odd ones keep numbers, whose every lane
    // counts.
    for (size_t i = 0; i < x.size(); i += 11) {
      if (i / static_cast<size_t>(k.S) % static_cast<size_t>(k.C) % 2 == 0)
        x[i] = std::copysign(NAN, i % 2 ? 1.f : -1.f);
    }
    const std::vector<float> x_last = ToChannelLast(x, k);
    std::vector<float> mean_first(static_cast<size_t>(k.C)), invstd_first(mean_first.size());
    for (int64_t c = 0; c < k.C; ++c) {
      internal::BatchNormBatchStats(x.data(), dims, c, 1e-5, &mean_first[static_cast<size_t>(c)],
                                    &invstd_first[static_cast<size_t>(c)]);
    }
    for (const int threads : kThreadCounts) {
      const internal::ThreadCountWhile thread_count(threads);
      for (const internal::VectorIsa isa : internal::VectorIsasHere()) {
        std::vector<float> mean(mean_first.size()), invstd(mean_first.size());
        internal::BatchNormBatchStatsChannelLastWith(isa, x_last.data(), dims, 1e-5, mean.data(),
                                                     invstd.data(), &workspace);
        const std::string where = "N=" + std::to_string(k.N) + " C=" + std::to_string(k.C) +
                                  " S=" + std::to_string(k.S) + " " +
                                  internal::VectorIsaName(isa) +
                                  " threads=" + std::to_string(threads);
        EXPECT_TRUE(SameBits(mean, mean_first)) << where;
        EXPECT_TRUE(SameBits(invstd, invstd_first)) << where;
      }
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
                       gamma = Random(C, &rng, 1.f), beta = Random(C, &rng, 0.f);
    // NaNs of either sign in some channels: the NaN each result keeps is the channel-first one.
    for (size_t i = 0; i < n; i += 7) (i % 2 ? x : dy)[i] = std::copysign(NAN, i % 3 ? 1.f : -1.f);
    const std::vector<float> x_last = ToChannelLast(x, k), dy_last = ToChannelLast(dy, k);
    const SavedStats saved(x, dims);
    for (const bool batch_stats : {true, false}) {
      for (const bool fix_gamma : {false, true}) {
        for (const int threads : kThreadCounts) {
          const internal::ThreadCountWhile thread_count(threads);
          for (const internal::VectorIsa isa : internal::VectorIsasHere()) {
            for (const float* relu_beta : std::vector<const float*>{nullptr, beta.data()}) {
              const GradResult first = RunBackward(isa == internal::VectorIsa::kAvx512, dy, x,
                                                   gamma, dims, fix_gamma, batch_stats, relu_beta);
              GradResult last{std::vector<float>(n), std::vector<float>(C), std::vector<float>(C),
                              std::vector<float>(C, 0.25f), std::vector<float>(C, 1.5f)};
              const internal::BatchNormGradArgs args{dy_last.data(),
                                                     x_last.data(),
                                                     gamma.data(),
                                                     last.moving_mean.data(),
                                                     last.moving_var.data(),
                                                     saved.mean.data(),
                                                     saved.invstd.data(),
                                                     relu_beta,
                                                     last.dx.data(),
                                                     last.dgamma.data(),
                                                     last.dbeta.data(),
                                                     1e-5,
                                                     0.9f,
                                                     fix_gamma,
                                                     batch_stats};
              internal::BatchNormBackwardChannelLastWith(isa, args, dims, &workspace);
              const std::string where = "N=" + std::to_string(k.N) + " C=" + std::to_string(k.C) +
                                        " S=" + std::to_string(k.S) + " " +
                                        internal::VectorIsaName(isa) +
                                        " batch_stats=" + std::to_string(batch_stats) +
                                        " fix_gamma=" + std::to_string(fix_gamma) +
                                        " relu=" + std::to_string(relu_beta != nullptr) +
                                        " threads=" + std::to_string(threads);
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
  }
}

}  // namespace
}  // namespace hybridnet
