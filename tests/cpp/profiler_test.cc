#include "hybridnet/profiler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "common/test_util.h"
#include "hybridnet/autograd.h"
#include "hybridnet/executor.h"
#include "hybridnet/gluon/initializer.h"
#include "hybridnet/gluon/model_zoo.h"
#include "hybridnet/imperative.h"
#include "hybridnet/operators.h"
#include "kernels/kernel_choice.h"
#include "profiler/profiler_hook.h"

namespace hybridnet {
namespace {

using namespace ::hybridnet::testing_util;  // NOLINT: the shared test helpers

// One complete or instant event of a trace, as Dump writes it (one event per line).
struct TraceEvent {
  std::string name, cat, ph, kernel, fused, inputs;
  double ts = 0, dur = 0;
  int pid = 0, tid = 0;
};

std::string Field(const std::string& line, const std::string& key) {
  // Compiled once per key: traces have thousands of lines.
  static std::map<std::string, std::pair<std::regex, std::regex>> patterns;
  auto it = patterns.find(key);
  if (it == patterns.end()) {
    it = patterns
             .emplace(key, std::make_pair(std::regex("\"" + key + "\":\"([^\"]*)\""),
                                          std::regex("\"" + key + "\":(-?[0-9.]+)")))
             .first;
  }
  std::smatch m;
  if (std::regex_search(line, m, it->second.first)) return m[1];
  if (std::regex_search(line, m, it->second.second)) return m[1];
  return "";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The events of a finished trace file; the frame ({"traceEvents": [ ... ], ...}) is checked.
std::vector<TraceEvent> ReadTrace(const std::string& path) {
  const std::string text = ReadFile(path);
  EXPECT_EQ(text.rfind("{\n\"traceEvents\": [\n", 0), 0u) << text.substr(0, 100);
  EXPECT_NE(text.find("\n],\n\"displayTimeUnit\": \"ms\"\n}\n"), std::string::npos);
  std::vector<TraceEvent> events;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("{\"name\":", 0) != 0) continue;
    TraceEvent e;
    e.name = Field(line, "name");
    e.cat = Field(line, "cat");
    e.ph = Field(line, "ph");
    e.kernel = Field(line, "kernel");
    e.fused = Field(line, "fused");
    e.inputs = Field(line, "inputs");
    if (!Field(line, "ts").empty()) e.ts = std::stod(Field(line, "ts"));
    if (!Field(line, "dur").empty()) e.dur = std::stod(Field(line, "dur"));
    e.pid = std::stoi(Field(line, "pid"));
    if (!Field(line, "tid").empty()) e.tid = std::stoi(Field(line, "tid"));
    events.push_back(e);
  }
  return events;
}

std::vector<TraceEvent> Complete(const std::vector<TraceEvent>& events) {
  std::vector<TraceEvent> out;
  for (const auto& e : events)
    if (e.ph == "X") out.push_back(e);
  return out;
}

// The rows of one category of a Dumps table: name -> count.
std::map<std::string, int64_t> TableCounts(const std::string& table, const std::string& group) {
  std::map<std::string, int64_t> counts;
  std::istringstream lines(table);
  std::string line;
  bool in_group = false;
  while (std::getline(lines, line)) {
    if (line == group) {
      in_group = true;
      continue;
    }
    if (!in_group) continue;
    if (line.empty()) break;
    std::istringstream row(line);
    std::string name, count, total, min, max, avg;
    row >> name >> count >> total >> min >> max >> avg;
    if (name == "Name" || name == "----" || name.rfind("=====", 0) == 0) continue;
    EXPECT_FALSE(avg.empty()) << "row without six columns: " << line;
    counts[name] = std::stoll(count);
  }
  return counts;
}

class ProfilerTest : public ::testing::Test {
 protected:
  // Every test starts from a stopped profiler with nothing recorded and the default options.
  void SetUp() override { Reset(); }
  void TearDown() override { Reset(); }
  void Reset() {
    profiler::SetState("stop");
    profiler::Resume();
    profiler::SetConfig({{"filename", TmpPath("profiler_drain.json")},
                         {"profile_all", "False"},
                         {"aggregate_stats", "False"}});
    profiler::Dump(true);
    profiler::Dumps(true);
  }
};

struct Resnet18 {
  Symbol graph;
  std::map<std::string, NDArray> params;
  NDArray x;
};

Resnet18 MakeResnet18() {
  Seed(3);
  Resnet18 m;
  auto net = gluon::model_zoo::GetModel("resnet18_v1");
  net->Initialize(gluon::Xavier());
  m.x = NDArray::RandomUniform({1, 3, 64, 64});
  net->Hybridize();
  (*net)(m.x);
  m.graph = net->CachedGraph();
  const gluon::ParameterDict all = net->CollectParams();
  for (const auto& p : all.list()) m.params[p->name()] = p->data();
  return m;
}

TEST_F(ProfilerTest, Resnet18TraceHasOneEventPerKernelCallAndTheTableCountsThem) {
  Resnet18 m = MakeResnet18();
  GraphExecutor exec(m.graph, {"data"}, m.params);
  exec.Forward({m.x});  // plans and packs weights outside the trace
  const std::string path = TmpPath("profiler_resnet18.json");
  profiler::SetConfig(
      {{"profile_symbolic", "True"}, {"aggregate_stats", "True"}, {"filename", path}});
  profiler::SetState("run");
  exec.Forward({m.x});
  profiler::SetState("stop");
  profiler::Dump(true);
  const std::string table = profiler::Dumps();

  const ExecutorStats stats = exec.stats();
  ASSERT_GT(stats.num_fused, 0u);
  const std::vector<TraceEvent> events = Complete(ReadTrace(path));
  ASSERT_EQ(events.size(), stats.num_kernels);
  std::map<std::string, int64_t> per_op;
  std::map<int, std::vector<const TraceEvent*>> per_thread;
  size_t fused = 0;
  for (const auto& e : events) {
    EXPECT_EQ(e.pid, static_cast<int>(getpid()));
    EXPECT_FALSE(e.name.empty());
    EXPECT_FALSE(e.kernel.empty()) << e.name;
    EXPECT_FALSE(e.inputs.empty()) << e.name;
    EXPECT_GE(e.dur, 0.0);
    ++per_op[e.cat];
    per_thread[e.tid].push_back(&e);
    // Every fused node says which ops it stands for.
    if (e.cat == "_hn_convolution" || e.cat == "_hn_fully_connected_act" ||
        e.cat == "_contrib_BatchNormWithReLU") {
      ++fused;
      EXPECT_NE(e.fused.find('+'), std::string::npos) << e.name << ": '" << e.fused << "'";
    } else {
      EXPECT_EQ(e.fused, "") << e.name;
    }
  }
  // ResNet-18's 20 convolutions all run fused (with their BatchNorm, relu or residual add).
  EXPECT_EQ(per_op["_hn_convolution"], 20);
  EXPECT_EQ(per_op.count("Convolution"), 0u);
  EXPECT_GE(fused, 20u);
  // One forward on one thread: events follow one another (3-decimal rounding aside).
  ASSERT_EQ(per_thread.size(), 1u);
  for (const auto& kv : per_thread) {
    for (size_t i = 1; i < kv.second.size(); ++i) {
      const TraceEvent& a = *kv.second[i - 1];
      const TraceEvent& b = *kv.second[i];
      EXPECT_LE(a.ts + a.dur, b.ts + 0.002) << a.name << " overlaps " << b.name;
    }
  }
  // The table counts the same calls per op type.
  EXPECT_NE(table.find("Profile Statistics:"), std::string::npos) << table;
  EXPECT_NE(table.find("Total Count        Time (ms)    Min Time (ms)"), std::string::npos)
      << table;
  EXPECT_EQ(TableCounts(table, "operator"), per_op) << table;
}

TEST_F(ProfilerTest, EagerOpsAndAutogradBackwardAreRecordedWhenImperativeIsOn) {
  NDArray x = NDArray::RandomUniform({4, 3});
  autograd::AttachGrad(&x);
  profiler::SetConfig({{"profile_imperative", "True"}, {"aggregate_stats", "True"}});
  profiler::SetState("run");
  NDArray y;
  {
    auto recording = autograd::Record();
    NDArray e = Invoke("exp", {x})[0];
    y = Invoke("sum", {e})[0];
  }
  autograd::Backward({y});
  profiler::SetState("stop");
  const std::map<std::string, int64_t> counts = TableCounts(profiler::Dumps(), "operator");
  EXPECT_EQ(counts.at("exp"), 1) << profiler::Dumps();
  EXPECT_EQ(counts.at("sum"), 1);
  int64_t backward = 0;
  for (const auto& kv : counts)
    if (kv.first.rfind("_backward_", 0) == 0) backward += kv.second;
  EXPECT_GE(backward, 1) << profiler::Dumps();
}

TEST_F(ProfilerTest, NothingIsRecordedWhileStoppedPausedOrForOtherSources) {
  Resnet18 m = MakeResnet18();
  GraphExecutor exec(m.graph, {"data"}, m.params);
  const std::string path = TmpPath("profiler_quiet.json");
  profiler::SetConfig(
      {{"profile_imperative", "True"}, {"aggregate_stats", "True"}, {"filename", path}});
  exec.Forward({m.x});  // stopped
  profiler::SetState("run");
  exec.Forward({m.x});  // graph ops, but only eager ones are profiled
  profiler::SetConfig({{"profile_symbolic", "True"}});
  profiler::Pause();
  exec.Forward({m.x});
  EXPECT_EQ(profiler::State(), "run");
  profiler::Resume();
  Invoke("relu", {m.x});
  profiler::SetState("stop");
  profiler::Dump(true);
  const std::vector<TraceEvent> events = Complete(ReadTrace(path));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].cat, "relu");
  EXPECT_EQ(events[0].kernel, "relu");
}

