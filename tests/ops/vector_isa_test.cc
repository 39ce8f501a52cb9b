// The kernels compiled once per ISA (kernels/vector_isa.h), on every ISA this CPU runs, forced one
// at a time: sums along a line, the RNN's gates, the dense bias gradient, the convolution
// epilogue's pass, BatchNorm's channel-last apply and the optimizer updates give the baseline
// build's bits; softmax's long lines give their own (their exponential sums' lanes follow the
// vector width), close to the baseline's, its short lines (a lane per line) the baseline's; and on
// each ISA the fused cross-entropy of training graphs gives the bits of log_softmax, elemwise_mul
// and sum and of their gradients.
#include "kernels/vector_isa.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "conformance.h"
#include "hybridnet/imperative.h"
#include "kernels/batch_norm.h"
#include "kernels/epilogue.h"

namespace hybridnet {
namespace conformance {
namespace {

using internal::KernelChoice;
using internal::VectorIsa;
using internal::VectorIsaKernels;
using testing_util::BitDifference;

constexpr int kBaseline = static_cast<int>(VectorIsa::kBaseline);

// The ISAs this CPU runs, the baseline last.
std::vector<int> IsasHere() {
  std::vector<int> isas;
  const KernelChoice& choice = VectorIsaKernels();
  for (size_t k = 0; k < choice.kernels().size(); ++k) {
    if (choice.kernels()[k].runs_here) isas.push_back(static_cast<int>(k));
  }
  return isas;
}

std::string IsaName(int isa) { return VectorIsaKernels().kernels()[static_cast<size_t>(isa)].name; }

// The arrays `run` computes with `isa` forced, which must have run.
std::vector<NDArray> On(int isa, const std::function<std::vector<NDArray>()>& run) {
  KernelChoice& choice = VectorIsaKernels();
  const int64_t runs = choice.Runs(isa);
  choice.Force(isa);
  std::vector<NDArray> got;
  try {
    got = run();
  } catch (...) {
    choice.Force(-1);
    throw;
  }
  choice.Force(-1);
  EXPECT_GT(choice.Runs(isa), runs) << IsaName(isa) << " did not run";
  return got;
}

// The RNN's inputs for `attrs` on float32 data (t, n, i), uniform in [-1, 1), their shapes from
// the op's own inference.
std::vector<NDArray> RnnInputs(const NodeAttrs& attrs, int64_t t, int64_t n, int64_t i) {
  std::vector<Shape> in(attrs.op->NumInputs(attrs)), out(attrs.op->NumOutputs(attrs));
  in[0] = Shape{t, n, i};
  attrs.op->infer_shape(attrs, &in, &out);
  std::vector<NDArray> inputs;
  for (const Shape& s : in) inputs.push_back(NDArray::RandomUniform(s, -1.f, 1.f));
  return inputs;
}

// A (rows, cols) float array in [-1, 1) but for 2^60 and -2^60 in two elements of each row (or
// of each column): which of the small elements a double sum of that line keeps depends on its
// order, so that a sum in another order gives other bits.
NDArray Cancelling(int64_t rows, int64_t cols, bool columns, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> small(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (float& x : v) x = small(rng);
  const int64_t lines = columns ? cols : rows, length = columns ? rows : cols;
  for (int64_t l = 0; l < lines; ++l) {
    const int64_t first = (5 * l) % length, second = (5 * l + length / 2) % length;
    auto at = [&](int64_t k) -> float& {
      return v[static_cast<size_t>(columns ? k * cols + l : l * cols + k)];
    };
    at(first) = std::ldexp(1.f, 60);
    at(second) = -std::ldexp(1.f, 60);
  }
  return NDArray::FromVector(Shape{rows, cols}, v);
}

// The op's forward outputs, then the gradients of all its inputs for the head gradient `head`.
std::vector<NDArray> ForwardAndGradients(const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                         const NDArray& head) {
  std::vector<NDArray> got = Invoke(attrs, in);
  for (const NDArray& g :
       EagerGradients(attrs, in, std::vector<bool>(in.size(), true), {head}, /*train=*/true))
    got.push_back(g);
  return got;
}

TEST(VectorIsa, SumsRnnGatesAndTheDenseBiasGradientGiveTheBaselineBits) {
  Seed(11);
  // 1037 elements: 64 rounds of LineSum's 16 lanes and a tail of 13.
  const NDArray x = Cancelling(5, 1037, /*columns=*/false, 1);
  // 37 hidden units: four rounds of AVX2's 8 float lanes, two of AVX-512's 16, and tails.
  const NodeAttrs lstm = MakeNodeAttrs(
      "RNN", "lstm", {{"mode", "lstm"}, {"state_size", "37"}, {"num_layers", "2"}});
  const NodeAttrs gru = MakeNodeAttrs(
      "RNN", "gru",
      {{"mode", "gru"}, {"state_size", "37"}, {"num_layers", "1"}, {"bidirectional", "True"}});
  const NodeAttrs tanh = MakeNodeAttrs(
      "RNN", "tanh", {{"mode", "rnn_tanh"}, {"state_size", "37"}, {"num_layers", "1"}});
  const std::vector<NDArray> lstm_in = RnnInputs(lstm, 6, 3, 11);
  const std::vector<NDArray> gru_in = RnnInputs(gru, 5, 2, 7);
  const std::vector<NDArray> tanh_in = RnnInputs(tanh, 4, 3, 5);
  const NodeAttrs dense = MakeNodeAttrs("FullyConnected", "fc", {{"num_hidden", "37"}});
  const std::vector<NDArray> dense_in = {NDArray::RandomUniform({9, 13}, -1.f, 1.f),
                                         NDArray::RandomUniform({37, 13}, -1.f, 1.f),
                                         NDArray::RandomUniform({37}, -1.f, 1.f)};
  const NDArray lstm_head = NDArray::RandomUniform({6, 3, 37}, -1.f, 1.f);
  const NDArray gru_head = NDArray::RandomUniform({5, 2, 74}, -1.f, 1.f);
  const NDArray tanh_head = NDArray::RandomUniform({4, 3, 37}, -1.f, 1.f);
  const NDArray dense_head = Cancelling(9, 37, /*columns=*/true, 2);
  auto run = [&] {
    std::vector<NDArray> got = Invoke("sum", {x}, {{"axis", "-1"}});
    for (const NDArray& a : ForwardAndGradients(lstm, lstm_in, lstm_head)) got.push_back(a);
    for (const NDArray& a : ForwardAndGradients(gru, gru_in, gru_head)) got.push_back(a);
    for (const NDArray& a : ForwardAndGradients(tanh, tanh_in, tanh_head)) got.push_back(a);
    for (const NDArray& a : ForwardAndGradients(dense, dense_in, dense_head)) got.push_back(a);
    return got;
  };
  const std::vector<NDArray> baseline = On(kBaseline, run);
  for (const int isa : IsasHere()) {
    if (isa == kBaseline) continue;
    const std::vector<NDArray> got = On(isa, run);
    ASSERT_EQ(got.size(), baseline.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(BitDifference(got[i], baseline[i]), "") << IsaName(isa) << " array " << i;
  }
}

// Every optimizer update op's conformance cases, their (3, 4) arrays made 1037 elements long (64
// rounds of 16 lanes and a tail): on every ISA the new weights and the states updated in place
// have the baseline's bits, NaN and clipped gradients included.
TEST(VectorIsa, OptimizerUpdatesGiveTheBaselineBits) {
  const std::vector<OpCase>& cases = AllCases();
  const std::vector<std::string>& names = CaseNames();
  KernelChoice& choice = VectorIsaKernels();
  std::vector<int64_t> runs_before;
  for (const int isa : IsasHere()) runs_before.push_back(choice.Runs(isa));
  std::set<std::string> ops;
  for (size_t c = 0; c < cases.size(); ++c) {
    const std::string& op = cases[c].op;
    if (op.find("_update") == std::string::npos) continue;
    OpCase longer = cases[c];
    for (Shape& s : longer.inputs)
      if (s.ndim() == 2) s = Shape{1037};
    std::vector<NDArray> inputs = MakeInputs(longer, names[c]);
    // A NaN gradient element (input 1 is the gradient of every update op).
    if (inputs.size() > 1 && inputs[1].dtype() == DType::kFloat32 && inputs[1].size() > 100)
      inputs[1].data<float>()[100] = std::numeric_limits<float>::quiet_NaN();
    // Outputs, then every input (states are updated in place), of a run on copies.
    auto run = [&](int isa) {
      std::vector<NDArray> copies;
      for (const NDArray& a : inputs) copies.push_back(a.Copy());
      choice.Force(isa);
      std::vector<NDArray> got;
      try {
        got = RunEager(longer, copies);
      } catch (...) {
        choice.Force(-1);
        throw;
      }
      choice.Force(-1);
      got.insert(got.end(), copies.begin(), copies.end());
      return got;
    };
    const std::vector<NDArray> baseline = run(kBaseline);
    for (const int isa : IsasHere()) {
      if (isa == kBaseline) continue;
      const std::vector<NDArray> got = run(isa);
      ASSERT_EQ(got.size(), baseline.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_EQ(BitDifference(got[i], baseline[i]), "")
            << names[c] << " on " << IsaName(isa) << ": array " << i;
    }
    ops.insert(op);
  }
  EXPECT_GE(ops.size(), 20u) << "update ops with conformance cases";
  const std::vector<int> isas = IsasHere();
  for (size_t k = 0; k < isas.size(); ++k)
    EXPECT_GT(choice.Runs(isas[k]), runs_before[k]) << IsaName(isas[k]) << " ran no update";
}

// RunEpilogue's pass after oneDNN's convolutions and BatchNormApplyChannelLast, on channel counts
// around the vector widths (tails), NaN included: every ISA gives the bits of the separate ops'
// float operations (a rounded product, then the adds; relu's NaN to 0; clip).
TEST(VectorIsa, TheEpilogueAndBatchNormsChannelLastApplyGiveTheSeparateOpsBits) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> any(-3.f, 3.f);
  struct Steps {
    bool bn, residual, relu, clip;
  };
  const Steps steps[] = {{true, false, true, false},
                         {true, true, false, false},
                         {false, true, false, true},
                         {true, true, true, false}};
  const int64_t positions = 5;
  for (const int64_t C : {1, 7, 8, 9, 16, 17, 64}) {
    const size_t n = static_cast<size_t>(positions * C);
    std::vector<float> conv(n), residual(n), scale(static_cast<size_t>(C)), shift(scale.size());
    for (std::vector<float>* v : {&conv, &residual, &scale, &shift})
      for (float& x : *v) x = any(rng);
    conv[0] = std::numeric_limits<float>::quiet_NaN();
    conv[n - 1] = -std::numeric_limits<float>::quiet_NaN();
    // The separate ops' results, one element at a time.
    std::vector<std::vector<float>> want;
    for (const Steps& k : steps) {
      std::vector<float> w(n);
      for (size_t i = 0; i < n; ++i) {
        const size_t c = i % static_cast<size_t>(C);
        float v = conv[i];
        if (k.bn) {
          volatile float product = v * scale[c];  // rounded, as the kernels' multiply
          v = product + shift[c];
        }
        if (k.residual) v = v + residual[i];
        if (k.relu) v = v > 0.f ? v : 0.f;
        w[i] = k.clip ? (v > 0.5f ? 0.5f : (v < -0.25f ? -0.25f : v)) : v;
      }
      want.push_back(w);
    }
    for (const bool relu : {false, true}) {
      std::vector<float> w(n);
      for (size_t i = 0; i < n; ++i) {
        volatile float product = conv[i] * scale[i % static_cast<size_t>(C)];
        const float v = product + shift[i % static_cast<size_t>(C)];
        w[i] = relu && !(v > 0.f) ? 0.f : v;
      }
      want.push_back(w);
    }
    for (const int isa : IsasHere()) {
      SCOPED_TRACE(IsaName(isa) + " C=" + std::to_string(C));
      // One float past the end of each output: no version may write there.
      const std::vector<NDArray> got = On(isa, [&] {
        std::vector<NDArray> outs;
        for (const Steps& k : steps) {
          std::vector<float> out(n + 1, 42.f);
          internal::EpilogueArgs a;
          a.positions = positions;
          a.C = C;
          a.conv = conv.data();
          a.epilogue.bn_scale = k.bn ? scale.data() : nullptr;
          a.epilogue.bn_shift = k.bn ? shift.data() : nullptr;
          a.epilogue.relu = k.relu;
          a.epilogue.clip = k.clip;
          a.epilogue.clip_min = -0.25f;
          a.epilogue.clip_max = 0.5f;
          a.residual = k.residual ? residual.data() : nullptr;
          a.out = out.data();
          internal::RunEpilogue(a);
          outs.push_back(NDArray::FromVector(Shape{static_cast<int64_t>(n + 1)}, out));
        }
        for (const bool relu : {false, true}) {
          std::vector<float> out(n + 1, 42.f);
          internal::BatchNormApplyChannelLast(conv.data(), scale.data(), shift.data(), positions,
                                              C, relu, out.data());
          outs.push_back(NDArray::FromVector(Shape{static_cast<int64_t>(n + 1)}, out));
        }
        return outs;
      });
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k) {
        std::vector<float> w = want[k];
        w.push_back(42.f);
        EXPECT_EQ(BitDifference(got[k], NDArray::FromVector(Shape{static_cast<int64_t>(n + 1)}, w)),
                  "")
            << (k < 4 ? "epilogue " : "BatchNorm apply ") << k;
      }
    }
  }
}

// The largest difference of a and b relative to the largest magnitude in b.
double RelativeDifference(const NDArray& a, const NDArray& b) {
  const std::vector<float> va = a.ToFloatVector(), vb = b.ToFloatVector();
  double most = 0, scale = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    most = std::max(most, std::fabs(static_cast<double>(va[i]) - vb[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(vb[i])));
  }
  return most / scale;
}

// Lines of 1037 elements (vectors along each line) and lines of 10 and 32 (a lane per line, 16
// lines at a time: 37 lines leave a partial tile).
class SoftmaxLines : public ::testing::TestWithParam<std::pair<int64_t, int64_t>> {};

TEST_P(SoftmaxLines, AndTheFusedCrossEntropyOnEveryIsa) {
  Seed(12);
  const auto [lines, n] = GetParam();
  const NDArray x = NDArray::RandomUniform({lines, n}, -8.f, 8.f);
  // The gradients' sums along a line cancel, so that each ISA's order shows in their bits.
  const NDArray dy = Cancelling(lines, n, /*columns=*/false, 3);
  const NDArray label = Cancelling(lines, n, /*columns=*/false, 4);
  const NDArray loss_grad = NDArray::RandomUniform({lines}, -1.f, 1.f);
  // _backward_sum's broadcast of loss_grad times the label, as elemwise_mul's gradient.
  std::vector<float> label_grad = label.ToFloatVector();
  const std::vector<float> g = loss_grad.ToFloatVector();
  for (int64_t i = 0; i < lines * n; ++i) label_grad[i] *= g[i / n];
  const NDArray fused_dy = NDArray::FromVector(Shape{lines, n}, label_grad);
  const AttrDict last = {{"axis", "-1"}};
  std::vector<std::vector<NDArray>> by_isa;
  for (const int isa : IsasHere()) {
    SCOPED_TRACE(IsaName(isa));
    const std::vector<NDArray> got = On(isa, [&] {
      const NDArray log_probs = Invoke("log_softmax", {x}, last)[0];
      const NDArray probs = Invoke("softmax", {x}, last)[0];
      return std::vector<NDArray>{
          log_probs,
          probs,
          Invoke("_backward_log_softmax", {dy, log_probs}, last)[0],
          Invoke("_backward_softmax", {dy, probs}, last)[0],
          Invoke("sum", {Invoke("elemwise_mul", {log_probs, label}, {})[0]}, last)[0],
          Invoke("_hn_log_softmax_label_sum", {x, label}, {})[0],
          Invoke("_backward_log_softmax", {fused_dy, log_probs}, last)[0],
          Invoke("_backward_hn_log_softmax_label_sum", {loss_grad, label, log_probs}, {})[0]};
    });
    EXPECT_EQ(BitDifference(got[5], got[4]), "") << "the fused cross-entropy";
    EXPECT_EQ(BitDifference(got[7], got[6]), "") << "the fused cross-entropy's gradient";
    by_isa.push_back(got);
  }
  for (size_t k = 0; k + 1 < by_isa.size(); ++k) {
    for (size_t i = 0; i < 4; ++i) {
      if (n <= 32) {  // sequential sums: the baseline's bits
        EXPECT_EQ(BitDifference(by_isa[k][i], by_isa.back()[i]), "")
            << IsaName(IsasHere()[k]) << " array " << i;
      } else if (i < 2) {  // each ISA sums the exponentials in its own lanes: a few float ulps
        EXPECT_LT(RelativeDifference(by_isa[k][i], by_isa.back()[i]), 1e-6)
            << IsaName(IsasHere()[k]) << " array " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(VectorIsa, SoftmaxLines,
                         ::testing::Values(std::make_pair(int64_t{6}, int64_t{1037}),
                                           std::make_pair(int64_t{37}, int64_t{10}),
                                           std::make_pair(int64_t{37}, int64_t{32})));

}  // namespace
}  // namespace conformance
}  // namespace hybridnet
