// Our Winograd kernel for 3x3 stride-1 convolutions (kernels/convolution_winograd.h): its error
// bound against float64, its bits at any thread count, and when it runs unforced.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
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
    // The pass each family computes: the other output comes from that pass's usual kernel
    // (oneDNN's, whose sums split by thread count, where Winograd does not pay).
    const std::pair<const char*, size_t> passes[] = {{"convolution_backward_data", 0},
                                                     {"convolution_backward_weights", 1}};
    for (const auto& [family, output] : passes) {
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
      EXPECT_EQ(BitDifference(got[0][output], got[1][output]), "") << "1 thread against 2";
    }
  }
}

// Unforced: training's convolutions run it where it was measured to pay (on AVX2 CPUs without
// AVX-512 from 16 channels in and out; on AVX-512 ones from 32 to 256),
// inference's keep oneDNN's direct kernels (fast_math aside: ConvolutionFusion's test).
TEST(WinogradConvolution, TrainingRunsItWhereItPaysAndInferenceDoesNot) {
  if (!internal::CpuHasAvx2()) GTEST_SKIP() << "the Winograd kernel needs AVX2 and FMA";
  internal::KernelChoice& choice = internal::KernelChoiceOf("convolution");
  const int winograd = choice.IndexOf("winograd");
  auto runs_for = [&](const Layer& l, bool training) {
    const std::vector<NDArray> in = LayerInputs(l);
    autograd::ModeScope mode(std::nullopt, training);
    const int64_t runs = choice.Runs(winograd);
    Invoke("Convolution", in, ThreeByThree(l));
    return choice.Runs(winograd) - runs;
  };
  const bool avx512 = internal::CpuHasAvx512();
  const Layer sixteen = {2, 16, 64, 8, 8, true}, wide = {2, 32, 64, 8, 8, true},
              wider = {2, 128, 128, 8, 8, true}, widest = {1, 512, 512, 4, 4, true},
              narrow = {2, 8, 64, 8, 8, true};
  EXPECT_EQ(runs_for(wide, true), 1);
  EXPECT_EQ(runs_for(wider, true), 1);
  EXPECT_EQ(runs_for(wide, false), 0);
  EXPECT_EQ(runs_for(sixteen, true), avx512 ? 0 : 1);
  EXPECT_EQ(runs_for(widest, true), avx512 ? 0 : 1);  // oneDNN's Winograd there (below)
  EXPECT_EQ(runs_for(narrow, true), 0);  // 8 input channels: not measured to pay
}

// On AVX-512 CPUs training's 3x3 convolutions of more than 256 channels run oneDNN's Winograd
// kernels in all three passes: their results differ from the direct kernels' (inference's)
// and stay within Winograd's bound of float64.
TEST(WinogradConvolution, TrainingRunsOneDnnsWinogradOnAvx512) {
  if (!internal::CpuHasAvx512()) GTEST_SKIP() << "oneDNN has Winograd kernels for AVX-512 only";
  const Layer l = {1, 512, 512, 7, 7, false};
  const std::vector<NDArray> in = LayerInputs(l);
  std::vector<NDArray> in64;
  for (const NDArray& a : in) in64.push_back(a.AsType(DType::kFloat64));
  const NDArray dy = NDArray::RandomUniform({l.N, l.F, l.H, l.W}, -1.f, 1.f);
  const std::vector<NDArray> grad_in = {dy, in[0], in[1]};
  const std::vector<NDArray> grad_in64 = {dy.AsType(DType::kFloat64), in64[0], in64[1]};
  std::vector<NDArray> trained, inferred;
  for (bool training : {true, false}) {
    autograd::ModeScope mode(std::nullopt, training);
    std::vector<NDArray>& got = training ? trained : inferred;
    got.push_back(Invoke("Convolution", in, ThreeByThree(l))[0]);
  }
  // Gradients are training's whatever the mode: the float64 sums are their reference.
  for (const NDArray& g : Invoke("_backward_Convolution", grad_in, ThreeByThree(l))) {
    trained.push_back(g);
  }
  std::vector<NDArray> want = Invoke("_backward_Convolution", grad_in64, ThreeByThree(l));
  want.insert(want.begin(), Invoke("Convolution", in64, ThreeByThree(l))[0]);
  EXPECT_NE(BitDifference(trained[0], inferred[0]), "") << "training ran the direct kernel";
  // The backward passes on oneDNN's direct channel-last kernels, forced, for the same contrast.
  const std::pair<const char*, const char*> direct_kernels[] = {
      {"convolution_backward_data", "onednn_backward_data"},
      {"convolution_backward_weights", "onednn_backward_weights"}};
  std::vector<internal::KernelChoice*> forced;
  for (const auto& [family, kernel] : direct_kernels) {
    forced.push_back(&internal::KernelChoiceOf(family));
    forced.back()->Force(forced.back()->IndexOf(kernel));
  }
  const std::vector<NDArray> direct = Invoke("_backward_Convolution", grad_in, ThreeByThree(l));
  for (internal::KernelChoice* choice : forced) choice->Force(-1);
  EXPECT_NE(BitDifference(trained[1], direct[0]), "") << "backward data ran the direct kernel";
  EXPECT_NE(BitDifference(trained[2], direct[1]), "") << "backward weights ran the direct kernel";
  for (size_t o = 0; o < want.size(); ++o) {
    SCOPED_TRACE("output " + std::to_string(o) + " (forward, backward data, backward weights)");
    const auto [largest, worst] = testing_util::CompareToFloat64(trained[o], want[o]);
    EXPECT_LE(worst, testing_util::kWinogradRelativeBound * largest);
  }
}

}  // namespace
}  // namespace hybridnet
