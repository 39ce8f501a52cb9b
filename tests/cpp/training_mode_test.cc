// Train-mode semantics of BatchNorm, Dropout and rrelu under autograd, as MXNet 1.9.1 has them:
// BatchNorm's backward in training mode updates the moving statistics once, with the momentum;
// Dropout draws its mask from the seedable global generator, scales by 1 / (1 - p), and its
// gradient reuses the forward's mask; rrelu draws a slope per element, which its gradient uses.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/autograd.h"
#include "hybridnet/imperative.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"
#include "imperative/cached_op.h"

namespace hybridnet {
namespace {

using testing_util::BitDifference;

class TrainingMode : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_FALSE(autograd::IsRecording());
    EXPECT_FALSE(autograd::IsTraining());
  }
};

// BatchNorm over (4, 2, 3) data: the batch mean and biased variance of each channel.
struct BatchNormSetup {
  NDArray data = NDArray::RandomNormal({4, 2, 3}, 0.5f, 2.f);
  NDArray gamma = NDArray::FromVector({2}, {1.5f, 0.5f});
  NDArray beta = NDArray::FromVector({2}, {0.1f, -0.2f});
  NDArray moving_mean = NDArray::FromVector({2}, {0.25f, -1.f});
  NDArray moving_var = NDArray::FromVector({2}, {2.f, 0.5f});

  std::vector<double> BatchMean() const { return Moments(false); }
  std::vector<double> BatchVariance() const { return Moments(true); }

  std::vector<double> Moments(bool variance) const {
    const std::vector<float> x = data.ToFloatVector();
    std::vector<double> result;
    for (int c = 0; c < 2; ++c) {
      double sum = 0, sq = 0;
      for (int n = 0; n < 4; ++n)
        for (int i = 0; i < 3; ++i) sum += x[static_cast<size_t>((n * 2 + c) * 3 + i)];
      const double mean = sum / 12;
      for (int n = 0; n < 4; ++n) {
        for (int i = 0; i < 3; ++i) {
          const double d = x[static_cast<size_t>((n * 2 + c) * 3 + i)] - mean;
          sq += d * d;
        }
      }
      result.push_back(variance ? sq / 12 : mean);
    }
    return result;
  }

  // Forward (recorded in `train_mode`) and backward in the same mode.
  NDArray ForwardBackward(bool train_mode, const AttrDict& attrs) {
    autograd::AttachGrad(&data);
    autograd::AttachGrad(&gamma);
    autograd::AttachGrad(&beta);
    NDArray y;
    {
      auto recording = autograd::Record(train_mode);
      y = Invoke("BatchNorm", {data, gamma, beta, moving_mean, moving_var}, attrs)[0];
    }
    autograd::Backward({y}, {}, false, train_mode);
    return y;
  }
};

TEST_F(TrainingMode, BatchNormBackwardUpdatesTheMovingStatisticsOnce) {
  BatchNormSetup bn;
  const std::vector<float> mean_before = bn.moving_mean.ToFloatVector();
  const std::vector<float> var_before = bn.moving_var.ToFloatVector();
  bn.ForwardBackward(true, {{"fix_gamma", "False"}, {"momentum", "0.8"}});
  const std::vector<double> mean = bn.BatchMean(), var = bn.BatchVariance();
  const std::vector<float> mean_after = bn.moving_mean.ToFloatVector();
  const std::vector<float> var_after = bn.moving_var.ToFloatVector();
  for (size_t c = 0; c < 2; ++c) {
    EXPECT_NEAR(mean_after[c], mean_before[c] * 0.8 + mean[c] * 0.2, 1e-5) << c;
    EXPECT_NEAR(var_after[c], var_before[c] * 0.8 + var[c] * 0.2, 1e-4) << c;
  }
}

TEST_F(TrainingMode, BatchNormTrainingForwardAloneLeavesTheMovingStatistics) {
  // MXNet updates them in backward: a training forward that is not differentiated keeps them.
  BatchNormSetup bn;
  const NDArray mean_before = bn.moving_mean.Copy(), var_before = bn.moving_var.Copy();
  {
    auto training = autograd::TrainMode();
    Invoke("BatchNorm", {bn.data, bn.gamma, bn.beta, bn.moving_mean, bn.moving_var},
           {{"fix_gamma", "False"}});
  }
  EXPECT_EQ(BitDifference(bn.moving_mean, mean_before), "");
  EXPECT_EQ(BitDifference(bn.moving_var, var_before), "");
}

