#include "kernels/batch_norm.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/activation-inl.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/parallel-inl.h"
#include "kernels/workspace.h"

namespace hybridnet {
namespace internal {

void BatchNormScaleShiftScalar(const float* gamma, const float* beta, const float* mean,
                               const float* var, double eps, bool fix_gamma, int64_t channels,
                               float* scale, float* shift) {
  for (int64_t c = 0; c < channels; ++c) {
    const float g = fix_gamma ? 1.f : gamma[c];
    scale[c] = g * BatchNormInvStd(var[c], eps);
    shift[c] = beta[c] - mean[c] * scale[c];
  }
}

// 16 channels at a time, with the scalar version's correctly rounded operations (float sqrt,
// double reciprocal, float multiply and subtract), so its bits.
HN_AVX512 void BatchNormScaleShiftAvx512(const float* gamma, const float* beta, const float* mean,
                                         const float* var, double eps, bool fix_gamma,
                                         int64_t channels, float* scale, float* shift) {
  const __m512 eps16 = _mm512_set1_ps(static_cast<float>(eps));
  const __m512d one = _mm512_set1_pd(1.0);
  for (int64_t c = 0; c < channels; c += 16) {
    const __mmask16 lanes = FirstLanes(channels - c);
    const __m512 s = _mm512_sqrt_ps(_mm512_add_ps(_mm512_maskz_loadu_ps(lanes, var + c), eps16));
    const __m256 lo =
        _mm512_cvtpd_ps(_mm512_div_pd(one, _mm512_cvtps_pd(_mm512_castps512_ps256(s))));
    const __m256 hi = _mm512_cvtpd_ps(_mm512_div_pd(
        one, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)))));
    const __m512 invstd = _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
    const __m512 g = fix_gamma ? _mm512_set1_ps(1.f) : _mm512_maskz_loadu_ps(lanes, gamma + c);
    const __m512 sc = _mm512_mul_ps(g, invstd);
    _mm512_mask_storeu_ps(scale + c, lanes, sc);
    _mm512_mask_storeu_ps(shift + c, lanes,
                          _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, beta + c),
                                        _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, mean + c), sc)));
  }
}

void BatchNormScaleShift(const float* gamma, const float* beta, const float* mean, const float* var,
                         double eps, bool fix_gamma, int64_t channels, float* scale, float* shift) {
  if (CpuHasAvx512()) {
    BatchNormScaleShiftAvx512(gamma, beta, mean, var, eps, fix_gamma, channels, scale, shift);
  } else {
    BatchNormScaleShiftScalar(gamma, beta, mean, var, eps, fix_gamma, channels, scale, shift);
  }
}

namespace {

// y may be x (BatchNorm runs in place): each y[i] is written after its x[i] is read.
[[gnu::always_inline]] inline void ApplyChannelLastPortable(const float* x, const float* scale,
                                                            const float* shift, int64_t positions,
                                                            int64_t channels, bool relu, float* y) {
  for (int64_t at = 0; at < positions * channels; at += channels) {
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) {
      const float v = x[at + c] * scale[c] + shift[c];
      y[at + c] = relu ? ReluOf(v) : v;
    }
  }
}
HN_AVX2 void ApplyChannelLastAvx2(const float* x, const float* scale, const float* shift,
                                  int64_t positions, int64_t channels, bool relu, float* y) {
  ApplyChannelLastPortable(x, scale, shift, positions, channels, relu, y);
}
void ApplyChannelLastBaseline(const float* x, const float* scale, const float* shift,
                              int64_t positions, int64_t channels, bool relu, float* y) {
  ApplyChannelLastPortable(x, scale, shift, positions, channels, relu, y);
}

}  // namespace

void BatchNormApplyChannelLast(const float* x, const float* scale, const float* shift,
                               int64_t positions, int64_t channels, bool relu, float* y) {
  // No AVX-512 version: the AVX2 one runs on AVX-512 CPUs.
  if (ChooseVectorIsa() == VectorIsa::kBaseline) {
    ApplyChannelLastBaseline(x, scale, shift, positions, channels, relu, y);
  } else {
    ApplyChannelLastAvx2(x, scale, shift, positions, channels, relu, y);
  }
}

namespace {

constexpr int64_t kStatLanes = 64;  // float partial sums of the statistics, 4 AVX-512 registers
constexpr int64_t kGradLanes = 32;  // double partial sums of the gradient, 4 AVX-512 registers

// The samples whose positions share a set of lanes (a group): about kGroupPositions positions, at
// least one sample. A group's lanes add pairwise, and the groups' totals add in turn. Channel-last
// kernel threads take whole groups, each streaming its own part of the data (threads splitting
// the lanes of every sample made both cores fetch all of it).
constexpr int64_t kGroupPositions = 1024;

int64_t GroupSamples(const BatchNormDims& dims) {
  return std::max<int64_t>(1, kGroupPositions / std::max<int64_t>(1, dims.inner));
}

int64_t Groups(const BatchNormDims& dims) {
  const int64_t samples = GroupSamples(dims);
  return (dims.outer + samples - 1) / samples;
}

// body(o_lo, o_hi) for each group's samples, in order.
template <typename Body>
void ForGroups(const BatchNormDims& dims, const Body& body) {
  const int64_t samples = GroupSamples(dims);
  for (int64_t o = 0; o < dims.outer; o += samples) body(o, std::min(dims.outer, o + samples));
}

// The steps every version shares (the lanes' pairwise sums, the statistics, the moving
// statistics' update and each channel's gradient terms) are out of line: one instruction sequence
// for all, so that the versions agree to the bit where NaNs meet too (which NaN an operation keeps
// depends on the order of its operands, which the compiler picks anew in each inlined copy).
#define HN_ONE_COPY __attribute__((noinline))

// Results that are NaN are stored as one NaN. Where two NaNs meet, the one an operation keeps
// depends on the order of its operands, which the compiler picks per copy of the code (a
// commutative add or multiply may be emitted either way round); the channel-first and
// channel-last kernels are different copies, and must give the same bits.
template <typename T>
T OneNaN(T v) {
  return v != v ? std::numeric_limits<T>::quiet_NaN() : v;
}
HN_AVX512 inline __m512 OneNaN16(__m512 v) {
  return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                            _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()));
}

// Adds partial sum l + w into l for w = n / 2, ..., 1 (n a power of two); returns the total.
template <typename T>
HN_ONE_COPY T AddPairwise(T* partial, int64_t n) {
  for (int64_t w = n / 2; w > 0; w /= 2)
    for (int64_t l = 0; l < w; ++l) partial[l] += partial[l + w];
  return partial[0];
}

// A channel's running total after its next group's (the groups in turn, from zero).
template <typename T>
HN_ONE_COPY T AddGroup(T total, T group) {
  return total + group;
}

