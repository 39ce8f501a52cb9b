// hybridnet: command-line tool for MXNet-format models and files, written against the C API
// only (hybridnet/c_api.h), as any binding would be.
//
//   hybridnet info FILE [--shape NAME=D1,D2,...]... [--json]
//   hybridnet convert IN OUT
//   hybridnet convert SYMBOL.json[,PARAMS] OUT.onnx [--opset N] [--dynamic-batch]
//                     [--input NAME=D1,D2,...|NAME=FILE.npy]... [--check] [--tolerance T]
//   hybridnet ops [--json | --onnx]
//   hybridnet run PREFIX EPOCH --input NAME=FILE.npy [...] [--output FILE.npy] [--outputs DIR]
//                 [--eager]
//   hybridnet bench PREFIX EPOCH --shape NAME=D1,D2,... [...] [-n 1000] [--threads N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "hybridnet/c_api.h"
#include "onnx_convert.h"

using nlohmann::ordered_json;
using namespace hybridnet_cli;  // NOLINT

namespace {

constexpr const char* kUsage =
    "usage: hybridnet [-v|-vv] COMMAND ...\n"
    "  hybridnet info FILE [--shape NAME=D1,D2,...]... [--json]\n"
    "      symbol JSON: op counts, arguments, auxiliary states, outputs, inferred shapes\n"
    "      .params/.nd: names, dtypes, shapes, first values;  .npy: dtype, shape, values\n"
    "  hybridnet convert IN OUT\n"
    "      symbol JSON -> MXNet 1.9 JSON;  .params/.nd -> V2 records\n"
    "  hybridnet convert SYMBOL.json[,PARAMS] OUT.onnx [--opset N] [--dynamic-batch]\n"
    "                    [--input NAME=D1,D2,...|NAME=FILE.npy]... [--check] [--tolerance T]\n"
    "      ONNX (opset 13-21, default 17; without PARAMS the weights are graph inputs);\n"
    "      --check runs the model here and in ONNX Runtime on the same inputs (random, or\n"
    "      the .npy given) and prints the difference per output (and onnx.checker's verdict)\n"
    "  hybridnet ops [--json | --onnx]\n"
    "      every registered operator with its attributes; --onnx: how each exports to ONNX\n"
    "  hybridnet run PREFIX EPOCH --input NAME=FILE.npy [...] [--output FILE.npy]\n"
    "                [--outputs DIR] [--eager]\n"
    "      runs PREFIX-symbol.json + PREFIX-EEEE.params on .npy inputs (inputs not given are\n"
    "      zeros); --output writes the first output, --outputs DIR every output as\n"
    "      DIR/<output name>.npy; --eager runs op by op instead of the planned graph\n"
    "  hybridnet bench PREFIX EPOCH --shape NAME=D1,D2,... [...] [-n 1000] [--threads N]\n"
    "      median forward time eager vs hybridized on random inputs, and their ratio\n"
    "  -v / -vv: log the library's info / debug messages to stderr\n";

// Owning handles.
using TensorList = Owned<hn_tensor_list, hn_tensor_list_free>;
using SymbolPtr = Owned<hn_symbol, hn_symbol_free>;
using ShapeInfo = Owned<hn_shape_info, hn_shape_info_free>;
using Block = Owned<hn_block, hn_block_free>;
using Model = Owned<hn_model, hn_model_free>;
using Predictor = Owned<hn_predictor, hn_predictor_free>;

struct CString {
  char* s = nullptr;
  ~CString() { hn_string_free(s); }
};

std::vector<std::string> Names(const char* const* names, size_t count) {
  return std::vector<std::string>(names, names + count);
}

std::string TensorDType(const hn_tensor* t) {
  int dtype = 0;
  Check(hn_tensor_dtype(t, &dtype));
  const char* name = hn_dtype_name(dtype);
  return name != nullptr ? name : "unknown";
}

// The first `max_values` elements as floats (any dtype, converted with the Cast op).
std::vector<float> FirstValues(hn_tensor* t, size_t max_values) {
  int64_t size = 0;
  Check(hn_tensor_size(t, &size));
  if (size == 0) return {};
  Tensor converted;
  hn_tensor* source = t;
  if (TensorDType(t) != "float32") {
    const char* key = "dtype";
    const char* value = "float32";
    hn_tensor* out = nullptr;
    size_t n = 0;
    Check(hn_op_invoke("Cast", &t, 1, &key, &value, 1, 1, &out, &n));
    converted.reset(out);
    source = out;
  }
  std::vector<float> all(static_cast<size_t>(size));
  Check(hn_tensor_copy_to(source, all.data(), all.size() * sizeof(float)));
  all.resize(std::min(all.size(), max_values));
  return all;
}

enum class FileKind { kSymbol, kParams, kNpy };

FileKind DetectKind(const std::string& path, const std::string& bytes) {
  if (bytes.size() >= 6 && bytes.compare(0, 6, "\x93NUMPY") == 0) return FileKind::kNpy;
  auto first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && bytes[first] == '{') return FileKind::kSymbol;
  if (bytes.size() >= 8 && static_cast<unsigned char>(bytes[0]) == 0x12 &&
      static_cast<unsigned char>(bytes[1]) == 0x01) {
    return FileKind::kParams;
  }
  throw CliError{HN_ERR_FORMAT, "'" + path +
                                    "' is neither symbol JSON, an MXNet NDArray list (.params/.nd) "
                                    "nor .npy"};
}