TEST_F(ProfilerTest, ScopesPrefixNamesAndUserEventsAreRecorded) {
  const std::string path = TmpPath("profiler_scopes.json");
  profiler::SetConfig(
      {{"profile_imperative", "True"}, {"aggregate_stats", "True"}, {"filename", path}});
  profiler::SetState("run");
  NDArray x = NDArray::RandomUniform({2, 2});
  {
    profiler::Scope outer("model");
    profiler::Scope inner("block:");
    Invoke("relu", {x});
  }
  profiler::Domain domain("my_domain");
  profiler::Duration task("task", domain.name(), "step");
  task.Start();
  Invoke("relu", {x});
  task.Stop();
  profiler::Counter counter(domain, "items");
  counter.SetValue(5);
  counter.Increment(2);
  profiler::Mark(domain, "here", "global");
  profiler::SetState("stop");
  profiler::Dump(true);
  const std::vector<TraceEvent> events = ReadTrace(path);
  std::set<std::string> names;
  size_t counters = 0, markers = 0;
  for (const auto& e : events) {
    names.insert(e.ph + " " + e.name);
    counters += e.ph == "C";
    markers += e.ph == "i";
  }
  EXPECT_TRUE(names.count("X model:block:relu")) << ReadFile(path);
  EXPECT_TRUE(names.count("X relu"));
  EXPECT_TRUE(names.count("X step"));
  EXPECT_EQ(counters, 2u);
  EXPECT_EQ(markers, 1u);
  EXPECT_NE(ReadFile(path).find("\"items\":7"), std::string::npos);
  const std::string table = profiler::Dumps();
  EXPECT_EQ(TableCounts(table, "operator"),
            (std::map<std::string, int64_t>{{"model:block:relu", 1}, {"relu", 1}}))
      << table;
  EXPECT_EQ(TableCounts(table, "my_domain"), (std::map<std::string, int64_t>{{"step", 1}}));
  EXPECT_EQ(ErrorOf([] { profiler::PopScope(); }).code(), StatusCode::kInvalidArgument);
}

