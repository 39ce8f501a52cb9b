// The option table's parser and help, and the helpers the subcommands share.
#include "cli.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hybridnet_cli {

void Check(int status) {
  if (status != HN_OK) throw CliError{status, hn_last_error()};
}

void UsageError(const std::string& message) { throw CliError{0, message}; }

// ---- the command table ------------------------------------------------------------------------

std::optional<std::string> Args::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::values(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>() : it->second;
}

int Args::Number(const std::string& name, int fallback, int min) const {
  std::optional<std::string> text = value(name);
  if (!text) return fallback;
  size_t used = 0;
  long long v = static_cast<long long>(min) - 1;
  try {
    v = std::stoll(*text, &used);
  } catch (const std::exception&) {
  }
  if (used != text->size() || v < min || v > 1000000000) {
    UsageError(name + " needs a number >= " + std::to_string(min) + ", got '" + *text + "'");
  }
  return static_cast<int>(v);
}

namespace {

std::string OptionText(const Option& o) {
  return o.value_name ? std::string(o.name) + " " + o.value_name : std::string(o.name);
}

// "PREFIX and EPOCH", "FILE"
std::string JoinNames(const std::vector<Positional>& positionals) {
  std::string s;
  for (size_t i = 0; i < positionals.size(); ++i) {
    if (i > 0) s += i + 1 == positionals.size() ? " and " : ", ";
    s += positionals[i].name;
  }
  return s;
}

}  // namespace

Args Command::Parse(const std::vector<std::string>& argv) const {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (word.size() < 2 || word[0] != '-') {
      if (args.positional_.size() == positionals.size()) {
        UsageError(std::string(name) + ": unexpected argument '" + word + "'");
      }
      args.positional_.push_back(word);
      continue;
    }
    // --name=value or --name value
    size_t eq = word.find('=');
    std::string key = word.substr(0, eq);
    auto option = std::find_if(options.begin(), options.end(),
                               [&](const Option& o) { return key == o.name; });
    if (option == options.end()) UsageError(std::string(name) + ": unknown option '" + key + "'");
    std::vector<std::string>& slot = args.values_[key];
    if (!option->repeatable && !slot.empty()) UsageError(key + " is given twice");
    if (option->value_name == nullptr) {
      if (eq != std::string::npos) UsageError(key + " takes no value");
      slot.push_back("");
    } else if (eq != std::string::npos) {
      slot.push_back(word.substr(eq + 1));
    } else if (i + 1 < argv.size()) {
      slot.push_back(argv[++i]);
    } else {
      UsageError(key + " needs " + option->value_name);
    }
  }
  if (args.positional_.size() != positionals.size()) {
    UsageError(std::string(name) + " needs " + JoinNames(positionals));
  }
  for (const Option& o : options) {
    if (o.required && !args.values_.count(o.name)) {
      UsageError(std::string(name) + " needs " + (o.repeatable ? "at least one " : "") +
                 OptionText(o));
    }
  }
  return args;
}

std::string Command::UsageLine() const {
  std::string s = std::string("hybridnet ") + name;
  for (const Positional& p : positionals) s += std::string(" ") + p.name;
  for (const Option& o : options) {
    std::string text = OptionText(o);
    if (o.required) {
      s += " " + text + (o.repeatable ? " [...]" : "");
    } else {
      s += " [" + text + "]" + (o.repeatable ? "..." : "");
    }
  }
  return s;
}

std::string Command::Help() const {
  std::string s = "usage: " + UsageLine() + "\n  " + summary + "\n";
  if (details[0] != '\0') s += std::string("\n") + details + "\n";
  if (!positionals.empty() || !options.empty()) s += "\n";
  auto row = [&s](const std::string& left, const char* help) {
    char line[256];
    std::snprintf(line, sizeof(line), "  %-28s %s\n", left.c_str(), help);
    s += line;
  };
  for (const Positional& p : positionals) row(p.name, p.help);
  for (const Option& o : options) {
    row(OptionText(o), o.help);
  }
  return s;
}

