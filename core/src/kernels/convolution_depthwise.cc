#include "kernels/convolution_depthwise.h"

#include <immintrin.h>

#include <algorithm>

#include "kernels/epilogue-inl.h"
#include "kernels/parallel-inl.h"
#include "kernels/threads.h"

namespace hybridnet {
namespace internal {

namespace {

// One output position: the taps of the rows present (`rows[kh]` null outside the image) and
// the in-range columns, in (kh, kw) order.
HN_AVX512 inline __m512 OnePosition(const float* const rows[3], const __m512* w, int64_t W,
                                    int64_t C, int64_t iw0) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t kh = 0; kh < 3; ++kh) {
    if (rows[kh] == nullptr) continue;
    for (int64_t kw = 0; kw < 3; ++kw) {
      const int64_t iw = iw0 + kw;
      if (iw < 0 || iw >= W) continue;
      acc = _mm512_fmadd_ps(_mm512_loadu_ps(rows[kh] + iw * C), w[kh * 3 + kw], acc);
    }
  }
  return acc;
}

// One output row of one sample, 16 channels from `c`, from its input rows (see
// RunDepthwise3x3Row; the row pointers are offset by `c` already).
HN_AVX512 void Row(const DepthwiseArgs& a, const float* const rows[3], int64_t n, int64_t oh,
                   int64_t c) {
  const int64_t W = a.W, C = a.C, s = a.stride;
  float* y = a.out + (n * a.OH + oh) * a.OW * C + c;
  const float* res = a.residual ? a.residual + (n * a.OH + oh) * a.OW * C + c : nullptr;
  __m512 w[9];
  for (int t = 0; t < 9; ++t) w[t] = _mm512_loadu_ps(a.weight + t * C + c);
  const EpilogueRegisters e = MakeEpilogue(a.epilogue, a.residual != nullptr, c, 16);
  int64_t ow = 0;
  // Positions whose window has no column outside the image, four at a time (same taps, same
  // order as OnePosition).
  for (; ow < a.OW; ++ow) {
    const int64_t iw0 = ow * s - a.pad;
    if (iw0 >= 0 && (ow + 3) * s - a.pad + 2 < W) break;
    Finish(OnePosition(rows, w, W, C, iw0), e, res ? res + ow * C : nullptr, y + ow * C);
  }
  for (; ow + 4 <= a.OW && (ow + 3) * s - a.pad + 2 < W; ow += 4) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    const int64_t iw0 = ow * s - a.pad;
    for (int64_t kh = 0; kh < 3; ++kh) {
      if (rows[kh] == nullptr) continue;
      const float* row = rows[kh] + iw0 * C;
      for (int64_t kw = 0; kw < 3; ++kw) {
        const __m512 wk = w[kh * 3 + kw];
        acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(row + kw * C), wk, acc0);
        acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(row + (s + kw) * C), wk, acc1);
        acc2 = _mm512_fmadd_ps(_mm512_loadu_ps(row + (2 * s + kw) * C), wk, acc2);
        acc3 = _mm512_fmadd_ps(_mm512_loadu_ps(row + (3 * s + kw) * C), wk, acc3);
      }
    }
    const int64_t o = ow * C;
    Finish(acc0, e, res ? res + o : nullptr, y + o);
    Finish(acc1, e, res ? res + o + C : nullptr, y + o + C);
    Finish(acc2, e, res ? res + o + 2 * C : nullptr, y + o + 2 * C);
    Finish(acc3, e, res ? res + o + 3 * C : nullptr, y + o + 3 * C);
  }
  for (; ow < a.OW; ++ow) {
    Finish(OnePosition(rows, w, W, C, ow * s - a.pad), e, res ? res + ow * C : nullptr, y + ow * C);
  }
}

}  // namespace

bool DepthwiseTakes(const ConvSpec& s) {
  const bool channels = s.C == 0 || (s.G == s.C && s.C % 16 == 0);
  return !s.deconv && s.nd == 2 && s.G == s.F && s.G > 1 && channels && s.kernel[0] == 3 &&
         s.kernel[1] == 3 && s.dilate[0] == 1 && s.dilate[1] == 1 && s.stride[0] == s.stride[1] &&
         (s.stride[0] == 1 || s.stride[0] == 2) && s.pad_l[0] == s.pad_l[1] &&
         s.pad_r[0] == s.pad_l[0] && s.pad_r[1] == s.pad_l[1] &&
         (s.pad_l[0] == 0 || s.pad_l[0] == 1) && CpuHasAvx512();
}

void RunDepthwise3x3(const DepthwiseArgs& a) {
  const int64_t rows = a.N * a.OH;
  // Each output is computed by one thread in a fixed order: results do not depend on the
  // thread count. With a residual that is the output itself, every position reads its own
  // residual before writing it.
  ParallelFor(rows, true, [&](int64_t r) {
    const int64_t n = r / a.OH, oh = r % a.OH;
    const float* in_rows[3];
    for (int64_t kh = 0; kh < 3; ++kh) {
      const int64_t ih = oh * a.stride - a.pad + kh;
      in_rows[kh] = ih >= 0 && ih < a.H ? a.data + ((n * a.H + ih) * a.W) * a.C : nullptr;
    }
    RunDepthwise3x3Row(a, in_rows, n, oh);
  });
}

void RunDepthwise3x3Row(const DepthwiseArgs& a, const float* const rows[3], int64_t n, int64_t oh) {
  for (int64_t c = 0; c < a.C; c += 16) {
    const float* at_c[3];
    for (int kh = 0; kh < 3; ++kh) at_c[kh] = rows[kh] ? rows[kh] + c : nullptr;
    Row(a, at_c, n, oh, c);
  }
}

}  // namespace internal
}  // namespace hybridnet
