// Our kernels on CPUs with AVX2 but no AVX-512 (Zen 2/3, Intel's client cores): the attribute
// that compiles a function for AVX2 with FMA, the one check that this CPU runs such functions,
// and the attribute that compiles a portable kernel for AVX2 beside baseline x86-64.
#pragma once

#define HN_AVX2 __attribute__((target("avx2,fma")))

// A portable kernel (a .cc file's function, not an inline one) compiled twice, for AVX2 and for
// baseline x86-64; the CPU picks one when the library loads. Its loops vectorize 8 floats wide
// where AVX2 runs. Both copies do the same float operations in the same order (no contraction:
// -ffp-contract=off), so they give the same bits.
#define HN_AVX2_CLONES __attribute__((target_clones("avx2", "default")))

namespace hybridnet {
namespace internal {

/// True when this CPU has AVX2 and FMA, which every HN_AVX2 function needs.
inline bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace internal
}  // namespace hybridnet