// ---- shared helpers ---------------------------------------------------------------------------

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) throw CliError{HN_ERR_IO, "cannot open '" + path + "'"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

FileKind DetectKind(const std::string& path, const std::string& bytes) {
  if (bytes.size() >= 6 && bytes.compare(0, 6, "\x93NUMPY") == 0) return FileKind::kNpy;
  auto first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && bytes[first] == '{') return FileKind::kSymbol;
  if (bytes.size() >= 8 && static_cast<unsigned char>(bytes[0]) == 0x12 &&
      static_cast<unsigned char>(bytes[1]) == 0x01) {
    return FileKind::kParams;
  }
  throw CliError{HN_ERR_FORMAT, "'" + path +
                                    "' is neither symbol JSON, an MXNet NDArray list "
                                    "(.params/.nd) nor .npy"};
}

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

std::vector<int64_t> TensorShape(const hn_tensor* t) {
  const int64_t* dims = nullptr;
  int ndim = 0;
  Check(hn_tensor_shape(t, &dims, &ndim));
  return std::vector<int64_t>(dims, dims + ndim);
}

std::string TensorDType(const hn_tensor* t) {
  int dtype = 0;
  Check(hn_tensor_dtype(t, &dtype));
  const char* name = hn_dtype_name(dtype);
  return name != nullptr ? name : "unknown";
}

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

std::string TensorSummary(hn_tensor* t, size_t max_values) {
  std::vector<float> first = FirstValues(t, max_values);
  int64_t size = 0;
  Check(hn_tensor_size(t, &size));
  std::ostringstream os;
  os << TensorDType(t) << " " << ShapeText(TensorShape(t)) << " [";
  for (size_t k = 0; k < first.size(); ++k) os << (k ? ", " : "") << first[k];
  os << (static_cast<int64_t>(first.size()) < size ? ", ...]" : "]");
  return os.str();
}

int ComputeDType(const std::optional<std::string>& value) {
  if (!value || *value == "float32") return HN_DTYPE_FLOAT32;
  if (*value == "bfloat16") return HN_DTYPE_BFLOAT16;
  UsageError("--dtype expects float32 or bfloat16, got '" + *value + "'");
}

ShapeMap ParseShapes(const std::vector<std::string>& specs) {
  ShapeMap shapes;
  for (const auto& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      UsageError("--shape expects NAME=D1,D2,..., got '" + spec + "'");
    }
    std::vector<int64_t> dims;
    std::stringstream list(spec.substr(eq + 1));
    std::string item;
    while (std::getline(list, item, ',')) {
      size_t used = 0;
      long long d = -1;
      try {
        d = std::stoll(item, &used);
      } catch (const std::exception&) {
      }
      if (used != item.size() || d < 0) {
        UsageError("--shape " + spec + ": '" + item + "' is not a dimension");
      }
      dims.push_back(d);
    }
    if (dims.empty()) UsageError("--shape " + spec + ": no dimensions");
    if (!shapes.emplace(spec.substr(0, eq), dims).second) {
      UsageError("--shape " + spec.substr(0, eq) + " is given twice");
    }
  }
  return shapes;
}

Owned<hn_shape_info, hn_shape_info_free> InferShapes(const hn_symbol* symbol,
                                                     const ShapeMap& known) {
  std::vector<const char*> names;
  std::vector<int> ndims;
  std::vector<int64_t> dims;
  for (const auto& kv : known) {
    names.push_back(kv.first.c_str());
    ndims.push_back(static_cast<int>(kv.second.size()));
    dims.insert(dims.end(), kv.second.begin(), kv.second.end());
  }
  hn_shape_info* info = nullptr;
  Check(hn_symbol_infer_shape(symbol, names.size(), names.data(), ndims.data(), dims.data(),
                              /*partial=*/1, &info));
  return Owned<hn_shape_info, hn_shape_info_free>(info);
}

