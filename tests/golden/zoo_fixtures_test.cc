// The MXNet-written model fixtures run end to end: mnist-lenet-0 (2015, pre-NNVM JSON, V0
// params, SoftmaxOutput with an unfed label) and the GluonCV cifar_resnet20_v1/v2 exports (MXNet
// 2.0 pre-release, legacy mode). Expected outputs were computed by MXNet 1.9.1 (plain CPU
// kernels, MXNET_SUBGRAPH_BACKEND=NONE) for the deterministic input below, so these checks need
// no MXNet at test time; tests/golden/zoo/zoo_golden.py re-checks random inputs against a live
// MXNet.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/executor.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/io/params.h"

namespace hybridnet {
namespace {

using namespace ::hybridnet::testing_util;  // NOLINT: the shared test helpers

std::string Fixture(const std::string& name) { return std::string(HN_FIXTURES_DIR) + "/" + name; }

// x[i] = sin(0.37 i) / 2 + 1/2, as the recording script made it.
NDArray PatternInput(const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(shape.Size()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(std::sin(static_cast<double>(i) * 0.37) * 0.5 + 0.5);
  return NDArray::FromVector(shape, v);
}

void ExpectClose(const NDArray& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  std::vector<float> g = got.ToFloatVector();
  double scale = 0;
  for (float w : want) scale = std::max(scale, std::fabs(static_cast<double>(w)));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::fabs(static_cast<double>(g[i]) - want[i]), 1e-4 * scale)
        << "output " << i << ": got " << g[i] << ", MXNet " << want[i];
  }
}

struct FixtureCase {
  const char* prefix;
  const char* params;
  Shape input;
  std::vector<float> mxnet;
};

const std::vector<FixtureCase>& Cases() {
  static const std::vector<FixtureCase> cases = {
      {"mnist-lenet-0",
       "mnist-lenet-0-0010.params",
       Shape{1, 1, 28, 28},
       {0.945998192f, 2.07019843e-06f, 9.81130555e-08f, 1.31848199e-10f, 0.048216626f,
        1.55937752e-08f, 0.00316704414f, 1.18407009e-07f, 0.00260150852f, 1.42835934e-05f}},
      {"cifar_resnet20_v1",
       "cifar_resnet20_v1-0000.params",
       Shape{1, 3, 32, 32},
       {3.9430964f, 0.342735589f, -0.109784029f, -0.56404072f, -3.22009492f, -0.802630603f,
        -1.42641103f, -1.93129778f, 0.651497126f, 3.12576699f}},
      {"cifar_resnet20_v2",
       "cifar_resnet20_v2-0000.params",
       Shape{1, 3, 32, 32},
       {5.72483826f, -1.15297341f, -0.00761450082f, 1.16263628f, -0.753050566f, 0.013686046f,
        -2.96326232f, -2.53087378f, 2.02024198f, -1.5364697f}},
  };
  return cases;
}

TEST(ZooFixtures, RunWithMXNetsNumbersEagerAndHybridized) {
  for (const FixtureCase& c : Cases()) {
    SCOPED_TRACE(c.prefix);
    Symbol symbol = Symbol::Load(Fixture(std::string(c.prefix) + "-symbol.json"));
    NDArrayList list = LoadNDArrayList(Fixture(c.params));
    std::map<std::string, NDArray> params;
    for (size_t i = 0; i < list.names.size(); ++i) params[list.names[i].substr(4)] = list.arrays[i];
    NDArray x = PatternInput(c.input);
    std::vector<std::string> inputs{"data"};
    std::vector<NDArray> feed{x};
    for (const auto& var : symbol.ListArguments()) {
      if (var == "softmax_label") {
        inputs.push_back(var);
        feed.push_back(NDArray::Zeros({1}));
      }
    }
    auto block = std::make_shared<gluon::SymbolBlock>(symbol, inputs);
    gluon::ParameterDict all = block->CollectParams();
    for (const auto& p : all.list()) p->SetData(params.at(p->name()));
    NDArray eager = (*block)(feed)[0];
    ExpectClose(eager, c.mxnet);
    block->Hybridize();
    EXPECT_TRUE(BitEqual((*block)(feed)[0], eager));
    GraphExecutor exec(symbol, inputs, params);
    EXPECT_TRUE(BitEqual(exec.Forward(feed)[0], eager));
    // Batch of two: the same network on a new input shape (re-planned, not rebuilt).
    NDArray x2 = PatternInput(Shape{2, c.input[1], c.input[2], c.input[3]});
    std::vector<NDArray> feed2{x2};
    if (feed.size() == 2) feed2.push_back(NDArray::Zeros({2}));
    EXPECT_EQ(exec.Forward(feed2)[0].shape(), Shape({2, 10}));
  }
}

}  // namespace
}  // namespace hybridnet
