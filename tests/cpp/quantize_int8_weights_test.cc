// QuantizeOptions::int8_weights (hybridnet quantize --int8-weights): convolutions read weights
// stored int8 and give the outputs of the float-weight file bit for bit; a wrong or missing weight
// param is a clear error naming the node and the param.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/executor.h"
#include "hybridnet/io/json.h"
#include "hybridnet/quantization.h"
#include "hybridnet/symbol.h"
#include "kernels/onednn.h"

namespace hybridnet {
namespace {

using Json = nlohmann::ordered_json;
using testing_util::BitDifference;
using testing_util::ErrorOf;

// Convolution + BatchNorm + relu, a grouped convolution with bias + relu, then Flatten and
// FullyConnected: the BatchNorm folding, the bias and the group masking of the weight scales.
Symbol Model() {
  Symbol x = Symbol::Create(
      "Convolution", {Symbol::Var("data"), Symbol::Var("c0_weight")},
      {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "8"}, {"no_bias", "True"}}, "c0");
  x = Symbol::Create("BatchNorm",
                     {x, Symbol::Var("bn_gamma"), Symbol::Var("bn_beta"),
                      Symbol::Var("bn_moving_mean"), Symbol::Var("bn_moving_var")},
                     {{"fix_gamma", "False"}}, "bn");
  x = Symbol::Create("Activation", {x}, {{"act_type", "relu"}}, "r0");
  x = Symbol::Create("Convolution", {x, Symbol::Var("c1_weight"), Symbol::Var("c1_bias")},
                     {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"num_group", "2"}}, "c1");
  x = Symbol::Create("Activation", {x}, {{"act_type", "relu"}}, "r1");
  x = Symbol::Create("Flatten", {x}, {}, "flat");
  return Symbol::Create("FullyConnected", {x, Symbol::Var("fc_weight"), Symbol::Var("fc_bias")},
                        {{"num_hidden", "5"}}, "fc");
}

NDArrayList Params() {
  NDArrayList p;
  auto add = [&p](const std::string& name, NDArray value) {
    p.names.push_back(name);
    p.arrays.push_back(value);
  };
  add("arg:c0_weight", NDArray::RandomUniform({8, 3, 3, 3}, -1.f, 1.f));
  add("arg:bn_gamma", NDArray::RandomUniform({8}, 0.5f, 1.5f));
  add("arg:bn_beta", NDArray::RandomUniform({8}, -0.2f, 0.2f));
  add("aux:bn_moving_mean", NDArray::RandomUniform({8}, -0.2f, 0.2f));
  add("aux:bn_moving_var", NDArray::RandomUniform({8}, 0.5f, 1.5f));
  add("arg:c1_weight", NDArray::RandomUniform({8, 4, 3, 3}, -1.f, 1.f));
  add("arg:c1_bias", NDArray::RandomUniform({8}, -0.5f, 0.5f));
  add("arg:fc_weight", NDArray::RandomUniform({5, 8 * 4 * 4}, -1.f, 1.f));
  add("arg:fc_bias", NDArray::RandomUniform({5}, -0.5f, 0.5f));
  return p;
}

std::map<std::string, NDArray> Values(const NDArrayList& params) {
  std::map<std::string, NDArray> values;
  for (size_t i = 0; i < params.names.size(); ++i) {
    values[params.names[i].substr(params.names[i].find(':') + 1)] = params.arrays[i];
  }
  return values;
}

QuantizedModel Quantize(bool int8_weights) {
  Seed(5);
  const NDArrayList params = Params();
  const NDArray calib = NDArray::RandomUniform({8, 3, 6, 6}, -1.f, 1.f);
  return QuantizeModel(Model(), params, calib,
                       ParseQuantizeOptions({{"int8_weights", int8_weights ? "true" : "false"}}));
}

NDArray RunGraph(const QuantizedModel& m, const NDArray& x) {
  GraphExecutor exec(LoadJSON(m.symbol_json), {"data"}, Values(m.params));
  return exec.Forward({x})[0];
}

