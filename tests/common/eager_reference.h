// The reference every graph test compares against: a symbol run node by node through eager
// Invoke, with each variable's value taken from `values` by name (outputs are copies).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hybridnet/imperative.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace testing_util {

inline std::vector<NDArray> RunNodeByNode(const Symbol& symbol,
                                          const std::map<std::string, NDArray>& values) {
  IndexedGraph g(symbol.outputs);
  std::vector<NDArray> entries(g.num_entries());
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node* node = g[nid].node;
    if (node->IsVariable()) {
      entries[g.entry_id(nid, 0)] = values.at(node->name());
      continue;
    }
    std::vector<NDArray> in;
    for (const auto& e : g[nid].inputs) in.push_back(entries[g.entry_id(e)]);
    std::vector<NDArray> out = Invoke(node->attrs, in);
    for (uint32_t i = 0; i < out.size(); ++i) entries[g.entry_id(nid, i)] = out[i];
  }
  std::vector<NDArray> outputs;
  for (const auto& e : g.outputs()) outputs.push_back(entries[g.entry_id(e)].Copy());
  return outputs;
}

}  // namespace testing_util
}  // namespace hybridnet
