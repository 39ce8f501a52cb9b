// ResNet-50 v1 (the model zoo's resnet50_v1, MXNet's topology) at 1x3x224x224 on the graph
// executor in float32 and with ExecutorOptions::dtype bfloat16 (MXNet AMP's conversion at load:
// convolutions with bfloat16 products), on 1 and 2 threads. Targets (issue 37): bfloat16 <= 0.7x
// float32's time where the CPU has avx512_bf16, <= 0.5x with AMX. The CPU's model and its
// bfloat16 instructions are printed with the figures (oneDNN's ISA in the settings line).
#include <cstdio>
#include <vector>

#include "bench_common.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"

namespace hybridnet {
namespace bench {
namespace {

ZooModel& TheModel() {
  static ZooModel m = TraceZooModel("resnet50_v1");
  return m;
}

void RunGraph(benchmark::State& state, DType dtype) {
  SetNumThreads(static_cast<int>(state.range(0)));
  ZooModel& m = TheModel();
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

void PrintCpu() {
  std::printf("%s\n", CpuDescription().c_str());
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
