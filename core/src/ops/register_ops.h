// The explicit list of op families (no static-initializer registration, so nothing depends on
// initialization order and nothing is dropped from static archives).
#pragma once

namespace hybridnet {

class OpRegistry;

void RegisterElemwiseUnaryOps(OpRegistry* r);   // ops/elemwise/unary.cc
void RegisterElemwiseBinaryOps(OpRegistry* r);  // ops/elemwise/binary.cc
void RegisterScalarOps(OpRegistry* r);          // ops/elemwise/scalar.cc
void RegisterBroadcastOps(OpRegistry* r);       // ops/broadcast/broadcast.cc
void RegisterShapeOps(OpRegistry* r);  // ops/shape/shape_ops.cc: Reshape, Flatten, Concat, Cast
void RegisterDotOps(OpRegistry* r);    // ops/linalg/dot.cc
void RegisterFullyConnectedOps(OpRegistry* r);  // ops/nn/fully_connected.cc
void RegisterActivationOps(OpRegistry* r);      // ops/nn/activation.cc
void RegisterSoftmaxOps(OpRegistry* r);  // ops/nn/softmax.cc: softmax, log_softmax, SoftmaxOutput
void RegisterDropoutOps(OpRegistry* r);  // ops/nn/dropout.cc
void RegisterConvolutionOps(OpRegistry* r);  // ops/nn/convolution.cc
void RegisterPoolingOps(OpRegistry* r);      // ops/nn/pooling.cc
void RegisterBatchNormOps(OpRegistry* r);    // ops/nn/batch_norm.cc
void RegisterReduceOps(OpRegistry* r);       // ops/reduce/reduce.cc: sum, mean, max, ...
void RegisterSliceOps(OpRegistry* r);      // ops/shape/slice.cc: slice, slice_axis, _slice_assign*
void RegisterEmbeddingOps(OpRegistry* r);  // ops/nn/embedding.cc
void RegisterPadOps(OpRegistry* r);        // ops/nn/pad.cc
void RegisterLRNOps(OpRegistry* r);        // ops/nn/lrn.cc
void RegisterNormOps(OpRegistry* r);       // ops/nn/norm.cc: LayerNorm, InstanceNorm, GroupNorm
void RegisterAdaptivePoolingOps(OpRegistry* r);  // ops/nn/adaptive_pooling.cc
void RegisterControlFlowOps(OpRegistry* r);      // ops/control_flow/control_flow.cc
void RegisterWhereOps(OpRegistry* r);            // ops/elemwise/where.cc
void RegisterInitOps(OpRegistry* r);  // ops/init/init_ops.cc: _zeros, _arange, shape_array, ...
void RegisterPassThroughOps(
    OpRegistry* r);  // ops/elemwise/passthrough.cc: amp_cast, all_finite, ...
void RegisterStatisticsOps(
    OpRegistry* r);  // ops/reduce/statistics.cc: norm, moments, nansum, cumsum
void RegisterRearrangeOps(OpRegistry* r);  // ops/shape/rearrange.cc: tile, repeat, stack, ...
void RegisterLikeOps(OpRegistry* r);       // ops/shape/like.cc: slice_like, broadcast_like, ...
void RegisterIndexingOps(OpRegistry* r);   // ops/indexing/indexing.cc: take, pick, gather_nd, ...
void RegisterSortOps(OpRegistry* r);       // ops/indexing/sort.cc: topk, sort, argsort, ...
void RegisterHistogramOps(OpRegistry* r);  // ops/indexing/histogram.cc: _histogram
void RegisterCropOps(OpRegistry* r);       // ops/shape/crop.cc: Crop
void RegisterIm2colOps(OpRegistry* r);     // ops/shape/im2col.cc: im2col, col2im
void RegisterLinalgOps(OpRegistry* r);     // ops/linalg/la_ops.cc: _linalg_*, khatri_rao
void RegisterRandomOps(OpRegistry* r);     // ops/random/sample.cc: _random_*, _sample_*, ...
void RegisterPdfOps(OpRegistry* r);        // ops/random/pdf.cc: _random_pdf_*
void RegisterVisionOps(OpRegistry* r);     // ops/vision/: UpSampling, ROIAlign, image ops, ...
void RegisterDetectionOps(OpRegistry* r);  // ops/detection/: box_nms, MultiBox*, Proposal
void RegisterSequenceOps(OpRegistry* r);   // ops/sequence/sequence.cc: SequenceMask, ...
void RegisterAttentionOps(OpRegistry* r);  // ops/sequence/attention.cc: batch_dot, interleaved_*
void RegisterRNNOps(OpRegistry* r);        // ops/rnn/rnn.cc: RNN, _rnn_param_concat
void RegisterLossOps(OpRegistry* r);       // ops/loss/loss.cc: *Output, MakeLoss, ...
void RegisterCTCLossOps(OpRegistry* r);    // ops/loss/ctc_loss.cc: CTCLoss
void RegisterLegacyOps(OpRegistry* r);     // ops/legacy/legacy_forms.cc: *_v1, SyncBatchNorm
void RegisterQuantizeOps(OpRegistry* r);   // ops/quantization/quantize.cc: quantize_v2, ...
void RegisterQuantizedOps(OpRegistry* r);  // ops/quantization/quantized_ops.cc: pooling, ...
// ops/quantization/quantized_fully_connected.cc: _contrib_quantized_fully_connected,
// _sg_mkldnn_fully_connected
void RegisterQuantizedFullyConnectedOps(OpRegistry* r);
void RegisterQuantizedConvolutionOps(
    OpRegistry* r);  // ops/quantization/quantized_conv.cc: _contrib_quantized_conv, _sg_mkldnn_conv
void RegisterQuantizedAttentionOps(OpRegistry* r);  // quantized_attention.cc: _sg_mkldnn_selfatt_*

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
  RegisterControlFlowOps(r);
  RegisterWhereOps(r);
  RegisterInitOps(r);
  RegisterPassThroughOps(r);
  RegisterStatisticsOps(r);
  RegisterRearrangeOps(r);
  RegisterLikeOps(r);
  RegisterIndexingOps(r);
  RegisterSortOps(r);
  RegisterHistogramOps(r);
  RegisterCropOps(r);
  RegisterIm2colOps(r);
  RegisterLinalgOps(r);
  RegisterRandomOps(r);
  RegisterPdfOps(r);
  RegisterVisionOps(r);
  RegisterDetectionOps(r);
  RegisterSequenceOps(r);
  RegisterAttentionOps(r);
  RegisterRNNOps(r);
  RegisterLossOps(r);
  RegisterCTCLossOps(r);
  RegisterLegacyOps(r);
  RegisterQuantizeOps(r);
  RegisterQuantizedOps(r);
  RegisterQuantizedFullyConnectedOps(r);
  RegisterQuantizedConvolutionOps(r);  // after Convolution, whose attributes it parses
  RegisterQuantizedAttentionOps(r);
}

}  // namespace internal
}  // namespace hybridnet
