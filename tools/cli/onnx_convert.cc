// hybridnet convert ... OUT.onnx (onnx_convert.h). The parity check runs the graph through the
// C API (an imported, hybridized block), writes inputs and outputs as .npy with a manifest, and
// hands them to the
// embedded onnx_check.py in a Python that has onnx and onnxruntime:
// $HYBRIDNET_ONNX_PYTHON, else the venv scripts/setup-onnx.sh makes, else python3.
#include "onnx_convert.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "cli.h"
#include "onnx_check_py.h"

extern char** environ;

namespace hybridnet_cli {

namespace {

namespace fs = std::filesystem;

struct OnnxConvertOptions {
  std::string symbol_file;
  std::string params_file;  ///< empty: the weights are graph inputs
  std::string output;
  int opset = 0;  ///< 0: the library's default
  bool dynamic_batch = false;
  /// NAME=D1,D2,... (a data input's shape) or NAME=FILE.npy (its shape, and its values for
  /// --check).
  std::vector<std::string> inputs;
  bool check = false;
  double tolerance = 1e-4;  ///< largest relative difference --check accepts
};

/// The exit status of `--check` when the Python packages onnx/onnxruntime are missing.
constexpr int kCheckToolsMissing = 3;

using Symbol = Owned<hn_symbol, hn_symbol_free>;
using TensorList = Owned<hn_tensor_list, hn_tensor_list_free>;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The graph and its weights (none without a params file).
struct Graph {
  Symbol symbol;
  TensorList params;
  std::vector<std::string> inputs;  ///< variables without a value in params, in graph order
  std::vector<std::string> auxiliary_states;
  std::vector<std::string> outputs;
};

Graph LoadGraph(const OnnxConvertOptions& o) {
  Graph g;
  hn_symbol* sym = nullptr;
  Check(hn_symbol_load(o.symbol_file.c_str(), &sym));
  g.symbol.reset(sym);
  std::vector<std::string> weights;
  if (!o.params_file.empty()) {
    hn_tensor_list* list = nullptr;
    Check(hn_tensor_list_load(o.params_file.c_str(), &list));
    g.params.reset(list);
    size_t n = 0;
    Check(hn_tensor_list_size(list, &n));
    for (size_t i = 0; i < n; ++i) {
      const char* name = nullptr;
      Check(hn_tensor_list_name(list, i, &name));
      std::string key = name;
      if (key.rfind("arg:", 0) == 0 || key.rfind("aux:", 0) == 0) key = key.substr(4);
      weights.push_back(key);
    }
  }
  const char* const* names = nullptr;
  size_t count = 0;
  for (auto list : {hn_symbol_list_arguments, hn_symbol_list_auxiliary_states}) {
    Check(list(sym, &names, &count));
    for (size_t i = 0; i < count; ++i)
      if (std::find(weights.begin(), weights.end(), names[i]) == weights.end())
        g.inputs.push_back(names[i]);
  }
  Check(hn_symbol_list_auxiliary_states(sym, &names, &count));
  g.auxiliary_states.assign(names, names + count);
  Check(hn_symbol_list_outputs(sym, &names, &count));
  g.outputs.assign(names, names + count);
  return g;
}

// --input specs: shapes for the export, and the .npy values among them for the check.
struct Inputs {
  ShapeMap shapes;
  std::map<std::string, Tensor> values;
};

Inputs ParseInputs(const std::vector<std::string>& specs, const std::vector<std::string>& names) {
  Inputs in;
  for (const auto& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      UsageError("--input expects NAME=D1,D2,... or NAME=FILE.npy, got '" + spec + "'");
    }
    const std::string name = spec.substr(0, eq), value = spec.substr(eq + 1);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      throw CliError{HN_ERR_NOT_FOUND, "the model has no input '" + name +
                                           "' (inputs: " + (known.empty() ? "none" : known) + ")"};
    }
    if (EndsWith(value, ".npy")) {
      hn_tensor* raw = nullptr;
      Check(hn_tensor_load_npy(value.c_str(), &raw));
      in.values[name] = Tensor(raw);
      in.shapes[name] = TensorShape(raw);
    } else {
      in.shapes[name] = ParseShapes({spec}).at(name);
    }
  }
  return in;
}

