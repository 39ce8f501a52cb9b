// Symbol JSON in MXNet's format (spec mxnet-formats.md section 2).
//
// Writing emits MXNet 1.9's exact bytes through JSONLayoutWriter. Reading parses with nlohmann
// (ordered, so the "attr"/"attrs" precedence of MXNet's reader can be honoured), checks the
// structure, resolves op names and aliases, checks the graph is a DAG, runs the legacy upgraders
// (json_upgrade.cc) and builds Nodes. Every malformed input throws kFormatError naming the source,
// the node and what was expected.
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/io/json.h"
#include "hybridnet/limits.h"
#include "io/json_upgrade.h"
#include "io/json_writer.h"

namespace hybridnet {

namespace {

using internal::JSONEntry;
using internal::JSONGraph;
using internal::JSONLayoutWriter;
using internal::JSONNode;
using Json = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// Writing

void WriteEntry(JSONLayoutWriter* w, uint32_t node_id, uint32_t index, uint32_t version) {
  w->BeginArray(false);
  w->Item();
  w->WriteUInt(node_id);
  w->Item();
  w->WriteUInt(index);
  w->Item();
  w->WriteUInt(version);
  w->EndArray();
}

void WriteUIntArray(JSONLayoutWriter* w, const std::vector<uint32_t>& values) {
  w->BeginArray(values.size() > 10);
  for (uint32_t v : values) {
    w->Item();
    w->WriteUInt(v);
  }
  w->EndArray();
}

void WriteStringMap(JSONLayoutWriter* w, const AttrDict& dict) {
  w->BeginObject(dict.size() > 1);
  for (const auto& kv : dict) {
    w->Key(kv.first);
    w->WriteString(kv.second);
  }
  w->EndObject();
}

// ---------------------------------------------------------------------------------------------
// Reading: structure

// dmlc's writer leaves control characters other than \r \n \t raw inside strings, and strict
// JSON parsers reject them. When `text` has any, `*escaped` gets a copy with them as \u00XX
// escapes and true is returned.
bool EscapeControlCharacters(const std::string& text, std::string* escaped) {
  bool in_string = false, any = false;
  for (size_t i = 0; i < text.size() && !any; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (in_string && c == '\\') {
      ++i;
    } else if (c == '"') {
      in_string = !in_string;
    } else {
      any = in_string && c < 0x20;
    }
  }
  if (!any) return false;
  static const char kHex[] = "0123456789abcdef";
  escaped->clear();
  escaped->reserve(text.size() + 16);
  in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    unsigned char c = static_cast<unsigned char>(ch);
    if (in_string && c == '\\' && i + 1 < text.size()) {
      escaped->push_back(ch);
      escaped->push_back(text[++i]);
      continue;
    }
    if (c == '"') in_string = !in_string;
    if (in_string && c < 0x20) {
      escaped->append("\\u00");
      escaped->push_back(kHex[c >> 4]);
      escaped->push_back(kHex[c & 15]);
    } else {
      escaped->push_back(ch);
    }
  }
  return true;
}

// Control-flow ops nest graphs; a hostile file could nest them without end.
constexpr int kMaxSubgraphDepth = 16;

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  JSONGraph ReadStructure(const std::string& text);

 private:
  [[noreturn]] void Fail(const std::string& where, const std::string& what) const {
    HN_THROW(kFormatError) << source_ << ": " << where << ": " << what;
  }
  /// One graph object (the file, or a node's subgraph at `depth` > 0); `path` locates it.
  JSONGraph ReadGraph(const Json& root, const std::string& path, int depth);
  static const char* TypeName(const Json& v) { return v.type_name(); }
  const Json& RequireArray(const Json& v, const std::string& where) const {
    if (!v.is_array()) Fail(where, std::string("expected an array, found ") + TypeName(v));
    return v;
  }
  uint32_t ReadUInt(const Json& v, const std::string& where) const;
  JSONEntry ReadEntry(const Json& v, const std::string& where, bool* legacy) const;
  AttrDict ReadStringMap(const Json& v, const std::string& where) const;
  JSONNode ReadNode(const Json& v, size_t index, const std::string& path, int depth, bool* legacy);
  void ReadGraphAttrs(const Json& v, JSONGraph* g) const;

