// Hybridized training (imperative/cached_op.h): a hybridized block under autograd recording runs
// one planned forward+backward graph, recorded as one tape node, with the gradients of eager
// backward bit for bit; and second-order gradients (autograd::Grad with create_graph).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/autograd.h"
#include "hybridnet/gluon/block.h"
#include "hybridnet/gluon/conv_layers.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/operators.h"

namespace hybridnet {
namespace {

using autograd::GradReq;
using gluon::Dense;
using gluon::HybridBlock;
using gluon::HybridSequential;
using gluon::ParameterPtr;
using testing_util::BitDifference;
using testing_util::ErrorOf;

class HybridTraining : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_FALSE(autograd::IsRecording());
    EXPECT_FALSE(autograd::IsTraining());
  }
};

std::shared_ptr<HybridSequential> Mlp() {
  auto net = std::make_shared<HybridSequential>();
  net->Add(std::make_shared<Dense>(16, "relu"), std::make_shared<Dense>(12, "tanh"),
           std::make_shared<Dense>(12, "sigmoid"), std::make_shared<Dense>(4));
  return net;
}

// A conv-free net where values are read several times (gradients summed by add_n) and flow
// through elementwise, broadcast and reduction ops.
class Mixer : public HybridBlock {
 public:
  Mixer() : HybridBlock("mixer") {
    fc1_ = RegisterChild(std::make_shared<Dense>(6, "softrelu"), "fc1");
    fc2_ = RegisterChild(std::make_shared<Dense>(6), "fc2");
  }
  NDArray HybridForward(const F&, const NDArray& x) override {
    NDArray h = (*fc1_)(x);
    NDArray g = op::tanh((*fc2_)(h));
    NDArray mixed = h * g + op::Call("exp", {g * 0.5f}) - h;
    NDArray scale = op::Call("sum", {mixed}, {{"axis", "1"}, {"keepdims", "true"}});
    NDArray positive = op::Call("_plus_scalar", {op::Call("abs", {scale})}, {{"scalar", "1"}});
    return op::Call("broadcast_div", {mixed, positive});
  }

 private:
  std::shared_ptr<Dense> fc1_, fc2_;
};

struct Gradients {
  std::vector<NDArray> params;
  NDArray x;
  NDArray y;
};

// Runs `steps` recorded forward+backward steps of `net` and returns the gradient buffers.
Gradients Train(gluon::Block* net, const std::vector<ParameterPtr>& params, const NDArray& input,
                const NDArray& head_grad, GradReq req, int steps = 1) {
  NDArray x = input.Copy();
  autograd::AttachGrad(&x, req);
  for (const auto& p : params) p->AttachGrad(req);
  Gradients out;
  for (int i = 0; i < steps; ++i) {
    {
      auto recording = autograd::Record();
      out.y = (*net)(x);
    }
    autograd::Backward({out.y}, {head_grad});
  }
  for (const auto& p : params) out.params.push_back(p->Grad().Copy());
  out.x = autograd::GetGrad(x).Copy();
  return out;
}

std::vector<ParameterPtr> ParamsOf(gluon::Block* net) { return net->CollectParams().list(); }

void ExpectHybridEqualsEager(HybridBlock* net, const Shape& input_shape, GradReq req, int steps,
                             const gluon::HybridizeOptions& options = {},
                             DType dtype = DType::kFloat32) {
  net->Initialize();
  const NDArray x32 = NDArray::RandomUniform(input_shape, -1.f, 1.f);
  (*net)(x32);  // completes the deferred shapes
  net->Cast(dtype);
  const NDArray x = x32.AsType(dtype);
  std::vector<ParameterPtr> params = ParamsOf(net);
  NDArray y0 = (*net)(x);
  NDArray head = NDArray::RandomUniform(y0.shape(), -1.f, 1.f).AsType(dtype);
  net->Hybridize(false);
  Gradients eager = Train(net, params, x, head, req, steps);
  net->Hybridize(true, options);
  Gradients hybrid = Train(net, params, x, head, req, steps);
  EXPECT_EQ(net->CachedTrainingStats().num_gradient_graphs, 1u);
  EXPECT_EQ(BitDifference(hybrid.y, eager.y), "");
  EXPECT_EQ(BitDifference(hybrid.x, eager.x), "");
  double sum = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(BitDifference(hybrid.params[i], eager.params[i]), "") << params[i]->name();
    for (float v : eager.params[i].ToFloatVector()) sum += std::fabs(v);
  }
  EXPECT_GT(sum, 0.0);
}

