#include "hybridnet/op.h"
#include "ops/register_ops.h"

namespace hybridnet {

void RegisterBatchNormOps(OpRegistry*) {}

}  // namespace hybridnet
