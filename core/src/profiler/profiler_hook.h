// What the executor, eager Invoke and the kernel choices call to feed the profiler
// (hybridnet/profiler.h). Off, a call site costs one relaxed load and one branch:
//
//   if (profiler::internal::Records(profiler::internal::kGraph)) {
//     const int64_t start = profiler::internal::StartOp();
//     compute(...);
//     profiler::internal::RecordOp(attrs, in, out, start);
//   } else {
//     compute(...);
//   }
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "hybridnet/op.h"

namespace hybridnet {
namespace profiler {
namespace internal {

/// Which op calls a hook reports: the graph executor's (profile_symbolic) or eager ones
/// (profile_imperative).
enum OpSource : unsigned { kGraph = 1u, kEager = 2u };

/// The sources recorded now (bits of OpSource); 0 while stopped or paused.
extern std::atomic<unsigned> recorded_sources;

/// The steady clock in nanoseconds.
int64_t NowNanos();

/// Forgets the kernels noted on this thread and returns the time.
int64_t StartOp();

/// Whether op calls from `source` are recorded now.
inline bool Records(OpSource source) {
  return __builtin_expect((recorded_sources.load(std::memory_order_relaxed) & source) != 0, 0);
}

/// Records the op call of `attrs` that started at `start_ns` and ends now, on this thread, with
/// the kernels noted by NoteKernel since the call began.
void RecordOp(const NodeAttrs& attrs, const std::vector<TBlob>& in, const std::vector<TBlob>& out,
              int64_t start_ns);

/// Adds `name` to the kernels noted for the op call running on this thread, unless this very
/// string (one kernel of one choice) is noted already.
void NoteKernelSlow(const std::string& name);

/// Notes that the op call running on this thread chose kernel `name`, a choice's own string
/// (KernelChoice::Choose).
inline void NoteKernel(const std::string& name) {
  if (__builtin_expect((recorded_sources.load(std::memory_order_relaxed) & (kGraph | kEager)) != 0,
                       0))
    NoteKernelSlow(name);
}

}  // namespace internal
}  // namespace profiler
}  // namespace hybridnet
