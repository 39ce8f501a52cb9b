// hybridnet's side of the model-zoo golden test (zoo_golden.py):
//
//   zoo_runner import PREFIX EPOCH INPUT.npy OUT
//       loads PREFIX-symbol.json + PREFIX-EEEE.params (SymbolBlock::Imports) and runs INPUT
//       eagerly, hybridized and through a GraphExecutor: OUT-eager.npy, OUT-hybrid.npy,
//       OUT-exec.npy. A graph variable "*_label" without a value (SoftmaxOutput's label) is fed
//       zeros.
//   zoo_runner run PREFIX OUT NAME=INPUT.npy...
//       imports PREFIX-symbol.json + PREFIX-0000.params with the named data inputs (a model with
//       several inputs and outputs: detectors, BERT) and runs them eagerly, then hybridized:
//       every output k to OUT-eager-k.npy and OUT-hybrid-k.npy.
//   zoo_runner build NAME PREFIX INPUT.npy [PARAMS | random-batchnorm]
//       builds model-zoo model NAME (or layers1d/layers2d/layers3d, small nets of every
//       conv_layers.h layer) in C++, initializes and hybridizes it, runs INPUT (deferred
//       init), loads PARAMS (an MXNet save_parameters file, structural names) when given, or
//       gives every BatchNorm random statistics (the ONNX tests), runs again, exports, and runs
//       once more eagerly: PREFIX-hybrid.npy, PREFIX-symbol.json, PREFIX-0000.params,
//       PREFIX-eager.npy.
//   zoo_runner grad PREFIX OUT --train|--predict [--input-grad NAME]... HEAD_GRAD.npy...
//                   NAME=INPUT.npy...
//       imports PREFIX-symbol.json + PREFIX-0000.params, attaches a gradient to every
//       differentiable parameter and to the inputs named by --input-grad, runs the inputs under
//       autograd::Record(train mode or not) and backward with one head gradient per output, first
//       eagerly, then hybridized (a fresh import each time): every gradient, named as the
//       parameter or input, to OUT-eager.params and OUT-hybrid.params (gradients_golden.py). The
//       two runs must agree bit for bit.
//   zoo_runner summary NAME D0,D1,...
//       builds NAME as `build` does, initializes it and prints Block.summary on zeros of that
//       shape (viz_golden.py compares the text with MXNet's).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/executor.h"
#include "hybridnet/gluon/conv_layers.h"
#include "hybridnet/gluon/model_zoo.h"
#include "hybridnet/gluon/summary.h"
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

int Import(const std::string& prefix, const std::string& epoch, const std::string& input,
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

int Run(const std::string& prefix, const std::string& out, const std::vector<std::string>& feeds) {
  std::vector<std::string> names;
  std::vector<NDArray> inputs;
  for (const auto& feed : feeds) {
    size_t eq = feed.find('=');
    HN_CHECK(eq != std::string::npos, kInvalidArgument) << "expected NAME=FILE.npy, got " << feed;
    names.push_back(feed.substr(0, eq));
    inputs.push_back(LoadNpy(feed.substr(eq + 1)));
  }
  auto t0 = std::chrono::steady_clock::now();
  auto block = SymbolBlock::Imports(prefix + "-symbol.json", names, prefix + "-0000.params");
  std::vector<NDArray> eager = (*block)(inputs);
  auto t1 = std::chrono::steady_clock::now();
  block->Hybridize();
  std::vector<NDArray> hybrid = (*block)(inputs);
  for (size_t k = 0; k < eager.size(); ++k) {
    SaveNpy(out + "-eager-" + std::to_string(k) + ".npy", eager[k]);
    SaveNpy(out + "-hybrid-" + std::to_string(k) + ".npy", hybrid.at(k));
  }
  std::printf("run %s: %zu outputs; load+eager %.2fs, hybridize+forward %.2fs\n", prefix.c_str(),
              eager.size(), std::chrono::duration<double>(t1 - t0).count(), Seconds(t1));
  return 0;
}

// The gradients of one recorded forward and backward of an import of PREFIX (see `grad` above),
// named as the parameters and inputs.
NDArrayList Gradients(const std::string& prefix, const std::vector<std::string>& names,
                      const std::vector<NDArray>& inputs, const std::set<std::string>& input_grads,
                      const std::vector<NDArray>& head_grads, bool train_mode, bool hybridize) {
  auto block = SymbolBlock::Imports(prefix + "-symbol.json", names, prefix + "-0000.params");
  if (hybridize) block->Hybridize();
  ParameterDict all = block->CollectParams();
  std::vector<ParameterPtr> params;
  for (const auto& p : all.list()) {
    if (!p->differentiable()) continue;  // BatchNorm's moving statistics, as MXNet's grad_req null
    p->AttachGrad();
    params.push_back(p);
  }
  std::vector<NDArray> feed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    feed.push_back(inputs[i].Copy());
    if (input_grads.count(names[i])) autograd::AttachGrad(&feed.back());
  }
  std::vector<NDArray> outputs;
  {
    auto recording = autograd::Record(train_mode);
    outputs = (*block)(feed);
  }
  HN_CHECK(outputs.size() == head_grads.size(), kInvalidArgument)
      << prefix << " has " << outputs.size() << " outputs, given " << head_grads.size()
      << " head gradients";
  autograd::Backward(outputs, head_grads, /*retain_graph=*/false, train_mode);
  NDArrayList grads;
  for (const auto& p : params) {
    grads.names.push_back(p->name());
    grads.arrays.push_back(p->Grad().Copy());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!input_grads.count(names[i])) continue;
    grads.names.push_back(names[i]);
    grads.arrays.push_back(autograd::GetGrad(feed[i]).Copy());
  }
  return grads;
}

