// What the fused convolution (_hn_convolution with pool, convolution.cc) takes from Pooling's
// max kernel, so a convolution followed by a max pooling runs Pooling's own code on its output.
#pragma once

#include <cstdint>

namespace hybridnet {
namespace internal {

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
               int64_t OW, const MaxPoolWindow& w, bool channel_last);

/// One output row of channel-last max pooling along the width (OW positions of C channels into
/// `out`) from the `count` input rows of its windows (W positions of C channels each), in
/// window order. Only where CpuHasAvx512() (avx512-inl.h).
void MaxPoolRowFromRows(const float* const* rows, int64_t count, int64_t W, int64_t C,
                        int64_t OW, int64_t kernel, int64_t stride, int64_t pad, float* out);

}  // namespace internal
}  // namespace hybridnet