TEST_F(HybridTraining, MlpGradientsEqualEagerBitForBit) {
  auto net = Mlp();
  ExpectHybridEqualsEager(net.get(), {8, 10}, GradReq::kWrite, 1);
}

TEST_F(HybridTraining, MlpAddGradientsEqualEagerBitForBit) {
  auto net = Mlp();
  ExpectHybridEqualsEager(net.get(), {8, 10}, GradReq::kAdd, 3);
}

// In float64 too: the training graph fuses each Dense's product and activation there as well.
TEST_F(HybridTraining, Float64MlpGradientsEqualEagerBitForBit) {
  auto net = Mlp();
  ExpectHybridEqualsEager(net.get(), {8, 10}, GradReq::kWrite, 1, {}, DType::kFloat64);
}

TEST_F(HybridTraining, StaticAllocGradientsEqualEagerBitForBit) {
  auto net = Mlp();
  gluon::HybridizeOptions options;
  options.static_alloc = true;
  options.static_shape = true;
  ExpectHybridEqualsEager(net.get(), {8, 10}, GradReq::kAdd, 2, options);
}

TEST_F(HybridTraining, MixerGradientsEqualEagerBitForBit) {
  Mixer net;
  ExpectHybridEqualsEager(&net, {5, 7}, GradReq::kWrite, 1);
}

TEST_F(HybridTraining, MixerAddGradientsEqualEagerBitForBit) {
  Mixer net;
  ExpectHybridEqualsEager(&net, {5, 7}, GradReq::kAdd, 2);
}

// Initializes and hybridizes `net`, then runs a recorded forward and a backward on each input in
// turn; returns the cached training statistics.
gluon::TrainingStats TrainOnEach(HybridBlock* net, const std::vector<NDArray>& inputs) {
  net->Initialize();
  net->Hybridize();
  (*net)(inputs.front());
  for (const auto& p : ParamsOf(net)) p->AttachGrad();
  for (const NDArray& x : inputs) {
    NDArray y;
    {
      auto recording = autograd::Record();
      y = (*net)(x);
    }
    autograd::Backward({y});
  }
  return net->CachedTrainingStats();
}

// The forward+backward graph is built once; each executor plans once per input shape.
TEST_F(HybridTraining, BackwardGraphIsBuiltOncePerShape) {
  auto net = Mlp();
  NDArray x8 = NDArray::RandomUniform({8, 10}), x3 = NDArray::RandomUniform({3, 10});
  const gluon::TrainingStats s = TrainOnEach(net.get(), {x8, x8, x8, x3, x3, x8});
  EXPECT_EQ(s.num_gradient_graphs, 1u);
  EXPECT_EQ(s.num_forward_plans, 2u);
  EXPECT_EQ(s.num_backward_plans, 2u);
}

// Without convolutions the training graph does not depend on the inputs' shapes: sequences of
// three lengths share one gradient graph (a plan per shape).
TEST_F(HybridTraining, GraphWithoutConvolutionsIsBuiltOnceForAllShapes) {
  auto net = std::make_shared<Dense>(gluon::DenseOptions().set_units(4).set_flatten(false));
  NDArray x3 = NDArray::RandomUniform({2, 3, 5}), x7 = NDArray::RandomUniform({2, 7, 5}),
          x9 = NDArray::RandomUniform({2, 9, 5});
  const gluon::TrainingStats s = TrainOnEach(net.get(), {x3, x7, x9, x3});
  EXPECT_EQ(s.num_gradient_graphs, 1u);
  EXPECT_EQ(s.num_forward_plans, 3u);
  EXPECT_EQ(s.num_backward_plans, 3u);
}

