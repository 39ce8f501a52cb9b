// The gradients of Convolution, Deconvolution and Pooling beyond the conformance cases: the same
// inputs give the same bits on every call at each thread count (oneDNN's backward primitives
// reduce their threads' partial sums in a fixed order); max pooling's gradient goes to the
// first maximum of a window, as MXNet's unpooling routes it, on every kernel; and a small
// network's gradient graph (fused and not) gives eager backward's bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/autograd.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/symbol.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/kernel_choice.h"
#include "pass/gradient.h"

namespace hybridnet {
namespace {

using testing_util::BitDifference;

// _backward_Convolution or _backward_Deconvolution on (out_grad, data, weight, bias) of a layer
// large enough for every thread to take part, at 1 and 2 threads, twice each.
void ExpectRepeatable(const std::string& op, const AttrDict& attrs, const Shape& out_grad,
                      const Shape& data, const Shape& weight, int64_t bias) {
  const std::vector<NDArray> in = {
      NDArray::RandomUniform(out_grad, -1.f, 1.f), NDArray::RandomUniform(data, -1.f, 1.f),
      NDArray::RandomUniform(weight, -1.f, 1.f), NDArray::RandomUniform(Shape{bias}, -1.f, 1.f)};
  const int before = GetNumThreads();
  for (int threads : {1, 2}) {
    SCOPED_TRACE(op + " at " + std::to_string(threads) + " threads");
    SetNumThreads(threads);
    const std::vector<NDArray> first = Invoke(op, in, attrs);
    const std::vector<NDArray> second = Invoke(op, in, attrs);
    ASSERT_EQ(first.size(), 3u);
    for (size_t i = 0; i < first.size(); ++i) {
      EXPECT_EQ(BitDifference(first[i], second[i]), "") << "gradient " << i;
    }
  }
  SetNumThreads(before);
}

TEST(ConvolutionGradient, RepeatedCallsGiveTheSameBits) {
  ExpectRepeatable("_backward_Convolution",
                   {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "32"}}, {4, 32, 28, 28},
                   {4, 32, 28, 28}, {32, 32, 3, 3}, 32);
  // 64 channels: backward data as a forward convolution on rotated weights (the usual choice).
  ExpectRepeatable("_backward_Convolution",
                   {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "64"}}, {2, 64, 14, 14},
                   {2, 64, 14, 14}, {64, 64, 3, 3}, 64);
  ExpectRepeatable("_backward_Convolution",
                   {{"kernel", "(3, 3)"},
                    {"pad", "(1, 1)"},
                    {"stride", "(2, 2)"},
                    {"num_filter", "48"},
                    {"num_group", "48"}},
                   {2, 48, 14, 14}, {2, 48, 28, 28}, {48, 1, 3, 3}, 48);
  ExpectRepeatable("_backward_Deconvolution",
                   {{"kernel", "(4, 4)"},
                    {"pad", "(1, 1)"},
                    {"stride", "(2, 2)"},
                    {"num_filter", "16"},
                    {"no_bias", "False"}},
                   {2, 16, 32, 32}, {2, 24, 16, 16}, {24, 16, 4, 4}, 16);
}

