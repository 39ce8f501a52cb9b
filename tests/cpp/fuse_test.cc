// The fusion passes' choice of patterns (pass/fuse.cc): FuseActivationsForTraining, a training
// graphs' fusion, takes BatchNorm + relu and FullyConnected + Activation but softsign, and leaves
// every other pattern FuseOps takes;
// FuseLogSoftmaxLabelSum takes sum(log_softmax(x) * label, axis=-1) where nothing else reads the
// log_softmax or the product.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "hybridnet/gluon/loss.h"
#include "hybridnet/symbol.h"
#include "pass/passes.h"

namespace hybridnet {
namespace {

Symbol Op(const std::string& op, const std::vector<Symbol>& in, const AttrDict& attrs = {}) {
  return Symbol::Create(op, in, attrs);
}

// The op names of `s`'s operator nodes, counted.
std::map<std::string, int> OpCounts(const Symbol& s) {
  std::map<std::string, int> counts;
  const IndexedGraph g(s.outputs);
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    if (!g[nid].node->IsVariable()) ++counts[g[nid].node->attrs.op->name];
  }
  return counts;
}

Symbol BatchNorm(const Symbol& x, const std::string& name) {
  return Op("BatchNorm", {x, Symbol::Var(name + "_gamma"), Symbol::Var(name + "_beta"),
                          Symbol::Var(name + "_mean"), Symbol::Var(name + "_var")});
}

TEST(FuseActivationsForTraining, FusesBatchNormReluAndDenseActivationsOnly) {
  const Symbol data = Symbol::Var("data");
  const Symbol conv = Op("Convolution", {data, Symbol::Var("w")},
                         {{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"no_bias", "True"}});
  const Symbol relu = Op("Activation", {BatchNorm(conv, "bn0")}, {{"act_type", "relu"}});
  // A BatchNorm before tanh, and one whose output has a second reader, stay as they are.
  const Symbol tanh = Op("Activation", {BatchNorm(relu, "bn1")}, {{"act_type", "tanh"}});
  const Symbol shared = BatchNorm(tanh, "bn2");
  const Symbol sum =
      Op("elemwise_add", {Op("Activation", {shared}, {{"act_type", "relu"}}), shared});
  auto dense = [](const Symbol& x, const std::string& name, const std::string& act) {
    return Op("Activation",
              {Op("FullyConnected", {x, Symbol::Var(name + "_w")},
                  {{"num_hidden", "3"}, {"no_bias", "True"}})},
              {{"act_type", act}});
  };
  // FullyConnected + sigmoid fuses; + softsign, whose gradient reads the product, does not.
  const Symbol net =
      dense(dense(Op("Flatten", {sum}), "fc0", "sigmoid"), "fc1", "softsign");

  size_t fused = 0;
  const std::map<std::string, int> counts =
      OpCounts(internal::FuseActivationsForTraining(net, &fused));
  EXPECT_EQ(fused, 2u);
  EXPECT_EQ(counts.at("_contrib_BatchNormWithReLU"), 1);
  EXPECT_EQ(counts.at("_hn_fully_connected_act"), 1);
  EXPECT_EQ(counts.at("BatchNorm"), 2);
  EXPECT_EQ(counts.at("Convolution"), 1);     // no _hn_convolution
  EXPECT_EQ(counts.at("FullyConnected"), 1);  // the softsign's
  EXPECT_EQ(counts.at("Activation"), 3);      // tanh, the shared BatchNorm's relu, softsign
  EXPECT_EQ(OpCounts(net).at("Activation"), 5) << "the input is left as it was";
}

// -sum(log_softmax(x, log_softmax_attrs) * label, axis=-1)
Symbol CrossEntropy(const Symbol& x, const Symbol& label, const AttrDict& log_softmax_attrs,
                    const AttrDict& sum_attrs = {{"axis", "-1"}}) {
  const Symbol product = Op("elemwise_mul", {Op("log_softmax", {x}, log_softmax_attrs), label});
  return Op("_mul_scalar", {Op("sum", {product}, sum_attrs)}, {{"scalar", "-1"}});
}

TEST(FuseLogSoftmaxLabelSum, FusesTheDenseLabelCrossEntropyOnly) {
  const Symbol x = Symbol::Var("x"), label = Symbol::Var("label");
  size_t fused = 0;
  // Both operand orders, keepdims, the axis written as a tuple.
  const Symbol plain = CrossEntropy(x, label, {});
  const Symbol swapped =
      Op("sum", {Op("elemwise_mul", {label, Op("log_softmax", {x}, {{"axis", "-1"}})})},
         {{"axis", "(-1,)"}, {"keepdims", "True"}});
  const Symbol taken = Symbol::Group({plain, swapped});
  std::map<std::string, int> counts = OpCounts(internal::FuseLogSoftmaxLabelSum(taken, &fused));
  EXPECT_EQ(fused, 4u);
  EXPECT_EQ(counts.at("_hn_log_softmax_label_sum"), 2);
  EXPECT_EQ(counts.count("log_softmax") + counts.count("elemwise_mul") + counts.count("sum"), 0u);

  // Left as they are: a temperature, another axis, a sum over another axis, a log_softmax or a
  // product read twice.
  const Symbol log_probs = Op("log_softmax", {x});
  const Symbol product = Op("elemwise_mul", {Op("log_softmax", {x}), label});
  const Symbol left = Symbol::Group({
      CrossEntropy(x, label, {{"temperature", "2"}}),
      CrossEntropy(x, label, {{"axis", "0"}}),
      CrossEntropy(x, label, {}, {{"axis", "0"}}),
      CrossEntropy(x, label, {}, {{"axis", "None"}}),
      CrossEntropy(x, label, {}, {}),
      Op("elemwise_add",
         {Op("sum", {Op("elemwise_mul", {log_probs, label})}, {{"axis", "-1"}}), log_probs}),
      Op("elemwise_add", {Op("sum", {product}, {{"axis", "-1"}}), product}),
  });
  counts = OpCounts(internal::FuseLogSoftmaxLabelSum(left, &fused));
  EXPECT_EQ(fused, 0u);
  EXPECT_EQ(counts.count("_hn_log_softmax_label_sum"), 0u);
  EXPECT_EQ(counts.at("log_softmax"), 7);
}

// The product as Gluon's SoftmaxCrossEntropyLoss with dense labels builds it: broadcast_mul by
// reshape_like(label, x), x the log_softmax's input, so nothing is broadcast. By another shape
// source, or by a label as it is, broadcast_mul may broadcast: left as it is.
TEST(FuseLogSoftmaxLabelSum, FusesGluonsDenseLabelLossOnly) {
  const Symbol x = Symbol::Var("x"), label = Symbol::Var("label"), other = Symbol::Var("other");
  size_t fused = 0;
  gluon::SoftmaxCELoss loss(gluon::SoftmaxCELossOptions().set_sparse_label(false));
  const std::vector<Symbol> gluon_loss = loss.CallSymbolic({x, label});
  std::map<std::string, int> counts =
      OpCounts(internal::FuseLogSoftmaxLabelSum(Symbol::Group(gluon_loss), &fused));
  EXPECT_EQ(counts.at("_hn_log_softmax_label_sum"), 1);
  EXPECT_EQ(counts.count("log_softmax") + counts.count("broadcast_mul"), 0u);

  auto cross_entropy = [&](const Symbol& label_operand) {
    const Symbol log_probs = Op("log_softmax", {x}, {{"axis", "-1"}});
    return Op("sum", {Op("broadcast_mul", {log_probs, label_operand})},
              {{"axis", "-1"}, {"keepdims", "True"}});
  };
  const Symbol left =
      Symbol::Group({cross_entropy(label), cross_entropy(Op("reshape_like", {label, other}))});
  counts = OpCounts(internal::FuseLogSoftmaxLabelSum(left, &fused));
  EXPECT_EQ(fused, 0u);
  EXPECT_EQ(counts.at("log_softmax"), 2);
}

}  // namespace
}  // namespace hybridnet
