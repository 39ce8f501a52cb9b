// Overhead of the C API over the C++ call: the seed MLP (512 -> 256 relu -> 128 relu -> 2) at
// batch 1 through an hn_predictor (libhybridnet.so) vs the C++ GraphExecutor it wraps.
// Target: C predictor - C++ executor < 0.3 us per forward (compare the medians).
//
//   BM_CxxExecutor        exec.Forward({x}, &out), x and out reused
//   BM_CPredictor         hn_predictor_forward, input set once with hn_predictor_set_input_tensor
//   BM_CxxCopyInOut       copy 512 floats in, Forward, copy 2 floats out (what a binding does)
//   BM_CPredictorCopyInOut hn_predictor_set_input (copies) + forward + hn_predictor_get_output
//   BM_CPredictorRun      hn_predictor_run: tensor handles in, new output handles out
#include <cstring>

#include "bench_common.h"
#include "hybridnet/c_api.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/io/json.h"
#include "hybridnet/io/params.h"

namespace hybridnet {
namespace bench {
namespace {

const SeedMlp& Mlp() {
  static SeedMlp mlp = MakeSeedMlp(42);
  return mlp;
}

// The seed MLP as a C API model, loaded from memory buffers (JSON text + .params bytes).
hn_model* CModel() {
  static hn_model* model = [] {
    const SeedMlp& mlp = Mlp();
    std::string json = SaveJSON(mlp.symbol);
    NDArrayList list;
    for (const auto& kv : mlp.params) {
      list.names.push_back("arg:" + kv.first);
      list.arrays.push_back(kv.second);
    }
    std::string params = SerializeNDArrayList(list);
    hn_model* m = nullptr;
    if (hn_model_load_from_memory(json.data(), json.size(), params.data(), params.size(), &m) !=
        HN_OK) {
      std::fprintf(stderr, "loading the C model failed: %s\n", hn_last_error());
      std::abort();
    }
    return m;
  }();
  return model;
}

hn_predictor* NewPredictor() {
  hn_predictor* p = nullptr;
  if (hn_predictor_create(CModel(), &p) != HN_OK) {
    std::fprintf(stderr, "hn_predictor_create failed: %s\n", hn_last_error());
    std::abort();
  }
  return p;
}

void Require(int rc, benchmark::State& state) {
  if (rc != HN_OK) state.SkipWithError(hn_last_error());
}

NDArray Input() {
  Seed(7);
  return NDArray::RandomNormal({1, SeedMlp::kIn});
}

void BM_CxxExecutor(benchmark::State& state) {
  NDArray x = Input();
  GraphExecutor exec(Mlp().symbol, {"data"}, Mlp().params);
  std::vector<NDArray> out;
  exec.Forward({x}, &out);
  for (auto _ : state) {
    exec.Forward({x}, &out);
    benchmark::DoNotOptimize(out[0].raw_data());
  }
}

void BM_CPredictor(benchmark::State& state) {
  NDArray x = Input();
  int64_t shape[2] = {1, SeedMlp::kIn};
  hn_tensor* t = nullptr;
  Require(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, x.raw_data(), x.nbytes(), &t), state);
  hn_predictor* p = NewPredictor();
  Require(hn_predictor_set_input_tensor(p, "data", t), state);
  Require(hn_predictor_forward(p), state);
  for (auto _ : state) {
    int rc = hn_predictor_forward(p);
    benchmark::DoNotOptimize(rc);
  }
  hn_predictor_free(p);
  hn_tensor_free(t);
}

void BM_CxxCopyInOut(benchmark::State& state) {
  NDArray source = Input();
  NDArray x(Shape{1, SeedMlp::kIn});
  GraphExecutor exec(Mlp().symbol, {"data"}, Mlp().params);
  std::vector<NDArray> out;
  float y[2];
  exec.Forward({x}, &out);
  for (auto _ : state) {
    std::memcpy(x.raw_data(), source.raw_data(), source.nbytes());
    exec.Forward({x}, &out);
    std::memcpy(y, out[0].raw_data(), sizeof y);
    benchmark::DoNotOptimize(y);
  }
}

void BM_CPredictorCopyInOut(benchmark::State& state) {
  NDArray source = Input();
  int64_t shape[2] = {1, SeedMlp::kIn};
  hn_predictor* p = NewPredictor();
  float y[2];
  Require(hn_predictor_set_input(p, "data", HN_DTYPE_FLOAT32, shape, 2, source.raw_data(),
                                 source.nbytes()),
          state);
  Require(hn_predictor_forward(p), state);
  for (auto _ : state) {
    hn_predictor_set_input(p, "data", HN_DTYPE_FLOAT32, shape, 2, source.raw_data(),
                           source.nbytes());
    hn_predictor_forward(p);
    hn_predictor_get_output(p, 0, y, sizeof y);
    benchmark::DoNotOptimize(y);
  }
  hn_predictor_free(p);
}

void BM_CPredictorRun(benchmark::State& state) {
  NDArray x = Input();
  int64_t shape[2] = {1, SeedMlp::kIn};
  hn_tensor* t = nullptr;
  Require(hn_tensor_create(HN_DTYPE_FLOAT32, shape, 2, x.raw_data(), x.nbytes(), &t), state);
  hn_predictor* p = NewPredictor();
  hn_tensor* y = nullptr;
  size_t n = 0;
  for (auto _ : state) {
    hn_predictor_run(p, &t, 1, 1, &y, &n);
    benchmark::DoNotOptimize(y);
    hn_tensor_free(y);
  }
  hn_predictor_free(p);
  hn_tensor_free(t);
}

BENCHMARK(BM_CxxExecutor)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CPredictor)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CxxCopyInOut)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CPredictorCopyInOut)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CPredictorRun)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace bench
}  // namespace hybridnet

int main(int argc, char** argv) {
  hybridnet::SetNumThreads(1);  // the core linked into this binary
  hn_set_num_threads(1);        // the core inside libhybridnet.so (same OpenBLAS)
  return hybridnet::bench::RunAndReport(argc, argv,
                                        {{"BM_CPredictor", "BM_CxxExecutor"},
                                         {"BM_CPredictorCopyInOut", "BM_CxxCopyInOut"},
                                         {"BM_CPredictorRun", "BM_CxxExecutor"}});
}
