// Operator fusion for inference. Every fused op computes what the ops it replaces compute, float
// operation by float operation, so fused and unfused graphs are bit-identical (fast_math aside):
//  * Convolution [+ BatchNorm | _contrib_BatchNormWithReLU] [+ elemwise_add]
//      [+ Activation | clip] -> _hn_convolution (in that order; the add's other input
//      becomes the residual input)
//  * FullyConnected + Activation    -> _hn_fully_connected_act
//  * BatchNorm + Activation(relu)   -> _contrib_BatchNormWithReLU
// A producer is fused only into its only reader (graph outputs count as readers), and a
// BatchNorm only when it shows its first output alone and normalizes the channel axis.
#include <cstdint>
#include <set>

#include "pass/passes.h"

namespace hybridnet {
namespace internal {

namespace {

// The attribute as written, else the op's declared default.
std::string AttrOrDefault(const Node& node, const std::string& key) {
  auto it = node.attrs.dict.find(key);
  if (it != node.attrs.dict.end()) return it->second;
  for (const FieldInfo& f : node.attrs.op->fields)
    if (f.key == key) return f.default_text;
  return "";
}

class Fuser {
 public:
  explicit Fuser(const Symbol& graph) : g_(graph.outputs), uses_(g_.num_entries(), 0),
                                        readers_(g_.num_entries()) {
    for (uint32_t nid = 0; nid < g_.num_nodes(); ++nid) {
      for (const auto& e : g_[nid].inputs) {
        ++uses_[g_.entry_id(e)];
        readers_[g_.entry_id(e)].push_back(nid);
      }
    }
    for (const auto& e : g_.outputs()) ++uses_[g_.entry_id(e)];
  }

  const IndexedGraph& graph() const { return g_; }
  Node* node(uint32_t nid) const { return g_[nid].owner.get(); }
  bool Removed(uint32_t nid) const { return removed_.count(nid) > 0; }

  // The op node reading output 0 of `nid` when it is the only reader (and not fused away into
  // another node already), else kNone.
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t SoleReader(uint32_t nid) const {
    const uint32_t eid = g_.entry_id(nid, 0);
    if (uses_[eid] != 1 || readers_[eid].size() != 1 || Removed(readers_[eid][0])) return kNone;
    return readers_[eid][0];
  }
  // The node `nid` when it runs `op`.
  const Node* NodeOf(uint32_t nid, const Op* op) const {
    if (nid == kNone || op == nullptr) return nullptr;
    const Node* n = node(nid);
    return !n->IsVariable() && n->attrs.op == op ? n : nullptr;
  }

  // `keep` takes over the nodes of `chain` (all but the last are dropped): it gets the fused
  // op, `dict` and `inputs`, and keeps the last node's name and readers.
  void Replace(const std::vector<uint32_t>& chain, const Op& fused, const AttrDict& dict,
               std::vector<NodeEntry> inputs) {
    Node* last = node(chain.back());
    last->attrs = MakeNodeAttrs(fused, last->attrs.name, dict);
    last->inputs = std::move(inputs);
    for (size_t i = 0; i + 1 < chain.size(); ++i) removed_.insert(chain[i]);
    fused_ += chain.size() - 1;
  }

  size_t num_fused() const { return fused_; }