// grad_req null parameters get no gradient (their buffers stay zero), the others as eager.
TEST_F(HybridTraining, NullGradReqParametersGetNoGradient) {
  auto net = Mlp();
  net->Initialize();
  NDArray x = NDArray::RandomUniform({4, 10}, -1.f, 1.f);
  (*net)(x);
  std::vector<ParameterPtr> params = ParamsOf(net.get());
  std::vector<NDArray> eager;
  for (bool hybridized : {false, true}) {
    net->Hybridize(hybridized);
    for (size_t i = 0; i < params.size(); ++i)
      params[i]->AttachGrad(i % 2 == 0 ? GradReq::kNull : GradReq::kWrite);
    NDArray y;
    {
      auto recording = autograd::Record();
      y = (*net)(x);
    }
    autograd::Backward({y});
    for (size_t i = 0; i < params.size(); ++i) {
      // grad_req null: the buffer AttachGrad made stays zero (Grad() refuses, as MXNet's grad()).
      NDArray g = i % 2 == 0 ? autograd::GetGrad(params[i]->data()) : params[i]->Grad();
      if (i % 2 == 0) {
        for (float v : g.ToFloatVector()) ASSERT_EQ(v, 0.f) << params[i]->name();
      } else if (!hybridized) {
        eager.push_back(g.Copy());
      } else {
        EXPECT_EQ(BitDifference(g, eager[i / 2]), "") << params[i]->name();
      }
    }
  }
}

// The hybridized call is one node of the tape: a second backward without retain_graph fails
// as for eager ops, and with it gives the same gradient again.
TEST_F(HybridTraining, RetainGraphAsEager) {
  auto net = Mlp();
  net->Initialize();
  net->Hybridize();
  NDArray x = NDArray::RandomUniform({2, 10});
  autograd::AttachGrad(&x);
  NDArray y;
  {
    auto recording = autograd::Record();
    y = (*net)(x);
  }
  autograd::Backward({y}, {}, /*retain_graph=*/true);
  NDArray first = autograd::GetGrad(x).Copy();
  autograd::Backward({y});
  EXPECT_EQ(BitDifference(autograd::GetGrad(x), first), "");
  EXPECT_EQ(ErrorOf([&] { autograd::Backward({y}); }).code(), StatusCode::kInvalidArgument);
}

// is_train reaches the ops of the planned graph: Dropout drops under record() and passes data
// through under record(train_mode=false).
TEST_F(HybridTraining, DropoutTrainsInTheGraph) {
  gluon::Dropout dropout(0.5f);
  dropout.Initialize();
  dropout.Hybridize();
  NDArray x = NDArray::Ones({4096});
  autograd::AttachGrad(&x);
  NDArray y;
  {
    auto recording = autograd::Record();
    y = dropout(x);
  }
  int64_t zeros = 0;
  for (float v : y.ToFloatVector()) zeros += v == 0.f;
  EXPECT_GT(zeros, 1500);
  {
    auto recording = autograd::Record(/*train_mode=*/false);
    y = dropout(x);
  }
  EXPECT_EQ(BitDifference(y, x), "");
}

// Hybridized blocks among eager ops: a block called twice on the same input, its output read
// twice, another block after an eager op. Each call is one tape node; the gradients are eager's.
TEST_F(HybridTraining, BlocksAmongEagerOpsGiveEagerGradients) {
  auto a = Mlp();
  auto b = std::make_shared<Dense>(4, "tanh");
  a->Initialize();
  b->Initialize();
  NDArray x0 = NDArray::RandomUniform({3, 10}, -1.f, 1.f);
  (*b)((*a)(x0));
  std::vector<ParameterPtr> params = ParamsOf(a.get());
  for (const auto& p : ParamsOf(b.get())) params.push_back(p);
  std::vector<std::vector<NDArray>> grads;
  for (bool hybridized : {false, true}) {
    a->Hybridize(hybridized);
    b->Hybridize(hybridized);
    NDArray x = x0.Copy();
    autograd::AttachGrad(&x);
    for (const auto& p : params) p->AttachGrad();
    NDArray y;
    {
      auto recording = autograd::Record();
      NDArray h = (*a)(x);
      NDArray g = (*a)(x * 0.5f);
      y = (*b)(op::tanh(h) * g + h);
    }
    autograd::Backward({y});
    std::vector<NDArray> got{autograd::GetGrad(x).Copy()};
    for (const auto& p : params) got.push_back(p->Grad().Copy());
    grads.push_back(std::move(got));
  }
  EXPECT_EQ(a->CachedTrainingStats().num_gradient_graphs, 1u);
  for (size_t i = 0; i < grads[0].size(); ++i)
    EXPECT_EQ(BitDifference(grads[1][i], grads[0][i]), "") << i;
}

