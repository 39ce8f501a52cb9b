// Upgrades of symbol files written by older MXNet versions (spec mxnet-formats.md 2.9). Each step
// runs when the file's mxnet_version is below the step's threshold, in this order:
//
//   < 1.9.1  FixHiddenKeys      bare "lr_mult", "weight_lr_mult", ... -> "__lr_mult__" keys
//   always   ParseAll           every op node's attributes are parsed (errors name the node)
//   < 0.9.0  AddMissingInputs   0.8 graphs lack BatchNorm's moving_mean/moving_var variables
//   < 0.9.4  SetInputVarInit    "__init__" of BatchNorm moving stats and of the PReLU gamma
//   < 0.9.5  FixArgmaxAxis      argmax/argmin axis "-1" meant "no axis"
//
// followed by the checks every file gets: input counts and output indices fit the ops.
#include "io/json_upgrade.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/limits.h"

namespace hybridnet {
namespace internal {

namespace {

constexpr int kVersionFixParsing = 10901;  // MXNet runs this one below its own version
constexpr int kVersion0900 = 900;
constexpr int kVersion0904 = 904;
constexpr int kVersion0905 = 905;

// Keys MXNet 0.8 wrote without the "__" markers.
const char* const kLegacyHiddenKeys[] = {"ctx_group", "lr_mult", "wd_mult", "force_mirroring",
                                         "mirror_stage"};

NodeAttrs ParseNode(const JSONGraph& g, uint32_t nid, const AttrDict& dict) {
  const JSONNode& n = g.nodes[nid];
  try {
    NodeAttrs attrs = MakeNodeAttrs(*n.op, n.name, dict);
    attrs.subgraphs = n.built_subgraphs;
    return attrs;
  } catch (const std::exception& e) {
    HN_THROW(kFormatError) << g.source << ": node " << nid << ": " << e.what();
  }
}

std::vector<std::string> InputNamesOf(const JSONGraph& g, uint32_t nid, const NodeAttrs& attrs) {
  const JSONNode& n = g.nodes[nid];
  uint32_t count = 0;
  std::vector<std::string> names;
  try {
    count = n.op->NumInputs(attrs);
  } catch (const std::exception& e) {
    HN_THROW(kFormatError) << g.source << ": " << DescribeJSONNode(g, nid) << ": " << e.what();
  }
  // An attribute such as num_args sets the count: a node cannot have more inputs than a graph
  // may have nodes, and the names are only made once that holds.
  HN_CHECK(count <= static_cast<uint64_t>(GetLimit(Limit::kMaxNodes)), kFormatError)
      << g.source << ": " << DescribeJSONNode(g, nid) << " has " << count
      << " inputs, more than a graph may have nodes" << LimitNote(Limit::kMaxNodes);
  try {
    names = n.op->InputNames(attrs);
  } catch (const std::exception& e) {
    HN_THROW(kFormatError) << g.source << ": " << DescribeJSONNode(g, nid) << ": " << e.what();
  }
  for (size_t i = names.size(); i < count; ++i) names.push_back("arg" + std::to_string(i));
  return names;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// UpgradeJSON_FixParsing: "lr_mult" -> "__lr_mult__" on the same node; "<arg>_lr_mult" on an op
// node -> "__lr_mult__" on the variable feeding input <arg>; anything else stays as it is.
void FixHiddenKeys(JSONGraph* g) {
  for (uint32_t nid : g->topo_order) {
    AttrDict plain;
    std::vector<std::pair<std::string, std::string>> legacy;
    for (const auto& kv : g->nodes[nid].dict) {
      bool is_legacy = false;
      for (const char* hk : kLegacyHiddenKeys) {
        is_legacy = is_legacy || kv.first == hk || EndsWith(kv.first, std::string("_") + hk);
      }
      if (is_legacy) {
        legacy.push_back(kv);
      } else {
        plain.insert(kv);
      }
    }
    if (legacy.empty()) continue;
    std::vector<std::string> arg_names;
    if (!g->nodes[nid].IsVariable()) {
      // The input names can depend on the attributes (no_bias), so parse them first.
      arg_names = InputNamesOf(*g, nid, ParseNode(*g, nid, plain));
    }
    AttrDict result = plain;
    for (const auto& kv : legacy) {
      bool moved = false;
      for (const char* hk_text : kLegacyHiddenKeys) {
        const std::string hk = hk_text;
        const std::string hidden = "__" + hk + "__";
        if (kv.first == hk) {
          result[hidden] = kv.second;
          moved = true;
          break;
        }
        if (!EndsWith(kv.first, "_" + hk) || kv.first.size() == hk.size() + 1) continue;
        if (g->nodes[nid].IsVariable()) break;
        std::string arg = kv.first.substr(0, kv.first.size() - hk.size() - 1);
        auto it = std::find(arg_names.begin(), arg_names.end(), arg);
        size_t slot = static_cast<size_t>(it - arg_names.begin());
        if (it != arg_names.end() && slot < g->nodes[nid].inputs.size()) {
          uint32_t src = g->nodes[nid].inputs[slot].node_id;
          if (g->nodes[src].IsVariable()) {
            g->nodes[src].dict[hidden] = kv.second;
            moved = true;
          }
        }
        break;
      }
      if (!moved) result[kv.first] = kv.second;
    }
    g->nodes[nid].dict = std::move(result);
  }
}

// UpgradeJSON_Parse: every op's attribute parser runs (unknown keys, bad values, missing
// required keys are errors naming the node).
void ParseAll(JSONGraph* g) {
  for (uint32_t nid = 0; nid < g->nodes.size(); ++nid) {
    JSONNode& n = g->nodes[nid];
    if (n.IsVariable()) {
      n.attrs = NodeAttrs();
      n.attrs.name = n.name;
      n.attrs.dict = n.dict;
    } else {
      n.attrs = ParseNode(*g, nid, n.dict);
    }
  }
}

// UpgradeJSON_000800_000900: inputs an op has but the 0.8 file does not list (BatchNorm's
// moving_mean/moving_var) become variables "<node>_<input name>" carrying a copy of the node's
// attributes, as the symbol API of MXNet 0.9 created them.
void AddMissingInputs(JSONGraph* g) {
  const size_t original = g->nodes.size();
  for (uint32_t nid = 0; nid < original; ++nid) {
    if (g->nodes[nid].IsVariable()) continue;
    std::vector<std::string> names = InputNamesOf(*g, nid, g->nodes[nid].attrs);
    for (size_t i = g->nodes[nid].inputs.size(); i < names.size(); ++i) {
      JSONNode var;
      var.op_name = "null";
      var.name = g->nodes[nid].name + "_" + names[i];
      var.dict = g->nodes[nid].dict;
      var.attrs.name = var.name;
      var.attrs.dict = var.dict;
      HN_CHECK(g->nodes.size() < static_cast<uint64_t>(GetLimit(Limit::kMaxNodes)), kFormatError)
          << g->source << ": adding the missing inputs of old-format nodes makes more than "
          << g->nodes.size() << " nodes" << LimitNote(Limit::kMaxNodes);
      uint32_t var_id = static_cast<uint32_t>(g->nodes.size());
      g->nodes.push_back(std::move(var));
      g->nodes[nid].inputs.push_back(JSONEntry{var_id, 0, 0});
    }
  }
}

void SetInitIfMissing(JSONGraph* g, uint32_t nid, size_t slot, const char* init) {
  if (slot >= g->nodes[nid].inputs.size()) return;
  JSONNode& var = g->nodes[g->nodes[nid].inputs[slot].node_id];
  if (!var.IsVariable() || var.dict.count("__init__") != 0) return;
  var.dict["__init__"] = init;
  var.attrs.dict = var.dict;
}

// UpgradeJSON_000903_000904: the initializers MXNet's compose hooks give variables.
void SetInputVarInit(JSONGraph* g) {
  for (uint32_t nid = 0; nid < g->nodes.size(); ++nid) {
    const Op* op = g->nodes[nid].op;
    if (op == nullptr) continue;
    const auto& mut = op->mutable_inputs;
    bool batch_norm_like = std::find(mut.begin(), mut.end(), 3u) != mut.end() &&
                           std::find(mut.begin(), mut.end(), 4u) != mut.end();
    if (batch_norm_like) {
      SetInitIfMissing(g, nid, 3, "[\"zero\", {}]");
      SetInitIfMissing(g, nid, 4, "[\"one\", {}]");
    }
    if (op->name == "LeakyReLU") {
      SetInitIfMissing(g, nid, 1, "[\"Constant\", {\"value\": 0.25}]");
    }
  }
}

// UpgradeJSON_000904_000905: argmax/argmin axis became optional; -1 used to mean "none".
void FixArgmaxAxis(JSONGraph* g) {
  for (uint32_t nid = 0; nid < g->nodes.size(); ++nid) {
    JSONNode& n = g->nodes[nid];
    if (n.op == nullptr || (n.op->name != "argmax" && n.op->name != "argmin")) continue;
    auto it = n.dict.find("axis");
    if (it == n.dict.end() || it->second != "-1") continue;
    n.dict.erase(it);
    n.attrs = ParseNode(*g, nid, n.dict);
  }
}

void CheckArity(const JSONGraph& g) {
  for (uint32_t nid = 0; nid < g.nodes.size(); ++nid) {
    const JSONNode& n = g.nodes[nid];
    if (n.IsVariable()) continue;
    std::vector<std::string> names = InputNamesOf(g, nid, n.attrs);
    if (n.inputs.size() != names.size()) {
      Error err(StatusCode::kFormatError);
      err << g.source << ": " << DescribeJSONNode(g, nid) << ": operator " << n.op->name
          << " expects " << names.size() << " inputs (";
      for (size_t i = 0; i < names.size(); ++i) err << (i ? ", " : "") << names[i];
      err << ") but the file lists " << n.inputs.size();
      throw err;
    }
  }
  auto check_entry = [&g](const JSONEntry& e, const std::string& where) {
    const JSONNode& src = g.nodes[e.node_id];
    uint32_t outputs = 1;
    if (!src.IsVariable()) {
      try {
        outputs = src.op->NumOutputs(src.attrs);
      } catch (const std::exception& ex) {
        HN_THROW(kFormatError) << g.source << ": " << DescribeJSONNode(g, e.node_id) << ": "
                               << ex.what();
      }
    }
    HN_CHECK(e.index < outputs, kFormatError)
        << g.source << ": " << where << " reads output " << e.index << " of "
        << DescribeJSONNode(g, e.node_id) << ", which has " << outputs
        << (outputs == 1 ? " output" : " outputs");
  };
  for (uint32_t nid = 0; nid < g.nodes.size(); ++nid) {
    const auto& inputs = g.nodes[nid].inputs;
    for (size_t i = 0; i < inputs.size(); ++i)
      check_entry(inputs[i], DescribeJSONNode(g, nid) + " input " + std::to_string(i));
  }
  for (size_t i = 0; i < g.heads.size(); ++i)
    check_entry(g.heads[i], "heads[" + std::to_string(i) + "]");
}

}  // namespace

std::string DescribeJSONNode(const JSONGraph& g, uint32_t node_id) {
  return "node " + std::to_string(node_id) + " ('" + g.nodes[node_id].name + "')";
}

void UpgradeJSONGraph(JSONGraph* g) {
  const int version = g->mxnet_version;
  if (version < kVersionFixParsing) FixHiddenKeys(g);
  ParseAll(g);
  if (version < kVersion0900) AddMissingInputs(g);
  if (version < kVersion0904) SetInputVarInit(g);
  if (version < kVersion0905) FixArgmaxAxis(g);
  CheckArity(*g);
}

}  // namespace internal
}  // namespace hybridnet
