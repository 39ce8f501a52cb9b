#include "kernels/batch_norm.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/avx512-inl.h"
#include "kernels/parallel-inl.h"

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

constexpr int64_t kStatLanes = 64;  // float partial sums of the statistics, 4 AVX-512 registers
constexpr int64_t kGradLanes = 32;  // double partial sums of the gradient, 4 AVX-512 registers

// Adds partial sum l + w into l for w = n / 2, ..., 1 (n a power of two); returns the total.
template <typename T>
T AddPairwise(T* partial, int64_t n) {
  for (int64_t w = n / 2; w > 0; w /= 2)
    for (int64_t l = 0; l < w; ++l) partial[l] += partial[l + w];
  return partial[0];
}

void StoreStats(float m, float sq, const BatchNormDims& dims, double eps, float* mean,
                float* invstd) {
  *mean = m;
  *invstd =
      (sq == 0.f && eps == 0.0) ? 0.f : BatchNormInvStd(sq / static_cast<float>(dims.count()), eps);
}

// The upper 8 floats of v.
HN_AVX512 inline __m256 UpperHalf(__m512 v) {
  return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

}  // namespace

void BatchNormBatchStatsScalar(const float* x, const BatchNormDims& dims, int64_t c, double eps,
                               float* mean, float* invstd) {
  const int64_t C = dims.channels, inner = dims.inner;
  float partial[kStatLanes] = {};
  for (int64_t o = 0; o < dims.outer; ++o) {
    const float* xc = x + (o * C + c) * inner;
    for (int64_t i = 0; i < inner; ++i) partial[i % kStatLanes] += xc[i];
  }
  const float m = AddPairwise(partial, kStatLanes) / static_cast<float>(dims.count());
  std::fill(partial, partial + kStatLanes, 0.f);
  for (int64_t o = 0; o < dims.outer; ++o) {
    const float* xc = x + (o * C + c) * inner;
    for (int64_t i = 0; i < inner; ++i) {
      const float d = xc[i] - m;
      partial[i % kStatLanes] += d * d;
    }
  }
  StoreStats(m, AddPairwise(partial, kStatLanes), dims, eps, mean, invstd);
}

