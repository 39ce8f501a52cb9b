// The gradient pass (pass/gradient.h), after NNVM's Gradient: walk the forward graph in reverse
// topological order, sum the gradients each output received, and ask the op's FGradient for the
// gradients of its inputs.
#include "pass/gradient.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ops/gradient_util.h"

namespace hybridnet {
namespace internal {

namespace {

bool IsZeros(const NodeEntry& e) {
  return !e.node->IsVariable() && e.node->attrs.op->name == "zeros_like";
}

// One gradient from its contributions: zeros dropped unless nothing else is left, the rest
// summed by add_n left to right (its kernel adds in argument order).
NodeEntry Sum(std::vector<NodeEntry> contributions, const std::string& name) {
  auto zeros = std::stable_partition(contributions.begin(), contributions.end(),
                                     [](const NodeEntry& e) { return !IsZeros(e); });
  contributions.erase(zeros == contributions.begin() ? zeros + 1 : zeros, contributions.end());
  if (contributions.size() == 1) return contributions[0];
  auto sum = std::make_shared<Node>();
  sum->attrs = MakeNodeAttrs("add_n", name + "_grad_sum",
                             {{"num_args", std::to_string(contributions.size())}});
  sum->inputs = std::move(contributions);
  return NodeEntry{sum, 0, 0};
}

// Gives the nodes the pass made (not those of the caller's graphs, `forward` and `head_grads`)
// kUnreadOutputsAttr where some of their outputs are read neither by another node nor as a
// gradient.
void MarkUnreadOutputs(const std::vector<NodeEntry>& grads, const IndexedGraph& forward,
                       const std::vector<NodeEntry>& head_grads) {
  const IndexedGraph heads(head_grads);
  // The reads of each made node's outputs, walking from the gradients down to the caller's nodes
  // (which never read a made node): no index of the whole graph, rebuilt at every backward.
  std::unordered_map<Node*, std::vector<uint32_t>> reads;
  std::vector<Node*> stack;
  auto visit = [&](const NodeEntry& e) {
    Node* n = e.node.get();
    if (n->IsVariable() || forward.contains(n) || heads.contains(n)) return;
    auto [it, first_visit] = reads.try_emplace(n, n->NumOutputs(), 0u);
    if (e.index < it->second.size()) ++it->second[e.index];
    if (first_visit) stack.push_back(n);
  };
  for (const auto& e : grads) visit(e);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const auto& e : n->inputs) visit(e);
  }
  for (const auto& [node, counts] : reads) {
    std::string unread;
    for (uint32_t k = 0; k < counts.size(); ++k) {
      if (counts[k] > 0) continue;
      unread += (unread.empty() ? "" : ",") + std::to_string(k);
    }
    if (!unread.empty()) node->attrs.dict[kUnreadOutputsAttr] = unread;
  }
}

}  // namespace

bool GradientOutputUnread(const NodeAttrs& attrs, uint32_t index) {
  auto it = attrs.dict.find(kUnreadOutputsAttr);
  if (it == attrs.dict.end()) return false;
  // Compared without streams: kernels ask it for every output at every step.
  const std::string wanted = std::to_string(index);
  const std::string_view list = it->second;
  for (size_t begin = 0; begin <= list.size();) {
    const size_t end = std::min(list.find(',', begin), list.size());
    if (list.substr(begin, end - begin) == wanted) return true;
    begin = end + 1;
  }
  return false;
}

std::vector<NodeEntry> Gradient(const std::vector<NodeEntry>& ys,
                                const std::vector<NodeEntry>& ys_grads,
                                const std::vector<NodeEntry>& xs) {
  HN_CHECK(ys.size() == ys_grads.size(), kInternal)
      << "gradient pass: " << ys.size() << " heads but " << ys_grads.size() << " head gradients";
  IndexedGraph graph(ys);
  const size_t num_nodes = graph.num_nodes();

  // Which nodes depend on an x: only their gradients are needed.
  std::vector<char> on_path(num_nodes, 0);
  std::vector<uint32_t> x_nodes;
  for (size_t i = 0; i < xs.size(); ++i) {
    HN_CHECK(graph.contains(xs[i].node.get()), kInvalidArgument)
        << "cannot differentiate with respect to variable " << i << " ('" << xs[i].node->name()
        << "'): it is not reachable from the heads";
    const uint32_t id = graph.node_id(xs[i].node.get());
    on_path[id] = 1;
    x_nodes.push_back(id);
  }
  for (uint32_t nid = 0; nid < num_nodes; ++nid) {
    for (const auto& e : graph[nid].inputs) on_path[nid] = on_path[nid] || on_path[e.node_id];
  }

  std::vector<std::vector<NodeEntry>> grads(graph.num_entries());
  for (size_t i = 0; i < ys.size(); ++i) {
    const uint32_t nid = graph.node_id(ys[i].node.get());
    grads[graph.entry_id(nid, ys[i].index)].push_back(ys_grads[i]);
  }

  for (uint32_t nid = static_cast<uint32_t>(num_nodes); nid-- > 0;) {
    const IndexedGraph::NodeInfo& info = graph[nid];
    if (info.node->IsVariable()) continue;
    bool wanted = false;
    for (const auto& e : info.inputs) wanted = wanted || on_path[e.node_id];
    if (!wanted) continue;
    const Op& op = *info.node->attrs.op;
    HN_CHECK(static_cast<bool>(op.gradient), kUnsupported)
        << "backward reached op " << op.name << " (node "
        << (info.node->name().empty() ? std::string("unnamed") : info.node->name())
        << "), which has no gradient";
    const uint32_t num_outputs = info.node->NumOutputs();
    std::vector<NodeEntry> out_grads;
    for (uint32_t k = 0; k < num_outputs; ++k) {
      std::vector<NodeEntry>& received = grads[graph.entry_id(nid, k)];
      if (received.empty()) {
        // An output no head depends on: its gradient is zero.
        GradientBuilder g(info.owner, {});
        out_grads.push_back(g.ZerosLike(g.out(k)));
      } else {
        out_grads.push_back(Sum(std::move(received), info.node->name()));
      }
      received.clear();
    }
    std::vector<NodeEntry> in_grads = op.gradient(info.owner, out_grads);
    HN_CHECK(in_grads.size() == info.inputs.size(), kInternal)
        << "the gradient of " << DescribeNode(info.node->attrs) << " gives " << in_grads.size()
        << " input gradients for " << info.inputs.size() << " inputs";
    for (size_t i = 0; i < info.inputs.size(); ++i) {
      if (!on_path[info.inputs[i].node_id]) continue;
      grads[graph.entry_id(info.inputs[i])].push_back(std::move(in_grads[i]));
    }
  }

  std::vector<NodeEntry> result;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<NodeEntry>& received = grads[graph.entry_id(x_nodes[i], xs[i].index)];
    if (received.empty()) {
      // Reachable from the heads only through control dependencies.
      GradientBuilder g(graph[x_nodes[i]].owner, {});
      result.push_back(g.ZerosLike(xs[i]));
    } else {
      // A variable listed twice gets the same sum.
      NodeEntry sum = Sum(received, xs[i].node->name());
      received = {sum};
      result.push_back(sum);
    }
  }
  MarkUnreadOutputs(result, graph, ys_grads);
  return result;
}

}  // namespace internal
}  // namespace hybridnet
