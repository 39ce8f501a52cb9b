// Convolution in float64, for float64 models (the float64 whole-model gradient checks against
// MXNet): direct loops over a channel-first ConvSpec (groups, 1-3 spatial dims, stride,
// dilation, padding), every product summed in double. Correctness, not speed: one thread, no
// epilogue, no deconvolution.
#pragma once

#include "kernels/convolution_spec.h"

namespace hybridnet {
namespace internal {

/// y (N, F, out...) = the convolution of x (N, C, in...) with w (F, C / G, kernel...), plus
/// bias (F) unless it is null.
void ConvolutionFloat64(const ConvSpec& s, const double* x, const double* w, const double* bias,
                        double* y);

/// The gradients of ConvolutionFloat64 from dy (N, F, out...): dx (N, C, in...) and
/// dw (F, C / G, kernel...), each overwritten.
void ConvolutionGradientsFloat64(const ConvSpec& s, const double* x, const double* w,
                                 const double* dy, double* dx, double* dw);

}  // namespace internal
}  // namespace hybridnet
