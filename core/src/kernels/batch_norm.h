// BatchNorm at inference as one per-channel affine map, shared by the BatchNorm kernel and the
// convolution epilogue that absorbs a following BatchNorm (epilogue.h), so both give
// the same bits:
//
//   BatchNormScaleShift(gamma, beta, mean, var, eps, fix_gamma, C, scale, shift);
//   y = x * scale[c] + shift[c];          // two float roundings, no fused multiply-add
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/vector_isa.h"

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

/// Data of `outer` x `channels` x `inner` elements, normalized along the middle axis.
struct BatchNormDims {
  int64_t outer = 1, channels = 1, inner = 1;
  int64_t count() const { return outer * inner; }  ///< elements per channel
};

/// The training statistics of channel c: the batch mean and the inverse standard deviation of
/// the biased batch variance (0 when both the variance and eps are 0, as MXNet), in float, summed
/// in one fixed order, so every thread count computes the same bits. The order: the samples
/// (`outer`) go in groups of max(1, 1024 / inner); in a group, element i of each row of `inner`
/// goes to partial sum i % 64, rows in turn, and the 64 partial sums are then added pairwise (lane
/// l + w into lane l, w = 32, 16, ..., 1); the groups' totals add in turn, from 0. The AVX-512
/// version where the CPU has it, else the scalar one.
void BatchNormBatchStats(const float* x, const BatchNormDims& dims, int64_t c, double eps,
                         float* mean, float* invstd);
/// The two versions, which give the same bits (the AVX-512 one is what keeps training BatchNorm
/// from being bound by the latency of one serial sum).
void BatchNormBatchStatsScalar(const float* x, const BatchNormDims& dims, int64_t c, double eps,
                               float* mean, float* invstd);
void BatchNormBatchStatsAvx512(const float* x, const BatchNormDims& dims, int64_t c, double eps,
                               float* mean, float* invstd);

/// MXNet's INVSTD_TO_VARIANCE: the variance an inverse standard deviation stands for.
inline float BatchNormVariance(float invstd, double eps) {
  return static_cast<float>(1.0 / static_cast<double>(invstd * invstd) - eps);
}

/// BatchNorm's gradient (MXNet's BatchNormBackward). With batch_stats, the statistics are those
/// the forward saved (`mean` and `invstd`, its outputs mean and var) and the moving statistics
/// are updated in place with `momentum`: moving = moving * momentum + saved * (1 - momentum), the
/// variance read back from the inverse standard deviation; otherwise the moving statistics
/// normalize and are left alone.
/// Per channel, with w = gamma (1 with fix_gamma), sums in double:
///   dbeta = sum dy,  dgamma = sum (x - mean) dy * invstd (0 with fix_gamma),
///   dx = (dy - sum dy / n - (x - mean) * sum (x - mean) dy * invstd^2 / n) * invstd * w
///   (batch statistics), dx = dy * invstd * w (moving statistics).
/// The sums' order: BatchNormBatchStats' groups, with partial sum i % 32 of a group. With
/// `relu_beta` (_contrib_BatchNormWithReLU's gradient), dy first becomes dy * (v > 0 ? 1 : 0), v =
/// x * scale + shift being what the forward computed before its relu (scale = w * invstd, shift =
/// beta - mean * scale, in float): the bits of _backward_relu on the forward's output, without a
/// pass of its own. The AVX-512 version where the CPU has it, else the scalar one; both give the
/// same bits.
template <typename T>
struct BatchNormGradArgsOf {
  const T* dy;
  const T* x;
  const T* gamma;
  T* moving_mean;
  T* moving_var;
  const T* mean;    ///< the forward's mean output (read with batch_stats)
  const T* invstd;  ///< the forward's var output: the inverse standard deviation
  const T* relu_beta;  ///< the forward's beta when it applied a relu, else null
  T* dx;
  T* dgamma;
  T* dbeta;
  double eps;
  T momentum;
  bool fix_gamma;
  bool batch_stats;
};
using BatchNormGradArgs = BatchNormGradArgsOf<float>;
void BatchNormBackward(const BatchNormGradArgs& args, const BatchNormDims& dims);
void BatchNormBackwardScalar(const BatchNormGradArgs& args, const BatchNormDims& dims);
void BatchNormBackwardAvx512(const BatchNormGradArgs& args, const BatchNormDims& dims);

class Workspace;

/// Channel-last data: `dims.outer` samples of `dims.inner` positions of `dims.channels` values,
/// (N, spatial..., C), standing for the channel-first data (N, C, spatial...) of the same dims.
/// These give the channel-first kernels' bits on the same values: each channel's sums take the
/// same lanes in the same order (the samples in groups of about 1024 positions; in a group, lane =
/// position within the sample mod the lane count, samples in turn; a group's lanes add pairwise,
/// the groups' totals in turn), computed for all channels at once (16 or 8 channels a register
/// with AVX-512, 8 or 4 with AVX2), in one pass over the data. The threads split the groups, or
/// within a group the channels or the lanes, so the results do not depend on their count.
/// `workspace` holds the partial sums (kBatchNormLanesSlot).
void BatchNormBatchStatsChannelLast(const float* x, const BatchNormDims& dims, double eps,
                                    float* mean, float* invstd, Workspace* workspace);
/// BatchNormBackward on channel-last data; also takes kBatchNormAffineSlot.
void BatchNormBackwardChannelLast(const BatchNormGradArgs& args, const BatchNormDims& dims,
                                  Workspace* workspace);
/// BatchNormBatchStatsChannelLast and BatchNormBackwardChannelLast in the version of `isa`, which
/// this CPU must run (the test compares them).
void BatchNormBatchStatsChannelLastWith(VectorIsa isa, const float* x,
                                        const BatchNormDims& dims, double eps, float* mean,
                                        float* invstd, Workspace* workspace);
void BatchNormBackwardChannelLastWith(VectorIsa isa, const BatchNormGradArgs& args,
                                      const BatchNormDims& dims, Workspace* workspace);

/// The training and inference forward's last step on channel-last data: y = x * scale[c] +
/// shift[c] for `positions` positions of `channels` values (then max(y, 0) with `relu`), two float
/// roundings as BatchNormScaleShift's users; AVX2 where the CPU has it.
void BatchNormApplyChannelLast(const float* x, const float* scale, const float* shift,
                               int64_t positions, int64_t channels, bool relu, float* y);

/// BatchNorm in float64 (the float64 gradient checks): the same formulas with every operation in
/// double, y = (x - mean) * invstd * w + beta (then max(y, 0) with `relu`); `mean_out` and
/// `invstd_out` (may be null) get the statistics used, the inverse standard deviation as in
/// float. One thread.
struct BatchNormFloat64Args {
  const double* x;
  const double* gamma;
  const double* beta;
  const double* moving_mean;
  const double* moving_var;
  double* y;
  double* mean_out;
  double* invstd_out;
  double eps;
  bool fix_gamma;
  bool batch_stats;
  bool relu;
};
void BatchNormForward(const BatchNormFloat64Args& args, const BatchNormDims& dims);

/// BatchNormBackward in float64 (BatchNormGradArgs' fields in double). One thread.
using BatchNormGradFloat64Args = BatchNormGradArgsOf<double>;
void BatchNormBackward(const BatchNormGradFloat64Args& args, const BatchNormDims& dims);

}  // namespace internal
}  // namespace hybridnet
