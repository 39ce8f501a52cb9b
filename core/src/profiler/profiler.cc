// The profiler (hybridnet/profiler.h). Each thread appends its events to its own buffer, a list of
// fixed-size chunks: the writer fills a slot and then publishes the new count (release), a
// reader (Dump, Dumps, under one mutex) reads the slots below the count it loads (acquire), so
// recording takes no lock. Chunks every reader has passed and the writer has left are freed.
#include "hybridnet/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/param.h"
#include "io/json_writer.h"
#include "kernels/activation_type.h"
#include "ops/nn/convolution_fusions.h"
#include "profiler/profiler_hook.h"

namespace hybridnet {
namespace profiler {

namespace internal {
std::atomic<unsigned> recorded_sources{0};
}  // namespace internal

namespace {

using hybridnet::internal::JSONLayoutWriter;

// Tasks, frames, events, counters and markers: recorded whenever the profiler runs.
constexpr unsigned kUser = 4u;

struct Event {
  char phase = 'X';  // trace-event phase: X complete, i instant, C counter
  char instant_scope = 't';
  bool aggregate = false;  // counts in Dumps
  bool op_call = false;    // an op call: args get its shapes
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  std::string name, category;
  std::string args;  // the members of the "args" object, as JSON text
  // An op call's shapes, formatted into args when dumped (off the op's path).
  std::vector<Shape> inputs, outputs;
  std::string stat_group, stat_name;
};

constexpr size_t kChunkEvents = 1024;

struct Chunk {
  Event events[kChunkEvents];
  std::atomic<Chunk*> next{nullptr};
};

class ThreadBuffer {
 public:
  explicit ThreadBuffer(int tid) : tid_(tid), head_(new Chunk), tail_(head_) {}
  ~ThreadBuffer() {
    for (Chunk* c = head_; c != nullptr;) {
      Chunk* next = c->next.load(std::memory_order_relaxed);
      delete c;
      c = next;
    }
  }
  int tid() const { return tid_; }

