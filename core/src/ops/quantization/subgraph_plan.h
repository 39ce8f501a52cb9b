// What a fused oneDNN node (`_sg_mkldnn_conv`, `_sg_mkldnn_fully_connected`) reads from its nested
// graph, parsed once per graph and parameters: inference and every compute call ask for it, and
// walking the graph (string compares, number parsing) costs about as much as a small convolution.
#pragma once

#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

/// `parse(attrs)`, kept while the node's nested graph and parsed parameters are alive (then their
/// addresses are still theirs). Each Plan type has one parse function (one table per Plan type).
/// A node without a nested graph is parsed on every call (its parse function reports the error).
template <typename Plan>
std::shared_ptr<const Plan> CachedSubgraphPlan(const NodeAttrs& attrs,
                                               Plan (*parse)(const NodeAttrs&)) {
  if (attrs.subgraphs.empty()) return std::make_shared<const Plan>(parse(attrs));
  struct Entry {
    std::weak_ptr<const Symbol> graph;
    std::weak_ptr<const void> param;
    std::shared_ptr<const Plan> plan;
    bool Alive() const { return !graph.expired() && !param.expired(); }
  };
  static std::mutex mutex;
  static std::map<std::pair<const void*, const void*>, Entry> plans;
  const std::pair<const void*, const void*> key(attrs.subgraphs[0].get(), attrs.parsed.get());
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = plans.find(key);
    if (it != plans.end() && it->second.Alive()) return it->second.plan;
  }
  auto plan = std::make_shared<const Plan>(parse(attrs));
  std::lock_guard<std::mutex> lock(mutex);
  if (plans.size() >= 4096) {
    for (auto it = plans.begin(); it != plans.end();) {
      it = it->second.Alive() ? std::next(it) : plans.erase(it);
    }
  }
  plans[key] = Entry{attrs.subgraphs[0], attrs.parsed, plan};
  return plan;
}

}  // namespace internal
}  // namespace hybridnet
