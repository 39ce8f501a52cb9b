// What the graph passes ask of a _sg_mkldnn_conv node (ops/quantization/quantized_conv.cc).
#pragma once

#include <cstddef>
#include <optional>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

/// Whether `attrs` is a quantized _sg_mkldnn_conv (int8 or uint8 data), which may run on
/// channel-last data.
bool IsQuantizedSgConv(const NodeAttrs& attrs);

/// The position of a _sg_mkldnn_conv's sum input, if it has one.
std::optional<size_t> SgConvSumInput(const NodeAttrs& attrs);

}  // namespace internal
}  // namespace hybridnet
