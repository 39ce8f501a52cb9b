// The graph optimizer over convolutional networks: Convolution + BatchNorm + residual add +
// activation fused, channel-last data between the convolutions with re-layouts only at the
// graph's edges; all bit-identical to the ops run one by one (fast_math aside), and weights
// re-laid-out once, kept until their values change.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/executor.h"
#include "hybridnet/gluon/model_zoo.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/imperative.h"
#include "hybridnet/symbol.h"
#include "kernels/kernel_choice.h"

namespace hybridnet {
namespace {

// conv -> BatchNorm -> relu -> conv(+bias) -> relu: a ResNet stem plus a VGG-style layer.
struct ConvNet {
  Symbol symbol;
  std::map<std::string, NDArray> params;
  NDArray x;
};

ConvNet MakeConvNet(bool fix_gamma) {
  Seed(5);
  ConvNet n;
  Symbol data = Symbol::Var("data");
  Symbol c1 = Symbol::Create(
      "Convolution", {data},
      {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"pad", "(1, 1)"}, {"no_bias", "True"}}, "conv1");
  Symbol bn = Symbol::Create(
      "BatchNorm", {c1}, {{"eps", "1e-05"}, {"fix_gamma", fix_gamma ? "True" : "False"}}, "bn1");
  Symbol r1 = Symbol::Create("Activation", {bn}, {{"act_type", "relu"}}, "relu1");
  Symbol c2 =
      Symbol::Create("Convolution", {r1}, {{"kernel", "(1, 1)"}, {"num_filter", "6"}}, "conv2");
  n.symbol = Symbol::Create("Activation", {c2}, {{"act_type", "relu"}}, "relu2");
  n.params["conv1_weight"] = NDArray::RandomNormal({8, 3, 3, 3});
  n.params["bn1_gamma"] = NDArray::RandomUniform({8}, 0.5f, 1.5f);
  n.params["bn1_beta"] = NDArray::RandomNormal({8}, 0.f, 0.1f);
  n.params["bn1_moving_mean"] = NDArray::RandomNormal({8}, 0.f, 0.1f);
  n.params["bn1_moving_var"] = NDArray::RandomUniform({8}, 0.5f, 1.5f);
  n.params["conv2_weight"] = NDArray::RandomNormal({6, 8, 1, 1});
  n.params["conv2_bias"] = NDArray::RandomNormal({6});
  n.x = NDArray::RandomNormal({2, 3, 9, 7});
  return n;
}

using ::hybridnet::testing_util::BitEqual;

// max |a - b| / max |b|
double RelativeError(const NDArray& a, const NDArray& b) {
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  double diff = 0, scale = 1e-30;
  for (int64_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(pa[i] - pb[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(pb[i])));
  }
  return diff / scale;
}

NDArray RunEager(const ConvNet& n) {
  std::map<std::string, NDArray> values = n.params;
  values["data"] = n.x;
  return testing_util::RunNodeByNode(n.symbol, values)[0];
}

TEST(ConvolutionFusion, FusedGraphIsBitIdenticalToEager) {
  for (bool fix_gamma : {false, true}) {
    ConvNet n = MakeConvNet(fix_gamma);
    NDArray eager = RunEager(n);
    for (bool fuse : {true, false}) {
      ExecutorOptions options;
      options.fuse = fuse;
      GraphExecutor exec(n.symbol, {"data"}, n.params, options);
      EXPECT_TRUE(BitEqual(exec.Forward({n.x})[0], eager)) << "fuse=" << fuse;
      // conv1 + bn1 + relu1 and conv2 + relu2; channel-last between them, with one re-layout
      // out of the last (the first, of 3 channels, reads its channel-first input as it is where
      // our few-channel kernel runs, else a re-layout into it).
      const size_t into_first =
          internal::KernelRunsHere("convolution", "few_channels") ? 0u : 1u;
      EXPECT_EQ(exec.stats().num_fused, fuse ? 3u : 0u);
      EXPECT_EQ(exec.stats().num_relayouts, fuse ? 1u + into_first : 0u);
      EXPECT_EQ(exec.stats().num_kernels, fuse ? 3u + into_first : 5u);
    }
  }
}

TEST(ConvolutionFusion, ProducerWithSeveralConsumersIsNotFused) {
  Seed(6);
  Symbol data = Symbol::Var("data");
  Symbol c =
      Symbol::Create("Convolution", {data}, {{"kernel", "(1, 1)"}, {"num_filter", "2"}}, "c");
  Symbol r = Symbol::Create("Activation", {c}, {{"act_type", "relu"}}, "r");
  Symbol sum = Symbol::Create("elemwise_add", {r, c}, {}, "sum");  // c is read twice
  std::map<std::string, NDArray> params{{"c_weight", NDArray::RandomNormal({2, 3, 1, 1})},
                                        {"c_bias", NDArray::RandomNormal({2})}};
  GraphExecutor exec(sum, {"data"}, params);
  NDArray x = NDArray::RandomNormal({1, 3, 4, 4});
  std::map<std::string, NDArray> values = params;
  values["data"] = x;
  EXPECT_TRUE(BitEqual(exec.Forward({x})[0], testing_util::RunNodeByNode(sum, values)[0]));
  EXPECT_EQ(exec.stats().num_fused, 0u);
}

// A real network, eager (op by op) against hybridized (fused, channel-last), bit for bit, with
// no re-layout at all where our few-channel kernel runs (the first convolution reads the
// 3-channel input as it is; elsewhere one re-layout into it), and the global pooling's output
// (1x1 spatial) reaches the classifier as a zero-copy view.
void ExpectHybridizedIsEager(const std::shared_ptr<gluon::HybridBlock>& net, const NDArray& x) {
  NDArray eager = (*net)(x);
  net->Hybridize();
  NDArray hybridized = (*net)(x);
  EXPECT_TRUE(BitEqual(hybridized, eager));
  const ExecutorStats stats = net->CachedStats();
  EXPECT_GT(stats.num_fused, 0u);
  EXPECT_EQ(stats.num_relayouts, internal::KernelRunsHere("convolution", "few_channels") ? 0u : 1u);
}

TEST(ConvolutionFusion, ResNetV1AndV2FromMXNetFilesAreBitIdenticalToEager) {
  for (const char* name : {"cifar_resnet20_v1", "cifar_resnet20_v2"}) {
    SCOPED_TRACE(name);
    const std::string prefix = std::string(HN_FIXTURES_DIR) + "/" + name;
    auto net =
        gluon::SymbolBlock::Imports(prefix + "-symbol.json", {"data"}, prefix + "-0000.params");
    Seed(7);
    ExpectHybridizedIsEager(net, NDArray::RandomUniform({2, 3, 32, 32}, 0.f, 1.f));
  }
}

TEST(ConvolutionFusion, ModelZooNetworksAreBitIdenticalToEager) {
  // Depthwise convolutions and ReLU6 (MobileNet v2), 1x1 bottlenecks (ResNet-50 v1), plain
  // pooling stems; BatchNorm statistics made non-trivial so they matter.
  for (const char* name : {"mobilenetv2_0.25", "mobilenet0.25", "resnet50_v1", "resnet18_v2"}) {
    SCOPED_TRACE(name);
    auto net = gluon::model_zoo::GetModel(name, 10);
    Seed(8);
    net->Initialize();
    NDArray x = NDArray::RandomUniform({1, 3, 32, 32}, 0.f, 1.f);
    (*net)(x);  // completes the deferred shapes
    const gluon::ParameterDict all = net->CollectParams();
    for (auto& p : all.list()) {
      const std::string& n = p->name();
      if (n.find("running_var") != std::string::npos) {
        p->SetData(NDArray::RandomUniform(p->shape(), 0.5f, 1.5f));
      } else if (n.find("running_mean") != std::string::npos ||
                 n.find("beta") != std::string::npos) {
        p->SetData(NDArray::RandomUniform(p->shape(), -0.2f, 0.2f));
      }
    }
    ExpectHybridizedIsEager(net, x);
  }
}

// ReLU6 fused into convolutions keeps the clip op's NaN and -0 behaviour (both pass through).
TEST(ConvolutionFusion, FusedClipIsTheClipOp) {
  Seed(11);
  Symbol data = Symbol::Var("data");
  Symbol x = data;
  std::map<std::string, NDArray> params;
  // pointwise (oneDNN) then depthwise (our kernel), each + BatchNorm + clip(0, 6)
  for (int i = 0; i < 2; ++i) {
    const std::string n = "c" + std::to_string(i);
    AttrDict conv = {{"kernel", i ? "(3, 3)" : "(1, 1)"},
                     {"num_filter", "32"},
                     {"no_bias", "True"},
                     {"pad", i ? "(1, 1)" : "(0, 0)"}};
    if (i) conv["num_group"] = "32";
    x = Symbol::Create("Convolution", {x}, conv, n);
    x = Symbol::Create("BatchNorm", {x}, {{"fix_gamma", "False"}}, n + "_bn");
    x = Symbol::Create("clip", {x}, {{"a_min", "0"}, {"a_max", "6"}}, n + "_clip");
    params[n + "_weight"] = NDArray::RandomNormal({32, i ? 1 : 16, i ? 3 : 1, i ? 3 : 1});
    params[n + "_bn_gamma"] = NDArray::RandomUniform({32}, 0.5f, 1.5f);
    params[n + "_bn_beta"] = NDArray::RandomNormal({32});
    params[n + "_bn_moving_mean"] = NDArray::RandomNormal({32}, 0.f, 0.1f);
    params[n + "_bn_moving_var"] = NDArray::RandomUniform({32}, 0.5f, 1.5f);
  }
  NDArray input = NDArray::RandomNormal({1, 16, 6, 9});
  float* v = input.data<float>();
  v[0] = std::nanf("");  // NaN spreads through both convolutions
  std::map<std::string, NDArray> values = params;
  values["data"] = input;
  const NDArray eager = testing_util::RunNodeByNode(x, values)[0];
  GraphExecutor exec(x, {"data"}, params);
  EXPECT_TRUE(BitEqual(exec.Forward({input})[0], eager));
  // Each convolution's BatchNorm and clip, then, where our depthwise kernel runs, the depthwise
  // one takes in the pointwise one.
  EXPECT_EQ(exec.stats().num_fused,
            internal::KernelRunsHere("convolution", "depthwise3x3") ? 5u : 4u);
  int nans = 0;
  for (int64_t i = 0; i < eager.size(); ++i) nans += std::isnan(eager.data<float>()[i]);
  EXPECT_GT(nans, 0);
}

// Convolution [+ BatchNorm] [+ add of `residual`] [+ Activation | clip(0, 6)], parameters
// random and added to `params`.
Symbol ConvLayer(Symbol x, const std::string& name, int64_t in_channels, int64_t filters,
                 int64_t kernel, int64_t stride, int64_t pad, bool bias, bool bn,
                 const Symbol* residual, const std::string& act,
                 std::map<std::string, NDArray>* params) {
  const int64_t groups = kernel == 3 ? filters : 1;
  const std::string k = "(" + std::to_string(kernel) + ", " + std::to_string(kernel) + ")";
  const std::string st = "(" + std::to_string(stride) + ", " + std::to_string(stride) + ")";
  const std::string pd = "(" + std::to_string(pad) + ", " + std::to_string(pad) + ")";
  x = Symbol::Create("Convolution", {x},
                     {{"kernel", k},
                      {"stride", st},
                      {"pad", pd},
                      {"num_filter", std::to_string(filters)},
                      {"num_group", std::to_string(groups)},
                      {"no_bias", bias ? "False" : "True"}},
                     name);
  (*params)[name + "_weight"] =
      NDArray::RandomNormal({filters, in_channels / groups, kernel, kernel}, 0.f, 0.3f);
  if (bias) (*params)[name + "_bias"] = NDArray::RandomNormal({filters});
  if (bn) {
    x = Symbol::Create("BatchNorm", {x}, {{"fix_gamma", "False"}}, name + "_bn");
    (*params)[name + "_bn_gamma"] = NDArray::RandomUniform({filters}, 0.5f, 1.5f);
    (*params)[name + "_bn_beta"] = NDArray::RandomNormal({filters});
    (*params)[name + "_bn_moving_mean"] = NDArray::RandomNormal({filters}, 0.f, 0.1f);
    (*params)[name + "_bn_moving_var"] = NDArray::RandomUniform({filters}, 0.5f, 1.5f);
  }
  if (residual != nullptr) x = Symbol::Create("elemwise_add", {x, *residual}, {}, name + "_add");
  if (act == "clip") {
    x = Symbol::Create("clip", {x}, {{"a_min", "0"}, {"a_max", "6"}}, name + "_clip");
  } else if (!act.empty()) {
    x = Symbol::Create("Activation", {x}, {{"act_type", act}}, name + "_act");
  }
  return x;
}

TEST(ConvolutionFusion, ExpansionRowByRowIsBitIdenticalToEagerAtEveryThreadCount) {
  // Inverted bottlenecks whose expanded image (64 x 67 x 70 floats) is above L2's size, so the
  // backend computes it a few rows at a time on AVX-512 CPUs (RunExpandThenDepthwise); 3
  // samples, so the second thread starts inside a sample. Strides 1 and 2, padding 1 and 0,
  // every epilogue step on both convolutions.
  Seed(21);
  std::map<std::string, NDArray> params;
  const Symbol data = Symbol::Var("data"), skip = Symbol::Var("skip");
  Symbol a = ConvLayer(data, "a_expand", 8, 64, 1, 1, 0, false, true, nullptr, "clip", &params);
  a = ConvLayer(a, "a_depthwise", 64, 64, 3, 1, 1, false, true, &skip, "clip", &params);
  Symbol b = ConvLayer(data, "b_expand", 8, 64, 1, 1, 0, true, false, nullptr, "relu", &params);
  b = ConvLayer(b, "b_depthwise", 64, 64, 3, 2, 1, false, true, nullptr, "", &params);
  Symbol c = ConvLayer(data, "c_expand", 8, 64, 1, 1, 0, false, true, nullptr, "relu", &params);
  c = ConvLayer(c, "c_depthwise", 64, 64, 3, 1, 0, true, false, nullptr, "", &params);
  const Symbol net = Symbol::Group({a, b, c});
  GraphExecutor exec(net, {"data", "skip"}, params);
  // a: BatchNorm, add, clip twice over (5); b: relu, BatchNorm (2); c: BatchNorm, relu (2);
  // and, where our depthwise kernel runs, each depthwise convolution takes in its expansion (3).
  EXPECT_EQ(exec.stats().num_fused,
            internal::KernelRunsHere("convolution", "depthwise3x3") ? 12u : 9u);
  const NDArray x = NDArray::RandomNormal({3, 8, 67, 70});
  const NDArray skip_value = NDArray::RandomNormal({3, 64, 67, 70});
  std::map<std::string, NDArray> values = params;
  values["data"] = x;
  values["skip"] = skip_value;
  const std::vector<NDArray> eager = testing_util::RunNodeByNode(net, values);
  const int before = GetNumThreads();
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    SetNumThreads(threads);
    const std::vector<NDArray> fused = exec.Forward({x, skip_value});
    ASSERT_EQ(fused.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(BitEqual(fused[i], eager[i])) << "output " << i;
  }
  SetNumThreads(before);
}

TEST(ConvolutionFusion, MaxPoolingIsFusedIntoTheStemBitIdenticalAtEveryThreadCount) {
  // ResNet's stem (7x7 stride-2 convolution, BatchNorm, relu, 3x3 stride-2 max pooling) on 3
  // samples, so the second thread starts inside a sample; a 1x1 one with a 2x2 full pooling;
  // average and global poolings, and a pooling whose convolution has a second reader, stay
  // apart.
  Seed(22);
  std::map<std::string, NDArray> params;
  const Symbol data = Symbol::Var("data");
  auto max_pool = [](const Symbol& x, const std::string& name, const std::string& kernel,
                     const std::string& stride, const std::string& pad,
                     const std::string& convention) {
    return Symbol::Create("Pooling", {x},
                          {{"pool_type", "max"},
                           {"kernel", kernel},
                           {"stride", stride},
                           {"pad", pad},
                           {"pooling_convention", convention}},
                          name);
  };
  Symbol stem = Symbol::Create("Convolution", {data},
                               {{"kernel", "(7, 7)"},
                                {"stride", "(2, 2)"},
                                {"pad", "(3, 3)"},
                                {"num_filter", "16"},
                                {"no_bias", "True"}},
                               "stem");
  params["stem_weight"] = NDArray::RandomNormal({16, 3, 7, 7}, 0.f, 0.3f);
  stem = Symbol::Create("BatchNorm", {stem}, {{"fix_gamma", "False"}}, "stem_bn");
  params["stem_bn_gamma"] = NDArray::RandomUniform({16}, 0.5f, 1.5f);
  params["stem_bn_beta"] = NDArray::RandomNormal({16});
  params["stem_bn_moving_mean"] = NDArray::RandomNormal({16}, 0.f, 0.1f);
  params["stem_bn_moving_var"] = NDArray::RandomUniform({16}, 0.5f, 1.5f);
  stem = Symbol::Create("Activation", {stem}, {{"act_type", "relu"}}, "stem_relu");
  const Symbol a = max_pool(stem, "a_pool", "(3, 3)", "(2, 2)", "(1, 1)", "valid");
  // b's second pooling reads a fused convolution that already pools: it stays a Pooling.
  const Symbol b =
      max_pool(max_pool(ConvLayer(a, "b", 16, 24, 1, 1, 0, false, false, nullptr, "relu", &params),
                        "b_pool", "(2, 2)", "(2, 2)", "(0, 0)", "full"),
               "b_pool2", "(2, 2)", "(1, 1)", "(0, 0)", "valid");
  const Symbol c_conv = ConvLayer(a, "c", 16, 8, 1, 1, 0, true, false, nullptr, "", &params);
  const Symbol c =
      Symbol::Create("Pooling", {c_conv},
                     {{"pool_type", "avg"}, {"kernel", "(2, 2)"}, {"stride", "(2, 2)"}}, "c_pool");
  const Symbol d_conv = ConvLayer(a, "d", 16, 8, 1, 1, 0, true, false, nullptr, "", &params);
  const Symbol d = max_pool(d_conv, "d_pool", "(2, 2)", "(2, 2)", "(0, 0)", "valid");
  // global_pool written as MXNet also accepts it: the kernel is ignored.
  const Symbol e = Symbol::Create(
      "Pooling", {ConvLayer(a, "e", 16, 8, 1, 1, 0, true, false, nullptr, "", &params)},
      {{"pool_type", "max"}, {"kernel", "(2, 2)"}, {"global_pool", "1"}}, "e_pool");
  const Symbol net = Symbol::Group({b, c, d, d_conv, e});
  GraphExecutor exec(net, {"data"}, params);
  // BatchNorm and relu into the stem (2), its pooling (1), relu and pooling into b (2).
  EXPECT_EQ(exec.stats().num_fused, 5u);
  const NDArray x = NDArray::RandomNormal({3, 3, 45, 47});
  std::map<std::string, NDArray> values = params;
  values["data"] = x;
  const std::vector<NDArray> eager = testing_util::RunNodeByNode(net, values);
  const int before = GetNumThreads();
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    SetNumThreads(threads);
    const std::vector<NDArray> fused = exec.Forward({x});
    ASSERT_EQ(fused.size(), 5u);
    for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(BitEqual(fused[i], eager[i])) << "output " << i;
  }
  SetNumThreads(before);
}