  std::string source_;
  size_t total_nodes_ = 0;  ///< over every nesting level, against the node limit
};

uint32_t Reader::ReadUInt(const Json& v, const std::string& where) const {
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0)) {
    Fail(where, std::string("expected a non-negative integer, found ") +
                    (v.is_number() ? v.dump() : TypeName(v)));
  }
  uint64_t value = v.get<uint64_t>();
  if (value > std::numeric_limits<uint32_t>::max()) {
    Fail(where, "integer " + std::to_string(value) + " does not fit in 32 bits");
  }
  return static_cast<uint32_t>(value);
}

JSONEntry Reader::ReadEntry(const Json& v, const std::string& where, bool* legacy) const {
  if (!v.is_array() || (v.size() != 2 && v.size() != 3)) {
    Fail(where, std::string("expected an entry [node, index, version] or [node, index], found ") +
                    (v.is_array() ? "an array of " + std::to_string(v.size()) + " elements"
                                  : std::string(TypeName(v))));
  }
  JSONEntry e;
  e.node_id = ReadUInt(v[0], where + "[0] (node index)");
  e.index = ReadUInt(v[1], where + "[1] (output index)");
  if (v.size() == 3) {
    e.version = ReadUInt(v[2], where + "[2] (version)");
  } else {
    *legacy = true;
  }
  return e;
}

AttrDict Reader::ReadStringMap(const Json& v, const std::string& where) const {
  if (!v.is_object()) Fail(where, std::string("expected an object, found ") + TypeName(v));
  AttrDict dict;
  for (const auto& kv : v.items()) {
    if (!kv.value().is_string()) {
      Fail(where + "." + kv.key(),
           std::string("attribute values must be strings, found ") +
               (kv.value().is_primitive() ? kv.value().dump() : TypeName(kv.value())));
    }
    dict[kv.key()] = kv.value().get<std::string>();
  }
  return dict;
}

JSONNode Reader::ReadNode(const Json& v, size_t index, const std::string& path, int depth,
                          bool* legacy) {
  std::string where = path + "node " + std::to_string(index);
  if (!v.is_object()) Fail(where, std::string("expected a node object, found ") + TypeName(v));
  if (v.contains("name") && v["name"].is_string()) {
    where += " ('" + v["name"].get<std::string>() + "')";
  }
  JSONNode node;
  bool has_op = false, has_name = false, has_inputs = false;
  AttrDict param;
  for (const auto& kv : v.items()) {
    const std::string& key = kv.key();
    const Json& value = kv.value();
    if (key == "op") {
      if (!value.is_string()) Fail(where, "\"op\" must be a string");
      node.op_name = value.get<std::string>();
      has_op = true;
    } else if (key == "name") {
      if (!value.is_string()) Fail(where, "\"name\" must be a string");
      node.name = value.get<std::string>();
      has_name = true;
    } else if (key == "inputs") {
      if (!value.is_array()) Fail(where, "\"inputs\" must be an array of entries");
      for (size_t i = 0; i < value.size(); ++i) {
        node.inputs.push_back(
            ReadEntry(value[i], where + ": inputs[" + std::to_string(i) + "]", legacy));
      }
      has_inputs = true;
    } else if (key == "attrs" || key == "attr") {
      // MXNet reads both into one map and clears it first: the later key in the file wins.
      node.dict = ReadStringMap(value, where + ": \"" + key + "\"");
      if (key == "attr") *legacy = true;
    } else if (key == "param") {
      param = ReadStringMap(value, where + ": \"param\"");
      *legacy = true;
    } else if (key == "control_deps") {
      if (!value.is_array()) Fail(where, "\"control_deps\" must be an array of node indices");
      for (size_t i = 0; i < value.size(); ++i) {
        node.control_deps.push_back(
            ReadUInt(value[i], where + ": control_deps[" + std::to_string(i) + "]"));
      }
    } else if (key == "subgraphs") {
      if (!value.is_array()) Fail(where, "\"subgraphs\" must be an array of graphs");
      if (depth + 1 > kMaxSubgraphDepth) {
        Fail(where, "subgraphs nest deeper than " + std::to_string(kMaxSubgraphDepth) + " levels");
      }
      for (size_t i = 0; i < value.size(); ++i) {
        node.subgraphs.push_back(
            ReadGraph(value[i], where + ": subgraphs[" + std::to_string(i) + "]: ", depth + 1));
      }
    } else if (key == "backward_source_id") {
      if (!value.is_number_integer()) Fail(where, "\"backward_source_id\" must be an integer");
    } else {
      Fail(where, "unknown key \"" + key +
                      "\" (a node has op, name, attrs, inputs, control_deps, subgraphs and the "
                      "legacy attr, param, backward_source_id)");
    }
  }
  if (!has_op) Fail(where, "missing required key \"op\"");
  if (!has_name) Fail(where, "missing required key \"name\"");
  if (!has_inputs) Fail(where, "missing required key \"inputs\"");
  // Pre-NNVM op parameters: merged without overwriting what "attr"/"attrs" gave.
  for (auto& kv : param) node.dict.insert(kv);
  return node;
}

