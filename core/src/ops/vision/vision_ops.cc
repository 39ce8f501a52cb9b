// The vision op family: resizing, normalization, ROI pooling, sampling grids, deformable
// convolution, correlation and the deterministic image transforms.
#include "ops/vision/vision_ops.h"

#include "ops/register_ops.h"

namespace hybridnet {

void RegisterVisionOps(OpRegistry* r) {
  RegisterUpSamplingOps(r);
  RegisterBilinearResizeOps(r);
  RegisterL2NormalizationOps(r);
  RegisterRoiOps(r);
  RegisterSpatialTransformerOps(r);
  RegisterDeformableConvolutionOps(r);
  RegisterCorrelationOps(r);
  RegisterImageOps(r);
}

}  // namespace hybridnet
