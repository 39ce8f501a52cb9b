// examples/python/train_digits.py in C++: the same LeNet-like network trained on the 8x8 digits
// with the C++ Gluon API (HybridSequential, SoftmaxCrossEntropyLoss, Trainer with Adam,
// DataLoader, the Accuracy metric), hybridized.
//
//   train DATA_DIR [--epochs N] [--min-accuracy A] [--export PREFIX]
//
// DATA_DIR holds digits_{train,test}_{images,labels}.npy, which
// `python3 examples/python/train_digits.py --write-data DATA_DIR` writes from scikit-learn's
// bundled digits. Prints each epoch's loss, training accuracy and time, then the test accuracy;
// exits 1 below --min-accuracy, 2 on bad arguments or data. --export writes the model
// (PREFIX-symbol.json, PREFIX-0000.params) and the Adam states (PREFIX.states, MXNet's format).
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/autograd.h"
#include "hybridnet/base.h"
#include "hybridnet/gluon/block.h"
#include "hybridnet/gluon/conv_layers.h"
#include "hybridnet/gluon/data.h"
#include "hybridnet/gluon/initializer.h"
#include "hybridnet/gluon/loss.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/gluon/trainer.h"
#include "hybridnet/metric.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/npy.h"

using namespace hybridnet;
using namespace hybridnet::gluon;

namespace {

struct Arguments {
  std::string data_dir;
  int epochs = 10;
  double min_accuracy = 0.0;
  std::string export_prefix;
};

bool ParseArguments(int argc, char** argv, Arguments* args) {
  if (argc < 2 || argv[1][0] == '-') return false;
  args->data_dir = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    char* end = nullptr;
    if (flag == "--epochs") {
      args->epochs = static_cast<int>(std::strtol(value.c_str(), &end, 10));
      if (*end != '\0' || args->epochs < 1) return false;
    } else if (flag == "--min-accuracy") {
      args->min_accuracy = std::strtod(value.c_str(), &end);
      if (*end != '\0') return false;
    } else if (flag == "--export") {
      args->export_prefix = value;
    } else {
      return false;
    }
  }
  return argc % 2 == 0;
}

std::shared_ptr<HybridSequential> LeNet() {
  auto net = std::make_shared<HybridSequential>();
  auto conv = [](int64_t channels) {
    return std::make_shared<Conv2D>(
        ConvOptions().set_channels(channels).set_kernel_size(3).set_padding(1).set_activation(
            "relu"));
  };
  net->Add(conv(32), std::make_shared<MaxPool2D>(PoolOptions().set_pool_size(2)), conv(64),
           std::make_shared<MaxPool2D>(PoolOptions().set_pool_size(2)), std::make_shared<Flatten>(),
           std::make_shared<Dense>(128, "relu"), std::make_shared<Dense>(10));
  return net;
}

std::shared_ptr<data::ArrayDataset> LoadSplit(const std::string& dir, const std::string& part) {
  return std::make_shared<data::ArrayDataset>(
      std::vector<NDArray>{LoadNpy(dir + "/digits_" + part + "_images.npy"),
                           LoadNpy(dir + "/digits_" + part + "_labels.npy")});
}

double Evaluate(HybridSequential& net, data::DataLoader& loader) {
  auto accuracy = metric::Create("acc");
  std::vector<NDArray> batch;
  for (loader.Reset(); loader.Next(&batch);) accuracy->Update({batch[1]}, {net(batch[0])});
  return accuracy->Get()[0].value;
}

int Train(const Arguments& args) {
  Seed(42);
  auto train_set = LoadSplit(args.data_dir, "train");
  auto test_set = LoadSplit(args.data_dir, "test");
  data::DataLoader train_loader(
      train_set, data::DataLoaderOptions().set_batch_size(32).set_shuffle(true).set_seed(42));
  data::DataLoader test_loader(test_set, data::DataLoaderOptions().set_batch_size(100));

  auto net = LeNet();
  net->Initialize(Xavier());
  net->Hybridize();
  SoftmaxCrossEntropyLoss loss_fn;
  Trainer trainer(net->CollectParams(), "adam", {{"learning_rate", "0.002"}});
  auto accuracy = metric::Create("acc");

  std::cout << std::fixed;
  double total_seconds = 0.0;
  std::vector<NDArray> batch;
  for (int epoch = 1; epoch <= args.epochs; ++epoch) {
    accuracy->Reset();
    double total_loss = 0.0;
    const auto start = std::chrono::steady_clock::now();
    for (train_loader.Reset(); train_loader.Next(&batch);) {
      NDArray output, loss;
      {
        auto recording = autograd::Record();
        output = (*net)(batch[0]);
        loss = loss_fn({output, batch[1]})[0];
      }
      autograd::Backward({loss});
      trainer.Step(static_cast<int>(batch[0].shape()[0]));
      const float* losses = loss.data<float>();
      for (int64_t i = 0; i < loss.size(); ++i) total_loss += losses[i];
      accuracy->Update({batch[1]}, {output});
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    total_seconds += seconds;
    std::cout << "[c++] epoch " << epoch << ": loss " << std::setprecision(4)
              << total_loss / static_cast<double>(train_set->size()) << ", train accuracy "
              << accuracy->Get()[0].value << ", " << std::setprecision(3) << seconds << " s\n";
  }

  const double test_accuracy = Evaluate(*net, test_loader);
  std::cout << "[c++] test accuracy " << std::setprecision(4) << test_accuracy << " ("
            << test_set->size() << " images); mean epoch time " << std::setprecision(3)
            << total_seconds / args.epochs << " s\n";
  if (!args.export_prefix.empty()) {
    net->Export(args.export_prefix);
    trainer.SaveStates(args.export_prefix + ".states");  // MXNet's Trainer.load_states reads it
    std::cout << "[c++] exported " << args.export_prefix << "-symbol.json, " << args.export_prefix
              << "-0000.params and the trainer's " << args.export_prefix << ".states\n";
  }
  if (test_accuracy < args.min_accuracy) {
    std::cout << "[c++] FAIL: test accuracy " << test_accuracy << " is below " << args.min_accuracy
              << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (!ParseArguments(argc, argv, &args)) {
    std::cerr << "usage: train DATA_DIR [--epochs N] [--min-accuracy A] [--export PREFIX]\n";
    return 2;
  }
  try {
    return Train(args);
  } catch (const Error& e) {
    std::cerr << "train: " << e.what() << "\n";
    return 2;
  }
}
