#include <map>

#include "pass/passes.h"

namespace hybridnet {
namespace internal {

Symbol FuseOps(const Symbol& symbol, size_t* num_fused) {
  *num_fused = 0;
  const Op* fused_op = OpRegistry::Global().Find("_hn_fully_connected_act");
  const Op* activation = OpRegistry::Global().Find("Activation");
  if (fused_op == nullptr || activation == nullptr) return symbol;

  Symbol graph = symbol.Copy();
  IndexedGraph g(graph.outputs);
  std::vector<uint32_t> uses(g.num_entries(), 0);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid)
    for (const auto& e : g[nid].inputs) ++uses[g.entry_id(e)];
  for (const auto& e : g.outputs()) ++uses[g.entry_id(e)];

  // FullyConnected whose only consumer is an Activation becomes one node; the activation node
  // keeps its identity (name, consumers) and takes over the FullyConnected inputs.
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    Node* act = g[nid].owner.get();
    if (act->IsVariable() || act->attrs.op != activation) continue;
    const NodeEntry& src = act->inputs[0];
    if (src.node->IsVariable() || src.node->attrs.op->name != "FullyConnected") continue;
    if (uses[g.entry_id(g.node_id(src.node.get()), src.index)] != 1) continue;
    AttrDict dict = src.node->attrs.dict;
    dict["act_type"] = act->attrs.dict.at("act_type");
    std::shared_ptr<Node> fc = src.node;
    act->attrs = MakeNodeAttrs(*fused_op, act->attrs.name, dict);
    act->inputs = fc->inputs;
    ++*num_fused;
  }
  return graph;
}

}  // namespace internal
}  // namespace hybridnet
