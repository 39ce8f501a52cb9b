// Hostile graphs: any depth neither overflows the stack nor hangs (a chain of a million nodes is
// built, loaded, planned, run and destroyed), and absurd declared shapes are refused by the
// limits (hybridnet/limits.h) before any allocation.
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

// Declared shapes whose element count overflows int64 or passes the limits are refused before
// anything is allocated (no overflowed size reaches the allocator); every tensor and the
// executor's arena are allocated through NDArray.
TEST(DeepGraphTest, HugeDeclaredShapesAreRefusedBeforeAllocation) {
  const int64_t big = int64_t{1} << 40;
  for (const Shape& shape : {Shape{big, big}, Shape{big, big, big}, Shape{int64_t{1} << 33}}) {
    try {
      NDArray a(shape);
      ADD_FAILURE() << "allocated " << shape;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), StatusCode::kOutOfMemory);
      EXPECT_NE(std::string(e.what()).find("HN_LIMIT_MAX_TENSOR_ELEMENTS"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace hybridnet
