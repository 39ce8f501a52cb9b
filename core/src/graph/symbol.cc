#include "hybridnet/symbol.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <limits>
#include <unordered_map>

#include "graph/naming.h"
#include "hybridnet/io/json.h"
#include "io/params_record.h"
#include "ops/kept_outputs.h"
#include "pass/passes.h"

namespace hybridnet {

Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending;
  auto take_inputs = [&pending](Node& n) {
    for (auto& e : n.inputs)
      if (e.node) pending.push_back(std::move(e.node));
    n.inputs.clear();
    for (auto& d : n.control_deps)
      if (d) pending.push_back(std::move(d));
    n.control_deps.clear();
  };
  take_inputs(*this);
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    // The last owner empties the node first, so its own destructor has nothing left to release.
    if (n.use_count() == 1) take_inputs(*n);
  }
}

uint32_t Node::NumOutputs() const { return IsVariable() ? 1 : attrs.op->NumOutputs(attrs); }

Symbol Symbol::Var(const std::string& name, const AttrDict& attrs) {
  HN_CHECK(!name.empty(), kInvalidArgument) << "Symbol::Var: the name must not be empty";
  auto node = std::make_shared<Node>();
  node->attrs.name = name;
  node->attrs.dict = attrs;
  Symbol s;
  s.outputs.push_back(NodeEntry{node, 0, 0});
  return s;
}

