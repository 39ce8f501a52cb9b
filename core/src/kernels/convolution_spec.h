// The description of one convolution call that every convolution kernel reads (the dispatcher in
// convolution.h, our own kernels' `...Takes`, oneDNN's primitive cache as its key).
#pragma once

#include <cstdint>

namespace hybridnet {
namespace internal {

/// One convolution or deconvolution call: geometry (spatial values in the first nd slots) and
/// the epilogue. Plain integers only, so it hashes and compares as bytes.
struct ConvSpec {
  int64_t deconv = 0;
  int64_t nd = 2;            ///< spatial dims, 1..3
  int64_t channel_last = 0;  ///< data, residual and output are (N, spatial..., C)
  /// With channel_last, the data alone is (N, C, spatial...): an image network's input read by
  /// its first layer as it comes.
  int64_t data_channel_first = 0;
  int64_t N = 0, C = 0, F = 0, G = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilate[3] = {1, 1, 1}, pad_l[3] = {0, 0, 0}, pad_r[3] = {0, 0, 0};
  int64_t bias = 0;
  int64_t bn = 0;
  int64_t residual = 0;
  int64_t relu = 0;
  int64_t fast_math = 0;
  /// The call may run Winograd's algorithm (convolution_winograd.h), whose results are within
  /// about 1e-5 of the largest output, not the direct sum's bits: with fast_math, and in training.
  int64_t winograd = 0;
  /// Threads the primitive runs on; RunConvolution sets it (oneDNN fixes a primitive's thread
  /// count when it makes it, so primitives are kept per count).
  int64_t threads = 0;
};

}  // namespace internal
}  // namespace hybridnet
