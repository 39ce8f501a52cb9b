// Writes the models the peer benchmark (peer_bench.cc) runs, as MXNet files for hybridnet plus
// every parameter as .npy for bench/peer/onnx_from_mxnet.py, which builds the same graph with
// the same weights in PyTorch and exports the ONNX file ONNX Runtime runs:
//   DIR/<name>-symbol.json, DIR/<name>-0000.params   (hybridnet)
//   DIR/<name>.npy/<parameter>.npy                     (the converter)
// Models: the model zoo's resnet18_v1, resnet50_v1 and mobilenetv2_1.0 (Xavier weights, random
// BatchNorm statistics), GluonCV's cifar_resnet20_v1 (the MXNet fixture, trained weights), the
// seed MLP (512-256-128-2) and, for the training-step benchmark (train_step_bench.py), lstm_lm:
// a 2-layer LSTM language model sized as MXNet's word_language_model example (vocabulary 10000,
// embedding 200, hidden 200; no dropout), inputs data (T, N) tokens, state and state_cell.
// Usage: make_peer_models DIR FIXTURES_DIR [NAME...]   (no NAME: all but lstm_lm)
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_common.h"
#include "hybridnet/gluon/initializer.h"
#include "hybridnet/gluon/model_zoo.h"
#include "hybridnet/imperative.h"
#include "hybridnet/io/params.h"
#include "hybridnet/npy.h"

