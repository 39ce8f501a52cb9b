// Kept outputs: hidden outputs of hybridnet's own, after an op's MXNet outputs (visible and
// hidden, Op::NumTotalOutputs), where a forward whose gradient may follow keeps what its backward
// reads (RNN's gates and states). MXNet's op has no such output, so node_row_ptr and the symbol
// file do not count them; a graph has entries for them only where it reads them (IndexedGraph),
// and an eager call computes them only while recording (autograd's OutputsToCompute).
//
// The count is declared with the op, in its Register<Family>Ops. It is kept here rather than in
// an Op field so that declaring it leaves hybridnet/op.h, which every op and test includes, as is.
#pragma once

#include <cstdint>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

/// Declares `op`'s kept outputs (during registration, before the registry is used).
void SetNumKeptOutputs(const Op& op, FNumInputs count);

/// The kept outputs of a node with `attrs` (0 for most ops).
uint32_t NumKeptOutputs(const NodeAttrs& attrs);

/// NumTotalOutputs plus the kept outputs: every output a graph may read.
inline uint32_t NumReadableOutputs(const NodeAttrs& attrs) {
  return attrs.op->NumTotalOutputs(attrs) + NumKeptOutputs(attrs);
}

}  // namespace internal
}  // namespace hybridnet