void Reader::ReadGraphAttrs(const Json& v, JSONGraph* g) const {
  if (!v.is_object()) Fail("\"attrs\"", std::string("expected an object, found ") + TypeName(v));
  for (const auto& kv : v.items()) {
    const Json& pair = kv.value();
    std::string where = "attrs." + kv.key();
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string()) {
      Fail(where, "expected a [type_name, value] pair");
    }
    if (kv.key() == "mxnet_version") {
      if (pair[0].get<std::string>() != "int" || !pair[1].is_number_integer()) {
        // Never dump() a value that may be nested: the serializer recurses once per level.
        Fail(where, "expected [\"int\", <version>], found [\"" + pair[0].get<std::string>() +
                        "\", " + (pair[1].is_primitive() ? pair[1].dump() : TypeName(pair[1])) +
                        "]");
      }
      int64_t version = pair[1].get<int64_t>();
      if (version < 0 || version > std::numeric_limits<int>::max()) {
        Fail(where, "version " + std::to_string(version) + " is out of range");
      }
      g->mxnet_version = static_cast<int>(version);
      g->has_version = true;
    }
  }
}

JSONGraph Reader::ReadStructure(const std::string& text) {
  std::string escaped;
  const std::string* input = EscapeControlCharacters(text, &escaped) ? &escaped : &text;

  Json root;
  try {
    root = Json::parse(*input);
  } catch (const std::exception& e) {
    HN_THROW(kFormatError) << source_ << ": not valid JSON: " << e.what();
  }
  if (!root.is_object()) {
    HN_THROW(kFormatError) << source_ << ": expected a symbol JSON object, found "
                           << TypeName(root);
  }
  return ReadGraph(root, "", 0);
}

