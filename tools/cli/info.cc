// hybridnet info FILE: what a symbol JSON, .params/.nd or .npy file holds.
#include <algorithm>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli.h"

namespace hybridnet_cli {

namespace {

using nlohmann::ordered_json;

std::vector<std::string> Names(const char* const* names, size_t count) {
  return std::vector<std::string>(names, names + count);
}

ordered_json InferredShapes(const hn_symbol* symbol, const ShapeMap& known) {
  Owned<hn_shape_info, hn_shape_info_free> info = InferShapes(symbol, known);
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
  return inferred;
}

// The operators this library does not implement, as [{"op": ..., "nodes": [...]}], read from
// hn_symbol_unsupported_ops' "OP<TAB>NODE,NODE,...\n" lines.
ordered_json UnsupportedOps(const std::string& text) {
  char* raw = nullptr;
  Check(hn_symbol_unsupported_ops(text.c_str(), &raw));
  std::istringstream lines(raw);
  hn_string_free(raw);
  ordered_json ops = ordered_json::array();
  std::string line;
  while (std::getline(lines, line)) {
    size_t tab = line.find('\t');
    ordered_json nodes = ordered_json::array();
    std::istringstream names(line.substr(tab + 1));
    for (std::string node; std::getline(names, node, ',');) nodes.push_back(node);
    ops.push_back({{"op", line.substr(0, tab)}, {"nodes", nodes}});
  }
  return ops;
}

bool IsTrue(const ordered_json& attrs, const char* key) {
  if (!attrs.is_object() || !attrs.contains(key)) return false;
  std::string v = attrs[key].get<std::string>();
  return v == "true" || v == "True" || v == "1";
}

// The precision the graph computes in, from its ops: int8 when it has MXNet's quantized ops
// (listed with the fp32 ops each stands for), bf16 when it casts to bfloat16, else fp32.
ordered_json Precision(const std::string& text) {
  ordered_json graph = ordered_json::parse(text, nullptr, false);
  ordered_json quantized = ordered_json::array();
  bool bf16 = false;
  if (graph.is_object() && graph.contains("nodes")) {
    for (const auto& node : graph["nodes"]) {
      const std::string op = node.value("op", "");
      const ordered_json attrs = node.contains("attrs") ? node["attrs"] : ordered_json();
      if ((op == "amp_cast" || op == "amp_multicast") && attrs.is_object() &&
          attrs.value("dtype", "") == "bfloat16") {
        bf16 = true;
      }
      const bool quantized_op = op.rfind("_contrib_quantized_", 0) == 0;
      const bool quantized_fused = op.rfind("_sg_", 0) == 0 && IsTrue(attrs, "quantized");
      if (!quantized_op && !quantized_fused) continue;
      ordered_json computes = ordered_json::array();
      if (quantized_op) computes.push_back(op.substr(std::strlen("_contrib_quantized_")));
      if (node.contains("subgraphs")) {
        for (const auto& sub : node["subgraphs"]) {
          for (const auto& inner : sub["nodes"]) {
            if (inner.value("op", "null") != "null") computes.push_back(inner["op"]);
          }
        }
      }
      quantized.push_back({{"node", node.value("name", "")}, {"op", op}, {"computes", computes}});
    }
  }
  ordered_json j;
  j["precision"] = !quantized.empty() ? "int8" : bf16 ? "bf16" : "fp32";
  if (!quantized.empty()) j["quantized_nodes"] = quantized;
  // hybridnet quantize --int8-weights marks its graphs (hybridnet/quantization.h).
  const bool int8_weights = graph.is_object() && graph.contains("attrs") &&
                            graph["attrs"].is_object() &&
                            graph["attrs"].contains("hybridnet_int8_weights");
  if (int8_weights) j["int8_weights"] = true;
  return j;
}

ordered_json SymbolInfo(const std::string& path, const std::string& text, const ShapeMap& shapes) {
  int version = 0, legacy = 0;
  Check(hn_symbol_inspect_json(text.c_str(), &version, &legacy));
  ordered_json j;
  j["file"] = path;
  j["kind"] = "symbol";
  j["mxnet_version"] = version;
  j["legacy_format"] = legacy != 0;
  j.update(Precision(text));
  j["unsupported_ops"] = UnsupportedOps(text);
  // Such a file does not load: what follows needs the loaded graph.
  if (!j["unsupported_ops"].empty()) return j;
  hn_symbol* raw = nullptr;
  Check(hn_symbol_load(path.c_str(), &raw));
  Owned<hn_symbol, hn_symbol_free> sym(raw);
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
  j["nodes"] = num_nodes;
  j["ops"] = num_ops;
  j["op_counts"] = op_counts;
  Check(hn_symbol_list_arguments(sym.get(), &names, &count));
  j["arguments"] = Names(names, count);
  Check(hn_symbol_list_auxiliary_states(sym.get(), &names, &count));
  j["auxiliary_states"] = Names(names, count);
  Check(hn_symbol_list_outputs(sym.get(), &names, &count));
  j["outputs"] = Names(names, count);
  if (!shapes.empty()) j["inferred_shapes"] = InferredShapes(sym.get(), shapes);
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
  Owned<hn_tensor_list, hn_tensor_list_free> list(raw);
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

ordered_json NpyInfo(const std::string& path) {
  hn_tensor* raw = nullptr;
  Check(hn_tensor_load_npy(path.c_str(), &raw));
  Tensor t(raw);
  ordered_json j = ArrayJson(t.get(), 8);
  j["file"] = path;
  j["kind"] = "npy";
  char* text = nullptr;
  Check(hn_tensor_to_string(t.get(), &text));
  j["text"] = text;
  hn_string_free(text);
  return j;
}

std::string Join(const ordered_json& list) {
  std::string s;
  for (const auto& v : list) s += (s.empty() ? "" : ", ") + v.get<std::string>();
  return s;
}

// One line per operator; a long node list is cut after kShownNodes names (--json has all).
void PrintUnsupported(const ordered_json& ops, std::ostream& os) {
  constexpr size_t kShownNodes = 8;
  os << "  unsupported operators (" << ops.size()
     << "; the file cannot be loaded, so its arguments and shapes are not shown):\n";
  for (const auto& op : ops) {
    const auto& nodes = op["nodes"];
    os << "    " << op["op"].get<std::string>() << " (" << nodes.size()
       << (nodes.size() == 1 ? " node): " : " nodes): ");
    for (size_t i = 0; i < std::min(nodes.size(), kShownNodes); ++i)
      os << (i > 0 ? ", " : "") << nodes[i].get<std::string>();
    if (nodes.size() > kShownNodes) os << ", ... (" << nodes.size() - kShownNodes << " more)";
    os << "\n";
  }
}

void PrintSymbol(const ordered_json& j, std::ostream& os) {
  os << "  symbol JSON, mxnet_version " << j["mxnet_version"]
     << (j["legacy_format"].get<bool>() ? " (legacy format, upgraded on load)" : "") << "\n";
  os << "  precision: " << j["precision"].get<std::string>();
  if (j.contains("quantized_nodes")) {
    os << " (" << j["quantized_nodes"].size() << " int8 nodes:";
    for (const auto& q : j["quantized_nodes"]) {
      os << " " << q["node"].get<std::string>() << " [";
      for (size_t i = 0; i < q["computes"].size(); ++i)
        os << (i ? "+" : "") << q["computes"][i].get<std::string>();
      os << "]";
    }
    os << ")";
  }
  os << "\n";
  if (j.value("int8_weights", false)) os << "  int8 weights: not loadable by MXNet\n";
  if (!j["unsupported_ops"].empty()) {
    PrintUnsupported(j["unsupported_ops"], os);
    return;
  }
  os << "  every operator is supported\n";
  os << "  " << j["nodes"] << " nodes, " << j["ops"] << " operators:";
  for (const auto& kv : j["op_counts"].items()) os << " " << kv.key() << "x" << kv.value();
  os << "\n  arguments (" << j["arguments"].size() << "): " << Join(j["arguments"]) << "\n";
  os << "  auxiliary states (" << j["auxiliary_states"].size()
     << "): " << Join(j["auxiliary_states"]) << "\n";
  os << "  outputs: " << Join(j["outputs"]) << "\n";
  if (!j.contains("inferred_shapes")) return;
  const auto& inf = j["inferred_shapes"];
  os << "  inferred shapes" << (inf["complete"].get<bool>() ? "" : " (partial: 0 = unknown)")
     << ":\n";
  for (const char* group : {"arguments", "auxiliary_states", "outputs"}) {
    for (const auto& kv : inf[group].items())
      os << "    " << kv.key() << " " << ShapeText(kv.value().get<std::vector<int64_t>>()) << "\n";
  }
}

void PrintParams(const ordered_json& j, std::ostream& os) {
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
}

int Info(const Args& args) {
  const std::string& path = args.positional(0);
  std::string bytes = ReadFile(path);
  ordered_json j;
  switch (DetectKind(path, bytes)) {
    case FileKind::kSymbol:
      j = SymbolInfo(path, bytes, ParseShapes(args.values("--shape")));
      break;
    case FileKind::kParams:
      j = ParamsInfo(path);
      break;
    case FileKind::kNpy:
      j = NpyInfo(path);
      break;
  }
  if (args.flag("--json")) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << j["file"].get<std::string>() << "\n";
  if (j["kind"] == "symbol") {
    PrintSymbol(j, std::cout);
  } else if (j["kind"] == "ndarray_list") {
    PrintParams(j, std::cout);
  } else {
    std::cout << "  .npy " << j["dtype"].get<std::string>() << " "
              << ShapeText(j["shape"].get<std::vector<int64_t>>()) << "\n  "
              << j["text"].get<std::string>() << "\n";
  }
  return 0;
}

}  // namespace

extern const Command kInfo{
    "info",
    "what a symbol JSON, .params/.nd or .npy file holds",
    {{"FILE", "a symbol JSON, .params/.nd or .npy file (recognized by its content)"}},
    {{"--shape", "NAME=D1,D2,...", "an input's shape, to infer every shape of a symbol",
      /*repeatable=*/true},
     {"--json", nullptr, "print JSON instead of text"}},
    Info,
    "  symbol JSON: precision (fp32, int8 with the nodes computing in int8, bf16), op counts,\n"
    "    arguments, auxiliary states, outputs, inferred shapes; a file with operators\n"
    "    hybridnet does not implement lists them with their nodes instead\n"
    "  .params/.nd: names, dtypes, shapes, first values;  .npy: dtype, shape, values"};

}  // namespace hybridnet_cli
