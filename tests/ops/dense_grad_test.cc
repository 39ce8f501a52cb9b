// The gradient of FullyConnected beyond the conformance cases: the gradients nobody asks for (a
// first layer's data, a frozen weight) are marked unread by the gradient pass and skipped by
// _backward_FullyConnected, and the others keep the bits they have when every one is computed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "hybridnet/executor.h"
#include "hybridnet/symbol.h"
#include "pass/gradient.h"

namespace hybridnet {
namespace {

using testing_util::BitDifference;

TEST(FullyConnectedGradient, GradientsNobodyReadsAreSkippedAndTheOthersKeepTheirBits) {
  const Symbol data = Symbol::Var("data"), weight = Symbol::Var("weight"),
               bias = Symbol::Var("bias"), head = Symbol::Var("head_grad");
  const Symbol y = Symbol::Create("FullyConnected", {data, weight, bias}, {{"num_hidden", "24"}});
  const std::map<std::string, NDArray> values = {
      {"data", NDArray::RandomUniform({32, 40}, -1.f, 1.f)},
      {"weight", NDArray::RandomUniform({24, 40}, -0.5f, 0.5f)},
      {"bias", NDArray::RandomUniform({24}, -0.5f, 0.5f)},
      {"head_grad", NDArray::RandomUniform({32, 24}, -1.f, 1.f)}};
  const std::vector<std::string> order = {"data", "weight", "bias"};
  const std::map<std::string, NodeEntry> variables = {
      {"data", data.outputs[0]}, {"weight", weight.outputs[0]}, {"bias", bias.outputs[0]}};
  // The gradients of the variables in `wanted` (in `order`'s order), by name.
  auto gradients_of = [&](const std::vector<std::string>& wanted) {
    std::vector<NodeEntry> xs;
    for (const std::string& name : wanted) xs.push_back(variables.at(name));
    Symbol gradients;
    gradients.outputs = internal::Gradient(y.outputs, head.outputs, xs);
    const NodeAttrs& backward = gradients.outputs.back().node->attrs;
    EXPECT_EQ(backward.op->name, "_backward_FullyConnected");
    for (uint32_t i = 0; i < order.size(); ++i) {
      const bool asked = std::find(wanted.begin(), wanted.end(), order[i]) != wanted.end();
      EXPECT_EQ(internal::GradientOutputUnread(backward, i), !asked) << order[i];
    }
    const std::vector<std::string> inputs = gradients.ListInputs();
    std::vector<NDArray> feed;
    for (const std::string& name : inputs) feed.push_back(values.at(name));
    GraphExecutor exec(gradients, inputs, {}, ExecutorOptions());
    const std::vector<NDArray> grads = exec.Forward(feed);
    std::map<std::string, NDArray> by_name;
    for (size_t i = 0; i < wanted.size(); ++i) by_name[wanted[i]] = grads[i];
    return by_name;
  };
  const std::map<std::string, NDArray> all = gradients_of(order);
  for (const std::vector<std::string>& wanted : std::vector<std::vector<std::string>>{
           {"weight", "bias"}, {"data", "bias"}, {"data", "weight"}, {"bias"}}) {
    const std::map<std::string, NDArray> some = gradients_of(wanted);
    for (const std::string& name : wanted) {
      EXPECT_EQ(BitDifference(all.at(name), some.at(name)), "") << name;
    }
  }
}

}  // namespace
}  // namespace hybridnet
