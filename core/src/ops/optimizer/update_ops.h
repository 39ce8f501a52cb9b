// The optimizer update ops' registration (update_ops.cc), called by OpRegistry::Global after
// RegisterAllOps.
#pragma once

#include "hybridnet/op.h"

namespace hybridnet {

/// Registers sgd_update, adam_update and the other fused update ops of MXNet's optimizers.
void RegisterOptimizerOps(OpRegistry* r);

}  // namespace hybridnet
