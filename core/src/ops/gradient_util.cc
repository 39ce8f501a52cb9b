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

NodeEntry ActivationInputGradient(const GradientBuilder& g, ActType act, const NodeEntry& dy) {
  const NodeEntry y = g.out(0);
  switch (act) {
    case ActType::kRelu:  // dy where y > 0
      return g.Op("_backward_relu", {dy, y});
    case ActType::kSigmoid:  // y (1 - y)
      return g.Mul(dy, g.Mul(y, g.Scalar("_rminus_scalar", y, 1.0)));
    case ActType::kTanh:  // 1 - y^2
      return g.Mul(dy, g.Scalar("_rminus_scalar", g.Op("square", {y}), 1.0));
    case ActType::kSoftrelu:  // sigmoid(x) = 1 - exp(-y), as -expm1(-y)
      return g.Mul(dy, g.Negative(g.Op("expm1", {g.Negative(y)})));
    case ActType::kSoftsign: {  // 1 / (1 + |x|)^2
      const NodeEntry one_plus_abs = g.Scalar("_plus_scalar", g.Op("abs", {g.in(0)}), 1.0);
      return g.Mul(dy, g.Op("reciprocal", {g.Op("square", {one_plus_abs})}));
    }
  }
  HN_THROW(kInternal) << "unknown activation";
}

bool ActivationGradientReadsInput(ActType act) { return act == ActType::kSoftsign; }

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

std::vector<NodeEntry> CastBackGradient(const std::shared_ptr<Node>& node,
                                        const std::vector<NodeEntry>& out_grads) {
  GradientBuilder g(node, out_grads);
  std::vector<NodeEntry> grads;
  for (size_t i = 0; i < node->inputs.size(); ++i)
    grads.push_back(g.CastLike(g.out_grad(i), g.in(i)));
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

FGradient BackwardOpGradient(std::string backward_op) {
  return [backward_op](const std::shared_ptr<Node>& node, const std::vector<NodeEntry>& out_grads) {
    GradientBuilder g(node, out_grads);
    std::vector<NodeEntry> inputs{g.out_grad(0)};
    inputs.insert(inputs.end(), node->inputs.begin(), node->inputs.end());
    std::shared_ptr<Node> backward = g.MakeNode(backward_op, std::move(inputs), g.attrs().dict);
    std::vector<NodeEntry> grads;
    for (uint32_t i = 0; i < node->inputs.size(); ++i) grads.push_back(NodeEntry{backward, i, 0});
    return grads;
  };
}

std::vector<std::string> BackwardInputNames(std::vector<std::string> names) {
  names.insert(names.begin(), "out_grad");
  return names;
}

bool BackwardShape(const FInferShape& forward, const NodeAttrs& attrs, std::vector<Shape>* in,
                   std::vector<Shape>* out) {
  // Gradient i has the shape of forward input i, out_grad that of the forward's output 0.
  auto merge = [&](const Shape& value, Shape* slot, const std::string& what) {
    Shape merged = *slot;
    HN_CHECK(MergeShape(value, &merged), kShapeError)
        << DescribeNode(attrs) << ": " << what << " has shape " << *slot << " but " << value
        << " is required";
    *slot = merged;
  };
  std::vector<Shape> forward_in(in->begin() + 1, in->end());
  for (size_t i = 0; i < out->size(); ++i)
    merge((*out)[i], &forward_in[i], "input " + std::to_string(i + 1));
  // The forward's output from its inputs first, so that a conflict names out_grad; then, when
  // the inputs leave it open, what out_grad tells the forward about its inputs.
  std::vector<Shape> forward_out{Shape()};
  bool known = forward(attrs, &forward_in, &forward_out);
  merge(forward_out[0], &(*in)[0], "input 'out_grad'");
  if (!known && (*in)[0].ndim() != 0) {
    forward_out[0] = (*in)[0];
    known = forward(attrs, &forward_in, &forward_out);
    (*in)[0] = forward_out[0];
  }
  for (size_t i = 0; i < forward_in.size(); ++i) {
    (*in)[i + 1] = forward_in[i];
    if (i < out->size()) (*out)[i] = forward_in[i];
  }
  return known && (*in)[0].IsKnown();
}

}  // namespace internal
}  // namespace hybridnet
