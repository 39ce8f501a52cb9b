// Creation ops (no inputs) beyond one-op cases: inside larger graphs (executor, JSON round trip),
// with shapes and dtypes that come from their consumers (MXNet's legacy inference), recorded by
// hybridize(), and refused when a graph asks for an absurd size.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/test_util.h"
#include "hybridnet/executor.h"
#include "hybridnet/gluon/block.h"
#include "hybridnet/imperative.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace {

using testing_util::BitDifference;

std::vector<NDArray> RunEveryWay(const Symbol& s, const std::vector<std::string>& data_names,
                                 const std::vector<NDArray>& data) {
  std::vector<NDArray> first;
  for (const Symbol& graph : {s, Symbol::FromJSON(s.ToJSON())}) {
    for (bool fuse : {true, false}) {
      for (bool plan : {true, false}) {
        ExecutorOptions options;
        options.fuse = fuse;
        options.plan_memory = plan;
        GraphExecutor exec(graph, data_names, {}, options);
        std::vector<NDArray> out = exec.Forward(data);
        std::vector<NDArray> again = exec.Forward(data);
        if (first.empty()) first = out;
        EXPECT_EQ(out.size(), first.size());
        for (size_t i = 0; i < out.size() && i < first.size(); ++i) {
          EXPECT_EQ(BitDifference(out[i], first[i]), "");
          EXPECT_EQ(BitDifference(again[i], first[i]), "");
        }
      }
    }
  }
  return first;
}

TEST(ZeroInputOps, GraphOfOnlyCreationOps) {
  Symbol zeros = Symbol::Create("_zeros", {}, {{"shape", "(2, 3)"}, {"dtype", "int32"}}, "z");
  Symbol range = Symbol::Create("_arange", {}, {{"start", "4"}}, "r");
  Symbol both = Symbol::Group({zeros, range});
  EXPECT_TRUE(both.ListArguments().empty());
  std::vector<NDArray> out = RunEveryWay(both, {}, {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(BitDifference(out[0], NDArray::Zeros({2, 3}, DType::kInt32)), "");
  EXPECT_EQ(BitDifference(out[1], NDArray::Arange(0, 4)), "");
}

TEST(ZeroInputOps, MixedWithDataAndMatchesEager) {
  Symbol data = Symbol::Var("data");
  Symbol range = Symbol::Create("_arange", {}, {{"start", "1"}, {"stop", "4"}}, "r");
  Symbol ones = Symbol::Create("_ones", {}, {{"shape", "(2, 1)"}}, "o");
  Symbol sum = Symbol::Create("broadcast_add", {data, range}, {}, "add");
  Symbol out = Symbol::Create("broadcast_mul", {sum, ones}, {}, "mul");
  NDArray x = NDArray::RandomNormal({2, 3});
  std::vector<NDArray> graph = RunEveryWay(out, {"data"}, {x});
  NDArray r = Invoke("_arange", {}, {{"start", "1"}, {"stop", "4"}})[0];
  NDArray o = Invoke("_ones", {}, {{"shape", "(2, 1)"}})[0];
  NDArray eager = Invoke("broadcast_mul", {Invoke("broadcast_add", {x, r})[0], o})[0];
  ASSERT_EQ(graph.size(), 1u);
  EXPECT_EQ(BitDifference(graph[0], eager), "");
}

// MXNet's legacy convention: a 0 (or an empty shape) is unknown and comes from the consumers,
// as does _zeros_without_dtype's dtype and _arange's length with infer_range.
TEST(ZeroInputOps, ShapeAndDTypeFromConsumers) {
  Symbol x = Symbol::Var("x");
  Symbol zeros = Symbol::Create("_zeros", {}, {{"shape", "(0, 3)"}, {"dtype", "float64"}}, "z");
  Symbol undtyped = Symbol::Create("_zeros_without_dtype", {}, {{"shape", "(2, 3)"}}, "u");
  Symbol range = Symbol::Create(
      "_arange", {}, {{"start", "1"}, {"step", "2"}, {"infer_range", "True"}, {"dtype", "float64"}},
      "r");
  Symbol a = Symbol::Create("elemwise_add", {zeros, x}, {}, "a");
  Symbol b = Symbol::Create("elemwise_add", {undtyped, x}, {}, "b");
  Symbol c = Symbol::Create("elemwise_add", {range, Symbol::Var("v")}, {}, "c");
  NDArray xv = NDArray::RandomNormal({2, 3}).AsType(DType::kFloat64);
  NDArray vv = NDArray::RandomNormal({6}).AsType(DType::kFloat64);
  std::vector<NDArray> out = RunEveryWay(Symbol::Group({a, b, c}), {"x", "v"}, {xv, vv});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(BitDifference(out[0], xv), "");
  EXPECT_EQ(BitDifference(out[1], xv), "");
  NDArray odd = NDArray::Arange(1, 12, 2, DType::kFloat64);
  EXPECT_EQ(BitDifference(out[2], Invoke("elemwise_add", {odd, vv})[0]), "");
}

TEST(ZeroInputOps, AbsurdSizesAreRefusedBeforeAllocating) {
  Symbol full = Symbol::Create("_full", {}, {{"shape", "(65536, 65536, 65536)"}, {"value", "1"}});
  try {
    GraphExecutor exec(full, {}, {});
    exec.Forward({});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kOutOfMemory) << e.what();
    EXPECT_NE(std::string(e.what()).find("HN_LIMIT_MAX_TENSOR_ELEMENTS"), std::string::npos)
        << e.what();
  }
  const std::string json =
      Symbol::Create("_arange", {}, {{"start", "0"}, {"stop", "1e300"}}).ToJSON();
  try {
    GraphExecutor exec(Symbol::FromJSON(json), {}, {});
    exec.Forward({});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kOutOfMemory) << e.what();
  }
}

// A forward that creates arrays from nothing: hybridize() records the creation ops as nodes.
class AddsPositions : public gluon::HybridBlock {
 public:
  AddsPositions() : HybridBlock("addspositions") {}
  NDArray Forward(const NDArray& x) override {
    NDArray positions = Invoke("_arange", {}, {{"start", "0"}, {"stop", "3"}})[0];
    NDArray scale = Invoke("_full", {}, {{"shape", "(1, 3)"}, {"value", "0.5"}})[0];
    return Invoke("broadcast_mul", {Invoke("broadcast_add", {x, positions})[0], scale})[0];
  }
};

TEST(ZeroInputOps, HybridizeRecordsCreationOps) {
  AddsPositions block;
  NDArray x = NDArray::RandomNormal({2, 3});
  NDArray eager = block(x);
  block.Hybridize();
  NDArray hybrid = block(x);
  EXPECT_EQ(BitDifference(eager, hybrid), "");
  const std::string json = block.CachedGraph().ToJSON();
  EXPECT_NE(json.find("\"_arange\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"_full\""), std::string::npos) << json;
  EXPECT_EQ(block.CachedGraph().ListArguments(), std::vector<std::string>{"data"});
  // Outside a trace the same calls run eagerly again.
  EXPECT_FALSE(Invoke("_zeros", {}, {{"shape", "(1,)"}})[0].is_symbolic());
}

}  // namespace
}  // namespace hybridnet
