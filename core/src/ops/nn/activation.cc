#include "hybridnet/op.h"
#include "ops/register_ops.h"

namespace hybridnet {

void RegisterActivationOps(OpRegistry*) {}

}  // namespace hybridnet