// Convolution's float64 kernel (float64 models) against the float32 kernels on the same
// float32-representable inputs: independent code, within float32's rounding of the sums. The
// conformance cases of _backward_Convolution check its gradients in float64.
TEST(ConvolutionFloat64, MatchesTheFloat32Kernels) {
  struct Layer {
    AttrDict attrs;
    Shape data, weight;
    bool bias;
  };
  const std::vector<Layer> layers = {
      {{{"kernel", "(3, 3)"},
        {"stride", "(2, 2)"},
        {"pad", "(1, 1)"},
        {"num_filter", "6"},
        {"num_group", "2"}},
       {2, 4, 9, 9},
       {6, 2, 3, 3},
       true},
      {{{"kernel", "(3, 3)"},
        {"pad", "(2, 2)"},
        {"dilate", "(2, 2)"},
        {"num_filter", "8"},
        {"num_group", "8"},
        {"no_bias", "True"}},
       {1, 8, 10, 7},
       {8, 1, 3, 3},
       false},
      {{{"kernel", "(2, 3, 2)"}, {"pad", "(0, 1, 1)"}, {"num_filter", "3"}},
       {2, 2, 4, 5, 4},
       {3, 2, 2, 3, 2},
       true},
      {{{"kernel", "(3,)"}, {"stride", "(2,)"}, {"dilate", "(2,)"}, {"num_filter", "5"}},
       {2, 3, 17},
       {5, 3, 3},
       true},
  };
  for (const Layer& l : layers) {
    SCOPED_TRACE(l.data.ToString());
    std::vector<NDArray> in32 = {NDArray::RandomUniform(l.data, -1.f, 1.f),
                                 NDArray::RandomUniform(l.weight, -1.f, 1.f)};
    if (l.bias) in32.push_back(NDArray::RandomUniform(Shape{l.weight[0]}, -1.f, 1.f));
    std::vector<NDArray> in64;
    for (const NDArray& a : in32) in64.push_back(a.AsType(DType::kFloat64));
    const NDArray y32 = Invoke("Convolution", in32, l.attrs)[0];
    const NDArray y64 = Invoke("Convolution", in64, l.attrs)[0];
    ASSERT_EQ(y64.dtype(), DType::kFloat64);
    ASSERT_EQ(y64.shape(), y32.shape());
    const auto [largest, worst] = testing_util::CompareToFloat64(y32, y64);
    EXPECT_GT(largest, 0.5);
    EXPECT_LE(worst, 1e-5 * largest);
  }
}

