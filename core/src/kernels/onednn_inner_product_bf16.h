// Dense layers whose products are in bfloat16: MXNet AMP's bfloat16 FullyConnected, on oneDNN's
// bf16 inner product (avx512_bf16 or AMX instructions where the CPU has them), or on CPUs without
// AVX-512 its float32 one on the rounded values (BFloat16ProductType). The data and weights are
// rounded to bfloat16 (to nearest even, as amp_cast), the sums, the bias and the output are
// float32.
#pragma once

#include <cstdint>

namespace hybridnet {
class NDArray;
namespace internal {
class Workspace;

/// y (batch x hidden) = x (batch x k) . W^T + b (b may be null) with x and W (hidden x k, as
/// MXNet stores it) rounded to bfloat16, then with `relu` max(y, 0). The weights are re-laid-out
/// once and kept with `weight_array` when given. Throws kUnsupported where oneDNN has no inner
/// product for the call.
void RunOneDnnBf16InnerProduct(const float* x, const float* w, const float* b, float* y,
                               int64_t batch, int64_t hidden, int64_t k, bool relu,
                               const NDArray* weight_array, Workspace* workspace);

}  // namespace internal
}  // namespace hybridnet
