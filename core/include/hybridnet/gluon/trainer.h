// Trainer: MXNet's gluon.Trainer on the CPU. It applies an optimizer to a list of parameters
// with the gradients the last backward stored:
//
//   gluon::Trainer trainer(net->CollectParams(), "adam", {{"learning_rate", "0.001"}});
//   for (...) {
//     NDArray loss;
//     {
//       auto recording = autograd::Record();
//       loss = (*loss_fn)({(*net)(x), label})[0];
//     }
//     autograd::Backward({loss});
//     trainer.Step(batch_size);   // gradients scaled by 1/batch_size
//   }
//   trainer.SaveStates("model.states");   // MXNet's .states file, which MXNet loads too
//
// A parameter's position in the trainer's list is its index for the optimizer (lr_mult and
// wd_mult are read from the parameters at each update) and its key in .states files; built from
// a ParameterDict the list is sorted by name, as MXNet's is.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/gluon/parameter.h"
#include "hybridnet/optimizer.h"

namespace hybridnet {
namespace gluon {

/// MXNet's gluon.Trainer (one CPU context, no kvstore). Not thread-safe.
class Trainer {
 public:
  /// Trains `params` (in this order; a parameter at most once) with `optimizer`, which the
  /// trainer shares. kInvalidArgument for an empty list, a repeated or null parameter.
  Trainer(std::vector<ParameterPtr> params, std::shared_ptr<optimizer::Optimizer> optimizer);
  /// Trains the parameters of `params` sorted by name (MXNet's order) with the optimizer the
  /// registry calls `optimizer`, made with `optimizer_params` (MXNet's keyword arguments).
  Trainer(const ParameterDict& params, const std::string& optimizer,
          const optimizer::KeywordArgs& optimizer_params = {});

  /// One update of every parameter whose grad_req is not null, the gradients scaled by
  /// rescale_grad / batch_size (MXNet's step: allreduce_grads, then update). A parameter whose
  /// gradient no backward wrote since the last update is an error naming it (kInvalidArgument,
  /// MXNet's stale-gradient warning) unless `ignore_stale_grad`, which skips it; so is a
  /// parameter without a value yet.
  void Step(int batch_size, bool ignore_stale_grad = false);
  /// Sums each gradient over the devices: with one CPU context there is nothing to sum; kept so
  /// code written as allreduce_grads() + update() runs unchanged.
  void AllreduceGrads();
  /// The update half of Step (for code that changes gradients between the two halves, such as
  /// gradient clipping).
  void Update(int batch_size, bool ignore_stale_grad = false);

  /// The optimizer's learning rate (its scheduler's at the current update count, when it has one).
  float learning_rate() const;
  /// Sets it (kInvalidArgument when the optimizer has a scheduler, as MXNet).
  void set_learning_rate(float lr);
  /// The optimizer (shared; LoadStates replaces it with the one the file holds).
  const std::shared_ptr<optimizer::Optimizer>& optimizer() const { return optimizer_; }
  /// The parameters, in index order.
  const std::vector<ParameterPtr>& params() const { return params_; }

  /// Writes MXNet's .states file: a pickle of (the optimizer states by index, the optimizer),
  /// which MXNet 1.9.1's Trainer.load_states reads.
  void SaveStates(const std::string& path) const;
  /// Reads a .states file MXNet 1.9.1 or SaveStates wrote: the optimizer's hyper-parameters,
  /// update counts and scheduler, and the state of every index it holds. The optimizer must be
  /// the one this trainer uses and every state must fit its parameter: otherwise
  /// kInvalidArgument (kFormatError for a damaged file) and nothing changes.
  void LoadStates(const std::string& path);

 private:
  std::vector<ParameterPtr> params_;
  std::shared_ptr<optimizer::Optimizer> optimizer_;
  /// rescale_grad as the optimizer had it at creation: Step sets scale / batch_size.
  float scale_;
  /// Each index's optimizer state, made at its first update (MXNet's Updater.states).
  std::map<int, std::vector<NDArray>> states_;
};

}  // namespace gluon
}  // namespace hybridnet