HN_ONE_COPY void StoreStats(float m, float sq, const BatchNormDims& dims, double eps, float* mean,
                            float* invstd) {
  *mean = OneNaN(m);
  *invstd = OneNaN((sq == 0.f && eps == 0.0)
                       ? 0.f
                       : BatchNormInvStd(sq / static_cast<float>(dims.count()), eps));
}

// The upper 8 floats of v.
HN_AVX512 inline __m256 UpperHalf(__m512 v) {
  return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

}  // namespace

namespace {

// The sum of x, or of (x - m)^2 with kSquares, over channel c.
template <bool kSquares>
float SumChannelScalar(const float* x, const BatchNormDims& dims, int64_t c, float m) {
  const int64_t C = dims.channels, inner = dims.inner;
  float total = 0.f;
  ForGroups(dims, [&](int64_t o_lo, int64_t o_hi) {
    float partial[kStatLanes] = {};
    for (int64_t o = o_lo; o < o_hi; ++o) {
      const float* xc = x + (o * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const float d = xc[i] - m;
        partial[i % kStatLanes] += kSquares ? d * d : xc[i];
      }
    }
    total = AddGroup(total, AddPairwise(partial, kStatLanes));
  });
  return total;
}

}  // namespace

void BatchNormBatchStatsScalar(const float* x, const BatchNormDims& dims, int64_t c, double eps,
                               float* mean, float* invstd) {
  const float m = SumChannelScalar<false>(x, dims, c, 0.f) / static_cast<float>(dims.count());
  StoreStats(m, SumChannelScalar<true>(x, dims, c, m), dims, eps, mean, invstd);
}

namespace {

// x, or (x - m)^2 for the variance's sum.
template <bool kSquares>
HN_AVX512 inline __m512 StatTerm(__m512 v, __m512 m) {
  if (!kSquares) return v;
  const __m512 d = _mm512_sub_ps(v, m);
  return _mm512_mul_ps(d, d);
}

// SumChannelScalar's sum in AVX-512: partial sum l is lane l % 16 of register l / 16; a row's
// tail adds to its lanes only (a masked add leaves the others' bits, -0 included).
template <bool kSquares>
HN_AVX512 float SumChannelAvx512(const float* x, const BatchNormDims& dims, int64_t c, float m) {
  const int64_t C = dims.channels, inner = dims.inner;
  const __m512 m16 = _mm512_set1_ps(m);
  float total = 0.f;
  ForGroups(dims, [&](int64_t o_lo, int64_t o_hi) HN_AVX512 {
    __m512 acc[4];
    for (__m512& r : acc) r = _mm512_setzero_ps();
    for (int64_t o = o_lo; o < o_hi; ++o) {
      const float* xc = x + (o * C + c) * inner;
      int64_t i = 0;
      for (; i + kStatLanes <= inner; i += kStatLanes)
        for (int k = 0; k < 4; ++k)
          acc[k] =
              _mm512_add_ps(acc[k], StatTerm<kSquares>(_mm512_loadu_ps(xc + i + 16 * k), m16));
      for (int k = 0; k < 4; ++k) {
        const __mmask16 lanes = FirstLanes(inner - i - 16 * k);
        const __m512 v = StatTerm<kSquares>(_mm512_maskz_loadu_ps(lanes, xc + i + 16 * k), m16);
        acc[k] = _mm512_mask_add_ps(acc[k], lanes, acc[k], v);
      }
    }
    float partial[kStatLanes];
    for (int k = 0; k < 4; ++k) _mm512_storeu_ps(partial + 16 * k, acc[k]);
    total = AddGroup(total, AddPairwise(partial, kStatLanes));
  });
  return total;
}

}  // namespace

HN_AVX512 void BatchNormBatchStatsAvx512(const float* x, const BatchNormDims& dims, int64_t c,
                                         double eps, float* mean, float* invstd) {
  const float m = SumChannelAvx512<false>(x, dims, c, 0.f) / static_cast<float>(dims.count());
  StoreStats(m, SumChannelAvx512<true>(x, dims, c, m), dims, eps, mean, invstd);
}

void BatchNormBatchStats(const float* x, const BatchNormDims& dims, int64_t c, double eps,
                         float* mean, float* invstd) {
  if (CpuHasAvx512()) {
    BatchNormBatchStatsAvx512(x, dims, c, eps, mean, invstd);
  } else {
    BatchNormBatchStatsScalar(x, dims, c, eps, mean, invstd);
  }
}

namespace {

// dy times 1 where the forward's relu output x * scale + shift is positive, else times 0
// (ReluGrad's bits); for both layouts. The factor is made from a bit mask: GCC turns a select of
// 1 or 0 into a branch around the multiply, which no loop vectorizes.
inline float ReluMaskedDy(float x, float dy, float scale, float shift) {
  const float v = x * scale + shift;
  const uint32_t one_bits = 0x3f800000u & (0u - static_cast<uint32_t>(v > 0.f));
  float keep;
  std::memcpy(&keep, &one_bits, sizeof keep);
  return dy * keep;
}

// ReluMaskedDy of 16 floats.
HN_AVX512 inline __m512 ReluMaskedDy16(__m512 x16, __m512 dy16, __m512 scale, __m512 shift) {
  const __m512 v = _mm512_add_ps(_mm512_mul_ps(x16, scale), shift);
  const __mmask16 positive = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ);
  return _mm512_mul_ps(dy16,
                       _mm512_mask_blend_ps(positive, _mm512_setzero_ps(), _mm512_set1_ps(1.f)));
}

// The forward's scale and shift of channel c (BatchNormKernel's), which the relu followed.
HN_ONE_COPY void ReluScaleShift(const BatchNormGradArgs& a, int64_t c, float mean, float invstd,
                                float* scale, float* shift) {
  *scale = (a.fix_gamma ? 1.f : a.gamma[c]) * invstd;
  *shift = a.relu_beta[c] - mean * *scale;
}

// One channel's part of the gradient: the sums of dy and (x - mean) dy, then dx. With a relu,
// the forward's scale and shift, whose result tells where dy counts.
struct ChannelGrad {
  const BatchNormGradArgs& a;
  const BatchNormDims& dims;
  int64_t c;
  float mean;
  float scale = 0.f, shift = 0.f;
  const float* row(const float* p, int64_t o) const {
    return p + (o * dims.channels + c) * dims.inner;
  }
  float* row(float* p, int64_t o) const { return p + (o * dims.channels + c) * dims.inner; }
  float Dy(float x, float dy) const {
    return a.relu_beta == nullptr ? dy : ReluMaskedDy(x, dy, scale, shift);
  }
};

