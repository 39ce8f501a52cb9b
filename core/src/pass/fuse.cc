// Operator fusion for inference (numerics unchanged: every fused op runs the same kernels as the
// ops it replaces, so fused and unfused graphs are bit-identical):
//  * FullyConnected + Activation -> _hn_fully_connected_act
//  * Convolution + Activation    -> _hn_convolution_act
//  * BatchNorm + Activation(relu) -> _contrib_BatchNormWithReLU
// A producer is fused only when the activation is its only consumer (and, for BatchNorm, when
// it shows only its first output).
#include <map>

#include "pass/passes.h"

namespace hybridnet {
namespace internal {

Symbol FuseOps(const Symbol& symbol, size_t* num_fused) {
  *num_fused = 0;
  const OpRegistry& registry = OpRegistry::Global();
  const Op* activation = registry.Find("Activation");
  if (activation == nullptr) return symbol;
  struct Rule {
    const char* producer;
    const Op* fused;
    bool relu_only;
  };
  const Rule rules[] = {
      {"FullyConnected", registry.Find("_hn_fully_connected_act"), false},
      {"Convolution", registry.Find("_hn_convolution_act"), false},
      {"BatchNorm", registry.Find("_contrib_BatchNormWithReLU"), true},
  };

  Symbol graph = symbol.Copy();
  IndexedGraph g(graph.outputs);
  std::vector<uint32_t> uses(g.num_entries(), 0);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid)
    for (const auto& e : g[nid].inputs) ++uses[g.entry_id(e)];
  for (const auto& e : g.outputs()) ++uses[g.entry_id(e)];

  // The activation node keeps its identity (name, consumers) and takes over the producer's
  // inputs and attributes.
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    Node* act = g[nid].owner.get();
    if (act->IsVariable() || act->attrs.op != activation) continue;
    const NodeEntry& src = act->inputs[0];
    if (src.node->IsVariable() || src.index != 0) continue;
    const Rule* rule = nullptr;
    for (const Rule& r : rules)
      if (r.fused != nullptr && src.node->attrs.op->name == r.producer) rule = &r;
    if (rule == nullptr) continue;
    const std::string& act_type = act->attrs.dict.at("act_type");
    if (rule->relu_only && act_type != "relu") continue;
    if (src.node->NumOutputs() != 1) continue;  // BatchNorm with output_mean_var
    if (uses[g.entry_id(g.node_id(src.node.get()), src.index)] != 1) continue;
    AttrDict dict = src.node->attrs.dict;
    if (!rule->relu_only) dict["act_type"] = act_type;
    std::shared_ptr<Node> producer = src.node;
    act->attrs = MakeNodeAttrs(*rule->fused, act->attrs.name, dict);
    act->inputs = producer->inputs;
    ++*num_fused;
  }
  return graph;
}

}  // namespace internal
}  // namespace hybridnet