// The kernel each gradient pass of a convolution runs unforced on an AVX2 CPU without AVX-512
// (kernels/onednn_convolution.cc's and convolution_winograd.cc's measured rules): Winograd's
// for both passes of 3x3 stride-1 convolutions of 16 channels in and out or more; for strided 3x3
// ones of 64 channels in and out onto 14x14 and more oneDNN's blocked backward data, products of
// patches for the backward weights; oneDNN's channel-last primitives for everything else (other
// windows, dilations, groups, fewer channels).
TEST(ConvolutionGradient, AnAvx2CpuRunsTheKernelsItsRulesChoose) {
  if (internal::CpuHasAvx512() || !internal::CpuHasAvx2()) {
    GTEST_SKIP() << "the rules pinned here are those of AVX2 CPUs without AVX-512";
  }
  struct Layer {
    AttrDict attrs;
    Shape out_grad, data, weight;
    const char* data_kernel;
    const char* weight_kernel;
  };
  auto three = [](const std::string& f) -> AttrDict {
    return {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", f}, {"no_bias", "True"}};
  };
  AttrDict dilated = three("64"), grouped = three("64"), strided = three("128");
  dilated["dilate"] = "(2, 2)";
  dilated["pad"] = "(2, 2)";
  grouped["num_group"] = "2";
  strided["stride"] = "(2, 2)";
  const std::vector<Layer> layers = {
      {three("64"), {1, 64, 14, 14}, {1, 64, 14, 14}, {64, 64, 3, 3}, "winograd", "winograd"},
      {three("64"), {1, 64, 8, 8}, {1, 64, 8, 8}, {64, 64, 3, 3}, "winograd", "winograd"},
      {three("64"), {1, 64, 16, 16}, {1, 32, 16, 16}, {64, 32, 3, 3}, "winograd", "winograd"},
      {three("32"), {1, 32, 16, 16}, {1, 64, 16, 16}, {32, 64, 3, 3}, "winograd", "winograd"},
      {three("16"), {1, 16, 16, 16}, {1, 16, 16, 16}, {16, 16, 3, 3}, "winograd", "winograd"},
      {three("8"), {1, 8, 16, 16}, {1, 16, 16, 16}, {8, 16, 3, 3},
       "onednn_backward_data", "onednn_backward_weights"},
      {strided, {1, 128, 14, 14}, {1, 64, 28, 28}, {128, 64, 3, 3},
       "onednn_backward_data_blocked", "patch_gemm"},
      {{{"kernel", "(1, 1)"}, {"num_filter", "64"}, {"no_bias", "True"}}, {1, 64, 14, 14},
       {1, 64, 14, 14}, {64, 64, 1, 1}, "onednn_backward_data", "onednn_backward_weights"},
      {dilated, {1, 64, 14, 14}, {1, 64, 14, 14}, {64, 64, 3, 3},
       "onednn_backward_data", "onednn_backward_weights"},
      {grouped, {1, 64, 14, 14}, {1, 64, 14, 14}, {64, 32, 3, 3},
       "onednn_backward_data", "onednn_backward_weights"},
  };
  internal::KernelChoice& data_choice = internal::KernelChoiceOf("convolution_backward_data");
  internal::KernelChoice& weight_choice = internal::KernelChoiceOf("convolution_backward_weights");
  // The kernels of `choice` that ran since `runs`.
  auto ran = [](const internal::KernelChoice& choice, const std::vector<int64_t>& runs) {
    std::string names;
    for (size_t k = 0; k < runs.size(); ++k) {
      if (choice.Runs(static_cast<int>(k)) != runs[k]) names += choice.kernels()[k].name;
    }
    return names;
  };
  auto runs_of = [](const internal::KernelChoice& choice) {
    std::vector<int64_t> runs;
    for (size_t k = 0; k < choice.kernels().size(); ++k)
      runs.push_back(choice.Runs(static_cast<int>(k)));
    return runs;
  };
  for (const Layer& l : layers) {
    SCOPED_TRACE(l.data.ToString() + " " + l.weight.ToString());
    const std::vector<int64_t> data_runs = runs_of(data_choice),
                               weight_runs = runs_of(weight_choice);
    Invoke("_backward_Convolution",
           {NDArray::RandomUniform(l.out_grad, -1.f, 1.f),
            NDArray::RandomUniform(l.data, -1.f, 1.f),
            NDArray::RandomUniform(l.weight, -1.f, 1.f)},
           l.attrs);
    EXPECT_EQ(ran(data_choice, data_runs), l.data_kernel);
    EXPECT_EQ(ran(weight_choice, weight_runs), l.weight_kernel);
  }
}

// Backward data and backward weights on each of their kernels (oneDNN's backward primitives; its
// forward one on the rotated weights; products of the data's patches) against the float64
// kernel, at ResNet-like channel counts, with padding other than the window's half, a stride
// and a dilation.
TEST(ConvolutionGradient, EveryKernelMatchesFloat64) {
  struct Layer {
    AttrDict attrs;
    Shape out_grad, data, weight;
  };
  const std::vector<Layer> layers = {
      {{{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "64"}, {"no_bias", "True"}},
       {2, 64, 9, 9},
       {2, 80, 9, 9},
       {64, 80, 3, 3}},
      {{{"kernel", "(3, 3)"}, {"pad", "(2, 0)"}, {"num_filter", "96"}, {"no_bias", "True"}},
       {1, 96, 11, 5},
       {1, 64, 9, 7},
       {96, 64, 3, 3}},
      // More tiles (675) than a chunk of the Winograd kernels holds (672): two chunks.
      {{{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "16"}, {"no_bias", "True"}},
       {3, 16, 60, 60},
       {3, 16, 60, 60},
       {16, 16, 3, 3}},
      {{{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "256"}, {"no_bias", "True"}},
       {3, 256, 5, 5},
       {3, 256, 5, 5},
       {256, 256, 3, 3}},
      {{{"kernel", "(3, 2)"},
        {"pad", "(1, 0)"},
        {"stride", "(2, 1)"},
        {"dilate", "(1, 2)"},
        {"num_filter", "16"},
        {"no_bias", "True"}},
       {2, 16, 4, 5},
       {2, 8, 7, 7},
       {16, 8, 3, 2}},
  };
  // (choice, the gradient it writes: output 0 d data, 1 d weights)
  const std::pair<const char*, size_t> choices[] = {{"convolution_backward_data", 0},
                                                    {"convolution_backward_weights", 1}};
  for (const Layer& l : layers) {
    SCOPED_TRACE(l.data.ToString());
    const std::vector<NDArray> in32 = {NDArray::RandomUniform(l.out_grad, -1.f, 1.f),
                                       NDArray::RandomUniform(l.data, -1.f, 1.f),
                                       NDArray::RandomUniform(l.weight, -1.f, 1.f)};
    std::vector<NDArray> in64;
    for (const NDArray& a : in32) in64.push_back(a.AsType(DType::kFloat64));
    const std::vector<NDArray> want = Invoke("_backward_Convolution", in64, l.attrs);
    for (const auto& [family, output] : choices) {
      internal::KernelChoice& choice = internal::KernelChoiceOf(family);
      for (int kernel = 0; kernel < static_cast<int>(choice.kernels().size()); ++kernel) {
        SCOPED_TRACE(choice.kernels()[static_cast<size_t>(kernel)].name);
        const int64_t runs = choice.Runs(kernel);
        choice.Force(kernel);
        std::vector<NDArray> got;
        try {
          got = Invoke("_backward_Convolution", in32, l.attrs);
        } catch (const Error& e) {
          choice.Force(-1);
          // The stride leaves the rotated forward out: the one kernel that may not take a layer.
          EXPECT_NE(std::string(e.what()).find("does not take"), std::string::npos) << e.what();
          continue;
        }
        choice.Force(-1);
        EXPECT_EQ(choice.Runs(kernel), runs + 1);
        ASSERT_EQ(got[output].shape(), want[output].shape());
        const auto [largest, worst] = testing_util::CompareToFloat64(got[output], want[output]);
        EXPECT_GT(largest, 1.0);
        // Winograd's kernels round more (kernels/convolution_winograd.h): their own bound.
        const bool winograd = choice.kernels()[static_cast<size_t>(kernel)].name == "winograd";
        EXPECT_LE(worst, (winograd ? testing_util::kWinogradRelativeBound : 1e-5) * largest);
      }
    }
  }
}

TEST(PoolingGradient, MaxGoesToTheFirstMaximumOfItsWindow) {
  // Windows (2, 2), stride 1 over [[1, 3, 3], [3, 2, 3]]: both windows' maxima are 3, first
  // at (0, 1) in row-major order for each.
  const float x[] = {1, 3, 3, 3, 2, 3};
  const float dy[] = {1, 10};
  const NDArray data = NDArray::FromBuffer({1, 1, 2, 3}, DType::kFloat32, x);
  const AttrDict attrs = {{"kernel", "(2, 2)"}};
  const NDArray y = Invoke("Pooling", {data}, attrs)[0];
  const NDArray out_grad = NDArray::FromBuffer({1, 1, 1, 2}, DType::kFloat32, dy);
  const NDArray dx = Invoke("_backward_Pooling", {out_grad, data, y}, attrs)[0];
  const float want[] = {0, 11, 0, 0, 0, 0};
  EXPECT_EQ(BitDifference(dx, NDArray::FromBuffer({1, 1, 2, 3}, DType::kFloat32, want)), "");
}

TEST(PoolingGradient, EveryMaxKernelGivesTheSameBitsOnTies) {
  // Small integers: most windows hold their maximum more than once. Rows of 70 give the
  // channel-first AVX-512 kernel whole and partial blocks of 16 windows (strides 1 and 2 load, 3
  // gathers); 20 channels give the channel-last one a whole and a partial block of 16 channels.
  // The channel-last data is the channel-first data transposed, and every kernel, of either
  // layout, must give the same bits.
  std::mt19937 rng(5);
  std::vector<float> values(2 * 20 * 9 * 70);
  for (float& v : values) v = static_cast<float>(std::uniform_int_distribution<int>(0, 3)(rng));
  const NDArray data = NDArray::FromBuffer({2, 20, 9, 70}, DType::kFloat32, values.data());
  const AttrDict to_last = {{"axes", "(0, 2, 3, 1)"}}, to_first = {{"axes", "(0, 3, 1, 2)"}};
  const NDArray data_last = Invoke("transpose", {data}, to_last)[0];
  internal::KernelChoice& choice = internal::KernelChoiceOf("pooling_backward");
  for (int stride : {1, 2, 3}) {
    SCOPED_TRACE("stride " + std::to_string(stride));
    const std::string s = "(" + std::to_string(stride) + ", " + std::to_string(stride) + ")";
    const AttrDict attrs = {{"kernel", "(3, 3)"}, {"stride", s}, {"pad", "(1, 1)"}};
    AttrDict attrs_last = attrs;
    attrs_last["layout"] = "NHWC";
    const NDArray y = Invoke("Pooling", {data}, attrs)[0];
    const NDArray y_last = Invoke("Pooling", {data_last}, attrs_last)[0];
    const NDArray out_grad = NDArray::RandomUniform(y.shape(), -1.f, 1.f);
    const NDArray out_grad_last = Invoke("transpose", {out_grad}, to_last)[0];
    std::vector<std::string> ran;
    std::vector<NDArray> grads;  // channel-first
    for (size_t k = 0; k < choice.kernels().size(); ++k) {
      if (!choice.kernels()[k].runs_here) continue;
      const std::string& name = choice.kernels()[k].name;
      choice.Force(static_cast<int>(k));
      if (name != "max_channel_last") {
        grads.push_back(Invoke("_backward_Pooling", {out_grad, data, y}, attrs)[0]);
        ran.push_back(name + " on NCHW");
      }
      if (name != "max_channel_first") {
        const NDArray dx_last =
            Invoke("_backward_Pooling", {out_grad_last, data_last, y_last}, attrs_last)[0];
        grads.push_back(Invoke("transpose", {dx_last}, to_first)[0]);
        ran.push_back(name + " on NHWC");
      }
      choice.Force(-1);
    }
    ASSERT_GE(grads.size(), 2u);
    for (size_t k = 1; k < grads.size(); ++k) {
      EXPECT_EQ(BitDifference(grads[0], grads[k]), "") << ran[k] << " against " << ran[0];
    }
  }
}

// A small network's layers: Convolution, relu, max Pooling, Deconvolution, avg Pooling,
// FullyConnected.
struct Layer {
  std::string op;
  AttrDict attrs;
  size_t params;  // inputs after the data: weight[, bias]
};

const std::vector<Layer>& SmallNetwork() {
  static const std::vector<Layer> layers = {
      {"Convolution", {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "8"}}, 2},
      {"Activation", {{"act_type", "relu"}}, 0},
      {"Pooling", {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}}, 0},
      {"Deconvolution",
       {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"num_filter", "4"}, {"no_bias", "False"}},
       2},
      {"Pooling", {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pool_type", "avg"}}, 0},
      {"FullyConnected", {{"num_hidden", "5"}}, 2},
  };
  return layers;
}