// ---------------------------------------------------------------------------------------------
// info

ordered_json SymbolInfo(const std::string& path, const std::string& text,
                        const std::map<std::string, std::vector<int64_t>>& shapes) {
  int version = 0, legacy = 0;
  Check(hn_symbol_inspect_json(text.c_str(), &version, &legacy));
  hn_symbol* raw = nullptr;
  Check(hn_symbol_load(path.c_str(), &raw));
  SymbolPtr sym(raw);
  size_t num_nodes = 0, num_ops = 0;
  Check(hn_symbol_num_nodes(sym.get(), &num_nodes));
  std::map<std::string, int> op_counts;
  for (size_t i = 0; i < num_nodes; ++i) {
    const char* op = nullptr;
    Check(hn_symbol_node(sym.get(), i, &op, nullptr));
    if (std::strcmp(op, "null") == 0) continue;
    ++op_counts[op];
    ++num_ops;
  }
  const char* const* names = nullptr;
  size_t count = 0;
  ordered_json j;
  j["file"] = path;
  j["kind"] = "symbol";
  j["mxnet_version"] = version;
  j["legacy_format"] = legacy != 0;
  j["nodes"] = num_nodes;
  j["ops"] = num_ops;
  j["op_counts"] = op_counts;
  Check(hn_symbol_list_arguments(sym.get(), &names, &count));
  j["arguments"] = Names(names, count);
  Check(hn_symbol_list_auxiliary_states(sym.get(), &names, &count));
  j["auxiliary_states"] = Names(names, count);
  Check(hn_symbol_list_outputs(sym.get(), &names, &count));
  j["outputs"] = Names(names, count);
  if (!shapes.empty()) {
    ShapeInfo info = InferShapes(sym.get(), shapes);
    ordered_json inferred;
    const std::pair<const char*, int> groups[] = {{"arguments", HN_SHAPES_ARGUMENTS},
                                                  {"auxiliary_states", HN_SHAPES_AUXILIARY_STATES},
                                                  {"outputs", HN_SHAPES_OUTPUTS}};
    for (const auto& g : groups) {
      size_t n = 0;
      Check(hn_shape_info_count(info.get(), g.second, &n));
      ordered_json group = ordered_json::object();
      for (size_t i = 0; i < n; ++i) {
        const char* name = nullptr;
        const int64_t* d = nullptr;
        int nd = 0;
        Check(hn_shape_info_get(info.get(), g.second, i, &name, &d, &nd));
        group[name] = std::vector<int64_t>(d, d + nd);
      }
      inferred[g.first] = group;
    }
    int complete = 0;
    Check(hn_shape_info_complete(info.get(), &complete));
    inferred["complete"] = complete != 0;
    j["inferred_shapes"] = inferred;
  }
  return j;
}