void GradSumsScalar(const ChannelGrad& g, double* sum_dy, double* dot) {
  *sum_dy = *dot = 0.0;
  ForGroups(g.dims, [&](int64_t o_lo, int64_t o_hi) {
    double sum_part[kGradLanes] = {}, dot_part[kGradLanes] = {};
    for (int64_t o = o_lo; o < o_hi; ++o) {
      const float* x = g.row(g.a.x, o);
      const float* dy = g.row(g.a.dy, o);
      for (int64_t i = 0; i < g.dims.inner; ++i) {
        const float d = g.Dy(x[i], dy[i]);
        sum_part[i % kGradLanes] += d;
        dot_part[i % kGradLanes] += (static_cast<double>(x[i]) - g.mean) * d;
      }
    }
    *sum_dy = AddGroup(*sum_dy, AddPairwise(sum_part, kGradLanes));
    *dot = AddGroup(*dot, AddPairwise(dot_part, kGradLanes));
  });
}

// dx = (dy - mean_dy - (x - mean) * k) * iw with batch statistics, else dy * iw.
void GradDxScalar(const ChannelGrad& g, double mean_dy, double k, double iw) {
  for (int64_t o = 0; o < g.dims.outer; ++o) {
    const float* x = g.row(g.a.x, o);
    const float* dy = g.row(g.a.dy, o);
    float* dx = g.row(g.a.dx, o);
    for (int64_t i = 0; i < g.dims.inner; ++i) {
      const double d = g.Dy(x[i], dy[i]);
      dx[i] = OneNaN(static_cast<float>(
          g.a.batch_stats ? (d - mean_dy - (static_cast<double>(x[i]) - g.mean) * k) * iw
                          : d * iw));
    }
  }
}

// Adds the gradient terms of 8 floats of x and dy to the sums' registers, in the lanes of `lanes`.
HN_AVX512 inline void AddGradTerms(__m512d mean, __mmask8 lanes, __m256 x8, __m256 dy8,
                                   __m512d* sum_acc, __m512d* dot_acc) {
  const __m512d dy = _mm512_cvtps_pd(dy8);
  const __m512d term = _mm512_mul_pd(_mm512_sub_pd(_mm512_cvtps_pd(x8), mean), dy);
  *sum_acc = _mm512_mask_add_pd(*sum_acc, lanes, *sum_acc, dy);
  *dot_acc = _mm512_mask_add_pd(*dot_acc, lanes, *dot_acc, term);
}

// ChannelGrad::Dy of 16 floats.
HN_AVX512 inline __m512 DyOf(const ChannelGrad& g, __m512 x16, __m512 dy16) {
  if (g.a.relu_beta == nullptr) return dy16;
  return ReluMaskedDy16(x16, dy16, _mm512_set1_ps(g.scale), _mm512_set1_ps(g.shift));
}

// Partial sum l is lane l % 8 of register l / 8: the 16 floats at i + 16 j of a block of 32 go
// to registers 2 j (lower half) and 2 j + 1 (upper half).
HN_AVX512 void GradSumsAvx512(const ChannelGrad& g, double* sum_dy, double* dot) {
  const int64_t inner = g.dims.inner;
  const __m512d mean = _mm512_set1_pd(g.mean);
  *sum_dy = *dot = 0.0;
  ForGroups(g.dims, [&](int64_t o_lo, int64_t o_hi) HN_AVX512 {
    __m512d sum_acc[4], dot_acc[4];
    for (int k = 0; k < 4; ++k) sum_acc[k] = dot_acc[k] = _mm512_setzero_pd();
    for (int64_t o = o_lo; o < o_hi; ++o) {
      const float* x = g.row(g.a.x, o);
      const float* dy = g.row(g.a.dy, o);
      for (int64_t i = 0; i < inner; i += kGradLanes) {
        for (int j = 0; j < 2; ++j) {
          const int64_t n = inner - i - 16 * j;
          const __mmask16 lanes = FirstLanes(n);
          const __m512 x16 = LoadFirst(x + i + 16 * j, n);
          const __m512 dy16 = DyOf(g, x16, LoadFirst(dy + i + 16 * j, n));
          AddGradTerms(mean, static_cast<__mmask8>(lanes), _mm512_castps512_ps256(x16),
                       _mm512_castps512_ps256(dy16), &sum_acc[2 * j], &dot_acc[2 * j]);
          AddGradTerms(mean, static_cast<__mmask8>(lanes >> 8), UpperHalf(x16), UpperHalf(dy16),
                       &sum_acc[2 * j + 1], &dot_acc[2 * j + 1]);
        }
      }
    }
    double sum_part[kGradLanes], dot_part[kGradLanes];
    for (int k = 0; k < 4; ++k) {
      _mm512_storeu_pd(sum_part + 8 * k, sum_acc[k]);
      _mm512_storeu_pd(dot_part + 8 * k, dot_acc[k]);
    }
    *sum_dy = AddGroup(*sum_dy, AddPairwise(sum_part, kGradLanes));
    *dot = AddGroup(*dot, AddPairwise(dot_part, kGradLanes));
  });
}

// dx of 8 floats of x and dy (GradDxScalar's formula).
template <bool kBatchStats>
HN_AVX512 inline __m256 DxOf(__m256 x8, __m256 dy8, __m512d mean, __m512d mean_dy, __m512d k,
                             __m512d iw) {
  const __m512d d = _mm512_cvtps_pd(dy8);
  if (!kBatchStats) return _mm512_cvtpd_ps(_mm512_mul_pd(d, iw));
  const __m512d centered = _mm512_mul_pd(_mm512_sub_pd(_mm512_cvtps_pd(x8), mean), k);
  return _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_sub_pd(_mm512_sub_pd(d, mean_dy), centered), iw));
}

template <bool kBatchStats>
HN_AVX512 void GradDxRowsAvx512(const ChannelGrad& g, double mean_dy, double k, double iw) {
  const __m512d mean8 = _mm512_set1_pd(g.mean), mean_dy8 = _mm512_set1_pd(mean_dy),
                k8 = _mm512_set1_pd(k), iw8 = _mm512_set1_pd(iw);
  for (int64_t o = 0; o < g.dims.outer; ++o) {
    const float* x = g.row(g.a.x, o);
    const float* dy = g.row(g.a.dy, o);
    float* dx = g.row(g.a.dx, o);
    for (int64_t i = 0; i < g.dims.inner; i += 16) {
      const int64_t n = g.dims.inner - i;
      const __m512 x16 = LoadFirst(x + i, n);
      const __m512 dy16 = DyOf(g, x16, LoadFirst(dy + i, n));
      const __m256 lo = DxOf<kBatchStats>(_mm512_castps512_ps256(x16), _mm512_castps512_ps256(dy16),
                                          mean8, mean_dy8, k8, iw8);
      const __m256 hi =
          DxOf<kBatchStats>(UpperHalf(x16), UpperHalf(dy16), mean8, mean_dy8, k8, iw8);
      StoreFirst(dx + i,
                 OneNaN16(_mm512_castpd_ps(_mm512_insertf64x4(
                     _mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1))),
                 n);
    }
  }
}

