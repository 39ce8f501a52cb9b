// Building blocks of the ops' gradient declarations (FGradient, op.h): a gradient is written as
// graph nodes over the forward node's inputs and outputs and the output gradients.
//
//   // d exp(x) = dy * exp(x): the forward output is reused
//   .SetGradient([](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
//     GradientBuilder g(n, dy);
//     return std::vector<NodeEntry>{g.Mul(g.out_grad(0), g.out(0))};
//   })
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/op.h"
#include "hybridnet/symbol.h"
#include "kernels/activation-inl.h"

namespace hybridnet {
namespace internal {

/// Makes the nodes of one gradient: each is named after the forward node ("fc1_backward"), and
/// reads the forward node's inputs (in), outputs (out) and the output gradients (out_grad).
class GradientBuilder {
 public:
  GradientBuilder(std::shared_ptr<Node> node, std::vector<NodeEntry> out_grads)
      : node_(std::move(node)), out_grads_(std::move(out_grads)) {}

  /// Forward input i.
  const NodeEntry& in(size_t i) const { return node_->inputs[i]; }
  /// Forward output i.
  NodeEntry out(uint32_t i) const { return NodeEntry{node_, i, 0}; }
  /// The gradient of forward output i.
  const NodeEntry& out_grad(size_t i) const { return out_grads_[i]; }
  /// The forward node's attributes.
  const NodeAttrs& attrs() const { return node_->attrs; }

  /// A node applying `op_name` (parsed with `attrs`) to `inputs`; all of its outputs.
  std::shared_ptr<Node> MakeNode(const std::string& op_name, std::vector<NodeEntry> inputs,
                                 AttrDict attrs = {}) const;
  /// Output 0 of such a node.
  NodeEntry Op(const std::string& op_name, std::vector<NodeEntry> inputs,
               AttrDict attrs = {}) const;

  /// Elementwise arithmetic of equal shapes (elemwise_*).
  NodeEntry Add(const NodeEntry& a, const NodeEntry& b) const { return Op("elemwise_add", {a, b}); }
  NodeEntry Sub(const NodeEntry& a, const NodeEntry& b) const { return Op("elemwise_sub", {a, b}); }
  NodeEntry Mul(const NodeEntry& a, const NodeEntry& b) const { return Op("elemwise_mul", {a, b}); }
  NodeEntry Div(const NodeEntry& a, const NodeEntry& b) const { return Op("elemwise_div", {a, b}); }
  NodeEntry Negative(const NodeEntry& a) const { return Op("negative", {a}); }
  /// A scalar op (_mul_scalar, _rminus_scalar, ...) with `scalar` written exactly.
  NodeEntry Scalar(const std::string& op_name, const NodeEntry& a, double scalar) const;
  /// zeros_like(a).
  NodeEntry ZerosLike(const NodeEntry& a) const { return Op("zeros_like", {a}); }
  /// `grad` (an output's shape) summed over the axes `like` was broadcast along, giving `like`'s
  /// shape (_hn_reduce_sum_like).
  NodeEntry SumLike(const NodeEntry& grad, const NodeEntry& like) const {
    return Op("_hn_reduce_sum_like", {grad, like});
  }
  /// `a`'s values converted to `like`'s dtype (_hn_cast_like).
  NodeEntry CastLike(const NodeEntry& a, const NodeEntry& like) const {
    return Op("_hn_cast_like", {a, like});
  }

 private:
  std::shared_ptr<Node> node_;
  std::vector<NodeEntry> out_grads_;
};

/// A unary op's derivative f'(x) as a node (from in(0) and out(0)); UnaryGradient multiplies it
/// by the output gradient.
using UnaryDerivative = std::function<NodeEntry(const GradientBuilder& g)>;
/// The FGradient dx = dy * f'(x) of a one-input, one-output elementwise op.
FGradient UnaryGradient(UnaryDerivative derivative);

/// dy times the derivative of an activation at the forward node (Activation's act types, and the
/// unary ops relu, sigmoid, tanh and softsign), as MXNet's backward computes it: from the output
/// y, except softsign's, from the input x. relu's is one _backward_relu node (one pass).
NodeEntry ActivationInputGradient(const GradientBuilder& g, ActType act, const NodeEntry& dy);
/// Whether ActivationInputGradient reads the forward's input x (softsign's), not its output alone:
/// a fusion that hides x cannot take that activation in training graphs.
bool ActivationGradientReadsInput(ActType act);

/// FGradient: every input gets a zero gradient (BlockGrad, comparisons, rounding).
std::vector<NodeEntry> ZeroGradient(const std::shared_ptr<Node>& node,
                                    const std::vector<NodeEntry>& out_grads);
/// FGradient: input 0 gets output 0's gradient unchanged, other inputs zero (identity ops,
/// _plus_scalar, straight-through estimators).
std::vector<NodeEntry> IdentityGradient(const std::shared_ptr<Node>& node,
                                        const std::vector<NodeEntry>& out_grads);

/// FGradient of the type conversions (Cast, amp_cast, amp_multicast): input i gets output i's
/// gradient converted back to input i's dtype, as MXNet's _backward_cast and _backward_amp_*.
std::vector<NodeEntry> CastBackGradient(const std::shared_ptr<Node>& node,
                                        const std::vector<NodeEntry>& out_grads);

/// The gradient of input `input` of an op that only copies elements of it (tile, take, Pad,
/// slice_axis, ...): every element of output 0's gradient is added to the input element it was
/// copied from. The op itself, run with its own attributes (changed by `overrides`) on the
/// input's element numbers 1..n (_hn_index_like), says which element that is, so clip and wrap
/// modes, negative indices and edge padding are the forward's; a 0 there (Pad's
/// constant_value=0) marks an output element copied from no input element.
NodeEntry CopiedElementsGradient(const GradientBuilder& g, size_t input, AttrDict overrides = {});

/// The gradients of A and B (inputs 0 and 1) of a matrix product C = op(A) op(B) made by the op
/// `product` (batch_dot, _linalg_gemm2) with transpose_a/transpose_b `ta`/`tb`, given C's
/// gradient `dc`: each is one more such product (dC op(B)^T, op(A)^T dC, laid out as A and B
/// are), with `attrs` (alpha, axis) added to its transposes.
std::vector<NodeEntry> MatrixProductGradient(const GradientBuilder& g, const std::string& product,
                                             bool ta, bool tb, const NodeEntry& dc,
                                             const AttrDict& attrs = {});

/// An op whose gradient is one internal backward op, with the forward's attributes, taking
/// (output 0's gradient, the forward inputs) and giving the gradients of the forward inputs in
/// order (ROIAlign, CTCLoss, ...): its FGradient,
FGradient BackwardOpGradient(std::string backward_op);
/// the backward op's input names ("out_grad", then the forward's `names`),
std::vector<std::string> BackwardInputNames(std::vector<std::string> names);
/// and its shape inference, through the forward's inference `forward`.
bool BackwardShape(const FInferShape& forward, const NodeAttrs& attrs, std::vector<Shape>* in,
                   std::vector<Shape>* out);

}  // namespace internal
}  // namespace hybridnet
