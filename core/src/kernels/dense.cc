#include "kernels/dense.h"

#include <cstring>
#include <string>

#include "kernels/avx512-inl.h"
#include "kernels/blas.h"
#include "kernels/gemv.h"

namespace hybridnet {
namespace internal {

KernelChoice& DenseKernels() {
  static KernelChoice choice(
      "fully_connected",
      {{"gemv", "AVX-512F", CpuHasAvx512()}, {"matrix_vector", "", true}, {"gemm", "", true}});
  return choice;
}

void RunDense(const float* x, const float* w, const float* b, float* y, int64_t batch,
              int64_t hidden, int64_t k) {
  auto takes = [&](int kernel) {
    switch (static_cast<DenseKernel>(kernel)) {
      case DenseKernel::kGemv:
        return batch == 1 && CpuHasAvx512();
      case DenseKernel::kMatrixVector:
        return batch == 1;
      case DenseKernel::kGemm:
        return true;
    }
    return false;
  };
  const DenseKernel usual = batch != 1       ? DenseKernel::kGemm
                            : CpuHasAvx512() ? DenseKernel::kGemv
                                             : DenseKernel::kMatrixVector;
  const auto kernel =
      static_cast<DenseKernel>(DenseKernels().Choose(static_cast<int>(usual), takes, [&] {
        return "a dense layer of " + std::to_string(batch) + " rows of " + std::to_string(k);
      }));
  if (kernel == DenseKernel::kGemv) {
    Gemv(w, x, b, y, hidden, k);
    return;
  }
  float beta = 0.f;
  if (b != nullptr) {
    for (int64_t r = 0; r < batch; ++r) {
      std::memcpy(y + r * hidden, b, static_cast<size_t>(hidden) * sizeof(float));
    }
    beta = 1.f;
  }
  if (kernel == DenseKernel::kMatrixVector) {
    MatrixVector(hidden, k, w, x, beta, y);
  } else {
    Gemm(false, true, batch, hidden, k, 1.f, x, k, w, k, beta, y, hidden);
  }
}

}  // namespace internal
}  // namespace hybridnet