void Export(const Graph& g, const OnnxConvertOptions& o, const Inputs& in) {
  std::vector<const char*> names;
  std::vector<int> ndims, dtypes;
  std::vector<int64_t> dims;
  for (const auto& kv : in.shapes) {
    names.push_back(kv.first.c_str());
    ndims.push_back(static_cast<int>(kv.second.size()));
    dims.insert(dims.end(), kv.second.begin(), kv.second.end());
    int dtype = HN_DTYPE_FLOAT32;  // the values' dtype when a .npy gave them
    auto value = in.values.find(kv.first);
    if (value != in.values.end()) Check(hn_tensor_dtype(value->second.get(), &dtype));
    dtypes.push_back(dtype);
  }
  Check(hn_symbol_export_onnx(g.symbol.get(), g.params.get(), o.output.c_str(), o.opset,
                              o.dynamic_batch ? HN_ONNX_DYNAMIC_BATCH : 0, names.size(),
                              names.data(), ndims.data(), dims.data(), dtypes.data()));
}

// Every graph input's shape (the given ones, the rest inferred); unknown ones are errors.
ShapeMap AllInputShapes(const Graph& g, const ShapeMap& given) {
  auto info = InferShapes(g.symbol.get(), given);
  ShapeMap all;
  for (int group : {HN_SHAPES_ARGUMENTS, HN_SHAPES_AUXILIARY_STATES}) {
    size_t n = 0;
    Check(hn_shape_info_count(info.get(), group, &n));
    for (size_t i = 0; i < n; ++i) {
      const char* name = nullptr;
      const int64_t* d = nullptr;
      int nd = 0;
      Check(hn_shape_info_get(info.get(), group, i, &name, &d, &nd));
      if (std::find(g.inputs.begin(), g.inputs.end(), name) == g.inputs.end()) continue;
      std::vector<int64_t> shape(d, d + nd);
      bool known = !shape.empty() &&
                   std::all_of(shape.begin(), shape.end(), [](int64_t v) { return v > 0; });
      if (!known) {
        throw CliError{HN_ERR_SHAPE, std::string("--check: the shape of input '") + name +
                                         "' cannot be inferred; give it with --input"};
      }
      all[name] = shape;
    }
  }
  return all;
}

// Random values for an input: the data inputs (given shapes) uniform in [0, 1) like images;
// weights of a graph exported without params: auxiliary states (BatchNorm's moving mean and
// variance) in [0.5, 1.5), 1-D weights in [-0.5, 0.5), others uniform with a Xavier scale so the
// outputs stay informative instead of saturating.
Tensor RandomInput(const std::string& name, const std::vector<int64_t>& shape, const Graph& g,
                   const ShapeMap& data, std::mt19937* rng) {
  int64_t size = 1, fan_in = 1;
  for (int64_t d : shape) size *= d;
  for (size_t i = 1; i < shape.size(); ++i) fan_in *= shape[i];
  float lo = 0.f, hi = 1.f;
  if (!data.count(name)) {
    const bool aux = std::find(g.auxiliary_states.begin(), g.auxiliary_states.end(), name) !=
                     g.auxiliary_states.end();
    const float scale = shape.size() < 2 ? 0.5f : std::sqrt(3.f / static_cast<float>(fan_in));
    lo = aux ? 0.5f : -scale;
    hi = aux ? 1.5f : scale;
  }
  std::vector<float> values(static_cast<size_t>(size));
  std::uniform_real_distribution<float> uniform(lo, hi);
  for (float& v : values) v = uniform(*rng);
  hn_tensor* raw = nullptr;
  Check(hn_tensor_create(HN_DTYPE_FLOAT32, shape.data(), static_cast<int>(shape.size()),
                         values.data(), values.size() * sizeof(float), &raw));
  return Tensor(raw);
}