ordered_json ArrayJson(hn_tensor* t, size_t max_values) {
  ordered_json j;
  j["dtype"] = TensorDType(t);
  j["shape"] = TensorShape(t);
  j["first_values"] = FirstValues(t, max_values);
  return j;
}

ordered_json ParamsInfo(const std::string& path) {
  hn_tensor_list* raw = nullptr;
  Check(hn_tensor_list_load(path.c_str(), &raw));
  TensorList list(raw);
  size_t count = 0;
  Check(hn_tensor_list_size(list.get(), &count));
  ordered_json j;
  j["file"] = path;
  j["kind"] = "ndarray_list";
  j["count"] = count;
  bool named = false;
  int64_t total = 0;
  ordered_json arrays = ordered_json::array();
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    int version = 0;
    hn_tensor* t = nullptr;
    Check(hn_tensor_list_name(list.get(), i, &name));
    Check(hn_tensor_list_record_version(list.get(), i, &version));
    Check(hn_tensor_list_get(list.get(), i, &t));
    Tensor tensor(t);
    named = named || name[0] != '\0';
    ordered_json a;
    if (tensor) {
      a = ArrayJson(tensor.get(), 4);
      int64_t size = 0;
      Check(hn_tensor_size(tensor.get(), &size));
      total += size;
    } else {
      a["none"] = true;
    }
    a["name"] = name;
    a["record_version"] = version;
    arrays.push_back(a);
  }
  j["named"] = named;
  j["total_elements"] = total;
  j["arrays"] = arrays;
  return j;
}

std::string Join(const ordered_json& list) {
  std::string s;
  for (const auto& v : list) s += (s.empty() ? "" : ", ") + v.get<std::string>();
  return s;
}

void PrintText(const ordered_json& j) {
  std::ostream& os = std::cout;
  os << j["file"].get<std::string>() << "\n";
  if (j["kind"] == "symbol") {
    os << "  symbol JSON, mxnet_version " << j["mxnet_version"]
       << (j["legacy_format"].get<bool>() ? " (legacy format, upgraded on load)" : "") << "\n";
    os << "  " << j["nodes"] << " nodes, " << j["ops"] << " operators:";
    for (const auto& kv : j["op_counts"].items()) os << " " << kv.key() << "x" << kv.value();
    os << "\n  arguments (" << j["arguments"].size() << "): " << Join(j["arguments"]) << "\n";
    os << "  auxiliary states (" << j["auxiliary_states"].size()
       << "): " << Join(j["auxiliary_states"]) << "\n";
    os << "  outputs: " << Join(j["outputs"]) << "\n";
    if (j.contains("inferred_shapes")) {
      const auto& inf = j["inferred_shapes"];
      os << "  inferred shapes" << (inf["complete"].get<bool>() ? "" : " (partial: 0 = unknown)")
         << ":\n";
      for (const char* group : {"arguments", "auxiliary_states", "outputs"}) {
        for (const auto& kv : inf[group].items())
          os << "    " << kv.key() << " " << ShapeText(kv.value().get<std::vector<int64_t>>()) << "\n";
      }
    }
  } else if (j["kind"] == "ndarray_list") {
    os << "  NDArray list, " << j["count"] << " arrays, "
       << (j["named"].get<bool>() ? "named" : "unnamed") << ", " << j["total_elements"]
       << " elements\n";
    for (const auto& a : j["arrays"]) {
      os << "    " << (a["name"].get<std::string>().empty() ? "-" : a["name"].get<std::string>());
      if (a.contains("none")) {
        os << " none\n";
        continue;
      }
      os << " " << a["dtype"].get<std::string>() << " "
         << ShapeText(a["shape"].get<std::vector<int64_t>>()) << " V" << a["record_version"] << " [";
      bool first = true;
      for (const auto& v : a["first_values"]) {
        os << (first ? "" : ", ") << v.get<float>();
        first = false;
      }
      int64_t size = 1;
      for (const auto& d : a["shape"]) size *= d.get<int64_t>();
      os << (static_cast<int64_t>(a["first_values"].size()) < size ? ", ...]" : "]") << "\n";
    }
  } else {
    os << "  .npy " << j["dtype"].get<std::string>() << " "
       << ShapeText(j["shape"].get<std::vector<int64_t>>()) << "\n";
    os << "  " << j["text"].get<std::string>() << "\n";
  }
}