void GradDxAvx512(const ChannelGrad& g, double mean_dy, double k, double iw) {
  if (g.a.batch_stats) {
    GradDxRowsAvx512<true>(g, mean_dy, k, iw);
  } else {
    GradDxRowsAvx512<false>(g, mean_dy, k, iw);
  }
}

using GradSumsFn = void (*)(const ChannelGrad&, double*, double*);
using GradDxFn = void (*)(const ChannelGrad&, double, double, double);

// Channel c's moving statistics after a batch's (mean, invstd).
HN_ONE_COPY void UpdateMoving(const BatchNormGradArgs& a, int64_t c, float mean, float invstd) {
  const float rest = 1.f - a.momentum;
  a.moving_mean[c] = OneNaN(a.moving_mean[c] * a.momentum + mean * rest);
  a.moving_var[c] = OneNaN(a.moving_var[c] * a.momentum + BatchNormVariance(invstd, a.eps) * rest);
}

// Channel c's terms of dx (GradDxScalar's) from its sums over n values; writes its dgamma and
// dbeta.
struct DxTerms {
  double mean_dy, k, iw;
};
HN_ONE_COPY DxTerms FinishChannel(const BatchNormGradArgs& a, int64_t c, double n, float invstd,
                                  double sum_dy, double dot) {
  sum_dy = OneNaN(sum_dy);
  dot = OneNaN(dot);
  const double w = a.fix_gamma ? 1.0 : a.gamma[c];
  DxTerms t;
  t.iw = static_cast<double>(invstd) * w;
  t.mean_dy = n > 0 ? sum_dy / n : 0.0;
  t.k = n > 0 ? dot * invstd * invstd / n : 0.0;
  a.dgamma[c] = a.fix_gamma ? 0.f : static_cast<float>(dot * invstd);
  a.dbeta[c] = static_cast<float>(sum_dy);
  return t;
}

// Channels are independent, each summed in one fixed order: the threads split the channels and
// the result does not depend on their count.
void BackwardWith(GradSumsFn sums, GradDxFn write_dx, const BatchNormGradArgs& a,
                  const BatchNormDims& dims) {
  const double n = static_cast<double>(dims.count());
  ParallelFor(dims.channels, dims.count() >= 4096, [&](int64_t c) {
    float mean, invstd;
    if (a.batch_stats) {
      mean = a.mean[c];
      invstd = a.invstd[c];
      UpdateMoving(a, c, mean, invstd);
    } else {
      mean = a.moving_mean[c];
      invstd = BatchNormInvStd(a.moving_var[c], a.eps);
    }
    ChannelGrad g{a, dims, c, mean};
    if (a.relu_beta != nullptr) ReluScaleShift(a, c, mean, invstd, &g.scale, &g.shift);
    double sum_dy, dot;
    sums(g, &sum_dy, &dot);
    const DxTerms t = FinishChannel(a, c, n, invstd, sum_dy, dot);
    write_dx(g, t.mean_dy, t.k, t.iw);
  });
}

}  // namespace

void BatchNormBackwardScalar(const BatchNormGradArgs& a, const BatchNormDims& dims) {
  BackwardWith(GradSumsScalar, GradDxScalar, a, dims);
}

void BatchNormBackwardAvx512(const BatchNormGradArgs& a, const BatchNormDims& dims) {
  BackwardWith(GradSumsAvx512, GradDxAvx512, a, dims);
}

void BatchNormBackward(const BatchNormGradArgs& a, const BatchNormDims& dims) {
  if (CpuHasAvx512()) {
    BatchNormBackwardAvx512(a, dims);
  } else {
    BatchNormBackwardScalar(a, dims);
  }
}

// ---- Channel-last data (outer, inner, channels): the channel-first kernels' lanes, per channel.

namespace {

// Worth more than one thread: the channel-first kernels' threshold, for all channels at once.
bool WorthSplitting(const BatchNormDims& dims) { return dims.count() * dims.channels >= 65536; }

// totals[c] = channel c's lanes part[l * C + c] added as AddPairwise adds them, all channels at
// once (which NaN a sum keeps may differ, but the results store one NaN): a group's totals.
template <typename T, int64_t kLanes>
void AddLanesPairwise(T* part, int64_t C, T* totals) {
  for (int64_t w = kLanes / 2; w > 1; w /= 2)
    for (int64_t l = 0; l < w; ++l)
      for (int64_t c = 0; c < C; ++c) part[l * C + c] += part[(l + w) * C + c];
  for (int64_t c = 0; c < C; ++c) totals[c] = part[c] + part[C + c];
}

// The lanes l_lo... l_hi of channels c_lo... c_hi of samples o_lo... o_hi (one group's, or part
// of one) a thread sums: position s of a sample goes to lane s % kLanes; every lane takes its
// values in the data's order, whatever the split.
struct LaneRange {
  int64_t c_lo, c_hi, l_lo, l_hi, o_lo, o_hi;
};

// The lane sums of every group, then its totals: sum(range, buffer) adds the values of `range`
// into lane buffer `buffer` (its lanes zeroed first), finish(group, buffer) adds the group's lanes
// pairwise into its totals. Threads take consecutive groups, each in a buffer of its own. With
// fewer groups than threads, the groups go in turn and the threads split each: where a sample has
// a position for every lane, by lanes (each thread reads its own runs of whole positions); else
// by channel blocks of 16 (each thread reads its channels of every position: two threads
// splitting a 64-channel position's 256 bytes fetch each other's cache lines too, which made this
// 5 times slower at 2 threads on ResNet-18's shapes). At most KernelThreads() buffers.
template <int64_t kLanes, typename Sum, typename Finish>
void SumGroups(const BatchNormDims& dims, const Sum& sum, const Finish& finish) {
  const int64_t C = dims.channels, blocks = (C + 15) / 16, samples = GroupSamples(dims);
  const int64_t groups = Groups(dims);
  const int64_t threads = WorthSplitting(dims) ? KernelThreads() : 1;
  if (threads > 1 && groups > 1) {
    const int64_t ranges = std::min(groups, threads);
    ParallelFor(ranges, true, [&](int64_t r) {
      for (int64_t g = groups * r / ranges; g < groups * (r + 1) / ranges; ++g) {
        sum(LaneRange{0, C, 0, kLanes, g * samples, std::min(dims.outer, (g + 1) * samples)}, r);
        finish(g, r);
      }
    });
    return;
  }
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t o_lo = g * samples, o_hi = std::min(dims.outer, o_lo + samples);
    if (threads > 1 && dims.inner >= kLanes) {
      const int64_t ranges = std::min<int64_t>(kLanes, threads);
      ParallelFor(ranges, true, [&](int64_t r) {
        sum(LaneRange{0, C, kLanes * r / ranges, kLanes * (r + 1) / ranges, o_lo, o_hi}, 0);
      });
    } else {
      const int64_t ranges = std::min<int64_t>(blocks, threads);
      ParallelFor(ranges, ranges > 1, [&](int64_t r) {
        sum(LaneRange{blocks * r / ranges * 16, std::min(C, blocks * (r + 1) / ranges * 16), 0,
                      kLanes, o_lo, o_hi},
            0);
      });
    }
    finish(g, 0);
  }
}

