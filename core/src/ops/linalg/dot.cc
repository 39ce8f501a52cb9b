#include "hybridnet/op.h"
#include "ops/register_ops.h"

namespace hybridnet {

void RegisterDotOps(OpRegistry*) {}

}  // namespace hybridnet
