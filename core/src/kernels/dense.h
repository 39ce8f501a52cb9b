// The product of a dense layer (FullyConnected, plain and fused with an activation):
// y (batch x hidden) = x (batch x k) . W^T (k x hidden) + b, W as MXNet stores it (hidden, k).
// One row runs on Gemv (gemv.h), or MatrixVector on CPUs without AVX-512; more rows on Gemm
// (blas.h), whose output rows start as the bias (then beta = 1) or are ignored (beta = 0).
#pragma once

#include <cstdint>

#include "kernels/kernel_choice.h"

namespace hybridnet {
namespace internal {

/// The kernels of RunDense, in the order of preference.
enum class DenseKernel { kGemv, kMatrixVector, kGemm };

/// The choice among them (kernel_choice.h), indexed by DenseKernel.
KernelChoice& DenseKernels();

/// y = x . W^T + b (b may be null).
void RunDense(const float* x, const float* w, const float* b, float* y, int64_t batch,
              int64_t hidden, int64_t k);

}  // namespace internal
}  // namespace hybridnet
