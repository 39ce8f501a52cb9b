// Gradients of the tensor ops where the conformance harness's finite differences cannot look:
// NaN inputs (nansum, nanprod), inputs exactly at clip's bounds, constant padding with a nonzero
// value, repeated and out-of-range Embedding rows. Expected values are MXNet 1.9.1's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "hybridnet/autograd.h"
#include "hybridnet/imperative.h"

namespace hybridnet {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

// The gradient of input `wrt` of `op` for an output gradient of ones.
std::vector<float> GradientOf(const std::string& op, std::vector<NDArray> inputs, size_t wrt,
                              const AttrDict& attrs = {}) {
  autograd::AttachGrad(&inputs[wrt]);
  std::vector<NDArray> outputs;
  {
    auto recording = autograd::Record();
    outputs = Invoke(op, inputs, attrs);
  }
  autograd::Backward({outputs[0]}, {NDArray::Ones(outputs[0].shape())});
  return autograd::GetGrad(inputs[wrt]).ToFloatVector();
}

TEST(TensorGradient, NansumPassesNothingToNaN) {
  NDArray x = NDArray::FromVector({2, 2}, {1.f, kNaN, 3.f, 4.f});
  EXPECT_EQ(GradientOf("nansum", {x}, 0, {{"axis", "1"}}),
            (std::vector<float>{1.f, 0.f, 1.f, 1.f}));
}

TEST(TensorGradient, NanprodPassesNothingToNaN) {
  // Row products without the NaN: 2 and 12; d/dx = product / x.
  NDArray x = NDArray::FromVector({2, 2}, {2.f, kNaN, 3.f, 4.f});
  EXPECT_EQ(GradientOf("nanprod", {x}, 0, {{"axis", "1"}}),
            (std::vector<float>{1.f, 0.f, 4.f, 3.f}));
}

TEST(TensorGradient, ClipPassesAtItsBounds) {
  NDArray x = NDArray::FromVector({5}, {-1.f, -0.5f, 0.f, 0.5f, 1.f});
  EXPECT_EQ(GradientOf("clip", {x}, 0, {{"a_min", "-0.5"}, {"a_max", "0.5"}}),
            (std::vector<float>{0.f, 1.f, 1.f, 1.f, 0.f}));
}

TEST(TensorGradient, ConstantPaddingGetsNoGradient) {
  NDArray x = NDArray::FromVector({1, 1, 1, 2}, {5.f, 6.f});
  // Every output element is the constant or a copy of one input element.
  EXPECT_EQ(GradientOf("Pad", {x}, 0,
                       {{"mode", "constant"},
                        {"constant_value", "7"},
                        {"pad_width", "(0, 0, 0, 0, 1, 1, 2, 2)"}}),
            (std::vector<float>{1.f, 1.f}));
  // Edge padding: the border elements are copied into the padding too (3 x 3 copies each).
  EXPECT_EQ(
      GradientOf("Pad", {x}, 0, {{"mode", "edge"}, {"pad_width", "(0, 0, 0, 0, 1, 1, 2, 2)"}}),
      (std::vector<float>{9.f, 9.f}));
}

TEST(TensorGradient, EmbeddingAddsRepeatedAndClippedRows) {
  // Rows read: 1, 1, 0 (from -3), 2 (from 9, clipped), 2 (from 2.7, truncated).
  NDArray data = NDArray::FromVector({5}, {1.f, 1.f, -3.f, 9.f, 2.7f});
  NDArray weight = NDArray::Zeros({3, 2});
  EXPECT_EQ(GradientOf("Embedding", {data, weight}, 1, {{"input_dim", "3"}, {"output_dim", "2"}}),
            (std::vector<float>{1.f, 1.f, 2.f, 2.f, 2.f, 2.f}));
}

TEST(TensorGradient, TakeWrapsIndicesAsTheForward) {
  // axis 1 of (2, 3), mode wrap: -1 -> 2, 4 -> 1, 1 -> 1.
  NDArray a = NDArray::Zeros({2, 3});
  NDArray indices = NDArray::FromVector({3}, {-1.f, 4.f, 1.f});
  EXPECT_EQ(GradientOf("take", {a, indices}, 0, {{"axis", "1"}, {"mode", "wrap"}}),
            (std::vector<float>{0.f, 2.f, 1.f, 0.f, 2.f, 1.f}));
}

}  // namespace
}  // namespace hybridnet
