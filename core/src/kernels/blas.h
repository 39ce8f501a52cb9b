// The matrix products of every op (FullyConnected, dot, batch_dot, linalg_gemm, RNN, attention,
// deformable convolution), row-major. float products run on OpenBLAS, unless OpenBLAS runs
// kernels of a lower vector ISA than the CPU has: its DYNAMIC_ARCH build falls back to SSE3
// (Prescott) kernels on CPUs newer than itself, e.g. Debian 12's 0.3.21 on Xeons of model 207,
// where the seed MLP at batch 256 took 5.5x the time it takes on oneDNN's sgemm; and machine
// images that set OPENBLAS_CORETYPE=Haswell on AVX-512 CPUs (older OpenBLAS builds compute wrong
// results there) hold it to AVX2 (an LSTM language model's training step 76.5 -> 63.9 ms on
// oneDNN's sgemm, Zen 5, 1 thread). Those products then run on oneDNN's sgemm, which dispatches
// on the CPU's features; OPENBLAS_CORETYPE naming a core of the CPU's ISA (SkylakeX) keeps
// OpenBLAS. Where OpenBLAS does run AVX-512 kernels, oneDNN's sgemm still takes the products it
// runs faster (OneDnnRunsFaster in blas.cc). The choice depends on the process and the product's
// shape only, so eager and graph runs agree.
#pragma once

#include <cstdint>
#include <string>

namespace hybridnet {
namespace internal {

/// kOpenBlasAndOneDnn: OpenBLAS, and oneDNN's sgemm for the products it runs faster.
enum class MatrixLibrary { kOpenBlas, kOneDnn, kOpenBlasAndOneDnn };

/// c (m x n) = alpha * op(a) * op(b) + beta * c; op(a) is m x k, op(b) k x n; lda, ldb, ldc are
/// the row strides of a, b and c as stored. beta = 0 ignores c's contents.
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
/// The same in float64 (OpenBLAS always).
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc);

/// The float Gemm on oneDNN's sgemm whatever FloatMatrixLibrary says, for kernels that keep all
/// of a layer's products on oneDNN's OpenMP threads (RunDenseBackward).
void OneDnnGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                int64_t ldc);

/// c (m x n) = op(a) * b, or c += op(a) * b when `accumulate`, on the calling thread: a product
/// made once per shape and strides, then run on any operands of them (Winograd's point
/// products). With `jit`, on libxsmm's JIT kernel, which reads a and b in place, for products of
/// a few dozen rows or columns, where OpenBLAS's packing and its pass over c took longer than its
/// kernel (a 672x16 by 16x16 product 2.5x faster, 32x32 1.8x, 64x64 1.5x; Zen 3). On Gemm
/// without `jit`, when the library was built without libxsmm, or when libxsmm has no kernel for
/// the shape, the same for every call.
class RepeatedProduct {
 public:
  RepeatedProduct(bool trans_a, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                  bool accumulate, int64_t ldc, bool jit);
  void operator()(const float* a, const float* b, float* c) const;

 private:
  bool trans_a_, accumulate_;
  int64_t m_, n_, k_, lda_, ldb_, ldc_;
  void (*kernel_)(const float*, const float*, float*, ...) = nullptr;  // libxsmm's, or none
};

/// y (m) = a (m x k, rows of stride k) * x (k) + beta * y.
void MatrixVector(int64_t m, int64_t k, const float* a, const float* x, float beta, float* y);

/// The library float products run on in this process.
MatrixLibrary FloatMatrixLibrary();
/// The library (kOpenBlas or kOneDnn) a float Gemm of op(a) m x k by op(b) k x n runs on.
MatrixLibrary ProductLibrary(int64_t m, int64_t n, int64_t k);
/// Makes later float products run on `library` (tests compare the two).
void SetFloatMatrixLibrary(MatrixLibrary library);
/// "OpenBLAS (core Haswell); libxsmm 1.17 for small products", "oneDNN sgemm (OpenBLAS runs
/// Prescott kernels on this AVX-512 CPU); ..." or "OpenBLAS (core Cooperlake) and oneDNN sgemm
/// (...); ...": for benchmark reports.
std::string MatrixLibraryDescription();

}  // namespace internal
}  // namespace hybridnet
