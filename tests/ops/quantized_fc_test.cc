// _sg_mkldnn_fully_connected nodes whose attributes and subgraph disagree, or whose subgraph is
// not FullyConnected and one fusable elementwise op, are refused with a message naming the node
// and the problem (the happy paths are conformance cases in quantized_fc_cases.cc).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hybridnet/imperative.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
namespace {

Symbol Fc(bool no_bias) {
  std::vector<Symbol> in{Symbol::Var("data"), Symbol::Var("weight")};
  if (!no_bias) in.push_back(Symbol::Var("bias"));
  return Symbol::Create("FullyConnected", in,
                        {{"num_hidden", "3"}, {"no_bias", no_bias ? "True" : "False"}}, "fc");
}

std::string ErrorOf(const AttrDict& dict, const std::vector<Symbol>& graphs,
                    const std::vector<NDArray>& inputs) {
  try {
    NodeAttrs attrs = MakeNodeAttrs("_sg_mkldnn_fully_connected", "node", dict);
    for (const Symbol& g : graphs) attrs.subgraphs.push_back(std::make_shared<const Symbol>(g));
    Invoke(attrs, inputs);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "_sg_mkldnn_fully_connected accepted the node";
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(QuantizedFullyConnectedErrors, SubgraphMustBeFullyConnectedAndOneFusableOp) {
  const std::vector<NDArray> fp32{NDArray::Zeros({2, 4}), NDArray::Zeros({3, 4}),
                                  NDArray::Zeros({3})};
  EXPECT_HAS(ErrorOf({}, {}, fp32), "_sg_mkldnn_fully_connected(node): expected 1 subgraph");
  EXPECT_HAS(ErrorOf({}, {Symbol::Create("relu", {Symbol::Var("data")}, {}, "r")}, fp32),
             "expected FullyConnected and at most one elementwise op");
  const Symbol softsign =
      Symbol::Create("Activation", {Fc(false)}, {{"act_type", "softsign"}}, "act");
  EXPECT_HAS(ErrorOf({{"with_eltwise", "True"}}, {softsign}, fp32),
             "act_type 'softsign', which MXNet's oneDNN FullyConnected does not fuse");
  const Symbol clip = Symbol::Create("clip", {Fc(false)}, {{"a_min", "-1"}, {"a_max", "1"}}, "c");
  EXPECT_HAS(ErrorOf({{"with_eltwise", "True"}}, {clip}, fp32), "a_min != 0");
  const Symbol relu = Symbol::Create("Activation", {Fc(false)}, {{"act_type", "relu"}}, "act");
  EXPECT_HAS(ErrorOf({}, {relu}, fp32),
             "with_eltwise=False but the subgraph has an elementwise op");
  EXPECT_HAS(ErrorOf({{"with_eltwise", "True"}}, {Fc(false)}, fp32),
             "with_eltwise=True but the subgraph has no elementwise op");
}

TEST(QuantizedFullyConnectedErrors, QuantizedFormsCheckTheirInputs) {
  const NDArray range = NDArray::Ones({1});
  const std::vector<NDArray> channel_wise{NDArray::Zeros({2, 4}, DType::kInt8),
                                          NDArray::Zeros({3, 4}), NDArray::Zeros({3}), range,
                                          range};
  EXPECT_HAS(ErrorOf({{"quantized", "True"}, {"channel_wise_quantize", "True"}}, {Fc(false)},
                     channel_wise),
             "channel_wise_quantize needs min_calib_range and max_calib_range");
  EXPECT_HAS(
      ErrorOf({{"quantized", "True"}, {"min_calib_range", "0"}}, {Fc(true)},
              {NDArray::Zeros({2, 4}, DType::kInt8), NDArray::Zeros({3, 4}, DType::kInt8), range,
               range, range, range}),
      "min_calib_range and max_calib_range must be given together (got only min_calib_range)");
  std::vector<NDArray> float_data{
      NDArray::Zeros({2, 4}), NDArray::Zeros({3, 4}, DType::kInt8), range, range, range, range};
  EXPECT_HAS(ErrorOf({{"quantized", "True"}}, {Fc(true)}, float_data),
             "input 'data' must be int8 or uint8 (quantized), got float32");
}

}  // namespace
}  // namespace hybridnet
