// Our own kernel for 1x1 convolutions (stride 1, no padding, one group) on channel-last data:
// a matrix product out (positions x F) = data (positions x C) * W (C x F), with the fused
// epilogue (bias, BatchNorm scale and shift, residual add, relu or clip) applied while the
// outputs are in registers. With oneDNN's kernel, our epilogue is a second pass over the output
// (oneDNN 2.6.3's own per-channel post-ops are slower still): on MobileNet v2's layers at
// 56-112 px this kernel takes 0.80-0.85 of the time of oneDNN's and that pass, on the other
// MobileNet v2 and ResNet-50 shapes 0.96-1.03 (alternating calls, 1 and 2 threads). Every
// output is one sum over C in order, computed by one thread, whatever the tiling: results do
// not depend on the thread count.
#pragma once

#include <cstdint>

#include "kernels/convolution_spec.h"
#include "kernels/epilogue.h"

namespace hybridnet {
namespace internal {

/// Whether RunPointwise takes call `s` (through the convolution dispatcher, strided calls on their
/// subsampled input): a convolution of 1x1 windows, no padding, one group, on a CPU with AVX-512.
/// Measured as fast as oneDNN's alone on every MobileNet v2 and ResNet-50 shape, so the epilogue's
/// pass is saved; strided ones too (ResNet-50's stride-2 layers: oneDNN took 2.48 ms for 512 ->
/// 1024 at 28 px against ORT's 1.89); with fast_math too (folding BatchNorm into oneDNN's weights
/// saves nothing here, the epilogue being free in registers).
bool PointwiseTakes(const ConvSpec& s);

/// Floats of W (F, C) re-laid-out for RunPointwise: PackPointwiseWeights' output size.
int64_t PointwiseWeightFloats(int64_t C, int64_t F);

/// Lays W, (F, C) as MXNet stores a 1x1 convolution's weights, out in blocks of 16 filters:
/// [F/16 rounded up][C][16], the missing filters of the last block zero.
void PackPointwiseWeights(const float* W, int64_t C, int64_t F, float* packed);

struct PointwiseArgs {
  int64_t positions = 0, C = 0, F = 0;
  const float* data = nullptr;      ///< (positions, C)
  const float* weight = nullptr;    ///< PackPointwiseWeights' layout
  Epilogue epilogue;                ///< its bias, BatchNorm, activation
  const float* residual = nullptr;  ///< (positions, F) or null; may equal out
  float* out = nullptr;             ///< (positions, F)
};

/// Only where CpuHasAvx512() (avx512-inl.h).
void RunPointwise(const PointwiseArgs& a);

/// RunPointwise on the calling thread, for callers that split the work between threads.
void RunPointwiseOnThisThread(const PointwiseArgs& a);

}  // namespace internal
}  // namespace hybridnet
