// The loops of our own kernels over work items, split between the kernel threads
// (KernelThreads; static schedule: each thread takes consecutive items). An OpenMP region costs
// about 0.35 us even on one thread (libgomp, measured against the plain loop's 0.03), so on one
// thread, for one item, or where the caller finds the work too small to split, the loop runs on
// the calling thread.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "kernels/threads.h"

namespace hybridnet {
namespace internal {

template <typename Body>
void ParallelFor(int64_t count, bool worth_splitting, const Body& body) {
  const int threads = KernelThreads();
  if (threads <= 1 || count <= 1 || !worth_splitting) {
    for (int64_t i = 0; i < count; ++i) body(i);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < count; ++i) body(i);
}

/// The elements an elementwise loop gives each ParallelRanges item: 256 KiB of floats, enough to
/// outweigh the OpenMP region's cost.
constexpr int64_t kElementwiseRange = int64_t{1} << 16;

/// An elementwise loop over `count` elements split between the kernel threads: body(begin, end)
/// for consecutive ranges of kElementwiseRange (the last one shorter). Each element's result does
/// not depend on the split; under two ranges the loop runs on the calling thread.
template <typename Body>
void ParallelRanges(int64_t count, const Body& body) {
  const int64_t ranges = (count + kElementwiseRange - 1) / kElementwiseRange;
  ParallelFor(ranges, true, [&](int64_t r) {
    const int64_t begin = r * kElementwiseRange;
    body(begin, std::min(count, begin + kElementwiseRange));
  });
}

/// The calling thread's index within a ParallelFor (0 outside one, and when it runs on the calling
/// thread): which part of a per-thread workspace slot is its own.
inline int64_t ThreadIndex() { return omp_get_thread_num(); }

}  // namespace internal
}  // namespace hybridnet
