// y = W x for one input row: the batch-1 FullyConnected and a 1x1 convolution of a 1x1 image
// (a classifier head written as a convolution). Our own AVX-512 or AVX2 kernel, twelve weight rows
// streamed at a time: these products read every weight once, so they run at memory speed,
// which OpenBLAS's sgemv and oneDNN's GEMM convolution did not reach (1000 x 1280 weights:
// 133 us against sgemv's 225; MobileNet v2's classifier: 297 us against oneDNN's 561). Each
// output is one dot product in a fixed order, computed by one thread: results do not depend on
// the thread count.
#pragma once

#include <cstdint>

#include "kernels/convolution_spec.h"

namespace hybridnet {
namespace internal {

/// y[r] = sum_c W[r * cols + c] * x[c] (+ bias[r] when bias is not null), r < rows. Only where
/// CpuHasAvx2() (avx2-inl.h): 16 lanes with AVX-512, else 8.
void Gemv(const float* W, const float* x, const float* bias, float* y, int64_t rows, int64_t cols);

/// Whether Gemv runs convolution call `s`: a 1x1 convolution of a single 1x1 image, y = W x with
/// W as stored (F, C), on a CPU with AVX2.
bool GemvTakes(const ConvSpec& s);

}  // namespace internal
}  // namespace hybridnet
