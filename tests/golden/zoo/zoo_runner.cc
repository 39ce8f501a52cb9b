// hybridnet's side of the model-zoo golden test (zoo_golden.py):
//
//   zoo_runner import PREFIX EPOCH INPUT.npy OUT
//       loads PREFIX-symbol.json + PREFIX-EEEE.params (SymbolBlock::Imports) and runs INPUT
//       eagerly, hybridized and through a GraphExecutor: OUT-eager.npy, OUT-hybrid.npy,
//       OUT-exec.npy. A graph variable "*_label" without a value (SoftmaxOutput's label) is fed
//       zeros.
//   zoo_runner build NAME PREFIX INPUT.npy [PARAMS]
//       builds model-zoo model NAME (or layers1d/layers2d/layers3d, small nets of every
//       conv_layers.h layer) in C++, initializes and hybridizes it, runs INPUT (deferred
//       init), loads PARAMS (an MXNet save_parameters file, structural names) when given, runs
//       again, exports, and runs once more eagerly: PREFIX-hybrid.npy, PREFIX-symbol.json,
//       PREFIX-0000.params, PREFIX-eager.npy.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "hybridnet/executor.h"
#include "hybridnet/gluon/conv_layers.h"
#include "hybridnet/gluon/model_zoo.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/imperative.h"
#include "hybridnet/io/params.h"
#include "hybridnet/npy.h"

using namespace hybridnet;
using namespace hybridnet::gluon;

namespace {

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string EpochText(const std::string& epoch) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04d", std::stoi(epoch));
  return buf;
}

int Import(const std::string& prefix,
           const std::string& epoch,
           const std::string& input,
           const std::string& out) {
  auto t0 = std::chrono::steady_clock::now();
  NDArray x = LoadNpy(input);
  Symbol symbol = Symbol::Load(prefix + "-symbol.json");
  NDArrayList list = LoadNDArrayList(prefix + "-" + EpochText(epoch) + ".params");
  std::map<std::string, NDArray> params;
  for (size_t i = 0; i < list.names.size(); ++i) {
    std::string key = list.names[i];
    if (key.rfind("arg:", 0) == 0 || key.rfind("aux:", 0) == 0) key = key.substr(4);
    params[key] = list.arrays[i];
  }
  std::vector<std::string> inputs{"data"};
  std::vector<NDArray> feed{x};
  for (const auto& var : symbol.ListInputs()) {
    if (var == "data" || params.count(var)) continue;
    if (var.size() > 6 && var.compare(var.size() - 6, 6, "_label") == 0) {
      inputs.push_back(var);
      feed.push_back(NDArray::Zeros({x.shape()[0]}));
    }
  }
  // SymbolBlock: eager, then hybridized (one cached executor).
  auto block = std::make_shared<SymbolBlock>(symbol, inputs);
  ParameterDict block_params = block->CollectParams();
  for (const auto& p : block_params.list()) {
    auto it = params.find(p->name());
    if (it == params.end()) {
      std::cerr << "zoo_runner: no value for '" << p->name() << "'\n";
      return 1;
    }
    p->SetData(it->second);
  }
  SaveNpy(out + "-eager.npy", (*block)(feed)[0]);
  auto t1 = std::chrono::steady_clock::now();
  block->Hybridize();
  SaveNpy(out + "-hybrid.npy", (*block)(feed)[0]);
  // The executor directly, as the C API's predictor uses it.
  GraphExecutor exec(symbol, inputs, params);
  SaveNpy(out + "-exec.npy", exec.Forward(feed)[0]);
  ExecutorStats st = exec.stats();
  std::printf("import %s: %zu nodes, %zu kernels, %zu fused; load+eager %.2fs, hybrid+exec %.2fs\n",
              prefix.c_str(), st.num_nodes, st.num_kernels, st.num_fused,
              std::chrono::duration<double>(t1 - t0).count(), Seconds(t1));
  return 0;
}

// Small networks using every layer of conv_layers.h; zoo_golden.py builds the same in MXNet.
std::shared_ptr<HybridBlock> LayerNet(const std::string& name) {
  auto net = std::make_shared<HybridSequential>();
  if (name == "layers2d") {
    auto cat = std::make_shared<HybridConcurrent>(1);
    cat->Add(std::make_shared<Conv2D>(4, 1), std::make_shared<Identity>(),
             std::make_shared<MaxPool2D>(3, 1, 1));
    net->Add(std::make_shared<Conv2D>(8, 3, 1, 1, 1, 1, "NCHW", "relu"),
             std::make_shared<BatchNorm>(), std::make_shared<LeakyReLU>(0.1),
             std::make_shared<Conv2D>(8, 3, 2, 0, 1, 2, "NCHW", "", false, nullptr, Zero(), 8),
             std::make_shared<PReLU>(), std::make_shared<MaxPool2D>(2, IntTuple(), 0, "NCHW", true),
             std::make_shared<Conv2DTranspose>(4, 3, 2, 1, 1), std::make_shared<ELU>(),
             std::make_shared<AvgPool2D>(3, 1, 1, false, "NCHW", false), std::make_shared<SELU>(),
             std::make_shared<GELU>(), cat, std::make_shared<GlobalAvgPool2D>(),
             std::make_shared<Flatten>(), std::make_shared<Dense>(5));
  } else if (name == "layers1d") {
    net->Add(std::make_shared<Conv1D>(4, 3), std::make_shared<MaxPool1D>(2),
             std::make_shared<AvgPool1D>(2), std::make_shared<Conv1DTranspose>(3, 2, 2),
             std::make_shared<GlobalMaxPool1D>());
  } else if (name == "layers3d") {
    net->Add(std::make_shared<Conv3D>(4, 3, 1, 1), std::make_shared<Conv3DTranspose>(2, 2, 2),
             std::make_shared<MaxPool3D>(2),
             std::make_shared<BatchNorm>(1, 0.9, 0.001, true, false),
             std::make_shared<GlobalAvgPool3D>());
  } else {
    return model_zoo::GetModel(name);
  }
  return net;
}

int Build(const std::string& name,
          const std::string& prefix,
          const std::string& input,
          const std::string& params) {
  auto t0 = std::chrono::steady_clock::now();
  NDArray x = LoadNpy(input);
  Seed(11);
  auto net = LayerNet(name);
  // As MXNet users do: initialize, hybridize, then the first forward traces the graph and
  // completes the deferred shapes.
  net->Initialize(Xavier());
  net->Hybridize();
  (*net)(x);
  if (!params.empty()) net->LoadParameters(params);
  SaveNpy(prefix + "-hybrid.npy", (*net)(x));
  net->Export(prefix);
  net->Hybridize(false);
  SaveNpy(prefix + "-eager.npy", (*net)(x));
  size_t count = 0;
  ParameterDict all = net->CollectParams();
  for (const auto& p : all.list()) count += static_cast<size_t>(p->shape().Size());
  std::printf("build %s (%s): %zu parameters, %.2fs\n", name.c_str(), net->name().c_str(), count,
              Seconds(t0));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    SetNumThreads(1);
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 5 && args[0] == "import") return Import(args[1], args[2], args[3], args[4]);
    if ((args.size() == 4 || args.size() == 5) && args[0] == "build") {
      return Build(args[1], args[2], args[3], args.size() == 5 ? args[4] : "");
    }
    std::cerr << "usage: zoo_runner import PREFIX EPOCH INPUT.npy OUT | build NAME PREFIX "
                 "INPUT.npy [PARAMS]\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "zoo_runner: " << StatusCodeName(e.code()) << ": " << e.what() << "\n";
    return 1;
  }
}
