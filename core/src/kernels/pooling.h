// Pooling's kernels (max, avg, sum and lp over 1-D, 2-D and 3-D windows, channel-first or
// channel-last), used by the Pooling op and by the fused convolution that a max pooling follows
// (RunConvolutionThenMaxPool), which thereby runs Pooling's own code on its output.
//
// Per sample: channel-first planes one channel at a time, channel-last data (positions of C
// contiguous values) all channels at once. Both do the same float operations in the same order
// for every output, so a graph that keeps data channel-last gives the channel-first bits. The
// arithmetic follows MXNet's reference CPU kernel (ops/nn/pooling.cc says how).
#pragma once

#include <cstdint>

#include "kernels/kernel_choice.h"
#include "kernels/window-inl.h"
#include "kernels/workspace.h"

namespace hybridnet {
namespace internal {

/// Pooling's pool_type values.
enum class PoolType { kMax, kAvg, kSum, kLp };

/// The kernels of PoolPlanes, in the order of preference for max pooling: channel-last windows
/// 16 channels at a time, channel-first rows 16 outputs at a time (both AVX-512), then plain
/// rows; sum_rows does avg, sum and lp.
enum class PoolKernel { kMaxChannelLast, kMaxChannelFirst, kMaxRows, kSumRows };

/// The choice among them (kernel_choice.h), indexed by PoolKernel.
KernelChoice& PoolingKernels();

/// Pooling of `planes` planes of `lane` values per position (channel-last samples are one plane
/// of C lanes; channel-first ones C planes of one lane) over the windows of `g`; `pv` is lp's
/// p_value (1, 2 or 3), `include_pad` avg's count_include_pad, `nan_on_empty` gives NaN for a
/// window with nothing inside (MXNet's 3-D kernels).
void PoolPlanes(PoolType type, int pv, bool include_pad, bool nan_on_empty, const float* x,
                float* y, const SpatialGeom& g, int64_t lane, int64_t planes, Workspace* workspace);

/// The kernels of PoolPlanesBackward: max pooling of channel-last samples 16 channels at a time
/// and of channel-first planes 16 outputs at a time (both AVX-512), then plain windows, which
/// take every call.
enum class PoolBackwardKernel { kMaxChannelLast, kMaxChannelFirst, kWindows };

/// The choice among them (kernel_choice.h), indexed by PoolBackwardKernel.
KernelChoice& PoolingBackwardKernels();

/// Pooling's gradient (MXNet's unpool, pool.h) into `dx`, of the layout and planes PoolPlanes
/// takes (`pv` 1 but for lp), from the data `x`, the output `y` and its gradient `dy`. Each output
/// adds into its window, in output order: max its gradient at the first position (row-major) whose
/// value equals the output (none when no value does), avg dy / window size (clipped as the forward
/// clips it), sum dy, lp dy * (x / y)^(p - 1) (0 where y is 0). Planes are split between
/// threads, each summed in that one order, so the bits do not depend on the thread count.
void PoolPlanesBackward(PoolType type, int pv, bool include_pad, const float* x, const float* y,
                        const float* dy, float* dx, const SpatialGeom& g, int64_t lane,
                        int64_t planes);

/// PoolPlanes and PoolPlanesBackward in float64: the plain kernels (max_rows, sum_rows and
/// windows) on one thread, with the same operations in double (the float64 gradient checks).
void PoolPlanes(PoolType type, int pv, bool include_pad, bool nan_on_empty, const double* x,
                double* y, const SpatialGeom& g, int64_t lane, int64_t planes);
void PoolPlanesBackward(PoolType type, int pv, bool include_pad, const double* x, const double* y,
                        const double* dy, double* dx, const SpatialGeom& g, int64_t lane,
                        int64_t planes);

/// An output size of Pooling along one axis: `full` rounds up (pooling_convention full), else
/// down (valid).
int64_t PooledSize(int64_t image, int64_t kernel, int64_t stride, int64_t pad, bool full);

/// A 2-D max pooling window.
struct MaxPoolWindow {
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, pad[2] = {0, 0};
};

/// Pooling with pool_type max of `x`, (N, C, H, W) or channel-last (N, H, W, C), into `y`,
/// (N, C, OH, OW) or (N, OH, OW, C): Pooling's kernel.
void MaxPool2D(const float* x, float* y, int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH,
               int64_t OW, const MaxPoolWindow& w, bool channel_last, Workspace* workspace);

/// One output row of channel-last max pooling along the width (OW positions of C channels into
/// `out`) from the `count` input rows of its windows (W positions of C channels each), in
/// window order. Only where CpuHasAvx512() (avx512-inl.h).
void MaxPoolRowFromRows(const float* const* rows, int64_t count, int64_t W, int64_t C, int64_t OW,
                        int64_t kernel, int64_t stride, int64_t pad, float* out);

}  // namespace internal
}  // namespace hybridnet
