// Conformance cases of the normalization ops in training mode, whose gradients are checked there
// too (the harness differentiates a Training case in training mode): BatchNorm's batch
// statistics over channel axes and fix_gamma, and _backward_BatchNorm itself, in inference and
// in training (where it recomputes the batch statistics).
#include <random>
#include <string>

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

// _backward_BatchNorm's inputs (out_grad, data, gamma, moving_mean, moving_var).
double BatchNormBackwardInputs(std::mt19937& rng, size_t input, int64_t index) {
  static constexpr size_t kForwardInput[] = {0, 0, 1, 3, 4};
  return BatchNormInputs(rng, kForwardInput[input], index);
}

// The gradients of data, gamma and beta: those of the forward's reference (beta's value does not
// matter).
OpCase BatchNormBackward(AttrDict attrs, const Shape& data, BnSpec spec, std::string note) {
  const int nd = static_cast<int>(data.ndim());
  const Shape channel{data[static_cast<size_t>(spec.axis < 0 ? nd + spec.axis : spec.axis)]};
  OpCase c = WithTol(
      WithGen(Case("_backward_BatchNorm", std::move(attrs), {data, data, channel, channel, channel},
                   VjpRef(BatchNormRef(spec),
                          [](const std::vector<RefTensor>& in) {
                            return std::vector<RefTensor>{in[1], in[2], RefTensor(in[2].shape),
                                                          in[3], in[4]};
                          },
                          {0, 1, 2}),
                   std::move(note)),
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
  BnSpec global = moving;
  cases->push_back(
      Training(BatchNormBackward({{"fix_gamma", "False"}, {"use_global_stats", "True"}}, {2, 3, 2},
                                 global, "use_global_stats")));

  // float64 (float64 models' training graphs): the forward on batch statistics, its backward on
  // them and on the moving ones.
  const std::vector<DType> f64(5, DType::kFloat64);
  BnSpec train64;
  train64.fix_gamma = false;
  train64.eps = 1e-5;
  cases->push_back(
      WithDTypes(TrainingBatchNorm("BatchNorm", {{"fix_gamma", "False"}, {"eps", "1e-05"}},
                                   {2, 3, 4, 2}, train64, "training_float64"),
                 f64));
  cases->push_back(WithDTypes(BatchNormBackward({{"fix_gamma", "False"}, {"eps", "1e-05"}},
                                                {4, 3, 2}, batch, "batch_statistics_float64"),
                              f64));
  cases->push_back(WithDTypes(
      BatchNormBackward({{"fix_gamma", "False"}}, {2, 3, 2, 2}, moving, "moving_float64"), f64));
}

}  // namespace conformance
}  // namespace hybridnet
