#include "executor/memory_plan.h"

#include <algorithm>
#include <set>

#include "hybridnet/op.h"
#include "pass/passes.h"

namespace hybridnet {
namespace internal {

namespace {

constexpr size_t kSlotAlignment = 64;

size_t Align(size_t n) { return (n + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment; }

// Arena slots and their pending reads; a slot whose reads are all done is free for reuse.
class SlotPool {
 public:
  explicit SlotPool(std::vector<size_t>* slot_bytes) : bytes_(*slot_bytes) {}

  size_t New(size_t nbytes) {
    bytes_.push_back(nbytes);
    pending_.push_back(0);
    return bytes_.size() - 1;
  }
  // The smallest free slot that fits, else the largest free one (grown), else a new one.
  size_t Take(size_t nbytes) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (bytes_[*it] >= nbytes && (best == free_.end() || bytes_[*it] < bytes_[*best])) best = it;
    }
    if (best == free_.end() && !free_.empty()) {
      best = std::max_element(free_.begin(), free_.end(),
                              [&](size_t a, size_t b) { return bytes_[a] < bytes_[b]; });
    }
    if (best == free_.end()) return New(nbytes);
    size_t slot = *best;
    free_.erase(best);
    bytes_[slot] = std::max(bytes_[slot], nbytes);
    return slot;
  }
  void AddReads(size_t slot, int reads) { pending_[slot] += reads; }
  int pending(size_t slot) const { return pending_[slot]; }
  // One read of `slot` done; frees it when none is left.
  void Read(size_t slot) {
    if (--pending_[slot] == 0) Free(slot);
  }
  // Frees `slot` when nothing will read it (an output nobody reads).
  void FreeIfUnread(size_t slot) {
    if (pending_[slot] == 0 && std::find(free_.begin(), free_.end(), slot) == free_.end())
      Free(slot);
  }

 private:
  void Free(size_t slot) { free_.push_back(slot); }

  std::vector<size_t>& bytes_;
  std::vector<int> pending_;
  std::vector<size_t> free_;
};

}  // namespace

std::vector<int> CountUses(const IndexedGraph& graph) {
  std::vector<int> uses(graph.num_entries(), 0);
  for (uint32_t nid = 0; nid < graph.num_nodes(); ++nid)
    for (const auto& e : graph[nid].inputs) ++uses[graph.entry_id(e)];
  for (const auto& e : graph.outputs()) ++uses[graph.entry_id(e)];
  return uses;
}

MemoryPlan PlaceEntries(const IndexedGraph& graph, const std::vector<size_t>& entry_bytes,
                        const std::vector<uint32_t>& data_nodes,
                        const std::vector<uint32_t>& param_nodes, bool reuse) {
  MemoryPlan plan;
  std::vector<EntryPlace>& place = plan.place;
  place.assign(graph.num_entries(), EntryPlace{});
  for (size_t i = 0; i < data_nodes.size(); ++i)
    place[graph.entry_id(data_nodes[i], 0)] = {SlotKind::kData, i};
  for (size_t i = 0; i < param_nodes.size(); ++i)
    place[graph.entry_id(param_nodes[i], 0)] = {SlotKind::kParam, i};

  // Graph outputs a kernel produces are written straight into the caller's arrays (the first
  // time an entry appears among the outputs; repeats, variables and views are copied out).
  plan.written_to_output.assign(graph.outputs().size(), false);
  std::set<uint32_t> claimed;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    uint32_t eid = graph.entry_id(graph.outputs()[i]);
    const Node* producer = graph[graph.outputs()[i].node_id].node;
    if (producer->IsVariable() || producer->attrs.op->identity_view || !claimed.insert(eid).second)
      continue;
    place[eid] = {SlotKind::kOutput, i};
    plan.written_to_output[i] = true;
  }

  const std::vector<int> uses = CountUses(graph);
  SlotPool slots(&plan.slot_bytes);
  for (uint32_t nid = 0; nid < graph.num_nodes(); ++nid) {
    const Node* node = graph[nid].node;
    if (node->IsVariable()) continue;
    const Op& op = *node->attrs.op;
    std::vector<uint32_t> in_eids, out_eids;
    for (const auto& e : graph[nid].inputs) in_eids.push_back(graph.entry_id(e));
    for (uint32_t i = 0; i < NumEntriesOf(graph, nid); ++i)
      out_eids.push_back(graph.entry_id(nid, i));

    const uint32_t out0 = out_eids[0];
    const bool view = reuse && op.identity_view && place[out0].kind == SlotKind::kArena;
    if (view) {
      // Zero-copy: the output is its input's bytes, so the input's slot also waits for the
      // output's reads.
      place[out0] = place[in_eids[0]];
      if (place[out0].kind == SlotKind::kArena) slots.AddReads(place[out0].index, uses[out0]);
    } else {
      for (uint32_t eid : out_eids) {
        plan.naive_bytes += Align(entry_bytes[eid]);
        if (place[eid].kind != SlotKind::kArena) continue;
        size_t slot = SIZE_MAX;
        for (const auto& io : op.InplacePairs(node->attrs)) {
          if (!reuse || io.second != eid - out0 || io.first >= in_eids.size()) continue;
          const uint32_t in_eid = in_eids[io.first];
          const EntryPlace& p = place[in_eid];
          // In place only when this node is the last reader of the input's slot.
          const bool sole_reader = std::count(in_eids.begin(), in_eids.end(), in_eid) == 1;
          if (p.kind == SlotKind::kArena && slots.pending(p.index) == 1 && sole_reader &&
              entry_bytes[in_eid] == entry_bytes[eid]) {
            slot = p.index;
          }
        }
        if (slot == SIZE_MAX)
          slot = reuse ? slots.Take(entry_bytes[eid]) : slots.New(entry_bytes[eid]);
        place[eid] = {SlotKind::kArena, slot};
        slots.AddReads(slot, uses[eid]);
      }
      plan.kernel_nodes.push_back(nid);
    }
    if (!reuse) continue;
    for (uint32_t eid : in_eids)
      if (place[eid].kind == SlotKind::kArena) slots.Read(place[eid].index);
    if (view) continue;
    for (uint32_t eid : out_eids)
      if (place[eid].kind == SlotKind::kArena) slots.FreeIfUnread(place[eid].index);
  }
  return plan;
}

std::vector<size_t> LayOutArena(const std::vector<size_t>& slot_bytes, size_t* arena_bytes) {
  std::vector<size_t> offsets(slot_bytes.size());
  *arena_bytes = 0;
  for (size_t s = 0; s < slot_bytes.size(); ++s) {
    offsets[s] = *arena_bytes;
    *arena_bytes += Align(slot_bytes[s]);
  }
  return offsets;
}

}  // namespace internal
}  // namespace hybridnet
