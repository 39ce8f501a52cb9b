#include "kernels/batch_norm.h"

#include <immintrin.h>

#include "kernels/avx512-inl.h"

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

}  // namespace internal
}  // namespace hybridnet
