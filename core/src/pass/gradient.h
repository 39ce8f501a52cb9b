// The gradient pass (NNVM's Gradient): from a forward graph to the graph of its gradients.
#pragma once

#include <vector>

#include "hybridnet/symbol.h"

namespace hybridnet {
namespace internal {

/// The gradients of sum_i <ys_grads[i], ys[i]> with respect to each of `xs`, as entries of new
/// nodes that read the forward graph's nodes (the values gradients need) and `ys_grads`. Only
/// ops on a path from some x to some y are differentiated, each through its FGradient; an output
/// no y depends on gets zeros_like gradients. The contributions to one entry are summed with
/// add_n in the order they arise (consumers in reverse topological order, their inputs in
/// order), so the result is the same graph, and the same bits, every time.
/// Throws kUnsupported when an op on such a path has no gradient ("backward reached op X (node
/// Y), which has no gradient"), kInvalidArgument when an x is not reachable from the ys.
/// A gradient node some of whose outputs nobody reads carries their numbers in the hidden
/// attribute kUnreadOutputsAttr ("0" or "0,2"), so its kernel may skip them (a convolution's data
/// gradient where the data is a constant, as MXNet's kNullOp requests).
std::vector<NodeEntry> Gradient(const std::vector<NodeEntry>& ys,
                                const std::vector<NodeEntry>& ys_grads,
                                const std::vector<NodeEntry>& xs);

constexpr char kUnreadOutputsAttr[] = "__unread_outputs__";

/// Whether the gradient pass found that nobody reads output `index` of the node of `attrs`.
bool GradientOutputUnread(const NodeAttrs& attrs, uint32_t index);

}  // namespace internal
}  // namespace hybridnet
