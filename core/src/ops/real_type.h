// The type rule of the training ops that compute in float32 and, for float64 models (the
// float64 whole-model gradient checks), in float64: Convolution, BatchNorm, Pooling,
// Activation, FullyConnected and their backward ops.
#pragma once

#include <vector>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

/// Every input and output one dtype, float32 or float64 (left unknown while none is known, as
/// NumericType); kTypeError naming the input otherwise.
bool RealType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out);

}  // namespace internal
}  // namespace hybridnet