// A dense layer and the cross-entropy with dense labels, -sum(log_softmax(out, -1) * label, -1),
// which the training graph computes as one _hn_log_softmax_label_sum: its loss and gradients are
// eager's bit for bit, the label's too when it needs one.
class DenseCrossEntropy : public HybridBlock {
 public:
  DenseCrossEntropy() : HybridBlock("densecrossentropy") {
    fc_ = RegisterChild(std::make_shared<Dense>(kClasses), "fc");
  }
  std::vector<NDArray> ForwardMany(const std::vector<NDArray>& inputs) override {
    NDArray log_probs = op::log_softmax(
        op::Call("reshape", {(*fc_)(inputs[0])}, {{"shape", "(2, -1, " + kClassText + ")"}}), -1);
    return {op::Call("sum", {log_probs * inputs[1]}, {{"axis", "-1"}}) * -1.f};
  }
  static constexpr int kClasses = 300;  // lines of 300: LineSum's lanes and a tail of 12
  inline static const std::string kClassText = std::to_string(kClasses);

 private:
  std::shared_ptr<Dense> fc_;
};

TEST_F(HybridTraining, DenseLabelCrossEntropyEqualsEagerBitForBit) {
  DenseCrossEntropy net;
  net.Initialize();
  const NDArray x0 = NDArray::RandomUniform({60, 7}, -1.f, 1.f);
  const NDArray label0 = NDArray::RandomUniform({2, 30, DenseCrossEntropy::kClasses}, 0.f, 1.f);
  (net)({x0, label0});  // completes the deferred shapes
  const std::vector<ParameterPtr> params = ParamsOf(&net);
  for (bool label_grad : {false, true}) {
    std::vector<std::vector<NDArray>> runs;
    for (bool hybridized : {false, true}) {
      net.Hybridize(hybridized);
      NDArray x = x0.Copy(), label = label0.Copy();
      autograd::AttachGrad(&x);
      if (label_grad) autograd::AttachGrad(&label);
      for (const auto& p : params) p->AttachGrad();
      NDArray loss;
      {
        auto recording = autograd::Record();
        loss = net({x, label})[0];
      }
      autograd::Backward({loss});
      std::vector<NDArray> got{loss.Copy(), autograd::GetGrad(x).Copy()};
      if (label_grad) got.push_back(autograd::GetGrad(label).Copy());
      for (const auto& p : params) got.push_back(p->Grad().Copy());
      runs.push_back(std::move(got));
    }
    for (size_t i = 0; i < runs[0].size(); ++i)
      EXPECT_EQ(BitDifference(runs[1][i], runs[0][i]), "")
          << "label_grad " << label_grad << " " << i;
    EXPECT_GT(std::fabs(runs[0][0].ToFloatVector()[0]), 0.f);
  }
}

// Two outputs, only one of them differentiated: the other's gradient is zero (zeros_like of the
// kept output), as eagerly.
class TwoHeads : public HybridBlock {
 public:
  TwoHeads() : HybridBlock("twoheads") { fc_ = RegisterChild(std::make_shared<Dense>(4), "fc"); }
  std::vector<NDArray> ForwardMany(const std::vector<NDArray>& inputs) override {
    NDArray h = (*fc_)(inputs[0]);
    return {op::tanh(h), op::sigmoid(h) * inputs[1]};
  }

 private:
  std::shared_ptr<Dense> fc_;
};

TEST_F(HybridTraining, UnusedOutputsGetZeroGradients) {
  TwoHeads net;
  net.Initialize();
  NDArray x0 = NDArray::RandomUniform({3, 5}, -1.f, 1.f), z = NDArray::RandomUniform({3, 4});
  net(std::vector<NDArray>{x0, z});
  std::vector<ParameterPtr> params = ParamsOf(&net);
  std::vector<std::vector<NDArray>> grads;
  for (bool hybridized : {false, true}) {
    net.Hybridize(hybridized);
    NDArray x = x0.Copy();
    autograd::AttachGrad(&x);
    for (const auto& p : params) p->AttachGrad();
    std::vector<NDArray> y;
    {
      auto recording = autograd::Record();
      y = net(std::vector<NDArray>{x, z});
    }
    autograd::Backward({y[1]});
    std::vector<NDArray> got{autograd::GetGrad(x).Copy()};
    for (const auto& p : params) got.push_back(p->Grad().Copy());
    grads.push_back(std::move(got));
  }
  for (size_t i = 0; i < grads[0].size(); ++i)
    EXPECT_EQ(BitDifference(grads[1][i], grads[0][i]), "") << i;
}

