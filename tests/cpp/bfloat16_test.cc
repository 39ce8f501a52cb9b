// MXNet AMP's bfloat16 in the executor (pass/bfloat16.cc, kernels/onednn_convolution_bf16.h):
// convolutions with their data and weights rounded to bfloat16, float32 sums and tensors, as
// the conversion at load (ExecutorOptions::dtype) and as an AMP export (amp_cast to bfloat16,
// parameters stored in bfloat16) asks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/executor.h"
#include "hybridnet/ndarray.h"
#include "common/square_conv_spec.h"
#include "hybridnet/symbol.h"
#include "kernels/onednn.h"
#include "kernels/onednn_convolution_bf16.h"

namespace hybridnet {
namespace {

Symbol Op(const std::string& op, const std::vector<Symbol>& in, const AttrDict& attrs = {}) {
  return Symbol::Create(op, in, attrs);
}

NDArray Random(const Shape& shape, std::mt19937* rng, float low = -1.f, float high = 1.f) {
  NDArray a(shape);
  std::uniform_real_distribution<float> dist(low, high);
  float* v = a.data<float>();
  for (int64_t i = 0; i < a.shape().Size(); ++i) v[i] = dist(*rng);
  return a;
}

float Rounded(float x) { return BFloat16ToFloat(FloatToBFloat16(x)); }

NDArray ToBFloat16(const NDArray& a) {
  NDArray b(a.shape(), DType::kBFloat16);
  auto* bits = static_cast<uint16_t*>(b.raw_data());
  for (int64_t i = 0; i < a.shape().Size(); ++i) bits[i] = FloatToBFloat16(a.data<float>()[i]);
  return b;
}

const AttrDict kConv3x3{{"kernel", "(3, 3)"}, {"num_filter", "8"},  {"pad", "(1, 1)"},
                        {"num_group", "2"},   {"stride", "(2, 2)"}, {"no_bias", "False"}};

// A grouped, strided 3x3 convolution with bias, data (2, 4, 9, 9), weights (8, 2, 3, 3).
struct OneConvolution {
  Symbol symbol =
      Op("Convolution", {Symbol::Var("data"), Symbol::Var("w"), Symbol::Var("b")}, kConv3x3);
  std::mt19937 rng{7};
  NDArray x = Random(Shape{2, 4, 9, 9}, &rng);
  std::map<std::string, NDArray> params{{"w", Random(Shape{8, 2, 3, 3}, &rng)},
                                        {"b", Random(Shape{8}, &rng)}};
};

TEST(BFloat16Executor, ConvolutionRoundsDataAndWeightsOnly) {
  OneConvolution c;
  ExecutorOptions options;
  options.dtype = DType::kBFloat16;
  GraphExecutor exec(c.symbol, {"data"}, c.params, options);
  const NDArray y = exec.Forward({c.x})[0];
  EXPECT_EQ(exec.stats().num_bf16, 1u);
  ASSERT_EQ(y.dtype(), DType::kFloat32);
  ASSERT_EQ(y.shape(), (Shape{2, 8, 5, 5}));
  // The reference: the rounded data and weights, sums in double, the float32 bias.
  const float* x = c.x.data<float>();
  const float* w = c.params["w"].data<float>();
  const float* b = c.params["b"].data<float>();
  double worst = 0.0;
  for (int n = 0; n < 2; ++n)
    for (int f = 0; f < 8; ++f)
      for (int oh = 0; oh < 5; ++oh)
        for (int ow = 0; ow < 5; ++ow) {
          double sum = b[f];
          const int group = f / 4;
          for (int c2 = 0; c2 < 2; ++c2)
            for (int kh = 0; kh < 3; ++kh)
              for (int kw = 0; kw < 3; ++kw) {
                const int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
                if (ih < 0 || ih >= 9 || iw < 0 || iw >= 9) continue;
                const int ch = group * 2 + c2;
                sum += static_cast<double>(Rounded(x[((n * 4 + ch) * 9 + ih) * 9 + iw])) *
                       Rounded(w[((f * 2 + c2) * 3 + kh) * 3 + kw]);
              }
          const float got = y.data<float>()[((n * 8 + f) * 5 + oh) * 5 + ow];
          worst = std::max(worst, std::fabs(got - sum));
        }
  EXPECT_LT(worst, 1e-5) << "beyond float32 summation: not the rounded product";
  // And not float32's product: the rounding shows.
  GraphExecutor exact(c.symbol, {"data"}, c.params);
  const NDArray y32 = exact.Forward({c.x})[0];
  float diff = 0.f;
  for (int64_t i = 0; i < y.shape().Size(); ++i)
    diff = std::max(diff, std::fabs(y.data<float>()[i] - y32.data<float>()[i]));
  EXPECT_GT(diff, 1e-4f);
  EXPECT_LT(diff, 5e-2f);
}

// FullyConnected alone and fused with relu: the rounded product summed in double, plus the
// float32 bias, then relu; 4-D data flattened.
TEST(BFloat16Executor, DenseLayersRoundDataAndWeightsOnly) {
  std::mt19937 rng(5);
  const Symbol data = Symbol::Var("data");
  const Symbol fc0 =
      Op("FullyConnected", {data, Symbol::Var("w0"), Symbol::Var("b0")}, {{"num_hidden", "24"}});
  const Symbol relu = Op("Activation", {fc0}, {{"act_type", "relu"}});
  const Symbol fc1 =
      Op("FullyConnected", {relu, Symbol::Var("w1")}, {{"num_hidden", "5"}, {"no_bias", "True"}});
  std::map<std::string, NDArray> params{{"w0", Random(Shape{24, 18}, &rng)},
                                        {"b0", Random(Shape{24}, &rng)},
                                        {"w1", Random(Shape{5, 24}, &rng)}};
  const NDArray x = Random(Shape{3, 2, 3, 3}, &rng);
  ExecutorOptions options;
  options.dtype = DType::kBFloat16;
  GraphExecutor exec(fc1, {"data"}, params, options);
  const NDArray y = exec.Forward({x})[0];
  EXPECT_EQ(exec.stats().num_bf16, 2u);
  ASSERT_EQ(y.shape(), (Shape{3, 5}));
  double worst = 0.0;
  for (int n = 0; n < 3; ++n) {
    float hidden[24];
    for (int h = 0; h < 24; ++h) {
      double sum = params["b0"].data<float>()[h];
      for (int i = 0; i < 18; ++i) {
        sum += static_cast<double>(Rounded(x.data<float>()[n * 18 + i])) *
               Rounded(params["w0"].data<float>()[h * 18 + i]);
      }
      hidden[h] = std::max(static_cast<float>(sum), 0.f);
    }
    for (int o = 0; o < 5; ++o) {
      double sum = 0.0;
      for (int h = 0; h < 24; ++h) {
        sum += static_cast<double>(Rounded(hidden[h])) *
               Rounded(params["w1"].data<float>()[o * 24 + h]);
      }
      worst = std::max(worst, std::fabs(y.data<float>()[n * 5 + o] - sum));
    }
  }
  // float32 sums, and the hidden layer's float32 rounding carried through the second product.
  EXPECT_LT(worst, 1e-4) << "not the rounded products";
}

// Convolution + BatchNorm + residual add + relu, fused or not, eager-shaped (channel-first)
// or laid out channel-last: the same values within bfloat16's rounding of the folded weights.
TEST(BFloat16Executor, FusedResidualBlockStaysWithinBFloat16Rounding) {
  std::mt19937 rng(11);
  const Symbol data = Symbol::Var("data");
  const AttrDict conv{
      {"kernel", "(3, 3)"}, {"num_filter", "16"}, {"pad", "(1, 1)"}, {"no_bias", "True"}};
  const Symbol c0 = Op("Convolution", {data, Symbol::Var("w0")}, conv);
  const Symbol bn =
      Op("BatchNorm", {c0, Symbol::Var("g"), Symbol::Var("be"), Symbol::Var("m"), Symbol::Var("v")},
         {{"fix_gamma", "False"}});
  const Symbol r0 = Op("Activation", {bn}, {{"act_type", "relu"}});
  const Symbol c1 = Op("Convolution", {r0, Symbol::Var("w1")}, conv);
  const Symbol out = Op("Activation", {Op("elemwise_add", {c1, r0})}, {{"act_type", "relu"}});
  std::map<std::string, NDArray> params{{"w0", Random(Shape{16, 16, 3, 3}, &rng, -0.2f, 0.2f)},
                                        {"w1", Random(Shape{16, 16, 3, 3}, &rng, -0.2f, 0.2f)},
                                        {"g", Random(Shape{16}, &rng, 0.5f, 1.5f)},
                                        {"be", Random(Shape{16}, &rng)},
                                        {"m", Random(Shape{16}, &rng)},
                                        {"v", Random(Shape{16}, &rng, 0.5f, 1.5f)}};
  const NDArray x = Random(Shape{2, 16, 12, 12}, &rng);
  GraphExecutor exact(out, {"data"}, params);
  const NDArray y32 = exact.Forward({x})[0];
  float scale = 0.f;
  for (int64_t i = 0; i < y32.shape().Size(); ++i)
    scale = std::max(scale, std::fabs(y32.data<float>()[i]));
  for (bool fuse : {true, false}) {
    ExecutorOptions options;
    options.dtype = DType::kBFloat16;
    options.fuse = fuse;
    GraphExecutor exec(out, {"data"}, params, options);
    const NDArray y = exec.Forward({x})[0];
    EXPECT_EQ(exec.stats().num_bf16, 2u) << "fuse " << fuse;
    float diff = 0.f;
    for (int64_t i = 0; i < y.shape().Size(); ++i)
      diff = std::max(diff, std::fabs(y.data<float>()[i] - y32.data<float>()[i]));
    EXPECT_GT(diff, 0.f) << "fuse " << fuse;
    EXPECT_LT(diff, 2e-2f * scale) << "fuse " << fuse;
  }
}

// An AMP export: amp_cast to bfloat16 before the convolution, its weights stored in bfloat16,
// amp_cast back to float32 after; it runs its convolution in bfloat16 with no option, and gives
// the conversion's bits for the same (widened) weights.
TEST(BFloat16Executor, AmpExportRunsItsBFloat16Convolutions) {
  OneConvolution c;
  const Symbol amp = Op("amp_cast",
                        {Op("Convolution",
                            {Op("amp_cast", {Symbol::Var("data")}, {{"dtype", "bfloat16"}}),
                             Symbol::Var("w"), Symbol::Var("b")},
                            kConv3x3)},
                        {{"dtype", "float32"}});
  std::map<std::string, NDArray> stored{{"w", ToBFloat16(c.params["w"])},
                                        {"b", ToBFloat16(c.params["b"])}};
  GraphExecutor exported(amp, {"data"}, stored);
  const NDArray y = exported.Forward({c.x})[0];
  EXPECT_EQ(exported.stats().num_bf16, 1u);
  ASSERT_EQ(y.dtype(), DType::kFloat32);

  std::map<std::string, NDArray> widened{{"w", stored["w"].AsType(DType::kFloat32)},
                                         {"b", stored["b"].AsType(DType::kFloat32)}};
  ExecutorOptions options;
  options.dtype = DType::kBFloat16;
  GraphExecutor converted(c.symbol, {"data"}, widened, options);
  const NDArray z = converted.Forward({c.x})[0];
  ASSERT_EQ(y.shape(), z.shape());
  for (int64_t i = 0; i < y.shape().Size(); ++i)
    ASSERT_EQ(y.data<float>()[i], z.data<float>()[i]) << "at " << i;
}

TEST(BFloat16Executor, ImageNetworkShapesGetJitKernels) {
  // ResNet's 7x7 stem, a 3x3 with the residual add and relu, a strided 1x1 and MobileNet's 3x3
  // depthwise, at batch 8. Without bfloat16 kernels (CPUs without AVX-512) these run oneDNN's
  // float32 kernels on the rounded values; given a source layout of its choice it once took its
  // reference kernel there, 25 times slower than float32 on ResNet-18.
  struct Layer {
    int64_t C, F, G, k, stride, hw, residual;
  };
  const Layer layers[] = {{3, 64, 1, 7, 2, 224, 0},
                          {64, 64, 1, 3, 1, 56, 1},
                          {256, 512, 1, 1, 2, 28, 0},
                          {144, 144, 144, 3, 2, 56, 0}};
  for (const Layer& l : layers) {
    internal::ConvSpec s = testing_util::SquareConvSpec(8, l.C, l.F, l.G, l.k, l.stride, l.hw);
    s.bias = 1;
    s.residual = l.residual;
    s.relu = 1;
    const std::string impl = internal::Bf16ConvolutionImplementation(s);
    SCOPED_TRACE(impl + " on " + internal::OneDnnDescription() + ", layer C " +
                 std::to_string(l.C) + " F " + std::to_string(l.F) + " k " + std::to_string(l.k));
    EXPECT_EQ(impl.rfind("ref", 0), std::string::npos);
  }
}

TEST(BFloat16Executor, RefusesOtherDTypesAndTraining) {
  OneConvolution c;
  ExecutorOptions int8;
  int8.dtype = DType::kInt8;
  try {
    GraphExecutor(c.symbol, {"data"}, c.params, int8);
    FAIL() << "int8 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("int8"), std::string::npos) << e.what();
  }
  ExecutorOptions train;
  train.dtype = DType::kBFloat16;
  train.is_train = true;
  try {
    GraphExecutor(c.symbol, {"data"}, c.params, train);
    FAIL() << "training in bfloat16 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("inference"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hybridnet
