// Graph passes over an IndexedGraph, shared by Symbol and GraphExecutor.
#pragma once

#include <vector>

#include "hybridnet/symbol.h"

namespace hybridnet {
namespace internal {

/// Fills `entry_shapes` (one per entry; ndim 0 or 0-dims = unknown). Variables use known
/// values already in `entry_shapes`, else their "__shape__" hint. Iterates to a fixpoint.
/// Returns true when every entry shape is known; throws kShapeError on conflicts, naming the
/// node.
bool InferShapes(const IndexedGraph& graph, std::vector<Shape>* entry_shapes);
/// Same for dtypes, with "__dtype__" hints.
bool InferTypes(const IndexedGraph& graph, std::vector<DType>* entry_types);

}  // namespace internal
}  // namespace hybridnet

namespace hybridnet {
namespace internal {

/// Returns a copy of `symbol` with fusable patterns replaced by fused ops
/// (FullyConnected + Activation -> _hn_fully_connected_act, Convolution + Activation ->
/// _hn_convolution_act, BatchNorm + relu -> _contrib_BatchNormWithReLU). Numerics are unchanged.
Symbol FuseOps(const Symbol& symbol, size_t* num_fused);

}  // namespace internal
}  // namespace hybridnet
