// The thread count of every CPU kernel: our own kernels' loops (parallel-inl.h), oneDNN's
// primitives and sgemm (OpenMP) and OpenBLAS. hybridnet::SetNumThreads (imperative.h) sets it for
// all of them at once. Results never depend on it: each kernel's opening comment says why.
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
