// Our own kernel for 2-D convolutions of few input channels (at most 32) on channel-last data,
// or on channel-first data for at most 4 (an image network's first layer reads its RGB input as
// it comes), with the fused epilogue (bias, BatchNorm scale and shift, residual add, relu or
// clip) applied while the outputs are in registers, which saves oneDNN's epilogue pass.
// Measured against oneDNN (alternating calls): MobileNet v2's first layer, 3 -> 32, 3x3 stride
// 2 at 224 px, 248 us against 297; ResNet's 7x7 stride-2 stem the same time; 3x3 layers of
// 16-32 channels 0.89-1.0 of oneDNN's time at 1 thread and 0.74-0.99 at 2 (CIFAR ResNet's
// 32 px and 16 px layers the most), while 64 channels at 8 px took 1.17-1.2x, its weights no
// longer fitting L1.
// For a channel-first caller (eager) each output row is computed into scratch and laid out
// channel-first while it is in L1: ResNet's stem, run eagerly, 3.39 -> 2.86 ms.
// Each output is one sum over the taps in (kh, kw, c) order computed by one thread: results do
// not depend on the tiling or the thread count. Taps in the padding are skipped, or (channel-last
// tiles with window columns outside the image on both sides or more than one outside) read as
// zeros, which gives the same sums for finite weights.
#pragma once

#include <cstdint>

#include "kernels/convolution_spec.h"
#include "kernels/epilogue.h"

namespace hybridnet {
namespace internal {

/// The most input channels RunFewChannels takes.
constexpr int64_t kFewChannelsMax = 32;
/// The most it reads channel-first (an image network's input, as it comes).
constexpr int64_t kFewChannelsMaxChannelFirst = 4;

/// Whether RunFewChannels takes call `s`: 2-D, one group, at most kFewChannelsMax input channels
/// (kFewChannelsMaxChannelFirst when it reads channel-first data), no dilation, on a CPU with
/// AVX-512; with fast_math too (oneDNN's Winograd made CIFAR ResNet-20 1.34x ORT's time at 2
/// threads).
bool FewChannelsTakes(const ConvSpec& s);

/// Floats of W (F, C, KH, KW) re-laid-out for RunFewChannels: PackFewChannelsWeights' output size.
int64_t FewChannelsWeightFloats(int64_t F, int64_t C, int64_t KH, int64_t KW);

/// Lays W, (F, C, KH, KW) as MXNet stores it, out in blocks of 16 filters:
/// [F/16 rounded up][KH][KW][C][16], the missing filters of the last block zero.
void PackFewChannelsWeights(const float* W, int64_t F, int64_t C, int64_t KH, int64_t KW,
                            float* packed);

struct FewChannelsArgs {
  int64_t N = 0, H = 0, W = 0, C = 0, F = 0, KH = 0, KW = 0, OH = 0, OW = 0;
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
  const float* data = nullptr;  ///< (N, H, W, C), or (N, C, H, W) with data_channel_first
  bool data_channel_first = false;
  const float* weight = nullptr;    ///< PackFewChannelsWeights' layout
  Epilogue epilogue;                ///< its bias, BatchNorm, activation
  const float* residual = nullptr;  ///< (N, OH, OW, F) or null; may equal out
  float* out = nullptr;             ///< (N, OH, OW, F), or (N, F, OH, OW) with out_channel_first
  /// RunFewChannels only, without a residual: a channel-first caller's output (eager).
  bool out_channel_first = false;
  /// With out_channel_first: KernelThreads() rows of (OW, F) floats, each thread's output row
  /// before it is laid out channel-first.
  float* row_scratch = nullptr;
  /// The output row (over the samples) that `out` and `residual` start at (RunFewChannelsRow).
  int64_t first_row = 0;
};

/// Only where CpuHasAvx512() (avx512-inl.h), C <= kFewChannelsMax, and with
/// data_channel_first C <= kFewChannelsMaxChannelFirst.
void RunFewChannels(const FewChannelsArgs& a);

/// Output row `row` (over the samples: n * OH + oh) of RunFewChannels, every filter, on the
/// calling thread, into a.out = that row's (OW, F) (a.first_row == row).
void RunFewChannelsRow(const FewChannelsArgs& a, int64_t row);

}  // namespace internal
}  // namespace hybridnet
