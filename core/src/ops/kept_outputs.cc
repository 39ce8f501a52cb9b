#include "ops/kept_outputs.h"

#include <unordered_map>
#include <utility>

namespace hybridnet {
namespace internal {

namespace {

// Filled while the registry registers its ops (once, under its initialization), read after.
std::unordered_map<const Op*, FNumInputs>& KeptOutputCounts() {
  static auto* counts = new std::unordered_map<const Op*, FNumInputs>();  // used until exit
  return *counts;
}

}  // namespace

void SetNumKeptOutputs(const Op& op, FNumInputs count) {
  KeptOutputCounts()[&op] = std::move(count);
}

uint32_t NumKeptOutputs(const NodeAttrs& attrs) {
  const auto& counts = KeptOutputCounts();
  const auto it = counts.find(attrs.op);
  return it == counts.end() ? 0 : it->second(attrs);
}

}  // namespace internal
}  // namespace hybridnet
