// The fusion pass over convolutional graphs: Convolution + Activation and BatchNorm + relu are
// bit-identical to the unfused ops (so fusion is on by default).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "common/eager_reference.h"
#include "hybridnet/executor.h"
#include "hybridnet/imperative.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace {

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

bool BitEqual(const NDArray& a, const NDArray& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

NDArray RunEager(const ConvNet& n) {
  std::map<std::string, NDArray> values = n.params;
  values["data"] = n.x;
  return testing_util::RunNodeByNode(n.symbol, values)[0];
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
}  // namespace hybridnet
