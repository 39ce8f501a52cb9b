#include "kernels/threads.h"

#include <omp.h>

#include <atomic>

#include "hybridnet/base.h"
#include "hybridnet/imperative.h"
#include "kernels/blas.h"
#include "kernels/onednn.h"

namespace hybridnet {
namespace internal {

namespace {
// 0 until SetKernelThreads: OpenMP's own default.
std::atomic<int> g_threads{0};
}  // namespace

void SetKernelThreads(int num_threads) {
  g_threads.store(num_threads, std::memory_order_relaxed);
  omp_set_num_threads(num_threads);
}

int KernelThreads() {
  const int n = g_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

void UseKernelThreads() {
  const int want = g_threads.load(std::memory_order_relaxed);
  if (want > 0 && omp_get_max_threads() != want) omp_set_num_threads(want);
}

ThreadCountWhile::ThreadCountWhile(int count) : before_(omp_get_max_threads()) {
  if (count != before_) omp_set_num_threads(count);
}

ThreadCountWhile::~ThreadCountWhile() {
  if (omp_get_max_threads() != before_) omp_set_num_threads(before_);
}

}  // namespace internal

void SetNumThreads(int num_threads) {
  HN_CHECK(num_threads >= 1, kInvalidArgument)
      << "the thread count must be >= 1, got " << num_threads;
  internal::SetKernelThreads(num_threads);
}

int GetNumThreads() { return internal::KernelThreads(); }

std::string KernelLibraries() {
  return "matrix products: " + internal::MatrixLibraryDescription() +
         "; convolutions: " + internal::OneDnnDescription();
}

}  // namespace hybridnet
