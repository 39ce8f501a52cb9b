// hybridnet's worker of bench/train_step_bench.py: one training step (forward + backward, no
// optimizer update) of a model written by make_peer_models, run as a gluon SymbolBlock,
// hybridized with static_alloc and static_shape (or eager with --eager), under
// autograd::Record with every weight's gradient written by autograd::Backward.
//
//   train_step_worker [--eager | --products-floor] PREFIX INPUT_DIR NAME[,NAME...] THREADS
//
// Loads PREFIX-symbol.json / PREFIX-0000.params and INPUT_DIR/<NAME>.npy (the graph's data
// inputs, in order) and INPUT_DIR/label.npy (one-hot labels shaped as the output). The step: out
// = net(inputs); loss = -sum(log_softmax(out, -1) * onehot, -1) per sample, computed by a loss
// block hybridized as the net is (with --eager, neither is), as Gluon users hybridize their loss;
// backward (head gradient ones). Speaks the drivers' protocol (train_worker_common.h), its check
// line "loss=<sum of the losses> grad_sq=<sum of the squared gradients>".
//
// --products-floor times what no framework on OpenBLAS can skip in a dense network's step: its
// matrix products alone, each one cblas_sgemm call (OpenBLAS on THREADS threads), forward x w'
// of every layer, backward dy' x of every layer and dy w of every layer but the first (whose
// data gradient nobody reads); no bias, activation, loss or allocation. Its check line has the
// squared sum of those weight products as grad_sq and loss 0 (they are not the step's numbers).
#include <cblas.h>

#include <algorithm>
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
#include "hybridnet/symbol.h"
#include "train_worker_common.h"

namespace hybridnet {
namespace bench {
namespace {

struct Options {
  bool eager = false;
  bool products_floor = false;
  std::string prefix, input_dir;
  std::vector<std::string> input_names;
  int threads = 1;
};

Options Parse(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Options o;
  if (!args.empty() && (args[0] == "--eager" || args[0] == "--products-floor")) {
    (args[0] == "--eager" ? o.eager : o.products_floor) = true;
    args.erase(args.begin());
  }
  if (args.size() != 4) {
    throw std::invalid_argument(
        "usage: train_step_worker [--eager | --products-floor] PREFIX INPUT_DIR NAME[,NAME...] "
        "THREADS");
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

// The step's matrix products alone (see --products-floor above), on the model's weights (the
// 2-D parameters named *_weight, in the graph's argument order) and its data input.
class ProductsFloor : public TimedTask {
 public:
  explicit ProductsFloor(const Options& o) {
    const auto net = gluon::SymbolBlock::Imports(o.prefix + "-symbol.json", o.input_names,
                                                 o.prefix + "-0000.params");
    const gluon::ParameterDict params = net->CollectParams();
    for (const std::string& name : Symbol::Load(o.prefix + "-symbol.json").ListArguments()) {
      const gluon::ParameterPtr p = params.Get(name);
      if (p == nullptr) continue;  // a data input
      const Shape shape = p->data().shape();
      const bool dense_weight = shape.ndim() == 2 && name.size() > 7 &&
                                name.compare(name.size() - 7, 7, "_weight") == 0;
      if (!dense_weight && shape.ndim() != 1) {
        throw std::invalid_argument("--products-floor: parameter " + name +
                                    " is not a dense layer's weight or bias; the floor is for "
                                    "networks of dense layers");
      }
      if (dense_weight) {
        layers_.push_back(Layer{p->data().ToFloatVector(), static_cast<blasint>(shape[0]),
                                static_cast<blasint>(shape[1])});
      }
    }
    if (layers_.empty()) throw std::invalid_argument("--products-floor: no dense layers");
    const NDArray x = LoadNpy(o.input_dir + "/" + o.input_names[0] + ".npy");
    batch_ = static_cast<blasint>(x.shape()[0]);
    if (x.shape().Size() != int64_t{batch_} * layers_[0].in) {
      throw std::invalid_argument("--products-floor: the data does not fit the first layer");
    }
    activations_.push_back(x.ToFloatVector());
    size_t widest_input = 0;
    for (const Layer& l : layers_) {
      activations_.emplace_back(static_cast<size_t>(batch_) * l.out);
      weight_grads_.emplace_back(static_cast<size_t>(l.out) * l.in);
      widest_input = std::max(widest_input, static_cast<size_t>(l.in));
    }
    for (std::vector<float>& g : data_grads_) g.resize(static_cast<size_t>(batch_) * widest_input);
    openblas_set_num_threads(o.threads);
  }

  void Run() override {
    const size_t n = layers_.size();
    for (size_t l = 0; l < n; ++l) {
      const Layer& w = layers_[l];
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch_, w.out, w.in, 1.f,
                  activations_[l].data(), w.in, w.values.data(), w.in, 0.f,
                  activations_[l + 1].data(), w.out);
    }
    // The last layer's output stands in for its gradient; the data gradients take turns in two
    // buffers made beforehand, so a run is products only.
    const float* dy = activations_[n].data();
    for (size_t l = n; l-- > 0;) {
      const Layer& w = layers_[l];
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, w.out, w.in, batch_, 1.f, dy, w.out,
                  activations_[l].data(), w.in, 0.f, weight_grads_[l].data(), w.in);
      if (l == 0) break;
      float* dx = data_grads_[l % 2].data();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch_, w.in, w.out, 1.f, dy, w.out,
                  w.values.data(), w.in, 0.f, dx, w.in);
      dy = dx;
    }
  }

  std::string Checks() const override {
    double grad_sq = 0;
    for (const std::vector<float>& g : weight_grads_)
      for (float v : g) grad_sq += double(v) * v;
    char text[64];
    std::snprintf(text, sizeof(text), "loss=0 grad_sq=%.9g", grad_sq);
    return text;
  }

 private:
  struct Layer {
    std::vector<float> values;  // (out, in)
    blasint out, in;
  };
  std::vector<Layer> layers_;
  blasint batch_ = 0;
  std::vector<std::vector<float>> activations_, weight_grads_;
  std::vector<float> data_grads_[2];
};

int ServeTrainStep(const Options& o) {
  SetNumThreads(o.threads);
  if (o.products_floor) {
    return Serve("the step's matrix products alone: cblas_sgemm, " +
                     std::string(openblas_get_config()) + ", " + std::to_string(o.threads) +
                     " thread(s)",
                 [&o] { return std::make_unique<ProductsFloor>(o); });
  }
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
