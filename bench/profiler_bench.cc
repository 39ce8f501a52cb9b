// The profiler's cost on a ResNet-50 v1 forward (model zoo, 1x3x224x224, one thread): forwards
// with the profiler off and on (profile_symbolic, aggregate_stats) taking turns, medians of
// each; and how much of each profiled forward's wall time its per-op times cover (the sum of
// the table's totals over the wall time of that forward). Targets: overhead <= 3 %, per-op sum
// within 5 % of the wall time.
//
//   profiler_bench [rounds (default 7)] [forwards per round and mode (default 5)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "hybridnet/executor.h"
#include "hybridnet/gluon/initializer.h"
#include "hybridnet/gluon/model_zoo.h"
#include "hybridnet/imperative.h"
#include "hybridnet/profiler.h"

namespace {

using hybridnet::NDArray;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string CpuName() {
  std::string cpu = "unknown";
  if (FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
      if (std::strncmp(line, "model name", 10) == 0) {
        cpu = std::strchr(line, ':') + 2;
        cpu.erase(cpu.find_last_not_of('\n') + 1);
        break;
      }
    }
    std::fclose(f);
  }
  return cpu;
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
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int per_round = argc > 2 ? std::atoi(argv[2]) : 5;
  if (rounds < 1 || per_round < 1) {
    std::fprintf(stderr, "usage: profiler_bench [rounds >= 1] [forwards per round >= 1]\n");
    return 2;
  }
  hn::SetNumThreads(1);
  hn::Seed(1);
  auto net = hn::gluon::model_zoo::GetModel("resnet50_v1");
  net->Initialize(hn::gluon::Xavier());
  const NDArray x = NDArray::RandomUniform({1, 3, 224, 224});
  net->Hybridize();
  (*net)(x);
  std::map<std::string, NDArray> params;
  const hn::gluon::ParameterDict all = net->CollectParams();
  for (const auto& p : all.list()) params[p->name()] = p->data();
  hn::GraphExecutor exec(net->CachedGraph(), {"data"}, params);
  std::vector<NDArray> out;
  exec.Forward({x}, &out);

  std::printf("CPU: %s\n%s\n", CpuName().c_str(), hn::KernelLibraries().c_str());
  std::printf(
      "ResNet-50 v1, 1x3x224x224, %d thread, %zu kernel calls per forward; %d rounds of "
      "%d forwards per mode\n",
      hn::GetNumThreads(), exec.stats().num_kernels, rounds, per_round);
  profiler::SetConfig(
      {{"profile_symbolic", "True"}, {"aggregate_stats", "True"}, {"filename", "/dev/null"}});
  auto forward_ms = [&] {
    const auto start = std::chrono::steady_clock::now();
    exec.Forward({x}, &out);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  std::vector<double> off, on, covered;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < per_round; ++i) off.push_back(forward_ms());
    for (int i = 0; i < per_round; ++i) {
      profiler::SetState("run");
      const double wall = forward_ms();
      profiler::SetState("stop");
      on.push_back(wall);
      covered.push_back(TableTotalMs(profiler::Dumps(/*reset=*/true)) / wall);
      profiler::Dump(true);  // drops the events (to /dev/null)
    }
  }
  const double overhead = Median(on) / Median(off) - 1;
  const double coverage = Median(covered);
  const auto [low, high] = std::minmax_element(covered.begin(), covered.end());
  std::printf("forward, profiler off: %9.3f ms median\n", Median(off));
  std::printf("forward, profiler on:  %9.3f ms median\n", Median(on));
  std::printf("overhead: %+.2f %% (target <= 3 %%): %s\n", overhead * 100,
              overhead <= 0.03 ? "OK" : "ABOVE TARGET");
  std::printf(
      "per-op times / wall time of the same forward: median %.2f %%, range %.2f..%.2f %% "
      "(target within 5 %%): %s\n",
      coverage * 100, *low * 100, *high * 100,
      std::abs(coverage - 1) <= 0.05 ? "OK" : "OUTSIDE TARGET");
  return 0;
}
