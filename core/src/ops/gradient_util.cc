#include "ops/gradient_util.h"

#include <cstdio>

namespace hybridnet {
namespace internal {

std::shared_ptr<Node> GradientBuilder::MakeNode(const std::string& op_name,
                                                std::vector<NodeEntry> inputs,
                                                AttrDict attrs) const {
  auto node = std::make_shared<Node>();
  node->attrs = MakeNodeAttrs(op_name, node_->name() + "_backward", std::move(attrs));
  const uint32_t expected = node->attrs.op->NumInputs(node->attrs);
  HN_CHECK(inputs.size() == expected, kInternal)
      << "the gradient of " << DescribeNode(node_->attrs) << " gives " << op_name << " "
      << inputs.size() << " inputs, it takes " << expected;
  node->inputs = std::move(inputs);
  return node;
}

NodeEntry GradientBuilder::Op(const std::string& op_name, std::vector<NodeEntry> inputs,
                              AttrDict attrs) const {
  return NodeEntry{MakeNode(op_name, std::move(inputs), std::move(attrs)), 0, 0};
}

NodeEntry GradientBuilder::Scalar(const std::string& op_name, const NodeEntry& a,
                                  double scalar) const {
  // 17 significant digits: the double the formula means, read back exactly.
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", scalar);
  return Op(op_name, {a}, {{"scalar", text}});
}

FGradient UnaryGradient(UnaryDerivative derivative) {
  return [derivative](const std::shared_ptr<Node>& node, const std::vector<NodeEntry>& out_grads) {
    GradientBuilder g(node, out_grads);
    return std::vector<NodeEntry>{g.Mul(g.out_grad(0), derivative(g))};
  };
}

NodeEntry ActivationDerivative(const GradientBuilder& g, ActType act) {
  const NodeEntry y = g.out(0);
  switch (act) {
    case ActType::kRelu:  // 1 where y > 0
      return g.Scalar("_greater_scalar", y, 0.0);
    case ActType::kSigmoid:  // y (1 - y)
      return g.Mul(y, g.Scalar("_rminus_scalar", y, 1.0));
    case ActType::kTanh:  // 1 - y^2
      return g.Scalar("_rminus_scalar", g.Op("square", {y}), 1.0);
    case ActType::kSoftrelu:  // sigmoid(x) = 1 - exp(-y), as -expm1(-y)
      return g.Negative(g.Op("expm1", {g.Negative(y)}));
    case ActType::kSoftsign:  // 1 / (1 + |x|)^2
      return g.Op("reciprocal",
                  {g.Op("square", {g.Scalar("_plus_scalar", g.Op("abs", {g.in(0)}), 1.0)})});
  }
  HN_THROW(kInternal) << "unknown activation";
}

std::vector<NodeEntry> ZeroGradient(const std::shared_ptr<Node>& node,
                                    const std::vector<NodeEntry>& out_grads) {
  GradientBuilder g(node, out_grads);
  std::vector<NodeEntry> grads;
  for (size_t i = 0; i < node->inputs.size(); ++i) grads.push_back(g.ZerosLike(g.in(i)));
  return grads;
}

std::vector<NodeEntry> IdentityGradient(const std::shared_ptr<Node>& node,
                                        const std::vector<NodeEntry>& out_grads) {
  GradientBuilder g(node, out_grads);
  std::vector<NodeEntry> grads{g.out_grad(0)};
  for (size_t i = 1; i < node->inputs.size(); ++i) grads.push_back(g.ZerosLike(g.in(i)));
  return grads;
}

NodeEntry CopiedElementsGradient(const GradientBuilder& g, size_t input, AttrDict overrides) {
  std::vector<NodeEntry> inputs;
  for (size_t i = 0; i < g.attrs().op->NumInputs(g.attrs()); ++i) inputs.push_back(g.in(i));
  inputs[input] = g.Op("_hn_index_like", {g.in(input)});
  AttrDict attrs = g.attrs().dict;
  for (auto& [key, value] : overrides) attrs[key] = value;
  const NodeEntry source = g.Op(g.attrs().op->name, std::move(inputs), std::move(attrs));
  return g.Op("_hn_scatter_add_like", {g.out_grad(0), source, g.in(input)});
}

std::vector<NodeEntry> MatrixProductGradient(const GradientBuilder& g, const std::string& product,
                                             bool ta, bool tb, const NodeEntry& dc,
                                             const AttrDict& attrs) {
  auto multiply = [&](const NodeEntry& x, const NodeEntry& y, bool tx, bool ty) {
    AttrDict a = attrs;
    a["transpose_a"] = tx ? "True" : "False";
    a["transpose_b"] = ty ? "True" : "False";
    return g.Op(product, {x, y}, std::move(a));
  };
  const NodeEntry& a = g.in(0);
  const NodeEntry& b = g.in(1);
  return {ta ? multiply(b, dc, tb, true) : multiply(dc, b, false, !tb),
          tb ? multiply(dc, a, true, ta) : multiply(a, dc, !ta, false)};
}

}  // namespace internal
}  // namespace hybridnet