TEST(ConvolutionFusion, ChannelLastMaxPoolingSkipsNaNAsChannelFirstDoes) {
  // Channel-last max pooling (16 channels to a register on AVX-512) against the channel-first
  // kernel, whose NaN handling the conformance cases check against MXNet's definition: NaN in
  // every other value, 37 channels (a masked block), overlapping windows. ONNX leaves NaN open,
  // so this is not an exported case.
  NDArray x = NDArray::RandomNormal({2, 5, 6, 37});
  float* v = x.data<float>();
  for (int64_t i = 0; i < x.size(); i += 2) v[i] = std::numeric_limits<float>::quiet_NaN();
  const Symbol data = Symbol::Var("data");
  const AttrDict window = {
      {"pool_type", "max"}, {"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}};
  AttrDict last = window;
  last["layout"] = "NHWC";
  const Symbol to_first = Symbol::Create("transpose", {data}, {{"axes", "(0, 3, 1, 2)"}});
  const Symbol first = Symbol::Create("Pooling", {to_first}, window);
  const Symbol channel_last = Symbol::Create("transpose", {Symbol::Create("Pooling", {data}, last)},
                                             {{"axes", "(0, 3, 1, 2)"}});
  const std::vector<NDArray> out =
      testing_util::RunNodeByNode(Symbol::Group({first, channel_last}), {{"data", x}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(BitEqual(out[1], out[0]));
}

TEST(ConvolutionFusion, ChannelFirstMaxPoolingKeepsTheSignOfZeroAsChannelLastDoes) {
  // The channel-first kernel (16 outputs of a row at a time on AVX-512: stride 2 from two loads,
  // other strides gathered) against the channel-last one on windows of +0, -0, -1 and NaN, where
  // only the order of the comparisons decides the sign of a zero maximum: eager (channel-first)
  // and hybridized (channel-last) ResNets must agree bit for bit.
  NDArray x = NDArray::Zeros({2, 5, 70, 20});
  float* v = x.data<float>();
  const float kinds[] = {0.f, -0.f, -0.f, -1.f, std::numeric_limits<float>::quiet_NaN()};
  uint32_t state = 12345;
  for (int64_t i = 0; i < x.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    v[i] = kinds[(state >> 16) % 5];
  }
  const Symbol data = Symbol::Var("data");
  std::vector<Symbol> outputs;
  for (const char* stride : {"(1, 1)", "(2, 2)", "(2, 3)"}) {
    const AttrDict window = {
        {"pool_type", "max"}, {"kernel", "(3, 3)"}, {"stride", stride}, {"pad", "(1, 1)"}};
    AttrDict last = window;
    last["layout"] = "NHWC";
    outputs.push_back(Symbol::Create(
        "Pooling", {Symbol::Create("transpose", {data}, {{"axes", "(0, 3, 1, 2)"}})}, window));
    outputs.push_back(Symbol::Create("transpose", {Symbol::Create("Pooling", {data}, last)},
                                     {{"axes", "(0, 3, 1, 2)"}}));
  }
  const std::vector<NDArray> out =
      testing_util::RunNodeByNode(Symbol::Group(outputs), {{"data", x}});
  ASSERT_EQ(out.size(), 6u);
  for (size_t i = 0; i < 6; i += 2) EXPECT_TRUE(BitEqual(out[i + 1], out[i])) << "window " << i / 2;
}

TEST(ConvolutionFusion, WeightsChangedAfterAForwardAreUsed) {
  ConvNet n = MakeConvNet(false);
  GraphExecutor exec(n.symbol, {"data"}, n.params);
  const NDArray before = exec.Forward({n.x})[0];
  // Through the NDArray API (what Parameter::SetData does)...
  n.params["conv1_weight"].CopyFrom(NDArray::RandomNormal({8, 3, 3, 3}));
  NDArray after = exec.Forward({n.x})[0];
  EXPECT_FALSE(BitEqual(after, before));
  EXPECT_TRUE(BitEqual(after, RunEager(n)));
  // ...and through a pointer handed out for writes at any time (the C API's hn_tensor_data).
  float* w = static_cast<float*>(n.params["conv2_weight"].untracked_data());
  exec.Forward({n.x});
  for (int i = 0; i < 48; ++i) w[i] *= -1.f;
  after = exec.Forward({n.x})[0];
  EXPECT_TRUE(BitEqual(after, RunEager(n)));
  // A BatchNorm statistic read by a fused convolution.
  n.params["bn1_moving_var"].CopyFrom(NDArray::RandomUniform({8}, 2.f, 3.f));
  after = exec.Forward({n.x})[0];
  EXPECT_TRUE(BitEqual(after, RunEager(n)));
}

TEST(ConvolutionFusion, ResultsDoNotDependOnTheThreadCount) {
  // ResNet's direct kernels with the BatchNorm epilogue after them; MobileNet's depthwise kernel
  // and its classifier, a convolution on a single output position per sample.
  for (const char* name : {"resnet18_v1", "mobilenetv2_1.0"}) {
    auto net = gluon::model_zoo::GetModel(name, 10);
    Seed(9);
    net->Initialize();
    net->Hybridize();
    NDArray x = NDArray::RandomUniform({2, 3, 48, 48}, 0.f, 1.f);
    const int before = GetNumThreads();
    SetNumThreads(1);
    NDArray one = (*net)(x);
    SetNumThreads(2);
    NDArray two = (*net)(x);
    SetNumThreads(before);
    EXPECT_TRUE(BitEqual(one, two)) << name;
  }
  // Long reductions on a single input row, split by rows between threads (Gemv): a 1x1
  // convolution of a 1x1 image (PSPNet's and DeepLab's pooled branches: 2048 channels) and a
  // batch-1 FullyConnected whose sizes leave a partial vector and a partial group of rows.
  Seed(11);
  Symbol conv =
      Symbol::Create("Convolution", {Symbol::Var("data")},
                     {{"kernel", "(1, 1)"}, {"num_filter", "515"}, {"no_bias", "True"}}, "pooled");
  Symbol dense = Symbol::Create("FullyConnected", {conv}, {{"num_hidden", "1001"}}, "dense");
  const std::map<std::string, NDArray> params = {
      {"pooled_weight", NDArray::RandomNormal({515, 2048, 1, 1})},
      {"dense_weight", NDArray::RandomNormal({1001, 515})},
      {"dense_bias", NDArray::RandomNormal({1001})}};
  GraphExecutor exec(Symbol::Group({conv, dense}), {"data"}, params);
  NDArray x = NDArray::RandomNormal({1, 2048, 1, 1});
  const int before = GetNumThreads();
  SetNumThreads(1);
  std::vector<NDArray> one = exec.Forward({x});
  for (NDArray& a : one) a = a.Copy();
  SetNumThreads(2);
  std::vector<NDArray> two = exec.Forward({x});
  SetNumThreads(before);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_TRUE(BitEqual(one[0], two[0]));
  EXPECT_TRUE(BitEqual(one[1], two[1]));
  // Our pointwise kernel splits work by position tiles and filter groups: a 7 x 7 image with
  // 960 filters (MobileNet v2's widest), BatchNorm and ReLU6 fused.
  Symbol wide =
      Symbol::Create("Convolution", {Symbol::Var("data")},
                     {{"kernel", "(1, 1)"}, {"num_filter", "960"}, {"no_bias", "True"}}, "wide");
  wide = Symbol::Create("BatchNorm", {wide}, {{"fix_gamma", "False"}}, "wide_bn");
  wide = Symbol::Create("clip", {wide}, {{"a_min", "0"}, {"a_max", "6"}}, "wide_clip");
  GraphExecutor wide_exec(wide, {"data"},
                          {{"wide_weight", NDArray::RandomNormal({960, 160, 1, 1})},
                           {"wide_bn_gamma", NDArray::RandomUniform({960}, 0.5f, 1.5f)},
                           {"wide_bn_beta", NDArray::RandomNormal({960})},
                           {"wide_bn_moving_mean", NDArray::RandomNormal({960})},
                           {"wide_bn_moving_var", NDArray::RandomUniform({960}, 0.5f, 1.5f)}});
  EXPECT_EQ(wide_exec.stats().num_fused, 2u);
  NDArray wide_x = NDArray::RandomNormal({1, 160, 7, 7});
  SetNumThreads(1);
  NDArray wide_one = wide_exec.Forward({wide_x})[0].Copy();
  SetNumThreads(2);
  NDArray wide_two = wide_exec.Forward({wide_x})[0];
  SetNumThreads(before);
  EXPECT_TRUE(BitEqual(wide_one, wide_two));
  // Our kernel for few input channels splits output rows and filter groups between threads:
  // MobileNet v2's first layer (3 -> 32, 3x3, stride 2), BatchNorm and ReLU6 fused.
  Symbol stem = Symbol::Create("Convolution", {Symbol::Var("data")},
                               {{"kernel", "(3, 3)"},
                                {"stride", "(2, 2)"},
                                {"pad", "(1, 1)"},
                                {"num_filter", "32"},
                                {"no_bias", "True"}},
                               "stem");
  stem = Symbol::Create("BatchNorm", {stem}, {{"fix_gamma", "False"}}, "stem_bn");
  stem = Symbol::Create("clip", {stem}, {{"a_min", "0"}, {"a_max", "6"}}, "stem_clip");
  GraphExecutor stem_exec(stem, {"data"},
                          {{"stem_weight", NDArray::RandomNormal({32, 3, 3, 3})},
                           {"stem_bn_gamma", NDArray::RandomUniform({32}, 0.5f, 1.5f)},
                           {"stem_bn_beta", NDArray::RandomNormal({32})},
                           {"stem_bn_moving_mean", NDArray::RandomNormal({32})},
                           {"stem_bn_moving_var", NDArray::RandomUniform({32}, 0.5f, 1.5f)}});
  NDArray stem_x = NDArray::RandomNormal({1, 3, 61, 67});
  SetNumThreads(1);
  NDArray stem_one = stem_exec.Forward({stem_x})[0].Copy();
  SetNumThreads(2);
  NDArray stem_two = stem_exec.Forward({stem_x})[0];
  SetNumThreads(before);
  EXPECT_TRUE(BitEqual(stem_one, stem_two));
}

TEST(ConvolutionFusion, ConcurrentCallersGetTheSerialResults) {
  // Convolution primitives are shared by every thread: two executors running at once must not
  // share scratch memory (oneDNN's library scratchpad did; Spark's partitions met it).
  auto net = gluon::model_zoo::GetModel("resnet18_v1", 10);
  Seed(12);
  net->Initialize();
  net->Hybridize();
  std::vector<NDArray> inputs, expected;
  for (int i = 0; i < 4; ++i) inputs.push_back(NDArray::RandomUniform({1, 3, 40, 40}, 0.f, 1.f));
  for (const NDArray& x : inputs) expected.push_back((*net)(x).Copy());
  const Symbol graph = net->CachedGraph();
  std::map<std::string, NDArray> params;
  const gluon::ParameterDict all = net->CollectParams();
  for (auto& p : all.list()) params[p->name()] = p->data();
  std::vector<int> mismatches(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      GraphExecutor exec(graph, {"data"}, params);
      for (int round = 0; round < 25; ++round) {
        const size_t i = static_cast<size_t>(round + t) % inputs.size();
        if (!BitEqual(exec.Forward({inputs[i]})[0], expected[i]))
          ++mismatches[static_cast<size_t>(t)];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches[0] + mismatches[1], 0);
}

TEST(ConvolutionFusion, FastMathStaysWithinItsDocumentedBound) {
  auto net = gluon::model_zoo::GetModel("resnet18_v1", 10);
  Seed(10);
  net->Initialize();
  NDArray x = NDArray::RandomUniform({1, 3, 64, 64}, 0.f, 1.f);
  NDArray eager = (*net)(x);
  net->Hybridize();
  (*net)(x);
  const Symbol graph = net->CachedGraph();
  std::map<std::string, NDArray> params;
  const gluon::ParameterDict all = net->CollectParams();
  for (auto& p : all.list()) params[p->name()] = p->data();
  ExecutorOptions options;
  options.fast_math = true;
  GraphExecutor exec(graph, {"data"}, params, options);
  NDArray fast = exec.Forward({x})[0];
  EXPECT_LT(RelativeError(fast, eager), 1e-4);  // docs/performance.md: fast_math
}

}  // namespace
}  // namespace hybridnet
