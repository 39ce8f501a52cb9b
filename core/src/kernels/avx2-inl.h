// Our kernels on CPUs with AVX2 but no AVX-512 (Zen 2/3, Intel's client cores): the attribute
// that compiles a function for AVX2 with FMA and the one check that this CPU runs such functions.
// A portable loop is compiled twice, inlined into an HN_AVX2 function and a baseline one, and
// picked by that check at the call; not by target_clones, whose ifunc resolvers run while the
// library is relocated, before ThreadSanitizer has started, and crash it.
#pragma once

#define HN_AVX2 __attribute__((target("avx2,fma")))

namespace hybridnet {
namespace internal {

/// True when this CPU has AVX2 and FMA, which every HN_AVX2 function needs.
inline bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace internal
}  // namespace hybridnet
