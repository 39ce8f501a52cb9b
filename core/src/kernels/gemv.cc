#include "kernels/gemv.h"

#include <immintrin.h>

#include <algorithm>

#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/parallel-inl.h"
#include "kernels/threads.h"

namespace hybridnet {
namespace internal {

namespace {

// The sum of v's lanes, in pairs: halves, then pairs, then the two left.
HN_AVX2 inline float ReduceAdd8(__m256 v) {
  const __m128 q = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
  const __m128 p = _mm_add_ps(q, _mm_shuffle_ps(q, q, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm_cvtss_f32(p) + _mm_cvtss_f32(_mm_shuffle_ps(p, p, 1));
}

// The sum of v's lanes, paired as _mm512_reduce_add_ps pairs them (halves, then ReduceAdd8's
// pairs), whose GCC 12 version trips -Wuninitialized in an unrolled loop.
HN_AVX512 inline float ReduceAdd(__m512 v) {
  const __m512d d = _mm512_castps_pd(v);
  const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xFF, d, 0));
  const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xFF, d, 1));
  return ReduceAdd8(_mm256_add_ps(hi, lo));
}

// Rows [r, r + R): lane j of a row's accumulator sums the columns j, j + 16, ... in order; the
// lanes are then added by ReduceAdd. The same for every row, whatever R.
template <int R>
HN_AVX512 void GemvBlock(const float* W, const float* x, float* y, int64_t r, int64_t cols) {
  const int64_t full = cols / 16 * 16;
  const __mmask16 tail = FirstLanes(cols - full);
  const float* w = W + r * cols;
  __m512 acc[R];
#pragma GCC unroll 12
  for (int j = 0; j < R; ++j) acc[j] = _mm512_setzero_ps();
  int64_t c = 0;
  for (; c < full; c += 16) {
    const __m512 xv = _mm512_loadu_ps(x + c);
#pragma GCC unroll 12
    for (int j = 0; j < R; ++j) {
      acc[j] = _mm512_fmadd_ps(_mm512_loadu_ps(w + j * cols + c), xv, acc[j]);
    }
  }
  if (tail != 0) {
    const __m512 xv = _mm512_maskz_loadu_ps(tail, x + c);
#pragma GCC unroll 12
    for (int j = 0; j < R; ++j) {
      acc[j] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w + j * cols + c), xv, acc[j]);
    }
  }
#pragma GCC unroll 12
  for (int j = 0; j < R; ++j) y[r + j] = ReduceAdd(acc[j]);
}

// GemvBlock on AVX2: 8 lanes, lane j summing the columns j, j + 8, ... in order, then added by
// ReduceAdd8.
template <int R>
HN_AVX2 void GemvBlockAvx2(const float* W, const float* x, float* y, int64_t r, int64_t cols) {
  const int64_t full = cols / 8 * 8;
  const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(cols - full)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const float* w = W + r * cols;
  __m256 acc[R];
#pragma GCC unroll 12
  for (int j = 0; j < R; ++j) acc[j] = _mm256_setzero_ps();
  int64_t c = 0;
  for (; c < full; c += 8) {
    const __m256 xv = _mm256_loadu_ps(x + c);
#pragma GCC unroll 12
    for (int j = 0; j < R; ++j) {
      acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(w + j * cols + c), xv, acc[j]);
    }
  }
  if (c < cols) {
    const __m256 xv = _mm256_maskload_ps(x + c, tail);
#pragma GCC unroll 12
    for (int j = 0; j < R; ++j) {
      acc[j] = _mm256_fmadd_ps(_mm256_maskload_ps(w + j * cols + c, tail), xv, acc[j]);
    }
  }
#pragma GCC unroll 12
  for (int j = 0; j < R; ++j) y[r + j] = ReduceAdd8(acc[j]);
}

// Rows [r0, r1), twelve at a time: weights that come from memory stream faster twelve rows at
// once than four (MobileNet v2's 1000 x 1280 classifier with the caches flushed: 265-289 us
// against 349-355; from L3, 62 us either way).
template <template <int> class Block>
void GemvRows(const float* W, const float* x, const float* bias, float* y, int64_t r0, int64_t r1,
              int64_t cols) {
  int64_t r = r0;
  for (; r + 12 <= r1; r += 12) Block<12>::Run(W, x, y, r, cols);
  for (; r + 4 <= r1; r += 4) Block<4>::Run(W, x, y, r, cols);
  for (; r < r1; ++r) Block<1>::Run(W, x, y, r, cols);
  if (bias != nullptr) {
    for (r = r0; r < r1; ++r) y[r] += bias[r];
  }
}

template <int R>
struct Avx512Block {
  static void Run(const float* W, const float* x, float* y, int64_t r, int64_t cols) {
    GemvBlock<R>(W, x, y, r, cols);
  }
};

template <int R>
struct Avx2Block {
  static void Run(const float* W, const float* x, float* y, int64_t r, int64_t cols) {
    GemvBlockAvx2<R>(W, x, y, r, cols);
  }
};

}  // namespace

void Gemv(const float* W, const float* x, const float* bias, float* y, int64_t rows, int64_t cols) {
  // Blocks of 12 rows, split evenly between threads from 64 K weights on (below, starting the
  // threads costs more than they save).
  constexpr int64_t kBlock = 12;
  const int64_t blocks = (rows + kBlock - 1) / kBlock;
  const bool avx512 = CpuHasAvx512();
  ParallelFor(blocks, rows * cols >= 65536, [&](int64_t b) {
    const int64_t r0 = b * kBlock, r1 = std::min(rows, (b + 1) * kBlock);
    if (avx512) {
      GemvRows<Avx512Block>(W, x, bias, y, r0, r1, cols);
    } else {
      GemvRows<Avx2Block>(W, x, bias, y, r0, r1, cols);
    }
  });
}

bool GemvTakes(const ConvSpec& s) {
  if (s.deconv || s.G != 1 || s.N != 1 || !CpuHasAvx2()) return false;
  for (int64_t i = 0; i < s.nd; ++i) {
    if (s.in[i] != 1 || s.kernel[i] != 1 || s.pad_l[i] != 0 || s.pad_r[i] != 0) return false;
  }
  return true;
}

}  // namespace internal
}  // namespace hybridnet