TEST_F(ProfilerTest, DumpsSortsResetsAndWritesJson) {
  profiler::SetConfig({{"profile_imperative", "True"}, {"aggregate_stats", "True"}});
  profiler::SetState("run");
  NDArray x = NDArray::RandomUniform({2, 2});
  for (int i = 0; i < 3; ++i) Invoke("relu", {x});
  Invoke("exp", {x});
  profiler::SetState("stop");
  const std::string by_count = profiler::Dumps(false, "table", "count");
  EXPECT_LT(by_count.find("relu "), by_count.find("exp ")) << by_count;
  const std::string ascending = profiler::Dumps(false, "table", "count", true);
  EXPECT_LT(ascending.find("exp "), ascending.find("relu ")) << ascending;
  const std::string json = profiler::Dumps(true, "json");
  EXPECT_NE(json.find("\"relu\": {\n                \"Count\": 3,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"Unit\""), std::string::npos);
  EXPECT_TRUE(TableCounts(profiler::Dumps(), "operator").empty());  // reset
  EXPECT_EQ(ErrorOf([] { profiler::Dumps(false, "xml"); }).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf([] { profiler::Dumps(false, "table", "median"); }).code(),
            StatusCode::kInvalidArgument);
}

// A kernel chosen again within one call (a choice made per work item) is named once; two choices
// of kernels of the same name (a convolution's backward data and weights) are both named.
TEST_F(ProfilerTest, EachChoiceNamesItsKernelOncePerCall) {
  const std::string path = TmpPath("profiler_kernels.json");
  profiler::SetConfig({{"profile_imperative", "True"}, {"filename", path}});
  profiler::SetState("run");
  const internal::KernelChoice& isa = internal::KernelChoiceOf("vector_isa");
  const internal::KernelChoice& data = internal::KernelChoiceOf("convolution_backward_data");
  const internal::KernelChoice& weights = internal::KernelChoiceOf("convolution_backward_weights");
  auto name = [](const internal::KernelChoice& choice, const std::string& kernel) -> auto& {
    return choice.kernels()[static_cast<size_t>(choice.IndexOf(kernel))].name;
  };
  const int64_t start = profiler::internal::StartOp();
  for (int item = 0; item < 1000; ++item) profiler::internal::NoteKernel(name(isa, "avx512"));
  profiler::internal::NoteKernel(name(data, "winograd"));
  profiler::internal::NoteKernel(name(weights, "winograd"));
  profiler::internal::NoteKernel(name(isa, "avx512"));
  profiler::internal::RecordOp(MakeNodeAttrs(OpRegistry::Global().Get("relu"), "probe", {}), {}, {},
                               start);
  profiler::SetState("stop");
  profiler::Dump(true);
  const std::vector<TraceEvent> events = Complete(ReadTrace(path));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kernel, "avx512+winograd+winograd");
}