// BatchNorm in the planned graph under record(): batch statistics, the gradients, and the
// running statistics (updated by each backward in training mode, as MXNet does) as eagerly, bit
// for bit.
TEST_F(HybridTraining, BatchNormTrainsInTheGraph) {
  NDArray x = NDArray::RandomUniform({4, 3, 2, 2}, -1.f, 2.f);
  autograd::AttachGrad(&x);
  NDArray head = NDArray::RandomUniform({4, 3, 2, 2}, -1.f, 1.f);
  std::vector<std::vector<NDArray>> results;
  for (bool hybridized : {false, true}) {
    gluon::BatchNorm bn;
    bn.Initialize();
    bn.Hybridize(hybridized);
    bn(x);  // completes the deferred shapes (inference: the running statistics stay)
    bn.gamma()->AttachGrad();
    bn.beta()->AttachGrad();
    const std::vector<float> initial_mean = bn.running_mean()->data().ToFloatVector();
    NDArray y;
    for (int step = 0; step < 2; ++step) {
      {
        auto recording = autograd::Record();
        y = bn(x);
      }
      autograd::Backward({y}, {head});
    }
    EXPECT_NE(bn.running_mean()->data().ToFloatVector(), initial_mean)
        << "backward in training mode updates the running mean";
    results.push_back({y, bn.running_mean()->data().Copy(), bn.running_var()->data().Copy(),
                       autograd::GetGrad(x).Copy(), bn.gamma()->Grad().Copy(),
                       bn.beta()->Grad().Copy()});
  }
  for (size_t i = 0; i < results[0].size(); ++i)
    EXPECT_EQ(BitDifference(results[1][i], results[0][i]), "") << i;
  // Batch statistics: each channel of the output has mean 0.
  std::vector<float> y = results[1][0].ToFloatVector();
  double channel0 = 0;
  for (int n = 0; n < 4; ++n)
    for (int k = 0; k < 4; ++k) channel0 += y[n * 12 + k];
  EXPECT_NEAR(channel0, 0.0, 1e-4);
}

// A convolutional net trained step by step with its weights rewritten between steps, as an
// optimizer does: the hybridized graphs keep the convolutions' re-laid-out weights (derived from
// the weight arrays they take as inputs) only while the weights are unwritten, and each step's
// forward writes into the activations the previous step's backward released; every step's
// output and gradients are eager's bit for bit.
TEST_F(HybridTraining, ConvNetStepsWithWeightUpdatesEqualEagerBitForBit) {
  auto net = std::make_shared<HybridSequential>();
  net->Add(std::make_shared<gluon::Conv2D>(
               gluon::ConvOptions().set_channels(16).set_kernel_size(3).set_padding(1)),
           std::make_shared<gluon::BatchNorm>(), std::make_shared<gluon::Activation>("relu"),
           std::make_shared<gluon::Conv2D>(
               gluon::ConvOptions().set_channels(16).set_kernel_size(3).set_strides(2)),
           std::make_shared<gluon::Activation>("relu"), std::make_shared<Dense>(5));
  net->Initialize();
  const NDArray x = NDArray::RandomUniform({4, 3, 9, 9}, -1.f, 1.f);
  const NDArray head = NDArray::RandomUniform({4, 5}, -1.f, 1.f);
  (*net)(x);  // completes the deferred shapes
  std::vector<ParameterPtr> params;
  std::vector<NDArray> initial;
  for (const ParameterPtr& p : ParamsOf(net.get())) {
    if (!p->differentiable()) continue;  // BatchNorm's running statistics
    params.push_back(p);
    initial.push_back(p->data().Copy());
  }
  std::vector<std::vector<NDArray>> runs;  // per mode: each step's output and gradients
  for (const bool hybridized : {false, true}) {
    net->Hybridize(hybridized, {/*static_alloc=*/true, /*static_shape=*/true});
    for (size_t i = 0; i < params.size(); ++i) {
      params[i]->SetData(initial[i].Copy());
      params[i]->AttachGrad();
    }
    std::vector<NDArray> results;
    for (int step = 0; step < 3; ++step) {
      NDArray y;
      {
        auto recording = autograd::Record();
        y = (*net)(x);
      }
      autograd::Backward({y}, {head});
      results.push_back(y);
      for (const ParameterPtr& p : params) {
        results.push_back(p->Grad().Copy());
        // The update: w -= 0.1 * grad, written in place.
        NDArray w = p->data();
        std::vector<float> g = p->Grad().ToFloatVector();
        float* values = w.data<float>();
        for (size_t k = 0; k < g.size(); ++k) values[k] -= 0.1f * g[k];
      }
    }
    runs.push_back(std::move(results));
  }
  EXPECT_EQ(net->CachedTrainingStats().num_gradient_graphs, 1u);
  ASSERT_EQ(runs[0].size(), runs[1].size());
  for (size_t i = 0; i < runs[0].size(); ++i)
    EXPECT_EQ(BitDifference(runs[1][i], runs[0][i]), "") << "result " << i;
  // The updates changed the output: later steps did not run on stale weights in both modes.
  EXPECT_NE(BitDifference(runs[1][0], runs[1][params.size() + 1]), "");
}

