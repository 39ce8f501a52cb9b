#include "hybridnet/executor.h"

#include <gtest/gtest.h>

#include <cstring>

#include "common/test_util.h"
#include "hybridnet/imperative.h"

namespace hybridnet {
namespace {

using namespace ::hybridnet::testing_util;  // NOLINT: the shared test helpers

struct Mlp {
  Symbol symbol;
  std::map<std::string, NDArray> params;
};

// 16 -> 32 relu -> 8 tanh -> 4, with a Flatten view and a softmax at the end.
Mlp MakeMlp() {
  Seed(7);
  Mlp m;
  Symbol x = Symbol::Var("data");
  x = Symbol::Create("FullyConnected", {x}, {{"num_hidden", "32"}}, "fc1");
  x = Symbol::Create("Activation", {x}, {{"act_type", "relu"}}, "relu1");
  x = Symbol::Create("FullyConnected", {x}, {{"num_hidden", "8"}}, "fc2");
  x = Symbol::Create("Activation", {x}, {{"act_type", "tanh"}}, "tanh2");
  x = Symbol::Create("Flatten", {x}, {}, "flat");
  x = Symbol::Create("FullyConnected", {x}, {{"num_hidden", "4"}}, "fc3");
  m.symbol = Symbol::Create("softmax", {x}, {}, "prob");
  m.params["fc1_weight"] = NDArray::RandomNormal({32, 16});
  m.params["fc1_bias"] = NDArray::RandomNormal({32});
  m.params["fc2_weight"] = NDArray::RandomNormal({8, 32});
  m.params["fc2_bias"] = NDArray::RandomNormal({8});
  m.params["fc3_weight"] = NDArray::RandomNormal({4, 8});
  m.params["fc3_bias"] = NDArray::RandomNormal({4});
  return m;
}

// Runs the graph op by op through eager Invoke.
NDArray RunEager(const Mlp& m, const NDArray& x) {
  auto p = [&](const char* name) { return m.params.at(name); };
  NDArray h =
      Invoke("FullyConnected", {x, p("fc1_weight"), p("fc1_bias")}, {{"num_hidden", "32"}})[0];
  h = Invoke("Activation", {h}, {{"act_type", "relu"}})[0];
  h = Invoke("FullyConnected", {h, p("fc2_weight"), p("fc2_bias")}, {{"num_hidden", "8"}})[0];
  h = Invoke("Activation", {h}, {{"act_type", "tanh"}})[0];
  h = Invoke("Flatten", {h})[0];
  h = Invoke("FullyConnected", {h, p("fc3_weight"), p("fc3_bias")}, {{"num_hidden", "4"}})[0];
  return Invoke("softmax", {h})[0];
}

TEST(GraphExecutorTest, MatchesEagerBitExactWithAndWithoutOptimizations) {
  Mlp m = MakeMlp();
  for (int64_t batch : {1, 5}) {
    NDArray x = NDArray::RandomNormal({batch, 16});
    NDArray expected = RunEager(m, x);
    for (bool fuse : {false, true}) {
      for (bool plan : {false, true}) {
        GraphExecutor exec(m.symbol, {"data"}, m.params, ExecutorOptions{fuse, plan});
        std::vector<NDArray> y = exec.Forward({x});
        ASSERT_EQ(y.size(), 1u);
        EXPECT_TRUE(BitEqual(y[0], expected));
      }
    }
  }
}

TEST(GraphExecutorTest, FusesReusesMemoryAndRunsFewerKernels) {
  Mlp m = MakeMlp();
  GraphExecutor exec(m.symbol, {"data"}, m.params);
  exec.Forward({NDArray::RandomNormal({64, 16})});
  ExecutorStats s = exec.stats();
  EXPECT_EQ(s.num_nodes, 7u);
  EXPECT_EQ(s.num_fused, 2u);    // fc1+relu1, fc2+tanh2
  EXPECT_EQ(s.num_kernels, 4u);  // fused fc1, fused fc2, fc3, softmax (Flatten is a view)
  EXPECT_LT(s.intermediate_bytes, s.naive_bytes);
}

// A float64 model (MXNet's block.cast("float64"), an import of its export): the fused kernels
// compute in float32, so the executor runs every op with its own kernel and gives eager's bits.
TEST(GraphExecutorTest, Float64ModelsRunUnfusedWithEagerBits) {
  Mlp m = MakeMlp();
  for (auto& kv : m.params) kv.second = kv.second.AsType(DType::kFloat64);
  NDArray x = NDArray::RandomNormal({5, 16}).AsType(DType::kFloat64);
  GraphExecutor mlp(m.symbol, {"data"}, m.params);
  NDArray y = mlp.Forward({x})[0];
  ASSERT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_TRUE(BitEqual(y, RunEager(m, x)));
  EXPECT_EQ(mlp.stats().num_fused, 0u);

  // Convolution, inference BatchNorm and relu: a chain the float32 executor fuses into one node.
  std::map<std::string, NDArray> params{
      {"conv_weight", NDArray::RandomNormal({4, 3, 3, 3}).AsType(DType::kFloat64)},
      {"bn_gamma", NDArray::RandomUniform({4}, 0.5f, 1.5f).AsType(DType::kFloat64)},
      {"bn_beta", NDArray::RandomNormal({4}).AsType(DType::kFloat64)},
      {"bn_moving_mean", NDArray::RandomNormal({4}).AsType(DType::kFloat64)},
      {"bn_moving_var", NDArray::RandomUniform({4}, 0.5f, 1.5f).AsType(DType::kFloat64)}};
  const std::map<std::string, std::string> conv_attrs{
      {"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "4"}, {"no_bias", "True"}};
  Symbol h = Symbol::Create("Convolution", {Symbol::Var("data"), Symbol::Var("conv_weight")},
                            conv_attrs, "conv");
  h = Symbol::Create("BatchNorm",
                     {h, Symbol::Var("bn_gamma"), Symbol::Var("bn_beta"),
                      Symbol::Var("bn_moving_mean"), Symbol::Var("bn_moving_var")},
                     {}, "bn");
  h = Symbol::Create("Activation", {h}, {{"act_type", "relu"}}, "relu");
  NDArray image = NDArray::RandomNormal({2, 3, 8, 8}).AsType(DType::kFloat64);
  NDArray expected = Invoke("Convolution", {image, params.at("conv_weight")}, conv_attrs)[0];
  expected = Invoke("BatchNorm", {expected, params.at("bn_gamma"), params.at("bn_beta"),
                                  params.at("bn_moving_mean"), params.at("bn_moving_var")})[0];
  expected = Invoke("Activation", {expected}, {{"act_type", "relu"}})[0];
  GraphExecutor conv(h, {"data"}, params);
  NDArray z = conv.Forward({image})[0];
  ASSERT_EQ(z.dtype(), DType::kFloat64);
  EXPECT_TRUE(BitEqual(z, expected));
}

TEST(GraphExecutorTest, ReplansOnNewShapesAndCachesPlans) {
  Mlp m = MakeMlp();
  GraphExecutor exec(m.symbol, {"data"}, m.params);
  for (int64_t batch : {2, 3, 2, 3}) {
    NDArray x = NDArray::RandomNormal({batch, 16});
    EXPECT_TRUE(BitEqual(exec.Forward({x})[0], RunEager(m, x)));
  }
  EXPECT_EQ(exec.stats().num_plans, 2u);
}

TEST(GraphExecutorTest, ForwardIntoPreallocatedOutputsReusesThem) {
  Mlp m = MakeMlp();
  GraphExecutor exec(m.symbol, {"data"}, m.params);
  NDArray x = NDArray::RandomNormal({4, 16});
  std::vector<NDArray> out;
  exec.Forward({x}, &out);
  const void* storage = out[0].raw_data();
  exec.Forward({x}, &out);
  EXPECT_EQ(out[0].raw_data(), storage);
  EXPECT_TRUE(BitEqual(out[0], RunEager(m, x)));
}

TEST(GraphExecutorTest, OutputsThatAreInputsOrViewsAreCopied) {
  Symbol a = Symbol::Var("a");
  Symbol flat = Symbol::Create("Flatten", {a}, {}, "flat");
  Symbol r = Symbol::Create("relu", {a}, {}, "r");
  GraphExecutor exec(Symbol::Group({a, flat, r, r}), {"a"}, {});
  NDArray x = NDArray::RandomNormal({2, 3, 2});
  auto y = exec.Forward({x});
  ASSERT_EQ(y.size(), 4u);
  EXPECT_TRUE(BitEqual(y[0], x));
  EXPECT_FALSE(y[0].SharesStorageWith(x));
  EXPECT_EQ(y[1].shape(), Shape({2, 6}));
  EXPECT_EQ(std::memcmp(y[1].raw_data(), x.raw_data(), x.nbytes()), 0);
  EXPECT_TRUE(BitEqual(y[2], Invoke("relu", {x})[0]));
  EXPECT_TRUE(BitEqual(y[3], y[2]));
}

TEST(GraphExecutorTest, ClearErrors) {
  Mlp m = MakeMlp();
  auto missing = m.params;
  missing.erase("fc2_bias");
  try {
    GraphExecutor exec(m.symbol, {"data"}, missing);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("fc2_bias"), std::string::npos);
  }
  EXPECT_THROW(GraphExecutor(m.symbol, {"nosuch"}, m.params), Error);

  GraphExecutor exec(m.symbol, {"data"}, m.params);
  EXPECT_THROW(exec.Forward({}), Error);
  try {
    exec.Forward({NDArray::RandomNormal({2, 15})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kShapeError);
    EXPECT_NE(std::string(e.what()).find("fc1"), std::string::npos) << e.what();
  }
  auto wrong = m.params;
  wrong["fc3_bias"] = NDArray::Zeros({5});
  GraphExecutor bad(m.symbol, {"data"}, wrong);
  try {
    bad.Forward({NDArray::RandomNormal({2, 16})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kShapeError);
    EXPECT_NE(std::string(e.what()).find("fc3"), std::string::npos) << e.what();
  }
}

TEST(InvokeTest, SymbolicInputsAppendNodesAndPrintAsSymbols) {
  NDArray x = NDArray::FromEntry(Symbol::Var("data").outputs[0]);
  NDArray y = Invoke("relu", {x}, {}, "relu0")[0];
  ASSERT_TRUE(y.is_symbolic());
  EXPECT_EQ(y.ToString(), "<Symbol relu0>");
  EXPECT_EQ(y.entry().node->inputs[0].node->name(), "data");
  try {
    y.raw_data();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kUntraceable);
  }
  try {
    Invoke("elemwise_add", {x, NDArray::Ones({1})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kUntraceable);
    EXPECT_NE(std::string(e.what()).find("concrete"), std::string::npos);
  }
}

TEST(InvokeTest, BadInputsGiveClearErrors) {
  NDArray x = NDArray::Ones({2, 3});
  try {
    Invoke("NoSuchOp", {x});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("NoSuchOp"), std::string::npos);
  }
  try {
    Invoke("FullyConnected", {x}, {{"num_hidden", "2"}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("expects 3 inputs"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Invoke("relu", {NDArray()}), Error);
  EXPECT_THROW(SetNumThreads(0), Error);
}

}  // namespace
}  // namespace hybridnet
