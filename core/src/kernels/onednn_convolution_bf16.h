// Convolutions whose products are in bfloat16 (ConvArgs::bf16): MXNet AMP's bfloat16
// convolutions, on oneDNN's bf16 primitives (avx512_bf16 or AMX instructions where the CPU has
// them, oneDNN's emulation on other AVX-512 CPUs), or on CPUs without AVX-512 its float32 ones on
// the rounded values (BFloat16ProductType). The data and weights are rounded to bfloat16 (to
// nearest even, as amp_cast), the sums and the output are float32; the bias is float32.
#pragma once

#include <string>

#include "kernels/convolution_spec.h"

namespace hybridnet {
namespace internal {

struct ConvArgs;  // kernels/convolution.h

/// Runs call `s` (a convolution, channel-last data, residual and output: s.channel_last set and
/// s.data_channel_first not) with its products in bfloat16. BatchNorm is folded into the weights
/// and bias (the weights are rounded to bfloat16 after the fold), the residual add and relu are
/// the primitive's post-ops and a clip runs afterwards. The weights are re-laid-out once and kept
/// with the weight array (with the BatchNorm arrays' write stamps in the key). Throws
/// kUnsupported where oneDNN has no convolution for the call.
void RunOneDnnBf16Convolution(const ConvSpec& s, const ConvArgs& a);

/// The oneDNN implementation call `s` runs on in bfloat16 ("jit:avx2"), for tests.
std::string Bf16ConvolutionImplementation(const ConvSpec& s);

}  // namespace internal
}  // namespace hybridnet
