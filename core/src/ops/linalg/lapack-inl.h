// Typed access to the BLAS and LAPACK routines of OpenBLAS (Debian's libopenblas ships the
// LAPACK routines with Fortran linkage: sgetrf_, spotrf_, ...) for float and double.
//
// LAPACK works on column-major matrices; a row-major n x n matrix is its transpose there, so
// callers flip uplo (and read results transposed) as MXNet's row-major wrappers do.
#pragma once

#include <cblas.h>

#include <cstddef>

namespace hybridnet {
namespace internal {

// The Fortran routines, with gfortran's hidden lengths of character arguments at the end.
extern "C" {
void spotrf_(const char* uplo, const blasint* n, float* a, const blasint* lda, blasint* info,
             size_t uplo_len);
void dpotrf_(const char* uplo, const blasint* n, double* a, const blasint* lda, blasint* info,
             size_t uplo_len);
void spotri_(const char* uplo, const blasint* n, float* a, const blasint* lda, blasint* info,
             size_t uplo_len);
void dpotri_(const char* uplo, const blasint* n, double* a, const blasint* lda, blasint* info,
             size_t uplo_len);
void sgetrf_(const blasint* m, const blasint* n, float* a, const blasint* lda, blasint* ipiv,
             blasint* info);
void dgetrf_(const blasint* m, const blasint* n, double* a, const blasint* lda, blasint* ipiv,
             blasint* info);
void sgetri_(const blasint* n, float* a, const blasint* lda, const blasint* ipiv, float* work,
             const blasint* lwork, blasint* info);
void dgetri_(const blasint* n, double* a, const blasint* lda, const blasint* ipiv, double* work,
             const blasint* lwork, blasint* info);
void sgeqrf_(const blasint* m, const blasint* n, float* a, const blasint* lda, float* tau,
             float* work, const blasint* lwork, blasint* info);
void dgeqrf_(const blasint* m, const blasint* n, double* a, const blasint* lda, double* tau,
             double* work, const blasint* lwork, blasint* info);
void sorgqr_(const blasint* m, const blasint* n, const blasint* k, float* a, const blasint* lda,
             const float* tau, float* work, const blasint* lwork, blasint* info);
void dorgqr_(const blasint* m, const blasint* n, const blasint* k, double* a, const blasint* lda,
             const double* tau, double* work, const blasint* lwork, blasint* info);
void ssyevd_(const char* jobz, const char* uplo, const blasint* n, float* a, const blasint* lda,
             float* w, float* work, const blasint* lwork, blasint* iwork, const blasint* liwork,
             blasint* info, size_t jobz_len, size_t uplo_len);
void dsyevd_(const char* jobz, const char* uplo, const blasint* n, double* a, const blasint* lda,
             double* w, double* work, const blasint* lwork, blasint* iwork, const blasint* liwork,
             blasint* info, size_t jobz_len, size_t uplo_len);
}

// The routines of one precision.
template <typename T>
struct Routines;

template <>
struct Routines<float> {
  static constexpr auto trmm = cblas_strmm;
  static constexpr auto trsm = cblas_strsm;
  static constexpr auto syrk = cblas_ssyrk;
  static constexpr auto potrf = spotrf_;
  static constexpr auto potri = spotri_;
  static constexpr auto getrf = sgetrf_;
  static constexpr auto getri = sgetri_;
  static constexpr auto geqrf = sgeqrf_;
  static constexpr auto orgqr = sorgqr_;
  static constexpr auto syevd = ssyevd_;
};

template <>
struct Routines<double> {
  static constexpr auto trmm = cblas_dtrmm;
  static constexpr auto trsm = cblas_dtrsm;
  static constexpr auto syrk = cblas_dsyrk;
  static constexpr auto potrf = dpotrf_;
  static constexpr auto potri = dpotri_;
  static constexpr auto getrf = dgetrf_;
  static constexpr auto getri = dgetri_;
  static constexpr auto geqrf = dgeqrf_;
  static constexpr auto orgqr = dorgqr_;
  static constexpr auto syevd = dsyevd_;
};

/// Row-major BLAS and (square or m x n column-major) LAPACK calls for T = float or double;
/// LAPACK calls return LAPACK's info (0 = success).
template <typename T>
struct Lapack {
  using R = Routines<T>;
  static void trmm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, blasint m, blasint n,
                   T alpha, const T* a, blasint lda, T* b, blasint ldb) {
    R::trmm(CblasRowMajor, side, uplo, t, CblasNonUnit, m, n, alpha, a, lda, b, ldb);
  }
  static void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, blasint m, blasint n,
                   T alpha, const T* a, blasint lda, T* b, blasint ldb) {
    R::trsm(CblasRowMajor, side, uplo, t, CblasNonUnit, m, n, alpha, a, lda, b, ldb);
  }
  /// The lower triangle of c = alpha * a a^T (t = NoTrans) or alpha * a^T a.
  static void syrk(CBLAS_TRANSPOSE t, blasint n, blasint k, T alpha, const T* a, blasint lda, T* c,
                   blasint ldc) {
    R::syrk(CblasRowMajor, CblasLower, t, n, k, alpha, a, lda, T(0), c, ldc);
  }
  static blasint potrf(char uplo, blasint n, T* a) {
    blasint info = 0;
    R::potrf(&uplo, &n, a, &n, &info, 1);
    return info;
  }
  static blasint potri(char uplo, blasint n, T* a) {
    blasint info = 0;
    R::potri(&uplo, &n, a, &n, &info, 1);
    return info;
  }
  static blasint getrf(blasint n, T* a, blasint* ipiv) {
    blasint info = 0;
    R::getrf(&n, &n, a, &n, ipiv, &info);
    return info;
  }
  static blasint getri(blasint n, T* a, const blasint* ipiv, T* work, blasint lwork) {
    blasint info = 0;
    R::getri(&n, a, &n, ipiv, work, &lwork, &info);
    return info;
  }
  static blasint geqrf(blasint m, blasint n, T* a, T* tau, T* work, blasint lwork) {
    blasint info = 0;
    R::geqrf(&m, &n, a, &m, tau, work, &lwork, &info);
    return info;
  }
  static blasint orgqr(blasint m, blasint n, blasint k, T* a, const T* tau, T* work,
                       blasint lwork) {
    blasint info = 0;
    R::orgqr(&m, &n, &k, a, &m, tau, work, &lwork, &info);
    return info;
  }
  static blasint syevd(char uplo, blasint n, T* a, T* w, T* work, blasint lwork, blasint* iwork,
                       blasint liwork) {
    blasint info = 0;
    const char jobz = 'V';
    R::syevd(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
    return info;
  }
};

}  // namespace internal
}  // namespace hybridnet
