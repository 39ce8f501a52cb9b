#include "hybridnet/op.h"
#include "ops/register_ops.h"

namespace hybridnet {

void RegisterFullyConnectedOps(OpRegistry*) {}

}  // namespace hybridnet
