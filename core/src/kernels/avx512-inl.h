// Our own AVX-512 kernels (matrix-vector product, depthwise and pointwise convolutions, the
// convolution epilogue): the attribute that compiles a function for AVX-512, and the one check
// that this CPU runs such functions.
#pragma once

#include <immintrin.h>

#include <cstdint>

#define HN_AVX512 __attribute__((target("avx512f,fma")))

namespace hybridnet {
namespace internal {

/// The mask of the first n of 16 float lanes (none for n <= 0, all for n >= 16): a block's tail.
inline uint16_t FirstLanes(int64_t n) {
  return static_cast<uint16_t>(n <= 0 ? 0u : n >= 16 ? 0xFFFFu : (1u << n) - 1);
}

/// The first n floats at p, the other lanes 0 (all 16 for n >= 16), and the same for 8 doubles;
/// StoreFirst writes the first n lanes. Only a block's tail takes a mask: masked loads streaming
/// from memory ran 3.3x slower than plain ones on a Zen 5 (they seem not to start its hardware
/// prefetchers; BatchNorm's statistics over ResNet-18's stem activations took 15.6 ms, 6.9 ms
/// once whole blocks loaded unmasked), masked stores 1.25x.
HN_AVX512 inline __m512 LoadFirst(const float* p, int64_t n) {
  return n >= 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(FirstLanes(n), p);
}
HN_AVX512 inline __m512d LoadFirst(const double* p, int64_t n) {
  return n >= 8 ? _mm512_loadu_pd(p)
                : _mm512_maskz_loadu_pd(static_cast<__mmask8>(FirstLanes(n)), p);
}
HN_AVX512 inline void StoreFirst(float* p, __m512 v, int64_t n) {
  if (n >= 16) {
    _mm512_storeu_ps(p, v);
  } else {
    _mm512_mask_storeu_ps(p, FirstLanes(n), v);
  }
}
HN_AVX512 inline void StoreFirst(double* p, __m512d v, int64_t n) {
  if (n >= 8) {
    _mm512_storeu_pd(p, v);
  } else {
    _mm512_mask_storeu_pd(p, static_cast<__mmask8>(FirstLanes(n)), v);
  }
}

/// True when this CPU has AVX-512F and FMA, which every HN_AVX512 function needs.
inline bool CpuHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace internal
}  // namespace hybridnet
