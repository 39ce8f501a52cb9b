// What the graph passes ask of a _sg_mkldnn_conv node (ops/quantization/quantized_conv.cc).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "hybridnet/ndarray.h"
#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

/// Whether `attrs` is a quantized _sg_mkldnn_conv (int8 or uint8 data), which may run on
/// channel-last data.
bool IsQuantizedSgConv(const NodeAttrs& attrs);

/// The position of a _sg_mkldnn_conv's sum input, if it has one.
std::optional<size_t> SgConvSumInput(const NodeAttrs& attrs);

/// A quantized _sg_mkldnn_conv's weights as it computes with them, for a file that stores them
/// so (hybridnet quantize --int8-weights; the node then reads them with int8_weights=true).
struct SgConvInt8Weights {
  NDArray weight;        ///< int8, the weight's shape: BatchNorm folded in, quantized
  NDArray weight_scale;  ///< float32 (F): the scale of each output channel
  NDArray bias;          ///< float32 (F): the bias with BatchNorm folded in; none without either
};

/// The int8 weights of quantized _sg_mkldnn_conv `attrs` (float weights, a calibrated or float
/// output) given the values of all its inputs (the data's type and range among them).
SgConvInt8Weights QuantizeSgConvWeights(const NodeAttrs& attrs, const std::vector<NDArray>& inputs);

}  // namespace internal
}  // namespace hybridnet