int Info(const std::vector<std::string>& args) {
  std::string path;
  std::vector<std::string> shape_specs;
  bool as_json = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") {
      as_json = true;
    } else if (args[i] == "--shape") {
      if (i + 1 >= args.size()) UsageError("--shape needs NAME=D1,D2,...");
      shape_specs.push_back(args[++i]);
    } else if (path.empty()) {
      path = args[i];
    } else {
      UsageError("unexpected argument '" + args[i] + "'");
    }
  }
  if (path.empty()) UsageError("info needs a FILE");
  std::string bytes = ReadFile(path);
  ordered_json j;
  switch (DetectKind(path, bytes)) {
    case FileKind::kSymbol: j = SymbolInfo(path, bytes, ParseShapes(shape_specs)); break;
    case FileKind::kParams: j = ParamsInfo(path); break;
    case FileKind::kNpy: {
      hn_tensor* raw = nullptr;
      Check(hn_tensor_load_npy(path.c_str(), &raw));
      Tensor t(raw);
      j = ArrayJson(t.get(), 8);
      j["file"] = path;
      j["kind"] = "npy";
      CString text;
      Check(hn_tensor_to_string(t.get(), &text.s));
      j["text"] = text.s;
      break;
    }
  }
  if (as_json) {
    std::cout << j.dump(2) << "\n";
  } else {
    PrintText(j);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// convert, ops

int Convert(const std::vector<std::string>& args) {
  if (IsOnnxConvert(args)) return ConvertOnnx(args);
  if (args.size() != 2) UsageError("convert needs IN and OUT");
  std::string bytes = ReadFile(args[0]);
  switch (DetectKind(args[0], bytes)) {
    case FileKind::kSymbol: {
      hn_symbol* raw = nullptr;
      Check(hn_symbol_load(args[0].c_str(), &raw));
      SymbolPtr sym(raw);
      Check(hn_symbol_save(sym.get(), args[1].c_str()));
      break;
    }
    case FileKind::kParams: {
      hn_tensor_list* raw = nullptr;
      Check(hn_tensor_list_load(args[0].c_str(), &raw));
      TensorList list(raw);
      Check(hn_tensor_list_save(list.get(), args[1].c_str()));
      break;
    }
    case FileKind::kNpy: UsageError("convert takes symbol JSON or .params/.nd files");
  }
  std::cout << "wrote " << args[1] << "\n";
  return 0;
}

int Ops(const std::vector<std::string>& args) {
  bool as_json = std::find(args.begin(), args.end(), "--json") != args.end();
  bool as_onnx_table = std::find(args.begin(), args.end(), "--onnx") != args.end();
  size_t count = 0;
  Check(hn_op_count(&count));
  ordered_json list = ordered_json::array();
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    const char* description = nullptr;
    size_t num_attrs = 0, num_aliases = 0;
    Check(hn_op_name(i, &name));
    Check(hn_op_info(name, &description, &num_attrs, &num_aliases));
    ordered_json j;
    j["name"] = name;
    std::vector<std::string> aliases;
    for (size_t a = 0; a < num_aliases; ++a) {
      const char* alias = nullptr;
      Check(hn_op_alias(name, a, &alias));
      aliases.push_back(alias);
    }
    j["aliases"] = aliases;
    j["description"] = description;
    ordered_json fields = ordered_json::array();
    for (size_t a = 0; a < num_attrs; ++a) {
      const char *key, *type, *def, *desc;
      int required = 0;
      Check(hn_op_attr(name, a, &key, &type, &def, &required, &desc));
      fields.push_back({{"key", key}, {"type", type}, {"required", required != 0},
                        {"default", def}, {"description", desc}});
    }
    j["attributes"] = fields;
    j["onnx"] = OnnxOpJson(name);
    list.push_back(j);
  }
  if (as_onnx_table) {
    PrintOnnxTable(list);
    return 0;
  }
  if (as_json) {
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  for (const auto& j : list) {
    std::cout << j["name"].get<std::string>() << " - " << j["description"].get<std::string>() << "\n";
    for (const auto& f : j["attributes"]) {
      std::cout << "    " << f["key"].get<std::string>() << " : " << f["type"].get<std::string>()
                << (f["required"].get<bool>() ? ", required"
                                              : ", default " + f["default"].get<std::string>())
                << "\n";
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// run, bench: shared model set-up

std::string ParamsFile(const std::string& prefix, int epoch) {
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%04d.params", epoch);
  return prefix + suffix;
}

int ParseEpoch(const std::string& text) {
  size_t used = 0;
  int epoch = -1;
  try {
    epoch = std::stoi(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || epoch < 0) UsageError("EPOCH must be a number >= 0, got '" + text + "'");
  return epoch;
}

struct LoadedModel {
  Model model;
  std::vector<std::string> inputs, outputs;
};

LoadedModel LoadModel(const std::string& prefix, int epoch) {
  LoadedModel m;
  hn_model* raw = nullptr;
  Check(hn_model_load(prefix.c_str(), epoch, &raw));
  m.model.reset(raw);
  const char* const* names = nullptr;
  size_t count = 0;
  Check(hn_model_input_names(m.model.get(), &names, &count));
  m.inputs = Names(names, count);
  Check(hn_model_output_names(m.model.get(), &names, &count));
  m.outputs = Names(names, count);
  return m;
}

// Every model input in order: the given tensors, zeros of the inferred shape for the others.
std::vector<Tensor> CompleteInputs(const LoadedModel& m, std::map<std::string, Tensor>* given) {
  for (const auto& kv : *given) {
    if (std::find(m.inputs.begin(), m.inputs.end(), kv.first) == m.inputs.end()) {
      std::string known;
      for (const auto& n : m.inputs) known += (known.empty() ? "" : ", ") + n;
      throw CliError{HN_ERR_NOT_FOUND, "the model has no input '" + kv.first + "' (inputs: " + known + ")"};
    }
  }
  std::vector<Tensor> inputs;
  bool missing = false;
  for (const auto& name : m.inputs) missing = missing || !given->count(name);
  ShapeInfo info;
  if (missing) {
    hn_symbol* raw = nullptr;
    Check(hn_model_symbol(m.model.get(), &raw));
    SymbolPtr sym(raw);
    ShapeMap known;
    for (auto& kv : *given) known[kv.first] = TensorShape(kv.second.get());
    // The weights' shapes come from the params file through the model's own inference.
    info = InferShapes(sym.get(), known);
  }
  for (const auto& name : m.inputs) {
    auto it = given->find(name);
    if (it != given->end()) {
      inputs.push_back(std::move(it->second));
      continue;
    }
    size_t n = 0;
    Check(hn_shape_info_count(info.get(), HN_SHAPES_ARGUMENTS, &n));
    std::vector<int64_t> shape;
    for (size_t i = 0; i < n; ++i) {
      const char* arg = nullptr;
      const int64_t* d = nullptr;
      int nd = 0;
      Check(hn_shape_info_get(info.get(), HN_SHAPES_ARGUMENTS, i, &arg, &d, &nd));
      if (name == arg) shape.assign(d, d + nd);
    }
    bool known = !shape.empty() && std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d > 0; });
    if (!known) {
      throw CliError{HN_ERR_INVALID_ARGUMENT,
                     "input '" + name + "' was not given and its shape cannot be inferred; pass it"};
    }
    hn_tensor* zeros = nullptr;
    Check(hn_tensor_create(HN_DTYPE_FLOAT32, shape.data(), static_cast<int>(shape.size()), nullptr, 0,
                           &zeros));
    inputs.emplace_back(zeros);
  }
  given->clear();
  return inputs;
}

// The export imported as a block taking every model input (eager unless hybridized).
Block ImportBlock(const std::string& prefix, int epoch, const LoadedModel& m) {
  std::vector<const char*> names;
  for (const auto& n : m.inputs) names.push_back(n.c_str());
  std::string symbol_file = prefix + "-symbol.json";
  std::string params_file = ParamsFile(prefix, epoch);
  hn_block* raw = nullptr;
  Check(hn_block_import(symbol_file.c_str(), names.data(), names.size(), params_file.c_str(), &raw));
  return Block(raw);
}

std::vector<Tensor> ForwardBlock(hn_block* block, const std::vector<Tensor>& inputs, size_t num_outputs) {
  std::vector<hn_tensor*> in;
  for (const auto& t : inputs) in.push_back(t.get());
  std::vector<hn_tensor*> out(num_outputs, nullptr);
  size_t n = 0;
  Check(hn_block_forward(block, in.data(), in.size(), out.size(), out.data(), &n));
  std::vector<Tensor> result;
  for (size_t i = 0; i < n; ++i) result.emplace_back(out[i]);
  return result;
}

std::vector<Tensor> RunPredictor(hn_predictor* pred, const std::vector<Tensor>& inputs,
                                 size_t num_outputs) {
  std::vector<hn_tensor*> in;
  for (const auto& t : inputs) in.push_back(t.get());
  std::vector<hn_tensor*> out(num_outputs, nullptr);
  size_t n = 0;
  Check(hn_predictor_run(pred, in.data(), in.size(), out.size(), out.data(), &n));
  std::vector<Tensor> result;
  for (size_t i = 0; i < n; ++i) result.emplace_back(out[i]);
  return result;
}

std::string SafeFileName(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (c == '/' || c == '\\' || c == ':') c = '_';
  return s;
}

int Run(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  std::vector<std::string> input_specs;
  std::string output, outputs_dir;
  bool eager = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--input") {
      if (i + 1 >= args.size()) UsageError("--input needs NAME=FILE.npy");
      input_specs.push_back(args[++i]);
    } else if (args[i] == "--output") {
      if (i + 1 >= args.size()) UsageError("--output needs FILE.npy");
      output = args[++i];
    } else if (args[i] == "--outputs") {
      if (i + 1 >= args.size()) UsageError("--outputs needs DIR");
      outputs_dir = args[++i];
    } else if (args[i] == "--eager") {
      eager = true;
    } else if (!args[i].empty() && args[i][0] == '-') {
      UsageError("unknown option '" + args[i] + "'");
    } else {
      positional.push_back(args[i]);
    }
  }
  if (positional.size() != 2) UsageError("run needs PREFIX and EPOCH");
  if (input_specs.empty()) UsageError("run needs at least one --input NAME=FILE.npy");
  const std::string& prefix = positional[0];
  int epoch = ParseEpoch(positional[1]);
  LoadedModel m = LoadModel(prefix, epoch);
  std::map<std::string, Tensor> given;
  for (const auto& spec : input_specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) UsageError("--input expects NAME=FILE.npy, got '" + spec + "'");
    hn_tensor* raw = nullptr;
    Check(hn_tensor_load_npy(spec.substr(eq + 1).c_str(), &raw));
    given[spec.substr(0, eq)] = Tensor(raw);
  }
  std::vector<Tensor> inputs = CompleteInputs(m, &given);
  std::vector<Tensor> results;
  if (eager) {
    Block block = ImportBlock(prefix, epoch, m);
    results = ForwardBlock(block.get(), inputs, m.outputs.size());
  } else {
    hn_predictor* raw = nullptr;
    Check(hn_predictor_create(m.model.get(), &raw));
    Predictor pred(raw);
    results = RunPredictor(pred.get(), inputs, m.outputs.size());
  }
  std::cout << prefix << " epoch " << epoch << " (" << (eager ? "eager" : "hybridized") << ")\n";
  for (size_t i = 0; i < results.size(); ++i) {
    std::vector<float> first = FirstValues(results[i].get(), 6);
    int64_t size = 0;
    Check(hn_tensor_size(results[i].get(), &size));
    std::cout << "  " << m.outputs[i] << " " << TensorDType(results[i].get()) << " "
              << ShapeText(TensorShape(results[i].get())) << " [";
    for (size_t k = 0; k < first.size(); ++k) std::cout << (k ? ", " : "") << first[k];
    std::cout << (static_cast<int64_t>(first.size()) < size ? ", ...]" : "]") << "\n";
  }
  if (!output.empty()) {
    Check(hn_tensor_save_npy(results.at(0).get(), output.c_str()));
    std::cout << "wrote " << output << "\n";
  }
  if (!outputs_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(outputs_dir, ec);
    if (ec) throw CliError{HN_ERR_IO, "cannot create '" + outputs_dir + "': " + ec.message()};
    for (size_t i = 0; i < results.size(); ++i) {
      std::string path = outputs_dir + "/" + SafeFileName(m.outputs[i]) + ".npy";
      Check(hn_tensor_save_npy(results[i].get(), path.c_str()));
      std::cout << "wrote " << path << "\n";
    }
  }
  return 0;
}

