// The symbol file as read, before Nodes are built, and the upgraders that bring files written by
// older MXNet versions to the current form (spec mxnet-formats.md 2.9; MXNet's LoadLegacyJSON).
// Shared by json_format.cc (reading, building) and json_upgrade.cc (upgrading).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

struct JSONGraph;

struct JSONEntry {
  uint32_t node_id = 0;
  uint32_t index = 0;
  uint32_t version = 0;
};

struct JSONNode {
  std::string op_name;     ///< as written in the file; "null" for variables
  const Op* op = nullptr;  ///< resolved (canonical) op; nullptr for variables
  std::string name;
  AttrDict dict;    ///< "attrs"/"attr" merged with the legacy "param"
  NodeAttrs attrs;  ///< op nodes: parsed by UpgradeJSONGraph
  std::vector<JSONEntry> inputs;
  std::vector<uint32_t> control_deps;
  std::vector<JSONGraph> subgraphs;  ///< a control-flow op's graphs, as read
  /// `subgraphs` built, before the node's attributes are parsed: an op's inputs may depend on
  /// its graphs (_sg_mkldnn_conv's bias is its nested Convolution's; _sg_mkldnn_fully_connected
  /// counts its inputs from them); every NodeAttrs made for the node carries them.
  std::vector<std::shared_ptr<const Symbol>> built_subgraphs;

  bool IsVariable() const { return op == nullptr; }
};

struct JSONGraph {
  std::string source;       ///< file name for messages (plus the path to a subgraph)
  int mxnet_version = 800;  ///< from attrs.mxnet_version; 800 (MXNet 0.8) when absent
  /// Whether the file gave the version; a subgraph that does not is its parent's version (MXNet
  /// writes none into subgraphs and upgrades the file as a whole).
  bool has_version = false;
  bool legacy_keys = false;
  std::vector<JSONNode> nodes;
  std::vector<uint32_t> arg_nodes;
  std::vector<JSONEntry> heads;
  /// Every node id, inputs before their consumers (post-order DFS from the heads, then the
  /// unreachable nodes). Filled by the reader after it checked the graph is a DAG.
  std::vector<uint32_t> topo_order;
};

/// "node 3 ('fc1')" for messages.
std::string DescribeJSONNode(const JSONGraph& g, uint32_t node_id);

/// Runs MXNet's upgraders in MXNet's order for the file's version: hidden-key fixing (< 1.9.1),
/// attribute parsing (always; fills JSONNode::attrs), missing-input synthesis (< 0.9.0),
/// BatchNorm/PReLU variable __init__ (< 0.9.4), argmax/argmin axis -1 (< 0.9.5). Errors throw
/// kFormatError naming the source and node.
void UpgradeJSONGraph(JSONGraph* g);

}  // namespace internal
}  // namespace hybridnet
