// Our own kernel for 3x3 depthwise convolutions on channel-last data (MobileNet's), used instead
// of oneDNN 2.6.3's for these shapes, where it was measured faster (bench/layer_bench and the
// MobileNet v2 peer benchmark): AVX-512, one output row at a time, four positions per step with
// the 3x3 weights of 16 channels in registers, and the epilogue (bias, BatchNorm scale and
// shift, residual add, relu or clip) applied while the outputs are still in registers, with the
// float operations of the separate ops.
#pragma once

#include <cstdint>

namespace hybridnet {
namespace internal {

/// One depthwise call on (N, H, W, C) data into (N, OH, OW, C): 3x3 kernel, stride 1 or 2,
/// symmetric padding pad, no dilation, one filter per channel.
struct DepthwiseArgs {
  int64_t N = 0, H = 0, W = 0, C = 0, OH = 0, OW = 0, stride = 1, pad = 1;
  const float* data = nullptr;
  const float* weight = nullptr;  ///< re-laid-out: [tap][C], taps in (kh, kw) order
  const float* bias = nullptr;    ///< or null
  const float* bn_scale = nullptr, * bn_shift = nullptr;  ///< or null
  const float* residual = nullptr;  ///< (N, OH, OW, C) or null; may equal out
  bool relu = false;
  bool clip = false;
  float clip_min = 0, clip_max = 0;
  float* out = nullptr;
};

/// True when this CPU and shape can run RunDepthwise3x3 (AVX-512; C a multiple of 16; stride 1
/// or 2; pad 0 or 1).
bool Depthwise3x3Supported(int64_t C, int64_t stride, int64_t pad);

void RunDepthwise3x3(const DepthwiseArgs& a);

/// x[i] = ClipOf(x[i], lo, hi) with the epilogue's vector code (AVX-512 where the CPU has it):
/// the clip after oneDNN's convolutions, whose own clip maps NaN to lo.
void ClipInPlace(float* x, int64_t n, float lo, float hi);

}  // namespace internal
}  // namespace hybridnet
