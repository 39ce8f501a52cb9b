// The detection op family: MXNet's box utilities, SSD's MultiBox ops and the RPN proposal ops.
#include "ops/detection/detection_ops.h"

#include "ops/register_ops.h"

namespace hybridnet {

void RegisterDetectionOps(OpRegistry* r) {
  RegisterBoundingBoxOps(r);
  RegisterMultiBoxOps(r);
  RegisterProposalOps(r);
}

}  // namespace hybridnet