 private:
  IndexedGraph g_;
  std::vector<int> uses_;
  std::vector<std::vector<uint32_t>> readers_;
  std::set<uint32_t> removed_;
  size_t fused_ = 0;
};

bool IsOp(const Node* n, const Op* op) {
  return op != nullptr && !n->IsVariable() && n->attrs.op == op;
}

// Fuses the BatchNorm, residual add and activation that follow convolution `conv`.
void FuseConvolutionChain(Fuser* f, uint32_t conv, bool fast_math) {
  const OpRegistry& registry = OpRegistry::Global();
  static const Op* const batch_norm = registry.Find("BatchNorm");
  static const Op* const batch_norm_relu = registry.Find("_contrib_BatchNormWithReLU");
  static const Op* const add = registry.Find("elemwise_add");
  static const Op* const activation = registry.Find("Activation");
  static const Op* const clip = registry.Find("clip");
  const Node* c = f->node(conv);
  const std::string layout = AttrOrDefault(*c, "layout");
  if (layout != "None" && layout != "" && layout[1] != 'C') return;  // channel-last: GPU-only
  AttrDict dict = c->attrs.dict;
  std::vector<NodeEntry> inputs = c->inputs;
  std::vector<uint32_t> chain = {conv};
  bool has_act = false;

  uint32_t next = f->SoleReader(conv);
  const Node* bn = f->NodeOf(next, batch_norm);
  if (bn == nullptr) bn = f->NodeOf(next, batch_norm_relu);
  if (bn != nullptr && bn->inputs[0].node.get() == c && bn->NumOutputs() == 1 &&
      std::stoi(AttrOrDefault(*bn, "axis")) == 1) {
    dict["bn"] = "True";
    dict["bn_eps"] = AttrOrDefault(*bn, "eps");
    dict["bn_fix_gamma"] = AttrOrDefault(*bn, "fix_gamma");
    inputs.insert(inputs.end(), bn->inputs.begin() + 1, bn->inputs.end());
    if (bn->attrs.op == batch_norm_relu) {
      dict["act_type"] = "relu";
      has_act = true;
    }
    chain.push_back(next);
    next = f->SoleReader(next);
  }
  const Node* head = f->node(chain.back());
  const Node* sum = has_act ? nullptr : f->NodeOf(next, add);
  if (sum != nullptr) {
    const bool lhs = sum->inputs[0].node.get() == head;
    const NodeEntry& other = sum->inputs[lhs ? 1 : 0];
    if (other.node.get() != head) {
      dict["residual"] = "True";
      inputs.push_back(other);
      chain.push_back(next);
      next = f->SoleReader(next);
    }
  }
  const Node* act = nullptr;
  if (!has_act && act == nullptr) act = f->NodeOf(next, activation);
  if (!has_act && act == nullptr) act = f->NodeOf(next, clip);
  if (act != nullptr && act->attrs.op == clip) {
    dict["clip"] = "True";
    dict["clip_a_min"] = act->attrs.dict.at("a_min");
    dict["clip_a_max"] = act->attrs.dict.at("a_max");
    chain.push_back(next);
  } else if (act != nullptr) {
    dict["act_type"] = act->attrs.dict.at("act_type");
    chain.push_back(next);
  }
  if (chain.size() == 1) return;
  if (fast_math) dict["fast_math"] = "True";
  f->Replace(chain, registry.Get("_hn_convolution"), dict, std::move(inputs));
}

// Producer + Activation fusions: the activation node keeps its identity and takes over the
// producer's inputs and attributes.
void FuseActivations(Fuser* f) {
  const OpRegistry& registry = OpRegistry::Global();
  const Op* activation = registry.Find("Activation");
  struct Rule {
    const char* producer;
    const Op* fused;
    bool relu_only;
  };
  const Rule rules[] = {
      {"FullyConnected", registry.Find("_hn_fully_connected_act"), false},
      {"BatchNorm", registry.Find("_contrib_BatchNormWithReLU"), true},
  };
  const IndexedGraph& g = f->graph();
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    Node* act = f->node(nid);
    if (f->Removed(nid) || !IsOp(act, activation)) continue;
    const NodeEntry& src = act->inputs[0];
    if (src.node->IsVariable() || src.index != 0) continue;
    const uint32_t producer = g.node_id(src.node.get());
    if (f->Removed(producer)) continue;
    const Rule* rule = nullptr;
    for (const Rule& r : rules)
      if (r.fused != nullptr && src.node->attrs.op->name == r.producer) rule = &r;
    if (rule == nullptr) continue;
    const std::string& act_type = act->attrs.dict.at("act_type");
    if (rule->relu_only && act_type != "relu") continue;
    if (src.node->NumOutputs() != 1) continue;  // BatchNorm with output_mean_var
    if (f->SoleReader(producer) != nid) continue;
    AttrDict dict = src.node->attrs.dict;
    if (!rule->relu_only) dict["act_type"] = act_type;
    f->Replace({producer, nid}, *rule->fused, dict, src.node->inputs);
  }
}

}  // namespace

Symbol FuseOps(const Symbol& symbol, size_t* num_fused, bool fast_math) {
  *num_fused = 0;
  const Op* convolution = OpRegistry::Global().Find("Convolution");
  if (convolution == nullptr) return symbol;
  Symbol graph = symbol.Copy();
  Fuser fuser(graph);
  const IndexedGraph& g = fuser.graph();
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    if (IsOp(fuser.node(nid), convolution)) FuseConvolutionChain(&fuser, nid, fast_math);
  }
  FuseActivations(&fuser);
  *num_fused = fuser.num_fused();
  return graph;
}

}  // namespace internal
}  // namespace hybridnet