JSONGraph Reader::ReadGraph(const Json& root, const std::string& path, int depth) {
  const std::string top = path.empty() ? "top level" : path.substr(0, path.size() - 2);
  if (!root.is_object()) Fail(top, std::string("expected a graph object, found ") + TypeName(root));
  JSONGraph g;
  g.source = path.empty() ? source_ : source_ + ": " + top;
  const Json* nodes = nullptr;
  const Json* arg_nodes = nullptr;
  const Json* heads = nullptr;
  for (const auto& kv : root.items()) {
    const std::string& key = kv.key();
    const Json& value = kv.value();
    if (key == "nodes") {
      nodes = &RequireArray(value, path + "\"nodes\"");
    } else if (key == "arg_nodes") {
      arg_nodes = &RequireArray(value, path + "\"arg_nodes\"");
    } else if (key == "heads") {
      heads = &RequireArray(value, path + "\"heads\"");
    } else if (key == "node_row_ptr") {
      // Ignored, like MXNet does, but it must have the right type.
      if (!value.is_array()) Fail(path + "\"node_row_ptr\"", "expected an array of integers");
      for (size_t i = 0; i < value.size(); ++i)
        ReadUInt(value[i], path + "node_row_ptr[" + std::to_string(i) + "]");
    } else if (key == "attrs") {
      ReadGraphAttrs(value, &g);
    } else {
      Fail(top, "unknown key \"" + key +
                    "\" (a symbol file has nodes, arg_nodes, node_row_ptr, heads, attrs)");
    }
  }
  if (nodes == nullptr) Fail(top, "missing required key \"nodes\"");
  if (arg_nodes == nullptr) Fail(top, "missing required key \"arg_nodes\"");
  if (heads == nullptr) Fail(top, "missing required key \"heads\"");

  total_nodes_ += nodes->size();
  HN_CHECK(static_cast<int64_t>(total_nodes_) <= GetLimit(Limit::kMaxNodes), kFormatError)
      << source_ << ": the graph has " << total_nodes_
      << (depth > 0 ? " nodes counting its subgraphs" : " nodes") << ", above the node limit"
      << LimitNote(Limit::kMaxNodes);
  for (size_t i = 0; i < nodes->size(); ++i) {
    g.nodes.push_back(ReadNode((*nodes)[i], i, path, depth, &g.legacy_keys));
  }
  HN_CHECK(g.nodes.size() <= std::numeric_limits<uint32_t>::max(), kFormatError)
      << source_ << ": too many nodes";
  const uint32_t num_nodes = static_cast<uint32_t>(g.nodes.size());
  auto check_ref = [&](uint32_t id, const std::string& where) {
    if (id >= num_nodes) {
      Fail(where, "node index " + std::to_string(id) + " is out of range (the file has " +
                      std::to_string(num_nodes) + " nodes)");
    }
  };
  for (uint32_t nid = 0; nid < num_nodes; ++nid) {
    const JSONNode& n = g.nodes[nid];
    const std::string where = path + internal::DescribeJSONNode(g, nid);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      check_ref(n.inputs[i].node_id, where + ": inputs[" + std::to_string(i) + "]");
    for (size_t i = 0; i < n.control_deps.size(); ++i)
      check_ref(n.control_deps[i], where + ": control_deps[" + std::to_string(i) + "]");
  }
  for (size_t i = 0; i < heads->size(); ++i) {
    std::string where = path + "heads[" + std::to_string(i) + "]";
    g.heads.push_back(ReadEntry((*heads)[i], where, &g.legacy_keys));
    check_ref(g.heads.back().node_id, where);
  }
  for (size_t i = 0; i < arg_nodes->size(); ++i) {
    std::string where = path + "arg_nodes[" + std::to_string(i) + "]";
    uint32_t id = ReadUInt((*arg_nodes)[i], where);
    check_ref(id, where);
    if (g.nodes[id].op_name != "null") {
      Fail(where, "lists " + internal::DescribeJSONNode(g, id) + ", which is an operator (" +
                      g.nodes[id].op_name + "), not a variable");
    }
    g.arg_nodes.push_back(id);
  }
  return g;
}

// ---------------------------------------------------------------------------------------------
// Reading: ops, DAG check, build

// Every operator of the graph and its subgraphs that the registry lacks, with its nodes.
void CollectUnsupported(const JSONGraph& g, UnsupportedOps* found) {
  const OpRegistry& registry = OpRegistry::Global();
  for (const JSONNode& n : g.nodes) {
    if (n.op_name != "null" && registry.Find(n.op_name) == nullptr) {
      std::string node = n.name;
      auto op_type = n.dict.find("op_type");
      if (n.op_name == "Custom" && op_type != n.dict.end())
        node += " (op_type " + op_type->second + ")";
      (*found)[n.op_name].push_back(node);
    }
    for (const JSONGraph& sub : n.subgraphs) CollectUnsupported(sub, found);
  }
}

// One error naming every unsupported operator (not only the first), so a user sees at once
// what a file needs.
void CheckSupported(const JSONGraph& g) {
  UnsupportedOps found;
  CollectUnsupported(g, &found);
  if (found.empty()) return;
  constexpr size_t kNodesShown = 5;
  Error err(StatusCode::kNotFound);
  err << g.source << ": " << found.size() << (found.size() == 1 ? " operator is" : " operators are")
      << " not supported by hybridnet: ";
  bool first = true;
  for (const auto& kv : found) {
    err << (first ? "" : "; ") << "'" << kv.first << "' ("
        << (kv.second.size() == 1 ? "node " : "nodes ");
    for (size_t i = 0; i < kv.second.size() && i < kNodesShown; ++i)
      err << (i ? ", " : "") << "'" << kv.second[i] << "'";
    if (kv.second.size() > kNodesShown) err << " and " << kv.second.size() - kNodesShown << " more";
    err << ")";
    if (kv.first == "Custom") {
      err << ": a Python custom operator (mx.operator.CustomOp), whose code lives only in the "
             "Python process that registered it, so this model cannot run outside that process";
    }
    first = false;
  }
  err << ". `hybridnet ops` lists the supported operators";
  throw err;
}

