// Our Winograd kernel for 3x3 stride-1 convolutions (kernels/convolution_winograd.h): its error
// bound against float64, its bits at any thread count, and when it runs unforced.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/autograd.h"
#include "hybridnet/imperative.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/kernel_choice.h"

namespace hybridnet {
namespace {

using testing_util::BitDifference;

struct Layer {
  int64_t N, C, F, H, W;
  bool bias;
};

AttrDict ThreeByThree(const Layer& l) {
  return {{"kernel", "(3, 3)"},
          {"pad", "(1, 1)"},
          {"num_filter", std::to_string(l.F)},
          {"no_bias", l.bias ? "False" : "True"}};
}

std::vector<NDArray> LayerInputs(const Layer& l) {
  std::vector<NDArray> in = {NDArray::RandomUniform({l.N, l.C, l.H, l.W}, -1.f, 1.f),
                             NDArray::RandomUniform({l.F, l.C, 3, 3}, -1.f, 1.f)};
  if (l.bias) in.push_back(NDArray::RandomUniform({l.F}, -1.f, 1.f));
  return in;
}

TEST(WinogradConvolution, WithinItsBoundOfFloat64AndTheSameBitsAtAnyThreadCount) {
  if (!internal::CpuHasAvx2()) GTEST_SKIP() << "the Winograd kernel needs AVX2 and FMA";
  // Sides that are no multiples of the 4x4 tiles, one sample and several, channel counts from
  // the smallest it takes to ResNet's.
  const std::vector<Layer> layers = {{2, 8, 16, 7, 6, true},
                                     {3, 16, 24, 9, 4, false},
                                     {1, 64, 64, 14, 14, true},
                                     {1, 256, 256, 5, 5, false}};
  internal::KernelChoice& choice = internal::KernelChoiceOf("convolution");
  const int winograd = choice.IndexOf("winograd");
  const int before = GetNumThreads();
  for (const Layer& l : layers) {
    SCOPED_TRACE("C " + std::to_string(l.C) + " F " + std::to_string(l.F) + " " +
                 std::to_string(l.H) + "x" + std::to_string(l.W));
    const std::vector<NDArray> in = LayerInputs(l);
    std::vector<NDArray> in64;
    for (const NDArray& a : in) in64.push_back(a.AsType(DType::kFloat64));
    const NDArray want = Invoke("Convolution", in64, ThreeByThree(l))[0];
    std::vector<NDArray> got;
    choice.Force(winograd);
    for (int threads : {1, 2}) {
      SetNumThreads(threads);
      const int64_t runs = choice.Runs(winograd);
      got.push_back(Invoke("Convolution", in, ThreeByThree(l))[0]);
      EXPECT_EQ(choice.Runs(winograd), runs + 1);
    }
    choice.Force(-1);
    SetNumThreads(before);
    const auto [largest, worst] = testing_util::CompareToFloat64(got[0], want);
    EXPECT_LE(worst, testing_util::kWinogradRelativeBound * largest);
    EXPECT_EQ(BitDifference(got[0], got[1]), "") << "1 thread against 2";
  }
}

// The gradient passes give the same bits at 1 and 2 threads too, on layers of more tiles than
// a chunk holds (the weight gradient sums chunk by chunk) and of small and large products.
TEST(WinogradConvolution, GradientsHaveTheSameBitsAtAnyThreadCount) {
  if (!internal::CpuHasAvx2()) GTEST_SKIP() << "the Winograd kernel needs AVX2 and FMA";
  const std::vector<Layer> layers = {{3, 16, 16, 60, 60, false},
                                     {4, 64, 32, 28, 28, false},
                                     {2, 128, 128, 30, 30, false}};
  const int before = GetNumThreads();
  for (const Layer& l : layers) {
    SCOPED_TRACE("C " + std::to_string(l.C) + " F " + std::to_string(l.F));
    const std::vector<NDArray> in = {NDArray::RandomUniform({l.N, l.F, l.H, l.W}, -1.f, 1.f),
                                     NDArray::RandomUniform({l.N, l.C, l.H, l.W}, -1.f, 1.f),
                                     NDArray::RandomUniform({l.F, l.C, 3, 3}, -1.f, 1.f)};
    for (const char* family : {"convolution_backward_data", "convolution_backward_weights"}) {
      SCOPED_TRACE(family);
      internal::KernelChoice& choice = internal::KernelChoiceOf(family);
      const int winograd = choice.IndexOf("winograd");
      choice.Force(winograd);
      std::vector<std::vector<NDArray>> got;
      for (int threads : {1, 2}) {
        SetNumThreads(threads);
        const int64_t runs = choice.Runs(winograd);
        got.push_back(Invoke("_backward_Convolution", in, ThreeByThree(l)));
        EXPECT_EQ(choice.Runs(winograd), runs + 1);
      }
      choice.Force(-1);
      SetNumThreads(before);
      for (size_t o = 0; o < 2; ++o) {
        EXPECT_EQ(BitDifference(got[0][o], got[1][o]), "") << "output " << o << ", 1 thread "
                                                           << "against 2";
      }
    }
  }
}

// Unforced, on an AVX2 CPU without AVX-512: training's convolutions of 16 channels in and out or
// more run it, inference's keep oneDNN's direct kernels (fast_math aside: ConvolutionFusion's
// test).
TEST(WinogradConvolution, TrainingRunsItWhereItPaysAndInferenceDoesNot) {
  if (internal::CpuHasAvx512() || !internal::CpuHasAvx2()) {
    GTEST_SKIP() << "the rule pinned here is that of AVX2 CPUs without AVX-512";
  }
  internal::KernelChoice& choice = internal::KernelChoiceOf("convolution");
  const int winograd = choice.IndexOf("winograd");
  const Layer wide = {2, 16, 64, 8, 8, true}, narrow = {2, 8, 64, 8, 8, true};
  auto runs_for = [&](const Layer& l, bool training) {
    const std::vector<NDArray> in = LayerInputs(l);
    autograd::ModeScope mode(std::nullopt, training);
    const int64_t runs = choice.Runs(winograd);
    Invoke("Convolution", in, ThreeByThree(l));
    return choice.Runs(winograd) - runs;
  };
  EXPECT_EQ(runs_for(wide, true), 1);
  EXPECT_EQ(runs_for(wide, false), 0);
  EXPECT_EQ(runs_for(narrow, true), 0);  // 8 input channels: not measured to pay
}

}  // namespace
}  // namespace hybridnet
