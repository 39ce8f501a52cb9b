#include "kernels/vector_isa.h"

#include <string>

#include "kernels/avx2-inl.h"
#include "kernels/avx512-inl.h"

namespace hybridnet {
namespace internal {

KernelChoice& VectorIsaKernels() {
  static KernelChoice choice("vector_isa", {{"avx512", "AVX-512F", CpuHasAvx512()},
                                            {"avx2", "AVX2 and FMA", CpuHasAvx2()},
                                            {"baseline", "", true}});
  return choice;
}

VectorIsa ChooseVectorIsa() {
  KernelChoice& choice = VectorIsaKernels();
  const VectorIsa usual = CpuHasAvx512() ? VectorIsa::kAvx512
                          : CpuHasAvx2() ? VectorIsa::kAvx2
                                         : VectorIsa::kBaseline;
  // Every ISA takes every call this CPU runs.
  auto takes = [&](int kernel) { return choice.kernels()[static_cast<size_t>(kernel)].runs_here; };
  return static_cast<VectorIsa>(
      choice.Choose(static_cast<int>(usual), takes, [] { return std::string("the call"); }));
}

std::vector<VectorIsa> VectorIsasHere() {
  std::vector<VectorIsa> isas;
  const std::vector<ChoosableKernel>& kernels = VectorIsaKernels().kernels();
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (kernels[i].runs_here) isas.push_back(static_cast<VectorIsa>(i));
  }
  return isas;
}

const std::string& VectorIsaName(VectorIsa isa) {
  return VectorIsaKernels().kernels()[static_cast<size_t>(isa)].name;
}

}  // namespace internal
}  // namespace hybridnet
