// BatchNorm at inference as one per-channel affine map, shared by the BatchNorm kernel and the
// convolution epilogue that absorbs a following BatchNorm (epilogue.h), so both give
// the same bits:
//
//   BatchNormScaleShift(gamma, beta, mean, var, eps, fix_gamma, C, scale, shift);
//   y = x * scale[c] + shift[c];          // two float roundings, no fused multiply-add
#pragma once

#include <cmath>
#include <cstdint>

namespace hybridnet {
namespace internal {

/// MXNet's VARIANCE_TO_INVSTD: the sum is taken in float (eps is cast to float first).
inline float BatchNormInvStd(float var, double eps) {
  const float s = std::sqrt(var + static_cast<float>(eps));
  return static_cast<float>(1.0 / static_cast<double>(s));
}

/// scale = gamma / sqrt(var + eps) (gamma = 1 with fix_gamma), shift = beta - mean * scale:
/// the AVX-512 version where the CPU has it, else the scalar one.
void BatchNormScaleShift(const float* gamma, const float* beta, const float* mean, const float* var,
                         double eps, bool fix_gamma, int64_t channels, float* scale, float* shift);

/// The two versions, which give the same bits (the AVX-512 one is 5x faster, which matters
/// because a fused convolution computes this at every call: MobileNet v2 has 17k channels).
/// Compiled without multiply-add contraction (core/CMakeLists.txt).
void BatchNormScaleShiftScalar(const float* gamma, const float* beta, const float* mean,
                               const float* var, double eps, bool fix_gamma, int64_t channels,
                               float* scale, float* shift);
void BatchNormScaleShiftAvx512(const float* gamma, const float* beta, const float* mean,
                               const float* var, double eps, bool fix_gamma, int64_t channels,
                               float* scale, float* shift);

}  // namespace internal
}  // namespace hybridnet