  // Writer (the owning thread only).
  void Append(Event&& e) {
    if (tail_used_ == kChunkEvents) {
      Chunk* c = new Chunk;
      tail_->next.store(c, std::memory_order_release);
      tail_ = c;
      tail_used_ = 0;
    }
    tail_->events[tail_used_++] = std::move(e);
    published_.store(published_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // Readers (under the profiler's mutex): calls `f` on the events from `from` to the published
  // count and returns the count.
  template <typename F>
  uint64_t Read(uint64_t from, const F& f) {
    const uint64_t count = published_.load(std::memory_order_acquire);
    Chunk* c = head_;
    uint64_t base = head_base_;
    for (uint64_t i = std::max(from, head_base_); i < count; ++i) {
      while (i >= base + kChunkEvents) {
        c = c->next.load(std::memory_order_acquire);
        base += kChunkEvents;
      }
      f(c->events[i - base]);
    }
    return std::max(count, from);
  }
  // Frees the chunks holding only events below `consumed` that the writer has left.
  void Release(uint64_t consumed) {
    const uint64_t count = published_.load(std::memory_order_acquire);
    while (head_base_ + kChunkEvents <= consumed && count > head_base_ + kChunkEvents) {
      Chunk* next = head_->next.load(std::memory_order_acquire);
      delete head_;
      head_ = next;
      head_base_ += kChunkEvents;
    }
  }

  uint64_t trace_read = 0;  // events written to the trace file
  uint64_t stats_read = 0;  // events folded into the statistics

 private:
  const int tid_;
  Chunk* head_;  // readers' side
  uint64_t head_base_ = 0;
  Chunk* tail_;  // writer's side
  size_t tail_used_ = 0;
  std::atomic<uint64_t> published_{0};
};

struct Stat {
  uint64_t count = 0;
  int64_t total_ns = 0, min_ns = 0, max_ns = 0;
};

struct Config {
  bool profile_symbolic = false;
  bool profile_imperative = false;
  bool profile_memory = false;
  bool profile_api = false;
  bool aggregate_stats = false;
  bool continuous_dump = false;
  double dump_period = 1.0;
  std::string filename = "profile.json";
};

struct Profiler {
  std::mutex mutex;  // everything below, and the readers' side of the buffers
  Config config;
  bool running = false;
  bool paused = false;
  std::atomic<bool> aggregate{false};  // config.aggregate_stats, for the recording threads
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;        // kept until exit: threads may end
  std::map<std::string, std::map<std::string, Stat>> stats;  // group -> name -> stat
  std::ofstream trace;                                       // open between Dumps
  std::string trace_path;
  bool trace_has_events = false;
  const int64_t epoch_ns = internal::NowNanos();

  void UpdateSources() {
    unsigned s = 0;
    if (running && !paused) {
      s = kUser;
      if (config.profile_symbolic) s |= internal::kGraph;
      if (config.profile_imperative) s |= internal::kEager;
    }
    internal::recorded_sources.store(s, std::memory_order_relaxed);
  }
  void FoldStats() {
    for (auto& b : buffers) {
      b->stats_read = b->Read(b->stats_read, [&](const Event& e) {
        if (!e.aggregate) return;
        Stat& s = stats[e.stat_group][e.stat_name];
        s.min_ns = s.count == 0 ? e.dur_ns : std::min(s.min_ns, e.dur_ns);
        s.max_ns = s.count == 0 ? e.dur_ns : std::max(s.max_ns, e.dur_ns);
        s.total_ns += e.dur_ns;
        ++s.count;
      });
      b->Release(std::min(b->stats_read, b->trace_read));
    }
  }
};

Profiler& TheProfiler() {
  static Profiler* p = new Profiler;  // never destroyed: threads may record during exit
  return *p;
}

ThreadBuffer& ThisThreadBuffer() {
  thread_local ThreadBuffer* buffer = [] {
    Profiler& p = TheProfiler();
    std::lock_guard<std::mutex> lock(p.mutex);
    p.buffers.push_back(std::make_unique<ThreadBuffer>(static_cast<int>(p.buffers.size()) + 1));
    return p.buffers.back().get();
  }();
  return *buffer;
}

// The scope prefix and the kernels noted for the running op call, of this thread: the choices'
// own name strings, each noted once (a choice made per work item, as BatchNorm's vector ISA per
// sample, named its kernel thousands of times in one event).
thread_local std::string scope_prefix;
thread_local std::vector<const std::string*> noted_kernels;

bool Recording(unsigned source) {
  return (internal::recorded_sources.load(std::memory_order_relaxed) & source) != 0;
}

std::string Quoted(const std::string& s) {
  std::string out;
  JSONLayoutWriter::AppendQuoted(s, &out);
  return out;
}

void AppendShapes(const std::vector<Shape>& shapes, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append(shapes[i].ToString());
  }
  out->push_back('"');
}

// The ops a fused node stands for, in the order they run ("Convolution+BatchNorm+relu"); empty
// for a node that is no fusion.
std::string FusedOps(const NodeAttrs& attrs) {
  const std::string& op = attrs.op->name;
  if (op == "_contrib_BatchNormWithReLU") return "BatchNorm+relu";
  if (op == "_hn_fully_connected_act") {
    auto act = attrs.dict.find("act_type");
    return "FullyConnected+" + (act == attrs.dict.end() ? std::string("relu") : act->second);
  }
  if (op != "_hn_convolution") return "";
  const hybridnet::internal::ConvolutionFusions& f = hybridnet::internal::FusionsOf(attrs);
  std::string s;
  if (f.expand) {
    s = "Convolution1x1";
    if (f.expand->bn) s += "+BatchNorm";
    if (f.expand->relu) s += "+relu";
    if (f.expand->clip) s += "+clip";
    s += "+";
  }
  s += "Convolution";
  if (f.bn) s += "+BatchNorm";
  if (f.residual) s += "+elemwise_add";
  if (f.act) {
    for (const auto& kv : hybridnet::internal::ActTypeNames())
      if (kv.second == *f.act) s += "+" + kv.first;
  }
  if (f.clip) s += "+clip";
  if (f.pool) s += "+Pooling(max)";
  return s;
}

bool ParseBoolOption(const std::string& key, const std::string& value) {
  bool b = false;
  try {
    hybridnet::internal::ParseValue(value, &b);
  } catch (const std::invalid_argument&) {
    HN_THROW(kInvalidArgument) << "profiler option " << key << "='" << value
                               << "' is not a boolean (True, False, true, false, 1 or 0)";
  }
  return b;
}

}  // namespace

namespace internal {

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t StartOp() {
  noted_kernels.clear();
  return NowNanos();
}

void NoteKernelSlow(const std::string& name) {
  if (std::find(noted_kernels.begin(), noted_kernels.end(), &name) == noted_kernels.end()) {
    noted_kernels.push_back(&name);
  }
}

void RecordOp(const NodeAttrs& attrs, const std::vector<TBlob>& in, const std::vector<TBlob>& out,
              int64_t start_ns) {
  const int64_t end_ns = NowNanos();
  Event e;
  e.start_ns = start_ns;
  e.dur_ns = end_ns - start_ns;
  const std::string& op = attrs.op->name;
  e.name = scope_prefix + (attrs.name.empty() ? op : attrs.name);
  e.category = op;
  std::string kernel = noted_kernels.empty() ? op : *noted_kernels[0];
  for (size_t i = 1; i < noted_kernels.size(); ++i) kernel += "+" + *noted_kernels[i];
  noted_kernels.clear();
  const std::string fused = FusedOps(attrs);
  e.args = "\"kernel\":" + Quoted(kernel);
  if (!fused.empty()) e.args += ",\"fused\":" + Quoted(fused);
  e.op_call = true;
  e.inputs.reserve(in.size());
  for (const TBlob& b : in) e.inputs.push_back(b.shape);
  e.outputs.reserve(out.size());
  for (const TBlob& b : out) e.outputs.push_back(b.shape);
  e.aggregate = TheProfiler().aggregate.load(std::memory_order_relaxed);
  e.stat_group = "operator";
  e.stat_name = scope_prefix + op;
  ThisThreadBuffer().Append(std::move(e));
}

}  // namespace internal

void SetConfig(const std::vector<std::pair<std::string, std::string>>& options) {
  Profiler& p = TheProfiler();
  std::lock_guard<std::mutex> lock(p.mutex);
  Config c = p.config;
  for (const auto& kv : options) {
    const std::string& key = kv.first;
    const std::string& value = kv.second;
    if (key == "profile_all") {
      const bool all = ParseBoolOption(key, value);
      c.profile_symbolic = c.profile_imperative = c.profile_memory = c.profile_api = all;
    } else if (key == "profile_symbolic") {
      c.profile_symbolic = ParseBoolOption(key, value);
    } else if (key == "profile_imperative") {
      c.profile_imperative = ParseBoolOption(key, value);
    } else if (key == "profile_memory") {
      c.profile_memory = ParseBoolOption(key, value);
    } else if (key == "profile_api") {
      c.profile_api = ParseBoolOption(key, value);
    } else if (key == "aggregate_stats") {
      c.aggregate_stats = ParseBoolOption(key, value);
    } else if (key == "continuous_dump") {
      c.continuous_dump = ParseBoolOption(key, value);
    } else if (key == "dump_period") {
      char* end = nullptr;
      c.dump_period = std::strtod(value.c_str(), &end);
      HN_CHECK(!value.empty() && *end == '\0' && c.dump_period > 0, kInvalidArgument)
          << "profiler option dump_period='" << value << "' is not a positive number of seconds";
    } else if (key == "filename") {
      HN_CHECK(!value.empty(), kInvalidArgument) << "profiler option filename is empty";
      c.filename = value;
    } else if (key == "profile_process") {
      HN_CHECK(value == "worker", kInvalidArgument)
          << "profiler option profile_process='" << value
          << "': only 'worker' exists here (there is no parameter server)";
    } else {
      HN_THROW(kInvalidArgument)
          << "unknown profiler option '" << key
          << "'; the options are profile_all, profile_symbolic, profile_imperative, "
             "profile_memory, profile_api, aggregate_stats, filename, continuous_dump, "
             "dump_period and profile_process";
    }
  }
  if (c.filename != p.config.filename && p.trace.is_open()) {
    HN_THROW(kInvalidArgument) << "profiler: cannot change filename while '" << p.trace_path
                               << "' is being dumped; call Dump(finished=true) first";
  }
  p.config = c;
  p.aggregate.store(c.aggregate_stats, std::memory_order_relaxed);
  p.UpdateSources();
}

void SetState(const std::string& state) {
  Profiler& p = TheProfiler();
  std::lock_guard<std::mutex> lock(p.mutex);
  HN_CHECK(state == "run" || state == "stop", kInvalidArgument)
      << "profiler state '" << state << "': expected 'run' or 'stop'";
  p.running = state == "run";
  p.UpdateSources();
}

std::string State() {
  Profiler& p = TheProfiler();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.running ? "run" : "stop";
}

void Pause() {
  Profiler& p = TheProfiler();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.paused = true;
  p.UpdateSources();
}

void Resume() {
  Profiler& p = TheProfiler();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.paused = false;
  p.UpdateSources();
}

void Dump(bool finished) {
  Profiler& p = TheProfiler();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (!p.trace.is_open()) {
    p.trace_path = p.config.filename;
    p.trace.open(p.trace_path, std::ios::out | std::ios::trunc);
    HN_CHECK(p.trace.is_open(), kIOError)
        << "profiler: cannot open the trace file '" << p.trace_path << "' for writing";
    p.trace << "{\n\"traceEvents\": [\n";
    p.trace_has_events = false;
  }
  const int pid = static_cast<int>(getpid());
  std::string text;
  auto separator = [&] {
    text += p.trace_has_events ? ",\n" : "";
    p.trace_has_events = true;
  };
  for (auto& b : p.buffers) {
    b->trace_read = b->Read(b->trace_read, [&](const Event& e) {
      separator();
      char times[96];
      const double ts = static_cast<double>(e.start_ns - p.epoch_ns) / 1e3;
      if (e.phase == 'X') {
        std::snprintf(times, sizeof(times), "\"ts\":%.3f,\"dur\":%.3f", ts,
                      static_cast<double>(e.dur_ns) / 1e3);
      } else {
        std::snprintf(times, sizeof(times), "\"ts\":%.3f", ts);
      }
      text += "{\"name\":" + Quoted(e.name) + ",\"cat\":" + Quoted(e.category) + ",\"ph\":\"" +
              e.phase + "\"," + times + ",\"pid\":" + std::to_string(pid) +
              ",\"tid\":" + std::to_string(b->tid());
      if (e.phase == 'i') text += ",\"s\":\"" + std::string(1, e.instant_scope) + "\"";
      text += ",\"args\":{" + e.args;
      if (e.op_call) {
        text += ",\"inputs\":";
        AppendShapes(e.inputs, &text);
        text += ",\"outputs\":";
        AppendShapes(e.outputs, &text);
      }
      text += "}}";
    });
  }
  p.FoldStats();
  if (finished) {
    // Metadata events name the process and the threads in the viewers.
    separator();
    text += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
            ",\"args\":{\"name\":\"hybridnet\"}}";
    for (auto& b : p.buffers) {
      separator();
      text += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
              ",\"tid\":" + std::to_string(b->tid()) + ",\"args\":{\"name\":\"thread " +
              std::to_string(b->tid()) + "\"}}";
    }
    text += "\n],\n\"displayTimeUnit\": \"ms\"\n}\n";
  }
  p.trace << text;
  p.trace.flush();
  const bool good = p.trace.good();
  if (finished || !good) p.trace.close();
  HN_CHECK(good, kIOError) << "profiler: cannot write the trace file '" << p.trace_path << "'";
}

std::string Dumps(bool reset, const std::string& format, const std::string& sort_by,
                  bool ascending) {
  HN_CHECK(format == "table" || format == "json", kInvalidArgument)
      << "profiler dumps: format '" << format << "': expected 'table' or 'json'";
  const std::vector<std::string> sorts = {"total", "avg", "min", "max", "count"};
  HN_CHECK(std::find(sorts.begin(), sorts.end(), sort_by) != sorts.end(), kInvalidArgument)
      << "profiler dumps: sort_by '" << sort_by << "': expected total, avg, min, max or count";
  Profiler& p = TheProfiler();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.FoldStats();
  auto key = [&](const Stat& s) -> double {
    if (sort_by == "total") return static_cast<double>(s.total_ns);
    if (sort_by == "avg") return static_cast<double>(s.total_ns) / static_cast<double>(s.count);
    if (sort_by == "min") return static_cast<double>(s.min_ns);
    if (sort_by == "max") return static_cast<double>(s.max_ns);
    return static_cast<double>(s.count);
  };
  auto ms = [](double ns) { return static_cast<float>(ns / 1e6); };
  std::ostringstream os;
  std::ostringstream json_groups;
  if (format == "table") {
    os << "\nProfile Statistics:\n\tNote the difference in units for different entries.\n";
  }
  bool first_group = true;
  for (const auto& group : p.stats) {
    std::vector<std::pair<std::string, const Stat*>> rows;
    for (const auto& kv : group.second) rows.emplace_back(kv.first, &kv.second);
    // Largest first (smallest with `ascending`); equal keys by name, descending, as a max-heap
    // of (value, name) pops them.
    std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
      const double ka = ascending ? -key(*a.second) : key(*a.second);
      const double kb = ascending ? -key(*b.second) : key(*b.second);
      return ka != kb ? ka > kb : a.first > b.first;
    });
    if (format == "table") {
      os << group.first << "\n=================\n";
      os << std::setw(25) << std::left << "Name" << std::setw(16) << std::right << "Total Count"
         << " " << std::setw(16) << "Time (ms)"
         << " " << std::setw(16) << "Min Time (ms)"
         << " " << std::setw(16) << "Max Time (ms)"
         << " " << std::setw(16) << "Avg Time (ms)"
         << "\n";
      os << std::setw(25) << std::left << "----" << std::setw(16) << std::right << "-----------"
         << " " << std::setw(16) << "---------"
         << " " << std::setw(16) << "-------------"
         << " " << std::setw(16) << "-------------"
         << " " << std::setw(16) << "-------------"
         << "\n";
      for (const auto& row : rows) {
        const Stat& s = *row.second;
        os << std::setw(25) << std::left << row.first << std::setw(16) << std::right << s.count
           << " " << std::fixed << std::setprecision(4) << std::setw(16)
           << ms(static_cast<double>(s.total_ns)) << " " << std::setw(16)
           << ms(static_cast<double>(s.min_ns)) << " " << std::setw(16)
           << ms(static_cast<double>(s.max_ns)) << " " << std::setw(16)
           << ms(static_cast<double>(s.total_ns) / static_cast<double>(s.count)) << "\n";
      }
      os << "\n";
    } else {
      if (!first_group) json_groups << "        ,\n";
      json_groups << "        " << Quoted(group.first) << ": {\n";
      bool first_row = true;
      for (const auto& row : rows) {
        const Stat& s = *row.second;
        if (!first_row) json_groups << "            ,\n";
        first_row = false;
        json_groups << std::setprecision(4) << "            " << Quoted(row.first) << ": {\n"
                    << "                \"Count\": " << s.count << ",\n"
                    << "                \"Total\": " << ms(static_cast<double>(s.total_ns)) << ",\n"
                    << "                \"Min\": " << ms(static_cast<double>(s.min_ns)) << ",\n"
                    << "                \"Max\": " << ms(static_cast<double>(s.max_ns)) << ",\n"
                    << "                \"Avg\": "
                    << ms(static_cast<double>(s.total_ns) / static_cast<double>(s.count)) << "\n"
                    << "            }\n";
      }
      json_groups << "        }\n";
    }
    first_group = false;
  }
  if (format == "json") {
    os << "{\n    \"Time\": {\n"
       << json_groups.str() << "    }\n    ,\n    \"Memory\": {\n    }\n,\n"
       << "    \"Unit\": {\n        \"Time\": \"ms\",\n        \"Memory\": \"kB\"\n    }\n}\n";
  }
  if (reset) p.stats.clear();
  return os.str();
}

// The lengths of this thread's scope prefix before each open scope.
thread_local std::vector<size_t> scope_starts;

void PushScope(const std::string& name) {
  scope_starts.push_back(scope_prefix.size());
  scope_prefix += name;
  if (name.empty() || name.back() != ':') scope_prefix += ':';
}

void PopScope() {
  HN_CHECK(!scope_starts.empty(), kInvalidArgument) << "profiler: no scope to end on this thread";
  scope_prefix.resize(scope_starts.back());
  scope_starts.pop_back();
}

int64_t Clock() { return internal::NowNanos(); }

void RecordDuration(const std::string& kind, const std::string& domain, const std::string& name,
                    int64_t start_ns) {
  HN_CHECK(kind == "task" || kind == "frame" || kind == "event", kInvalidArgument)
      << "profiler duration kind '" << kind << "': expected task, frame or event";
  if (!Recording(kUser)) return;
  Event e;
  e.start_ns = start_ns;
  e.dur_ns = internal::NowNanos() - start_ns;
  e.name = name;
  e.category = domain;
  e.args = "\"kind\":" + Quoted(kind);
  e.aggregate = TheProfiler().aggregate.load(std::memory_order_relaxed);
  e.stat_group = domain;
  e.stat_name = name;
  ThisThreadBuffer().Append(std::move(e));
}

Duration::Duration(std::string kind, std::string domain, std::string name)
    : kind_(std::move(kind)), domain_(std::move(domain)), name_(std::move(name)) {
  HN_CHECK(kind_ == "task" || kind_ == "frame" || kind_ == "event", kInvalidArgument)
      << "profiler duration kind '" << kind_ << "': expected task, frame or event";
}

void Duration::Stop() {
  HN_CHECK(start_ns_ >= 0, kInvalidArgument)
      << "profiler " << kind_ << " '" << name_ << "' stopped without being started";
  const int64_t start = start_ns_;
  start_ns_ = -1;
  RecordDuration(kind_, domain_, name_, start);
}

void SetCounter(const std::string& domain, const std::string& name, int64_t value) {
  if (!Recording(kUser)) return;
  Event e;
  e.phase = 'C';
  e.start_ns = internal::NowNanos();
  e.name = name;
  e.category = domain;
  e.args = Quoted(name) + ":" + std::to_string(value);
  ThisThreadBuffer().Append(std::move(e));
}

void Mark(const Domain& domain, const std::string& name, const std::string& scope) {
  char s = 0;
  if (scope == "global") s = 'g';
  if (scope == "process") s = 'p';
  if (scope == "thread" || scope == "task" || scope == "marker") s = 't';
  HN_CHECK(s != 0, kInvalidArgument) << "profiler marker scope '" << scope
                                     << "': expected global, process, thread, task or marker";
  if (!Recording(kUser)) return;
  Event e;
  e.phase = 'i';
  e.instant_scope = s;
  e.start_ns = internal::NowNanos();
  e.name = name;
  e.category = domain.name();
  e.args = "\"scope\":" + Quoted(scope);
  ThisThreadBuffer().Append(std::move(e));
}

}  // namespace profiler
}  // namespace hybridnet
