#include "hybridnet/gluon/nn.h"

#include "hybridnet/imperative.h"
#include "hybridnet/param.h"

namespace hybridnet {
namespace gluon {

namespace {

std::string BoolText(bool b) { return b ? "True" : "False"; }

}  // namespace

Dense::Dense(const DenseOptions& o, std::optional<std::string> prefix)
    : HybridBlock("dense", std::move(prefix)), units_(o.units), activation_(o.activation) {
  HN_CHECK(o.units >= 1, kInvalidArgument) << "Dense: units must be >= 1, got " << o.units;
  HN_CHECK(o.in_units >= 0, kInvalidArgument) << "Dense: in_units must be >= 0, got " << o.in_units;
  weight_ = AddParameter("weight", Shape({o.units, o.in_units}), o.weight_initializer);
  if (o.use_bias) bias_ = AddParameter("bias", Shape({o.units}), o.bias_initializer);
  fc_attrs_ = MakeNodeAttrs("FullyConnected", "fwd",
                            {{"flatten", BoolText(o.flatten)},
                             {"no_bias", BoolText(!o.use_bias)},
                             {"num_hidden", std::to_string(o.units)}});
  if (!o.activation.empty()) {
    RegisterChild(std::make_shared<Activation>(o.activation, o.activation + "_"), "act");
  }
}

Dense::Dense(int64_t units, const std::string& activation, std::optional<std::string> prefix)
    : Dense(DenseOptions().set_units(units).set_activation(activation), std::move(prefix)) {}

NDArray Dense::Forward(const NDArray& x) {
  std::vector<NDArray> inputs{x, weight_->Value()};
  if (bias_) inputs.push_back(bias_->Value());
  NDArray y = Invoke(fc_attrs_, inputs)[0];
  if (!activation_.empty()) y = (*children_[0].second)(y);
  return y;
}

std::string Dense::Describe() {
  int64_t in = weight_->shape()[1];
  return "Dense(" + (in > 0 ? std::to_string(in) : std::string("None")) + " -> " +
         std::to_string(units_) + ", " +
         (activation_.empty() ? "linear" : "Activation(" + activation_ + ")") + ")";
}

std::string Dense::ToString() { return Describe(); }

Activation::Activation(const ActivationOptions& o, std::optional<std::string> prefix)
    : HybridBlock(o.activation, std::move(prefix)),
      act_type_(o.activation),
      attrs_(MakeNodeAttrs("Activation", "fwd", {{"act_type", o.activation}})) {}

Activation::Activation(const std::string& act_type, std::optional<std::string> prefix)
    : Activation(ActivationOptions().set_activation(act_type), std::move(prefix)) {}

NDArray Activation::Forward(const NDArray& x) { return Invoke(attrs_, {x})[0]; }

std::string Activation::Describe() { return "Activation(" + act_type_ + ")"; }

Dropout::Dropout(const DropoutOptions& o, std::optional<std::string> prefix)
    : HybridBlock("dropout", std::move(prefix)), rate_(o.rate) {
  HN_CHECK(rate_ >= 0.f && rate_ <= 1.f, kInvalidArgument)
      << "Dropout: rate must be in [0, 1], got " << rate_;
  attrs_ = rate_ > 0.f ? MakeNodeAttrs("Dropout", "fwd",
                                       {{"axes", "()"},
                                        {"cudnn_off", "False"},
                                        {"p", hybridnet::internal::ValueText(rate_)}})
                       : MakeNodeAttrs("_copy", "", {});
}

Dropout::Dropout(float rate, std::optional<std::string> prefix)
    : Dropout(DropoutOptions().set_rate(rate), std::move(prefix)) {}

NDArray Dropout::Forward(const NDArray& x) { return Invoke(attrs_, {x})[0]; }

std::string Dropout::Describe() {
  return "Dropout(p = " + hybridnet::internal::ValueText(rate_) + ", axes=())";
}

Flatten::Flatten(std::optional<std::string> prefix)
    : HybridBlock("flatten", std::move(prefix)), attrs_(MakeNodeAttrs("Flatten", "", {})) {}

NDArray Flatten::Forward(const NDArray& x) { return Invoke(attrs_, {x})[0]; }

Lambda::Lambda(std::function<NDArray(const NDArray&)> fn, std::optional<std::string> prefix)
    : Block("lambda", std::move(prefix)), fn_(std::move(fn)) {
  HN_CHECK(fn_ != nullptr, kInvalidArgument) << "Lambda: no function given";
}

NDArray Lambda::Forward(const NDArray& x) { return fn_(x); }

HybridLambda::HybridLambda(std::function<NDArray(const NDArray&)> fn,
                           std::optional<std::string> prefix)
    : HybridBlock("hybridlambda", std::move(prefix)), fn_(std::move(fn)) {
  HN_CHECK(fn_ != nullptr, kInvalidArgument) << "HybridLambda: no function given";
}

NDArray HybridLambda::Forward(const NDArray& x) { return fn_(x); }

}  // namespace gluon
}  // namespace hybridnet
