// What the passes need to ask the kernel layer about a node (kernels/convolution.h): the node's
// call described as the kernels describe calls.
#include <string>
#include <vector>

#include "pass/passes.h"

namespace hybridnet {
namespace internal {

std::string AttrOrDefault(const Node& node, const std::string& key) {
  auto it = node.attrs.dict.find(key);
  if (it != node.attrs.dict.end()) return it->second;
  for (const FieldInfo& f : node.attrs.op->fields)
    if (f.key == key) return f.default_text;
  return "";
}

ConvSpec ConvWindowOf(const Node& conv, size_t rank, int64_t channels) {
  ConvSpec s;
  s.nd = static_cast<int64_t>(rank);
  s.C = channels;
  s.F = std::stoll(AttrOrDefault(conv, "num_filter"));
  const std::string groups = AttrOrDefault(conv, "num_group");
  s.G = groups.empty() ? 1 : std::stoll(groups);
  // A tuple attribute's `rank` values into `to`; absent or empty keeps the defaults.
  auto window = [&](const char* key, int64_t* to) {
    const std::vector<int64_t> v = ParseIntTuple(AttrOrDefault(conv, key));
    if (v.size() == rank) std::copy(v.begin(), v.end(), to);
  };
  window("kernel", s.kernel);
  window("stride", s.stride);
  window("dilate", s.dilate);
  window("pad", s.pad_l);
  std::copy(s.pad_l, s.pad_l + 3, s.pad_r);
  return s;
}

}  // namespace internal
}  // namespace hybridnet