TEST(QuantizeInt8Weights, OptionIsTrueOrFalse) {
  EXPECT_TRUE(ParseQuantizeOptions({{"int8_weights", "true"}}).int8_weights);
  EXPECT_FALSE(ParseQuantizeOptions({}).int8_weights);
  const Error e = ErrorOf([] { ParseQuantizeOptions({{"int8_weights", "yes"}}); });
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("int8_weights 'yes' is not one of true, false"),
            std::string::npos)
      << e.what();
}

TEST(QuantizeInt8Weights, SameOutputsAsFloatWeightsBitForBit) {
  const QuantizedModel floats = Quantize(false), int8 = Quantize(true);
  EXPECT_TRUE(int8.int8_weights);
  EXPECT_FALSE(floats.int8_weights);
  EXPECT_EQ(Json::parse(int8.Report())["int8_weights"], true);
  const Json graph = Json::parse(int8.symbol_json);
  EXPECT_EQ(graph["attrs"][kInt8WeightsGraphAttr], Json::array({"str", "1"}));
  EXPECT_FALSE(Json::parse(floats.symbol_json)["attrs"].contains(kInt8WeightsGraphAttr));
  int convs = 0;
  for (const auto& n : graph["nodes"]) {
    if (n["op"] != "_sg_mkldnn_conv") continue;
    ++convs;
    EXPECT_EQ(n["attrs"]["int8_weights"], "true") << n["name"];
  }
  EXPECT_EQ(convs, 2);
  // The float weights and BatchNorm are gone; the convolutions' weights are int8.
  const std::map<std::string, NDArray> values = Values(int8.params);
  for (const char* gone : {"c0_weight", "bn_gamma", "bn_moving_var", "c1_weight", "c1_bias"}) {
    EXPECT_EQ(values.count(gone), 0u) << gone;
  }
  EXPECT_EQ(values.at("c0_weight_int8").dtype(), DType::kInt8);
  EXPECT_EQ(values.at("c1_weight_int8").dtype(), DType::kInt8);
  EXPECT_EQ(values.at("c0_bias_folded").shape(), Shape({8}));  // BatchNorm's shift
  EXPECT_EQ(values.at("c1_weight_scale").shape(), Shape({8}));

  if (!internal::OneDnnSumsInt8Exactly()) {
    // Without VNNI oneDNN halves s8 weights for int8 data to keep its 16-bit pair sums from
    // saturating: stored int8 weights are rounded a second time, float ones once.
    GTEST_SKIP() << "this CPU has no VNNI or AMX: int8 weights are not float weights' bits here";
  }
  const NDArray x = NDArray::RandomUniform({2, 3, 6, 6}, -1.f, 1.f);
  const NDArray want = RunGraph(floats, x);
  EXPECT_EQ(BitDifference(RunGraph(int8, x), want), "");
  std::map<std::string, NDArray> eager = values;
  eager["data"] = x;
  EXPECT_EQ(BitDifference(testing_util::RunNodeByNode(LoadJSON(int8.symbol_json), eager)[0], want),
            "");
}

// Without a quantized convolution the option changes nothing: FullyConnected weights are int8
// in MXNet's form already, and the file stays MXNet's.
TEST(QuantizeInt8Weights, WithoutConvolutionsTheFileIsMXNets) {
  const Symbol mlp = Symbol::Create(
      "FullyConnected", {Symbol::Var("data"), Symbol::Var("fc_weight"), Symbol::Var("fc_bias")},
      {{"num_hidden", "3"}}, "fc");
  NDArrayList params;
  params.names = {"arg:fc_weight", "arg:fc_bias"};
  params.arrays = {NDArray::RandomUniform({3, 4}, -1.f, 1.f), NDArray::Zeros({3})};
  const NDArray calib = NDArray::RandomUniform({4, 4}, -1.f, 1.f);
  const QuantizedModel floats = QuantizeModel(mlp, params, calib, QuantizeOptions());
  const QuantizedModel int8 =
      QuantizeModel(mlp, params, calib, ParseQuantizeOptions({{"int8_weights", "true"}}));
  EXPECT_FALSE(int8.int8_weights);
  EXPECT_EQ(int8.symbol_json, floats.symbol_json);
  EXPECT_FALSE(Json::parse(int8.symbol_json)["attrs"].contains(kInt8WeightsGraphAttr));
}

