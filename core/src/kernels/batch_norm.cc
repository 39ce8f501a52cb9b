#include "kernels/batch_norm.h"

#include <immintrin.h>

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

void BatchNormBatchStats(const float* x, const BatchNormDims& dims, int64_t c, double eps,
                         float* mean, float* invstd) {
  const int64_t C = dims.channels, inner = dims.inner;
  float sum = 0.f;
  for (int64_t o = 0; o < dims.outer; ++o) {
    const float* xc = x + (o * C + c) * inner;
    for (int64_t i = 0; i < inner; ++i) sum += xc[i];
  }
  const float m = sum / static_cast<float>(dims.count());
  float sq = 0.f;
  for (int64_t o = 0; o < dims.outer; ++o) {
    const float* xc = x + (o * C + c) * inner;
    for (int64_t i = 0; i < inner; ++i) sq += (xc[i] - m) * (xc[i] - m);
  }
  *mean = m;
  *invstd =
      (sq == 0.f && eps == 0.0) ? 0.f : BatchNormInvStd(sq / static_cast<float>(dims.count()), eps);
}

// Channels are independent, each summed in one fixed order: the threads split the channels and
// the result does not depend on their count.
void BatchNormBackward(const BatchNormGradArgs& a, const BatchNormDims& dims) {
  const int64_t C = dims.channels, inner = dims.inner;
  const double n = static_cast<double>(dims.count());
  ParallelFor(C, dims.count() >= 4096, [&](int64_t c) {
    float mean, invstd;
    if (a.batch_stats) {
      BatchNormBatchStats(a.x, dims, c, a.eps, &mean, &invstd);
      const float rest = 1.f - a.momentum;
      a.moving_mean[c] = a.moving_mean[c] * a.momentum + mean * rest;
      a.moving_var[c] = a.moving_var[c] * a.momentum + BatchNormVariance(invstd, a.eps) * rest;
    } else {
      mean = a.moving_mean[c];
      invstd = BatchNormInvStd(a.moving_var[c], a.eps);
    }
    double sum_dy = 0.0, dot = 0.0;
    for (int64_t o = 0; o < dims.outer; ++o) {
      const int64_t base = (o * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        sum_dy += a.dy[base + i];
        dot += (static_cast<double>(a.x[base + i]) - mean) * a.dy[base + i];
      }
    }
    const double w = a.fix_gamma ? 1.0 : a.gamma[c];
    const double iw = static_cast<double>(invstd) * w;
    const double mean_dy = n > 0 ? sum_dy / n : 0.0;
    const double k = n > 0 ? dot * invstd * invstd / n : 0.0;
    for (int64_t o = 0; o < dims.outer; ++o) {
      const int64_t base = (o * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const double dy = a.dy[base + i];
        a.dx[base + i] = static_cast<float>(
            a.batch_stats ? (dy - mean_dy - (static_cast<double>(a.x[base + i]) - mean) * k) * iw
                          : dy * iw);
      }
    }
    a.dgamma[c] = a.fix_gamma ? 0.f : static_cast<float>(dot * invstd);
    a.dbeta[c] = static_cast<float>(sum_dy);
  });
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
      BatchStatsFloat64(a.x, dims, c, a.eps, &mean, &invstd);
      const double var = invstd == 0.0 ? 0.0 : 1.0 / (invstd * invstd) - a.eps;
      a.moving_mean[c] = a.moving_mean[c] * a.momentum + mean * (1.0 - a.momentum);
      a.moving_var[c] = a.moving_var[c] * a.momentum + var * (1.0 - a.momentum);
    } else {
      mean = a.moving_mean[c];
      invstd = 1.0 / std::sqrt(a.moving_var[c] + a.eps);
    }
    double sum_dy = 0.0, dot = 0.0;
    for (int64_t o = 0; o < dims.outer; ++o) {
      const int64_t base = (o * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        sum_dy += a.dy[base + i];
        dot += (a.x[base + i] - mean) * a.dy[base + i];
      }
    }
    const double iw = invstd * (a.fix_gamma ? 1.0 : a.gamma[c]);
    const double mean_dy = n > 0 ? sum_dy / n : 0.0;
    const double k = n > 0 ? dot * invstd * invstd / n : 0.0;
    for (int64_t o = 0; o < dims.outer; ++o) {
      const int64_t base = (o * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const double dy = a.dy[base + i];
        a.dx[base + i] = a.batch_stats ? (dy - mean_dy - (a.x[base + i] - mean) * k) * iw : dy * iw;
      }
    }
    a.dgamma[c] = a.fix_gamma ? 0.0 : dot * invstd;
    a.dbeta[c] = sum_dy;
  }
}

}  // namespace internal
}  // namespace hybridnet
