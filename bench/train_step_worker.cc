// hybridnet's worker of bench/train_step_bench.py: one training step (forward + backward, no
// optimizer update) of a model written by make_peer_models, run as a gluon SymbolBlock,
// hybridized with static_alloc and static_shape (or eager with --eager), under
// autograd::Record with every weight's gradient written by autograd::Backward.
//
//   train_step_worker [--eager | --fma-floor] PREFIX INPUT_DIR NAME[,NAME...] THREADS
//
// Loads PREFIX-symbol.json / PREFIX-0000.params and INPUT_DIR/<NAME>.npy (the graph's data
// inputs, in order) and INPUT_DIR/label.npy (one-hot labels shaped as the output). The step: out
// = net(inputs); loss = -sum(log_softmax(out, -1) * onehot, -1) per sample, computed by a loss
// block hybridized as the net is (with --eager, neither is), as Gluon users hybridize their loss;
// backward (head gradient ones). Speaks the drivers' protocol (train_worker_common.h), its check
// line "loss=<sum of the losses> grad_sq=<sum of the squared gradients>".
//
// --fma-floor times what no framework can skip in a dense network's step on this CPU: the
// multiply-adds of its matrix products (forward x w' of every layer, backward dy' x of every
// layer and dy w of every layer but the first, whose data gradient nobody reads) run at the FMA
// units' peak, on THREADS threads: as fused multiply-adds of the widest vectors the CPU has, in
// independent chains of registers, with no memory traffic, bias, activation or loss. Its check
// line has loss 0 and the chains' sum as grad_sq (not the step's numbers).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <immintrin.h>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "hybridnet/autograd.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/imperative.h"
#include "hybridnet/npy.h"
#include "hybridnet/operators.h"
#include "hybridnet/symbol.h"
#include "train_worker_common.h"

namespace hybridnet {
namespace bench {
namespace {

struct Options {
  bool eager = false;
  bool fma_floor = false;
  std::string prefix, input_dir;
  std::vector<std::string> input_names;
  int threads = 1;
};

Options Parse(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Options o;
  if (!args.empty() && (args[0] == "--eager" || args[0] == "--fma-floor")) {
    (args[0] == "--eager" ? o.eager : o.fma_floor) = true;
    args.erase(args.begin());
  }
  if (args.size() != 4) {
    throw std::invalid_argument(
        "usage: train_step_worker [--eager | --fma-floor] PREFIX INPUT_DIR NAME[,NAME...] THREADS");
  }
  o.prefix = args[0];
  o.input_dir = args[1];
  std::stringstream names(args[2]);
  for (std::string name; std::getline(names, name, ',');) o.input_names.push_back(name);
  o.threads = std::stoi(args[3]);
  return o;
}

// -sum(log_softmax(out, -1) * onehot, -1) per sample, from the inputs (out, onehot).
class OneHotCrossEntropy : public gluon::HybridBlock {
 public:
  OneHotCrossEntropy() : HybridBlock("onehotcrossentropy") {}

  std::vector<NDArray> ForwardMany(const std::vector<NDArray>& inputs) override {
    const NDArray log_probs = op::log_softmax(inputs[0], -1);
    return {op::Call("sum", {log_probs * inputs[1]}, {{"axis", "-1"}}) * -1.f};
  }
};

class TrainStep : public TimedTask {
 public:
  explicit TrainStep(const Options& o)
      : net_(gluon::SymbolBlock::Imports(o.prefix + "-symbol.json", o.input_names,
                                         o.prefix + "-0000.params")) {
    for (const std::string& name : o.input_names)
      inputs_.push_back(LoadNpy(o.input_dir + "/" + name + ".npy"));
    onehot_ = LoadNpy(o.input_dir + "/label.npy");
    if (!o.eager) {
      net_->Hybridize(true, {/*static_alloc=*/true, /*static_shape=*/true});
      loss_block_.Hybridize(true, {/*static_alloc=*/true, /*static_shape=*/true});
    }
    const gluon::ParameterDict params = net_->CollectParams();
    for (const gluon::ParameterPtr& p : params.list()) {
      if (!p->differentiable()) continue;  // BatchNorm's running statistics
      p->AttachGrad();
      weights_.push_back(p->data());
    }
  }

  void Run() override {
    {
      auto recording = autograd::Record();
      NDArray out = (*net_)(inputs_)[0];
      loss_ = loss_block_({out, onehot_})[0];
    }
    autograd::Backward({loss_});
  }

  std::string Checks() const override {
    double grad_sq = 0;
    for (const NDArray& w : weights_) grad_sq += Sum(autograd::GetGrad(w), true);
    char text[96];
    std::snprintf(text, sizeof(text), "loss=%.9g grad_sq=%.9g", Sum(loss_, false), grad_sq);
    return text;
  }

