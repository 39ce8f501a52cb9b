// hybridnet's C++ loop for bench/train_epoch_bench.py: full training epochs of a model the
// driver wrote (symbol.json + params, loaded as a gluon SymbolBlock hybridized with static_alloc
// and static_shape), the same steps as the driver's Gluon script: DataLoader batches (in order,
// last batch discarded), SoftmaxCrossEntropyLoss, autograd::Backward, Trainer::Step(batch).
// Against the Python worker, this gives the Python binding's per-step overhead.
//
//   train_epoch_worker PREFIX DATA_DIR OPTIMIZER BATCH THREADS
//
// DATA_DIR/data.npy and DATA_DIR/label.npy hold the samples and their class indices; OPTIMIZER
// is "name:key=value,key=value" (MXNet's registry name and keyword arguments). Speaks the
// drivers' protocol (train_worker_common.h), one run an epoch, its check line "loss=<sum of the
// last batch's losses> weight_sq=<sum of the squared weights>".
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "hybridnet/autograd.h"
#include "hybridnet/gluon/data.h"
#include "hybridnet/gluon/loss.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/gluon/trainer.h"
#include "hybridnet/imperative.h"
#include "hybridnet/npy.h"
#include "train_worker_common.h"

namespace hybridnet {
namespace bench {
namespace {

struct Options {
  std::string prefix, data_dir, optimizer;
  optimizer::KeywordArgs optimizer_params;
  int64_t batch = 0;
  int threads = 1;
};

Options Parse(int argc, char** argv) {
  if (argc != 6) {
    throw std::invalid_argument(
        "usage: train_epoch_worker PREFIX DATA_DIR OPTIMIZER[:KEY=VALUE,...] BATCH THREADS");
  }
  Options o;
  o.prefix = argv[1];
  o.data_dir = argv[2];
  const std::string spec = argv[3];
  const size_t colon = spec.find(':');
  o.optimizer = spec.substr(0, colon);
  if (colon != std::string::npos) {
    std::stringstream pairs(spec.substr(colon + 1));
    for (std::string pair; std::getline(pairs, pair, ',');) {
      const size_t eq = pair.find('=');
      if (eq == std::string::npos)
        throw std::invalid_argument("optimizer argument without =: " + pair);
      o.optimizer_params.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
    }
  }
  o.batch = std::stoll(argv[4]);
  o.threads = std::stoi(argv[5]);
  return o;
}

class TrainEpoch : public TimedTask {
 public:
  explicit TrainEpoch(const Options& o)
      : net_(gluon::SymbolBlock::Imports(o.prefix + "-symbol.json", {"data"},
                                         o.prefix + "-0000.params")),
        loss_fn_(std::make_shared<gluon::SoftmaxCrossEntropyLoss>()),
        loader_(std::make_shared<gluon::data::ArrayDataset>(std::vector<NDArray>{
                    LoadNpy(o.data_dir + "/data.npy"), LoadNpy(o.data_dir + "/label.npy")}),
                gluon::data::DataLoaderOptions().set_batch_size(o.batch).set_last_batch(
                    gluon::data::LastBatch::kDiscard)),
        batch_(static_cast<int>(o.batch)) {
    net_->Hybridize(true, {/*static_alloc=*/true, /*static_shape=*/true});
    loss_fn_->Hybridize(true, {/*static_alloc=*/true, /*static_shape=*/true});
    const gluon::ParameterDict params = net_->CollectParams();
    for (const gluon::ParameterPtr& p : params.list())
      if (p->differentiable()) weights_.push_back(p);
    trainer_ = std::make_unique<gluon::Trainer>(params, o.optimizer, o.optimizer_params);
  }

  void Run() override {
    std::vector<NDArray> batch;
    for (loader_.Reset(); loader_.Next(&batch);) {
      {
        auto recording = autograd::Record();
        loss_ = (*loss_fn_)({(*net_)(batch[0]), batch[1]})[0];
      }
      autograd::Backward({loss_});
      trainer_->Step(batch_);
    }
  }

  std::string Checks() const override {
    double weight_sq = 0;
    for (const gluon::ParameterPtr& w : weights_) weight_sq += Sum(w->data(), true);
    char text[96];
    std::snprintf(text, sizeof(text), "loss=%.9g weight_sq=%.9g", Sum(loss_, false), weight_sq);
    return text;
  }

 private:
  std::shared_ptr<gluon::SymbolBlock> net_;
  std::shared_ptr<gluon::SoftmaxCrossEntropyLoss> loss_fn_;
  gluon::data::DataLoader loader_;
  int batch_;
  std::vector<gluon::ParameterPtr> weights_;
  std::unique_ptr<gluon::Trainer> trainer_;
  NDArray loss_;
};

int ServeTrainEpoch(const Options& o) {
  SetNumThreads(o.threads);
  return Serve("hybridnet C++ loop, hybridized static_alloc/static_shape, " +
                   std::to_string(o.threads) + " thread(s) (" + KernelLibraries() + ")",
               [&o] { return std::make_unique<TrainEpoch>(o); });
}

}  // namespace
}  // namespace bench
}  // namespace hybridnet

int main(int argc, char** argv) {
  try {
    return hybridnet::bench::ServeTrainEpoch(hybridnet::bench::Parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_epoch_worker: %s\n", e.what());
    return 2;
  }
}