namespace {

// x, or (x - m)^2 for the variance's sum.
template <bool kSquares>
HN_AVX512 inline __m512 StatTerm(__m512 v, __m512 m) {
  if (!kSquares) return v;
  const __m512 d = _mm512_sub_ps(v, m);
  return _mm512_mul_ps(d, d);
}

// The sum of StatTerm over channel c in BatchNormBatchStats' order: partial sum l is lane l % 16
// of register l / 16; a row's tail adds to its lanes only (a masked add leaves the others' bits,
// -0 included).
template <bool kSquares>
HN_AVX512 float SumChannelAvx512(const float* x, const BatchNormDims& dims, int64_t c, float m) {
  const int64_t C = dims.channels, inner = dims.inner;
  const __m512 m16 = _mm512_set1_ps(m);
  __m512 acc[4];
  for (__m512& r : acc) r = _mm512_setzero_ps();
  for (int64_t o = 0; o < dims.outer; ++o) {
    const float* xc = x + (o * C + c) * inner;
    int64_t i = 0;
    for (; i + kStatLanes <= inner; i += kStatLanes)
      for (int k = 0; k < 4; ++k)
        acc[k] = _mm512_add_ps(acc[k], StatTerm<kSquares>(_mm512_loadu_ps(xc + i + 16 * k), m16));
    for (int k = 0; k < 4; ++k) {
      const __mmask16 lanes = FirstLanes(inner - i - 16 * k);
      const __m512 v = StatTerm<kSquares>(_mm512_maskz_loadu_ps(lanes, xc + i + 16 * k), m16);
      acc[k] = _mm512_mask_add_ps(acc[k], lanes, acc[k], v);
    }
  }
  float partial[kStatLanes];
  for (int k = 0; k < 4; ++k) _mm512_storeu_ps(partial + 16 * k, acc[k]);
  return AddPairwise(partial, kStatLanes);
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
  // dy times 1 where the forward's relu output is positive, else times 0 (ReluGrad's bits).
  float Dy(float x, float dy) const {
    if (a.relu_beta == nullptr) return dy;
    const float v = x * scale + shift;
    return dy * (v > 0.f ? 1.f : 0.f);
  }
};

void GradSumsScalar(const ChannelGrad& g, double* sum_dy, double* dot) {
  double sum_part[kGradLanes] = {}, dot_part[kGradLanes] = {};
  for (int64_t o = 0; o < g.dims.outer; ++o) {
    const float* x = g.row(g.a.x, o);
    const float* dy = g.row(g.a.dy, o);
    for (int64_t i = 0; i < g.dims.inner; ++i) {
      const float d = g.Dy(x[i], dy[i]);
      sum_part[i % kGradLanes] += d;
      dot_part[i % kGradLanes] += (static_cast<double>(x[i]) - g.mean) * d;
    }
  }
  *sum_dy = AddPairwise(sum_part, kGradLanes);
  *dot = AddPairwise(dot_part, kGradLanes);
}

// dx = (dy - mean_dy - (x - mean) * k) * iw with batch statistics, else dy * iw.
void GradDxScalar(const ChannelGrad& g, double mean_dy, double k, double iw) {
  for (int64_t o = 0; o < g.dims.outer; ++o) {
    const float* x = g.row(g.a.x, o);
    const float* dy = g.row(g.a.dy, o);
    float* dx = g.row(g.a.dx, o);
    for (int64_t i = 0; i < g.dims.inner; ++i) {
      const double d = g.Dy(x[i], dy[i]);
      dx[i] = static_cast<float>(
          g.a.batch_stats ? (d - mean_dy - (static_cast<double>(x[i]) - g.mean) * k) * iw : d * iw);
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
  const __m512 v =
      _mm512_add_ps(_mm512_mul_ps(x16, _mm512_set1_ps(g.scale)), _mm512_set1_ps(g.shift));
  const __mmask16 positive = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ);
  return _mm512_mul_ps(dy16,
                       _mm512_mask_blend_ps(positive, _mm512_setzero_ps(), _mm512_set1_ps(1.f)));
}

// Partial sum l is lane l % 8 of register l / 8: the 16 floats at i + 16 j of a block of 32 go
// to registers 2 j (lower half) and 2 j + 1 (upper half).
HN_AVX512 void GradSumsAvx512(const ChannelGrad& g, double* sum_dy, double* dot) {
  const int64_t inner = g.dims.inner;
  const __m512d mean = _mm512_set1_pd(g.mean);
  __m512d sum_acc[4], dot_acc[4];
  for (int k = 0; k < 4; ++k) sum_acc[k] = dot_acc[k] = _mm512_setzero_pd();
  for (int64_t o = 0; o < g.dims.outer; ++o) {
    const float* x = g.row(g.a.x, o);
    const float* dy = g.row(g.a.dy, o);
    for (int64_t i = 0; i < inner; i += kGradLanes) {
      for (int j = 0; j < 2; ++j) {
        const __mmask16 lanes = FirstLanes(inner - i - 16 * j);
        const __m512 x16 = _mm512_maskz_loadu_ps(lanes, x + i + 16 * j);
        const __m512 dy16 = DyOf(g, x16, _mm512_maskz_loadu_ps(lanes, dy + i + 16 * j));
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
  *sum_dy = AddPairwise(sum_part, kGradLanes);
  *dot = AddPairwise(dot_part, kGradLanes);
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
      const __mmask16 lanes = FirstLanes(g.dims.inner - i);
      const __m512 x16 = _mm512_maskz_loadu_ps(lanes, x + i);
      const __m512 dy16 = DyOf(g, x16, _mm512_maskz_loadu_ps(lanes, dy + i));
      const __m256 lo = DxOf<kBatchStats>(_mm512_castps512_ps256(x16), _mm512_castps512_ps256(dy16),
                                          mean8, mean_dy8, k8, iw8);
      const __m256 hi =
          DxOf<kBatchStats>(UpperHalf(x16), UpperHalf(dy16), mean8, mean_dy8, k8, iw8);
      _mm512_mask_storeu_ps(
          dx + i, lanes,
          _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)),
                                              _mm256_castps_pd(hi), 1)));
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
      const float rest = 1.f - a.momentum;
      a.moving_mean[c] = a.moving_mean[c] * a.momentum + mean * rest;
      a.moving_var[c] = a.moving_var[c] * a.momentum + BatchNormVariance(invstd, a.eps) * rest;
    } else {
      mean = a.moving_mean[c];
      invstd = BatchNormInvStd(a.moving_var[c], a.eps);
    }
    ChannelGrad g{a, dims, c, mean};
    if (a.relu_beta != nullptr) {
      g.scale = (a.fix_gamma ? 1.f : a.gamma[c]) * invstd;
      g.shift = a.relu_beta[c] - mean * g.scale;
    }
    double sum_dy, dot;
    sums(g, &sum_dy, &dot);
    const double w = a.fix_gamma ? 1.0 : a.gamma[c];
    const double iw = static_cast<double>(invstd) * w;
    const double mean_dy = n > 0 ? sum_dy / n : 0.0;
    const double k = n > 0 ? dot * invstd * invstd / n : 0.0;
    write_dx(g, mean_dy, k, iw);
    a.dgamma[c] = a.fix_gamma ? 0.f : static_cast<float>(dot * invstd);
    a.dbeta[c] = static_cast<float>(sum_dy);
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