void ResolveOps(JSONGraph* g) {
  const OpRegistry& registry = OpRegistry::Global();
  for (uint32_t nid = 0; nid < g->nodes.size(); ++nid) {
    JSONNode& n = g->nodes[nid];
    if (n.op_name == "null") {
      HN_CHECK(n.inputs.empty(), kFormatError)
          << g->source << ": " << internal::DescribeJSONNode(*g, nid)
          << ": a variable (op \"null\") must have no inputs, found " << n.inputs.size();
      HN_CHECK(n.subgraphs.empty(), kFormatError)
          << g->source << ": " << internal::DescribeJSONNode(*g, nid)
          << ": a variable (op \"null\") must have no subgraphs";
      continue;
    }
    n.op = registry.Find(n.op_name);  // CheckSupported ran first
    HN_CHECK(!n.op->internal, kFormatError)
        << g->source << ": " << internal::DescribeJSONNode(*g, nid) << ": operator '" << n.op_name
        << "' is internal to hybridnet and cannot appear in a symbol file";
  }
}

// Post-order DFS from the heads (inputs left to right, then control deps), then from every node
// not reached; fails on a cycle. Iterative, so deep graphs cannot overflow the stack.
void SortTopologically(JSONGraph* g) {
  const size_t n = g->nodes.size();
  std::vector<uint8_t> state(n, 0);  // 0 new, 1 on the stack, 2 done
  std::vector<std::pair<uint32_t, size_t>> stack;
  g->topo_order.clear();
  auto visit =
      [&](uint32_t root) {
        if (state[root] != 0) return;
        state[root] = 1;
        stack.emplace_back(root, 0);
        while (!stack.empty()) {
          uint32_t nid = stack.back().first;
          size_t next = stack.back().second;
          const JSONNode& node = g->nodes[nid];
          if (next < node.inputs.size() + node.control_deps.size()) {
            ++stack.back().second;
            uint32_t child = next < node.inputs.size()
                                 ? node.inputs[next].node_id
                                 : node.control_deps[next - node.inputs.size()];
            if (state[child] == 1) {
              HN_THROW(kFormatError)
                  << g->source << ": " << internal::DescribeJSONNode(*g, nid) << " depends on "
                  << internal::DescribeJSONNode(*g, child)
                  << ", which depends on it in turn: the graph has a cycle (nodes must form a DAG)";
            }
            if (state[child] == 0) {
              state[child] = 1;
              stack.emplace_back(child, 0);
            }
            continue;
          }
          state[nid] = 2;
          g->topo_order.push_back(nid);
          stack.pop_back();
        }
      };
  for (const JSONEntry& e : g->heads) visit(e.node_id);
  for (uint32_t nid = 0; nid < n; ++nid) visit(nid);
}

Symbol BuildGraph(JSONGraph* g);

Symbol BuildSymbol(JSONGraph* g) {
  std::vector<std::shared_ptr<Node>> nodes(g->nodes.size());
  for (auto& ptr : nodes) ptr = std::make_shared<Node>();
  for (size_t nid = 0; nid < g->nodes.size(); ++nid) {
    JSONNode& jn = g->nodes[nid];
    Node& node = *nodes[nid];
    node.attrs = std::move(jn.attrs);  // with its subgraphs (BuildGraph)
    for (const JSONEntry& e : jn.inputs)
      node.inputs.push_back(NodeEntry{nodes[e.node_id], e.index, e.version});
    for (uint32_t dep : jn.control_deps) node.control_deps.push_back(nodes[dep]);
  }
  Symbol symbol;
  for (const JSONEntry& e : g->heads)
    symbol.outputs.push_back(NodeEntry{nodes[e.node_id], e.index, e.version});
  return symbol;
}

// A read graph (the file's, or a subgraph) checked, upgraded and built into Nodes.
Symbol BuildGraph(JSONGraph* g) {
  ResolveOps(g);
  SortTopologically(g);
  for (JSONNode& jn : g->nodes) {
    for (JSONGraph& sub : jn.subgraphs) {
      if (!sub.has_version) sub.mxnet_version = g->mxnet_version;
      jn.built_subgraphs.push_back(std::make_shared<const Symbol>(BuildGraph(&sub)));
    }
  }
  internal::UpgradeJSONGraph(g);
  return BuildSymbol(g);
}

}  // namespace

