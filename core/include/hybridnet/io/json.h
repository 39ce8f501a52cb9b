// Symbol JSON in MXNet's format. Writing reproduces MXNet 1.9's bytes (dmlc::JSONWriter layout,
// key order, ", " line ends, no final newline, mxnet_version 10901). Reading accepts every older
// form and upgrades it as MXNet's LoadLegacyJSON does (0.8 "param"/"attr", two-element entries,
// hidden keys, missing BatchNorm auxiliary inputs).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hybridnet/symbol.h"

namespace hybridnet {

/// The MXNet version SaveJSON writes into the file's attributes (1.9.1).
constexpr int kMXNetVersion = 10901;

/// The symbol as MXNet 1.9's symbol JSON (what Symbol.tojson() and export write).
std::string SaveJSON(const Symbol& symbol);
/// `source_name` (a file name) is used in error messages.
Symbol LoadJSON(const std::string& json, const std::string& source_name = "<string>");

/// Facts about a JSON file before upgrade, for `hybridnet info`.
/// Operator name -> the nodes (subgraphs included) that use it.
using UnsupportedOps = std::map<std::string, std::vector<std::string>>;

/// What InspectJSON finds in symbol JSON before any upgrade.
struct JSONFileInfo {
  int mxnet_version = 800;   ///< 800 when the file has none (MXNet 0.8)
  bool legacy_keys = false;  ///< uses "param"/"attr" or two-element entries
  /// Operators hybridnet does not implement ("Custom" nodes carry their op_type).
  UnsupportedOps unsupported_ops;
};
/// Parses `json` and reports what JSONFileInfo lists, without upgrading or building the graph;
/// `source_name` is used in error messages.
JSONFileInfo InspectJSON(const std::string& json, const std::string& source_name = "<string>");

}  // namespace hybridnet