Symbol Symbol::Create(const std::string& op_name, const std::vector<Symbol>& inputs,
                      const AttrDict& attrs, const std::string& name) {
  const Op& op = OpRegistry::Global().Get(op_name);
  AttrDict dict = attrs;
  if (!op.key_var_num_args.empty() && dict.count(op.key_var_num_args) == 0) {
    dict[op.key_var_num_args] = std::to_string(inputs.size());
  }
  // MXNet's hint is the name the op was called by, so an alias names nodes after itself
  // (Symbol arithmetic calls _Plus: "_plus0", not "elemwise_add0").
  std::string hint = op_name;
  std::transform(hint.begin(), hint.end(), hint.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string node_name =
      name.empty() ? internal::AutoName(hint) : internal::NameScope::CurrentPrefix() + name;
  return Create(MakeNodeAttrs(op, node_name, std::move(dict)), inputs);
}

std::string Symbol::NextAutoName(const std::string& hint) {
  return internal::AutoName(hint).substr(internal::NameScope::CurrentPrefix().size());
}

Symbol Symbol::Create(const NodeAttrs& attrs, const std::vector<Symbol>& inputs) {
  const Op& op = *attrs.op;
  std::vector<std::string> input_names = op.InputNames(attrs);
  HN_CHECK(inputs.size() <= input_names.size(), kInvalidArgument)
      << DescribeNode(attrs) << ": takes " << input_names.size() << " inputs, got "
      << inputs.size();
  auto node = std::make_shared<Node>();
  node->attrs = attrs;
  for (size_t i = 0; i < input_names.size(); ++i) {
    if (i < inputs.size()) {
      HN_CHECK(inputs[i].outputs.size() == 1, kInvalidArgument)
          << DescribeNode(attrs) << ": input " << i << " ('" << input_names[i]
          << "') is a group of " << inputs[i].outputs.size() << " outputs; pass a single output";
      node->inputs.push_back(inputs[i].outputs[0]);
    } else {
      // MXNet copies the op's attributes onto the variables it creates for missing inputs.
      node->inputs.push_back(Var(attrs.name + "_" + input_names[i], attrs.dict).outputs[0]);
    }
  }
  for (uint32_t slot : op.mutable_inputs) {
    if (slot >= node->inputs.size()) continue;
    NodeEntry& entry = node->inputs[slot];
    if (entry.node->IsVariable()) entry.version = ++entry.node->mutation_count;
  }
  Symbol s;
  for (uint32_t i = 0; i < node->NumOutputs(); ++i) s.outputs.push_back(NodeEntry{node, i, 0});
  return s;
}

Symbol Symbol::Group(const std::vector<Symbol>& symbols) {
  Symbol s;
  for (const auto& sym : symbols)
    s.outputs.insert(s.outputs.end(), sym.outputs.begin(), sym.outputs.end());
  return s;
}

Symbol Symbol::operator[](size_t i) const {
  HN_CHECK(i < outputs.size(), kInvalidArgument)
      << "output index " << i << " out of range: the symbol has " << outputs.size() << " outputs";
  Symbol s;
  s.outputs.push_back(outputs[i]);
  return s;
}

std::vector<std::string> Symbol::ListInputs() const {
  IndexedGraph g(outputs);
  std::vector<std::string> names;
  for (uint32_t nid : g.input_nodes()) names.push_back(g[nid].node->name());
  return names;
}

std::vector<std::string> Symbol::ListArguments() const {
  IndexedGraph g(outputs);
  std::vector<std::string> names;
  for (uint32_t nid : g.input_nodes())
    if (!g.is_aux(nid)) names.push_back(g[nid].node->name());
  return names;
}

std::vector<std::string> Symbol::ListAuxiliaryStates() const {
  IndexedGraph g(outputs);
  std::vector<std::string> names;
  for (uint32_t nid : g.input_nodes())
    if (g.is_aux(nid)) names.push_back(g[nid].node->name());
  return names;
}

std::vector<std::string> Symbol::ListOutputs() const {
  std::vector<std::string> names;
  for (const auto& e : outputs) {
    if (e.node->IsVariable()) {
      names.push_back(e.node->name());
    } else if (e.node->attrs.op->list_output_names) {
      names.push_back(e.node->name() + "_" +
                      e.node->attrs.op->list_output_names(e.node->attrs).at(e.index));
    } else if (e.node->NumOutputs() == 1) {
      names.push_back(e.node->name() + "_output");
    } else {
      names.push_back(e.node->name() + "_output" + std::to_string(e.index));
    }
  }
  return names;
}

std::string Symbol::GetAttr(const std::string& key) const {
  HN_CHECK(outputs.size() == 1, kInvalidArgument) << "GetAttr needs a single-output symbol";
  const auto& dict = outputs[0].node->attrs.dict;
  auto it = dict.find(key);
  return it == dict.end() ? "" : it->second;
}

namespace {

template <typename T, typename Infer>
void CollectResults(const std::vector<NodeEntry>& outputs, const std::map<std::string, T>& known,
                    Infer infer, std::vector<T>* args, std::vector<T>* outs, std::vector<T>* auxs,
                    bool* complete) {
  IndexedGraph g(outputs);
  std::vector<T> values(g.num_entries());
  std::map<std::string, bool> used;
  for (uint32_t nid : g.input_nodes()) {
    auto it = known.find(g[nid].node->name());
    if (it != known.end()) {
      values[g.entry_id(nid, 0)] = it->second;
      used[it->first] = true;
    }
  }
  for (const auto& kv : known) {
    HN_CHECK(used.count(kv.first), kNotFound) << "'" << kv.first
                                              << "' is not an input of the symbol (inputs: " <<
        [&] {
          std::string s;
          for (uint32_t nid : g.input_nodes()) s += (s.empty() ? "" : ", ") + g[nid].node->name();
          return s;
        }() << ")";
  }
  *complete = infer(g, &values);
  for (uint32_t nid : g.input_nodes())
    (g.is_aux(nid) ? auxs : args)->push_back(values[g.entry_id(nid, 0)]);
  for (const auto& e : g.outputs()) outs->push_back(values[g.entry_id(e)]);
}

}  // namespace

Symbol::ShapeResult Symbol::InferShape(const std::map<std::string, Shape>& known,
                                       bool partial) const {
  ShapeResult r;
  CollectResults(outputs, known, internal::InferShapes, &r.arg_shapes, &r.out_shapes, &r.aux_shapes,
                 &r.complete);
  if (!partial && !r.complete) {
    auto args = ListArguments();
    std::string unknown;
    for (size_t i = 0; i < args.size(); ++i)
      if (!r.arg_shapes[i].IsKnown()) unknown += (unknown.empty() ? "" : ", ") + args[i];
    HN_THROW(kShapeError) << "shape inference is incomplete; give the shapes of: "
                          << (unknown.empty() ? std::string("(an inner node)") : unknown);
  }
  return r;
}

Symbol::TypeResult Symbol::InferType(const std::map<std::string, DType>& known,
                                     bool partial) const {
  TypeResult r;
  std::map<std::string, DType> given = known;
  CollectResults(outputs, given, internal::InferTypes, &r.arg_types, &r.out_types, &r.aux_types,
                 &r.complete);
  HN_CHECK(partial || r.complete, kTypeError) << "type inference is incomplete";
  return r;
}

std::string Symbol::ToJSON() const { return SaveJSON(*this); }

Symbol Symbol::FromJSON(const std::string& json) { return LoadJSON(json); }

Symbol Symbol::Load(const std::string& path) {
  return LoadJSON(internal::ReadFileBytes(path, "a symbol file"), path);
}

void Symbol::Save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  HN_CHECK(out.good(), kIOError) << "cannot write symbol file '" << path << "'";
  out << ToJSON();
  HN_CHECK(out.good(), kIOError) << "error while writing '" << path << "'";
}

Symbol Symbol::Copy() const {
  std::unordered_map<const Node*, std::shared_ptr<Node>> copies;
  IndexedGraph g(outputs);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node* old = g[nid].node;
    auto node = std::make_shared<Node>(*old);
    for (auto& e : node->inputs) e.node = copies.at(e.node.get());
    for (auto& d : node->control_deps) d = copies.at(d.get());
    copies[old] = node;
  }
  Symbol s;
  for (const auto& e : outputs)
    s.outputs.push_back(NodeEntry{copies.at(e.node.get()), e.index, e.version});
  return s;
}

