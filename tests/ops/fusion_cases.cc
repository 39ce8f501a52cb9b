// Conformance cases for the internal _hn_convolution_act, and the fusion pass over
// convolutional graphs: Convolution + Activation and BatchNorm + relu (bit-identical to the
// unfused ops, so on by default).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "common/test_util.h"
#include "conformance.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace conformance {
namespace {

using namespace ::hybridnet::testing_util;  // NOLINT: the shared test helpers

// 2-D convolution (stride, pad, groups) followed by an activation, in double.
RefFn ConvActRef(
    int64_t stride, int64_t pad, int64_t groups, bool bias, std::function<double(double)> act) {
  return [=](const std::vector<RefTensor>& in) {
    const Shape& xs = in[0].shape;
    const Shape& ws = in[1].shape;
    const int64_t F = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
    const int64_t oh = (xs[2] + 2 * pad - kh) / stride + 1,
                  ow = (xs[3] + 2 * pad - kw) / stride + 1;
    RefTensor out{Shape{xs[0], F, oh, ow}};
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> o = Unravel(i, out.shape);
      const int64_t grp = o[1] / (F / groups);
      double acc = bias ? in[2][o[1]] : 0.0;
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t a = 0; a < kh; ++a)
          for (int64_t b = 0; b < kw; ++b) {
            const int64_t y = o[2] * stride - pad + a, x = o[3] * stride - pad + b;
            if (y < 0 || y >= xs[2] || x < 0 || x >= xs[3]) continue;
            acc +=
                in[0][Offset(xs, {o[0], grp * cg + c, y, x})] * in[1][Offset(ws, {o[1], c, a, b})];
          }
      out[i] = act(acc);
    }
    return std::vector<RefTensor>{out};
  };
}

OpCase Internal(OpCase c) {
  c.check_json = false;
  return c;
}

HN_CONFORMANCE_CASES(ConvolutionAct) {
  auto relu = [](double v) { return v > 0 ? v : 0.0; };
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  cases->push_back(Internal(
      Case("_hn_convolution_act",
           {{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"pad", "(1, 1)"}, {"act_type", "relu"}},
           {{2, 3, 6, 5}, {4, 3, 3, 3}, {4}}, ConvActRef(1, 1, 1, true, relu), "relu")));
  cases->push_back(Internal(Case("_hn_convolution_act",
                                 {{"kernel", "(3, 3)"},
                                  {"num_filter", "4"},
                                  {"stride", "(2, 2)"},
                                  {"num_group", "2"},
                                  {"no_bias", "True"},
                                  {"act_type", "sigmoid"}},
                                 {{1, 4, 7, 7}, {4, 2, 3, 3}}, ConvActRef(2, 0, 2, false, sigmoid),
                                 "sigmoid_groups")));
}

// ---- passes ------------------------------------------------------------------------------------

// conv -> BatchNorm -> relu -> conv(+bias) -> relu: a ResNet stem plus a VGG-style layer.
struct ConvNet {
  Symbol symbol;
  std::map<std::string, NDArray> params;
  NDArray x;
};

ConvNet MakeConvNet(bool fix_gamma) {
  Seed(5);
  ConvNet n;
  Symbol data = Symbol::Var("data");
  Symbol c1 = Symbol::Create(
      "Convolution", {data},
      {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"pad", "(1, 1)"}, {"no_bias", "True"}}, "conv1");
  Symbol bn = Symbol::Create(
      "BatchNorm", {c1}, {{"eps", "1e-05"}, {"fix_gamma", fix_gamma ? "True" : "False"}}, "bn1");
  Symbol r1 = Symbol::Create("Activation", {bn}, {{"act_type", "relu"}}, "relu1");
  Symbol c2 =
      Symbol::Create("Convolution", {r1}, {{"kernel", "(1, 1)"}, {"num_filter", "6"}}, "conv2");
  n.symbol = Symbol::Create("Activation", {c2}, {{"act_type", "relu"}}, "relu2");
  n.params["conv1_weight"] = NDArray::RandomNormal({8, 3, 3, 3});
  n.params["bn1_gamma"] = NDArray::RandomUniform({8}, 0.5f, 1.5f);
  n.params["bn1_beta"] = NDArray::RandomNormal({8}, 0.f, 0.1f);
  n.params["bn1_moving_mean"] = NDArray::RandomNormal({8}, 0.f, 0.1f);
  n.params["bn1_moving_var"] = NDArray::RandomUniform({8}, 0.5f, 1.5f);
  n.params["conv2_weight"] = NDArray::RandomNormal({6, 8, 1, 1});
  n.params["conv2_bias"] = NDArray::RandomNormal({6});
  n.x = NDArray::RandomNormal({2, 3, 9, 7});
  return n;
}

// The graph run op by op through Invoke, as eager mode does.
NDArray RunEager(const ConvNet& n) {
  IndexedGraph g(n.symbol.outputs);
  std::vector<NDArray> values(g.num_entries());
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node* node = g[nid].node;
    if (node->IsVariable()) {
      values[g.entry_id(nid, 0)] = node->name() == "data" ? n.x : n.params.at(node->name());
      continue;
    }
    std::vector<NDArray> in;
    for (const auto& e : g[nid].inputs) in.push_back(values[g.entry_id(e)]);
    std::vector<NDArray> out = Invoke(node->attrs, in);
    for (uint32_t i = 0; i < out.size(); ++i) values[g.entry_id(nid, i)] = out[i];
  }
  return values[g.entry_id(g.outputs()[0])];
}

TEST(ConvolutionFusion, FusedGraphIsBitIdenticalToEager) {
  for (bool fix_gamma : {false, true}) {
    ConvNet n = MakeConvNet(fix_gamma);
    NDArray eager = RunEager(n);
    for (bool fuse : {true, false}) {
      ExecutorOptions options;
      options.fuse = fuse;
      GraphExecutor exec(n.symbol, {"data"}, n.params, options);
      EXPECT_TRUE(BitEqual(exec.Forward({n.x})[0], eager)) << "fuse=" << fuse;
      // BatchNorm + relu and Convolution + relu.
      EXPECT_EQ(exec.stats().num_fused, fuse ? 2u : 0u);
      EXPECT_EQ(exec.stats().num_kernels, fuse ? 3u : 5u);
    }
  }
}

TEST(ConvolutionFusion, ProducerWithSeveralConsumersIsNotFused) {
  Seed(6);
  Symbol data = Symbol::Var("data");
  Symbol c =
      Symbol::Create("Convolution", {data}, {{"kernel", "(1, 1)"}, {"num_filter", "2"}}, "c");
  Symbol r = Symbol::Create("Activation", {c}, {{"act_type", "relu"}}, "r");
  Symbol sum = Symbol::Create("elemwise_add", {r, c}, {}, "sum");  // c is read twice
  std::map<std::string, NDArray> params{{"c_weight", NDArray::RandomNormal({2, 3, 1, 1})},
                                        {"c_bias", NDArray::RandomNormal({2})}};
  GraphExecutor exec(sum, {"data"}, params);
  NDArray x = NDArray::RandomNormal({1, 3, 4, 4});
  exec.Forward({x});
  EXPECT_EQ(exec.stats().num_fused, 0u);
}

}  // namespace
}  // namespace conformance
}  // namespace hybridnet
