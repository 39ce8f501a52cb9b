// The instruction set that compiles the loops of the kernels written once in portable C++ and
// compiled for each ISA (softmax's lines, sums along a line, the RNN's gates, the dense bias
// gradient, the optimizer updates): the widest this CPU runs, or, in tests, the one forced
// (kernel_choice.h), so that every version this CPU has runs against the others.
#pragma once

#include <string>
#include <vector>

#include "kernels/kernel_choice.h"

namespace hybridnet {
namespace internal {

/// In the order of VectorIsaKernels().
enum class VectorIsa { kAvx512, kAvx2, kBaseline };

/// The choice among the ISAs (family "vector_isa").
KernelChoice& VectorIsaKernels();

/// The ISA of one op call: the widest this CPU has, or the one a test forces. Counts the run.
VectorIsa ChooseVectorIsa();

/// Every ISA this CPU runs, for tests that compare their versions of a kernel.
std::vector<VectorIsa> VectorIsasHere();

/// Its kernel name in VectorIsaKernels() ("avx2").
const std::string& VectorIsaName(VectorIsa isa);

}  // namespace internal
}  // namespace hybridnet