namespace hybridnet {
namespace bench {
namespace {

namespace fs = std::filesystem;

void WriteNpyDir(const std::string& dir, const std::map<std::string, NDArray>& params) {
  fs::create_directories(dir);
  for (const auto& kv : params) SaveNpy(dir + "/" + kv.first + ".npy", kv.second);
}

void WriteModel(const std::string& dir, const std::string& name, const Symbol& symbol,
                const std::map<std::string, NDArray>& args,
                const std::map<std::string, NDArray>& auxs) {
  symbol.Save(dir + "/" + name + "-symbol.json");
  NDArrayList list;
  std::map<std::string, NDArray> all;
  for (const auto& kv : args) {
    list.names.push_back("arg:" + kv.first);
    list.arrays.push_back(kv.second);
    all[kv.first] = kv.second;
  }
  for (const auto& kv : auxs) {
    list.names.push_back("aux:" + kv.first);
    list.arrays.push_back(kv.second);
    all[kv.first] = kv.second;
  }
  SaveNDArrayList(dir + "/" + name + "-0000.params", list);
  WriteNpyDir(dir + "/" + name + ".npy", all);
  std::printf("wrote %s (%zu parameters)\n", name.c_str(), all.size());
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

void WriteZooModel(const std::string& dir, const std::string& zoo_name, const std::string& name) {
  ZooModel model = TraceZooModel(zoo_name);
  // The other BatchNorm parameters as trained networks have them too (not 0 and 1).
  gluon::ParameterDict all = model.net->CollectParams();
  for (const auto& p : all.list()) {
    if (EndsWith(p->name(), "running_mean") || EndsWith(p->name(), "beta")) {
      p->SetData(NDArray::RandomUniform(p->shape(), -0.1f, 0.1f));
    } else if (EndsWith(p->name(), "gamma")) {
      p->SetData(NDArray::RandomUniform(p->shape(), 0.5f, 1.5f));
    }
  }
  std::map<std::string, NDArray> args, auxs;
  const std::vector<std::string> aux_names = model.graph.ListAuxiliaryStates();
  for (const auto& p : all.list()) {
    const bool aux = std::find(aux_names.begin(), aux_names.end(), p->name()) != aux_names.end();
    (aux ? auxs : args)[p->name()] = p->data();
  }
  WriteModel(dir, name, model.graph, args, auxs);
}

void FixtureModel(const std::string& dir, const std::string& fixtures, const std::string& name) {
  const std::string prefix = fixtures + "/" + name;
  fs::copy_file(prefix + "-symbol.json", dir + "/" + name + "-symbol.json",
                fs::copy_options::overwrite_existing);
  fs::copy_file(prefix + "-0000.params", dir + "/" + name + "-0000.params",
                fs::copy_options::overwrite_existing);
  NDArrayList list = LoadNDArrayList(prefix + "-0000.params");
  std::map<std::string, NDArray> params;
  for (size_t i = 0; i < list.arrays.size(); ++i) params[list.names[i].substr(4)] = list.arrays[i];
  WriteNpyDir(dir + "/" + name + ".npy", params);
  std::printf("wrote %s (the MXNet fixture, %zu parameters)\n", name.c_str(), params.size());
}

void LstmLanguageModel(const std::string& dir) {
  constexpr int64_t kVocab = 10000, kEmbed = 200, kHidden = 200, kLayers = 2, kGates = 4;
  Seed(3);
  Symbol embedded = Symbol::Create(
      "Embedding", {Symbol::Var("data"), Symbol::Var("embedding0_weight")},
      {{"input_dim", std::to_string(kVocab)}, {"output_dim", std::to_string(kEmbed)}},
      "embedding0");
  Symbol lstm = Symbol::Create(
      "RNN",
      {embedded, Symbol::Var("lstm0_parameters"), Symbol::Var("state"), Symbol::Var("state_cell")},
      {{"mode", "lstm"},
       {"state_size", std::to_string(kHidden)},
       {"num_layers", std::to_string(kLayers)}},
      "lstm0");
  Symbol decoded = Symbol::Create(
      "FullyConnected", {lstm, Symbol::Var("decoder_weight"), Symbol::Var("decoder_bias")},
      {{"num_hidden", std::to_string(kVocab)}, {"flatten", "False"}}, "decoder");
  // MXNet's packed RNN parameters: each layer's i2h and h2h weights, then their biases.
  const int64_t packed = kGates * kHidden * (kEmbed + kHidden) +
                         (kLayers - 1) * kGates * kHidden * 2 * kHidden +
                         kLayers * 2 * kGates * kHidden;
  std::map<std::string, NDArray> args = {
      {"embedding0_weight", NDArray::RandomUniform({kVocab, kEmbed}, -0.1f, 0.1f)},
      {"lstm0_parameters", NDArray::RandomUniform({packed}, -0.1f, 0.1f)},
      {"decoder_weight", NDArray::RandomUniform({kVocab, kHidden}, -0.1f, 0.1f)},
      {"decoder_bias", NDArray::Zeros({kVocab})}};
  WriteModel(dir, "lstm_lm", decoded, args, {});
}

}  // namespace
}  // namespace bench
}  // namespace hybridnet

int main(int argc, char** argv) {
  using namespace hybridnet;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s DIR FIXTURES_DIR [NAME...]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1], fixtures = argv[2];
  const std::vector<std::pair<std::string, std::function<void()>>> makers = {
      {"resnet18_v1", [&] { bench::WriteZooModel(dir, "resnet18_v1", "resnet18_v1"); }},
      {"resnet50_v1", [&] { bench::WriteZooModel(dir, "resnet50_v1", "resnet50_v1"); }},
      {"mobilenetv2_1.0", [&] { bench::WriteZooModel(dir, "mobilenetv2_1.0", "mobilenetv2_1.0"); }},
      {"cifar_resnet20_v1", [&] { bench::FixtureModel(dir, fixtures, "cifar_resnet20_v1"); }},
      {"seed_mlp",
       [&] {
         bench::SeedMlp mlp = bench::MakeSeedMlp(42);
         bench::WriteModel(dir, "seed_mlp", mlp.symbol, mlp.params, {});
       }},
      {"lstm_lm", [&] { bench::LstmLanguageModel(dir); }},
  };
  std::vector<std::string> names(argv + 3, argv + argc);
  if (names.empty()) {
    for (const auto& m : makers)
      if (m.first != "lstm_lm") names.push_back(m.first);
  }
  try {
    std::filesystem::create_directories(dir);
    for (const std::string& name : names) {
      auto it = std::find_if(makers.begin(), makers.end(),
                             [&](const auto& m) { return m.first == name; });
      if (it == makers.end()) throw std::invalid_argument("no model named " + name);
      it->second();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_peer_models: %s\n", e.what());
    return 1;
  }
  return 0;
}
