#include "kernels/blas.h"

#include <cblas.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "hybridnet/base.h"
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
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return MatrixLibrary::kOpenBlas;
  return OpenBlasVectorIsa(openblas_get_corename()) < CpuVectorIsa() ? MatrixLibrary::kOneDnn
                                                                     : MatrixLibrary::kOpenBlas;
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
  if (FloatMatrixLibrary() == MatrixLibrary::kOneDnn) {
    OneDnnGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, BlasInt(m), BlasInt(n), BlasInt(k), alpha, a,
              BlasInt(lda), b, BlasInt(ldb), beta, c, BlasInt(ldc));
}

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, BlasInt(m), BlasInt(n), BlasInt(k), alpha, a,
              BlasInt(lda), b, BlasInt(ldb), beta, c, BlasInt(ldc));
}

void MatrixVector(int64_t m, int64_t k, const float* a, const float* x, float beta, float* y) {
  if (FloatMatrixLibrary() == MatrixLibrary::kOneDnn) {
    OneDnnGemm(false, true, 1, m, k, 1.f, x, k, a, k, beta, y, m);  // y^T = x^T a^T
    return;
  }
  cblas_sgemv(CblasRowMajor, CblasNoTrans, BlasInt(m), BlasInt(k), 1.f, a, BlasInt(k), x, 1, beta,
              y, 1);
}

MatrixLibrary FloatMatrixLibrary() { return FloatLibrary().load(std::memory_order_relaxed); }

void SetFloatMatrixLibrary(MatrixLibrary library) {
  FloatLibrary().store(library, std::memory_order_relaxed);
}

std::string MatrixLibraryDescription() {
  const std::string core = openblas_get_corename();
  if (FloatMatrixLibrary() == MatrixLibrary::kOpenBlas) return "OpenBLAS (core " + core + ")";
  static const char* const kIsaNames[] = {"SSE", "AVX", "AVX2", "AVX-512"};
  return "oneDNN sgemm (OpenBLAS runs " + core + " kernels on this " + kIsaNames[CpuVectorIsa()] +
         " CPU)";
}

}  // namespace internal
}  // namespace hybridnet
