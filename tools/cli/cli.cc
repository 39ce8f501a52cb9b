// Helpers shared by the subcommands of `hybridnet` (cli.h).
#include "cli.h"

#include <fstream>
#include <sstream>

namespace hybridnet_cli {

void Check(int status) {
  if (status != HN_OK) throw CliError{status, hn_last_error()};
}

void UsageError(const std::string& message) { throw CliError{0, message}; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) throw CliError{HN_ERR_IO, "cannot open '" + path + "'"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
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

ShapeMap ParseShapes(const std::vector<std::string>& specs) {
  ShapeMap shapes;
  for (const auto& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) UsageError("expected NAME=D1,D2,..., got '" + spec + "'");
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
      if (used != item.size() || d < 0) UsageError(spec + ": '" + item + "' is not a dimension");
      dims.push_back(d);
    }
    if (dims.empty()) UsageError(spec + ": no dimensions");
    shapes[spec.substr(0, eq)] = dims;
  }
  return shapes;
}

Owned<hn_shape_info, hn_shape_info_free> InferShapes(const hn_symbol* symbol, const ShapeMap& known) {
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

}  // namespace hybridnet_cli
