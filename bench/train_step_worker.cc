// hybridnet's worker of bench/train_step_bench.py: one training step (forward + backward, no
// optimizer update) of a model written by make_peer_models, run as a gluon SymbolBlock,
// hybridized with static_alloc and static_shape (or eager with --eager), under
// autograd::Record with every weight's gradient written by autograd::Backward.
//
//   train_step_worker [--eager] PREFIX INPUT_DIR NAME[,NAME...] THREADS
//
// Loads PREFIX-symbol.json / PREFIX-0000.params and INPUT_DIR/<NAME>.npy (the graph's data
// inputs, in order) and INPUT_DIR/label.npy (one-hot labels shaped as the output). The step: out
// = net(inputs); loss = -sum(log_softmax(out, -1) * onehot, -1) per sample; backward (head
// gradient ones). Speaks the driver's protocol (see train_step_bench.py): "name=...", then
// "check loss=... grad_sq=... first_ms=..." after a first step or "error=..." and exit 3; then,
// for each line "N", N steps and their mean in milliseconds; for "mem", VmHWM and the starting
// VmRSS in kB.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
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

// VmHWM or VmRSS of this process, in kB.
long MemoryKb(const char* field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field) + 1));
  }
  return -1;
}

std::string OneLine(std::string text) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

double Sum(const NDArray& x, bool squares) {
  double sum = 0;
  for (float v : x.ToFloatVector()) sum += squares ? double(v) * v : v;
  return sum;
}

class TrainStep {
 public:
  explicit TrainStep(const Options& o)
      : net_(gluon::SymbolBlock::Imports(o.prefix + "-symbol.json", o.input_names,
                                         o.prefix + "-0000.params")) {
    for (const std::string& name : o.input_names)
      inputs_.push_back(LoadNpy(o.input_dir + "/" + name + ".npy"));
    onehot_ = LoadNpy(o.input_dir + "/label.npy");
    if (!o.eager) net_->Hybridize(true, {/*static_alloc=*/true, /*static_shape=*/true});
    const gluon::ParameterDict params = net_->CollectParams();
    for (const gluon::ParameterPtr& p : params.list()) {
      if (!p->differentiable()) continue;  // BatchNorm's running statistics
      p->AttachGrad();
      weights_.push_back(p->data());
    }
  }

  void Run() {
    {
      auto recording = autograd::Record();
      NDArray out = (*net_)(inputs_)[0];
      loss_ = op::Call("sum", {op::log_softmax(out, -1) * onehot_}, {{"axis", "-1"}}) * -1.f;
    }
    autograd::Backward({loss_});
  }

  double LossSum() const { return Sum(loss_, false); }
  double GradientSquares() const {
    double sum = 0;
    for (const NDArray& w : weights_) sum += Sum(autograd::GetGrad(w), true);
    return sum;
  }

 private:
  std::shared_ptr<gluon::SymbolBlock> net_;
  std::vector<NDArray> inputs_, weights_;
  NDArray onehot_, loss_;
};

double Milliseconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

int Serve(const Options& o) {
  SetNumThreads(o.threads);
  std::printf("name=hybridnet %s, %d thread(s) (%s)\n",
              o.eager ? "eager" : "hybridized static_alloc/static_shape", o.threads,
              OneLine(KernelLibraries()).c_str());
  std::fflush(stdout);
  std::unique_ptr<TrainStep> step;
  long base_kb = 0;  // the model and inputs loaded, before the first step
  double first_ms = 0;
  try {
    step = std::make_unique<TrainStep>(o);
    base_kb = MemoryKb("VmRSS:");
    const auto start = std::chrono::steady_clock::now();
    step->Run();
    first_ms = Milliseconds(start);
  } catch (const std::exception& e) {
    std::printf("error=%s\n", OneLine(e.what()).c_str());
    return 3;
  }
  std::printf("check loss=%.9g grad_sq=%.9g first_ms=%.3f\n", step->LossSum(),
              step->GradientSquares(), first_ms);
  std::fflush(stdout);
  for (std::string line; std::getline(std::cin, line);) {
    if (line == "mem") {
      std::printf("%ld %ld\n", MemoryKb("VmHWM:"), base_kb);
    } else {
      const int count = std::stoi(line);
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < count; ++i) step->Run();
      std::printf("%.4f\n", Milliseconds(start) / count);
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace bench
}  // namespace hybridnet

int main(int argc, char** argv) {
  try {
    return hybridnet::bench::Serve(hybridnet::bench::Parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_step_worker: %s\n", e.what());
    return 2;
  }
}
