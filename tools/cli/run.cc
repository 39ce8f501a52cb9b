// hybridnet run PREFIX EPOCH: one forward of an export on .npy inputs.
#include <cctype>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli.h"

namespace hybridnet_cli {

namespace {

std::string SafeFileName(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (c == '/' || c == '\\' || c == ':') c = '_';
  return s;
}

// The --outputs file of each head, named as kRun's help says. Heads may share a name (a block's
// output returned several times), and names equal but for case share a file on case-insensitive
// file systems, so every head of a colliding group gets its index. Indexed names never collide
// (their last part is the head's own index), so the loop ends with one file per head.
std::vector<std::string> HeadFileNames(const std::vector<std::string>& head_names) {
  auto file_name = [&](size_t head, bool indexed) {
    return SafeFileName(head_names[head]) + (indexed ? "." + std::to_string(head) : "") + ".npy";
  };
  std::vector<bool> indexed(head_names.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    std::map<std::string, std::vector<size_t>> heads_by_file;
    for (size_t i = 0; i < head_names.size(); ++i) {
      std::string key = file_name(i, indexed[i]);
      for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      heads_by_file[key].push_back(i);
    }
    for (const auto& kv : heads_by_file) {
      if (kv.second.size() < 2) continue;
      for (size_t head : kv.second) {
        changed = changed || !indexed[head];
        indexed[head] = true;
      }
    }
  }
  std::vector<std::string> files;
  for (size_t i = 0; i < head_names.size(); ++i) files.push_back(file_name(i, indexed[i]));
  return files;
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
std::vector<Tensor> RunPredictor(const LoadedModel& m, const std::map<std::string, Tensor>& inputs,
                                 int dtype) {
  hn_predictor* raw = nullptr;
  Check(hn_predictor_create(m.model.get(), &raw));
  Owned<hn_predictor, hn_predictor_free> predictor(raw);
  Check(hn_predictor_set_dtype(predictor.get(), dtype));
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
  const int dtype = ComputeDType(args.value("--dtype"));
  if (eager && dtype != HN_DTYPE_FLOAT32)
    UsageError("--dtype applies to the planned graph, not --eager");
  if (args.value("--threads")) Check(hn_set_num_threads(args.Number("--threads", 1, 1)));
  std::vector<Tensor> results;
  if (eager) {
    auto block = ImportBlock(m);
    results = ForwardBlock(block.get(), BlockInputs(m, std::move(given)), m.outputs.size());
  } else {
    results = RunPredictor(m, given, dtype);
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
    std::vector<std::string> files = HeadFileNames(m.outputs);
    for (size_t i = 0; i < results.size(); ++i) {
      std::string path = *dir + "/" + files[i];
      Check(hn_tensor_save_npy(results[i].get(), path.c_str()));
      std::cout << "wrote " << path << " (head " << i << ", " << m.outputs[i] << ")\n";
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
     {"--outputs", "DIR", "write every output to DIR, one file per head (below)"},
     {"--eager", nullptr, "run op by op (an imported block) instead of the planned graph"},
     {"--threads", "N", "kernel threads (default: OpenMP's, OMP_NUM_THREADS or every core)"},
     {"--dtype", "float32|bfloat16",
      "what convolutions and dense layers compute in (bfloat16: MXNet AMP's conversion)"}},
    Run,
    "  --outputs DIR writes head i (the model's outputs in order, from 0) as DIR/<name>.npy,\n"
    "  or as DIR/<name>.<i>.npy when another head would write the same file: one node output\n"
    "  returned several times, or names differing only in case or in / \\ : (which become _).\n"
    "  Each 'wrote' line says which head its file holds."};

}  // namespace hybridnet_cli