// Runs the graph (imported as a hybridized block: the planned executor) on one set of inputs;
// writes inputs and outputs into `dir` and returns the manifest entry.
nlohmann::ordered_json RunOnce(const Graph& g, const OnnxConvertOptions& o,
                               const std::string& label, const std::string& stem,
                               std::vector<Tensor> inputs, const fs::path& dir) {
  std::vector<const char*> names;
  for (const auto& n : g.inputs) names.push_back(n.c_str());
  hn_block* raw = nullptr;
  Check(hn_block_import(o.symbol_file.c_str(), names.data(), names.size(),
                        o.params_file.empty() ? nullptr : o.params_file.c_str(), &raw));
  Owned<hn_block, hn_block_free> block(raw);
  Check(hn_block_hybridize(block.get(), 1, 0, 0));
  std::vector<hn_tensor*> in;
  for (const auto& t : inputs) in.push_back(t.get());
  std::vector<hn_tensor*> out(g.outputs.size(), nullptr);
  size_t n = 0;
  Check(hn_block_forward(block.get(), in.data(), in.size(), out.size(), out.data(), &n));
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < n; ++i) outputs.emplace_back(out[i]);
  nlohmann::ordered_json run;
  run["label"] = label;
  run["inputs"] = nlohmann::ordered_json::object();
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string path = (dir / (stem + "_in" + std::to_string(i) + ".npy")).string();
    Check(hn_tensor_save_npy(inputs[i].get(), path.c_str()));
    run["inputs"][g.inputs[i]] = path;
  }
  run["outputs"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string path = (dir / (stem + "_out" + std::to_string(i) + ".npy")).string();
    Check(hn_tensor_save_npy(outputs[i].get(), path.c_str()));
    run["outputs"].push_back({{"name", g.outputs[i]}, {"file", path}});
  }
  return run;
}

std::string CheckPython() {
  if (const char* env = std::getenv("HYBRIDNET_ONNX_PYTHON")) return env;
  if (const char* home = std::getenv("HOME")) {
    fs::path venv = fs::path(home) / ".cache/hybridnet/onnx/bin/python";
    if (fs::exists(venv)) return venv.string();
  }
  return "python3";
}

int RunPython(const std::string& python, const std::string& script, const std::string& manifest) {
  std::vector<std::string> args{python, script, manifest};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    return -1;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// A temporary folder removed on scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "hybridnet-onnx-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw CliError{HN_ERR_IO,
                     "cannot create a temporary folder in " + fs::temp_directory_path().string()};
    }
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

int CheckParity(const Graph& g, const OnnxConvertOptions& o, Inputs* given) {
  TempDir dir;
  nlohmann::ordered_json manifest;
  manifest["model"] = fs::absolute(o.output).string();
  manifest["tolerance"] = o.tolerance;
  manifest["runs"] = nlohmann::ordered_json::array();
  // The given shapes, and with a dynamic batch axis (and no given values) the batch doubled.
  std::vector<ShapeMap> batches{given->shapes};
  if (o.dynamic_batch && given->values.empty()) {
    ShapeMap doubled = given->shapes;
    for (auto& kv : doubled) kv.second[0] *= 2;
    batches.push_back(doubled);
  }
  std::mt19937 rng(20240117);
  for (size_t b = 0; b < batches.size(); ++b) {
    ShapeMap shapes = AllInputShapes(g, batches[b]);
    std::vector<Tensor> inputs;
    for (const auto& name : g.inputs) {
      auto it = given->values.find(name);
      inputs.push_back(it != given->values.end()
                           ? std::move(it->second)
                           : RandomInput(name, shapes.at(name), g, batches[b], &rng));
    }
    std::string label;
    for (const auto& kv : batches[b]) {
      label += (label.empty() ? "" : ", ") + kv.first + " " + ShapeText(kv.second);
    }
    manifest["runs"].push_back(RunOnce(g, o, label.empty() ? "inputs" : label,
                                       "run" + std::to_string(b), std::move(inputs), dir.path));
  }
  const std::string manifest_path = (dir.path / "manifest.json").string();
  const std::string script_path = (dir.path / "onnx_check.py").string();
  std::ofstream(manifest_path) << manifest.dump(2);
  std::ofstream(script_path) << kOnnxCheckScript;
  const std::string python = CheckPython();
  std::cout.flush();
  const int rc = RunPython(python, script_path, manifest_path);
  if (rc == kCheckToolsMissing || rc < 0) {
    std::cerr << "hybridnet: --check needs Python with the onnx and onnxruntime packages ('"
              << python << "' " << (rc < 0 ? "could not run" : "lacks them")
              << "); scripts/setup-onnx.sh installs them into ~/.cache/hybridnet/onnx, or set "
                 "HYBRIDNET_ONNX_PYTHON\n";
    return kCheckToolsMissing;
  }
  return rc == 0 ? 0 : 1;
}

