// hybridnet: command-line tool for MXNet-format files.
//
//   hybridnet info FILE [--shape NAME=D1,D2,...]... [--json]
//   hybridnet convert IN OUT
//   hybridnet ops [--json]
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "hybridnet/io/json.h"
#include "hybridnet/io/params.h"
#include "hybridnet/npy.h"
#include "hybridnet/op.h"
#include "hybridnet/symbol.h"

namespace hn = hybridnet;
using nlohmann::ordered_json;

namespace {

constexpr const char* kUsage =
    "usage:\n"
    "  hybridnet info FILE [--shape NAME=D1,D2,...]... [--json]\n"
    "      symbol JSON: op counts, arguments, auxiliary states, outputs, inferred shapes\n"
    "      .params/.nd: names, dtypes, shapes, first values;  .npy: dtype, shape, values\n"
    "  hybridnet convert IN OUT\n"
    "      symbol JSON -> MXNet 1.9 JSON;  .params/.nd -> V2 records\n"
    "  hybridnet ops [--json]\n"
    "      every registered operator with its attributes\n";

enum class FileKind { kSymbol, kParams, kNpy };

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  HN_CHECK(in.good(), kIOError) << "cannot open '" << path << "'";
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
  HN_THROW(kFormatError) << "'" << path
                         << "' is neither symbol JSON, an MXNet NDArray list (.params/.nd) nor .npy";
}

std::map<std::string, hn::Shape> ParseShapeOptions(const std::vector<std::string>& specs) {
  std::map<std::string, hn::Shape> shapes;
  for (const auto& spec : specs) {
    auto eq = spec.find('=');
    HN_CHECK(eq != std::string::npos && eq > 0, kInvalidArgument)
        << "--shape expects NAME=D1,D2,..., got '" << spec << "'";
    shapes[spec.substr(0, eq)] = hn::Shape(hn::ParseIntTuple("(" + spec.substr(eq + 1) + ")"));
  }
  return shapes;
}

ordered_json ShapeJson(const hn::Shape& s) { return s.dims(); }

ordered_json ArrayJson(const hn::NDArray& a, size_t max_values) {
  ordered_json j;
  if (a.is_none()) {
    j["none"] = true;
    return j;
  }
  j["dtype"] = hn::DTypeName(a.dtype());
  j["shape"] = ShapeJson(a.shape());
  std::vector<float> values = a.ToFloatVector();
  values.resize(std::min(values.size(), max_values));
  j["first_values"] = values;
  return j;
}

ordered_json SymbolInfo(const std::string& path, const std::string& text,
                        const std::map<std::string, hn::Shape>& shapes) {
  hn::JSONFileInfo file = hn::InspectJSON(text, path);
  hn::Symbol sym = hn::LoadJSON(text, path);
  hn::IndexedGraph g(sym.outputs);
  std::map<std::string, int> op_counts;
  size_t num_ops = 0;
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    if (g[nid].node->IsVariable()) continue;
    ++op_counts[g[nid].node->attrs.op->name];
    ++num_ops;
  }
  ordered_json j;
  j["file"] = path;
  j["kind"] = "symbol";
  j["mxnet_version"] = file.mxnet_version;
  j["legacy_format"] = file.legacy_keys;
  j["nodes"] = g.num_nodes();
  j["ops"] = num_ops;
  j["op_counts"] = op_counts;
  j["arguments"] = sym.ListArguments();
  j["auxiliary_states"] = sym.ListAuxiliaryStates();
  j["outputs"] = sym.ListOutputs();
  if (!shapes.empty()) {
    auto r = sym.InferShape(shapes, /*partial=*/true);
    ordered_json inferred;
    auto put = [](ordered_json* obj, const std::vector<std::string>& names,
                  const std::vector<hn::Shape>& values) {
      for (size_t i = 0; i < names.size(); ++i) (*obj)[names[i]] = ShapeJson(values[i]);
    };
    put(&inferred["arguments"], sym.ListArguments(), r.arg_shapes);
    put(&inferred["auxiliary_states"], sym.ListAuxiliaryStates(), r.aux_shapes);
    put(&inferred["outputs"], sym.ListOutputs(), r.out_shapes);
    inferred["complete"] = r.complete;
    j["inferred_shapes"] = inferred;
  }
  return j;
}

ordered_json ParamsInfo(const std::string& path, const std::string& bytes) {
  hn::NDArrayList list = hn::ParseNDArrayList(bytes, path);
  ordered_json j;
  j["file"] = path;
  j["kind"] = "ndarray_list";
  j["count"] = list.arrays.size();
  j["named"] = !list.names.empty();
  int64_t total = 0;
  ordered_json arrays = ordered_json::array();
  for (size_t i = 0; i < list.arrays.size(); ++i) {
    ordered_json a = ArrayJson(list.arrays[i], 4);
    a["name"] = list.names.empty() ? "" : list.names[i];
    a["record_version"] = list.record_versions[i];
    total += list.arrays[i].is_none() ? 0 : list.arrays[i].size();
    arrays.push_back(a);
  }
  j["total_elements"] = total;
  j["arrays"] = arrays;
  return j;
}