// A CIFAR ResNet basic block with a downsampling shortcut, then global pooling and a classifier:
// the training graph of a convolutional net is laid out channel-last (cached_op.h).
class ResidualNet : public HybridBlock {
 public:
  ResidualNet() : HybridBlock("residual") {
    auto conv = [](int64_t kernel, int64_t stride, int64_t pad) {
      return std::make_shared<gluon::Conv2D>(gluon::ConvOptions()
                                                 .set_channels(20)
                                                 .set_kernel_size(kernel)
                                                 .set_strides(stride)
                                                 .set_padding(pad)
                                                 .set_use_bias(false));
    };
    conv1_ = RegisterChild(conv(3, 2, 1), "conv1");
    bn1_ = RegisterChild(std::make_shared<gluon::BatchNorm>(), "bn1");
    conv2_ = RegisterChild(conv(3, 1, 1), "conv2");
    bn2_ = RegisterChild(std::make_shared<gluon::BatchNorm>(), "bn2");
    down_ = RegisterChild(conv(1, 2, 0), "down");
    down_bn_ = RegisterChild(std::make_shared<gluon::BatchNorm>(), "down_bn");
    pool_ = RegisterChild(std::make_shared<gluon::GlobalAvgPool2D>(), "pool");
    fc_ = RegisterChild(std::make_shared<Dense>(5), "fc");
  }
  NDArray HybridForward(const F&, const NDArray& x) override {
    auto relu = [](const NDArray& v) {
      return op::Call("Activation", {v}, {{"act_type", "relu"}});
    };
    NDArray h = (*bn2_)((*conv2_)(relu((*bn1_)((*conv1_)(x)))));
    NDArray shortcut = (*down_bn_)((*down_)(x));
    return (*fc_)((*pool_)(relu(h + shortcut)));
  }

 private:
  std::shared_ptr<gluon::Conv2D> conv1_, conv2_, down_;
  std::shared_ptr<gluon::BatchNorm> bn1_, bn2_, down_bn_;
  std::shared_ptr<gluon::GlobalAvgPool2D> pool_;
  std::shared_ptr<Dense> fc_;
};

