// The double sum of a contiguous float line in one fixed order, shared by sum/mean along the
// innermost axis (reduce.cc) and the fused log_softmax-label-sum of training graphs (softmax.cc),
// which must give sum's bits.
#pragma once

#include <cstdint>

#include "kernels/vector_isa.h"

namespace hybridnet {
namespace internal {

// Element i goes into lane i % kSumLanes, then the lanes are added pairwise. One order on every
// CPU and thread count; a sum chained through one double took 3% of an LSTM LM's training step
// (its loss sums 700 lines of 10000). Always inlined, so that it compiles for the ISA of its
// caller (LineSumOn).
constexpr int kSumLanes = 16;

__attribute__((always_inline)) inline double LineSum(const float* x, int64_t n) {
  double lanes[kSumLanes] = {};
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
#pragma omp simd
    for (int l = 0; l < kSumLanes; ++l) lanes[l] += static_cast<double>(x[i + l]);
  }
  for (int l = 0; i < n; ++i, ++l) lanes[l] += static_cast<double>(x[i]);
  for (int width = kSumLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

/// LineSum compiled for `isa` (reduce.cc), which this CPU must run (ChooseVectorIsa): the same
/// bits on every ISA.
double LineSumOn(VectorIsa isa, const float* x, int64_t n);

}  // namespace internal
}  // namespace hybridnet
