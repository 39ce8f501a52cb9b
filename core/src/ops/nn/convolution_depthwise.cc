#include "ops/nn/convolution_depthwise.h"

#include <immintrin.h>

#include <algorithm>

#include "ops/nn/activation-inl.h"
#include "ops/nn/convolution_backend.h"
#include "ops/nn/convolution_epilogue-inl.h"
#include "ops/nn/parallel-inl.h"

namespace hybridnet {
namespace internal {

namespace {

// RunEpilogue on positions [begin, end), each position's channels in order (contiguous: the
// channel-blocks-outer order strode by C floats and ran several times slower for wide layers).
HN_AVX512 void EpiloguePositions(const EpilogueArgs& a, int64_t begin, int64_t end) {
  for (int64_t pos = begin; pos < end; ++pos) {
    const int64_t row = pos * a.C;
    for (int64_t c = 0; c < a.C; c += 16) {
      const __mmask16 lanes = FirstLanes(a.C - c);
      const Epilogue e = MakeEpilogue(nullptr, a.bn_scale, a.bn_shift, a.residual != nullptr,
                                      a.relu, a.clip, a.clip_min, a.clip_max, c, lanes);
      const __m512 v = _mm512_maskz_loadu_ps(lanes, a.conv + row + c);
      const __m512 r = e.residual ? _mm512_maskz_loadu_ps(lanes, a.residual + row + c) : v;
      _mm512_mask_storeu_ps(a.out + row + c, lanes, Apply(v, e, r));
    }
  }
}

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
  const Epilogue e = MakeEpilogue(a.bias, a.bn_scale, a.bn_shift, a.residual != nullptr, a.relu,
                                  a.clip, a.clip_min, a.clip_max, c, __mmask16(0xFFFF));
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
    Finish(OnePosition(rows, w, W, C, ow * s - a.pad), e, res ? res + ow * C : nullptr,
           y + ow * C);
  }
}

}  // namespace

bool Depthwise3x3Supported(int64_t C, int64_t stride, int64_t pad) {
  return CpuHasAvx512() && C % 16 == 0 && (stride == 1 || stride == 2) && (pad == 0 || pad == 1);
}

void RunEpilogue(const EpilogueArgs& a) {
  if (!CpuHasAvx512()) {
    for (int64_t i = 0; i < a.positions * a.C; ++i) {
      const int64_t c = i % a.C;
      float v = a.conv[i];
      if (a.bn_scale) v = v * a.bn_scale[c] + a.bn_shift[c];
      if (a.residual) v = v + a.residual[i];
      if (a.relu) v = ReluOf(v);
      a.out[i] = a.clip ? ClipOf(v, a.clip_min, a.clip_max) : v;
    }
    return;
  }
  // Blocks of about 64 KiB; elementwise, so the thread count does not change the results.
  const int64_t block = std::max<int64_t>(1, 16384 / std::max<int64_t>(a.C, 1));
  const int64_t blocks = (a.positions + block - 1) / block;
  ParallelFor(blocks, true, [&](int64_t b) {
    EpiloguePositions(a, b * block, std::min(a.positions, (b + 1) * block));
  });
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

void RunDepthwise3x3Row(const DepthwiseArgs& a, const float* const rows[3], int64_t n,
                        int64_t oh) {
  for (int64_t c = 0; c < a.C; c += 16) {
    const float* at_c[3];
    for (int kh = 0; kh < 3; ++kh) at_c[kh] = rows[kh] ? rows[kh] + c : nullptr;
    Row(a, at_c, n, oh, c);
  }
}

}  // namespace internal
}  // namespace hybridnet