// Median of `n` timed calls of `fn` in microseconds, after `warmup` untimed ones.
template <typename Fn>
double MedianMicros(int n, int warmup, Fn fn) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> times;
  times.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    auto end = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  std::nth_element(times.begin(), times.begin() + n / 2, times.end());
  return times[static_cast<size_t>(n / 2)];
}

float MaxDiff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  float worst = 0.f;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    std::vector<float> x = FirstValues(a[i].get(), SIZE_MAX), y = FirstValues(b[i].get(), SIZE_MAX);
    if (x.size() != y.size()) return INFINITY;
    for (size_t k = 0; k < x.size(); ++k) worst = std::max(worst, std::abs(x[k] - y[k]));
  }
  return worst;
}

int Bench(const std::vector<std::string>& args) {
  std::vector<std::string> positional, shape_specs;
  int n = 1000, threads = 1;
  auto number = [](const std::string& option, const std::string& text) {
    size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(text, &used);
    } catch (const std::exception&) {
    }
    if (used != text.size() || v < 1) UsageError(option + " needs a number >= 1, got '" + text + "'");
    return v;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--shape") {
      if (i + 1 >= args.size()) UsageError("--shape needs NAME=D1,D2,...");
      shape_specs.push_back(args[++i]);
    } else if (args[i] == "-n") {
      if (i + 1 >= args.size()) UsageError("-n needs a count");
      n = number("-n", args[++i]);
    } else if (args[i] == "--threads") {
      if (i + 1 >= args.size()) UsageError("--threads needs a count");
      threads = number("--threads", args[++i]);
    } else if (!args[i].empty() && args[i][0] == '-') {
      UsageError("unknown option '" + args[i] + "'");
    } else {
      positional.push_back(args[i]);
    }
  }
  if (positional.size() != 2) UsageError("bench needs PREFIX and EPOCH");
  if (shape_specs.empty()) UsageError("bench needs --shape NAME=D1,D2,... for the model's inputs");
  const std::string& prefix = positional[0];
  int epoch = ParseEpoch(positional[1]);
  Check(hn_set_num_threads(threads));
  LoadedModel m = LoadModel(prefix, epoch);

  // Random inputs in [-1, 1) from a fixed-seed generator (same numbers on every run).
  uint64_t state = 42;
  std::map<std::string, Tensor> given;
  for (const auto& kv : ParseShapes(shape_specs)) {
    int64_t size = 1;
    for (int64_t d : kv.second) size *= d;
    std::vector<float> values(static_cast<size_t>(size));
    for (float& v : values) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      v = static_cast<float>(state >> 40) / static_cast<float>(1 << 24) * 2.f - 1.f;
    }
    hn_tensor* raw = nullptr;
    Check(hn_tensor_create(HN_DTYPE_FLOAT32, kv.second.data(), static_cast<int>(kv.second.size()),
                           values.data(), values.size() * sizeof(float), &raw));
    given[kv.first] = Tensor(raw);
  }
  std::string shapes_text;
  for (const auto& kv : given)
    shapes_text += (shapes_text.empty() ? "" : ", ") + kv.first + " " + ShapeText(TensorShape(kv.second.get()));
  std::vector<Tensor> inputs = CompleteInputs(m, &given);
  size_t num_out = m.outputs.size();
  int warmup = std::max(3, n / 20);

  Block eager_block = ImportBlock(prefix, epoch, m);
  Block hybrid_block = ImportBlock(prefix, epoch, m);
  Check(hn_block_hybridize(hybrid_block.get(), 1, 1, 0));
  hn_predictor* raw_pred = nullptr;
  Check(hn_predictor_create(m.model.get(), &raw_pred));
  Predictor pred(raw_pred);
  std::vector<hn_tensor*> in;
  for (const auto& t : inputs) in.push_back(t.get());
  for (size_t i = 0; i < in.size(); ++i) Check(hn_predictor_set_input_tensor(pred.get(), m.inputs[i].c_str(), in[i]));

  std::vector<Tensor> eager_out = ForwardBlock(eager_block.get(), inputs, num_out);
  std::vector<Tensor> hybrid_out = ForwardBlock(hybrid_block.get(), inputs, num_out);
  float diff = MaxDiff(eager_out, hybrid_out);

  std::vector<hn_tensor*> out(num_out, nullptr);
  auto forward_block = [&](hn_block* b) {
    size_t got = 0;
    Check(hn_block_forward(b, in.data(), in.size(), out.size(), out.data(), &got));
    for (size_t i = 0; i < got; ++i) hn_tensor_free(out[i]);
  };
  double eager_us = MedianMicros(n, warmup, [&] { forward_block(eager_block.get()); });
  double hybrid_us = MedianMicros(n, warmup, [&] { forward_block(hybrid_block.get()); });
  double pred_us = MedianMicros(n, warmup, [&] { Check(hn_predictor_forward(pred.get())); });

  int threads_in_use = 0;
  Check(hn_get_num_threads(&threads_in_use));
  std::printf("%s epoch %d: %s; %d forwards each (after %d warm-up); %d BLAS thread%s\n",
              prefix.c_str(), epoch, shapes_text.c_str(), n, warmup, threads_in_use,
              threads_in_use == 1 ? "" : "s");
  std::printf("  %-36s %10.1f us median\n", "eager (op by op)", eager_us);
  std::printf("  %-36s %10.1f us median\n", "hybridized (cached graph)", hybrid_us);
  std::printf("  %-36s %10.1f us median\n", "predictor (planned graph, no copies)", pred_us);
  std::printf("  eager / hybridized: %.2fx\n", hybrid_us > 0 ? eager_us / hybrid_us : 0.0);
  std::printf("  max |eager - hybridized| over the outputs: %g\n", static_cast<double>(diff));
  return 0;
}