namespace {

std::vector<std::string> Names(const char* const* names, size_t count) {
  return std::vector<std::string>(names, names + count);
}

std::string ParamsFile(const std::string& prefix, int epoch) {
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%04d.params", epoch);
  return prefix + suffix;
}

}  // namespace

LoadedModel LoadModel(const std::string& prefix, const std::string& epoch_text) {
  LoadedModel m;
  m.prefix = prefix;
  size_t used = 0;
  m.epoch = -1;
  try {
    m.epoch = std::stoi(epoch_text, &used);
  } catch (const std::exception&) {
  }
  if (used != epoch_text.size() || m.epoch < 0) {
    UsageError("EPOCH must be a number >= 0, got '" + epoch_text + "'");
  }
  hn_model* raw = nullptr;
  Check(hn_model_load(prefix.c_str(), m.epoch, &raw));
  m.model.reset(raw);
  const char* const* names = nullptr;
  size_t count = 0;
  Check(hn_model_input_names(m.model.get(), &names, &count));
  m.inputs = Names(names, count);
  Check(hn_model_output_names(m.model.get(), &names, &count));
  m.outputs = Names(names, count);
  return m;
}

Owned<hn_block, hn_block_free> ImportBlock(const LoadedModel& m) {
  std::vector<const char*> names;
  for (const auto& n : m.inputs) names.push_back(n.c_str());
  std::string symbol_file = m.prefix + "-symbol.json";
  std::string params_file = ParamsFile(m.prefix, m.epoch);
  hn_block* raw = nullptr;
  Check(
      hn_block_import(symbol_file.c_str(), names.data(), names.size(), params_file.c_str(), &raw));
  return Owned<hn_block, hn_block_free>(raw);
}

std::vector<Tensor> BlockInputs(const LoadedModel& m, std::map<std::string, Tensor> given) {
  std::string known;
  for (const auto& n : m.inputs) known += (known.empty() ? "" : ", ") + n;
  ShapeMap given_shapes;
  for (const auto& kv : given) {
    if (std::find(m.inputs.begin(), m.inputs.end(), kv.first) == m.inputs.end()) {
      throw CliError{HN_ERR_NOT_FOUND,
                     "the model has no input '" + kv.first + "' (inputs: " + known + ")"};
    }
    given_shapes[kv.first] = TensorShape(kv.second.get());
  }
  std::vector<Tensor> inputs;
  Owned<hn_shape_info, hn_shape_info_free> info;
  for (const auto& name : m.inputs) {
    auto it = given.find(name);
    if (it != given.end()) {
      inputs.push_back(std::move(it->second));
      continue;
    }
    if (!info) {
      hn_symbol* raw = nullptr;
      Check(hn_model_symbol(m.model.get(), &raw));
      Owned<hn_symbol, hn_symbol_free> symbol(raw);
      info = InferShapes(symbol.get(), given_shapes);
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
    if (shape.empty() ||
        std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d <= 0; })) {
      std::string message = "input '" + name + "' was not given and its shape cannot be inferred";
      throw CliError{HN_ERR_INVALID_ARGUMENT, message + "; pass it"};
    }
    hn_tensor* zeros = nullptr;
    Check(hn_tensor_create(HN_DTYPE_FLOAT32, shape.data(), static_cast<int>(shape.size()), nullptr,
                           0, &zeros));
    inputs.emplace_back(zeros);
  }
  return inputs;
}

std::vector<Tensor> ForwardBlock(hn_block* block, const std::vector<Tensor>& inputs,
                                 size_t num_outputs) {
  std::vector<hn_tensor*> in;
  for (const auto& t : inputs) in.push_back(t.get());
  std::vector<hn_tensor*> out(num_outputs, nullptr);
  size_t n = 0;
  Check(hn_block_forward(block, in.data(), in.size(), out.size(), out.data(), &n));
  std::vector<Tensor> result;
  for (size_t i = 0; i < n; ++i) result.emplace_back(out[i]);
  return result;
}

}  // namespace hybridnet_cli
