// Our Winograd kernel for 3x3 stride-1 convolutions (kernels/convolution_winograd.h): its error
// bound against float64, its bits at any thread count, and when it runs unforced.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
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

// The convolution kernel choice and the index of the Winograd kernel in it.
internal::KernelChoice& Convolutions() {
  for (internal::KernelChoice* choice : internal::KernelChoices()) {
    if (choice->family() == "convolution") return *choice;
  }
  throw std::runtime_error("no convolution kernel choice");
}

int WinogradIndex() {
  const auto& kernels = Convolutions().kernels();
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (kernels[k].name == "winograd") return static_cast<int>(k);
  }
  throw std::runtime_error("no winograd convolution kernel");
}

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

// max |got - want| / max |want| over the arrays.
double RelativeToLargest(const NDArray& got, const NDArray& want) {
  const NDArray got64 = got.AsType(DType::kFloat64);
  const double* a = want.data<double>();
  const double* b = got64.data<double>();
  double largest = 0.0, worst = 0.0;
  for (int64_t i = 0; i < want.size(); ++i) {
    largest = std::max(largest, std::fabs(a[i]));
    worst = std::max(worst, std::fabs(a[i] - b[i]));
  }
  return worst / largest;
}

TEST(WinogradConvolution, WithinItsBoundOfFloat64AndTheSameBitsAtAnyThreadCount) {
  if (!internal::CpuHasAvx2()) GTEST_SKIP() << "the Winograd kernel needs AVX2 and FMA";
  // Sides that are no multiples of the 4x4 tiles, one sample and several, channel counts from
  // the smallest it takes to ResNet's.
  const std::vector<Layer> layers = {{2, 8, 16, 7, 6, true},
                                     {3, 16, 24, 9, 4, false},
                                     {1, 64, 64, 14, 14, true},
                                     {1, 256, 256, 5, 5, false}};
  internal::KernelChoice& choice = Convolutions();
  const int winograd = WinogradIndex();
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
    EXPECT_LE(RelativeToLargest(got[0], want), testing_util::kWinogradRelativeBound);
    EXPECT_EQ(BitDifference(got[0], got[1]), "") << "1 thread against 2";
  }
}

// Unforced, on an AVX2 CPU without AVX-512: training's convolutions of 32 channels in and out or
// more run it, inference's keep oneDNN's direct kernels (fast_math aside: ConvolutionFusion's
// test).
TEST(WinogradConvolution, TrainingRunsItWhereItPaysAndInferenceDoesNot) {
  if (internal::CpuHasAvx512() || !internal::CpuHasAvx2()) {
    GTEST_SKIP() << "the rule pinned here is that of AVX2 CPUs without AVX-512";
  }
  internal::KernelChoice& choice = Convolutions();
  const int winograd = WinogradIndex();
  const Layer wide = {2, 32, 64, 8, 8, true}, narrow = {2, 16, 64, 8, 8, true};
  auto runs_for = [&](const Layer& l, bool training) {
    const std::vector<NDArray> in = LayerInputs(l);
    autograd::ModeScope mode(std::nullopt, training);
    const int64_t runs = choice.Runs(winograd);
    Invoke("Convolution", in, ThreeByThree(l));
    return choice.Runs(winograd) - runs;
  };
  EXPECT_EQ(runs_for(wide, true), 1);
  EXPECT_EQ(runs_for(wide, false), 0);
  EXPECT_EQ(runs_for(narrow, true), 0);  // 16 input channels: the products are too short
}

}  // namespace
}  // namespace hybridnet
