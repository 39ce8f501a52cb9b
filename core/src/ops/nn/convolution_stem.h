// Our own kernel for 2-D convolutions of few input channels (at most 4: the first layer of image
// networks, on RGB data) on channel-last data, with the fused epilogue (bias, BatchNorm scale
// and shift, residual add, relu or clip) applied while the outputs are in registers, which
// saves oneDNN's epilogue pass (alternating calls, 1 thread: MobileNet v2's first layer, 3 -> 32,
// 3x3 stride 2 at 224 px, 248 us against oneDNN's 297; CIFAR ResNet's, 3 -> 16 at 32 px, 12.2
// against 15.9; ResNet's 7x7 stride-2 stem the same time as oneDNN's).
// Each output is one sum over the taps in (kh, kw, c) order, padding taps skipped, computed by
// one thread: results do not depend on the tiling or the thread count.
#pragma once

#include <cstdint>

namespace hybridnet {
namespace internal {

/// The most input channels RunStem takes.
constexpr int64_t kStemMaxChannels = 4;

/// Floats of W (F, C, KH, KW) re-laid-out for RunStem: PackStemWeights' output size.
int64_t StemWeightFloats(int64_t F, int64_t C, int64_t KH, int64_t KW);

/// Lays W, (F, C, KH, KW) as MXNet stores it, out in blocks of 16 filters:
/// [F/16 rounded up][KH][KW][C][16], the missing filters of the last block zero.
void PackStemWeights(const float* W, int64_t F, int64_t C, int64_t KH, int64_t KW, float* packed);

struct StemArgs {
  int64_t N = 0, H = 0, W = 0, C = 0, F = 0, KH = 0, KW = 0, OH = 0, OW = 0;
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
  const float* data = nullptr;      ///< (N, H, W, C), or (N, C, H, W) with data_channel_first
  bool data_channel_first = false;
  const float* weight = nullptr;    ///< PackStemWeights' layout
  const float* bias = nullptr;      ///< or null
  const float* bn_scale = nullptr, * bn_shift = nullptr;  ///< or null
  const float* residual = nullptr;  ///< (N, OH, OW, F) or null; may equal out
  bool relu = false;
  bool clip = false;
  float clip_min = 0, clip_max = 0;
  float* out = nullptr;             ///< (N, OH, OW, F)
};

/// Only where CpuHasAvx512() (avx512-inl.h) and C <= kStemMaxChannels.
void RunStem(const StemArgs& a);

}  // namespace internal
}  // namespace hybridnet
