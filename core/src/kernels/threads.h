// The thread count of every CPU kernel: our own kernels' loops (parallel-inl.h), oneDNN's
// primitives and sgemm (OpenMP) and OpenBLAS. hybridnet::SetNumThreads (imperative.h) sets it for
// all of them at once. Results do not depend on it (each kernel's opening comment says why), with
// one exception we do not control: OpenBLAS 0.3.21 splits some float products' sums between its
// threads, e.g. an 800x200x700 product with a transposed operand and a 1x200x10000 one, so where
// blas.h chooses OpenBLAS those products may differ in the last bits between thread counts.
#pragma once

#include <string>

namespace hybridnet {
namespace internal {

/// Threads every later kernel runs with (>= 1), on every thread.
void SetKernelThreads(int num_threads);
/// SetKernelThreads' count, else OpenMP's default (OMP_NUM_THREADS or the core count).
int KernelThreads();
/// Sets the calling thread's OpenMP thread count to KernelThreads' (before a oneDNN call: OpenMP
/// keeps a count per thread).
void UseKernelThreads();

/// OpenMP's thread count on this thread is `count` while it lives, then as before.
class ThreadCountWhile {
 public:
  explicit ThreadCountWhile(int count);
  ~ThreadCountWhile();
  ThreadCountWhile(const ThreadCountWhile&) = delete;
  ThreadCountWhile& operator=(const ThreadCountWhile&) = delete;

 private:
  const int before_;
};

}  // namespace internal
}  // namespace hybridnet
