#include "kernels/blas.h"

#include <cblas.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <type_traits>

#ifdef HN_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

#include "hybridnet/base.h"
#include "kernels/parallel-inl.h"
#include "kernels/threads.h"

extern "C" char* openblas_get_corename(void);

namespace hybridnet {
namespace internal {

namespace {

// Vector ISA levels: 0 SSE, 1 AVX, 2 AVX2 + FMA, 3 AVX-512.
int CpuVectorIsa() {
  if (__builtin_cpu_supports("avx512f")) return 3;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 2;
  return __builtin_cpu_supports("avx") ? 1 : 0;
}

// The ISA of OpenBLAS's x86-64 kernel sets by core name; a name not listed runs SSE kernels.
int OpenBlasVectorIsa(const char* core) {
  static const struct {
    const char* core;
    int isa;
  } kCores[] = {{"Sandybridge", 1}, {"Bulldozer", 1},     {"Piledriver", 1}, {"Steamroller", 1},
                {"Excavator", 1},   {"Haswell", 2},       {"Zen", 2},        {"SkylakeX", 3},
                {"Cooperlake", 3},  {"SapphireRapids", 3}};
  for (const auto& c : kCores) {
    if (std::strcmp(c.core, core) == 0) return c.isa;
  }
  return 0;
}

MatrixLibrary ChosenLibrary() {
  const int openblas_isa = OpenBlasVectorIsa(openblas_get_corename());
  if (openblas_isa < CpuVectorIsa()) return MatrixLibrary::kOneDnn;
  return openblas_isa == 3 ? MatrixLibrary::kOpenBlasAndOneDnn : MatrixLibrary::kOpenBlas;
}

// Where OpenBLAS runs its AVX-512 kernels (Cooperlake on a Zen 4; Debian's 0.3.21, oneDNN 2.6.3,
// 1 thread), oneDNN's sgemm still ran the larger float products faster: of under 32 rows from
// 2^20 multiply-adds (16x256x256 1.3x, 8x512x512 2.4x, 8x1024x1024 3x; an LSTM's recurrent
// products, 20 rows, 1.2-1.4x), and of any shape from 2^22 (1.02-1.10x at hundreds of rows: its
// 700-row input products, a 1024-cube). OpenBLAS was faster below: oneDNN's call costs 1-2 us
// more (10x64x128 3.3 us against 1.8, 2x1024x256 29 against 19, 64 and 128 cubes 1.2-1.3x).
constexpr int64_t kOneDnnMultiplyAdds = int64_t{1} << 22;
constexpr int64_t kOneDnnFewRows = 32;
constexpr int64_t kOneDnnFewRowsMultiplyAdds = int64_t{1} << 20;

bool OneDnnRunsFaster(int64_t m, int64_t n, int64_t k) {
  const int64_t multiply_adds = m * n * k;
  return multiply_adds >= kOneDnnMultiplyAdds ||
         (m < kOneDnnFewRows && multiply_adds >= kOneDnnFewRowsMultiplyAdds);
}

std::atomic<MatrixLibrary>& FloatLibrary() {
  static std::atomic<MatrixLibrary> library{ChosenLibrary()};
  return library;
}

blasint BlasInt(int64_t v) { return static_cast<blasint>(v); }

// oneDNN's JIT sgemm (2.6, Debian 12's; fixed in 3.11, oneDNN issue 4845) points rsp into a heap
// buffer while it runs, so a signal handled on a thread inside it writes its frame over the heap
// (a profiler's SIGPROF corrupted the heap of R and of C programs). Asynchronous signals
// therefore wait while a thread runs it: the calling thread blocks them for the call, OpenMP's
// workers for good. Faults (SIGSEGV, ...) stay deliverable.
sigset_t AsynchronousSignals() {
  sigset_t set;
  sigfillset(&set);
  for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT})
    sigdelset(&set, fault);
  return set;
}

class AsynchronousSignalsWait {
 public:
  AsynchronousSignalsWait() {
    const sigset_t set = AsynchronousSignals();
    pthread_sigmask(SIG_BLOCK, &set, &before_);
    BlockInWorkers();
  }
  ~AsynchronousSignalsWait() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }
  AsynchronousSignalsWait(const AsynchronousSignalsWait&) = delete;
  AsynchronousSignalsWait& operator=(const AsynchronousSignalsWait&) = delete;

 private:
  // Each worker blocks them once; a team larger than any before has new workers.
  static void BlockInWorkers() {
    static std::atomic<int> blocked_team{1};
    const int team = omp_get_max_threads();
    if (team <= blocked_team.load(std::memory_order_acquire)) return;
#pragma omp parallel num_threads(team)
    {
      if (omp_get_thread_num() != 0) {
        const sigset_t set = AsynchronousSignals();
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
      }
    }
    blocked_team.store(team, std::memory_order_release);
  }
  sigset_t before_;
};