// total[c] = the groups' totals[g * C + c] added in turn.
template <typename T>
void AddGroups(const T* totals, const BatchNormDims& dims, T* total) {
  const int64_t C = dims.channels, groups = Groups(dims);
  for (int64_t c = 0; c < C; ++c) {
    T t = T{0};
    for (int64_t g = 0; g < groups; ++g) t = AddGroup(t, totals[g * C + c]);
    total[c] = t;
  }
}

// part[l * C + c] = 0 for the lanes l and channels c of range r.
template <typename T>
[[gnu::always_inline]] inline void ZeroLanes(T* part, int64_t C, const LaneRange& r) {
  for (int64_t l = r.l_lo; l < r.l_hi; ++l)
    std::fill(part + l * C + r.c_lo, part + l * C + r.c_hi, T{0});
}

// add(at, lane) for the positions whose lane s % kLanes is in range r, in memory order: `at` the
// position's offset in the data, `lane` its lane's (l * C) in the partial sums. The one walk of
// every version of the statistics' and the gradient's sums; an AVX-512 version's `add` carries
// HN_AVX512 itself (a lambda does not take its function's target).
template <int64_t kLanes, typename Add>
[[gnu::always_inline]] inline void ForLanePositions(const BatchNormDims& dims, const LaneRange& r,
                                                    const Add& add) {
  const int64_t C = dims.channels;
  for (int64_t o = r.o_lo; o < r.o_hi; ++o) {
    for (int64_t s0 = r.l_lo; s0 < dims.inner; s0 += kLanes) {
      const int64_t end = std::min(dims.inner, s0 + r.l_hi - r.l_lo);
      for (int64_t s = s0; s < end; ++s) add((o * dims.inner + s) * C, (r.l_lo + s - s0) * C);
    }
  }
}

// The lanes of the statistics' sums (x, or (x - mean)^2 with kSquares) of range r into
// part[l * C + c]: the portable version's loop over one position's channels, which the compiler
// vectorizes (8 channels a register in the AVX2 copy).
template <bool kSquares>
[[gnu::always_inline]] inline void AddStatTerms(const float* __restrict xs,
                                                const float* __restrict mean,
                                                float* __restrict p, int64_t c_lo, int64_t c_hi) {
  for (int64_t c = c_lo; c < c_hi; ++c) {
    if (kSquares) {
      const float d = xs[c] - mean[c];
      p[c] += d * d;
    } else {
      p[c] += xs[c];
    }
  }
}

template <bool kSquares>
[[gnu::always_inline]] inline void StatLanesRangePortable(const float* x, const BatchNormDims& dims,
                                                          const float* mean, float* part,
                                                          const LaneRange& r) {
  ZeroLanes(part, dims.channels, r);
  ForLanePositions<kStatLanes>(dims, r, [&](int64_t at, int64_t lane) {
    AddStatTerms<kSquares>(x + at, mean, part + lane, r.c_lo, r.c_hi);
  });
}

template <bool kSquares>
void StatLanesRangeScalar(const float* x, const BatchNormDims& dims, const float* mean,
                          float* part, const LaneRange& r) {
  StatLanesRangePortable<kSquares>(x, dims, mean, part, r);
}

template <bool kSquares>
HN_AVX2 void StatLanesRangeAvx2(const float* x, const BatchNormDims& dims, const float* mean,
                                float* part, const LaneRange& r) {
  StatLanesRangePortable<kSquares>(x, dims, mean, part, r);
}

// StatLanesRangePortable's lanes of range r, 16 channels a register.
template <bool kSquares>
HN_AVX512 void StatLanesRangeAvx512(const float* x, const BatchNormDims& dims, const float* mean,
                                    float* part, const LaneRange& r) {
  ZeroLanes(part, dims.channels, r);
  const int64_t c_lo = r.c_lo, c_hi = r.c_hi;
  ForLanePositions<kStatLanes>(dims, r, [&](int64_t at, int64_t lane) HN_AVX512 {
    const float* xs = x + at;
    float* p = part + lane;
    for (int64_t c = c_lo; c < c_hi; c += 16) {
      const int64_t n = c_hi - c;
      const __m512 m = kSquares ? LoadFirst(mean + c, n) : _mm512_setzero_ps();
      const __m512 term = StatTerm<kSquares>(LoadFirst(xs + c, n), m);
      StoreFirst(p + c, _mm512_add_ps(LoadFirst(p + c, n), term), n);
    }
  });
}

// Each group's totals of the statistics' sums into totals[g * C + c]; `lanes` holds
// KernelThreads() lane buffers.
template <bool kSquares>
void StatGroups(VectorIsa isa, const float* x, const BatchNormDims& dims, const float* mean,
                float* lanes, float* totals) {
  const int64_t C = dims.channels;
  SumGroups<kStatLanes>(
      dims,
      [&](const LaneRange& r, int64_t buffer) {
        float* part = lanes + buffer * kStatLanes * C;
        switch (isa) {
          case VectorIsa::kAvx512:
            return StatLanesRangeAvx512<kSquares>(x, dims, mean, part, r);
          case VectorIsa::kAvx2:
            return StatLanesRangeAvx2<kSquares>(x, dims, mean, part, r);
          case VectorIsa::kBaseline:
            return StatLanesRangeScalar<kSquares>(x, dims, mean, part, r);
        }
      },
      [&](int64_t g, int64_t buffer) {
        AddLanesPairwise<float, kStatLanes>(lanes + buffer * kStatLanes * C, C, totals + g * C);
      });
}

}  // namespace