TEST_F(TrainingMode, BatchNormPredictModeAndGlobalStatsLeaveTheMovingStatistics) {
  for (const AttrDict& attrs : {AttrDict{{"fix_gamma", "False"}},
                                AttrDict{{"fix_gamma", "False"}, {"use_global_stats", "True"}}}) {
    const bool train = attrs.count("use_global_stats") > 0;
    SCOPED_TRACE(train ? "use_global_stats in training" : "predict mode");
    BatchNormSetup bn;
    const NDArray mean_before = bn.moving_mean.Copy(), var_before = bn.moving_var.Copy();
    bn.ForwardBackward(train, attrs);
    EXPECT_EQ(BitDifference(bn.moving_mean, mean_before), "");
    EXPECT_EQ(BitDifference(bn.moving_var, var_before), "");
    // The moving statistics normalize: d data = dy * gamma / sqrt(moving_var + eps), dy = 1.
    const std::vector<float> dx = autograd::GetGrad(bn.data).ToFloatVector();
    const std::vector<float> g = bn.gamma.ToFloatVector(), v = bn.moving_var.ToFloatVector();
    for (size_t i = 0; i < dx.size(); ++i) {
      const size_t c = (i / 3) % 2;
      EXPECT_NEAR(dx[i], g[c] / std::sqrt(v[c] + 1e-3), 1e-5) << i;
    }
  }
}

TEST_F(TrainingMode, BatchNormTrainingGradientsSumToZeroAndFixGammaHasNone) {
  // With batch statistics the data gradient of a constant head gradient is 0 (the output does
  // not move when every element of a channel moves together); beta's is the count.
  BatchNormSetup bn;
  bn.ForwardBackward(true, {});  // fix_gamma by default
  for (float v : autograd::GetGrad(bn.data).ToFloatVector()) EXPECT_NEAR(v, 0.f, 1e-5);
  for (float v : autograd::GetGrad(bn.gamma).ToFloatVector()) EXPECT_EQ(v, 0.f);
  for (float v : autograd::GetGrad(bn.beta).ToFloatVector()) EXPECT_EQ(v, 12.f);
}

TEST_F(TrainingMode, BatchNormTrainingBackwardOfAPredictModeForwardReadsTheSavedStatistics) {
  // The backward normalizes with the statistics the forward saved in its mean and var outputs,
  // as MXNet's does: a forward recorded in predict mode saved the moving ones, so a training
  // backward uses those (with the batch-statistics formula), eager and hybridized alike.
  const AttrDict attrs{{"fix_gamma", "False"}, {"eps", "0.001"}};
  const BatchNormSetup setup;
  const NDArray dy = NDArray::RandomUniform({4, 2, 3}, -1.f, 1.f);
  std::vector<NDArray> data_grads;
  for (const bool hybridized : {false, true}) {
    SCOPED_TRACE(hybridized ? "hybridized" : "eager");
    std::vector<NDArray> values{setup.data.Copy(), setup.gamma.Copy(), setup.beta.Copy(),
                                setup.moving_mean.Copy(), setup.moving_var.Copy()};
    for (size_t i = 0; i < 3; ++i) autograd::AttachGrad(&values[i]);
    NDArray y;
    {
      auto recording = autograd::Record(/*train_mode=*/false);
      if (hybridized) {
        const std::vector<std::string> names{"data", "gamma", "beta", "moving_mean", "moving_var"};
        std::vector<Symbol> vars;
        for (const std::string& name : names) vars.push_back(Symbol::Var(name));
        y = internal::CachedOp(Symbol::Create("BatchNorm", vars, attrs, "bn"), names, "bn")
                .Run(values)[0];
      } else {
        y = Invoke("BatchNorm", values, attrs)[0];
      }
    }
    autograd::Backward({y}, {dy}, false, /*train_mode=*/true);
    data_grads.push_back(autograd::GetGrad(values[0]));
    // dx = (dy - sum dy / n - (x - m) * s^2 * sum (x - m) dy / n) * s * gamma, with the moving
    // mean m and s = 1 / sqrt(moving_var + eps), n = 12 elements per channel.
    const std::vector<float> x = setup.data.ToFloatVector(), g = dy.ToFloatVector();
    const std::vector<float> dx = data_grads.back().ToFloatVector();
    const std::vector<float> gamma = setup.gamma.ToFloatVector();
    const std::vector<float> m = setup.moving_mean.ToFloatVector();
    const std::vector<float> v = setup.moving_var.ToFloatVector();
    for (size_t c = 0; c < 2; ++c) {
      const double s = 1 / std::sqrt(v[c] + 1e-3);
      double sum_dy = 0, dot = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        if ((i / 3) % 2 != c) continue;
        sum_dy += g[i];
        dot += (x[i] - m[c]) * g[i];
      }
      for (size_t i = 0; i < x.size(); ++i) {
        if ((i / 3) % 2 != c) continue;
        const double expected =
            (g[i] - sum_dy / 12 - (x[i] - m[c]) * s * s * dot / 12) * s * gamma[c];
        EXPECT_NEAR(dx[i], expected, 1e-5) << i;
      }
    }
    // The moving statistics are updated with themselves: they stay within rounding.
    const std::vector<float> mean_after = values[3].ToFloatVector();
    const std::vector<float> var_after = values[4].ToFloatVector();
    for (size_t c = 0; c < 2; ++c) {
      EXPECT_NEAR(mean_after[c], m[c], 1e-6) << c;
      EXPECT_NEAR(var_after[c], v[c], 1e-5) << c;
    }
  }
  EXPECT_EQ(BitDifference(data_grads[0], data_grads[1]), "") << "eager against hybridized";
}

