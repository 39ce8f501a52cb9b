// ResNet-18 v1 (the model zoo's resnet18_v1, MXNet's topology) at 1x3x224x224: eager op-by-op
// execution vs the hybridized graph executor, on 1 and 2 threads (hybridnet::SetNumThreads), and
// the executor without fusion (Convolution/BatchNorm + relu are fused by default).
// The peers to beat on this model (one thread, measured 2026-11): ONNX Runtime 19.8 ms, TorchScript
// 22.2 ms; compare within one run, as ratios.
#include <memory>

#include "bench_common.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"

namespace hybridnet {
namespace bench {
namespace {

// One network, shared by every benchmark: eager runs call it unhybridized; graph runs use an
// executor over its traced graph with the same parameter arrays.
ZooModel& TheModel() {
  static ZooModel m = [] {
    ZooModel model = TraceZooModel("resnet18_v1");
    model.net->Hybridize(false);
    return model;
  }();
  return m;
}

void BM_Eager(benchmark::State& state) {
  SetNumThreads(static_cast<int>(state.range(0)));
  ZooModel& m = TheModel();
  for (auto _ : state) {
    NDArray y = (*m.net)(m.x);
    benchmark::DoNotOptimize(y.raw_data());
  }
}

void RunGraph(benchmark::State& state, ExecutorOptions options) {
  SetNumThreads(static_cast<int>(state.range(0)));
  ZooModel& m = TheModel();
  GraphExecutor exec(m.graph, {"data"}, m.params, options);
  std::vector<NDArray> out;
  exec.Forward({m.x}, &out);
  for (auto _ : state) {
    exec.Forward({m.x}, &out);
    benchmark::DoNotOptimize(out[0].raw_data());
  }
  state.counters["kernels"] = static_cast<double>(exec.stats().num_kernels);
}

void BM_Hybridized(benchmark::State& state) { RunGraph(state, ExecutorOptions{}); }

void BM_HybridizedNoFuse(benchmark::State& state) {
  ExecutorOptions options;
  options.fuse = false;
  RunGraph(state, options);
}

BENCHMARK(BM_Eager)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Hybridized)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HybridizedNoFuse)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace bench
}  // namespace hybridnet

int main(int argc, char** argv) {
  return hybridnet::bench::RunAndReport(argc, argv,
                                        {{"BM_Eager/1", "BM_Hybridized/1"},
                                         {"BM_Eager/2", "BM_Hybridized/2"},
                                         {"BM_Hybridized/1", "BM_Hybridized/2"},
                                         {"BM_HybridizedNoFuse/1", "BM_Hybridized/1"}});
}