TEST(ConvolutionGradient, NetworkGraphGradientsAreEagerBackwardsBits) {
  // The parameters' shapes for data (2, 3, 10, 10).
  const std::vector<std::vector<Shape>> param_shapes = {{{8, 3, 3, 3}, {8}}, {}, {},
                                                        {{8, 4, 2, 2}, {4}}, {}, {{5, 64}, {5}}};
  std::vector<NDArray> values = {NDArray::RandomUniform({2, 3, 10, 10}, -1.f, 1.f)};
  std::vector<Symbol> vars = {Symbol::Var("data")};
  std::vector<std::string> names = {"data"};
  for (size_t l = 0; l < param_shapes.size(); ++l) {
    for (size_t i = 0; i < param_shapes[l].size(); ++i) {
      names.push_back("p" + std::to_string(l) + "_" + std::to_string(i));
      vars.push_back(Symbol::Var(names.back()));
      values.push_back(NDArray::RandomUniform(param_shapes[l][i], -0.5f, 0.5f));
    }
  }
  const NDArray head_grad = NDArray::RandomUniform({2, 5}, -1.f, 1.f);

  // Eager: recorded op by op, then backward.
  std::vector<NDArray> eager_vars;
  for (const NDArray& v : values) {
    eager_vars.push_back(v.Copy());
    autograd::AttachGrad(&eager_vars.back());
  }
  NDArray y;
  {
    auto recording = autograd::Record(/*train_mode=*/false);
    NDArray x = eager_vars[0];
    size_t next = 1;
    for (const Layer& layer : SmallNetwork()) {
      std::vector<NDArray> in = {x};
      for (size_t i = 0; i < layer.params; ++i) in.push_back(eager_vars[next++]);
      x = Invoke(layer.op, in, layer.attrs)[0];
    }
    y = x;
  }
  autograd::Backward({y}, {head_grad}, /*retain_graph=*/false, /*train_mode=*/false);

  // Graph: the gradient pass over the same network, fused and unfused.
  Symbol x = vars[0];
  size_t next = 1;
  for (const Layer& layer : SmallNetwork()) {
    std::vector<Symbol> in = {x};
    for (size_t i = 0; i < layer.params; ++i) in.push_back(vars[next++]);
    x = Symbol::Create(layer.op, in, layer.attrs);
  }
  const Symbol head = Symbol::Var("head_grad");
  std::vector<NodeEntry> xs;
  for (const Symbol& v : vars) xs.push_back(v.outputs[0]);
  Symbol gradients;
  gradients.outputs = internal::Gradient({x.outputs[0]}, {head.outputs[0]}, xs);
  const std::vector<std::string> inputs = gradients.ListInputs();
  std::vector<NDArray> feed;
  for (const std::string& name : inputs) {
    if (name == "head_grad") {
      feed.push_back(head_grad);
      continue;
    }
    const auto at = std::find(names.begin(), names.end(), name);
    ASSERT_NE(at, names.end()) << name;
    feed.push_back(values[static_cast<size_t>(at - names.begin())]);
  }
  for (bool fuse : {true, false}) {
    SCOPED_TRACE(fuse ? "fused" : "unfused");
    ExecutorOptions options;
    options.fuse = fuse;
    GraphExecutor exec(gradients, inputs, {}, options);
    const std::vector<NDArray> graph = exec.Forward(feed);
    ASSERT_EQ(graph.size(), eager_vars.size());
    for (size_t i = 0; i < graph.size(); ++i) {
      EXPECT_EQ(BitDifference(autograd::GetGrad(eager_vars[i]), graph[i]), "") << names[i];
    }
  }
}