void BatchNormBatchStatsChannelLastWith(VectorIsa isa, const float* x,
                                        const BatchNormDims& dims, double eps, float* mean,
                                        float* invstd, Workspace* workspace) {
  const int64_t C = dims.channels, buffers = KernelThreads();
  float* lanes = workspace->Get<float>(
      kBatchNormLanesSlot, static_cast<size_t>((buffers * kStatLanes + Groups(dims) + 1) * C));
  float* totals = lanes + buffers * kStatLanes * C;
  float* total = totals + Groups(dims) * C;
  StatGroups<false>(isa, x, dims, nullptr, lanes, totals);
  AddGroups(totals, dims, total);
  for (int64_t c = 0; c < C; ++c) mean[c] = total[c] / static_cast<float>(dims.count());
  StatGroups<true>(isa, x, dims, mean, lanes, totals);
  AddGroups(totals, dims, total);
  for (int64_t c = 0; c < C; ++c) StoreStats(mean[c], total[c], dims, eps, mean + c, invstd + c);
}

void BatchNormBatchStatsChannelLast(const float* x, const BatchNormDims& dims, double eps,
                                    float* mean, float* invstd, Workspace* workspace) {
  BatchNormBatchStatsChannelLastWith(ChooseVectorIsa(), x, dims, eps, mean, invstd, workspace);
}