// Its channel-last training graph (convolutions and their gradients on channel-last data, BatchNorm
// with its axis last, the residual add, the global pooling, the re-layouts and their gradients)
// gives eager's outputs, input and parameter gradients and running statistics bit for bit, over
// steps whose backward updates the running statistics; odd image sizes and 20 channels (not a
// multiple of a register's 16).
TEST_F(HybridTraining, ResidualBlockChannelLastEqualsEagerBitForBit) {
  ResidualNet net;
  net.Initialize();
  const NDArray input = NDArray::RandomUniform({6, 7, 11, 11}, -1.f, 1.f);
  const NDArray head = NDArray::RandomUniform({6, 5}, -1.f, 1.f);
  net(input);  // completes the deferred shapes
  const std::vector<ParameterPtr> params = ParamsOf(&net);
  std::vector<NDArray> initial;
  for (const ParameterPtr& p : params) initial.push_back(p->data().Copy());
  std::vector<std::vector<NDArray>> runs;  // per mode: outputs, gradients, parameters
  for (const bool hybridized : {false, true}) {
    net.Hybridize(hybridized, {/*static_alloc=*/true, /*static_shape=*/true});
    for (size_t i = 0; i < params.size(); ++i) {
      params[i]->SetData(initial[i].Copy());
      if (params[i]->differentiable()) params[i]->AttachGrad();
    }
    NDArray x = input.Copy();
    autograd::AttachGrad(&x);
    std::vector<NDArray> results;
    for (int step = 0; step < 2; ++step) {
      NDArray y;
      {
        auto recording = autograd::Record();
        y = net(x);
      }
      autograd::Backward({y}, {head});
      results.push_back(y);
      results.push_back(autograd::GetGrad(x).Copy());
      for (const ParameterPtr& p : params) {
        if (p->differentiable()) results.push_back(p->Grad().Copy());
      }
    }
    for (const ParameterPtr& p : params) results.push_back(p->data().Copy());
    runs.push_back(std::move(results));
  }
  EXPECT_EQ(net.CachedTrainingStats().num_gradient_graphs, 1u);
  ASSERT_EQ(runs[0].size(), runs[1].size());
  for (size_t i = 0; i < runs[0].size(); ++i)
    EXPECT_EQ(BitDifference(runs[1][i], runs[0][i]), "") << "result " << i;
  // The running statistics moved (the backward ran in training mode) and the input gradient is
  // not all zeros.
  const size_t first_param = runs[1].size() - params.size();
  size_t moved = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i]->name().find("running_mean") != std::string::npos)
      moved += BitDifference(runs[1][first_param + i], initial[i]) != "";
  }
  EXPECT_EQ(moved, 3u);
  double sum = 0;
  for (float v : runs[1][1].ToFloatVector()) sum += std::fabs(v);
  EXPECT_GT(sum, 0.0);
}

// ---- second order ------------------------------------------------------------------------------

NDArray SecondDerivative(const NDArray& x0, NDArray (*f)(const NDArray&)) {
  NDArray x = x0.Copy();
  autograd::AttachGrad(&x);
  NDArray dx;
  {
    auto recording = autograd::Record();
    NDArray y = f(x);
    dx = autograd::Grad({y}, {x}, {}, /*retain_graph=*/true, /*train_mode=*/true,
                        /*create_graph=*/true)[0];
  }
  autograd::Backward({dx});
  return autograd::GetGrad(x);
}

TEST_F(HybridTraining, SecondOrderOfSquare) {
  NDArray x = NDArray::FromVector({3}, {1.5f, -2.f, 0.25f});
  NDArray d2 = SecondDerivative(x, [](const NDArray& v) { return v * v; });
  EXPECT_EQ(d2.ToFloatVector(), (std::vector<float>{2.f, 2.f, 2.f}));
}

TEST_F(HybridTraining, SecondOrderOfTanh) {
  std::vector<float> xs{0.3f, -1.2f, 2.f};
  NDArray d2 =
      SecondDerivative(NDArray::FromVector({3}, xs), [](const NDArray& v) { return op::tanh(v); });
  std::vector<float> got = d2.ToFloatVector();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double t = std::tanh(static_cast<double>(xs[i]));
    EXPECT_NEAR(got[i], -2 * t * (1 - t * t), 1e-5) << xs[i];
  }
}

// Elementwise ops and activations: f''(x) through the recorded gradient.
TEST_F(HybridTraining, SecondOrderOfElementwiseOpsAndActivations) {
  struct Want {
    const char* op;
    AttrDict attrs;
    double (*second)(double);
  };
  const Want wants[] = {
      {"exp", {}, [](double v) { return std::exp(v); }},
      {"log", {}, [](double v) { return -1 / (v * v); }},
      {"sin", {}, [](double v) { return -std::sin(v); }},
      {"square", {}, [](double) { return 2.0; }},
      {"Activation",
       {{"act_type", "sigmoid"}},
       [](double v) {
         const double s = 1 / (1 + std::exp(-v));
         return s * (1 - s) * (1 - 2 * s);
       }},
      {"Activation",
       {{"act_type", "softrelu"}},
       [](double v) {
         const double s = 1 / (1 + std::exp(-v));
         return s * (1 - s);
       }},
      {"Activation", {{"act_type", "relu"}}, [](double) { return 0.0; }},
  };
  const std::vector<float> xs{0.3f, 1.7f, 0.9f};
  for (const Want& want : wants) {
    NDArray x = NDArray::FromVector({3}, xs);
    autograd::AttachGrad(&x);
    NDArray dx;
    {
      auto recording = autograd::Record();
      NDArray y = op::Call(want.op, {x}, want.attrs);
      dx = autograd::Grad({y}, {x}, {}, true, true, /*create_graph=*/true)[0];
    }
    autograd::Backward({dx});
    std::vector<float> got = autograd::GetGrad(x).ToFloatVector();
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_NEAR(got[i], want.second(xs[i]), 1e-5) << want.op << " at " << xs[i];
  }
}