// OpenBLAS runs on one thread; products worth splitting are split here between the kernel threads
// instead. Debian's OpenBLAS keeps a thread pool of its own (its pthreads build), and the idle
// workers of each pool, OpenBLAS's and the OpenMP one of oneDNN and our kernels, spin while the
// other pool needs their cores: a digits LeNet's training epoch took 2.4x its one-thread time at
// two threads, an OpenBLAS product between OpenMP loops 30x (bench/train_epoch_bench.py; Zen 3).
const bool kOpenBlasOnOneThread = (openblas_set_num_threads(1), true);

// Below this many multiply-adds a product runs whole on the calling thread. Its operands are
// usually hot in that thread's cache (the layer before wrote them), and under about 2^20 moving
// them to another core costs what its half of the product saves: a digits MLP's 64x64x128
// products (2^19) made its training epoch 9.3 ms at 2 threads, against 7.4 whole (Zen 3).
constexpr int64_t kSplitProductMultiplyAdds = int64_t{1} << 20;
// A matrix-vector product's matrix is weights, not the layer before's output, so it is split from
// OpenBLAS's own threshold for threading one.
constexpr int64_t kSplitMatrixVectorMultiplyAdds = int64_t{1} << 18;
// Blocks of c's rows are multiples of this: OpenBLAS's Haswell and Zen kernels (Debian's 0.3.21)
// then give every element the bits of the whole product (blocks of 12 to 408 rows measured on a
// Zen 3), which their float kernels do not for blocks of 16 or 32 rows, nor for any block of
// columns (double kept the bits for every block tried). 12 rather than 24 balances the threads'
// blocks better: the seed MLP's training step at 2 threads 1.93 ms against 2.05.
constexpr int64_t kRowAlign = 12;
// Blocks of columns, for products of too few rows, are multiples of the kernels' 16-wide tiles.
constexpr int64_t kColumnAlign = 16;

// c (m x n) = op(a) * op(b), as `product(rows, cols, a_part, b_part, c_part)` calls: one for the
// whole product, or, on several kernel threads when it has `min_multiply_adds` or more, one per
// block of c's rows (of its columns when it has too few rows to split), the blocks split between
// those threads.
template <typename T, typename Product>
void SplitProduct(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
                  int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc,
                  int64_t min_multiply_adds, const Product& product) {
  const int threads = KernelThreads();
  const bool by_rows = m >= 2 * kRowAlign;
  if (threads <= 1 || omp_in_parallel() || m * n * k < min_multiply_adds ||
      (!by_rows && n < 2 * kColumnAlign)) {
    product(m, n, a, b, c);
    return;
  }
  const int64_t split = by_rows ? m : n, align = by_rows ? kRowAlign : kColumnAlign;
  const int64_t per_thread = (split + threads - 1) / threads;
  const int64_t block = (per_thread + align - 1) / align * align;
  const int64_t blocks = (split + block - 1) / block;
  ParallelFor(blocks, true, [&](int64_t i) {
    const int64_t begin = i * block, size = std::min(block, split - begin);
    if (by_rows) {  // op(a)'s rows: a's rows, or its columns when transposed
      product(size, n, a + (trans_a ? begin : begin * lda), b, c + begin * ldc);
    } else {  // op(b)'s columns: b's columns, or its rows when transposed
      product(m, size, a, b + (trans_b ? begin * ldb : begin), c + begin);
    }
  });
}

// Gemm on OpenBLAS (cblas_sgemm or cblas_dgemm), split between the kernel threads.
template <typename T>
void OpenBlasGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha,
                  const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  SplitProduct(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, kSplitProductMultiplyAdds,
               [&](int64_t rows, int64_t cols, const T* a_part, const T* b_part, T* c_part) {
                 const auto gemm = [] {
                   if constexpr (std::is_same_v<T, float>) {
                     return cblas_sgemm;
                   } else {
                     return cblas_dgemm;
                   }
                 }();
                 gemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                      trans_b ? CblasTrans : CblasNoTrans, BlasInt(rows), BlasInt(cols),
                      BlasInt(k), alpha, a_part, BlasInt(lda), b_part, BlasInt(ldb), beta, c_part,
                      BlasInt(ldc));
               });
}
}  // namespace

void OneDnnGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // c = beta * c, which oneDNN does not take without operands
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = 0; j < n; ++j) c[r * ldc + j] = beta == 0.f ? 0.f : beta * c[r * ldc + j];
    }
    return;
  }
  UseKernelThreads();
  const AsynchronousSignalsWait signals_wait;
  const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha,
                                          a, lda, b, ldb, beta, c, ldc);
  HN_CHECK(status == dnnl_success, kInternal)
      << "oneDNN's sgemm failed (status " << static_cast<int>(status) << ") on a " << m << "x" << k
      << " by " << k << "x" << n << " product";
}

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (ProductLibrary(m, n, k) == MatrixLibrary::kOneDnn) {
    OneDnnGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  OpenBlasGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
  OpenBlasGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

RepeatedProduct::RepeatedProduct(bool trans_a, int64_t m, int64_t n, int64_t k, int64_t lda,
                                 int64_t ldb, bool accumulate, int64_t ldc, bool jit)
    : trans_a_(trans_a), accumulate_(accumulate), m_(m), n_(n), k_(k), lda_(lda), ldb_(ldb),
      ldc_(ldc) {
#ifdef HN_HAVE_LIBXSMM
  if (!jit) return;
  // libxsmm is column-major: c' (n x m) = b' (n x k) * op(a)', where a row-major matrix read
  // column-major is its transpose, so op(a)' is a as stored, or its transpose with trans_a.
  const libxsmm_blasint rows = BlasInt(n), cols = BlasInt(m), depth = BlasInt(k);
  const libxsmm_blasint ld_first = BlasInt(ldb), ld_second = BlasInt(lda), ld_c = BlasInt(ldc);
  const float alpha = 1.f, beta = accumulate ? 1.f : 0.f;
  const int flags = trans_a ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
  const int prefetch = LIBXSMM_PREFETCH_NONE;
  // libxsmm's registry only tries its lock and answers "no kernel" to a thread that finds it
  // taken, which would make the product's bits depend on which thread came first: one thread
  // asks at a time.
  static std::mutex dispatch;
  const std::lock_guard<std::mutex> lock(dispatch);
  kernel_ = libxsmm_smmdispatch(rows, cols, depth, &ld_first, &ld_second, &ld_c, &alpha, &beta,
                                &flags, &prefetch);
#else
  (void)jit;
#endif
}

void RepeatedProduct::operator()(const float* a, const float* b, float* c) const {
  if (kernel_ != nullptr) {
    kernel_(b, a, c);
    return;
  }
  Gemm(trans_a_, false, m_, n_, k_, 1.f, a, lda_, b, ldb_, accumulate_ ? 1.f : 0.f, c, ldc_);
}

void MatrixVector(int64_t m, int64_t k, const float* a, const float* x, float beta, float* y) {
  if (FloatMatrixLibrary() == MatrixLibrary::kOneDnn) {
    OneDnnGemm(false, true, 1, m, k, 1.f, x, k, a, k, beta, y, m);  // y^T = x^T a^T
    return;
  }
  // y's rows as a product's rows: a (m x k) by x (k x 1).
  SplitProduct(false, false, m, 1, k, a, k, x, 1, y, 1, kSplitMatrixVectorMultiplyAdds,
               [&](int64_t rows, int64_t, const float* a_part, const float*, float* y_part) {
                 cblas_sgemv(CblasRowMajor, CblasNoTrans, BlasInt(rows), BlasInt(k), 1.f, a_part,
                             BlasInt(k), x, 1, beta, y_part, 1);
               });
}

MatrixLibrary FloatMatrixLibrary() { return FloatLibrary().load(std::memory_order_relaxed); }

MatrixLibrary ProductLibrary(int64_t m, int64_t n, int64_t k) {
  const MatrixLibrary library = FloatMatrixLibrary();
  if (library != MatrixLibrary::kOpenBlasAndOneDnn) return library;
  return OneDnnRunsFaster(m, n, k) ? MatrixLibrary::kOneDnn : MatrixLibrary::kOpenBlas;
}

void SetFloatMatrixLibrary(MatrixLibrary library) {
  FloatLibrary().store(library, std::memory_order_relaxed);
}

std::string MatrixLibraryDescription() {
  const std::string core = openblas_get_corename();
#ifdef HN_HAVE_LIBXSMM
  const std::string small = "; libxsmm " LIBXSMM_VERSION " for small products";
#else
  const std::string small = "; small products on it too (built without libxsmm)";
#endif
  if (FloatMatrixLibrary() == MatrixLibrary::kOpenBlas) {
    return "OpenBLAS (core " + core + ")" + small;
  }
  if (FloatMatrixLibrary() == MatrixLibrary::kOpenBlasAndOneDnn) {
    return "OpenBLAS (core " + core + ") and oneDNN sgemm (products of " +
           std::to_string(kOneDnnMultiplyAdds >> 20) + "M+ multiply-adds, or of " +
           std::to_string(kOneDnnFewRowsMultiplyAdds >> 20) + "M+ in under " +
           std::to_string(kOneDnnFewRows) + " rows)" + small;
  }
  static const char* const kIsaNames[] = {"SSE", "AVX", "AVX2", "AVX-512"};
  return "oneDNN sgemm (OpenBLAS runs " + core + " kernels on this " + kIsaNames[CpuVectorIsa()] +
         " CPU)" + small;
}

}  // namespace internal
}  // namespace hybridnet
