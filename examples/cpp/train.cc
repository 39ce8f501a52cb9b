// examples/python/train_digits.py in C++: the same LeNet-like network trained on the 8x8 digits
// with the C++ Gluon API (HybridSequential, SoftmaxCrossEntropyLoss, Trainer, DataLoader, the
// Accuracy metric), hybridized. It follows issue 36's digits training protocol, as the Java,
// Scala, R and Python examples do, so that all of them compute the same losses bit for bit:
//
//   train DATA_DIR [--epochs N] [--steps N] [--optimizer adam|sgd] [--no-shuffle] [--out PREFIX]
//                  [--min-accuracy A]
//
// DATA_DIR holds digits_{train,test}_{images,labels}.npy and the initial parameters
// lenet_init.params, which `python3 examples/python/train_digits.py --write-data DATA_DIR`
// writes. Batches of 32 are shuffled with seed 42 unless --no-shuffle; --steps N stops after N
// steps (crossing epochs) instead of after --epochs. Prints `epoch E: loss L` per epoch (the sum
// of the per-sample losses over the number of training samples) and `test accuracy A`. --out
// writes PREFIX-losses.txt (each step's summed loss as the 8 hex digits of its float32 bits),
// PREFIX.params (the trained parameters, save_parameters' format) and the export
// (PREFIX-symbol.json, PREFIX-0000.params). Exits 1 below --min-accuracy, 2 on bad arguments or
// data.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hybridnet/autograd.h"
#include "hybridnet/base.h"
#include "hybridnet/gluon/block.h"
#include "hybridnet/gluon/conv_layers.h"
#include "hybridnet/gluon/data.h"
#include "hybridnet/gluon/loss.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/gluon/trainer.h"
#include "hybridnet/metric.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/npy.h"
#include "hybridnet/operators.h"

using namespace hybridnet;
using namespace hybridnet::gluon;

namespace {

constexpr char kUsage[] =
    "usage: train DATA_DIR [--epochs N] [--steps N] [--optimizer adam|sgd] [--no-shuffle] "
    "[--out PREFIX] [--min-accuracy A]\n";

struct Arguments {
  std::string data_dir;
  int epochs = 10;
  int64_t steps = 0;  // 0: train --epochs whole epochs
  std::string optimizer = "adam";
  bool shuffle = true;
  std::string out_prefix;
  double min_accuracy = 0.0;
};

// Prints what is wrong and returns false.
bool BadArgument(const std::string& message) {
  std::cerr << "train: " << message << "\n" << kUsage;
  return false;
}

bool ParsePositive(const std::string& flag, const std::string& value, int64_t* out) {
  char* end = nullptr;
  *out = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || *out < 1) {
    return BadArgument(flag + " takes a positive integer, not '" + value + "'");
  }
  return true;
}

const std::set<std::string> kValueFlags = {"--epochs", "--steps", "--optimizer", "--out",
                                           "--min-accuracy"};

bool ParseArguments(int argc, char** argv, Arguments* args) {
  if (argc < 2 || argv[1][0] == '-') return BadArgument("DATA_DIR is missing");
  args->data_dir = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--no-shuffle") {
      args->shuffle = false;
      continue;
    }
    if (kValueFlags.count(flag) == 0) return BadArgument("unknown option " + flag);
    if (i + 1 == argc) return BadArgument(flag + " needs a value");
    const std::string value = argv[++i];
    int64_t number = 0;
    if (flag == "--epochs") {
      if (!ParsePositive(flag, value, &number)) return false;
      args->epochs = static_cast<int>(number);
    } else if (flag == "--steps") {
      if (!ParsePositive(flag, value, &args->steps)) return false;
    } else if (flag == "--optimizer") {
      if (value != "adam" && value != "sgd") {
        return BadArgument("--optimizer is adam or sgd, not '" + value + "'");
      }
      args->optimizer = value;
    } else if (flag == "--out") {
      args->out_prefix = value;
    } else {  // --min-accuracy
      char* end = nullptr;
      args->min_accuracy = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0') return BadArgument("--min-accuracy takes a number");
    }
  }
  return true;
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

// The float32 bits of `value` as 8 lowercase hex digits: the losses file compares exactly.
std::string HexBits(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  char text[9];
  std::snprintf(text, sizeof(text), "%08" PRIx32, bits);
  return text;
}

int Train(const Arguments& args) {
  auto train_set = LoadSplit(args.data_dir, "train");
  auto test_set = LoadSplit(args.data_dir, "test");
  data::DataLoader train_loader(train_set, data::DataLoaderOptions()
                                               .set_batch_size(32)
                                               .set_shuffle(args.shuffle)
                                               .set_seed(42)
                                               .set_last_batch(data::LastBatch::kKeep));
  data::DataLoader test_loader(test_set, data::DataLoaderOptions().set_batch_size(100));

  // Every language starts from the same parameters: one forward resolves the deferred shapes
  // (the Dense layers' inputs), then the file replaces every value.
  auto net = LeNet();
  net->Initialize();
  net->Hybridize();
  (*net)(NDArray::Zeros({1, 1, 8, 8}));
  net->LoadParameters(args.data_dir + "/lenet_init.params");

  SoftmaxCrossEntropyLoss loss_fn;
  const optimizer::KeywordArgs optimizer_params =
      args.optimizer == "adam"
          ? optimizer::KeywordArgs{{"learning_rate", "0.002"}}
          : optimizer::KeywordArgs{{"learning_rate", "0.1"}, {"momentum", "0.9"}};
  Trainer trainer(net->CollectParams(), args.optimizer, optimizer_params);

  std::vector<float> step_losses;
  std::vector<NDArray> batch;
  for (int epoch = 1; args.steps > 0 || epoch <= args.epochs; ++epoch) {
    double epoch_loss = 0.0;
    for (train_loader.Reset(); train_loader.Next(&batch);) {
      NDArray loss;
      {
        auto recording = autograd::Record();
        loss = loss_fn({(*net)(batch[0]), batch[1]})[0];
      }
      autograd::Backward({loss});
      trainer.Step(static_cast<int>(batch[0].shape()[0]));
      // The step's loss is the library's float32 sum, as every language reads it.
      step_losses.push_back(*op::Call("sum", {loss}).data<float>());
      epoch_loss += step_losses.back();
      if (static_cast<int64_t>(step_losses.size()) == args.steps) break;
    }
    std::printf("epoch %d: loss %.6f\n", epoch,
                epoch_loss / static_cast<double>(train_set->size()));
    if (static_cast<int64_t>(step_losses.size()) == args.steps) break;
  }

  const double test_accuracy = Evaluate(*net, test_loader);
  std::printf("test accuracy %.4f\n", test_accuracy);
  if (!args.out_prefix.empty()) {
    std::ofstream losses_file(args.out_prefix + "-losses.txt");
    for (float step_loss : step_losses) losses_file << HexBits(step_loss) << "\n";
    if (!losses_file.flush()) {
      std::cerr << "train: cannot write " << args.out_prefix << "-losses.txt\n";
      return 2;
    }
    net->SaveParameters(args.out_prefix + ".params");
    net->Export(args.out_prefix, 0);
  }
  if (test_accuracy < args.min_accuracy) {
    std::printf("FAIL: test accuracy %.4f is below %g\n", test_accuracy, args.min_accuracy);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (!ParseArguments(argc, argv, &args)) return 2;
  try {
    return Train(args);
  } catch (const Error& e) {
    std::cerr << "train: " << e.what() << "\n";
    return 2;
  }
}
