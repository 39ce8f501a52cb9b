// hybridnet run PREFIX EPOCH: one forward of an export on .npy inputs.
#include <filesystem>
#include <iostream>

#include "cli.h"

namespace hybridnet_cli {

namespace {

std::string SafeFileName(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (c == '/' || c == '\\' || c == ':') c = '_';
  return s;
}

// The inputs by name, read from NAME=FILE.npy specs.
std::map<std::string, Tensor> LoadInputs(const std::vector<std::string>& specs) {
  std::map<std::string, Tensor> inputs;
  for (const auto& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      UsageError("--input expects NAME=FILE.npy, got '" + spec + "'");
    }
    hn_tensor* raw = nullptr;
    Check(hn_tensor_load_npy(spec.substr(eq + 1).c_str(), &raw));
    inputs[spec.substr(0, eq)] = Tensor(raw);
  }
  return inputs;
}

// The planned graph: inputs are set by name; the predictor feeds zeros to those not given.
std::vector<Tensor> RunPredictor(const LoadedModel& m,
                                 const std::map<std::string, Tensor>& inputs) {
  hn_predictor* raw = nullptr;
  Check(hn_predictor_create(m.model.get(), &raw));
  Owned<hn_predictor, hn_predictor_free> predictor(raw);
  for (const auto& kv : inputs) {
    Check(hn_predictor_set_input_tensor(predictor.get(), kv.first.c_str(), kv.second.get()));
  }
  Check(hn_predictor_forward(predictor.get()));
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    hn_tensor* out = nullptr;
    Check(hn_predictor_output(predictor.get(), i, &out));
    outputs.emplace_back(out);
  }
  return outputs;
}

int Run(const Args& args) {
  LoadedModel m = LoadModel(args.positional(0), args.positional(1));
  std::map<std::string, Tensor> given = LoadInputs(args.values("--input"));
  bool eager = args.flag("--eager");
  std::vector<Tensor> results;
  if (eager) {
    auto block = ImportBlock(m);
    results = ForwardBlock(block.get(), BlockInputs(m, std::move(given)), m.outputs.size());
  } else {
    results = RunPredictor(m, given);
  }
  std::cout << m.prefix << " epoch " << m.epoch << " (" << (eager ? "eager" : "hybridized")
            << ")\n";
  for (size_t i = 0; i < results.size(); ++i) {
    std::cout << "  " << m.outputs[i] << " " << TensorSummary(results[i].get(), 6) << "\n";
  }
  if (auto output = args.value("--output")) {
    Check(hn_tensor_save_npy(results.at(0).get(), output->c_str()));
    std::cout << "wrote " << *output << "\n";
  }
  if (auto dir = args.value("--outputs")) {
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    if (ec) throw CliError{HN_ERR_IO, "cannot create '" + *dir + "': " + ec.message()};
    for (size_t i = 0; i < results.size(); ++i) {
      std::string path = *dir + "/" + SafeFileName(m.outputs[i]) + ".npy";
      Check(hn_tensor_save_npy(results[i].get(), path.c_str()));
      std::cout << "wrote " << path << "\n";
    }
  }
  return 0;
}

}  // namespace

extern const Command kRun{
    "run",
    "runs PREFIX-symbol.json + PREFIX-EEEE.params on .npy inputs",
    {{"PREFIX", "the export's path prefix"}, {"EPOCH", "its epoch (EEEE in the params name)"}},
    {{"--input", "NAME=FILE.npy", "input NAME from a .npy file (inputs not given are zeros)",
      /*repeatable=*/true, /*required=*/true},
     {"--output", "FILE.npy", "write the first output"},
     {"--outputs", "DIR", "write every output as DIR/<output name>.npy"},
     {"--eager", nullptr, "run op by op (an imported block) instead of the planned graph"}},
    Run};

}  // namespace hybridnet_cli
