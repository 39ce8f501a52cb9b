// The files of the vision family; RegisterVisionOps (vision_ops.cc) calls each.
#pragma once

namespace hybridnet {

class OpRegistry;

void RegisterUpSamplingOps(OpRegistry* r);             // upsampling.cc
void RegisterBilinearResizeOps(OpRegistry* r);         // bilinear_resize.cc
void RegisterL2NormalizationOps(OpRegistry* r);        // l2_normalization.cc
void RegisterRoiOps(OpRegistry* r);                    // roi_ops.cc: ROIPooling, ROIAlign, ...
void RegisterSpatialTransformerOps(OpRegistry* r);     // spatial_transformer.cc: GridGenerator, ...
void RegisterDeformableConvolutionOps(OpRegistry* r);  // deformable_convolution.cc
void RegisterCorrelationOps(OpRegistry* r);            // correlation.cc
void RegisterImageOps(OpRegistry* r);                  // image_ops.cc: _image_*

}  // namespace hybridnet
