// What graph passes make of a FullyConnected: the internal op _hn_fully_connected_act, with an
// activation (pass/fuse.cc) and, for MXNet AMP's bfloat16, its product in bfloat16
// (pass/bfloat16.cc), a typed field the op reads, never an attribute string.
#pragma once

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

/// The attributes of `dense` (a FullyConnected or _hn_fully_connected_act node) as a
/// _hn_fully_connected_act whose product is in bfloat16: data and weights rounded to bfloat16,
/// float32 sums, bias and output (kernels/onednn_inner_product_bf16.h); its activation, if any,
/// kept.
NodeAttrs BFloat16FullyConnectedAttrs(const NodeAttrs& dense);

}  // namespace internal
}  // namespace hybridnet
