// A channel-last 2-D convolution call of square images and kernels, padded to keep the size at
// stride 1, as the kernel-choice tests of image networks' layers build them.
#pragma once

#include <cstdint>

#include "kernels/convolution_spec.h"

namespace hybridnet {
namespace testing_util {

inline internal::ConvSpec SquareConvSpec(int64_t N, int64_t C, int64_t F, int64_t G, int64_t k,
                                         int64_t stride, int64_t hw) {
  internal::ConvSpec s;
  s.channel_last = 1;
  s.N = N;
  s.C = C;
  s.F = F;
  s.G = G;
  s.kernel[0] = s.kernel[1] = k;
  s.stride[0] = s.stride[1] = stride;
  s.pad_l[0] = s.pad_l[1] = s.pad_r[0] = s.pad_r[1] = k / 2;
  s.in[0] = s.in[1] = hw;
  s.out[0] = s.out[1] = (hw + 2 * (k / 2) - k) / stride + 1;
  return s;
}

}  // namespace testing_util
}  // namespace hybridnet