int Grad(const std::string& prefix, const std::string& out, const std::vector<std::string>& args) {
  HN_CHECK(!args.empty() && (args[0] == "--train" || args[0] == "--predict"), kInvalidArgument)
      << "grad: expected --train or --predict after OUT";
  bool train_mode = args[0] == "--train";
  std::vector<std::string> names;
  std::vector<NDArray> inputs, head_grads;
  std::set<std::string> input_grads;
  for (size_t i = 1; i < args.size(); ++i) {
    size_t eq = args[i].find('=');
    if (args[i] == "--input-grad" && i + 1 < args.size()) {
      input_grads.insert(args[++i]);
    } else if (eq != std::string::npos) {
      names.push_back(args[i].substr(0, eq));
      inputs.push_back(LoadNpy(args[i].substr(eq + 1)));
    } else {
      head_grads.push_back(LoadNpy(args[i]));
    }
  }
  for (const auto& name : input_grads) {
    HN_CHECK(std::find(names.begin(), names.end(), name) != names.end(), kInvalidArgument)
        << "grad: --input-grad " << name << " is not an input";
  }
  auto t0 = std::chrono::steady_clock::now();
  NDArrayList eager = Gradients(prefix, names, inputs, input_grads, head_grads, train_mode, false);
  auto t1 = std::chrono::steady_clock::now();
  NDArrayList hybrid = Gradients(prefix, names, inputs, input_grads, head_grads, train_mode, true);
  SaveNDArrayList(out + "-eager.params", eager);
  SaveNDArrayList(out + "-hybrid.params", hybrid);
  std::vector<std::string> differ;
  for (size_t i = 0; i < eager.arrays.size(); ++i) {
    if (!testing_util::BitEqual(eager.arrays[i], hybrid.arrays[i]))
      differ.push_back(eager.names[i]);
  }
  std::printf("grad %s (%s mode): %zu gradients; eager %.2fs, hybridized %.2fs\n", prefix.c_str(),
              train_mode ? "train" : "predict", eager.arrays.size(),
              std::chrono::duration<double>(t1 - t0).count(), Seconds(t1));
  if (!differ.empty()) {
    std::cerr << "zoo_runner: hybridized gradients differ from eager ones for " << differ.size()
              << " of " << eager.arrays.size() << " arrays, first " << differ[0] << "\n";
    return 1;
  }
  return 0;
}

