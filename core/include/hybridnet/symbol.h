// Symbol: the graph IR. A Symbol is a list of output entries of a DAG of Nodes; variables are
// nodes without an op. Composition follows MXNet's symbol API:
//
//   Symbol data = Symbol::Var("data");
//   Symbol fc = Symbol::Create("FullyConnected", {data}, {{"num_hidden", "128"}}, "fc1");
//   // fc1_weight and fc1_bias were created as variables
//   std::cout << fc.ToJSON();
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hybridnet/ndarray.h"
#include "hybridnet/op.h"

namespace hybridnet {

/// A graph node: an op applied to input entries, or a variable (no op).
struct Node {
  NodeAttrs attrs;  ///< attrs.op == nullptr for variables; dict holds "__shape__" etc.
  std::vector<NodeEntry> inputs;                    ///< the outputs of other nodes this node reads
  std::vector<std::shared_ptr<Node>> control_deps;  ///< nodes that must run first (no data flow)
  uint32_t mutation_count = 0;  ///< variables: times an op declared this input mutable

  /// Copyable: a copy shares the input nodes.
  ///@{
  Node() = default;
  Node(const Node&) = default;
  Node& operator=(const Node&) = default;
  ///@}
  /// Releases the nodes this one alone keeps alive without recursing, so a graph of any depth
  /// (a hostile file's million-node chain) is destroyed without exhausting the stack.
  ~Node();

  /// True for a variable (a graph input or parameter).
  bool IsVariable() const { return attrs.op == nullptr; }
  /// The node name ("fc1", "data").
  const std::string& name() const { return attrs.name; }
  /// The number of outputs the op gives for these attributes (1 for a variable).
  uint32_t NumOutputs() const;
};

/// A symbolic program (MXNet's Symbol): the output entries of a graph of Nodes. Cheap to copy
/// (nodes are shared); composition never changes an existing symbol.
class Symbol {
 public:
  std::vector<NodeEntry> outputs;  ///< the graph's heads, in order

  /// A variable; `attrs` are free-form ("__shape__": "(256, 0)", ...).
  static Symbol Var(const std::string& name, const AttrDict& attrs = {});
  /// Applies op `op_name` to `inputs`. Missing trailing inputs become variables named
  /// "<name>_<input name>" (MXNet symbol API); `name` defaults to "<op lower-case><n>".
  static Symbol Create(const std::string& op_name, const std::vector<Symbol>& inputs,
                       const AttrDict& attrs = {}, const std::string& name = "");
  /// Applies an op whose attributes are already parsed (`attrs.op` set).
  static Symbol Create(const NodeAttrs& attrs, const std::vector<Symbol>& inputs);
  /// The next automatic node name for `hint` in the current name scope ("<hint><n>", the
  /// counter Create's automatic names advance), without the scope's prefix, which Create adds
  /// to a given name: frontends name nodes after the function an op was called through.
  static std::string NextAutoName(const std::string& hint);
  /// The outputs of several symbols as one multi-output symbol (MXNet's Group).
  static Symbol Group(const std::vector<Symbol>& symbols);

  /// Output i as a symbol of its own.
  Symbol operator[](size_t i) const;
  /// The number of outputs.
  size_t NumOutputs() const { return outputs.size(); }

  /// Variables in post-order DFS order: all of them, arguments only, auxiliary states only.
  ///@{
  std::vector<std::string> ListInputs() const;
  std::vector<std::string> ListArguments() const;
  std::vector<std::string> ListAuxiliaryStates() const;
  ///@}
  /// "<node>_output" (or "<node>_<output name>") for each output; a variable gives its name.
  std::vector<std::string> ListOutputs() const;
  /// Attribute of the single-output symbol's node, "" when absent.
  std::string GetAttr(const std::string& key) const;