namespace {

// One graph object: the file's (with the top-level attrs) or a control-flow op's subgraph.
void WriteGraph(JSONLayoutWriter* w, const Symbol& symbol, bool top_level) {
  IndexedGraph graph(symbol.outputs);
  const uint32_t num_nodes = static_cast<uint32_t>(graph.num_nodes());
  std::vector<uint32_t> arg_nodes;
  std::vector<uint32_t> row_ptr{0};
  for (uint32_t nid = 0; nid < num_nodes; ++nid) {
    const Node& node = *graph[nid].node;
    if (node.IsVariable()) {
      arg_nodes.push_back(nid);
      row_ptr.push_back(row_ptr.back() + 1);
      continue;
    }
    HN_CHECK(!node.attrs.op->internal, kInternal)
        << "SaveJSON: node '" << node.name() << "' uses operator '" << node.attrs.op->name
        << "', which is internal to hybridnet (created by a graph pass) and has no MXNet form";
    row_ptr.push_back(row_ptr.back() + node.attrs.op->NumTotalOutputs(node.attrs));
  }

  w->BeginObject(true);
  w->Key("nodes");
  w->BeginArray(true);
  for (uint32_t nid = 0; nid < num_nodes; ++nid) {
    const Node& node = *graph[nid].node;
    w->Item();
    w->BeginObject(true);
    w->Key("op");
    w->WriteString(node.IsVariable() ? "null" : node.attrs.op->name);
    w->Key("name");
    w->WriteString(node.name());
    if (!node.attrs.dict.empty()) {
      w->Key("attrs");
      WriteStringMap(w, node.attrs.dict);
    }
    w->Key("inputs");
    w->BeginArray(node.inputs.size() > 10);
    for (const NodeEntry& e : node.inputs) {
      w->Item();
      WriteEntry(w, graph.node_id(e.node.get()), e.index, e.version);
    }
    w->EndArray();
    if (!node.control_deps.empty()) {
      std::vector<uint32_t> deps;
      for (const auto& d : node.control_deps) deps.push_back(graph.node_id(d.get()));
      w->Key("control_deps");
      WriteUIntArray(w, deps);
    }
    if (!node.attrs.subgraphs.empty()) {
      w->Key("subgraphs");
      w->BeginArray(true);
      for (const auto& subgraph : node.attrs.subgraphs) {
        w->Item();
        WriteGraph(w, *subgraph, false);
      }
      w->EndArray();
    }
    w->EndObject();
  }
  w->EndArray();
  w->Key("arg_nodes");
  WriteUIntArray(w, arg_nodes);
  w->Key("node_row_ptr");
  WriteUIntArray(w, row_ptr);
  w->Key("heads");
  w->BeginArray(symbol.outputs.size() > 10);
  for (const NodeEntry& e : symbol.outputs) {
    w->Item();
    WriteEntry(w, graph.node_id(e.node.get()), e.index, e.version);
  }
  w->EndArray();
  if (top_level) {
    w->Key("attrs");
    w->BeginObject(false);
    w->Key("mxnet_version");
    w->BeginArray(false);
    w->Item();
    w->WriteString("int");
    w->Item();
    w->WriteInt(kMXNetVersion);
    w->EndArray();
    w->EndObject();
  }
  w->EndObject();
}

}  // namespace

std::string SaveJSON(const Symbol& symbol) {
  std::string out;
  JSONLayoutWriter w(&out);
  WriteGraph(&w, symbol, true);
  return out;
}

Symbol LoadJSON(const std::string& json, const std::string& source_name) {
  JSONGraph g = Reader(source_name).ReadStructure(json);
  CheckSupported(g);
  return BuildGraph(&g);
}

JSONFileInfo InspectJSON(const std::string& json, const std::string& source_name) {
  JSONGraph g = Reader(source_name).ReadStructure(json);
  JSONFileInfo info;
  info.mxnet_version = g.mxnet_version;
  info.legacy_keys = g.legacy_keys;
  CollectUnsupported(g, &info.unsupported_ops);
  return info;
}

}  // namespace hybridnet
