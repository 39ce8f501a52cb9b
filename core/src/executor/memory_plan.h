// The graph executor's memory planning, as small passes the executor runs in order and the unit
// tests check one by one:
//   CountUses    -> how many times each entry is read (graph outputs included)
//   PlaceEntries -> where each entry lives: a data input, a parameter, the caller's output array,
//                   or an arena slot reused by liveness (in place and zero-copy views allowed)
//   LayOutArena  -> each slot's byte offset in one arena
// The executor then builds its flat list of kernel calls over these places.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hybridnet/symbol.h"

namespace hybridnet {
namespace internal {

/// Where an entry's bytes live.
enum class SlotKind { kArena, kData, kParam, kOutput };

struct EntryPlace {
  SlotKind kind = SlotKind::kArena;
  size_t index = 0;  ///< arena slot, data input, parameter or graph output number
};

/// Reads of each entry: one per node input that names it, plus one per graph output that names
/// it, because graph outputs not written straight into the caller's arrays are copied out after
/// the last kernel and must survive until then.
std::vector<int> CountUses(const IndexedGraph& graph);

struct MemoryPlan {
  std::vector<EntryPlace> place;        ///< per entry
  std::vector<size_t> slot_bytes;       ///< per arena slot
  std::vector<uint32_t> kernel_nodes;   ///< op nodes in execution order
  std::vector<bool> written_to_output;  ///< per graph output: its producer writes it directly
  size_t naive_bytes = 0;               ///< bytes if every kernel output had its own buffer
};

/// Places every entry. `entry_bytes[e]` is entry e's size; `data_nodes[i]` is the variable fed
/// as data input i and `param_nodes[i]` the variable bound to parameter i. With `reuse` false
/// every kernel output gets its own slot (no liveness reuse, no in-place, no views).
MemoryPlan PlaceEntries(const IndexedGraph& graph, const std::vector<size_t>& entry_bytes,
                        const std::vector<uint32_t>& data_nodes,
                        const std::vector<uint32_t>& param_nodes, bool reuse);

/// Byte offset of each slot in one arena (slots aligned to 64 bytes); `*arena_bytes` = total.
std::vector<size_t> LayOutArena(const std::vector<size_t>& slot_bytes, size_t* arena_bytes);

}  // namespace internal
}  // namespace hybridnet
