#include "bench_common.h"

#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "hybridnet/imperative.h"

namespace hybridnet {
namespace bench {

SeedMlp MakeSeedMlp(uint64_t seed) {
  Seed(seed);
  SeedMlp mlp;
  Symbol x = Symbol::Var("data");
  int64_t in = SeedMlp::kIn;
  for (int layer = 0; layer < 3; ++layer) {
    std::string name = "dense" + std::to_string(layer);
    int64_t units = SeedMlp::kUnits[layer];
    x = Symbol::Create("FullyConnected", {x}, {{"num_hidden", std::to_string(units)}},
                       name + "_fwd");
    mlp.weights.push_back(NDArray::RandomUniform({units, in}, -0.07f, 0.07f));
    mlp.biases.push_back(NDArray::RandomUniform({units}, -0.07f, 0.07f));
    mlp.params[name + "_fwd_weight"] = mlp.weights.back();
    mlp.params[name + "_fwd_bias"] = mlp.biases.back();
    if (layer < 2) x = Symbol::Create("Activation", {x}, {{"act_type", "relu"}}, name + "_relu");
    in = units;
  }
  mlp.symbol = x;
  return mlp;
}

void PrintSettings() {
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  const char* threads = std::getenv("OPENBLAS_NUM_THREADS");
  std::printf("OpenBLAS: %s\n", openblas_get_config());
  std::printf(
      "OpenBLAS core: %s; OPENBLAS_CORETYPE=%s; OPENBLAS_NUM_THREADS=%s; threads in use: %d\n",
      openblas_get_corename(), coretype ? coretype : "(unset)", threads ? threads : "(unset)",
      openblas_get_num_threads());
  std::printf("%s\n", hybridnet::KernelLibraries().c_str());
  if (coretype) {
    std::printf(
        "note: OPENBLAS_CORETYPE forces one kernel family (e.g. Haswell = AVX2 even on "
        "AVX-512 machines); unset it to let OpenBLAS pick the fastest for this CPU.\n");
  }
}

namespace {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
        std::string name = run.run_name.function_name;
        if (!run.run_name.args.empty()) name += "/" + run.run_name.args;
        // Adjusted times are in each benchmark's unit; every benchmark here uses microseconds.
        medians_[name] = run.GetAdjustedRealTime();
        order_.push_back(name);
      }
    }
  }
  const std::map<std::string, double>& medians() const { return medians_; }
  const std::vector<std::string>& order() const { return order_; }

 private:
  std::map<std::string, double> medians_;
  std::vector<std::string> order_;
};

}  // namespace

int RunAndReport(int argc, char** argv,
                 const std::vector<std::pair<std::string, std::string>>& ratios) {
  std::vector<char*> args(argv, argv + argc);
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  std::string reps = "--benchmark_repetitions=9";
  std::string min_time = "--benchmark_min_time=0.1";
  std::string aggregates = "--benchmark_report_aggregates_only=true";
  args.insert(args.begin() + 1,
              {interleave.data(), reps.data(), min_time.data(), aggregates.data()});
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  PrintSettings();
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nmedians of 9 interleaved repetitions (microseconds per forward):\n");
  for (const auto& name : reporter.order())
    std::printf("  %-40s %10.2f\n", name.c_str(), reporter.medians().at(name));
  std::printf("\nratios (median / median):\n");
  for (const auto& r : ratios) {
    auto a = reporter.medians().find(r.first);
    auto b = reporter.medians().find(r.second);
    if (a == reporter.medians().end() || b == reporter.medians().end()) continue;
    std::printf("  %-40s / %-32s = %6.3f\n", r.first.c_str(), r.second.c_str(),
                a->second / b->second);
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace bench
}  // namespace hybridnet
