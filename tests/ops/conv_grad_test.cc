// The gradients of Convolution, Deconvolution and Pooling beyond the conformance cases: the same
// inputs give the same bits on every call at each thread count (oneDNN's backward primitives
// reduce their threads' partial sums in a fixed order), and max pooling's gradient goes to the
// first maximum of a window, as MXNet's unpooling routes it, on every kernel.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/imperative.h"
#include "kernels/kernel_choice.h"

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
  // Small integers: most windows hold their maximum more than once. Rows of 70 give the AVX-512
  // kernel whole and partial blocks of 16 windows; strides 1 and 2 load, 3 gathers.
  std::mt19937 rng(5);
  std::vector<float> values(2 * 3 * 9 * 70);
  for (float& v : values) v = static_cast<float>(std::uniform_int_distribution<int>(0, 3)(rng));
  const NDArray data = NDArray::FromBuffer({2, 3, 9, 70}, DType::kFloat32, values.data());
  internal::KernelChoice* found = nullptr;
  for (internal::KernelChoice* c : internal::KernelChoices()) {
    if (c->family() == "pooling_backward") found = c;
  }
  ASSERT_NE(found, nullptr);
  internal::KernelChoice& choice = *found;
  for (int stride : {1, 2, 3}) {
    SCOPED_TRACE("stride " + std::to_string(stride));
    const std::string s = "(" + std::to_string(stride) + ", " + std::to_string(stride) + ")";
    const AttrDict attrs = {{"kernel", "(3, 3)"}, {"stride", s}, {"pad", "(1, 1)"}};
    const NDArray y = Invoke("Pooling", {data}, attrs)[0];
    const NDArray out_grad = NDArray::RandomUniform(y.shape(), -1.f, 1.f);
    std::vector<NDArray> grads;
    for (size_t k = 0; k < choice.kernels().size(); ++k) {
      if (!choice.kernels()[k].runs_here) continue;
      choice.Force(static_cast<int>(k));
      grads.push_back(Invoke("_backward_Pooling", {out_grad, data, y}, attrs)[0]);
      choice.Force(-1);
    }
    for (size_t k = 1; k < grads.size(); ++k) EXPECT_EQ(BitDifference(grads[0], grads[k]), "");
  }
}

}  // namespace
}  // namespace hybridnet
