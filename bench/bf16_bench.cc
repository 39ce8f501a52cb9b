// ResNet-50 v1 (the model zoo's resnet50_v1, MXNet's topology) at 1x3x224x224 on the graph
// executor in float32 and with ExecutorOptions::dtype bfloat16 (MXNet AMP's conversion at load:
// convolutions with bfloat16 products), on 1 and 2 threads. Targets (issue 37): bfloat16 <= 0.7x
// float32's time where the CPU has avx512_bf16, <= 0.5x with AMX. The CPU's model and its
// bfloat16 instructions are printed with the figures (oneDNN's ISA in the settings line).
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "bench_common.h"
#include "hybridnet/executor.h"
#include "hybridnet/gluon/model_zoo.h"
#include "hybridnet/imperative.h"

namespace hybridnet {
namespace bench {
namespace {

struct Model {
  NDArray x;
  Symbol graph;
  std::map<std::string, NDArray> params;
};

Model& TheModel() {
  static Model m = [] {
    Model model;
    Seed(1);
    std::shared_ptr<gluon::HybridBlock> net = gluon::model_zoo::GetModel("resnet50_v1");
    net->Initialize(gluon::Xavier());
    model.x = NDArray::RandomUniform({1, 3, 224, 224});
    net->Hybridize();
    (*net)(model.x);
    gluon::ParameterDict all = net->CollectParams();
    for (const auto& p : all.list()) {
      const std::string& n = p->name();
      if (n.size() > 11 && n.compare(n.size() - 11, 11, "running_var") == 0) {
        p->SetData(NDArray::RandomUniform(p->shape(), 0.5f, 1.5f));
      }
    }
    model.graph = net->CachedGraph();
    for (const auto& p : all.list()) model.params[p->name()] = p->data();
    return model;
  }();
  return m;
}

void RunGraph(benchmark::State& state, DType dtype) {
  SetNumThreads(static_cast<int>(state.range(0)));
  Model& m = TheModel();
  ExecutorOptions options;
  options.dtype = dtype;
  GraphExecutor exec(m.graph, {"data"}, m.params, options);
  std::vector<NDArray> out;
  exec.Forward({m.x}, &out);
  for (auto _ : state) {
    exec.Forward({m.x}, &out);
    benchmark::DoNotOptimize(out[0].raw_data());
  }
  state.counters["bf16_convolutions"] = static_cast<double>(exec.stats().num_bf16);
}

void BM_Float32(benchmark::State& state) { RunGraph(state, DType::kFloat32); }
void BM_BFloat16(benchmark::State& state) { RunGraph(state, DType::kBFloat16); }

BENCHMARK(BM_Float32)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BFloat16)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// "model name: ...; bfloat16 instructions: avx512_bf16 amx_bf16" from /proc/cpuinfo.
void PrintCpu() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown", flags;
  while (std::getline(cpuinfo, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_first_of(" \t"));
    if (key == "model" && line.compare(0, 10, "model name") == 0 && model == "unknown") {
      model = line.substr(colon + 2);
    } else if (key == "flags" && flags.empty()) {
      flags = " " + line.substr(colon + 1) + " ";
    }
  }
  std::string bf16;
  for (const char* f : {"avx512_bf16", "amx_bf16", "amx_tile"}) {
    if (flags.find(std::string(" ") + f + " ") != std::string::npos) bf16 += std::string(" ") + f;
  }
  std::printf("CPU: %s; bfloat16 instructions:%s\n", model.c_str(),
              bf16.empty() ? " none (oneDNN emulates bf16 on AVX-512)" : bf16.c_str());
  std::printf("targets: BFloat16 / Float32 <= 0.7 with avx512_bf16, <= 0.5 with AMX\n");
}

}  // namespace
}  // namespace bench
}  // namespace hybridnet

int main(int argc, char** argv) {
  hybridnet::bench::PrintCpu();
  return hybridnet::bench::RunAndReport(
      argc, argv, {{"BM_BFloat16/1", "BM_Float32/1"}, {"BM_BFloat16/2", "BM_Float32/2"}});
}
