// The seed MLP (512 -> 256 relu -> 128 relu -> 2) at batch 1 and 256: eager op-by-op invoke vs
// the graph executor vs a hand-written OpenBLAS floor (three GEMM/GEMV + bias + relu, no
// allocation), and the same model through the gluon API before and after hybridize().
// Targets: graph <= 1.2x floor at batch 1, <= 1.05x at batch 256.
#include <cblas.h>

#include <algorithm>
#include <cstring>

#include "bench_common.h"
#include "hybridnet/executor.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/imperative.h"

namespace hybridnet {
namespace bench {
namespace {

const SeedMlp& Mlp() {
  static SeedMlp mlp = MakeSeedMlp(42);
  return mlp;
}

NDArray Input(int64_t batch) { return NDArray::RandomNormal({batch, SeedMlp::kIn}); }

void BM_Floor(benchmark::State& state) {
  const SeedMlp& mlp = Mlp();
  const int batch = static_cast<int>(state.range(0));
  NDArray x = Input(batch);
  std::vector<std::vector<float>> acts;
  for (int64_t units : SeedMlp::kUnits) acts.emplace_back(static_cast<size_t>(batch * units));
  for (auto _ : state) {
    const float* in = x.data<float>();
    int k = SeedMlp::kIn;
    for (int layer = 0; layer < 3; ++layer) {
      const int n = static_cast<int>(SeedMlp::kUnits[layer]);
      float* out = acts[static_cast<size_t>(layer)].data();
      const float* w = mlp.weights[static_cast<size_t>(layer)].data<float>();
      const float* b = mlp.biases[static_cast<size_t>(layer)].data<float>();
      for (int r = 0; r < batch; ++r)
        std::memcpy(out + r * n, b, sizeof(float) * static_cast<size_t>(n));
      if (batch == 1) {
        cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.f, w, k, in, 1, 1.f, out, 1);
      } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, n, k, 1.f, in, k, w, k, 1.f,
                    out, n);
      }
      if (layer < 2) {
        for (int i = 0; i < batch * n; ++i) out[i] = std::max(out[i], 0.f);
      }
      in = out;
      k = n;
    }
    benchmark::DoNotOptimize(acts[2].data());
  }
}

void BM_Eager(benchmark::State& state) {
  const SeedMlp& mlp = Mlp();
  NDArray x = Input(state.range(0));
  std::vector<NodeAttrs> fc, relu;
  for (int layer = 0; layer < 3; ++layer) {
    fc.push_back(MakeNodeAttrs("FullyConnected", "fc",
                               {{"num_hidden", std::to_string(SeedMlp::kUnits[layer])}}));
    relu.push_back(MakeNodeAttrs("Activation", "relu", {{"act_type", "relu"}}));
  }
  for (auto _ : state) {
    NDArray h = x;
    for (size_t layer = 0; layer < 3; ++layer) {
      h = Invoke(fc[layer], {h, mlp.weights[layer], mlp.biases[layer]})[0];
      if (layer < 2) h = Invoke(relu[layer], {h})[0];
    }
    benchmark::DoNotOptimize(h.raw_data());
  }
}

void BM_Graph(benchmark::State& state) {
  const SeedMlp& mlp = Mlp();
  NDArray x = Input(state.range(0));
  GraphExecutor exec(mlp.symbol, {"data"}, mlp.params);
  std::vector<NDArray> out;
  exec.Forward({x}, &out);
  for (auto _ : state) {
    exec.Forward({x}, &out);
    benchmark::DoNotOptimize(out[0].raw_data());
  }
}

void RunGluon(benchmark::State& state, bool hybridize) {
  auto net = std::make_shared<gluon::HybridSequential>();
  net->Add(std::make_shared<gluon::Dense>(256, "relu"), std::make_shared<gluon::Dense>(128, "relu"),
           std::make_shared<gluon::Dense>(2));
  net->Initialize();
  if (hybridize) net->Hybridize();
  NDArray x = Input(state.range(0));
  (*net)(x);
  for (auto _ : state) {
    NDArray y = (*net)(x);
    benchmark::DoNotOptimize(y.raw_data());
  }
}

void BM_GluonEager(benchmark::State& state) { RunGluon(state, false); }
void BM_GluonHybridized(benchmark::State& state) { RunGluon(state, true); }

BENCHMARK(BM_Floor)->Arg(1)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Eager)->Arg(1)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Graph)->Arg(1)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GluonEager)->Arg(1)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GluonHybridized)->Arg(1)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace bench
}  // namespace hybridnet

int main(int argc, char** argv) {
  hybridnet::SetNumThreads(1);
  return hybridnet::bench::RunAndReport(argc, argv,
                                        {{"BM_Graph/1", "BM_Floor/1"},
                                         {"BM_Graph/256", "BM_Floor/256"},
                                         {"BM_Eager/1", "BM_Graph/1"},
                                         {"BM_Eager/256", "BM_Graph/256"},
                                         {"BM_GluonEager/1", "BM_GluonHybridized/1"},
                                         {"BM_GluonEager/256", "BM_GluonHybridized/256"},
                                         {"BM_GluonHybridized/1", "BM_Floor/1"},
                                         {"BM_GluonHybridized/256", "BM_Floor/256"}});
}
