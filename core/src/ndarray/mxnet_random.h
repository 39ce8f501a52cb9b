// Draws that repeat MXNet 1.x's CPU sampling streams (mx.nd.random.uniform/normal after
// mx.random.seed), so initializers give MXNet's exact weights for the same seed. MXNet keeps
// 1024 std::mt19937 states seeded with seed * 127 + i; a draw of n values splits them into
// min(ceil(n / 64), 1024) equal consecutive chunks, chunk t drawing from state t, and the states
// carry on into the next draw. Uniform is std::uniform_real_distribution and normal the first
// value of a fresh std::normal_distribution per element, in float for float32 outputs and in
// double otherwise. Seed() restarts these states too.
#pragma once

#include "hybridnet/ndarray.h"

namespace hybridnet {
namespace internal {

/// U(low, high) of `shape` and `dtype` (floating point) from MXNet's streams.
NDArray MXNetRandomUniform(const Shape& shape, float low, float high, DType dtype);
/// N(mean, sigma) of `shape` and `dtype` (floating point) from MXNet's streams.
NDArray MXNetRandomNormal(const Shape& shape, float mean, float sigma, DType dtype);

}  // namespace internal
}  // namespace hybridnet