namespace {

// The per-channel values of a channel-last backward, in kBatchNormAffineSlot.
struct ChannelLastGrad {
  float* mean;  // the statistics that normalize
  float* invstd;
  float* scale;  // with a relu, the forward's scale and shift (ReluScaleShift)
  float* shift;
  double* mean_d;   // mean, in double
  double* mean_dy;  // dx's terms (GradDxScalar's)
  double* k;
  double* iw;
};

// The lanes of the gradient's sums of range r, sum dy into sum_part[l * C + c] and (x - mean) dy
// into dot_part: the portable version's loop over one position's channels, which the compiler
// vectorizes (4 channels a register in the AVX2 copy).
template <bool kRelu>
[[gnu::always_inline]] inline void AddGradTerms(const float* __restrict x,
                                                const float* __restrict dy,
                                                const ChannelLastGrad& v, double* __restrict sum,
                                                double* __restrict dot, int64_t c_lo,
                                                int64_t c_hi) {
  const double* __restrict mean = v.mean_d;
  const float* __restrict scale = v.scale;
  const float* __restrict shift = v.shift;
  for (int64_t c = c_lo; c < c_hi; ++c) {
    const float d = kRelu ? ReluMaskedDy(x[c], dy[c], scale[c], shift[c]) : dy[c];
    sum[c] += d;
    dot[c] += (static_cast<double>(x[c]) - mean[c]) * d;
  }
}

template <bool kRelu>
[[gnu::always_inline]] inline void GradLanesRangePortable(const BatchNormGradArgs& a,
                                                          const BatchNormDims& dims,
                                                          const ChannelLastGrad& v,
                                                          double* sum_part, double* dot_part,
                                                          const LaneRange& r) {
  ZeroLanes(sum_part, dims.channels, r);
  ZeroLanes(dot_part, dims.channels, r);
  ForLanePositions<kGradLanes>(dims, r, [&](int64_t at, int64_t lane) {
    AddGradTerms<kRelu>(a.x + at, a.dy + at, v, sum_part + lane, dot_part + lane, r.c_lo, r.c_hi);
  });
}

template <bool kRelu>
void GradLanesRangeScalar(const BatchNormGradArgs& a, const BatchNormDims& dims,
                          const ChannelLastGrad& v, double* sum_part, double* dot_part,
                          const LaneRange& r) {
  GradLanesRangePortable<kRelu>(a, dims, v, sum_part, dot_part, r);
}

template <bool kRelu>
HN_AVX2 void GradLanesRangeAvx2(const BatchNormGradArgs& a, const BatchNormDims& dims,
                                const ChannelLastGrad& v, double* sum_part, double* dot_part,
                                const LaneRange& r) {
  GradLanesRangePortable<kRelu>(a, dims, v, sum_part, dot_part, r);
}

HN_AVX512 inline void AddGradHalf(__m256 x8, __m256 dy8, __m512d mean, __m512d* sum_acc,
                                  __m512d* dot_acc) {
  const __m512d dy = _mm512_cvtps_pd(dy8);
  *sum_acc = _mm512_add_pd(*sum_acc, dy);
  *dot_acc = _mm512_add_pd(*dot_acc, _mm512_mul_pd(_mm512_sub_pd(_mm512_cvtps_pd(x8), mean), dy));
}

// GradLanesRangePortable's lanes of range r, 16 channels (two halves of 8 doubles) at once.
HN_AVX512 void GradLanesRangeAvx512(const BatchNormGradArgs& a, const BatchNormDims& dims,
                                    const ChannelLastGrad& v, double* sum_part, double* dot_part,
                                    const LaneRange& r) {
  ZeroLanes(sum_part, dims.channels, r);
  ZeroLanes(dot_part, dims.channels, r);
  const bool relu = a.relu_beta != nullptr;
  ForLanePositions<kGradLanes>(dims, r, [&](int64_t at, int64_t lane) HN_AVX512 {
    double* sp = sum_part + lane;
    double* dp = dot_part + lane;
    for (int64_t c = r.c_lo; c < r.c_hi; c += 16) {
      const int64_t n = r.c_hi - c;
      const __m512 x16 = LoadFirst(a.x + at + c, n);
      __m512 dy16 = LoadFirst(a.dy + at + c, n);
      if (relu) {
        dy16 = ReluMaskedDy16(x16, dy16, LoadFirst(v.scale + c, n), LoadFirst(v.shift + c, n));
      }
      __m512d sum_lo = LoadFirst(sp + c, n), sum_hi = LoadFirst(sp + c + 8, n - 8);
      __m512d dot_lo = LoadFirst(dp + c, n), dot_hi = LoadFirst(dp + c + 8, n - 8);
      AddGradHalf(_mm512_castps512_ps256(x16), _mm512_castps512_ps256(dy16),
                  LoadFirst(v.mean_d + c, n), &sum_lo, &dot_lo);
      AddGradHalf(UpperHalf(x16), UpperHalf(dy16), LoadFirst(v.mean_d + c + 8, n - 8), &sum_hi,
                  &dot_hi);
      StoreFirst(sp + c, sum_lo, n);
      StoreFirst(sp + c + 8, sum_hi, n - 8);
      StoreFirst(dp + c, dot_lo, n);
      StoreFirst(dp + c + 8, dot_hi, n - 8);
    }
  });
}

// Each group's totals of the gradient's sums into sum_totals[g * C + c] and dot_totals; `lanes`
// holds KernelThreads() buffers of the two sums' lanes.
void GradGroups(VectorIsa isa, const BatchNormGradArgs& a, const BatchNormDims& dims,
                const ChannelLastGrad& v, double* lanes, double* sum_totals, double* dot_totals) {
  const bool relu = a.relu_beta != nullptr;
  const int64_t C = dims.channels;
  SumGroups<kGradLanes>(
      dims,
      [&](const LaneRange& r, int64_t buffer) {
        double* sum_part = lanes + buffer * 2 * kGradLanes * C;
        double* dot_part = sum_part + kGradLanes * C;
        switch (isa) {
          case VectorIsa::kAvx512:
            return GradLanesRangeAvx512(a, dims, v, sum_part, dot_part, r);
          case VectorIsa::kAvx2:
            return relu ? GradLanesRangeAvx2<true>(a, dims, v, sum_part, dot_part, r)
                        : GradLanesRangeAvx2<false>(a, dims, v, sum_part, dot_part, r);
          case VectorIsa::kBaseline:
            return relu ? GradLanesRangeScalar<true>(a, dims, v, sum_part, dot_part, r)
                        : GradLanesRangeScalar<false>(a, dims, v, sum_part, dot_part, r);
        }
      },
      [&](int64_t g, int64_t buffer) {
        double* sum_part = lanes + buffer * 2 * kGradLanes * C;
        AddLanesPairwise<double, kGradLanes>(sum_part, C, sum_totals + g * C);
        AddLanesPairwise<double, kGradLanes>(sum_part + kGradLanes * C, C, dot_totals + g * C);
      });
}

// dx of one position's channels (GradDxScalar's formula per channel): the portable version's
// loop, which the compiler vectorizes (4 channels a register in the AVX2 copy).
template <bool kBatchStats, bool kRelu>
[[gnu::always_inline]] inline void DxOfPosition(const float* __restrict x,
                                                const float* __restrict dy,
                                                const ChannelLastGrad& v, float* __restrict dx,
                                                int64_t C) {
  const double* __restrict mean = v.mean_d;
  const double* __restrict mean_dy = v.mean_dy;
  const double* __restrict k = v.k;
  const double* __restrict iw = v.iw;
  const float* __restrict scale = v.scale;
  const float* __restrict shift = v.shift;
  for (int64_t c = 0; c < C; ++c) {
    const double d = kRelu ? ReluMaskedDy(x[c], dy[c], scale[c], shift[c]) : dy[c];
    dx[c] = OneNaN(static_cast<float>(
        kBatchStats ? (d - mean_dy[c] - (static_cast<double>(x[c]) - mean[c]) * k[c]) * iw[c]
                    : d * iw[c]));
  }
}

template <bool kBatchStats, bool kRelu>
[[gnu::always_inline]] inline void GradDxSamplePortable(const BatchNormGradArgs& a,
                                                        const BatchNormDims& dims,
                                                        const ChannelLastGrad& v, int64_t o) {
  const int64_t C = dims.channels;
  for (int64_t at = o * dims.inner * C; at < (o + 1) * dims.inner * C; at += C)
    DxOfPosition<kBatchStats, kRelu>(a.x + at, a.dy + at, v, a.dx + at, C);
}

template <bool kBatchStats, bool kRelu>
void GradDxSampleScalar(const BatchNormGradArgs& a, const BatchNormDims& dims,
                        const ChannelLastGrad& v, int64_t o) {
  GradDxSamplePortable<kBatchStats, kRelu>(a, dims, v, o);
}

template <bool kBatchStats, bool kRelu>
HN_AVX2 void GradDxSampleAvx2(const BatchNormGradArgs& a, const BatchNormDims& dims,
                              const ChannelLastGrad& v, int64_t o) {
  GradDxSamplePortable<kBatchStats, kRelu>(a, dims, v, o);
}

template <bool kBatchStats>
HN_AVX512 void GradDxSampleAvx512(const BatchNormGradArgs& a, const BatchNormDims& dims,
                                  const ChannelLastGrad& v, int64_t o) {
  const int64_t C = dims.channels;
  for (int64_t at = o * dims.inner * C; at < (o + 1) * dims.inner * C; at += C) {
    for (int64_t c = 0; c < C; c += 16) {
      const int64_t n = C - c, h = c + 8;
      const __m512 x16 = LoadFirst(a.x + at + c, n);
      __m512 dy16 = LoadFirst(a.dy + at + c, n);
      if (a.relu_beta != nullptr) {
        dy16 = ReluMaskedDy16(x16, dy16, LoadFirst(v.scale + c, n), LoadFirst(v.shift + c, n));
      }
      const __m256 lo = DxOf<kBatchStats>(_mm512_castps512_ps256(x16), _mm512_castps512_ps256(dy16),
                                          LoadFirst(v.mean_d + c, n), LoadFirst(v.mean_dy + c, n),
                                          LoadFirst(v.k + c, n), LoadFirst(v.iw + c, n));
      const __m256 hi = DxOf<kBatchStats>(UpperHalf(x16), UpperHalf(dy16),
                                          LoadFirst(v.mean_d + h, n - 8),
                                          LoadFirst(v.mean_dy + h, n - 8),
                                          LoadFirst(v.k + h, n - 8), LoadFirst(v.iw + h, n - 8));
      StoreFirst(a.dx + at + c,
                 OneNaN16(_mm512_castpd_ps(_mm512_insertf64x4(
                     _mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1))),
                 n);
    }
  }
}

using GradDxSampleFn = void (*)(const BatchNormGradArgs&, const BatchNormDims&,
                                const ChannelLastGrad&, int64_t);

template <bool kBatchStats, bool kRelu>
GradDxSampleFn GradDxSampleOf(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kAvx512:
      return GradDxSampleAvx512<kBatchStats>;
    case VectorIsa::kAvx2:
      return GradDxSampleAvx2<kBatchStats, kRelu>;
    case VectorIsa::kBaseline:
      break;
  }
  return GradDxSampleScalar<kBatchStats, kRelu>;
}

// The version of `isa` for a call's case.
GradDxSampleFn GradDxSampleOf(VectorIsa isa, const BatchNormGradArgs& a) {
  const bool relu = a.relu_beta != nullptr;
  if (a.batch_stats)
    return relu ? GradDxSampleOf<true, true>(isa) : GradDxSampleOf<true, false>(isa);
  return relu ? GradDxSampleOf<false, true>(isa) : GradDxSampleOf<false, false>(isa);
}

}  // namespace

