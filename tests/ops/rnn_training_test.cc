// RNN in training: the backward reads what its training forward kept (the same gradients as
// recomputing the forward), dropout between layers (the gradient of the masked forward, the
// masks the forward drew), and the error of a training backward with dropout that has no forward.
// And the language model's loss: log_softmax and its backward over lines split between threads
// give the bits of one thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "conformance.h"
#include "hybridnet/autograd.h"
#include "hybridnet/imperative.h"

namespace hybridnet {
namespace conformance {
namespace {

constexpr int64_t kT = 4, kN = 3, kI = 2, kH = 3, kLayers = 2;

AttrDict TanhAttrs(double p) {
  return {{"mode", "rnn_tanh"},
          {"state_size", std::to_string(kH)},
          {"num_layers", std::to_string(kLayers)},
          {"p", std::to_string(p)}};
}

// data, parameters, state of a 2-layer rnn_tanh, float64, uniform in [-1, 1).
std::vector<NDArray> TanhInputs() {
  const int64_t params = (kH * (kI + kH) + 2 * kH) + (kH * (kH + kH) + 2 * kH);
  Seed(5);
  return {NDArray::RandomUniform({kT, kN, kI}, -1.f, 1.f).AsType(DType::kFloat64),
          NDArray::RandomUniform({params}, -1.f, 1.f).AsType(DType::kFloat64),
          NDArray::RandomUniform({kLayers, kN, kH}, -1.f, 1.f).AsType(DType::kFloat64)};
}

// sum(head * RNN(inputs)) in training mode, the generator seeded with `seed` first.
double Objective(const NodeAttrs& attrs, const std::vector<NDArray>& inputs, const NDArray& head,
                 uint64_t seed) {
  auto train = autograd::TrainMode();
  Seed(seed);
  const NDArray y = Invoke(attrs, inputs)[0];
  double sum = 0;
  for (int64_t i = 0; i < y.size(); ++i) sum += y.data<double>()[i] * head.data<double>()[i];
  return sum;
}

// Autograd's training gradients of sum(head * RNN(inputs)), the generator seeded with `seed`
// before the forward.
std::vector<NDArray> TrainingGradients(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                                       const NDArray& head, uint64_t seed) {
  Seed(seed);
  return EagerGradients(attrs, inputs, {true, true, true}, {head}, /*train=*/true);
}

double MaxDifference(const NDArray& a, const NDArray& b) {
  double most = 0;
  for (int64_t i = 0; i < a.size(); ++i)
    most = std::max(most, std::fabs(a.data<double>()[i] - b.data<double>()[i]));
  return most;
}

// With dropout the training gradient is that of the forward with the masks it drew: central
// differences of forwards seeded alike (so drawing the same masks) agree with it, and it differs
// from the inference gradient.
TEST(RNNTraining, DropoutGradientIsThatOfTheMaskedForward) {
  const NodeAttrs attrs = MakeNodeAttrs("RNN", "rnn", TanhAttrs(0.5));
  std::vector<NDArray> inputs = TanhInputs();
  const NDArray head = NDArray::RandomUniform({kT, kN, kH}, -1.f, 1.f).AsType(DType::kFloat64);
  constexpr uint64_t kSeed = 17;
  const std::vector<NDArray> grads = TrainingGradients(attrs, inputs, head, kSeed);
  ASSERT_EQ(grads.size(), 3u);
  for (size_t i = 0; i < inputs.size(); ++i) {
    double* x = inputs[i].data<double>();
    for (int64_t j = 0; j < inputs[i].size(); ++j) {
      const double at = x[j], step = 1e-6;
      x[j] = at + step;
      const double up = Objective(attrs, inputs, head, kSeed);
      x[j] = at - step;
      const double down = Objective(attrs, inputs, head, kSeed);
      x[j] = at;
      EXPECT_NEAR(grads[i].data<double>()[j], (up - down) / (2 * step), 1e-7)
          << "input " << i << " element " << j;
    }
  }
  const std::vector<NDArray> inference =
      EagerGradients(attrs, inputs, {true, true, true}, {head}, /*train=*/false);
  EXPECT_GT(MaxDifference(grads[0], inference[0]), 1e-3) << "the masks changed nothing";
}

// RNN's inputs for `attrs` on data (t, n, i), float64 uniform in [-1, 1), their shapes from the
// op's own inference; sequence lengths (int32) in [1, t].
std::vector<NDArray> InputsFor(const NodeAttrs& attrs, int64_t t, int64_t n, int64_t i) {
  const Op& op = *attrs.op;
  std::vector<Shape> in(op.NumInputs(attrs)), out(op.NumOutputs(attrs));
  in[0] = Shape{t, n, i};
  op.infer_shape(attrs, &in, &out);
  std::vector<NDArray> inputs;
  for (const Shape& s : in)
    inputs.push_back(NDArray::RandomUniform(s, -1.f, 1.f).AsType(DType::kFloat64));
  if (attrs.dict.count("use_sequence_length")) {
    std::vector<float> lengths;
    for (int64_t b = 0; b < n; ++b) lengths.push_back(static_cast<float>(1 + b % t));
    inputs.back() = NDArray::FromVector(in.back(), lengths).AsType(DType::kInt32);
  }
  return inputs;
}

// Without dropout a training backward reads the kept forward; its gradients are those of
// _backward_RNN called by itself, which runs the forward again: every mode, layers, directions,
// state outputs and sequence lengths.
TEST(RNNTraining, KeptForwardGivesTheRecomputedGradients) {
  const std::vector<AttrDict> configs = {
      {{"mode", "rnn_tanh"}, {"state_size", "3"}, {"num_layers", "2"}},
      {{"mode", "lstm"},
       {"state_size", "3"},
       {"num_layers", "2"},
       {"bidirectional", "True"},
       {"state_outputs", "True"}},
      {{"mode", "gru"}, {"state_size", "2"}, {"num_layers", "2"}, {"bidirectional", "True"}},
      {{"mode", "rnn_relu"}, {"state_size", "3"}, {"num_layers", "1"}, {"state_outputs", "True"}},
      {{"mode", "lstm"},
       {"state_size", "2"},
       {"num_layers", "2"},
       {"state_outputs", "True"},
       {"use_sequence_length", "True"}},
  };
  Seed(3);
  for (const AttrDict& config : configs) {
    const NodeAttrs attrs = MakeNodeAttrs("RNN", "rnn", config);
    SCOPED_TRACE(config.at("mode") + " with " + std::to_string(config.size()) + " attributes");
    const std::vector<NDArray> inputs = InputsFor(attrs, 4, 3, 2);
    // Heads shaped by an inference forward, which keeps nothing: the _backward_RNN below finds no
    // kept forward and recomputes; the recorded training forward after it is kept and read.
    std::vector<NDArray> heads;
    for (const NDArray& y : Invoke(attrs, inputs))
      heads.push_back(NDArray::RandomUniform(y.shape(), -1.f, 1.f).AsType(DType::kFloat64));
    std::vector<NDArray> backward_inputs = heads;
    backward_inputs.insert(backward_inputs.end(), inputs.begin(), inputs.end());
    std::vector<NDArray> recomputed;
    {
      auto train = autograd::TrainMode();
      recomputed = Invoke("_backward_RNN", backward_inputs, config);
    }
    std::vector<bool> differentiable;
    for (const NDArray& x : inputs) differentiable.push_back(x.dtype() == DType::kFloat64);
    const std::vector<NDArray> kept =
        EagerGradients(attrs, inputs, differentiable, heads, /*train=*/true);
    for (size_t i = 0; i < recomputed.size(); ++i)
      EXPECT_EQ(testing_util::BitDifference(kept[i], recomputed[i]), "") << "input " << i;
  }
}

TEST(RNNTraining, DropoutBackwardWithoutItsForwardIsAnError) {
  const std::vector<NDArray> inputs = TanhInputs();
  const NDArray head = NDArray::Zeros({kT, kN, kH}, DType::kFloat64);
  auto train = autograd::TrainMode();
  try {
    Invoke("_backward_RNN", {head, inputs[0], inputs[1], inputs[2]}, TanhAttrs(0.5));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("masks its training forward drew"), std::string::npos)
        << e.what();
  }
}

// Two training forwards with dropout on the same inputs draw different masks; their backward
// cannot tell the kept traces apart and says so instead of using the wrong masks.
TEST(RNNTraining, TwoDropoutForwardsOnTheSameInputsAreAnError) {
  const std::vector<NDArray> inputs = TanhInputs();
  const NDArray head = NDArray::Zeros({kT, kN, kH}, DType::kFloat64);
  auto train = autograd::TrainMode();
  Invoke("RNN", inputs, TanhAttrs(0.5));
  Invoke("RNN", inputs, TanhAttrs(0.5));
  try {
    Invoke("_backward_RNN", {head, inputs[0], inputs[1], inputs[2]}, TanhAttrs(0.5));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("cannot be told apart"), std::string::npos) << e.what();
  }
  auto predict = autograd::PredictMode();  // an inference forward forgets the two kept traces
  Invoke("RNN", inputs, TanhAttrs(0.5));
}

TEST(LogSoftmaxLines, TheSameBitsAtAnyThreadCount) {
  // As the LSTM language model's loss: 700 lines of a 10000-word vocabulary.
  const NDArray x = NDArray::RandomUniform({700, 10000}, -8.f, 8.f);
  const NDArray dy = NDArray::RandomUniform({700, 10000}, -1.f, 1.f);
  const int before = GetNumThreads();
  std::vector<NDArray> y, dx;
  for (int threads : {1, 2}) {
    SetNumThreads(threads);
    y.push_back(Invoke("log_softmax", {x}, {{"axis", "-1"}})[0]);
    dx.push_back(Invoke("_backward_log_softmax", {dy, y.back()}, {{"axis", "-1"}})[0]);
  }
  SetNumThreads(before);
  EXPECT_EQ(testing_util::BitDifference(y[0], y[1]), "");
  EXPECT_EQ(testing_util::BitDifference(dx[0], dx[1]), "");
}

}  // namespace
}  // namespace conformance
}  // namespace hybridnet
