// A traced graph run for training as planned graphs (MXNet's CachedOp): a hybridized block called
// under autograd recording runs its forward as one planned graph and appears on the autograd tape
// as ONE node, whose backward runs the planned gradient graph.
//
// The forward+backward graph is built once per set of inputs that need a gradient (the gradient
// pass over the traced Symbol, shape-free) and split where the backward reads the forward: the
// forward executor returns the visible outputs plus exactly the activations the backward reads,
// kept with the tape node until its backward runs (or the tape is freed); the backward executor
// reads them, the head gradients and the forward inputs. Each executor plans its memory per input
// shape (buffers reused by liveness, in place where safe) and keeps the plans. Both run every op
// with its own kernel in training mode, but for BatchNorm + relu, FullyConnected + Activation and
// sum(log_softmax(x) * label), each one op computing the same floats (FuseActivationsForTraining,
// FuseLogSoftmaxLabelSum), and the gradient pass sums contributions in the same order as over the
// eager tape, so the gradients are bit-identical to eager backward. Float convolutional graphs
// are laid out channel-last before the gradient pass (LayOutChannelLastForTraining), so both
// executors run convolutions, BatchNorm, pooling and elementwise ops on channel-last activations
// and gradients, with kernels that give the channel-first kernels' bits.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace internal {

struct TrainingGraph;  // cached_op.cc

class CachedOp {
 public:
  /// `graph`: the traced forward; `input_names`: its variables in the order Run takes their
  /// values (data inputs, then parameters and auxiliary states); `name` names the tape node.
  CachedOp(Symbol graph, std::vector<std::string> input_names, std::string name);

  /// Runs the forward in the calling thread's training mode. While the thread records and an
  /// input is on the tape with a gradient wanted, the outputs are recorded as one tape node.
  std::vector<NDArray> Run(const std::vector<NDArray>& inputs);

  /// Forward+backward graphs built so far (one per set of inputs needing a gradient and mode).
  size_t num_gradient_graphs() const { return num_gradient_graphs_; }
  /// Plans made by the forward and backward executors (one per input shape each).
  size_t num_forward_plans() const;
  size_t num_backward_plans() const;

 private:
  std::shared_ptr<TrainingGraph> GraphFor(const std::vector<bool>& needs_grad, bool is_train,
                                          const std::vector<NDArray>& inputs);

  Symbol graph_;
  std::vector<std::string> input_names_;
  std::string name_;
  /// Whether the training graph's layout depends on the inputs' shapes (it has convolutions to
  /// lay out channel-last); if not, one graph serves every shape.
  bool layout_by_shapes_;
  /// Per set of inputs needing a gradient, mode and, with layout_by_shapes_, the inputs' shapes
  /// but their batch size.
  std::map<std::tuple<std::vector<bool>, bool, std::vector<std::vector<int64_t>>>,
           std::shared_ptr<TrainingGraph>>
      graphs_;
  size_t num_gradient_graphs_ = 0;
};

}  // namespace internal
}  // namespace hybridnet
