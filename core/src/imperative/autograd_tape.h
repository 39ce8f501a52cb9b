// The autograd tape (see hybridnet/autograd.h): the nodes arrays point to while recording, and
// the hook eager invocation calls after each op.
//
// There is no global tape list: each array computed under recording holds its TapeNode, which
// holds the nodes of its inputs, as MXNet's autograd entries do. A tape is freed with the last
// array computed from it, so recording without ever calling backward leaks nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "hybridnet/autograd.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

/// A recorded op invocation, or a marked variable (attrs.op null).
struct TapeNode {
  NodeAttrs attrs;
  /// Per input: the node that made it and which output; a null node for an array that is not on
  /// the tape (a constant).
  std::vector<std::pair<std::shared_ptr<TapeNode>, uint32_t>> inputs;
  /// The input and output values the op's gradient reads, detached (none where it reads
  /// nothing; see RecordOp); the outputs with the hidden ones it reads (OutputsToCompute).
  std::vector<NDArray> saved_inputs;
  std::vector<NDArray> saved_outputs;
  /// The op's visible outputs.
  uint32_t num_outputs = 0;
  /// Set when a backward without retain_graph used and released this node.
  bool released = false;
  /// Variables: where backward stores the gradient, and how.
  NDArray grad;
  autograd::GradReq grad_req = autograd::GradReq::kNull;
  /// Set by a backward that stored `grad`, cleared by the Trainer's update: MXNet's fresh_grad,
  /// which tells a stale gradient (a parameter the last forward did not use) from a new one.
  bool fresh_grad = false;

  bool IsVariable() const { return attrs.op == nullptr; }

  TapeNode() = default;
  TapeNode(const TapeNode&) = delete;
  TapeNode& operator=(const TapeNode&) = delete;
  /// Releases the nodes this one alone keeps alive without recursing, so a tape of any length
  /// (a loop recorded a million times) is freed without exhausting the stack.
  ~TapeNode();
};

/// An array's place on the tape (NDArray keeps it private).
struct TapeAccess {
  static const std::shared_ptr<TapeNode>& Node(const NDArray& a) { return a.tape_node_; }
  static uint32_t Output(const NDArray& a) { return a.tape_output_; }
  static void Set(NDArray* a, std::shared_ptr<TapeNode> node, uint32_t output) {
    a->tape_node_ = std::move(node);
    a->tape_output_ = output;
  }
};

/// The outputs an eager call of the op computes: its visible ones and, while the calling thread
/// records, the hidden ones its gradient reads (BatchNorm's saved batch statistics), for RecordOp
/// to keep; the caller gets the visible ones.
uint32_t OutputsToCompute(const NodeAttrs& attrs, size_t num_inputs);

/// Records an eager op that just ran, when the calling thread records and an input is on the
/// tape: a new TapeNode keeps what the op's gradient reads, and `outputs` point to it. Outputs
/// may be views of an input (NDArray::Reshape records itself as Reshape).
void RecordOp(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
              std::vector<NDArray>* outputs);

/// Invoke, but output i is written into destinations[i] where that is given (not none), has the
/// output's shape and dtype and shares no storage with an input; the other outputs are new
/// arrays. Backward writes gradients straight into the variables' gradient buffers this way.
std::vector<NDArray> InvokeInto(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                                const std::vector<NDArray>& destinations);

/// Whether a backward stored the gradient of the marked variable `x` since the last
/// SetGradFresh(x, false); false for an array that is not marked.
bool IsGradFresh(const NDArray& x);
/// Sets that flag of the marked variable `x` (nothing for an array that is not marked).
void SetGradFresh(const NDArray& x, bool fresh);

}  // namespace internal
}  // namespace hybridnet
