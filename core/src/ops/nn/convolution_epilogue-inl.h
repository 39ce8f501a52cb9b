// The fused epilogue of our own convolution kernels on 16 channels in an AVX-512 register,
// with the separate ops' float operations (see convolution_backend.h): the depthwise and
// pointwise kernels apply it while their outputs are in registers, RunEpilogue as a pass after
// oneDNN's kernels.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ops/nn/avx512-inl.h"

namespace hybridnet {
namespace internal {

// The epilogue's constants for one block of 16 channels from `c` (`lanes` of them present).
struct Epilogue {
  bool bias, bn, residual, relu, clip;
  __m512 b, scale, shift, lo, hi;
};

HN_AVX512 inline Epilogue MakeEpilogue(const float* bias, const float* bn_scale, const float* bn_shift,
                                bool residual, bool relu, bool clip, float clip_min,
                                float clip_max, int64_t c, __mmask16 lanes) {
  Epilogue e;
  e.bias = bias != nullptr;
  e.bn = bn_scale != nullptr;
  e.residual = residual;
  e.relu = relu;
  e.clip = clip;
  e.b = e.bias ? _mm512_maskz_loadu_ps(lanes, bias + c) : _mm512_setzero_ps();
  e.scale = e.bn ? _mm512_maskz_loadu_ps(lanes, bn_scale + c) : _mm512_setzero_ps();
  e.shift = e.bn ? _mm512_maskz_loadu_ps(lanes, bn_shift + c) : _mm512_setzero_ps();
  e.lo = _mm512_set1_ps(clip_min);
  e.hi = _mm512_set1_ps(clip_max);
  return e;
}

// ClipOf on 16 floats: x > hi ? hi : (x < lo ? lo : x), NaN passing through.
HN_AVX512 inline __m512 ClipVector(__m512 v, __m512 lo, __m512 hi) {
  const __m512 r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), v, lo);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), r, hi);
}

// The separate ops' float operations, in their order: bias, BatchNorm (x * scale + shift),
// residual add, then relu (x > 0 ? x : 0) or clip (x > hi ? hi : (x < lo ? lo : x)).
HN_AVX512 inline __m512 Apply(__m512 v, const Epilogue& e, __m512 residual) {
  if (e.bias) v = _mm512_add_ps(v, e.b);
  if (e.bn) v = _mm512_add_ps(_mm512_mul_ps(v, e.scale), e.shift);
  if (e.residual) v = _mm512_add_ps(v, residual);
  if (e.relu) {
    v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ),
                             _mm512_setzero_ps(), v);
  }
  if (e.clip) v = ClipVector(v, e.lo, e.hi);
  return v;
}

HN_AVX512 inline void Finish(__m512 v, const Epilogue& e, const float* residual, float* out) {
  _mm512_storeu_ps(out, Apply(v, e, e.residual ? _mm512_loadu_ps(residual) : v));
}

}  // namespace internal
}  // namespace hybridnet