  /// Shapes of the arguments, outputs and auxiliary states, in the order of their lists.
  struct ShapeResult {
    std::vector<Shape> arg_shapes;  ///< in ListArguments() order
    std::vector<Shape> out_shapes;  ///< in ListOutputs() order
    std::vector<Shape> aux_shapes;  ///< in ListAuxiliaryStates() order
    bool complete = false;          ///< every shape known
  };
  /// Infers shapes from the known ones (keyed by variable name; "__shape__" hints are used
  /// too). With partial = false an incomplete result throws kShapeError naming what is unknown.
  ShapeResult InferShape(const std::map<std::string, Shape>& known, bool partial = false) const;
  /// Dtypes of the arguments, outputs and auxiliary states, in the order of their lists.
  struct TypeResult {
    std::vector<DType> arg_types;  ///< in ListArguments() order
    std::vector<DType> out_types;  ///< in ListOutputs() order
    std::vector<DType> aux_types;  ///< in ListAuxiliaryStates() order
    bool complete = false;         ///< every dtype known
  };
  /// Infers dtypes from the known ones, as InferShape does shapes.
  TypeResult InferType(const std::map<std::string, DType>& known, bool partial = false) const;

  /// MXNet 1.9 JSON (io/json.h), byte-compatible.
  std::string ToJSON() const;
  /// Parses symbol JSON of MXNet 0.8 to 1.9 (old layouts are upgraded).
  static Symbol FromJSON(const std::string& json);
  /// Reads a symbol JSON file.
  static Symbol Load(const std::string& path);
  /// Writes ToJSON() to `path`.
  void Save(const std::string& path) const;

  /// A copy of the graph with fresh nodes (so edits do not affect this symbol).
  Symbol Copy() const;
  /// "<Symbol name>" as MXNet prints it ("<Symbol group [a, b]>" for several outputs).
  std::string ToString() const;
};

/// Prints symbol.ToString().
std::ostream& operator<<(std::ostream& os, const Symbol& symbol);

/// A read-only, index-based view of a graph: nodes in post-order DFS (topological) order.
class IndexedGraph {
 public:
  /// Indexes the graph reaching `outputs`.
  explicit IndexedGraph(const std::vector<NodeEntry>& outputs);

  /// A node output by index.
  struct Entry {
    uint32_t node_id;  ///< the node's index
    uint32_t index;    ///< which output of the node
    uint32_t version;  ///< the entry's version, as in NodeEntry
  };
  /// A node and its inputs by index.
  struct NodeInfo {
    const Node* node;                    ///< the node
    std::shared_ptr<Node> owner;         ///< keeps the node alive
    std::vector<Entry> inputs;           ///< its inputs
    std::vector<uint32_t> control_deps;  ///< indices of its control dependencies
  };

  /// The number of nodes.
  size_t num_nodes() const { return nodes_.size(); }
  /// Node `node_id`.
  const NodeInfo& operator[](size_t node_id) const { return nodes_[node_id]; }
  /// The index of `node` (std::out_of_range when it is not in the graph).
  uint32_t node_id(const Node* node) const { return node_ids_.at(node); }
  /// Whether `node` is in the graph.
  bool contains(const Node* node) const { return node_ids_.count(node) > 0; }
  /// Entry id = row_ptr[node_id] + output index; rows count outputs (hidden ones when read).
  uint32_t entry_id(uint32_t node_id, uint32_t index) const { return row_ptr_[node_id] + index; }
  /// The entry id of `e`.
  uint32_t entry_id(const Entry& e) const { return entry_id(e.node_id, e.index); }
  /// The number of entries (node outputs).
  size_t num_entries() const { return row_ptr_.back(); }
  /// The graph's outputs.
  const std::vector<Entry>& outputs() const { return outputs_; }
  /// Variable node ids in order.
  const std::vector<uint32_t>& input_nodes() const { return input_nodes_; }
  /// True for variables fed to a mutable (auxiliary) input slot.
  bool is_aux(uint32_t node_id) const { return aux_nodes_.count(node_id) > 0; }

 private:
  std::vector<NodeInfo> nodes_;
  // Hashed: graphs are indexed at every backward, and node lookups took most of that time.
  std::unordered_map<const Node*, uint32_t> node_ids_;
  std::vector<uint32_t> row_ptr_;
  std::vector<Entry> outputs_;
  std::vector<uint32_t> input_nodes_;
  std::map<uint32_t, bool> aux_nodes_;
};

}  // namespace hybridnet
