// The thread count of every CPU kernel: our own kernels' loops (parallel-inl.h), oneDNN's
// primitives and sgemm (OpenMP) and the matrix products, which blas.cc splits between the threads
// (OpenBLAS itself runs on one). hybridnet::SetNumThreads (imperative.h) sets it. Results do not
// depend on it (each kernel's opening comment says why), with one exception: a product of fewer
// than 24 rows is split by columns, and OpenBLAS's float kernels give a block of columns other
// last bits than the whole product; so may its AVX-512 kernels a block of rows (blas.cc's
// kRowAlign was measured on its Haswell and Zen kernels).
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
