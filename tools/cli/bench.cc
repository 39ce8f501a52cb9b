// hybridnet bench PREFIX EPOCH: forward time eager vs hybridized vs the predictor.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "cli.h"

namespace hybridnet_cli {

namespace {

// Median of `n` timed calls of `fn` in microseconds, after `warmup` untimed ones.
template <typename Fn>
double MedianMicros(int n, int warmup, Fn fn) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> times;
  times.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    auto end = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  std::nth_element(times.begin(), times.begin() + n / 2, times.end());
  return times[static_cast<size_t>(n / 2)];
}

float MaxDiff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  float worst = 0.f;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    std::vector<float> x = FirstValues(a[i].get(), SIZE_MAX), y = FirstValues(b[i].get(), SIZE_MAX);
    if (x.size() != y.size()) return INFINITY;
    for (size_t k = 0; k < x.size(); ++k) worst = std::max(worst, std::abs(x[k] - y[k]));
  }
  return worst;
}

// Random inputs in [-1, 1) from a fixed-seed generator (the same numbers on every run).
std::map<std::string, Tensor> RandomInputs(const ShapeMap& shapes) {
  uint64_t state = 42;
  std::map<std::string, Tensor> inputs;
  for (const auto& kv : shapes) {
    int64_t size = 1;
    for (int64_t d : kv.second) size *= d;
    std::vector<float> values(static_cast<size_t>(size));
    for (float& v : values) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      v = static_cast<float>(state >> 40) / static_cast<float>(1 << 24) * 2.f - 1.f;
    }
    hn_tensor* raw = nullptr;
    Check(hn_tensor_create(HN_DTYPE_FLOAT32, kv.second.data(), static_cast<int>(kv.second.size()),
                           values.data(), values.size() * sizeof(float), &raw));
    inputs[kv.first] = Tensor(raw);
  }
  return inputs;
}

// One eager and one hybridized forward under the profiler: the trace goes to `path`, the
// aggregate table to stdout.
template <typename Forward>
void ProfileForwards(const std::string& path, const Forward& forward, hn_block* eager,
                     hn_block* hybrid) {
  const char* keys[] = {"profile_all", "aggregate_stats", "filename"};
  const char* values[] = {"True", "True", path.c_str()};
  Check(hn_profiler_set_config(keys, values, 3));
  Check(hn_profiler_set_state("run"));
  forward(eager);
  forward(hybrid);
  Check(hn_profiler_set_state("stop"));
  Check(hn_profiler_dump(1));
  char* table = nullptr;
  Check(hn_profiler_dumps(1, "table", "total", 0, &table));
  std::printf("profile of one eager and one hybridized forward: trace in %s\n%s", path.c_str(),
              table);
  hn_string_free(table);
}

int Bench(const Args& args) {
  const int n = args.Number("-n", 1000, 1);
  const int threads = args.Number("--threads", 1, 1);
  const ShapeMap shapes = ParseShapes(args.values("--shape"));
  Check(hn_set_num_threads(threads));
  LoadedModel m = LoadModel(args.positional(0), args.positional(1));
  std::string shapes_text;
  for (const auto& kv : shapes)
    shapes_text += (shapes_text.empty() ? "" : ", ") + kv.first + " " + ShapeText(kv.second);
  const std::vector<Tensor> inputs = BlockInputs(m, RandomInputs(shapes));
  const size_t num_out = m.outputs.size();
  const int warmup = std::max(3, n / 20);

  auto eager_block = ImportBlock(m);
  auto hybrid_block = ImportBlock(m);
  Check(hn_block_hybridize(hybrid_block.get(), 1, 1, 0));
  // The predictor gets the inputs given by name and zero-fills the rest itself.
  hn_predictor* raw_pred = nullptr;
  Check(hn_predictor_create(m.model.get(), &raw_pred));
  Owned<hn_predictor, hn_predictor_free> pred(raw_pred);
  const int dtype = ComputeDType(args.value("--dtype"));
  Check(hn_predictor_set_dtype(pred.get(), dtype));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (shapes.count(m.inputs[i])) {
      Check(hn_predictor_set_input_tensor(pred.get(), m.inputs[i].c_str(), inputs[i].get()));
    }
  }

  float diff = MaxDiff(ForwardBlock(eager_block.get(), inputs, num_out),
                       ForwardBlock(hybrid_block.get(), inputs, num_out));
  std::vector<hn_tensor*> in, out(num_out, nullptr);
  for (const auto& t : inputs) in.push_back(t.get());
  auto forward_block = [&](hn_block* b) {
    size_t got = 0;
    Check(hn_block_forward(b, in.data(), in.size(), out.size(), out.data(), &got));
    for (size_t i = 0; i < got; ++i) hn_tensor_free(out[i]);
  };
  double eager_us = MedianMicros(n, warmup, [&] { forward_block(eager_block.get()); });
  double hybrid_us = MedianMicros(n, warmup, [&] { forward_block(hybrid_block.get()); });
  double pred_us = MedianMicros(n, warmup, [&] { Check(hn_predictor_forward(pred.get())); });

  int threads_in_use = 0;
  Check(hn_get_num_threads(&threads_in_use));
  std::printf("%s epoch %d: %s; %d forwards each (after %d warm-up); %d BLAS thread%s\n",
              m.prefix.c_str(), m.epoch, shapes_text.c_str(), n, warmup, threads_in_use,
              threads_in_use == 1 ? "" : "s");
  std::printf("  %-36s %10.1f us median\n", "eager (op by op)", eager_us);
  std::printf("  %-36s %10.1f us median\n", "hybridized (cached graph)", hybrid_us);
  std::printf("  %-36s %10.1f us median\n",
              dtype == HN_DTYPE_BFLOAT16 ? "predictor (planned graph, bfloat16)"
                                         : "predictor (planned graph, no copies)",
              pred_us);
  std::printf("  eager / hybridized: %.2fx\n", hybrid_us > 0 ? eager_us / hybrid_us : 0.0);
  std::printf("  max |eager - hybridized| over the outputs: %g\n", static_cast<double>(diff));
  if (auto trace = args.value("--profile"))
    ProfileForwards(*trace, forward_block, eager_block.get(), hybrid_block.get());
  return 0;
}

}  // namespace

extern const Command kBench{
    "bench",
    "median forward time eager vs hybridized on random inputs, and their ratio",
    {{"PREFIX", "the export's path prefix"}, {"EPOCH", "its epoch"}},
    {{"--shape", "NAME=D1,D2,...", "an input's shape (inputs not given are zeros)",
      /*repeatable=*/true, /*required=*/true},
     {"-n", "N", "timed forwards of each kind (default 1000)"},
     {"--threads", "N", "BLAS threads (default 1)"},
     {"--dtype", "float32|bfloat16",
      "what the predictor's convolutions and dense layers compute in"},
     {"--profile", "FILE.json",
      "then profile one eager and one hybridized forward: a Chrome trace (chrome://tracing, "
      "Perfetto) to FILE.json and the aggregate table printed"}},
    Bench};

}  // namespace hybridnet_cli
