// Our own AVX-512 kernels (matrix-vector product, depthwise and pointwise convolutions, the
// convolution epilogue): the attribute that compiles a function for AVX-512, and the one check
// that this CPU runs such functions.
#pragma once

#include <cstdint>

#define HN_AVX512 __attribute__((target("avx512f,fma")))

namespace hybridnet {
namespace internal {

/// The mask of the first n of 16 float lanes (none for n <= 0, all for n >= 16): a block's tail.
inline uint16_t FirstLanes(int64_t n) {
  return static_cast<uint16_t>(n <= 0 ? 0u : n >= 16 ? 0xFFFFu : (1u << n) - 1);
}

/// True when this CPU has AVX-512F and FMA, which every HN_AVX512 function needs.
inline bool CpuHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace internal
}  // namespace hybridnet
