// hybridnet's worker of bench/train_step_bench.py: one training step (forward + backward, no
// optimizer update) of a model written by make_peer_models, run as a gluon SymbolBlock,
// hybridized with static_alloc and static_shape (or eager with --eager), under
// autograd::Record with every weight's gradient written by autograd::Backward.
//
//   train_step_worker [--eager] PREFIX INPUT_DIR NAME[,NAME...] THREADS
//
// Loads PREFIX-symbol.json / PREFIX-0000.params and INPUT_DIR/<NAME>.npy (the graph's data
// inputs, in order) and INPUT_DIR/label.npy (one-hot labels shaped as the output). The step: out
// = net(inputs); loss = -sum(log_softmax(out, -1) * onehot, -1) per sample, computed by a loss
// block hybridized as the net is (with --eager, neither is), as Gluon users hybridize their loss;
// backward (head gradient ones). Speaks the drivers' protocol (train_worker_common.h), its check
// line "loss=<sum of the losses> grad_sq=<sum of the squared gradients>".
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "hybridnet/autograd.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/imperative.h"
#include "hybridnet/npy.h"
#include "hybridnet/operators.h"
#include "train_worker_common.h"

namespace hybridnet {
namespace bench {
namespace {

struct Options {
  bool eager = false;
  std::string prefix, input_dir;
  std::vector<std::string> input_names;
  int threads = 1;
};

Options Parse(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Options o;
  if (!args.empty() && args[0] == "--eager") {
    o.eager = true;
    args.erase(args.begin());
  }
  if (args.size() != 4) {
    throw std::invalid_argument(
        "usage: train_step_worker [--eager] PREFIX INPUT_DIR NAME[,NAME...] THREADS");
  }
  o.prefix = args[0];
  o.input_dir = args[1];
  std::stringstream names(args[2]);
  for (std::string name; std::getline(names, name, ',');) o.input_names.push_back(name);
  o.threads = std::stoi(args[3]);
  return o;
}

// -sum(log_softmax(out, -1) * onehot, -1) per sample, from the inputs (out, onehot).
class OneHotCrossEntropy : public gluon::HybridBlock {
 public:
  OneHotCrossEntropy() : HybridBlock("onehotcrossentropy") {}

  std::vector<NDArray> ForwardMany(const std::vector<NDArray>& inputs) override {
    const NDArray log_probs = op::log_softmax(inputs[0], -1);
    return {op::Call("sum", {log_probs * inputs[1]}, {{"axis", "-1"}}) * -1.f};
  }
};

class TrainStep : public TimedTask {
 public:
  explicit TrainStep(const Options& o)
      : net_(gluon::SymbolBlock::Imports(o.prefix + "-symbol.json", o.input_names,
                                         o.prefix + "-0000.params")) {
    for (const std::string& name : o.input_names)
      inputs_.push_back(LoadNpy(o.input_dir + "/" + name + ".npy"));
    onehot_ = LoadNpy(o.input_dir + "/label.npy");
    if (!o.eager) {
      net_->Hybridize(true, {/*static_alloc=*/true, /*static_shape=*/true});
      loss_block_.Hybridize(true, {/*static_alloc=*/true, /*static_shape=*/true});
    }
    const gluon::ParameterDict params = net_->CollectParams();
    for (const gluon::ParameterPtr& p : params.list()) {
      if (!p->differentiable()) continue;  // BatchNorm's running statistics
      p->AttachGrad();
      weights_.push_back(p->data());
    }
  }

  void Run() override {
    {
      auto recording = autograd::Record();
      NDArray out = (*net_)(inputs_)[0];
      loss_ = loss_block_({out, onehot_})[0];
    }
    autograd::Backward({loss_});
  }

  std::string Checks() const override {
    double grad_sq = 0;
    for (const NDArray& w : weights_) grad_sq += Sum(autograd::GetGrad(w), true);
    char text[96];
    std::snprintf(text, sizeof(text), "loss=%.9g grad_sq=%.9g", Sum(loss_, false), grad_sq);
    return text;
  }

 private:
  std::shared_ptr<gluon::SymbolBlock> net_;
  OneHotCrossEntropy loss_block_;
  std::vector<NDArray> inputs_, weights_;
  NDArray onehot_, loss_;
};

int ServeTrainStep(const Options& o) {
  SetNumThreads(o.threads);
  const std::string name = std::string("hybridnet ") +
                           (o.eager ? "eager" : "hybridized static_alloc/static_shape") + ", " +
                           std::to_string(o.threads) + " thread(s) (" + KernelLibraries() + ")";
  return Serve(name, [&o] { return std::make_unique<TrainStep>(o); });
}

}  // namespace
}  // namespace bench
}  // namespace hybridnet

int main(int argc, char** argv) {
  try {
    return hybridnet::bench::ServeTrainStep(hybridnet::bench::Parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_step_worker: %s\n", e.what());
    return 2;
  }
}
