// The profiler's cost on a ResNet-50 v1 forward (model zoo, 1x3x224x224, one thread): forwards
// with the profiler off and on (profile_symbolic, aggregate_stats) alternating one by one, medians
// of each, in wall time and in the thread's CPU time (less disturbed by other processes on a
// shared machine); and how much of each profiled forward's wall time its per-op times cover (the
// sum of the table's totals over the wall time of that forward). Targets: overhead <= 3 %,
// per-op sum within 5 % of the wall time.
//
//   profiler_bench [pairs of forwards (default 30)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/profiler.h"

namespace {

using hybridnet::NDArray;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The sum of the "Time (ms)" column of every row of a Dumps table.
double TableTotalMs(const std::string& table) {
  std::istringstream lines(table);
  std::string line;
  double total = 0;
  while (std::getline(lines, line)) {
    std::istringstream row(line);
    std::string name;
    long count = 0;
    double time = 0, low = 0, high = 0, avg = 0;
    if (row >> name >> count >> time >> low >> high >> avg) total += time;
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  namespace hn = hybridnet;
  namespace profiler = hybridnet::profiler;
  const int pairs = argc > 1 ? std::atoi(argv[1]) : 30;
  if (pairs < 1) {
    std::fprintf(stderr, "usage: profiler_bench [pairs of forwards >= 1]\n");
    return 2;
  }
  hn::SetNumThreads(1);
  const hn::bench::ZooModel model = hn::bench::TraceZooModel("resnet50_v1");
  const NDArray& x = model.x;
  hn::GraphExecutor exec(model.graph, {"data"}, model.params);
  std::vector<NDArray> out;
  exec.Forward({x}, &out);

  std::printf("%s\n%s\n", hn::bench::CpuDescription().c_str(), hn::KernelLibraries().c_str());
  std::printf(
      "ResNet-50 v1, 1x3x224x224, %d thread, %zu kernel calls per forward; %d forwards per "
      "mode, alternating\n",
      hn::GetNumThreads(), exec.stats().num_kernels, pairs);
  profiler::SetConfig(
      {{"profile_symbolic", "True"}, {"aggregate_stats", "True"}, {"filename", "/dev/null"}});
  // Wall and thread CPU milliseconds of one forward.
  auto forward_ms = [&](double* cpu_ms) {
    timespec cpu0{}, cpu1{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    const auto start = std::chrono::steady_clock::now();
    exec.Forward({x}, &out);
    const auto end = std::chrono::steady_clock::now();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
    *cpu_ms = static_cast<double>(cpu1.tv_sec - cpu0.tv_sec) * 1e3 +
              static_cast<double>(cpu1.tv_nsec - cpu0.tv_nsec) / 1e6;
    return std::chrono::duration<double, std::milli>(end - start).count();
  };
  std::vector<double> off, on, off_cpu, on_cpu, covered;
  for (int i = 0; i < pairs; ++i) {
    double cpu = 0;
    off.push_back(forward_ms(&cpu));
    off_cpu.push_back(cpu);
    profiler::SetState("run");
    const double wall = forward_ms(&cpu);
    profiler::SetState("stop");
    on.push_back(wall);
    on_cpu.push_back(cpu);
    covered.push_back(TableTotalMs(profiler::Dumps(/*reset=*/true)) / wall);
    profiler::Dump(true);  // drops the events (to /dev/null)
  }
  const double overhead = Median(on) / Median(off) - 1;
  const double cpu_overhead = Median(on_cpu) / Median(off_cpu) - 1;
  const double coverage = Median(covered);
  const auto [low, high] = std::minmax_element(covered.begin(), covered.end());
  std::printf("forward, profiler off: %9.3f ms wall, %9.3f ms CPU (medians)\n", Median(off),
              Median(off_cpu));
  std::printf("forward, profiler on:  %9.3f ms wall, %9.3f ms CPU (medians)\n", Median(on),
              Median(on_cpu));
  std::printf("overhead: %+.2f %% wall, %+.2f %% CPU (target <= 3 %%): %s\n", overhead * 100,
              cpu_overhead * 100, std::max(overhead, cpu_overhead) <= 0.03 ? "OK" : "ABOVE TARGET");
  std::printf(
      "per-op times / wall time of the same forward: median %.2f %%, range %.2f..%.2f %% "
      "(target within 5 %%): %s\n",
      coverage * 100, *low * 100, *high * 100,
      std::abs(coverage - 1) <= 0.05 ? "OK" : "OUTSIDE TARGET");

  // The cost of one recorded op call: a 4-element eager relu, blocks of calls off and on
  // alternating (profile_imperative; the events dropped after each block).
  profiler::SetConfig({{"profile_symbolic", "False"}, {"profile_imperative", "True"}});
  const NDArray tiny = NDArray::FromVector({4}, {1.f, -2.f, 3.f, -4.f});
  constexpr int kCalls = 20000;
  auto call_us = [&] {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) hn::Invoke("relu", {tiny});
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
               .count() /
           kCalls;
  };
  std::vector<double> call_off, call_on;
  for (int r = 0; r < 9; ++r) {
    call_off.push_back(call_us());
    profiler::SetState("run");
    call_on.push_back(call_us());
    profiler::SetState("stop");
    profiler::Dumps(/*reset=*/true);
    profiler::Dump(true);
  }
  std::printf(
      "eager relu of 4 elements: %.3f us off, %.3f us on (medians of 9 blocks of %d): "
      "%.3f us per recorded call\n",
      Median(call_off), Median(call_on), kCalls, Median(call_on) - Median(call_off));
  return 0;
}
