// Conformance cases of the normalization ops in training mode, whose gradients are checked there
// too (the harness differentiates a Training case in training mode): BatchNorm's batch
// statistics over channel axes and fix_gamma, and _backward_BatchNorm and
// _backward_BatchNormWithReLU themselves, in inference and in training (where they read the
// statistics the forward saved, given as their inputs mean and var).
#include <random>
#include <string>
#include <vector>

#include "conformance.h"
#include "nn_reference.h"
#include "reference_helpers.h"

namespace hybridnet {
namespace conformance {
namespace {

// moving_var (input 4) positive, gamma (input 1) away from zero.
double BatchNormInputs(std::mt19937& rng, size_t input, int64_t) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (input == 4) return 0.1 + 1.9 * u(rng);
  if (input == 1) return 0.5 + u(rng);
  return -2.0 + 4.0 * u(rng);
}

OpCase TrainingBatchNorm(const char* op, AttrDict attrs, const Shape& data, BnSpec spec,
                         std::string note) {
  const int nd = static_cast<int>(data.ndim());
  const Shape channel{data[static_cast<size_t>(spec.axis < 0 ? nd + spec.axis : spec.axis)]};
  spec.batch_stats = true;
  return WithTol(
      Training(WithGen(Case(op, std::move(attrs), {data, channel, channel, channel, channel},
                            BatchNormRef(spec), std::move(note)),
                       BatchNormInputs)),
      1e-4, 1e-4);
}

// The backward ops' inputs (out_grad, data, gamma, moving_mean, moving_var, mean, var, [beta]):
// the saved mean drawn as a moving mean, the inverse standard deviation as a moving variance.
double BatchNormBackwardInputs(std::mt19937& rng, size_t input, int64_t index) {
  static constexpr size_t kForwardInput[] = {0, 0, 1, 3, 4, 3, 4, 2};
  return BatchNormInputs(rng, kForwardInput[input], index);
}

// MXNet's backward on the statistics it is given (mean m and inverse standard deviation s per
// channel, w = gamma or 1 with fix_gamma): dbeta = sum dy, dgamma = s * sum (x - m) dy,
// dx = (dy - sum dy / n - (x - m) * s^2 * sum (x - m) dy / n) * s * w. With the data's own
// statistics this is the derivative of the training forward. With b.relu, dy counts only where
// the forward's output (x - m) * s * w + beta (beta the last input) is positive.
RefFn BatchNormSavedStatsGradRef(BnSpec b) {
  return [b](const std::vector<RefTensor>& in) {
    const RefTensor &dy = in[0], &x = in[1], &gamma = in[2], &mean = in[5], &invstd = in[6];
    const size_t axis =
        static_cast<size_t>(b.axis < 0 ? b.axis + static_cast<int>(x.shape.ndim()) : b.axis);
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= x.shape[i];
    for (size_t i = axis + 1; i < x.shape.ndim(); ++i) inner *= x.shape[i];
    const int64_t C = x.shape[axis];
    const double n = static_cast<double>(outer * inner);
    RefTensor dx(x.shape), dgamma(gamma.shape), dbeta(gamma.shape);
    for (int64_t c = 0; c < C; ++c) {
      const double s = invstd[c], w = b.fix_gamma ? 1.0 : gamma[c];
      auto dy_at = [&](int64_t at) {
        return !b.relu || (x[at] - mean[c]) * s * w + in.back()[c] > 0 ? dy[at] : 0.0;
      };
      double sum_dy = 0, dot = 0;
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = (o * C + c) * inner + i;
          sum_dy += dy_at(at);
          dot += (x[at] - mean[c]) * dy_at(at);
        }
      }
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = (o * C + c) * inner + i;
          dx[at] = (dy_at(at) - sum_dy / n - (x[at] - mean[c]) * s * s * dot / n) * s * w;
        }
      }
      dgamma[c] = b.fix_gamma ? 0.0 : dot * s;
      dbeta[c] = sum_dy;
    }
    return std::vector<RefTensor>{dx, dgamma, dbeta};
  };
}

// The gradients of data, gamma and beta (_backward_BatchNormWithReLU's with spec.relu, which
// takes beta last): on batch statistics (spec.batch_stats, training mode)
// BatchNormSavedStatsGradRef's on the saved ones given, otherwise those of the forward's
// reference on the moving ones (beta's value matters with the relu only).
OpCase BatchNormBackward(AttrDict attrs, const Shape& data, BnSpec spec, std::string note) {
  const int nd = static_cast<int>(data.ndim());
  const Shape channel{data[static_cast<size_t>(spec.axis < 0 ? nd + spec.axis : spec.axis)]};
  std::vector<Shape> inputs{data, data, channel, channel, channel, channel, channel};
  if (spec.relu) inputs.push_back(channel);
  const bool relu = spec.relu;
  RefFn reference =
      spec.batch_stats
          ? BatchNormSavedStatsGradRef(spec)
          : VjpRef(BatchNormRef(spec),
                   [relu](const std::vector<RefTensor>& in) {
                     return std::vector<RefTensor>{
                         in[1], in[2], relu ? in.back() : RefTensor(in[2].shape), in[3], in[4]};
                   },
                   {0, 1, 2});
  const char* op = spec.relu ? "_backward_BatchNormWithReLU" : "_backward_BatchNorm";
  OpCase c = WithTol(
      WithGen(Case(op, std::move(attrs), std::move(inputs), std::move(reference), std::move(note)),
              BatchNormBackwardInputs),
      1e-4, 1e-5);
  c.check_json = false;
  return spec.batch_stats ? Training(c) : c;
}

}  // namespace

