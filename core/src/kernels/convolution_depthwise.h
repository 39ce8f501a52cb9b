// Our own kernel for 3x3 depthwise convolutions on channel-last data (MobileNet's), used instead
// of oneDNN 2.6.3's for these shapes, where it was measured faster (bench/layer_bench and the
// MobileNet v2 peer benchmark): AVX-512, one output row at a time, four positions per step with
// the 3x3 weights of 16 channels in registers, and the epilogue (bias, BatchNorm scale and
// shift, residual add, relu or clip) applied while the outputs are still in registers, with the
// float operations of the separate ops (epilogue.h).
#pragma once

#include <cstdint>

#include "kernels/convolution_spec.h"
#include "kernels/epilogue.h"

namespace hybridnet {
namespace internal {

/// One depthwise call on (N, H, W, C) data into (N, OH, OW, C): 3x3 kernel, stride 1 or 2,
/// symmetric padding pad, no dilation, one filter per channel.
struct DepthwiseArgs {
  int64_t N = 0, H = 0, W = 0, C = 0, OH = 0, OW = 0, stride = 1, pad = 1;
  const float* data = nullptr;
  const float* weight = nullptr;    ///< re-laid-out: [tap][C], taps in (kh, kw) order
  Epilogue epilogue;                ///< its bias, BatchNorm, activation
  const float* residual = nullptr;  ///< (N, OH, OW, C) or null; may equal out
  float* out = nullptr;
};

/// Whether RunDepthwise3x3 takes call `s`: 2-D, one filter per channel (more than one), 3x3, no
/// dilation, equal strides of 1 or 2, the same padding of 0 or 1 on every side, channels a
/// multiple of 16 (C = 0: not known yet, taken), on a CPU with AVX-512.
bool DepthwiseTakes(const ConvSpec& s);

void RunDepthwise3x3(const DepthwiseArgs& a);

/// Output row `oh` of sample `n` on the calling thread, from the input rows given instead of
/// `a.data`: `rows[kh]` is input row oh * stride - pad + kh ((W, C) floats), null where that row
/// is padding. The same float operations as RunDepthwise3x3.
void RunDepthwise3x3Row(const DepthwiseArgs& a, const float* const rows[3], int64_t n, int64_t oh);

}  // namespace internal
}  // namespace hybridnet
