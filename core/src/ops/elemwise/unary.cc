#include "hybridnet/op.h"
#include "ops/register_ops.h"

namespace hybridnet {

void RegisterElemwiseUnaryOps(OpRegistry*) {}

}  // namespace hybridnet