void BatchNormBackwardChannelLastWith(VectorIsa isa, const BatchNormGradArgs& a,
                                      const BatchNormDims& dims, Workspace* workspace) {
  const int64_t C = dims.channels;
  const size_t Cs = static_cast<size_t>(C);
  // Per channel: 4 floats and 4 doubles.
  auto* values = workspace->Get<double>(kBatchNormAffineSlot, 6 * Cs);
  float* floats = reinterpret_cast<float*>(values);
  ChannelLastGrad v{floats,         floats + C,     floats + 2 * C, floats + 3 * C,
                    values + 2 * C, values + 3 * C, values + 4 * C, values + 5 * C};
  for (int64_t c = 0; c < C; ++c) {
    if (a.batch_stats) {  // the forward's, as BackwardWith reads them
      v.mean[c] = a.mean[c];
      v.invstd[c] = a.invstd[c];
      UpdateMoving(a, c, v.mean[c], v.invstd[c]);
    } else {
      v.mean[c] = a.moving_mean[c];
      v.invstd[c] = BatchNormInvStd(a.moving_var[c], a.eps);
    }
    if (a.relu_beta != nullptr)
      ReluScaleShift(a, c, v.mean[c], v.invstd[c], &v.scale[c], &v.shift[c]);
  }
  for (int64_t c = 0; c < C; ++c) v.mean_d[c] = v.mean[c];
  const int64_t buffers = KernelThreads(), groups = Groups(dims);
  double* lanes = workspace->Get<double>(
      kBatchNormLanesSlot, static_cast<size_t>((buffers * 2 * kGradLanes + 2 * groups + 2) * C));
  double* sum_totals = lanes + buffers * 2 * kGradLanes * C;
  double* dot_totals = sum_totals + groups * C;
  double* sum_dy = dot_totals + groups * C;
  double* dot = sum_dy + C;
  GradGroups(isa, a, dims, v, lanes, sum_totals, dot_totals);
  AddGroups(sum_totals, dims, sum_dy);
  AddGroups(dot_totals, dims, dot);
  const double n = static_cast<double>(dims.count());
  for (int64_t c = 0; c < C; ++c) {
    const DxTerms t = FinishChannel(a, c, n, v.invstd[c], sum_dy[c], dot[c]);
    v.mean_dy[c] = t.mean_dy;
    v.k[c] = t.k;
    v.iw[c] = t.iw;
  }
  const GradDxSampleFn write_dx = GradDxSampleOf(isa, a);
  ParallelFor(dims.outer, WorthSplitting(dims), [&](int64_t o) { write_dx(a, dims, v, o); });
}

void BatchNormBackwardChannelLast(const BatchNormGradArgs& a, const BatchNormDims& dims,
                                  Workspace* workspace) {
  BatchNormBackwardChannelLastWith(ChooseVectorIsa(), a, dims, workspace);
}

namespace {

// The batch mean and inverse standard deviation (of the biased variance) of channel c, in double.
void BatchStatsFloat64(const double* x, const BatchNormDims& dims, int64_t c, double eps,
                       double* mean, double* invstd) {
  const int64_t C = dims.channels, inner = dims.inner;
  const double n = static_cast<double>(dims.count());
  double sum = 0.0;
  for (int64_t o = 0; o < dims.outer; ++o) {
    const double* xc = x + (o * C + c) * inner;
    for (int64_t i = 0; i < inner; ++i) sum += xc[i];
  }
  const double m = n > 0 ? sum / n : 0.0;
  double sq = 0.0;
  for (int64_t o = 0; o < dims.outer; ++o) {
    const double* xc = x + (o * C + c) * inner;
    for (int64_t i = 0; i < inner; ++i) sq += (xc[i] - m) * (xc[i] - m);
  }
  *mean = m;
  const double var = n > 0 ? sq / n : 0.0;
  *invstd = (var == 0.0 && eps == 0.0) ? 0.0 : 1.0 / std::sqrt(var + eps);
}

}  // namespace

void BatchNormForward(const BatchNormFloat64Args& a, const BatchNormDims& dims) {
  const int64_t C = dims.channels, inner = dims.inner;
  for (int64_t c = 0; c < C; ++c) {
    double mean, invstd;
    if (a.batch_stats) {
      BatchStatsFloat64(a.x, dims, c, a.eps, &mean, &invstd);
    } else {
      mean = a.moving_mean[c];
      invstd = 1.0 / std::sqrt(a.moving_var[c] + a.eps);
    }
    if (a.mean_out) a.mean_out[c] = mean;
    if (a.invstd_out) a.invstd_out[c] = invstd;
    const double w = a.fix_gamma ? 1.0 : a.gamma[c];
    for (int64_t o = 0; o < dims.outer; ++o) {
      const int64_t base = (o * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const double v = (a.x[base + i] - mean) * invstd * w + a.beta[c];
        a.y[base + i] = a.relu && !(v > 0.0) ? 0.0 : v;
      }
    }
  }
}

void BatchNormBackward(const BatchNormGradFloat64Args& a, const BatchNormDims& dims) {
  const int64_t C = dims.channels, inner = dims.inner;
  const double n = static_cast<double>(dims.count());
  for (int64_t c = 0; c < C; ++c) {
    double mean, invstd;
    if (a.batch_stats) {
      mean = a.mean[c];
      invstd = a.invstd[c];
      const double var = invstd == 0.0 ? 0.0 : 1.0 / (invstd * invstd) - a.eps;
      a.moving_mean[c] = a.moving_mean[c] * a.momentum + mean * (1.0 - a.momentum);
      a.moving_var[c] = a.moving_var[c] * a.momentum + var * (1.0 - a.momentum);
    } else {
      mean = a.moving_mean[c];
      invstd = 1.0 / std::sqrt(a.moving_var[c] + a.eps);
    }
    const double w = a.fix_gamma ? 1.0 : a.gamma[c];
    // dy where the forward's relu output ((x - mean) * invstd * w + beta, BatchNormForward's) is
    // positive.
    auto dy_at = [&](int64_t at) {
      if (a.relu_beta == nullptr) return a.dy[at];
      const double v = (a.x[at] - mean) * invstd * w + a.relu_beta[c];
      return a.dy[at] * (v > 0.0 ? 1.0 : 0.0);
    };
    double sum_dy = 0.0, dot = 0.0;
    for (int64_t o = 0; o < dims.outer; ++o) {
      const int64_t base = (o * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const double dy = dy_at(base + i);
        sum_dy += dy;
        dot += (a.x[base + i] - mean) * dy;
      }
    }
    const double iw = invstd * w;
    const double mean_dy = n > 0 ? sum_dy / n : 0.0;
    const double k = n > 0 ? dot * invstd * invstd / n : 0.0;
    for (int64_t o = 0; o < dims.outer; ++o) {
      const int64_t base = (o * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const double dy = dy_at(base + i);
        a.dx[base + i] = a.batch_stats ? (dy - mean_dy - (a.x[base + i] - mean) * k) * iw : dy * iw;
      }
    }
    a.dgamma[c] = a.fix_gamma ? 0.0 : dot * invstd;
    a.dbeta[c] = sum_dy;
  }
}

}  // namespace internal
}  // namespace hybridnet
