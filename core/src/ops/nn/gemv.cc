#include "ops/nn/gemv.h"

#include <immintrin.h>

#include <algorithm>

#include "ops/nn/avx512-inl.h"
#include "ops/nn/convolution_backend.h"

namespace hybridnet {
namespace internal {

namespace {

// Lane j of a row's accumulator sums the columns j, j + 16, ... in order; the lanes are then
// added by _mm512_reduce_add_ps. The same for every row, however rows are grouped.
HN_AVX512 void GemvRows(const float* W, const float* x, const float* bias, float* y,
                        int64_t r0, int64_t r1, int64_t cols) {
  const int64_t full = cols / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (cols - full)) - 1);
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) {
    const float* w0 = W + r * cols;
    const float* w1 = w0 + cols;
    const float* w2 = w1 + cols;
    const float* w3 = w2 + cols;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int64_t c = 0;
    for (; c < full; c += 16) {
      const __m512 xv = _mm512_loadu_ps(x + c);
      a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w0 + c), xv, a0);
      a1 = _mm512_fmadd_ps(_mm512_loadu_ps(w1 + c), xv, a1);
      a2 = _mm512_fmadd_ps(_mm512_loadu_ps(w2 + c), xv, a2);
      a3 = _mm512_fmadd_ps(_mm512_loadu_ps(w3 + c), xv, a3);
    }
    if (tail != 0) {
      const __m512 xv = _mm512_maskz_loadu_ps(tail, x + c);
      a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w0 + c), xv, a0);
      a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w1 + c), xv, a1);
      a2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w2 + c), xv, a2);
      a3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w3 + c), xv, a3);
    }
    y[r] = _mm512_reduce_add_ps(a0);
    y[r + 1] = _mm512_reduce_add_ps(a1);
    y[r + 2] = _mm512_reduce_add_ps(a2);
    y[r + 3] = _mm512_reduce_add_ps(a3);
  }
  for (; r < r1; ++r) {
    const float* w0 = W + r * cols;
    __m512 a0 = _mm512_setzero_ps();
    int64_t c = 0;
    for (; c < full; c += 16) {
      a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w0 + c), _mm512_loadu_ps(x + c), a0);
    }
    if (tail != 0) {
      a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w0 + c), _mm512_maskz_loadu_ps(tail, x + c),
                           a0);
    }
    y[r] = _mm512_reduce_add_ps(a0);
  }
  if (bias != nullptr) {
    for (r = r0; r < r1; ++r) y[r] += bias[r];
  }
}

}  // namespace

void Gemv(const float* W, const float* x, const float* bias, float* y, int64_t rows,
          int64_t cols) {
  // Blocks of 64 rows, split between threads from 64 K weights on (below, starting the threads
  // costs more than they save).
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (rows + kBlock - 1) / kBlock;
  const int threads = BackendThreads();
#pragma omp parallel for num_threads(threads) schedule(static) \
    if (threads > 1 && blocks > 1 && rows * cols >= 65536)
  for (int64_t b = 0; b < blocks; ++b) {
    GemvRows(W, x, bias, y, b * kBlock, std::min(rows, (b + 1) * kBlock), cols);
  }
}

}  // namespace internal
}  // namespace hybridnet
