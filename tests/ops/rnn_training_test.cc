// RNN in training: dropout between layers (the gradient of the masked forward), the kept
// forward as the op's hidden output (each forward's backward reads its own, eager or in a graph;
// inference keeps nothing; export does not show it).
// And the language model's loss: log_softmax and its backward over lines split between threads
// give the bits of one thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "conformance.h"
#include "hybridnet/autograd.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/symbol.h"
#include "pass/gradient.h"
#include "pass/passes.h"

namespace hybridnet {
namespace conformance {
namespace {

constexpr int64_t kT = 4, kN = 3, kI = 2, kH = 3, kLayers = 2;

AttrDict TanhAttrs(double p) {
  return {{"mode", "rnn_tanh"},
          {"state_size", std::to_string(kH)},
          {"num_layers", std::to_string(kLayers)},
          {"p", std::to_string(p)}};
}

// data, parameters, state of a 2-layer rnn_tanh, float64, uniform in [-1, 1).
std::vector<NDArray> TanhInputs() {
  const int64_t params = (kH * (kI + kH) + 2 * kH) + (kH * (kH + kH) + 2 * kH);
  Seed(5);
  return {NDArray::RandomUniform({kT, kN, kI}, -1.f, 1.f).AsType(DType::kFloat64),
          NDArray::RandomUniform({params}, -1.f, 1.f).AsType(DType::kFloat64),
          NDArray::RandomUniform({kLayers, kN, kH}, -1.f, 1.f).AsType(DType::kFloat64)};
}

// sum(head * RNN(inputs)) in training mode, the generator seeded with `seed` first.
double Objective(const NodeAttrs& attrs, const std::vector<NDArray>& inputs, const NDArray& head,
                 uint64_t seed) {
  auto train = autograd::TrainMode();
  Seed(seed);
  const NDArray y = Invoke(attrs, inputs)[0];
  double sum = 0;
  for (int64_t i = 0; i < y.size(); ++i) sum += y.data<double>()[i] * head.data<double>()[i];
  return sum;
}

// Autograd's training gradients of sum(head * RNN(inputs)), the generator seeded with `seed`
// before the forward.
std::vector<NDArray> TrainingGradients(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                                       const NDArray& head, uint64_t seed) {
  Seed(seed);
  return EagerGradients(attrs, inputs, {true, true, true}, {head}, /*train=*/true);
}

double MaxDifference(const NDArray& a, const NDArray& b) {
  double most = 0;
  for (int64_t i = 0; i < a.size(); ++i)
    most = std::max(most, std::fabs(a.data<double>()[i] - b.data<double>()[i]));
  return most;
}

// With dropout the training gradient is that of the forward with the masks it drew: central
// differences of forwards seeded alike (so drawing the same masks) agree with it, and it differs
// from the inference gradient.
TEST(RNNTraining, DropoutGradientIsThatOfTheMaskedForward) {
  const NodeAttrs attrs = MakeNodeAttrs("RNN", "rnn", TanhAttrs(0.5));
  std::vector<NDArray> inputs = TanhInputs();
  const NDArray head = NDArray::RandomUniform({kT, kN, kH}, -1.f, 1.f).AsType(DType::kFloat64);
  constexpr uint64_t kSeed = 17;
  const std::vector<NDArray> grads = TrainingGradients(attrs, inputs, head, kSeed);
  ASSERT_EQ(grads.size(), 3u);
  for (size_t i = 0; i < inputs.size(); ++i) {
    double* x = inputs[i].data<double>();
    for (int64_t j = 0; j < inputs[i].size(); ++j) {
      const double at = x[j], step = 1e-6;
      x[j] = at + step;
      const double up = Objective(attrs, inputs, head, kSeed);
      x[j] = at - step;
      const double down = Objective(attrs, inputs, head, kSeed);
      x[j] = at;
      EXPECT_NEAR(grads[i].data<double>()[j], (up - down) / (2 * step), 1e-7)
          << "input " << i << " element " << j;
    }
  }
  const std::vector<NDArray> inference =
      EagerGradients(attrs, inputs, {true, true, true}, {head}, /*train=*/false);
  EXPECT_GT(MaxDifference(grads[0], inference[0]), 1e-3) << "the masks changed nothing";
}

// RNN's inputs for `attrs` on data (t, n, i), float64 uniform in [-1, 1), their shapes from the
// op's own inference; sequence lengths (int32) in [1, t].
std::vector<NDArray> InputsFor(const NodeAttrs& attrs, int64_t t, int64_t n, int64_t i) {
  const Op& op = *attrs.op;
  std::vector<Shape> in(op.NumInputs(attrs)), out(op.NumOutputs(attrs));
  in[0] = Shape{t, n, i};
  op.infer_shape(attrs, &in, &out);
  std::vector<NDArray> inputs;
  for (const Shape& s : in)
    inputs.push_back(NDArray::RandomUniform(s, -1.f, 1.f).AsType(DType::kFloat64));
  if (attrs.dict.count("use_sequence_length")) {
    std::vector<float> lengths;
    for (int64_t b = 0; b < n; ++b) lengths.push_back(static_cast<float>(1 + b % t));
    inputs.back() = NDArray::FromVector(in.back(), lengths).AsType(DType::kInt32);
  }
  return inputs;
}

// The integers of the symbol file's node_row_ptr.
std::vector<int64_t> NodeRowPtr(const std::string& json) {
  const size_t at = json.find("\"node_row_ptr\"");
  std::vector<int64_t> rows;
  if (at == std::string::npos) return rows;
  const size_t end = json.find(']', at);
  int64_t value = -1;
  for (size_t i = json.find('[', at) + 1; i <= end; ++i) {
    if (std::isdigit(static_cast<unsigned char>(json[i]))) {
      value = (value < 0 ? 0 : value * 10) + (json[i] - '0');
    } else if (value >= 0) {
      rows.push_back(value);
      value = -1;
    }
  }
  return rows;
}

// The gradient graph, run by GraphExecutor in training mode, reads the kept output its RNN node
// writes: eager backward's bits, dropout masks drawn alike, for every mode, directions, state
// outputs and sequence lengths. The node has an entry for the kept output in that graph only:
// an inference graph has none (the executor allocates nothing for it), and the symbol file
// counts the visible outputs, as MXNet's does.
TEST(RNNTraining, GraphGradientsMatchEagerBitExact) {
  const std::vector<AttrDict> configs = {
      {{"mode", "rnn_tanh"}, {"state_size", "3"}, {"num_layers", "2"}, {"p", "0.4"}},
      {{"mode", "lstm"},
       {"state_size", "3"},
       {"num_layers", "2"},
       {"bidirectional", "True"},
       {"state_outputs", "True"},
       {"p", "0.3"}},
      {{"mode", "gru"}, {"state_size", "2"}, {"num_layers", "2"}, {"bidirectional", "True"}},
      {{"mode", "rnn_relu"}, {"state_size", "3"}, {"num_layers", "1"}, {"state_outputs", "True"}},
      {{"mode", "lstm"},
       {"state_size", "2"},
       {"num_layers", "2"},
       {"state_outputs", "True"},
       {"use_sequence_length", "True"}},
  };
  constexpr uint64_t kSeed = 31;
  Seed(3);
  for (const AttrDict& config : configs) {
    const NodeAttrs attrs = MakeNodeAttrs("RNN", "rnn", config);
    SCOPED_TRACE(config.at("mode") + " with " + std::to_string(config.size()) + " attributes");
    const std::vector<NDArray> inputs = InputsFor(attrs, 4, 3, 2);
    std::vector<NDArray> heads;
    for (const NDArray& y : Invoke(attrs, inputs))
      heads.push_back(NDArray::RandomUniform(y.shape(), -1.f, 1.f).AsType(DType::kFloat64));
    std::vector<bool> differentiable;
    for (const NDArray& x : inputs) differentiable.push_back(x.dtype() == DType::kFloat64);
    Seed(kSeed);
    const std::vector<NDArray> eager =
        EagerGradients(attrs, inputs, differentiable, heads, /*train=*/true);

    std::map<std::string, NDArray> feed;
    std::vector<Symbol> vars;
    std::vector<NodeEntry> xs, head_grads;
    for (size_t i = 0; i < inputs.size(); ++i) {
      vars.push_back(Symbol::Var("x" + std::to_string(i)));
      feed["x" + std::to_string(i)] = inputs[i];
      if (differentiable[i]) xs.push_back(vars.back().outputs[0]);
    }
    const Symbol rnn = Symbol::Create(attrs, vars);
    for (size_t k = 0; k < rnn.outputs.size(); ++k) {
      head_grads.push_back(Symbol::Var("head_grad_" + std::to_string(k)).outputs[0]);
      feed["head_grad_" + std::to_string(k)] = heads[k];
    }
    Symbol gradients;
    gradients.outputs = internal::Gradient(rnn.outputs, head_grads, xs);
    const std::vector<std::string> names = gradients.ListInputs();
    std::vector<NDArray> data;
    for (const std::string& name : names) data.push_back(feed.at(name));
    ExecutorOptions options;
    options.is_train = true;
    GraphExecutor exec(gradients, names, {}, options);
    Seed(kSeed);
    const std::vector<NDArray> graph = exec.Forward(data);
    ASSERT_EQ(graph.size(), xs.size());
    for (size_t i = 0, j = 0; i < inputs.size(); ++i) {
      if (!differentiable[i]) continue;
      EXPECT_EQ(testing_util::BitDifference(eager[i], graph[j++]), "") << "input " << i;
    }

    const uint32_t visible = attrs.op->NumOutputs(attrs);
    auto rnn_entries = [](const IndexedGraph& g) {
      for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
        if (!g[nid].node->IsVariable() && g[nid].node->attrs.op->name == "RNN")
          return internal::NumEntriesOf(g, nid);
      }
      return 0u;
    };
    EXPECT_EQ(rnn_entries(IndexedGraph(gradients.outputs)), visible + 1);
    EXPECT_EQ(rnn_entries(IndexedGraph(rnn.outputs)), visible);
    const std::vector<int64_t> rows = NodeRowPtr(rnn.ToJSON());
    ASSERT_EQ(rows.size(), inputs.size() + 2);
    EXPECT_EQ(rows.back() - rows[rows.size() - 2], visible);
  }
}

// Two training forwards with dropout on the same inputs, both waiting for their backward (the
// same batch run twice, as SimCSE does): each backward reads the masks of its own forward, so
// each gives the gradients of that forward run alone, whichever backward runs first.
TEST(RNNTraining, TwoDropoutForwardsOnTheSameInputsGetTheirOwnGradients) {
  const NodeAttrs attrs = MakeNodeAttrs("RNN", "rnn", TanhAttrs(0.5));
  const std::vector<NDArray> inputs = TanhInputs();
  const NDArray head = NDArray::RandomUniform({kT, kN, kH}, -1.f, 1.f).AsType(DType::kFloat64);
  constexpr uint64_t kSeed = 23;
  // Alone: the first forward draws the generator's first seed after kSeed, the second its next.
  const std::vector<NDArray> first = TrainingGradients(attrs, inputs, head, kSeed);
  Seed(kSeed);
  {
    auto train = autograd::TrainMode();
    Invoke(attrs, inputs);
  }
  const std::vector<NDArray> second =
      EagerGradients(attrs, inputs, {true, true, true}, {head}, /*train=*/true);
  ASSERT_GT(MaxDifference(first[0], second[0]), 1e-3) << "the two forwards drew the same masks";

  std::vector<NDArray> vars;
  for (const NDArray& x : inputs) {
    vars.push_back(x.Copy());
    autograd::AttachGrad(&vars.back());
  }
  Seed(kSeed);
  NDArray y_first, y_second;
  {
    auto recording = autograd::Record(/*train_mode=*/true);
    y_first = Invoke(attrs, vars)[0];
    y_second = Invoke(attrs, vars)[0];
  }
  auto backward = [&vars, &head](const NDArray& y) {
    autograd::Backward({y}, {head});
    std::vector<NDArray> grads;
    for (const NDArray& v : vars) grads.push_back(autograd::GetGrad(v).Copy());
    return grads;
  };
  const std::vector<NDArray> got_second = backward(y_second);
  const std::vector<NDArray> got_first = backward(y_first);
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(testing_util::BitDifference(got_first[i], first[i]), "") << "input " << i;
    EXPECT_EQ(testing_util::BitDifference(got_second[i], second[i]), "") << "input " << i;
  }
}

TEST(LogSoftmaxLines, TheSameBitsAtAnyThreadCount) {
  // As the LSTM language model's loss: 700 lines of a 10000-word vocabulary.
  const NDArray x = NDArray::RandomUniform({700, 10000}, -8.f, 8.f);
  const NDArray dy = NDArray::RandomUniform({700, 10000}, -1.f, 1.f);
  const int before = GetNumThreads();
  std::vector<NDArray> y, dx;
  for (int threads : {1, 2}) {
    SetNumThreads(threads);
    y.push_back(Invoke("log_softmax", {x}, {{"axis", "-1"}})[0]);
    dx.push_back(Invoke("_backward_log_softmax", {dy, y.back()}, {{"axis", "-1"}})[0]);
  }
  SetNumThreads(before);
  EXPECT_EQ(testing_util::BitDifference(y[0], y[1]), "");
  EXPECT_EQ(testing_util::BitDifference(dx[0], dx[1]), "");
}

}  // namespace
}  // namespace conformance
}  // namespace hybridnet
