// The explicit list of op families (no static-initializer registration, so nothing depends on
// initialization order and nothing is dropped from static archives).
#pragma once

namespace hybridnet {

class OpRegistry;

void RegisterElemwiseUnaryOps(OpRegistry* r);     // ops/elemwise/unary.cc
void RegisterElemwiseBinaryOps(OpRegistry* r);    // ops/elemwise/binary.cc
void RegisterScalarOps(OpRegistry* r);            // ops/elemwise/scalar.cc
void RegisterBroadcastOps(OpRegistry* r);         // ops/broadcast/broadcast.cc
void RegisterShapeOps(OpRegistry* r);             // ops/shape/shape_ops.cc: Reshape, Flatten, Concat, Cast
void RegisterDotOps(OpRegistry* r);               // ops/linalg/dot.cc
void RegisterFullyConnectedOps(OpRegistry* r);    // ops/nn/fully_connected.cc
void RegisterActivationOps(OpRegistry* r);        // ops/nn/activation.cc
void RegisterSoftmaxOps(OpRegistry* r);           // ops/nn/softmax.cc: softmax, log_softmax, SoftmaxOutput
void RegisterDropoutOps(OpRegistry* r);           // ops/nn/dropout.cc
void RegisterConvolutionOps(OpRegistry* r);       // ops/nn/convolution.cc
void RegisterPoolingOps(OpRegistry* r);           // ops/nn/pooling.cc
void RegisterBatchNormOps(OpRegistry* r);         // ops/nn/batch_norm.cc
void RegisterReduceOps(OpRegistry* r);            // ops/reduce/reduce.cc: sum, mean, max, ...
void RegisterSliceOps(OpRegistry* r);             // ops/shape/slice.cc: slice, slice_axis
void RegisterEmbeddingOps(OpRegistry* r);         // ops/nn/embedding.cc
void RegisterPadOps(OpRegistry* r);               // ops/nn/pad.cc
void RegisterLRNOps(OpRegistry* r);               // ops/nn/lrn.cc
void RegisterNormOps(OpRegistry* r);              // ops/nn/norm.cc: LayerNorm, InstanceNorm, GroupNorm
void RegisterAdaptivePoolingOps(OpRegistry* r);   // ops/nn/adaptive_pooling.cc
void RegisterVisionOps(OpRegistry* r);            // ops/vision/: UpSampling, ROIAlign, image ops, ...
void RegisterDetectionOps(OpRegistry* r);         // ops/detection/: box_nms, MultiBox*, Proposal

namespace internal {

inline void RegisterAllOps(OpRegistry* r) {
  RegisterElemwiseUnaryOps(r);
  RegisterElemwiseBinaryOps(r);
  RegisterScalarOps(r);
  RegisterBroadcastOps(r);
  RegisterShapeOps(r);
  RegisterDotOps(r);
  RegisterFullyConnectedOps(r);
  RegisterActivationOps(r);
  RegisterSoftmaxOps(r);
  RegisterDropoutOps(r);
  RegisterConvolutionOps(r);
  RegisterPoolingOps(r);
  RegisterBatchNormOps(r);
  RegisterReduceOps(r);
  RegisterSliceOps(r);
  RegisterEmbeddingOps(r);
  RegisterPadOps(r);
  RegisterLRNOps(r);
  RegisterNormOps(r);
  RegisterAdaptivePoolingOps(r);
  RegisterVisionOps(r);
  RegisterDetectionOps(r);
}

}  // namespace internal
}  // namespace hybridnet
