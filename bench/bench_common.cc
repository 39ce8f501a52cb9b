#include "bench_common.h"

#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "hybridnet/gluon/initializer.h"
#include "hybridnet/gluon/model_zoo.h"
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

ZooModel TraceZooModel(const std::string& name) {
  ZooModel model;
  Seed(1);
  model.net = gluon::model_zoo::GetModel(name);
  model.net->Initialize(gluon::Xavier());
  model.x = NDArray::RandomUniform({1, 3, 224, 224});
  model.net->Hybridize();
  (*model.net)(model.x);
  const gluon::ParameterDict all = model.net->CollectParams();
  for (const auto& p : all.list()) {
    const std::string& n = p->name();
    if (n.size() > 11 && n.compare(n.size() - 11, 11, "running_var") == 0) {
      p->SetData(NDArray::RandomUniform(p->shape(), 0.5f, 1.5f));
    }
  }
  model.graph = model.net->CachedGraph();
  for (const auto& p : all.list()) model.params[p->name()] = p->data();
  return model;
}

std::string CpuDescription() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown", flags;
  while (std::getline(cpuinfo, line) && (model == "unknown" || flags.empty())) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (line.compare(0, 10, "model name") == 0) model = line.substr(colon + 2);
    if (line.compare(0, 5, "flags") == 0) flags = " " + line.substr(colon + 1) + " ";
  }
  std::string isa;
  for (const char* f : {"avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile",
                        "amx_int8", "amx_bf16"}) {
    if (flags.find(std::string(" ") + f + " ") != std::string::npos) isa += std::string(" ") + f;
  }
  return "CPU: " + model + "; ISA:" + (isa.empty() ? " none of avx2/avx512/amx" : isa);
}

void PrintSettings() {
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("OpenBLAS: %s\n", openblas_get_config());
  std::printf("OpenBLAS core: %s; OPENBLAS_CORETYPE=%s; kernel threads: %d\n",
              openblas_get_corename(), coretype ? coretype : "(unset)",
              hybridnet::GetNumThreads());
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
