// RuntimeFeatures: what this library can do on this CPU, in the names MXNet's
// mx.runtime.Features uses where it has one. The CPU's instruction sets are those the kernels
// check (CpuHasAvx2/CpuHasAvx512, oneDNN's effective ISA), so a test that depends on them asks
// here instead of reading /proc/cpuinfo with its own rule.
#include <vector>

#include "hybridnet/imperative.h"
#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"
#include "kernels/onednn.h"

namespace hybridnet {

const std::vector<RuntimeFeature>& RuntimeFeatures() {
  using internal::OneDnnHasIsa;
  static const std::vector<RuntimeFeature> features{
      {"CPU_AVX2", internal::CpuHasAvx2(),
       "AVX2 and FMA: hybridnet's AVX2 kernels run (8 float lanes)"},
      {"CPU_AVX512", internal::CpuHasAvx512(),
       "AVX-512: hybridnet's AVX-512 kernels run (16 float lanes)"},
      {"CPU_AVX512_VNNI", OneDnnHasIsa(dnnl::cpu_isa::avx512_core_vnni),
       "AVX-512 VNNI: oneDNN's int8 kernels sum u8 x s8 products in 32 bits"},
      {"CPU_AVX_VNNI", OneDnnHasIsa(dnnl::cpu_isa::avx2_vnni),
       "AVX-VNNI: oneDNN's AVX2 int8 kernels sum u8 x s8 products in 32 bits"},
      {"CPU_AVX512_BF16", OneDnnHasIsa(dnnl::cpu_isa::avx512_core_bf16),
       "AVX-512 BF16: oneDNN's bfloat16 products run on bfloat16 instructions"},
      {"CPU_AMX", OneDnnHasIsa(dnnl::cpu_isa::avx512_core_amx),
       "AMX: oneDNN's int8 and bfloat16 products run on tile instructions"},
      {"INT8_EXACT", internal::OneDnnSumsInt8Exactly(),
       "int8 products are summed exactly (VNNI or AMX); without, in saturating 16-bit pairs "
       "as MXNet's oneDNN kernels do on such CPUs"},
      {"BF16_KERNELS", internal::BFloat16ProductType() == dnnl::memory::data_type::bf16,
       "oneDNN has bfloat16 kernels here (AVX-512 or later); without, bfloat16 operands are "
       "rounded and multiplied in float32"},
      {"MKLDNN", true,
       "oneDNN (MXNet's MKLDNN) runs convolutions and the int8 and bfloat16 products"},
      {"BLAS_OPEN", true, "OpenBLAS runs matrix products"},
      {"CUDA", false, "no GPU: hybridnet runs on CPUs"},
      {"CUDNN", false, "no GPU: hybridnet runs on CPUs"},
      {"NCCL", false, "no GPU: hybridnet runs on CPUs"},
      {"TENSORRT", false, "no GPU: hybridnet runs on CPUs"},
      {"DIST_KVSTORE", false, "no distributed key-value store: one process trains"},
  };
  return features;
}

}  // namespace hybridnet