TEST_F(HybridTraining, SecondOrderOfFullyConnected) {
  // y = sum((x W^T + b)^2): d/dx = 2 (x W^T + b) W, and d/dW of sum(d/dx) is
  // 2 (1 W)^T x + 2 (x W^T + b)^T 1, evaluated through the recorded first gradient.
  NDArray x = NDArray::FromVector({2, 3}, {0.5f, -1.f, 2.f, 1.f, 0.25f, -0.5f});
  NDArray w = NDArray::FromVector({2, 3}, {0.1f, 0.2f, -0.3f, -0.4f, 0.5f, 0.6f});
  NDArray b = NDArray::FromVector({2}, {0.05f, -0.1f});
  autograd::AttachGrad(&x);
  autograd::AttachGrad(&w);
  NDArray dx;
  {
    auto recording = autograd::Record();
    NDArray h = op::Call("FullyConnected", {x, w, b}, {{"num_hidden", "2"}});
    // Head gradients of ones: the gradient of sum(h * h) without the sum (whose backward,
    // _backward_sum, has no gradient yet).
    dx = autograd::Grad({h * h}, {x}, {}, true, true, /*create_graph=*/true)[0];
  }
  autograd::Backward({dx});
  std::vector<float> xv = x.ToFloatVector(), wv = w.ToFloatVector(), bv = b.ToFloatVector();
  std::vector<double> h(4), wsum(3, 0.0);
  for (int n = 0; n < 2; ++n)
    for (int o = 0; o < 2; ++o) {
      h[n * 2 + o] = bv[o];
      for (int i = 0; i < 3; ++i) h[n * 2 + o] += xv[n * 3 + i] * wv[o * 3 + i];
    }
  std::vector<float> dw = autograd::GetGrad(w).ToFloatVector();
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 3; ++i) {
      double want = 0;
      for (int n = 0; n < 2; ++n) {
        double dh = 0;  // d sum(dx) / d h[n, o] = 2 * sum_i W[o, i]
        for (int k = 0; k < 3; ++k) dh += 2 * wv[o * 3 + k];
        want += dh * xv[n * 3 + i] + 2 * h[n * 2 + o];
      }
      EXPECT_NEAR(dw[o * 3 + i], want, 1e-5) << o << "," << i;
    }
  // d sum(d/dx) / dx[n, i] = 2 sum_o (sum_k W[o, k]) W[o, i], the same for every row.
  std::vector<float> ddx = autograd::GetGrad(x).ToFloatVector();
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i) {
      double want = 0;
      for (int o = 0; o < 2; ++o)
        want += 2 * (wv[o * 3] + wv[o * 3 + 1] + wv[o * 3 + 2]) * wv[o * 3 + i];
      EXPECT_NEAR(ddx[n * 3 + i], want, 1e-5) << n << "," << i;
    }
}

// A gradient op without a gradient of its own: the second backward names it.
TEST_F(HybridTraining, SecondOrderThroughAHybridizedBlockNamesTheOp) {
  auto net = Mlp();
  net->Initialize();
  net->Hybridize();
  NDArray x = NDArray::RandomUniform({2, 10});
  autograd::AttachGrad(&x);
  NDArray dx;
  {
    auto recording = autograd::Record();
    NDArray y = (*net)(x);
    dx = autograd::Grad({y}, {x}, {}, true, true, /*create_graph=*/true)[0];
  }
  Error e = ErrorOf([&] { autograd::Backward({dx}); });
  EXPECT_EQ(e.code(), StatusCode::kUnsupported);
  EXPECT_NE(std::string(e.what()).find("_backward_CachedOp"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace hybridnet