std::string Symbol::ToString() const {
  if (outputs.size() == 1) return "<Symbol " + outputs[0].node->name() + ">";
  std::string s = "<Symbol group [";
  for (size_t i = 0; i < outputs.size(); ++i) s += (i ? ", " : "") + outputs[i].node->name();
  return s + "]>";
}

std::ostream& operator<<(std::ostream& os, const Symbol& symbol) { return os << symbol.ToString(); }

IndexedGraph::IndexedGraph(const std::vector<NodeEntry>& outputs) {
  // Iterative post-order DFS (inputs left to right, then control deps), as MXNet orders nodes.
  struct Frame {
    std::shared_ptr<Node> node;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  // A node's id is kOnStack while its inputs are visited (a node met again then closes a cycle);
  // one map for both states: graphs are indexed at every backward, and each entry is allocated.
  constexpr uint32_t kOnStack = std::numeric_limits<uint32_t>::max();
  auto child = [](const Node* n, size_t i) -> const std::shared_ptr<Node>& {
    return i < n->inputs.size() ? n->inputs[i].node : n->control_deps[i - n->inputs.size()];
  };
  for (const auto& head : outputs) {
    if (!node_ids_.emplace(head.node.get(), kOnStack).second) continue;  // indexed already
    stack.push_back(Frame{head.node});
    while (!stack.empty()) {
      Frame& top = stack.back();
      const Node* n = top.node.get();
      size_t num_children = n->inputs.size() + n->control_deps.size();
      if (top.next < num_children) {
        const auto& c = child(n, top.next++);
        const auto [it, first_visit] = node_ids_.emplace(c.get(), kOnStack);
        HN_CHECK(first_visit || it->second != kOnStack, kFormatError)
            << "the graph has a cycle through node '" << c->name() << "'";
        if (first_visit) stack.push_back(Frame{c});
        continue;
      }
      NodeInfo info;
      info.node = n;
      info.owner = top.node;
      uint32_t id = static_cast<uint32_t>(nodes_.size());
      info.inputs.reserve(n->inputs.size());
      for (const auto& e : n->inputs)
        info.inputs.push_back(Entry{node_ids_.at(e.node.get()), e.index, e.version});
      info.control_deps.reserve(n->control_deps.size());
      for (const auto& d : n->control_deps) info.control_deps.push_back(node_ids_.at(d.get()));
      node_ids_[n] = id;
      if (n->IsVariable()) input_nodes_.push_back(id);
      nodes_.push_back(std::move(info));
      stack.pop_back();
    }
  }
  // A node's row holds its visible outputs and, where the graph reads one (BatchNorm's gradient
  // reads its saved statistics, RNN's its kept forward), its hidden outputs up to the last one
  // read: the kernel writes those too.
  std::vector<uint32_t> row_size(nodes_.size());
  for (size_t nid = 0; nid < nodes_.size(); ++nid) row_size[nid] = nodes_[nid].node->NumOutputs();
  auto reads = [&](const Entry& e) {
    const Node* producer = nodes_[e.node_id].node;
    const uint32_t total =
        producer->IsVariable() ? 1u : internal::NumReadableOutputs(producer->attrs);
    if (e.index < total) row_size[e.node_id] = std::max(row_size[e.node_id], e.index + 1);
  };
  for (const auto& info : nodes_)
    for (const auto& e : info.inputs) reads(e);
  for (const auto& e : outputs) reads(Entry{node_ids_.at(e.node.get()), e.index, e.version});
  row_ptr_.assign(1, 0);
  for (uint32_t size : row_size) row_ptr_.push_back(row_ptr_.back() + size);
  for (const auto& info : nodes_) {
    if (info.node->IsVariable()) continue;
    for (uint32_t slot : info.node->attrs.op->mutable_inputs) {
      if (slot < info.inputs.size() && nodes_[info.inputs[slot].node_id].node->IsVariable())
        aux_nodes_[info.inputs[slot].node_id] = true;
    }
  }
  for (const auto& e : outputs) {
    const uint32_t nid = node_ids_.at(e.node.get());
    HN_CHECK(e.index < row_ptr_[nid + 1] - row_ptr_[nid], kFormatError)
        << "output " << e.index << " of node '" << e.node->name() << "' does not exist";
    outputs_.push_back(Entry{nid, e.index, e.version});
  }
  for (const auto& info : nodes_) {
    for (const auto& e : info.inputs) {
      HN_CHECK(e.index < row_ptr_[e.node_id + 1] - row_ptr_[e.node_id], kFormatError)
          << "node '" << info.node->name() << "' reads output " << e.index << " of '"
          << nodes_[e.node_id].node->name() << "', which has "
          << nodes_[e.node_id].node->NumOutputs() << " outputs";
    }
  }
}

}  // namespace hybridnet
