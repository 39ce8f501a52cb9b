// Graph passes over an IndexedGraph, shared by Symbol and GraphExecutor.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "hybridnet/symbol.h"
#include "kernels/convolution_spec.h"

namespace hybridnet {
namespace internal {

/// The outputs node `node_id` has entries for in `graph`, all of which its kernel writes: the
/// visible ones, and hidden ones up to the last the graph reads (IndexedGraph's rows).
inline uint32_t NumEntriesOf(const IndexedGraph& graph, uint32_t node_id) {
  return graph.entry_id(node_id + 1, 0) - graph.entry_id(node_id, 0);
}

/// Fills `entry_shapes` (one per entry; ndim 0 or 0-dims = unknown). Variables use known
/// values already in `entry_shapes`, else their "__shape__" hint. Iterates to a fixpoint.
/// Returns true when every entry shape is known; throws kShapeError on conflicts, naming the
/// node.
/// The attribute `key` of `node` as written, else its op's declared default ("" when none).
std::string AttrOrDefault(const Node& node, const std::string& key);

/// The window of convolution node `conv` (Convolution or _hn_convolution) as the kernel layer
/// describes calls (kernels/convolution.h), for the passes' questions to it: `rank` spatial dims,
/// `channels` input channels (0: not known yet), filters, groups, kernel, stride, dilation and
/// padding from its attributes; the image sizes are left unknown.
ConvSpec ConvWindowOf(const Node& conv, size_t rank, int64_t channels);

/// The dtype variable `node` declares with its "__dtype__" attribute (as MXNet's exports write
/// it), kUnknown without one; kFormatError when it is not a dtype flag.
DType DeclaredDType(const Node& node);

bool InferShapes(const IndexedGraph& graph, std::vector<Shape>* entry_shapes);
/// Same for dtypes, with "__dtype__" hints.
bool InferTypes(const IndexedGraph& graph, std::vector<DType>* entry_types);

}  // namespace internal
}  // namespace hybridnet

namespace hybridnet {
namespace internal {

/// Returns a copy of `symbol` with fusable patterns replaced by fused ops (see fuse.cc):
/// Convolution + BatchNorm + elemwise_add + Activation/clip -> _hn_convolution, FullyConnected +
/// Activation -> _hn_fully_connected_act, BatchNorm + relu -> _contrib_BatchNormWithReLU.
/// Numerics are unchanged (unless the executor runs with fast_math: OpContext::fast_math lets
/// fused convolutions fold BatchNorm into their weights and use Winograd).
Symbol FuseOps(const Symbol& symbol, size_t* num_fused);

/// Returns a copy of `symbol` with only BatchNorm + Activation(relu) and FullyConnected +
/// Activation fused (FuseOps' rules), the latter not with softsign: training graphs, whose backward
/// then reads neither op's output that the fusion hides. Numerics are unchanged, in either mode.
Symbol FuseActivationsForTraining(const Symbol& symbol, size_t* num_fused);

/// Returns a copy of `symbol` with sum(log_softmax(x, axis=-1) * label, axis=-1) (elemwise_mul,
/// each op read by the next alone) as one _hn_log_softmax_label_sum (fuse.cc): training graphs,
/// whose cross-entropy with dense labels then neither writes the product nor, in its gradient,
/// the broadcast output gradient. Numerics are unchanged.
Symbol FuseLogSoftmaxLabelSum(const Symbol& symbol, size_t* num_fused);

/// Returns a copy of `symbol` in which convolutions, and the pooling, BatchNorm, elementwise and
/// channel Concat ops they feed, work on channel-last data (NWC, NHWC, NDHWC), with layout
/// changes (_hn_relayout, or zero-copy Reshape views where both layouts are the same bytes) only
/// where channel-first ops or the graph's outputs read it. `shapes` holds the shape of every
/// entry of IndexedGraph(symbol.outputs). `*num_relayouts` counts the _hn_relayout nodes added.
/// Numerics are unchanged.
Symbol LayOutChannelLast(const Symbol& symbol, const std::vector<Shape>& shapes,
                         size_t* num_relayouts);

/// The same for a training graph: a traced forward and the gradient graph the gradient pass made
/// of it, laid out together (the cached op then splits them into its forward and backward
/// executors). The gradients of convolutions (_backward_Convolution becomes
/// _backward_hn_convolution), of BatchNorm and of pooling run on channel-last data too; no
/// convolution reads channel-first data, there are no int8 rewrites, and every layout change is a
/// _hn_relayout (no view of a fixed shape), and elementwise ops are laid out only where each
/// sample fills whole vector registers, so the result holds for every batch size of `shapes`. The
/// gradient pass has already fixed how each gradient sums its contributions, which the layout does
/// not change.
Symbol LayOutChannelLastForTraining(const Symbol& symbol, const std::vector<Shape>& shapes,
                                    size_t* num_relayouts);

/// Returns a copy of `symbol` without bfloat16 tensors (pass/bfloat16.cc): each amp_cast to
/// bfloat16 becomes that cast followed by one back to float32 (the values rounded as MXNet rounds
/// them, kept in float32), and variables declared bfloat16 ("__dtype__" 12: parameters an AMP
/// export stores in bfloat16) are declared float32. `*num_casts` counts the amp_casts changed.
Symbol WithoutBFloat16Tensors(const Symbol& symbol, size_t* num_casts);

/// Returns a copy of `symbol` whose convolutions (Convolution, _hn_convolution) and dense layers
/// (FullyConnected, _hn_fully_connected_act) compute their products in bfloat16
/// (ConvolutionFusions::bf16, BFloat16FullyConnectedAttrs): every one with `every_layer` (the
/// conversion at load), else those an AMP export runs in bfloat16: a weight variable named in
/// `bf16_weights`, or data an amp_cast rounded to bfloat16. `*num_layers` counts them.
Symbol ComputeInBFloat16(const Symbol& symbol, bool every_layer,
                         const std::set<std::string>& bf16_weights, size_t* num_layers);

}  // namespace internal
}  // namespace hybridnet