TEST_F(ProfilerTest, BadOptionsAndUnwritableFilesAreClearErrors) {
  Error unknown = ErrorOf([] { profiler::SetConfig({{"profile_everything", "True"}}); });
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(unknown.what()).find("profile_everything"), std::string::npos);
  EXPECT_NE(std::string(unknown.what()).find("aggregate_stats"), std::string::npos);
  Error bad_bool = ErrorOf([] { profiler::SetConfig({{"profile_all", "maybe"}}); });
  EXPECT_EQ(bad_bool.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad_bool.what()).find("maybe"), std::string::npos);
  EXPECT_EQ(ErrorOf([] { profiler::SetState("running"); }).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf([] { profiler::Mark(profiler::Domain("d"), "m", "galaxy"); }).code(),
            StatusCode::kInvalidArgument);
  profiler::Duration never_started("event", "event", "e");
  EXPECT_EQ(ErrorOf([&] { never_started.Stop(); }).code(), StatusCode::kInvalidArgument);

  const std::string unwritable = "/nonexistent-hybridnet-dir/trace.json";
  profiler::SetConfig({{"filename", unwritable}});
  Error io = ErrorOf([] { profiler::Dump(true); });
  EXPECT_EQ(io.code(), StatusCode::kIOError);
  EXPECT_NE(std::string(io.what()).find(unwritable), std::string::npos) << io.what();
}

TEST_F(ProfilerTest, ContinuousDumpsAppendToOneValidFile) {
  const std::string path = TmpPath("profiler_continuous.json");
  profiler::SetConfig(
      {{"profile_imperative", "True"}, {"continuous_dump", "True"}, {"filename", path}});
  profiler::SetState("run");
  NDArray x = NDArray::RandomUniform({2, 2});
  Invoke("relu", {x});
  profiler::Dump(false);
  Invoke("exp", {x});
  profiler::SetState("stop");
  profiler::Dump(true);
  const std::vector<TraceEvent> events = Complete(ReadTrace(path));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].cat, "relu");
  EXPECT_EQ(events[1].cat, "exp");
}

// Threads record into their own buffers (several chunks each) while the main thread folds the
// statistics and writes the trace: nothing is lost, counted twice or torn.
TEST_F(ProfilerTest, ThreadsRecordWhileTheStatisticsAndTheTraceAreRead) {
  const std::string path = TmpPath("profiler_threads.json");
  profiler::SetConfig(
      {{"profile_imperative", "True"}, {"aggregate_stats", "True"}, {"filename", path}});
  profiler::SetState("run");
  constexpr int kThreads = 4;
  constexpr int kCalls = 1500;  // more than one chunk of events per thread
  std::atomic<int> finished{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      const NDArray x = NDArray::FromVector({2, 2}, {1.f, -2.f, 3.f, -4.f});
      for (int i = 0; i < kCalls; ++i) Invoke("relu", {x});
      ++finished;
    });
  }
  auto relu_count = [] {
    const std::map<std::string, int64_t> counts = TableCounts(profiler::Dumps(true), "operator");
    auto it = counts.find("relu");
    return it == counts.end() ? int64_t{0} : it->second;
  };
  int64_t counted = 0;
  while (finished.load() < kThreads) {
    counted += relu_count();
    profiler::Dump(false);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (auto& t : threads) t.join();
  profiler::SetState("stop");
  counted += relu_count();
  profiler::Dump(true);
  EXPECT_EQ(counted, int64_t{kThreads} * kCalls);
  const std::vector<TraceEvent> events = Complete(ReadTrace(path));
  ASSERT_EQ(events.size(), static_cast<size_t>(kThreads) * kCalls);
  std::map<int, std::vector<const TraceEvent*>> per_thread;
  for (const auto& e : events) {
    EXPECT_EQ(e.cat, "relu");
    per_thread[e.tid].push_back(&e);
  }
  ASSERT_EQ(per_thread.size(), static_cast<size_t>(kThreads));
  for (const auto& kv : per_thread) {
    ASSERT_EQ(kv.second.size(), static_cast<size_t>(kCalls));
    for (size_t i = 1; i < kv.second.size(); ++i)
      EXPECT_LE(kv.second[i - 1]->ts + kv.second[i - 1]->dur, kv.second[i]->ts + 0.002);
  }
}

}  // namespace
}  // namespace hybridnet
