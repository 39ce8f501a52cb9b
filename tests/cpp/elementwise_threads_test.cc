// Elementwise ops on arrays long enough to be split between threads (ParallelRanges,
// kernels/parallel-inl.h): every element gets its formula's float result, whatever the thread
// count and wherever the ranges end.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "hybridnet/imperative.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/operators.h"

namespace hybridnet {
namespace {

TEST(ElementwiseThreads, SplitArraysGiveEachElementItsFormula) {
  const int64_t n = 3 * 65536 + 5;  // three full ranges and a short one
  const NDArray a = NDArray::RandomUniform({n}, -1.f, 1.f);
  const NDArray b = NDArray::RandomUniform({n}, -1.f, 1.f);
  const NDArray c = NDArray::RandomUniform({n}, -1.f, 1.f);
  const std::vector<float> av = a.ToFloatVector(), bv = b.ToFloatVector(), cv = c.ToFloatVector();
  const int threads = GetNumThreads();
  for (int t : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << t << " threads");
    SetNumThreads(t);
    const NDArray relu = op::Call("Activation", {a}, {{"act_type", "relu"}});
    const std::vector<float> sum = op::Call("elemwise_add", {a, b}).ToFloatVector();
    const std::vector<float> sum3 =
        op::Call("add_n", {a, b, c}, {{"num_args", "3"}}).ToFloatVector();
    const std::vector<float> relu_v = relu.ToFloatVector();
    const std::vector<float> grad = op::Call("_backward_relu", {b, relu}).ToFloatVector();
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float r = av[i] > 0.f ? av[i] : 0.f;
      wrong += sum[i] != av[i] + bv[i];
      wrong += sum3[i] != (av[i] + bv[i]) + cv[i];
      wrong += relu_v[i] != r;
      wrong += grad[i] != bv[i] * (r > 0.f ? 1.f : 0.f);
    }
    EXPECT_EQ(wrong, 0);
  }
  SetNumThreads(threads);
}

}  // namespace
}  // namespace hybridnet
