// The product of a dense layer (FullyConnected, plain and fused with an activation):
// y (batch x hidden) = x (batch x k) . W^T (k x hidden) + b, W as MXNet stores it (hidden, k).
// One row runs on Gemv (gemv.h), or MatrixVector on CPUs without AVX-512; more rows on oneDNN's
// inner product where it is faster (OneDnnInnerProductWins), else on Gemm (blas.h), whose output
// rows start as the bias (then beta = 1) or are ignored (beta = 0).
#pragma once

#include <cstdint>

#include "kernels/kernel_choice.h"

namespace hybridnet {
class NDArray;
namespace internal {
class Workspace;

/// The kernels of RunDense, in the order of preference.
enum class DenseKernel { kGemv, kMatrixVector, kGemm, kOneDnnInnerProduct };

/// The choice among them (kernel_choice.h), indexed by DenseKernel.
KernelChoice& DenseKernels();

/// y = x . W^T + b (b may be null), then with `relu` max(y, 0) (ReluOf's bits, so a fused
/// FullyConnected + relu equals the two ops). `weight_array` is the array behind w, or null: the
/// inner product keeps its re-laid-out weights with it. `workspace` is the caller's scratch.
void RunDense(const float* x, const float* w, const float* b, float* y, int64_t batch,
              int64_t hidden, int64_t k, bool relu, const NDArray* weight_array,
              Workspace* workspace);

/// The kernels of RunDenseBackward's products, in the order of preference.
enum class DenseBackwardKernel { kGemm, kOneDnnSgemm };

/// The choice among them (kernel_choice.h), indexed by DenseBackwardKernel.
KernelChoice& DenseBackwardKernels();

/// The gradients of RunDense's product from dy (batch x hidden): dx = dy . W (batch x k) and
/// dw = dy^T . x (hidden x k), each skipped when null. Where the forward runs on oneDNN's inner
/// product they run on oneDNN's sgemm (faster than OpenBLAS there, and on the same OpenMP threads
/// as the forward, not on OpenBLAS's own), else on Gemm (blas.h).
void RunDenseBackward(const float* dy, const float* x, const float* w, float* dx, float* dw,
                      int64_t batch, int64_t hidden, int64_t k);

}  // namespace internal
}  // namespace hybridnet