void LogToStderr(int level, const char* message, void*) {
  static const char* const kLevels[] = {"debug", "info", "warning", "error"};
  std::fprintf(stderr, "hybridnet [%s] %s\n", kLevels[level >= 0 && level <= 3 ? level : 3], message);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  int verbosity = 0;
  while (!args.empty() && (args[0] == "-v" || args[0] == "-vv")) {
    verbosity = std::max(verbosity, args[0] == "-vv" ? 2 : 1);
    args.erase(args.begin());
  }
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  if (hn_abi_version() != HN_ABI_VERSION) {
    std::cerr << "hybridnet: libhybridnet ABI " << hn_abi_version() << " does not match the "
              << "header's " << HN_ABI_VERSION << "\n";
    return 1;
  }
  if (verbosity > 0) {
    hn_set_log_callback(LogToStderr, nullptr, verbosity > 1 ? HN_LOG_DEBUG : HN_LOG_INFO);
  }
  std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "info") return Info(args);
    if (command == "convert") return Convert(args);
    if (command == "ops") return Ops(args);
    if (command == "run") return Run(args);
    if (command == "bench") return Bench(args);
    if (command == "version" || command == "--version") {
      std::cout << "hybridnet " << hn_version() << " (ABI " << hn_abi_version() << ")\n";
      return 0;
    }
    std::cerr << "hybridnet: unknown command '" << command << "'\n" << kUsage;
    return 2;
  } catch (const CliError& e) {
    if (e.code == 0) {
      std::cerr << "hybridnet: " << e.message << "\n" << kUsage;
      return 2;
    }
    std::cerr << "hybridnet: " << hn_status_name(e.code) << ": " << e.message << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "hybridnet: error: " << e.what() << "\n";
    return 1;
  }
}
