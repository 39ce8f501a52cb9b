// Autograd: gradients of eager computations, with MXNet's semantics (mx.autograd).
//
//   NDArray x = NDArray::FromVector({3}, {1, 2, 3});
//   autograd::AttachGrad(&x);                    // x.attach_grad()
//   NDArray y;
//   {
//     auto recording = autograd::Record();       // with autograd.record():
//     y = op::Call("exp", {x});
//   }
//   autograd::Backward({y});                     // y.backward()
//   NDArray dx = autograd::GetGrad(x);           // x.grad, here exp(x)
//
// While recording, every eager op with an input that depends on a marked variable is kept on a
// tape: its op, attributes, and the input and output values its gradient reads (the rest are not
// kept). Backward turns the part of the tape that reaches the heads into a graph, runs the
// gradient pass over it (each op's FGradient, op.h: the same declaration a graph's gradient
// uses) and runs the gradient graph with the same kernels as every eager op. The tape lives as
// long as arrays computed from it; a backward without retain_graph releases the part it used.
//
// Recording and training are flags of the calling thread (as in MXNet): each thread records its
// own tape, and eager ops read the training flag (Dropout drops, BatchNorm uses batch statistics).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hybridnet/ndarray.h"

namespace hybridnet {
/// Recording scopes, variables and backward (MXNet's mx.autograd); see the file comment.
namespace autograd {

/// How backward stores a variable's gradient: MXNet's grad_req ('null', 'write', 'add'),
/// numbered as MXNet's OpReqType.
enum class GradReq {
  kNull = 0,   ///< no gradient: the variable is skipped
  kWrite = 1,  ///< each backward overwrites the gradient buffer
  kAdd = 3,    ///< each backward adds to the gradient buffer
};

/// MXNet's name of `req`: "null", "write" or "add".
const char* GradReqName(GradReq req);
/// The GradReq MXNet calls `name` (kInvalidArgument naming the accepted ones otherwise).
GradReq GradReqByName(const std::string& name);

/// True while the calling thread records eager ops (inside Record()).
bool IsRecording();
/// True while eager ops on the calling thread run in training mode.
bool IsTraining();
/// Sets whether the calling thread records; returns the previous value.
bool SetRecording(bool recording);
/// Sets whether eager ops on the calling thread run in training mode; returns the previous value.
bool SetTraining(bool training);

/// Sets the calling thread's recording and training flags for its lifetime and restores them at
/// its end; std::nullopt leaves a flag as it is. Made by Record, Pause, TrainMode and
/// PredictMode, and nests like MXNet's `with` scopes (keep it in a variable: a discarded scope
/// ends at once).
class ModeScope {
 public:
  /// Sets the given flags.
  ModeScope(std::optional<bool> recording, std::optional<bool> training);
  /// Restores the flags as they were before.
  ~ModeScope();
  ModeScope(const ModeScope&) = delete;
  ModeScope& operator=(const ModeScope&) = delete;

 private:
  bool previous_recording_;
  bool previous_training_;
};

/// `with autograd.record(train_mode)`: records, and trains when `train_mode`.
[[nodiscard]] ModeScope Record(bool train_mode = true);
/// `with autograd.pause(train_mode)`: stops recording; trains when `train_mode`.
[[nodiscard]] ModeScope Pause(bool train_mode = false);
/// `with autograd.train_mode()`: training mode, recording unchanged.
[[nodiscard]] ModeScope TrainMode();
/// `with autograd.predict_mode()`: inference mode, recording unchanged.
[[nodiscard]] ModeScope PredictMode();

/// Marks `variables` as arrays whose gradients backward computes (MXNet's mark_variables):
/// backward stores the gradient of variables[i] in gradients[i] as reqs[i] says. Each gradient
/// array must have its variable's shape and dtype (a float dtype) and is shared, not copied. A
/// variable that was computed by a recorded op becomes a leaf: gradients stop at it. Copies of a
/// variable made afterwards are the same variable; copies made before are not. Throws
/// kInvalidArgument (sizes, none or symbolic arrays), kShapeError or kTypeError.
void MarkVariables(const std::vector<NDArray*>& variables, const std::vector<NDArray>& gradients,
                   const std::vector<GradReq>& reqs);
/// Marks `x` with a new zero-filled gradient buffer (MXNet's x.attach_grad(grad_req)).
void AttachGrad(NDArray* x, GradReq req = GradReq::kWrite);
/// The gradient buffer of a marked variable (shared: later backwards write into it), or a none
/// array when `x` is not marked.
NDArray GetGrad(const NDArray& x);
/// `x`'s values without its place on the tape (MXNet's x.detach()): shares storage, and
/// gradients do not flow through it.
NDArray Detach(const NDArray& x);

/// Computes the gradients of `heads` with respect to every marked variable they were recorded
/// from whose GradReq is not kNull, and stores them in the variables' gradient buffers (MXNet's
/// autograd.backward). `head_grads` is empty (all ones) or has one array per head, a none array
/// meaning ones; each has its head's shape and dtype. Without `retain_graph` the tape the heads
/// were computed on is released and a second backward through it fails. The gradient ops run in
/// training mode when `train_mode`. Errors (kInvalidArgument): a head not recorded or already
/// released, no variable that wants a gradient; kUnsupported: an op on the way without a
/// gradient, naming it.
void Backward(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads = {},
              bool retain_graph = false, bool train_mode = true);
/// The gradients of `heads` with respect to `variables` (marked arrays the heads were recorded
/// from, else kInvalidArgument), returned as new arrays and not stored in the gradient buffers
/// (MXNet's autograd.grad). With `create_graph` the gradient ops are recorded, so the returned
/// gradients are on the tape and can be differentiated again (second order); keep
/// `retain_graph` true then, as MXNet's default does, to differentiate through the first graph
/// again. A gradient op without a gradient of its own fails that second backward, naming it.
/// Arguments and errors as for Backward.
std::vector<NDArray> Grad(const std::vector<NDArray>& heads, const std::vector<NDArray>& variables,
                          const std::vector<NDArray>& head_grads = {}, bool retain_graph = false,
                          bool train_mode = true, bool create_graph = false);

}  // namespace autograd
}  // namespace hybridnet
