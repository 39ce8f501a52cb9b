#include "hybridnet/gluon/loss.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "hybridnet/operators.h"
#include "hybridnet/param.h"

namespace hybridnet {
namespace gluon {

namespace {

using ::hybridnet::internal::ValueText;

NDArray Unary(const char* op_name, const NDArray& x) { return op::Call(op_name, {x}); }
NDArray Binary(const char* op_name, const NDArray& a, const NDArray& b) {
  return op::Call(op_name, {a, b});
}
NDArray Scalar(const char* op_name, const NDArray& x, double scalar) {
  return op::Call(op_name, {x}, {{"scalar", ValueText(scalar)}});
}
NDArray Square(const NDArray& x) { return Unary("square", x); }
NDArray Abs(const NDArray& x) { return Unary("abs", x); }
NDArray Log(const NDArray& x) { return Unary("log", x); }
NDArray Neg(const NDArray& x) { return Unary("negative", x); }
NDArray Mul(const NDArray& a, const NDArray& b) { return Binary("broadcast_mul", a, b); }
NDArray Sub(const NDArray& a, const NDArray& b) { return Binary("broadcast_sub", a, b); }
NDArray Add(const NDArray& a, const NDArray& b) { return Binary("broadcast_add", a, b); }
NDArray Reduce(const char* op_name, const NDArray& x, const std::string& axis, bool keepdims,
               bool exclude) {
  return op::Call(op_name, {x},
                  {{"axis", axis},
                   {"keepdims", keepdims ? "True" : "False"},
                   {"exclude", exclude ? "True" : "False"}});
}
std::string AxisText(int axis) { return "(" + std::to_string(axis) + ",)"; }

// relu(pred) - pred * label + log(1 + exp(-|pred|)): the cross entropy of logits, stable for
// large |pred| (MXNet's SigmoidBinaryCrossEntropyLoss and LogisticLoss).
NDArray LogitCrossEntropy(const NDArray& pred, const NDArray& label) {
  return Add(Sub(op::relu(pred), Mul(pred, label)), op::Activation(Neg(Abs(pred)), "softrelu"));
}

// MXNet's prefix alias of a block: its class name in lower case ("l2loss").
std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// A weight as Python prints it ("1.0", "None").
std::string WeightText(const std::optional<float>& w) {
  if (!w) return "None";
  std::string text = ValueText(*w);
  return text.find_first_of(".eni") == std::string::npos ? text + ".0" : text;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Loss

Loss::Loss(std::string class_name, std::vector<std::string> input_names, size_t num_required,
           std::vector<size_t> sized_like_pred, std::optional<float> weight, int batch_axis,
           std::optional<std::string> prefix)
    : HybridBlock(Lower(class_name), std::move(prefix)),
      class_name_(std::move(class_name)),
      weight_(weight),
      batch_axis_(batch_axis),
      input_names_(std::move(input_names)),
      num_required_(num_required),
      sized_like_pred_(std::move(sized_like_pred)) {}

void Loss::CheckInputs(const std::vector<NDArray>& inputs) {
  std::string names;
  for (const auto& n : input_names_) names += (names.empty() ? "" : ", ") + n;
  HN_CHECK(inputs.size() >= num_required_ && inputs.size() <= input_names_.size(), kInvalidArgument)
      << class_name_ << " takes " << num_required_ << " to " << input_names_.size() << " inputs ("
      << names << "), got " << inputs.size();
  for (size_t i = 0; i < num_required_; ++i) {
    HN_CHECK(!inputs[i].is_none(), kInvalidArgument)
        << class_name_ << ": input " << i << " (" << input_names_[i] << ") is required";
  }
  const NDArray& pred = inputs[0];
  if (pred.is_symbolic()) return;
  for (size_t i : sized_like_pred_) {
    if (i >= inputs.size() || inputs[i].is_none() || inputs[i].is_symbolic()) continue;
    HN_CHECK(inputs[i].size() == pred.size(), kInvalidArgument)
        << class_name_ << ": " << input_names_[i] << " has shape " << inputs[i].shape().ToString()
        << " (" << inputs[i].size() << " elements) but " << input_names_[0] << " has shape "
        << pred.shape().ToString() << " (" << pred.size() << "); " << input_names_[i]
        << " is reshaped like " << input_names_[0] << ", so their sizes must agree";
  }
}

std::vector<NDArray> Loss::ForwardMany(const std::vector<NDArray>& inputs) {
  CheckInputs(inputs);
  std::vector<NDArray> all = inputs;
  all.resize(input_names_.size());  // the inputs left out are none
  return {Compute(all)};
}

std::vector<NDArray> Loss::Apply(const std::vector<NDArray>& inputs) {
  CheckInputs(inputs);
  // A none input (MXNet's None between given ones) cannot be a graph input: run eagerly, which
  // gives the same numbers and gradients.
  bool any_none =
      std::any_of(inputs.begin(), inputs.end(), [](const NDArray& x) { return x.is_none(); });
  try {
    return any_none ? RunForward(inputs) : HybridBlock::Apply(inputs);
  } catch (const Error& e) {
    // An op's error (a batch_axis out of range, a sample_weight that does not broadcast) names
    // the op; say which loss ran it.
    throw Error(e.code(), class_name_ + ": " + e.what());
  }
}

std::string Loss::Describe() {
  return class_name_ + "(batch_axis=" + std::to_string(batch_axis_) + ", w=" + WeightText(weight_) +
         ")";
}

NDArray Loss::ApplyWeighting(const NDArray& loss, const NDArray& sample_weight,
                             const std::optional<float>& weight) {
  NDArray out = loss;
  if (!sample_weight.is_none()) out = Mul(out, sample_weight);
  if (weight) out = out * *weight;
  return out;
}

NDArray Loss::MeanOverSample(const NDArray& loss) const {
  return Reduce("mean", loss, AxisText(batch_axis_), false, true);
}

NDArray Loss::SumOverSample(const NDArray& loss) const {
  return Reduce("sum", loss, AxisText(batch_axis_), false, true);
}

NDArray Loss::ReshapeLike(const NDArray& x, const NDArray& like) {
  return Binary("reshape_like", x, like);
}

// ---------------------------------------------------------------------------------------------
// The losses

L2Loss::L2Loss(const L2LossOptions& o, std::optional<std::string> prefix)
    : Loss("L2Loss", {"pred", "label", "sample_weight"}, 2, {1}, o.weight, o.batch_axis,
           std::move(prefix)) {
  HN_CHECK(o.weight.has_value(), kInvalidArgument)
      << "L2Loss: weight must be a number (it is halved), not None";
}

NDArray L2Loss::Compute(const std::vector<NDArray>& in) {
  NDArray label = ReshapeLike(in[1], in[0]);
  NDArray loss = Square(Sub(label, in[0]));
  return MeanOverSample(ApplyWeighting(loss, in[2], *weight_ / 2));
}

L1Loss::L1Loss(const LossOptions& o, std::optional<std::string> prefix)
    : Loss("L1Loss", {"pred", "label", "sample_weight"}, 2, {1}, o.weight, o.batch_axis,
           std::move(prefix)) {}

NDArray L1Loss::Compute(const std::vector<NDArray>& in) {
  NDArray label = ReshapeLike(in[1], in[0]);
  return MeanOverSample(ApplyWeighting(Abs(Sub(label, in[0])), in[2], weight_));
}

SigmoidBinaryCrossEntropyLoss::SigmoidBinaryCrossEntropyLoss(const SigmoidBCELossOptions& o,
                                                             std::optional<std::string> prefix)
    : Loss("SigmoidBinaryCrossEntropyLoss", {"pred", "label", "sample_weight", "pos_weight"}, 2,
           {1}, o.weight, o.batch_axis, std::move(prefix)),
      from_sigmoid_(o.from_sigmoid) {}

NDArray SigmoidBinaryCrossEntropyLoss::Compute(const std::vector<NDArray>& in) {
  const NDArray& pred = in[0];
  NDArray label = ReshapeLike(in[1], pred);
  const NDArray& pos_weight = in[3];
  NDArray loss;
  if (!from_sigmoid_) {
    if (pos_weight.is_none()) {
      loss = LogitCrossEntropy(pred, label);
    } else {
      NDArray log_weight = 1.f + Mul(pos_weight - 1.f, label);
      NDArray log_sigmoid_neg =
          Add(op::Activation(Neg(Abs(pred)), "softrelu"), op::relu(Neg(pred)));
      loss = Add(Sub(pred, Mul(pred, label)), Mul(log_weight, log_sigmoid_neg));
    }
  } else {
    constexpr float kEps = 1e-12f;
    NDArray positive = Mul(Log(pred + kEps), label);
    if (!pos_weight.is_none()) positive = Mul(positive, pos_weight);
    NDArray negative = Mul(Log((1.f - pred) + kEps), 1.f - label);
    loss = Neg(Add(positive, negative));
  }
  return MeanOverSample(ApplyWeighting(loss, in[2], weight_));
}

SoftmaxCrossEntropyLoss::SoftmaxCrossEntropyLoss(const SoftmaxCELossOptions& o,
                                                 std::optional<std::string> prefix)
    : Loss("SoftmaxCrossEntropyLoss", {"pred", "label", "sample_weight"}, 2,
           o.sparse_label ? std::vector<size_t>{} : std::vector<size_t>{1}, o.weight, o.batch_axis,
           std::move(prefix)),
      options_(o) {}

NDArray SoftmaxCrossEntropyLoss::Compute(const std::vector<NDArray>& in) {
  NDArray pred = options_.from_logits ? in[0] : op::log_softmax(in[0], options_.axis);
  NDArray loss;
  if (options_.sparse_label) {
    loss = Neg(op::Call("pick", {pred, in[1]},
                        {{"axis", std::to_string(options_.axis)}, {"keepdims", "True"}}));
  } else {
    // Shaped like in[0] (pred's shape), so that only the product reads pred: a hybridized
    // training graph then runs log_softmax, product and sum as one op (FuseLogSoftmaxLabelSum).
    NDArray label = ReshapeLike(in[1], in[0]);
    loss = Neg(Reduce("sum", Mul(pred, label), AxisText(options_.axis), true, false));
  }
  return MeanOverSample(ApplyWeighting(loss, in[2], weight_));
}

KLDivLoss::KLDivLoss(const KLDivLossOptions& o, std::optional<std::string> prefix)
    : Loss("KLDivLoss", {"pred", "label", "sample_weight"}, 2, {}, o.weight, o.batch_axis,
           std::move(prefix)),
      options_(o) {}

NDArray KLDivLoss::Compute(const std::vector<NDArray>& in) {
  NDArray pred = options_.from_logits ? in[0] : op::log_softmax(in[0], options_.axis);
  const NDArray& label = in[1];
  NDArray loss = Mul(label, Sub(Log(label + 1e-12f), pred));
  return SumOverSample(ApplyWeighting(loss, in[2], weight_));
}

CTCLoss::CTCLoss(const CTCLossOptions& o, std::optional<std::string> prefix)
    : Loss("CTCLoss", {"pred", "label", "pred_lengths", "label_lengths", "sample_weight"}, 2, {},
           o.weight, o.label_layout == "TN" ? 1 : 0, std::move(prefix)),
      pred_ntc_(o.layout == "NTC") {
  HN_CHECK(o.layout == "NTC" || o.layout == "TNC", kInvalidArgument)
      << "CTCLoss: layout must be NTC or TNC, got '" << o.layout << "'";
  HN_CHECK(o.label_layout == "NT" || o.label_layout == "TN", kInvalidArgument)
      << "CTCLoss: label_layout must be NT or TN, got '" << o.label_layout << "'";
}

NDArray CTCLoss::Compute(const std::vector<NDArray>& in) {
  auto swap = [](const NDArray& x) {
    return op::Call("SwapAxis", {x}, {{"dim1", "0"}, {"dim2", "1"}});
  };
  std::vector<NDArray> ctc_inputs{pred_ntc_ ? swap(in[0]) : in[0],
                                  batch_axis_ == 1 ? swap(in[1]) : in[1]};
  const bool data_lengths = !in[2].is_none(), label_lengths = !in[3].is_none();
  if (data_lengths) ctc_inputs.push_back(in[2]);
  if (label_lengths) ctc_inputs.push_back(in[3]);
  NDArray loss = op::Call("CTCLoss", ctc_inputs,
                          {{"use_data_lengths", data_lengths ? "True" : "False"},
                           {"use_label_lengths", label_lengths ? "True" : "False"},
                           {"blank_label", "last"}});
  return ApplyWeighting(loss, in[4], weight_);
}

HuberLoss::HuberLoss(const HuberLossOptions& o, std::optional<std::string> prefix)
    : Loss("HuberLoss", {"pred", "label", "sample_weight"}, 2, {1}, o.weight, o.batch_axis,
           std::move(prefix)),
      rho_(o.rho) {
  HN_CHECK(rho_ > 0.f, kInvalidArgument) << "HuberLoss: rho must be > 0, got " << rho_;
}

NDArray HuberLoss::Compute(const std::vector<NDArray>& in) {
  NDArray label = ReshapeLike(in[1], in[0]);
  NDArray error = Abs(Sub(label, in[0]));
  NDArray loss = op::Call(
      "where", {Scalar("_greater_scalar", error, rho_), Scalar("_minus_scalar", error, 0.5 * rho_),
                Scalar("_mul_scalar", Square(error), 0.5 / rho_)});
  return MeanOverSample(ApplyWeighting(loss, in[2], weight_));
}

HingeLoss::HingeLoss(const HingeLossOptions& o, std::optional<std::string> prefix)
    : HingeLoss("HingeLoss", o, std::move(prefix), false) {}

HingeLoss::HingeLoss(std::string class_name, const HingeLossOptions& o,
                     std::optional<std::string> prefix, bool squared)
    : Loss(std::move(class_name), {"pred", "label", "sample_weight"}, 2, {1}, o.weight,
           o.batch_axis, std::move(prefix)),
      margin_(o.margin),
      squared_(squared) {}

NDArray HingeLoss::Compute(const std::vector<NDArray>& in) {
  NDArray label = ReshapeLike(in[1], in[0]);
  NDArray loss = op::relu(margin_ - Mul(in[0], label));
  if (squared_) loss = Square(loss);
  return MeanOverSample(ApplyWeighting(loss, in[2], weight_));
}

SquaredHingeLoss::SquaredHingeLoss(const HingeLossOptions& o, std::optional<std::string> prefix)
    : HingeLoss("SquaredHingeLoss", o, std::move(prefix), true) {}

LogisticLoss::LogisticLoss(const LogisticLossOptions& o, std::optional<std::string> prefix)
    : Loss("LogisticLoss", {"pred", "label", "sample_weight"}, 2, {1}, o.weight, o.batch_axis,
           std::move(prefix)),
      signed_labels_(o.label_format == "signed") {
  HN_CHECK(o.label_format == "signed" || o.label_format == "binary", kInvalidArgument)
      << "LogisticLoss: label_format must be signed or binary, got '" << o.label_format << "'";
}

NDArray LogisticLoss::Compute(const std::vector<NDArray>& in) {
  NDArray label = ReshapeLike(in[1], in[0]);
  if (signed_labels_) label = (label + 1.f) / 2.f;  // -1/1 to 0/1
  return MeanOverSample(ApplyWeighting(LogitCrossEntropy(in[0], label), in[2], weight_));
}

TripletLoss::TripletLoss(const TripletLossOptions& o, std::optional<std::string> prefix)
    : Loss("TripletLoss", {"pred", "positive", "negative"}, 3, {1, 2}, o.weight, o.batch_axis,
           std::move(prefix)),
      margin_(o.margin) {}

NDArray TripletLoss::Compute(const std::vector<NDArray>& in) {
  const NDArray& pred = in[0];
  NDArray positive = ReshapeLike(in[1], pred), negative = ReshapeLike(in[2], pred);
  NDArray gap = SumOverSample(Sub(Square(Sub(positive, pred)), Square(Sub(negative, pred))));
  return ApplyWeighting(op::relu(gap + margin_), NDArray(), weight_);
}

PoissonNLLLoss::PoissonNLLLoss(const PoissonNLLLossOptions& o, std::optional<std::string> prefix)
    : Loss("PoissonNLLLoss", {"pred", "target", "sample_weight"}, 2, {1}, o.weight, o.batch_axis,
           std::move(prefix)),
      options_(o) {}

NDArray PoissonNLLLoss::Compute(const std::vector<NDArray>& in) {
  const NDArray& pred = in[0];
  NDArray target = ReshapeLike(in[1], pred);
  NDArray loss = options_.from_logits ? Sub(Unary("exp", pred), Mul(target, pred))
                                      : Sub(pred, Mul(target, Log(pred + options_.epsilon)));
  if (options_.compute_full) {
    // Stirling's log(target!) ~ target log target - target + log(2 pi target) / 2, for target > 1.
    NDArray stirling =
        Add(Sub(Mul(target, Log(target)), target),
            Scalar("_mul_scalar", Log(Scalar("_mul_scalar", target * 2.f, M_PI)), 0.5));
    loss = Add(loss, Mul(stirling, Scalar("_greater_scalar", target, 1.0)));
  }
  return op::Call("mean", {ApplyWeighting(loss, in[2], weight_)});
}

CosineEmbeddingLoss::CosineEmbeddingLoss(const CosineEmbeddingLossOptions& o,
                                         std::optional<std::string> prefix)
    : Loss("CosineEmbeddingLoss", {"input1", "input2", "label", "sample_weight"}, 3, {1}, o.weight,
           o.batch_axis, std::move(prefix)),
      margin_(o.margin) {}

NDArray CosineEmbeddingLoss::Compute(const std::vector<NDArray>& in) {
  NDArray input2 = in[1];
  NDArray input1 = ReshapeLike(in[0], input2);
  NDArray label = op::Reshape(in[2], {-1, 1});
  auto column = [](const NDArray& x) { return op::Reshape(x, {-1, 1}); };
  NDArray norms = Mul(column(op::Call("norm", {input1}, {{"axis", "(-1,)"}})),
                      column(op::Call("norm", {input2}, {{"axis", "(-1,)"}})));
  NDArray dots = column(Reduce("sum", Mul(input1, input2), "(-1,)", false, false));
  NDArray cosine = Binary("broadcast_div", dots, Scalar("_maximum_scalar", norms, 1e-12));
  NDArray similar = Mul(1.f - cosine, Scalar("_equal_scalar", label, 1.0));
  NDArray dissimilar =
      Scalar("_maximum_scalar", Mul(Scalar("_equal_scalar", label, -1.0), cosine - margin_), 0.0);
  return ApplyWeighting(Add(similar, dissimilar), in[3], weight_);
}

SDMLLoss::SDMLLoss(const SDMLLossOptions& o, std::optional<std::string> prefix)
    : Loss("SDMLLoss", {"x1", "x2"}, 2, {}, o.weight, o.batch_axis, std::move(prefix)),
      smoothing_(o.smoothing_parameter) {}

NDArray SDMLLoss::Compute(const std::vector<NDArray>& in) {
  const NDArray &x1 = in[0], &x2 = in[1];
  if (!x1.is_symbolic() && !x2.is_symbolic()) {
    HN_CHECK(x1.shape() == x2.shape() && x1.shape().ndim() == 2 && x1.shape()[0] >= 2,
             kInvalidArgument)
        << "x1 and x2 must both be (batch, dim) with batch >= 2, got " << x1.shape().ToString()
        << " and " << x2.shape().ToString();
  }
  auto expand = [](const NDArray& x, int axis) {
    return op::Call("expand_dims", {x}, {{"axis", std::to_string(axis)}});
  };
  // Squared distance of every (x1[i], x2[j]).
  NDArray differences = Sub(expand(x1, 1), expand(x2, 0));
  NDArray distances =
      Reduce("sum", Scalar("_power_scalar", differences, 2.0), "(2,)", false, false);
  NDArray log_probabilities = op::log_softmax(Neg(distances), 1);
  // The smoothed identity: 1 - s on the diagonal, s / (batch - 1) elsewhere. It is built from
  // ops on x1 (traced graphs are shape-free) and is a constant to the gradient.
  NDArray ones = Scalar("_mul_scalar", Reduce("sum", x1, "(1,)", false, false), 0.0) + 1.f;
  NDArray gold = op::Call("diag", {ones});
  NDArray others = op::Reshape(op::Call("sum", {ones}) - 1.f, {1, 1});
  NDArray labels =
      Add(gold * (1.f - smoothing_), Binary("broadcast_div", (1.f - gold) * smoothing_, others));
  labels = Unary("BlockGrad", labels);
  // MXNet's KLDivLoss(from_logits=True) of the log probabilities; SDML applies no weight.
  NDArray kl = Mul(labels, Sub(Log(labels + 1e-12f), log_probabilities));
  return Reduce("sum", kl, "(0,)", false, true);
}

}  // namespace gluon
}  // namespace hybridnet
