// hybridnet ops: every registered operator with its attributes, whether it has a gradient, and
// its ONNX export.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "onnx_convert.h"

namespace hybridnet_cli {

namespace {

using nlohmann::ordered_json;

ordered_json OpJson(const char* name) {
  const char* description = nullptr;
  size_t num_attrs = 0, num_aliases = 0;
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
    fields.push_back({{"key", key},
                      {"type", type},
                      {"required", required != 0},
                      {"default", def},
                      {"description", desc}});
  }
  j["attributes"] = fields;
  int has_gradient = 0;
  Check(hn_op_has_gradient(name, &has_gradient));
  j["gradient"] = has_gradient != 0;
  j["onnx"] = OnnxOpJson(name);
  return j;
}

// The ops with a gradient as a Markdown paragraph of `names`, lines under 100 columns (the
// README's list).
void PrintGradientList(const ordered_json& list) {
  std::string line;
  size_t count = 0;
  for (const auto& j : list) count += j["gradient"].get<bool>() ? 1 : 0;
  std::cout << count << " ops have a gradient:\n";
  for (const auto& j : list) {
    if (!j["gradient"].get<bool>()) continue;
    std::string word = "`" + j["name"].get<std::string>() + "`";
    if (!line.empty() && line.size() + 1 + word.size() > 99) {
      std::cout << line << "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) std::cout << line << "\n";
}

int Ops(const Args& args) {
  size_t count = 0;
  Check(hn_op_count(&count));
  ordered_json list = ordered_json::array();
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    Check(hn_op_name(i, &name));
    list.push_back(OpJson(name));
  }
  if (args.flag("--onnx")) {
    PrintOnnxTable(list);
    return 0;
  }
  if (args.flag("--gradients")) {
    PrintGradientList(list);
    return 0;
  }
  if (args.flag("--json")) {
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  for (const auto& j : list) {
    std::cout << j["name"].get<std::string>() << " - " << j["description"].get<std::string>()
              << (j["gradient"].get<bool>() ? " [gradient]" : "") << "\n";
    for (const auto& f : j["attributes"]) {
      std::cout << "    " << f["key"].get<std::string>() << " : " << f["type"].get<std::string>()
                << (f["required"].get<bool>() ? ", required"
                                              : ", default " + f["default"].get<std::string>())
                << "\n";
    }
  }
  return 0;
}

}  // namespace

extern const Command kOps{"ops",
                          "every registered operator with its attributes ([gradient]: "
                          "backward passes through it)",
                          {},
                          {{"--json", nullptr, "print JSON instead of text"},
                           {"--gradients", nullptr, "only the operators with a gradient (a list)"},
                           {"--onnx", nullptr, "how each operator exports to ONNX (a table)"}},
                          Ops};

}  // namespace hybridnet_cli
