// The elementwise post-op the int8 kernels (convolution, inner product) fuse after their scaled
// sums, described once: MXNet's fused activations of quantized layers, as oneDNN's eltwise
// post-ops compute them.
#pragma once

namespace hybridnet {
namespace internal {

/// f(alpha, x) * scale after the scaled sum, of oneDNN's eltwise kind `kind`.
struct Int8Eltwise {
  enum class Kind {
    kNone,
    kRelu,
    kLogistic,
    kTanh,
    kSoftRelu,
    kBoundedRelu,
    kSquare,
    kSqrt,
    kExp,
    kAbs,
    kElu,
    kGelu
  };
  Kind kind = Kind::kNone;
  float alpha = 0.f;  ///< relu's negative slope, bounded relu's bound, elu's alpha
  float scale = 1.f;
};

}  // namespace internal
}  // namespace hybridnet