// The error of running the int8-weight model with its params changed by `edit`.
Error RunError(const std::function<void(std::map<std::string, NDArray>*)>& edit,
               const std::string& symbol_json) {
  const QuantizedModel m = Quantize(true);
  std::map<std::string, NDArray> values = Values(m.params);
  edit(&values);
  return ErrorOf([&] {
    GraphExecutor exec(LoadJSON(symbol_json.empty() ? m.symbol_json : symbol_json), {"data"},
                       values);
    exec.Forward({NDArray::RandomUniform({1, 3, 6, 6}, -1.f, 1.f)});
  });
}

void ExpectError(const Error& e, StatusCode code, const std::vector<std::string>& needles) {
  EXPECT_EQ(e.code(), code) << e.what();
  for (const auto& needle : needles) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "'" << needle << "' not in: " << e.what();
  }
}

TEST(QuantizeInt8Weights, BadWeightParamsNameTheNodeAndParam) {
  const std::string node = "quantized_sg_mkldnn_conv_act_1";
  ExpectError(RunError([](auto* v) { (*v)["c1_weight_scale"] = NDArray::Ones({4}); }, ""),
              StatusCode::kShapeError, {node, "weight_scale must be of shape (8,)"});
  ExpectError(RunError([](auto* v) { (*v)["c0_bias_folded"] = NDArray::Ones({3}); }, ""),
              StatusCode::kShapeError,
              {"quantized_sg_mkldnn_conv_bn_act_0", "bias must be of shape (8,)"});
  // A convolution's own bias: its Convolution's inference names it.
  ExpectError(RunError([](auto* v) { (*v)["c1_bias_folded"] = NDArray::Ones({3}); }, ""),
              StatusCode::kShapeError, {"Convolution(c1)", "bias shape (3,)"});
  ExpectError(
      RunError(
          [](auto* v) { (*v)["c1_weight_int8"] = (*v)["c1_weight_int8"].AsType(DType::kFloat32); },
          ""),
      StatusCode::kTypeError, {node, "weight (int8_weights) must be int8"});
  ExpectError(RunError(
                  [](auto* v) {
                    (*v)["c1_weight_scale"] = (*v)["c1_weight_scale"].AsType(DType::kFloat64);
                  },
                  ""),
              StatusCode::kTypeError, {node, "weight_scale must be float32"});
  const Error missing = RunError([](auto* v) { v->erase("c1_weight_scale"); }, "");
  EXPECT_NE(missing.code(), StatusCode::kOk);
  EXPECT_NE(std::string(missing.what()).find("no value for graph input 'c1_weight_scale'"),
            std::string::npos)
      << missing.what();
}

TEST(QuantizeInt8Weights, Int8WeightsNeedTheMarker) {
  // The float-weight model fed int8 weights.
  const QuantizedModel floats = Quantize(false);
  std::map<std::string, NDArray> values = Values(floats.params);
  values["c0_weight"] = values["c0_weight"].AsType(DType::kInt8);
  const Error e = ErrorOf([&] {
    GraphExecutor exec(LoadJSON(floats.symbol_json), {"data"}, values);
    exec.Forward({NDArray::RandomUniform({1, 3, 6, 6}, -1.f, 1.f)});
  });
  ExpectError(e, StatusCode::kTypeError,
              {"quantized_sg_mkldnn_conv_bn_act_0",
               "weight is int8 but the node lacks "
               "int8_weights=true"});
  // The int8-weight model with the marker taken off its nodes.
  Json graph = Json::parse(Quantize(true).symbol_json);
  for (auto& n : graph["nodes"]) {
    if (n["op"] == "_sg_mkldnn_conv") n["attrs"].erase("int8_weights");
  }
  const Error unmarked = RunError([](auto*) {}, graph.dump());
  EXPECT_NE(unmarked.code(), StatusCode::kOk);
  EXPECT_NE(std::string(unmarked.what()).find("quantized_sg_mkldnn_conv_bn_act_0"),
            std::string::npos)
      << unmarked.what();
}

}  // namespace
}  // namespace hybridnet