// The export, then the parity check when asked; the exit status.
int ConvertToOnnx(const OnnxConvertOptions& o) {
  Graph g = LoadGraph(o);
  Inputs given = ParseInputs(o.inputs, g.inputs);
  Export(g, o, given);
  std::cout << "wrote " << o.output << " (ONNX opset "
            << (o.opset == 0 ? HN_ONNX_OPSET_DEFAULT : o.opset)
            << (o.dynamic_batch ? ", dynamic batch axis" : "") << ")\n";
  return o.check ? CheckParity(g, o, &given) : 0;
}

// --tolerance's value: a number >= 0 (Args::Number reads whole numbers only).
double Tolerance(const Args& args) {
  const std::string text = args.value("--tolerance").value_or("1e-4");
  size_t used = 0;
  double tolerance = -1;
  try {
    tolerance = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !(tolerance >= 0)) {
    UsageError("--tolerance needs a number >= 0, got '" + text + "'");
  }
  return tolerance;
}

}  // namespace

int ConvertOnnx(const Args& args) {
  OnnxConvertOptions o;
  const std::string& in = args.positional(0);
  const size_t comma = in.find(',');
  o.symbol_file = in.substr(0, comma);
  if (comma != std::string::npos) o.params_file = in.substr(comma + 1);
  o.output = args.positional(1);
  o.opset = args.Number("--opset", 0, 0);
  o.dynamic_batch = args.flag("--dynamic-batch");
  o.inputs = args.values("--input");
  o.check = args.flag("--check");
  o.tolerance = Tolerance(args);
  return ConvertToOnnx(o);
}

bool IsOnnxConvert(const Args& args) { return EndsWith(args.positional(1), ".onnx"); }

nlohmann::ordered_json OnnxOpJson(const char* op_name) {
  int exportable = 0;
  size_t num_onnx_ops = 0;
  const char* limits = nullptr;
  Check(hn_op_onnx_info(op_name, &exportable, &num_onnx_ops, &limits));
  std::vector<std::string> onnx_ops;
  for (size_t k = 0; k < num_onnx_ops; ++k) {
    const char* onnx_op = nullptr;
    Check(hn_op_onnx_op(op_name, k, &onnx_op));
    onnx_ops.push_back(onnx_op);
  }
  return {{"exportable", exportable != 0}, {"ops", onnx_ops}, {"limits", limits}};
}

// The ONNX compatibility table of README.md (a CTest compares the two).
void PrintOnnxTable(const nlohmann::ordered_json& ops) {
  size_t exportable = 0;
  for (const auto& j : ops) exportable += j["onnx"]["exportable"].get<bool>() ? 1 : 0;
  std::cout << exportable << " of " << ops.size() << " operators export to ONNX (opsets "
            << HN_ONNX_OPSET_MIN << "-" << HN_ONNX_OPSET_MAX << ").\n\n"
            << "| operator | ONNX operators | does not export |\n| --- | --- | --- |\n";
  for (const auto& j : ops) {
    const auto& onnx = j["onnx"];
    std::string emitted;
    for (const auto& o : onnx["ops"])
      emitted += (emitted.empty() ? "" : ", ") + o.get<std::string>();
    std::string limits = onnx["limits"].get<std::string>();
    if (!onnx["exportable"].get<bool>()) {
      emitted = "-";
      limits = "no ONNX mapping";
    }
    std::cout << "| `" << j["name"].get<std::string>() << "` | " << emitted << " | " << limits
              << " |\n";
  }
}

}  // namespace hybridnet_cli
