// The files of the detection family; RegisterDetectionOps (detection_ops.cc) calls each.
#pragma once

namespace hybridnet {

class OpRegistry;

void RegisterBoundingBoxOps(OpRegistry* r);  // bounding_box.cc: box_nms, box_iou, box_encode, ...
void RegisterMultiBoxOps(OpRegistry* r);     // multibox.cc: MultiBoxPrior/Detection/Target
void RegisterProposalOps(OpRegistry* r);     // proposal.cc: Proposal, MultiProposal

}  // namespace hybridnet
