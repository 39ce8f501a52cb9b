// The epilogue of a convolution, applied after its sums: bias, BatchNorm's per-channel scale and
// shift, a residual add, then relu or clip, every step optional, each with the float operations of
// the separate op in that op's order, so a fused graph gives the bits of the ops run one by one.
// Our own kernels apply it while their sums are in registers (epilogue-inl.h); after a oneDNN
// convolution it runs as a pass over the output (RunEpilogue).
#pragma once

#include <cstdint>

namespace hybridnet {
namespace internal {

/// The epilogue of a fused kernel, per output channel: a bias, BatchNorm's scale and shift
/// (BatchNormScaleShift), then relu or clip; each kernel's arguments carry it beside their
/// residual, which is laid out as their data is. Every fused kernel reads this one description.
struct Epilogue {
  const float* bias = nullptr;                           ///< or null
  const float *bn_scale = nullptr, *bn_shift = nullptr;  ///< or null
  bool relu = false;
  bool clip = false;  ///< ClipOf(y, clip_min, clip_max) last, instead of relu
  float clip_min = 0, clip_max = 0;
};

/// The epilogue of a convolution that ran without it, on channel-last results: for each of
/// `positions` rows of C channels, out = act((conv * bn_scale + bn_shift) + residual), every step
/// optional, with the separate ops' float operations (the depthwise kernel's own epilogue code;
/// AVX-512 where the CPU has it). `out` may equal `conv` or `residual`: each element is read
/// before it is written.
struct EpilogueArgs {
  int64_t positions = 0, C = 0;
  const float* conv = nullptr;
  Epilogue epilogue;                ///< its bias unused: the convolution added it
  const float* residual = nullptr;  ///< or null
  float* out = nullptr;
};

void RunEpilogue(const EpilogueArgs& a);

}  // namespace internal
}  // namespace hybridnet