HN_CONFORMANCE_CASES(TrainingBatchNorm) {
  BnSpec fixed;  // fix_gamma: gamma is 1 and gets a zero gradient
  fixed.eps = 1e-5;
  cases->push_back(TrainingBatchNorm("BatchNorm", {{"eps", "1e-05"}}, {3, 2, 3, 2}, fixed,
                                     "training_fix_gamma"));
  BnSpec last;
  last.fix_gamma = false;
  last.axis = -1;
  cases->push_back(TrainingBatchNorm("BatchNorm", {{"fix_gamma", "False"}, {"axis", "-1"}},
                                     {2, 3, 4}, last, "training_axis_last"));
  BnSpec flat;
  flat.fix_gamma = false;
  flat.eps = 0.01;
  cases->push_back(TrainingBatchNorm("BatchNorm",
                                     {{"fix_gamma", "False"}, {"eps", "0.01"}, {"momentum", "0.5"}},
                                     {6, 4}, flat, "training_2d"));
  BnSpec relu;
  relu.fix_gamma = false;
  relu.relu = true;
  relu.axis = 2;
  relu.eps = 1e-5;
  cases->push_back(NotInMXNet(
      TrainingBatchNorm("_contrib_BatchNormWithReLU",
                        {{"fix_gamma", "False"}, {"axis", "2"}, {"eps", "1e-05"}}, {2, 3, 4, 2},
                        relu, "training_axis2"),
      "MXNet runs _contrib_BatchNormWithReLU only through MKLDNN, on 4-D data normalized along "
      "axis 1"));

  // The legacy forms train as BatchNorm does (SyncBatchNorm on one device).
  BnSpec legacy;
  legacy.fix_gamma = false;
  cases->push_back(
      NotInMXNet(TrainingBatchNorm("_contrib_SyncBatchNorm",
                                   {{"key", "bn0"}, {"ndev", "1"}, {"fix_gamma", "False"}},
                                   {3, 2, 2, 2}, legacy, "training"),
                 "MXNet's SyncBatchNorm trains through a barrier shared by its devices"));
  cases->push_back(TrainingBatchNorm("BatchNorm_v1", {{"fix_gamma", "False"}}, {4, 3, 2, 2}, legacy,
                                     "training"));

  BnSpec moving;
  moving.fix_gamma = false;
  cases->push_back(BatchNormBackward({{"fix_gamma", "False"}}, {2, 3, 2, 2}, moving, "moving"));
  BnSpec moving_fixed;
  moving_fixed.axis = -1;
  cases->push_back(
      BatchNormBackward({{"axis", "-1"}}, {3, 2, 4}, moving_fixed, "moving_fix_gamma_axis_last"));
  BnSpec batch;
  batch.fix_gamma = false;
  batch.eps = 1e-5;
  batch.batch_stats = true;
  cases->push_back(BatchNormBackward({{"fix_gamma", "False"}, {"eps", "1e-05"}}, {4, 3, 2}, batch,
                                     "batch_statistics"));
  BnSpec batch_last = batch;
  batch_last.fix_gamma = true;
  batch_last.axis = -1;
  cases->push_back(BatchNormBackward({{"eps", "1e-05"}, {"axis", "-1"}}, {3, 5, 4}, batch_last,
                                     "batch_statistics_fix_gamma_axis_last"));
  // _contrib_BatchNormWithReLU's gradient: on the saved batch statistics and on the moving ones.
  BnSpec batch_relu = batch;
  batch_relu.relu = true;
  cases->push_back(BatchNormBackward({{"fix_gamma", "False"}, {"eps", "1e-05"}}, {4, 3, 5},
                                     batch_relu, "batch_statistics"));
  BnSpec moving_relu = moving;
  moving_relu.relu = true;
  cases->push_back(
      BatchNormBackward({{"fix_gamma", "False"}}, {2, 3, 2, 2}, moving_relu, "moving"));
  BnSpec global = moving;
  cases->push_back(
      Training(BatchNormBackward({{"fix_gamma", "False"}, {"use_global_stats", "True"}}, {2, 3, 2},
                                 global, "use_global_stats")));

  // float64 (float64 models' training graphs): the forward on batch statistics, its backward on
  // them and on the moving ones.
  const std::vector<DType> f64(5, DType::kFloat64);
  const std::vector<DType> f64_backward(7, DType::kFloat64);
  BnSpec train64;
  train64.fix_gamma = false;
  train64.eps = 1e-5;
  cases->push_back(
      WithDTypes(TrainingBatchNorm("BatchNorm", {{"fix_gamma", "False"}, {"eps", "1e-05"}},
                                   {2, 3, 4, 2}, train64, "training_float64"),
                 f64));
  cases->push_back(WithDTypes(BatchNormBackward({{"fix_gamma", "False"}, {"eps", "1e-05"}},
                                                {4, 3, 2}, batch, "batch_statistics_float64"),
                              f64_backward));
  cases->push_back(WithDTypes(
      BatchNormBackward({{"fix_gamma", "False"}}, {2, 3, 2, 2}, moving, "moving_float64"),
      f64_backward));
}

}  // namespace conformance
}  // namespace hybridnet