// Small networks using every layer of conv_layers.h; zoo_golden.py builds the same in MXNet.
std::shared_ptr<HybridBlock> LayerNet(const std::string& name) {
  auto net = std::make_shared<HybridSequential>();
  auto conv = [](int64_t channels, IntTuple kernel) {
    return ConvOptions().set_channels(channels).set_kernel_size(std::move(kernel));
  };
  if (name == "layers2d") {
    auto cat = std::make_shared<HybridConcurrent>(1);
    cat->Add(
        std::make_shared<Conv2D>(conv(4, 1)), std::make_shared<Identity>(),
        std::make_shared<MaxPool2D>(PoolOptions().set_pool_size(3).set_strides(1).set_padding(1)));
    net->Add(std::make_shared<Conv2D>(conv(8, 3).set_padding(1).set_activation("relu")),
             std::make_shared<BatchNorm>(), std::make_shared<LeakyReLU>(0.1),
             std::make_shared<Conv2D>(
                 conv(8, 3).set_strides(2).set_groups(2).set_use_bias(false).set_in_channels(8)),
             std::make_shared<PReLU>(),
             std::make_shared<MaxPool2D>(PoolOptions().set_ceil_mode(true)),
             std::make_shared<Conv2DTranspose>(
                 conv(4, 3).set_strides(2).set_padding(1).set_output_padding(1)),
             std::make_shared<ELU>(),
             std::make_shared<AvgPool2D>(
                 PoolOptions().set_pool_size(3).set_strides(1).set_padding(1).set_count_include_pad(
                     false)),
             std::make_shared<SELU>(), std::make_shared<GELU>(), cat,
             std::make_shared<GlobalAvgPool2D>(), std::make_shared<Flatten>(),
             std::make_shared<Dense>(5));
  } else if (name == "layers1d") {
    net->Add(std::make_shared<Conv1D>(conv(4, 3)), std::make_shared<MaxPool1D>(),
             std::make_shared<AvgPool1D>(),
             std::make_shared<Conv1DTranspose>(conv(3, 2).set_strides(2)),
             std::make_shared<GlobalMaxPool1D>());
  } else if (name == "layers3d") {
    net->Add(std::make_shared<Conv3D>(conv(4, 3).set_padding(1)),
             std::make_shared<Conv3DTranspose>(conv(2, 2).set_strides(2)),
             std::make_shared<MaxPool3D>(),
             std::make_shared<BatchNorm>(BatchNormOptions().set_epsilon(0.001).set_scale(false)),
             std::make_shared<GlobalAvgPool3D>());
  } else {
    return model_zoo::GetModel(name);
  }
  return net;
}

// Gives every BatchNorm random statistics and affine parameters (zoo_golden.py's
// randomize_batchnorm), so that an export exercises them.
void RandomizeBatchNorm(HybridBlock* net) {
  ParameterDict params = net->CollectParams();
  for (const auto& p : params.list()) {
    const std::string name = p->name();
    auto ends_with = [&name](const std::string& suffix) {
      return name.size() >= suffix.size() &&
             name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with("running_var") || ends_with("gamma")) {
      p->SetData(NDArray::RandomUniform(p->shape(), 0.5f, 1.5f));
    } else if (ends_with("running_mean") || ends_with("beta")) {
      p->SetData(NDArray::RandomNormal(p->shape(), 0.f, 0.1f));
    }
  }
}

// PARAMS: an MXNet save_parameters file, or "random-batchnorm" (see RandomizeBatchNorm).
int Build(const std::string& name, const std::string& prefix, const std::string& input,
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
  if (params == "random-batchnorm") {
    RandomizeBatchNorm(net.get());
  } else if (!params.empty()) {
    net->LoadParameters(params);
  }
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

int PrintSummary(const std::string& name, const std::string& dims) {
  std::vector<int64_t> shape;
  for (size_t start = 0; start <= dims.size();) {
    size_t comma = std::min(dims.find(',', start), dims.size());
    shape.push_back(std::stoll(dims.substr(start, comma - start)));
    start = comma + 1;
  }
  Seed(11);
  auto net = LayerNet(name);
  net->Initialize(Xavier());
  std::cout << gluon::Summary(*net, {NDArray::Zeros(Shape(shape))});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    SetNumThreads(1);
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 5 && args[0] == "import") return Import(args[1], args[2], args[3], args[4]);
    if (args.size() >= 4 && args[0] == "run") {
      return Run(args[1], args[2], std::vector<std::string>(args.begin() + 3, args.end()));
    }
    if (args.size() >= 4 && args[0] == "grad") {
      return Grad(args[1], args[2], std::vector<std::string>(args.begin() + 3, args.end()));
    }
    if ((args.size() == 4 || args.size() == 5) && args[0] == "build") {
      return Build(args[1], args[2], args[3], args.size() == 5 ? args[4] : "");
    }
    if (args.size() == 3 && args[0] == "summary") return PrintSummary(args[1], args[2]);
    std::cerr
        << "usage: zoo_runner import PREFIX EPOCH INPUT.npy OUT | run PREFIX OUT "
           "NAME=INPUT.npy... | build NAME PREFIX INPUT.npy [PARAMS | random-batchnorm] | grad "
           "PREFIX OUT --train|--predict [--input-grad NAME]... HEAD_GRAD.npy... "
           "NAME=INPUT.npy... | summary NAME D0,D1,...\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "zoo_runner: " << StatusCodeName(e.code()) << ": " << e.what() << "\n";
    return 1;
  }
}