std::string Join(const ordered_json& list) {
  std::string s;
  for (const auto& v : list) s += (s.empty() ? "" : ", ") + v.get<std::string>();
  return s;
}

std::string ShapeText(const ordered_json& dims) {
  return hn::Shape(dims.get<std::vector<int64_t>>()).ToString();
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
          os << "    " << kv.key() << " " << ShapeText(kv.value()) << "\n";
      }
    }
  } else if (j["kind"] == "ndarray_list") {
    os << "  NDArray list, " << j["count"] << " arrays, " << (j["named"].get<bool>() ? "named" : "unnamed")
       << ", " << j["total_elements"] << " elements\n";
    for (const auto& a : j["arrays"]) {
      os << "    " << (a["name"].get<std::string>().empty() ? "-" : a["name"].get<std::string>());
      if (a.contains("none")) {
        os << " none\n";
        continue;
      }
      os << " " << a["dtype"].get<std::string>() << " " << ShapeText(a["shape"]) << " V"
         << a["record_version"] << " [";
      bool first = true;
      for (const auto& v : a["first_values"]) {
        os << (first ? "" : ", ") << v.get<float>();
        first = false;
      }
      os << (a["first_values"].size() < a["shape"].size() ? "" : ", ...") << "]\n";
    }
  } else {
    os << "  .npy " << j["dtype"].get<std::string>() << " " << ShapeText(j["shape"]) << "\n";
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
      HN_CHECK(i + 1 < args.size(), kInvalidArgument) << "--shape needs NAME=D1,D2,...";
      shape_specs.push_back(args[++i]);
    } else if (path.empty()) {
      path = args[i];
    } else {
      HN_THROW(kInvalidArgument) << "unexpected argument '" << args[i] << "'\n" << kUsage;
    }
  }
  HN_CHECK(!path.empty(), kInvalidArgument) << "info needs a FILE\n" << kUsage;
  std::string bytes = ReadFile(path);
  ordered_json j;
  switch (DetectKind(path, bytes)) {
    case FileKind::kSymbol: j = SymbolInfo(path, bytes, ParseShapeOptions(shape_specs)); break;
    case FileKind::kParams: j = ParamsInfo(path, bytes); break;
    case FileKind::kNpy: {
      hn::NDArray a = hn::ParseNpy(bytes, path);
      j = ArrayJson(a, 8);
      j["file"] = path;
      j["kind"] = "npy";
      j["text"] = a.ToString();
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

int Convert(const std::vector<std::string>& args) {
  HN_CHECK(args.size() == 2, kInvalidArgument) << "convert needs IN and OUT\n" << kUsage;
  std::string bytes = ReadFile(args[0]);
  switch (DetectKind(args[0], bytes)) {
    case FileKind::kSymbol: hn::LoadJSON(bytes, args[0]).Save(args[1]); break;
    case FileKind::kParams: hn::SaveNDArrayList(args[1], hn::ParseNDArrayList(bytes, args[0])); break;
    case FileKind::kNpy: HN_THROW(kInvalidArgument) << "convert takes symbol JSON or .params/.nd files";
  }
  std::cout << "wrote " << args[1] << "\n";
  return 0;
}

int Ops(const std::vector<std::string>& args) {
  bool as_json = std::find(args.begin(), args.end(), "--json") != args.end();
  ordered_json list = ordered_json::array();
  for (const hn::Op* op : hn::OpRegistry::Global().List()) {
    if (op->internal) continue;
    ordered_json j;
    j["name"] = op->name;
    j["aliases"] = op->aliases;
    j["description"] = op->description;
    ordered_json fields = ordered_json::array();
    for (const auto& f : op->fields) {
      fields.push_back({{"key", f.key}, {"type", f.type}, {"required", f.required},
                        {"default", f.default_text}, {"description", f.description}});
    }
    j["attributes"] = fields;
    list.push_back(j);
  }
  if (as_json) {
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  for (const auto& j : list) {
    std::cout << j["name"].get<std::string>() << " - " << j["description"].get<std::string>() << "\n";
    for (const auto& f : j["attributes"]) {
      std::cout << "    " << f["key"].get<std::string>() << " : " << f["type"].get<std::string>()
                << (f["required"].get<bool>() ? ", required" : ", default " + f["default"].get<std::string>())
                << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "info") return Info(args);
    if (command == "convert") return Convert(args);
    if (command == "ops") return Ops(args);
    std::cerr << "hybridnet: unknown command '" << command << "'\n" << kUsage;
    return 2;
  } catch (const hn::Error& e) {
    std::cerr << "hybridnet: " << hn::StatusCodeName(e.code()) << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "hybridnet: error: " << e.what() << "\n";
    return 1;
  }
}
