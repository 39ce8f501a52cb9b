// Our own AVX-512 kernels (matrix-vector product, depthwise and pointwise convolutions, the
// convolution epilogue): the attribute that compiles a function for AVX-512, and the one check
// that this CPU runs such functions.
#pragma once

#define HN_AVX512 __attribute__((target("avx512f,fma")))

namespace hybridnet {
namespace internal {

/// True when this CPU has AVX-512F and FMA, which every HN_AVX512 function needs.
inline bool CpuHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace internal
}  // namespace hybridnet