 private:
  std::shared_ptr<gluon::SymbolBlock> net_;
  OneHotCrossEntropy loss_block_;
  std::vector<NDArray> inputs_, weights_;
  NDArray onehot_, loss_;
};

// kChains chains of fused multiply-adds, each `rounds` long, in vector registers: x = x * a + b
// converges, so nothing overflows. The sum of the chains keeps the compiler from dropping them.
constexpr int kChains = 12;  // two FMA pipes of 4 cycles' latency need at least 8 in flight
__attribute__((target("avx512f"))) float ChainsAvx512(int64_t rounds) {
  __m512 x[kChains];
  for (int i = 0; i < kChains; ++i) x[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) x[i] = _mm512_fmadd_ps(x[i], a, b);
  }
  alignas(64) float lanes[16];
  float sum = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm512_store_ps(lanes, x[i]);
    for (float v : lanes) sum += v;
  }
  return sum;
}
__attribute__((target("avx2,fma"))) float ChainsAvx2(int64_t rounds) {
  __m256 x[kChains];
  for (int i = 0; i < kChains; ++i) x[i] = _mm256_set1_ps(static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) x[i] = _mm256_fmadd_ps(x[i], a, b);
  }
  alignas(32) float lanes[8];
  float sum = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm256_store_ps(lanes, x[i]);
    for (float v : lanes) sum += v;
  }
  return sum;
}

// The step's multiply-adds at the FMA peak (see --fma-floor above), counted from the model's
// dense layers (the 2-D parameters named *_weight, in the graph's argument order) and its data.
class FmaFloor : public TimedTask {
 public:
  explicit FmaFloor(const Options& o) : threads_(o.threads) {
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
      throw std::invalid_argument("--fma-floor: this CPU has no AVX2 and FMA");
    }
    const auto net = gluon::SymbolBlock::Imports(o.prefix + "-symbol.json", o.input_names,
                                                 o.prefix + "-0000.params");
    const gluon::ParameterDict params = net->CollectParams();
    const NDArray x = LoadNpy(o.input_dir + "/" + o.input_names[0] + ".npy");
    const int64_t batch = x.shape()[0];
    int64_t multiply_adds = 0;
    bool first = true;
    for (const std::string& name : Symbol::Load(o.prefix + "-symbol.json").ListArguments()) {
      const gluon::ParameterPtr p = params.Get(name);
      if (p == nullptr) continue;  // a data input
      const Shape shape = p->data().shape();
      const bool dense_weight = shape.ndim() == 2 && name.size() > 7 &&
                                name.compare(name.size() - 7, 7, "_weight") == 0;
      if (!dense_weight && shape.ndim() != 1) {
        throw std::invalid_argument("--fma-floor: parameter " + name +
                                    " is not a dense layer's weight or bias; the floor is for "
                                    "networks of dense layers");
      }
      if (!dense_weight) continue;
      // Forward and weight gradient; the data gradient but for the first layer.
      multiply_adds += (first ? 2 : 3) * batch * shape[0] * shape[1];
      first = false;
    }
    if (first) throw std::invalid_argument("--fma-floor: no dense layers");
    avx512_ = __builtin_cpu_supports("avx512f");
    const int64_t per_round = int64_t{kChains} * (avx512_ ? 16 : 8);
    rounds_per_thread_ = (multiply_adds + per_round * threads_ - 1) / (per_round * threads_);
  }

  void Run() override {
    float sum = 0;
#pragma omp parallel for num_threads(threads_) reduction(+ : sum)
    for (int t = 0; t < threads_; ++t)
      sum += avx512_ ? ChainsAvx512(rounds_per_thread_) : ChainsAvx2(rounds_per_thread_);
    sum_ = sum;
  }

  std::string Checks() const override {
    char text[64];
    std::snprintf(text, sizeof(text), "loss=0 grad_sq=%.9g", static_cast<double>(sum_));
    return text;
  }

 private:
  int threads_;
  bool avx512_ = false;
  int64_t rounds_per_thread_ = 0;
  float sum_ = 0;
};

int ServeTrainStep(const Options& o) {
  SetNumThreads(o.threads);
  if (o.fma_floor) {
    const bool avx512 = __builtin_cpu_supports("avx512f");
    return Serve(std::string("the step's multiply-adds at the FMA peak: ") +
                     (avx512 ? "AVX-512" : "AVX2") + " FMA chains in registers, " +
                     std::to_string(o.threads) + " thread(s)",
                 [&o] { return std::make_unique<FmaFloor>(o); });
  }
  const std::string name = std::string("hybridnet ") +
                           (o.eager ? "eager" : "hybridized static_alloc/static_shape") + ", " +
                           std::to_string(o.threads) + " thread(s) (" + KernelLibraries() + ")";
  return Serve(name, [&o] { return std::make_unique<TrainStep>(o); });
}

}  // namespace
}  // namespace bench
}  // namespace hybridnet

int main(int argc, char** argv) {
  try {
    return hybridnet::bench::ServeTrainStep(hybridnet::bench::Parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_step_worker: %s\n", e.what());
    return 2;
  }
}