// Dropout(p) of x in training mode, recorded, and the gradient for head gradient dy.
struct DropoutRun {
  NDArray y, dx;
};

DropoutRun DropoutWithGradient(NDArray x, const NDArray& dy, const AttrDict& attrs,
                               bool train_mode = true) {
  autograd::AttachGrad(&x);
  DropoutRun run;
  {
    auto recording = autograd::Record(train_mode);
    run.y = Invoke("Dropout", {x}, attrs)[0];
  }
  autograd::Backward({run.y}, {dy}, false, train_mode);
  run.dx = autograd::GetGrad(x);
  return run;
}

TEST_F(TrainingMode, DropoutScalesKeptElementsAndItsGradientReusesTheMask) {
  // Data with zeros, whose mask the output's value cannot show: a run on ones with the same
  // seed gives the mask (the mask depends on the seed and the shape only).
  std::vector<float> values(4000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = i % 3 == 0 ? 0.f : 0.5f + static_cast<float>(i % 7);
  const NDArray x = NDArray::FromVector({40, 100}, values);
  const NDArray dy = NDArray::RandomUniform({40, 100}, -1.f, 1.f);
  Seed(42);
  const DropoutRun run = DropoutWithGradient(x, dy, {{"p", "0.3"}});
  Seed(42);
  NDArray mask;
  {
    auto training = autograd::TrainMode();
    mask = Invoke("Dropout", {NDArray::Full({40, 100}, 1.0)}, {{"p", "0.3"}})[0];
  }
  const float scale = 1.f / (1.f - 0.3f);
  const std::vector<float> m = mask.ToFloatVector(), y = run.y.ToFloatVector();
  const std::vector<float> dx = run.dx.ToFloatVector(), g = dy.ToFloatVector();
  int64_t kept = 0;
  for (size_t i = 0; i < m.size(); ++i) {
    ASSERT_TRUE(m[i] == 0.f || m[i] == scale) << m[i];
    kept += m[i] != 0.f;
    EXPECT_EQ(y[i], values[i] * m[i]) << i;
    EXPECT_EQ(dx[i], g[i] * m[i]) << i;
  }
  EXPECT_NEAR(static_cast<double>(kept) / 4000.0, 0.7, 0.03);
}

TEST_F(TrainingMode, DropoutMasksFollowTheSeed) {
  const NDArray x = NDArray::Full({64, 64}, 1.0);
  auto draw = [&x]() {
    auto training = autograd::TrainMode();
    return Invoke("Dropout", {x}, {{"p", "0.5"}})[0];
  };
  Seed(7);
  const NDArray first = draw(), second = draw();
  EXPECT_NE(BitDifference(first, second), "") << "consecutive calls draw new masks";
  Seed(7);
  EXPECT_EQ(BitDifference(draw(), first), "") << "the same seed repeats the masks";
  EXPECT_EQ(BitDifference(draw(), second), "");
}

TEST_F(TrainingMode, DropoutVariationalMaskAndItsGradient) {
  const NDArray x = NDArray::RandomNormal({6, 5, 4});
  const NDArray dy = NDArray::Full({6, 5, 4}, 1.0);
  Seed(3);
  const DropoutRun run = DropoutWithGradient(x, dy, {{"p", "0.5"}, {"axes", "(1,)"}});
  const std::vector<float> dx = run.dx.ToFloatVector();
  // One mask value per (n, k), shared along axis 1.
  for (int n = 0; n < 6; ++n) {
    for (int k = 0; k < 4; ++k) {
      const float first = dx[static_cast<size_t>(n * 20 + k)];
      EXPECT_TRUE(first == 0.f || first == 2.f) << first;
      for (int j = 1; j < 5; ++j) EXPECT_EQ(dx[static_cast<size_t>(n * 20 + j * 4 + k)], first);
    }
  }
}

TEST_F(TrainingMode, DropoutInPredictModeIsTheIdentityAndSoIsItsGradient) {
  const NDArray x = NDArray::RandomNormal({3, 4});
  const NDArray dy = NDArray::RandomNormal({3, 4});
  const DropoutRun run = DropoutWithGradient(x, dy, {{"p", "0.5"}}, /*train_mode=*/false);
  EXPECT_EQ(BitDifference(run.y, x), "");
  EXPECT_EQ(BitDifference(run.dx, dy), "");
  // mode=always drops in predict mode too.
  Seed(1);
  const DropoutRun always =
      DropoutWithGradient(x, dy, {{"p", "0.5"}, {"mode", "always"}}, /*train_mode=*/false);
  const std::vector<float> y = always.y.ToFloatVector(), dx = always.dx.ToFloatVector();
  const std::vector<float> g = dy.ToFloatVector();
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(dx[i], y[i] == 0.f ? 0.f : g[i] * 2.f) << i;
}

TEST_F(TrainingMode, RreluDrawsASlopePerElementInTrainingAndItsGradientUsesIt) {
  std::vector<float> values(3000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = -0.5f - static_cast<float>(i % 11);
  NDArray x = NDArray::FromVector({3000}, values);
  const NDArray dy = NDArray::RandomUniform({3000}, -1.f, 1.f);
  const AttrDict attrs{{"act_type", "rrelu"}, {"lower_bound", "0.1"}, {"upper_bound", "0.3"}};
  autograd::AttachGrad(&x);
  Seed(5);
  NDArray y;
  {
    auto recording = autograd::Record();
    y = Invoke("LeakyReLU", {x}, attrs)[0];
  }
  autograd::Backward({y}, {dy});
  const std::vector<float> yv = y.ToFloatVector(), dx = autograd::GetGrad(x).ToFloatVector();
  const std::vector<float> g = dy.ToFloatVector();
  double sum = 0;
  for (size_t i = 0; i < yv.size(); ++i) {
    const float slope = yv[i] / values[i];
    ASSERT_GE(slope, 0.1f - 1e-6f);
    ASSERT_LT(slope, 0.3f + 1e-6f);
    sum += slope;
    EXPECT_EQ(dx[i], g[i] * slope) << i;
  }
  EXPECT_NEAR(sum / 3000, 0.2, 0.005);
  // The same seed repeats the slopes; inference uses their mean, (0.1 + 0.3) / 2.
  Seed(5);
  {
    auto training = autograd::TrainMode();
    EXPECT_EQ(BitDifference(Invoke("LeakyReLU", {x}, attrs)[0], y), "");
  }
  const std::vector<float> mean = Invoke("LeakyReLU", {x}, attrs)[0].ToFloatVector();
  for (size_t i = 0; i < mean.size(); ++i) EXPECT_EQ(mean[i], values[i] * ((0.1f + 0.3f) / 2.f));
}

}  // namespace
}  // namespace hybridnet
