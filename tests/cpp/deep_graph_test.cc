// Graphs of any depth neither overflow the stack nor hang: a chain of a million nodes is built,
// written, loaded, planned, run and destroyed (hostile files are often exactly that shape).
#include <gtest/gtest.h>

#include <string>

#include "hybridnet/executor.h"
#include "hybridnet/io/json.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace {

constexpr int kDepth = 1000000;

// MXNet 1.x JSON of data -> relu -> relu -> ... (kDepth ops), written by hand so the test does
// not depend on the writer it also checks.
std::string ChainJSON(int depth) {
  std::string json = "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []}";
  for (int i = 1; i <= depth; ++i) {
    json += ", {\"op\": \"relu\", \"name\": \"r" + std::to_string(i) + "\", \"inputs\": [[" +
            std::to_string(i - 1) + ", 0, 0]]}";
  }
  json += "], \"arg_nodes\": [0], \"heads\": [[" + std::to_string(depth) +
          ", 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", 10901]}}";
  return json;
}

TEST(DeepGraphTest, AMillionNodeChainBuiltInCodeIsDestroyedWithoutRecursion) {
  Symbol x = Symbol::Var("data");
  for (int i = 0; i < kDepth; ++i) x = Symbol::Create("negative", {x}, {});
  EXPECT_EQ(x.ListArguments(), std::vector<std::string>{"data"});
  x = Symbol();  // the whole chain goes here
}

TEST(DeepGraphTest, AMillionNodeChainFromJSONLoadsAndRuns) {
  Symbol s = LoadJSON(ChainJSON(kDepth), "chain-symbol.json");
  GraphExecutor exec(s, {"data"}, {});
  NDArray x = NDArray::FromVector({4}, {-2.f, -0.5f, 0.5f, 3.f});
  std::vector<NDArray> y = exec.Forward({x});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].data<float>()[0], 0.f);
  EXPECT_EQ(y[0].data<float>()[3], 3.f);
  EXPECT_EQ(exec.stats().num_nodes, static_cast<size_t>(kDepth));
  EXPECT_LE(exec.stats().intermediate_bytes, 2u * 64u) << "relu runs in place along the chain";
}

}  // namespace
}  // namespace hybridnet