// The data of a first layer is a constant: the gradient pass marks the convolution's data
// gradient unread, its kernel skips it, and the weight and bias gradients keep their bits.
TEST(ConvolutionGradient, AConstantsGradientIsSkippedAndTheOthersKeepTheirBits) {
  const Symbol data = Symbol::Var("data"), weight = Symbol::Var("weight"),
               bias = Symbol::Var("bias"), head = Symbol::Var("head_grad");
  const Symbol y = Symbol::Create(
      "Convolution", {data, weight, bias},
      {{"kernel", "(7, 7)"}, {"stride", "(2, 2)"}, {"pad", "(3, 3)"}, {"num_filter", "16"}});
  const std::map<std::string, NDArray> values = {
      {"data", NDArray::RandomUniform({2, 3, 32, 32}, -1.f, 1.f)},
      {"weight", NDArray::RandomUniform({16, 3, 7, 7}, -0.5f, 0.5f)},
      {"bias", NDArray::RandomUniform({16}, -0.5f, 0.5f)},
      {"head_grad", NDArray::RandomUniform({2, 16, 16, 16}, -1.f, 1.f)}};
  std::vector<std::vector<NDArray>> results;
  for (const bool with_data : {true, false}) {
    std::vector<NodeEntry> xs = {weight.outputs[0], bias.outputs[0]};
    if (with_data) xs.insert(xs.begin(), data.outputs[0]);
    Symbol gradients;
    gradients.outputs = internal::Gradient(y.outputs, head.outputs, xs);
    const NodeAttrs& backward = gradients.outputs.back().node->attrs;
    ASSERT_EQ(backward.op->name, "_backward_Convolution");
    EXPECT_EQ(internal::GradientOutputUnread(backward, 0), !with_data);
    EXPECT_FALSE(internal::GradientOutputUnread(backward, 1));
    EXPECT_FALSE(internal::GradientOutputUnread(backward, 2));
    const std::vector<std::string> inputs = gradients.ListInputs();
    std::vector<NDArray> feed;
    for (const std::string& name : inputs) feed.push_back(values.at(name));
    ExecutorOptions options;
    options.fuse = false;
    GraphExecutor exec(gradients, inputs, {}, options);
    std::vector<NDArray> grads = exec.Forward(feed);
    if (with_data) grads.erase(grads.begin());
    results.push_back(grads);
  }
  ASSERT_EQ(results[0].size(), 2u);
  ASSERT_EQ(results[1].size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(BitDifference(results[0][i], results[1][i]), "") << i;
}

}  // namespace
}  // namespace hybridnet
