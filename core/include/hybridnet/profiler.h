// The profiler, as MXNet 1.9.1's mx.profiler: set_config, set_state, pause/resume, dump (a Chrome
// trace-event JSON file, loadable in chrome://tracing and Perfetto) and dumps (the aggregate
// table, per op type). While it runs, every op call of the graph executor (after fusion, fused
// kernels under their own names) and every eager op call (autograd's backward nodes among them)
// becomes one complete event: name the node's name, category the op, arguments the kernel that
// ran and the input and output shapes. Timestamps come from the steady clock, in microseconds;
// each thread records into its own buffer, with no lock per event, and an op that runs on
// several threads is recorded by the thread that called it.
//
//   profiler::SetConfig({{"profile_all", "True"}, {"filename", "trace.json"},
//                        {"aggregate_stats", "True"}});
//   profiler::SetState("run");
//   exec.Forward({x});
//   profiler::SetState("stop");
//   profiler::Dump();                     // writes trace.json
//   std::cout << profiler::Dumps();       // the table
//
// Off (the default) it costs one predictable branch per op call.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hybridnet {
/// The profiler (MXNet's mx.profiler); see the file comment.
namespace profiler {

/// Sets options by MXNet's set_config keywords, values as strings ("True", "false", "1"):
/// profile_all, profile_symbolic, profile_imperative, profile_memory, profile_api (booleans),
/// aggregate_stats (boolean), filename (the trace file, default "profile.json"),
/// continuous_dump (boolean), dump_period (seconds, a number) and profile_process ("worker").
/// Options not given keep their values. An unknown key or malformed value throws
/// kInvalidArgument naming it (and the accepted keys); nothing is changed then. Not implemented
/// yet, accepted and checked only: profile_memory and profile_api (no memory or C API events
/// are recorded) and continuous_dump and dump_period (nothing dumps by itself: Dump(false)
/// appends to the trace file whatever they say).
void SetConfig(const std::vector<std::pair<std::string, std::string>>& options);

/// "run" starts recording, "stop" stops it; anything else throws kInvalidArgument.
void SetState(const std::string& state);
/// "run" or "stop".
std::string State();

/// Stops recording until Resume, keeping the state "run".
void Pause();
/// Records again after Pause.
void Resume();

/// Appends the events recorded since the last Dump to the trace file (`filename`, opened and
/// truncated by the first Dump after SetConfig); `finished` completes the JSON and closes the
/// file, the next Dump starting it anew. Throws kIOError naming the file when it cannot be
/// written.
void Dump(bool finished = true);

/// The aggregate statistics of every event recorded while aggregate_stats was on: per category
/// ("operator": one row per op type) the count, total, min, max and average time in ms, in
/// MXNet's table layout (`format` "table") or its JSON (`format` "json"), sorted by `sort_by`
/// ("total", "avg", "min", "max", "count"), descending unless `ascending`. `reset` clears the
/// statistics afterwards. Bad arguments throw kInvalidArgument.
std::string Dumps(bool reset = false, const std::string& format = "table",
                  const std::string& sort_by = "total", bool ascending = false);

/// Prefixes the names of the ops recorded on this thread with `name` (a ':' is appended when
/// missing), in the trace and in the table, until the matching PopScope, as MXNet 2's
/// profiler.scope. Scopes nest: the inner name follows the outer.
void PushScope(const std::string& name);
/// Ends the innermost scope of this thread; none: kInvalidArgument.
void PopScope();

/// PushScope for the lifetime of the object.
class Scope {
 public:
  /// Opens scope `name` on this thread.
  explicit Scope(const std::string& name) { PushScope(name); }
  /// Closes it.
  ~Scope() { PopScope(); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

/// The profiler's clock: steady, in nanoseconds.
int64_t Clock();

/// Records the duration `name` of `kind` ("task", "frame" or "event"; else kInvalidArgument) in
/// `domain` that started at `start_ns` (Clock) and ends now, on this thread, when the profiler
/// runs.
void RecordDuration(const std::string& kind, const std::string& domain, const std::string& name,
                    int64_t start_ns);

/// Records counter `name` of `domain` taking `value`, when the profiler runs.
void SetCounter(const std::string& domain, const std::string& name, int64_t value);

/// A named domain (the trace category of its tasks, frames, counters and markers).
class Domain {
 public:
  /// The domain `name`.
  explicit Domain(std::string name) : name_(std::move(name)) {}
  /// Its name.
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

/// A named duration (MXNet's Task, Frame and Event): Start then Stop records one complete
/// event on the thread calling Stop.
class Duration {
 public:
  /// `kind` "task", "frame" or "event"; `domain` the category (events: "event").
  Duration(std::string kind, std::string domain, std::string name);
  /// Starts timing.
  void Start() { start_ns_ = Clock(); }
  /// Records the duration; without a Start first, kInvalidArgument.
  void Stop();
  /// Its name.
  const std::string& name() const { return name_; }

 private:
  std::string kind_, domain_, name_;
  int64_t start_ns_ = -1;
};

/// A counter (a trace counter event each time its value changes).
class Counter {
 public:
  /// Counter `name` of `domain`, at 0 (nothing recorded yet).
  Counter(const Domain& domain, std::string name)
      : domain_(domain.name()), name_(std::move(name)) {}
  /// Sets the value (recorded when the profiler runs).
  void SetValue(int64_t value) {
    value_ = value;
    SetCounter(domain_, name_, value);
  }
  /// Adds `delta` (negative: subtracts) to the value.
  void Increment(int64_t delta) { SetValue(value_ + delta); }
  /// The value.
  int64_t value() const { return value_; }

 private:
  std::string domain_, name_;
  int64_t value_ = 0;
};

/// An instant event `name` in `domain`; `scope` "global", "process", "thread", "task" or
/// "marker" (as MXNet; the trace shows the first three, the last two as "thread").
void Mark(const Domain& domain, const std::string& name, const std::string& scope = "process");

}  // namespace profiler
}  // namespace hybridnet
