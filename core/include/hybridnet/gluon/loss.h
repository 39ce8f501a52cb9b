// MXNet 1.9's gluon.loss: each loss is a HybridBlock built from registered ops only, so it runs
// eagerly or hybridized and its gradient is that of the ops.
//
//   auto loss_fn = std::make_shared<SoftmaxCrossEntropyLoss>();
//   autograd::RecordScope record;
//   NDArray loss = (*loss_fn)({net(x), label})[0];   // one value per sample
//   autograd::Backward({loss});
//
// Inputs follow MXNet's hybrid_forward order, e.g. (pred, label[, sample_weight]); a trailing
// optional input may be left out, and in an eager call a none NDArray() stands for MXNet's None
// in the middle (CTCLoss's pred_lengths). `weight` (None = not applied) scales the loss and
// `sample_weight` multiplies it with broadcasting before the mean over every axis but
// `batch_axis`, exactly in MXNet's order, so the numbers are MXNet's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hybridnet/gluon/block.h"
#include "hybridnet/gluon/layer_options.h"

namespace hybridnet {
namespace gluon {

/// What every loss shares: the inputs' names and checks, MXNet's weighting and the reduction.
class Loss : public HybridBlock {
 public:
  /// The forward: checks the number of inputs (and, eagerly, their sizes) then computes.
  std::vector<NDArray> ForwardMany(const std::vector<NDArray>& inputs) final;
  /// The scalar weight (nullopt: MXNet's None).
  const std::optional<float>& weight() const { return weight_; }
  /// The axis kept by the reduction.
  int batch_axis() const { return batch_axis_; }

 protected:
  /// `input_names` in MXNet's order, the first `num_required` of them required;
  /// `sized_like_pred` lists the inputs MXNet reshapes like input 0 (they need its size).
  Loss(std::string class_name, std::vector<std::string> input_names, size_t num_required,
       std::vector<size_t> sized_like_pred, std::optional<float> weight, int batch_axis,
       std::optional<std::string> prefix);
  /// The loss from all inputs, those not given as none arrays.
  virtual NDArray Compute(const std::vector<NDArray>& inputs) = 0;
  /// Checks concrete inputs before a hybridized call too.
  std::vector<NDArray> Apply(const std::vector<NDArray>& inputs) override;
  /// "L2Loss(batch_axis=0, w=1.0)", as MXNet prints a loss.
  std::string Describe() override;

  /// MXNet's _apply_weighting: times sample_weight (broadcast) when given, then times `weight`
  /// when given.
  static NDArray ApplyWeighting(const NDArray& loss, const NDArray& sample_weight,
                                const std::optional<float>& weight);
  /// The mean over every axis but batch_axis.
  NDArray MeanOverSample(const NDArray& loss) const;
  /// The sum over every axis but batch_axis.
  NDArray SumOverSample(const NDArray& loss) const;
  /// `x` reshaped like `like` (MXNet's _reshape_like).
  static NDArray ReshapeLike(const NDArray& x, const NDArray& like);

  /// MXNet's class name ("L2Loss").
  std::string class_name_;
  /// The scalar weight (nullopt: not applied).
  std::optional<float> weight_;
  /// The axis the per-sample result keeps.
  int batch_axis_;

 private:
  /// Throws kInvalidArgument naming the loss and the input for a wrong count or size.
  void CheckInputs(const std::vector<NDArray>& inputs);

  std::vector<std::string> input_names_;
  size_t num_required_;
  std::vector<size_t> sized_like_pred_;
};

/// L2Loss's keyword arguments (MXNet's names and defaults).
struct L2LossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// The loss is weight / 2 * (label - pred)^2.
  HN_LAYER_OPTION(L2LossOptions, std::optional<float>, weight) = 1.f;
  HN_LAYER_OPTION(L2LossOptions, int, batch_axis) = 0;  ///< the axis kept
  HN_LAYER_OPTIONS_END;
};

/// weight / 2 * (label - pred)^2, averaged per sample. Inputs (pred, label[, sample_weight]).
class L2Loss : public Loss {
 public:
  /// An L2Loss with these options; `prefix` as in Block's constructor.
  explicit L2Loss(const L2LossOptions& options = {},
                  std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;
};

/// The keyword arguments of the losses that have only weight and batch_axis (L1Loss).
struct LossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_LAYER_OPTION(LossOptions, std::optional<float>, weight) = {};  ///< None: not applied
  HN_LAYER_OPTION(LossOptions, int, batch_axis) = 0;                ///< the axis kept
  HN_LAYER_OPTIONS_END;
};

/// |label - pred|, averaged per sample. Inputs (pred, label[, sample_weight]).
class L1Loss : public Loss {
 public:
  /// An L1Loss with these options; `prefix` as in Block's constructor.
  explicit L1Loss(const LossOptions& options = {},
                  std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;
};

/// SigmoidBinaryCrossEntropyLoss's keyword arguments.
struct SigmoidBCELossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// Whether pred holds probabilities (else logits, the stable form is used).
  HN_LAYER_OPTION(SigmoidBCELossOptions, bool, from_sigmoid) = false;
  /// Scales the loss (None: not applied).
  HN_LAYER_OPTION(SigmoidBCELossOptions, std::optional<float>, weight) = {};
  /// The axis kept: the result has one value per index of it.
  HN_LAYER_OPTION(SigmoidBCELossOptions, int, batch_axis) = 0;
  HN_LAYER_OPTIONS_END;
};

/// Binary cross entropy of labels in [0, 1]. Inputs (pred, label[, sample_weight[,
/// pos_weight]]): pos_weight scales the positive term, broadcast against label.
class SigmoidBinaryCrossEntropyLoss : public Loss {
 public:
  /// A SigmoidBinaryCrossEntropyLoss with these options; `prefix` as in Block's constructor.
  explicit SigmoidBinaryCrossEntropyLoss(const SigmoidBCELossOptions& options = {},
                                         std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;

 private:
  bool from_sigmoid_;
};
/// MXNet's alias.
using SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss;

/// SoftmaxCrossEntropyLoss's keyword arguments.
struct SoftmaxCELossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_LAYER_OPTION(SoftmaxCELossOptions, int, axis) = -1;  ///< the class axis
  /// Labels are class indices (else distributions of pred's shape).
  HN_LAYER_OPTION(SoftmaxCELossOptions, bool, sparse_label) = true;
  /// pred holds log probabilities already (no log_softmax).
  HN_LAYER_OPTION(SoftmaxCELossOptions, bool, from_logits) = false;
  /// Scales the loss (None: not applied).
  HN_LAYER_OPTION(SoftmaxCELossOptions, std::optional<float>, weight) = {};
  /// The axis kept: the result has one value per index of it.
  HN_LAYER_OPTION(SoftmaxCELossOptions, int, batch_axis) = 0;
  HN_LAYER_OPTIONS_END;
};

/// -log softmax(pred)[label], averaged per sample. Inputs (pred, label[, sample_weight]).
class SoftmaxCrossEntropyLoss : public Loss {
 public:
  /// A SoftmaxCrossEntropyLoss with these options; `prefix` as in Block's constructor.
  explicit SoftmaxCrossEntropyLoss(const SoftmaxCELossOptions& options = {},
                                   std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;

 private:
  SoftmaxCELossOptions options_;
};
/// MXNet's alias.
using SoftmaxCELoss = SoftmaxCrossEntropyLoss;

/// KLDivLoss's keyword arguments.
struct KLDivLossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// pred holds log probabilities (else log_softmax along axis is applied).
  HN_LAYER_OPTION(KLDivLossOptions, bool, from_logits) = true;
  /// The class axis.
  HN_LAYER_OPTION(KLDivLossOptions, int, axis) = -1;
  /// Scales the loss (None: not applied).
  HN_LAYER_OPTION(KLDivLossOptions, std::optional<float>, weight) = {};
  /// The axis kept: the result has one value per index of it.
  HN_LAYER_OPTION(KLDivLossOptions, int, batch_axis) = 0;
  HN_LAYER_OPTIONS_END;
};

/// label * (log(label + 1e-12) - pred), summed per sample. Inputs (pred, label[,
/// sample_weight]).
class KLDivLoss : public Loss {
 public:
  /// A KLDivLoss with these options; `prefix` as in Block's constructor.
  explicit KLDivLoss(const KLDivLossOptions& options = {},
                     std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;

 private:
  KLDivLossOptions options_;
};

/// CTCLoss's keyword arguments (its batch axis follows label_layout).
struct CTCLossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_LAYER_OPTION(CTCLossOptions, std::string, layout) = "NTC";       ///< pred: NTC or TNC
  HN_LAYER_OPTION(CTCLossOptions, std::string, label_layout) = "NT";  ///< label: NT or TN
  /// Scales the loss (None: not applied).
  HN_LAYER_OPTION(CTCLossOptions, std::optional<float>, weight) = {};
  HN_LAYER_OPTIONS_END;
};

/// Connectionist temporal classification with the last class as blank (labels padded with -1).
/// Inputs (pred, label[, pred_lengths[, label_lengths[, sample_weight]]]).
class CTCLoss : public Loss {
 public:
  /// A CTCLoss with these options; `prefix` as in Block's constructor.
  explicit CTCLoss(const CTCLossOptions& options = {},
                   std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;

 private:
  bool pred_ntc_;
};

/// HuberLoss's keyword arguments.
struct HuberLossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  HN_LAYER_OPTION(HuberLossOptions, float, rho) = 1.f;  ///< where the loss turns linear, > 0
  /// Scales the loss (None: not applied).
  HN_LAYER_OPTION(HuberLossOptions, std::optional<float>, weight) = {};
  /// The axis kept: the result has one value per index of it.
  HN_LAYER_OPTION(HuberLossOptions, int, batch_axis) = 0;
  HN_LAYER_OPTIONS_END;
};

/// Squared error below rho, absolute error above. Inputs (pred, label[, sample_weight]).
class HuberLoss : public Loss {
 public:
  /// A HuberLoss with these options; `prefix` as in Block's constructor.
  explicit HuberLoss(const HuberLossOptions& options = {},
                     std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;

 private:
  float rho_;
};

/// HingeLoss's and SquaredHingeLoss's keyword arguments.
struct HingeLossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// The margin.
  HN_LAYER_OPTION(HingeLossOptions, float, margin) = 1.f;
  /// Scales the loss (None: not applied).
  HN_LAYER_OPTION(HingeLossOptions, std::optional<float>, weight) = {};
  /// The axis kept: the result has one value per index of it.
  HN_LAYER_OPTION(HingeLossOptions, int, batch_axis) = 0;
  HN_LAYER_OPTIONS_END;
};

/// max(0, margin - pred * label) for labels -1/1 (squared for SquaredHingeLoss). Inputs (pred,
/// label[, sample_weight]).
class HingeLoss : public Loss {
 public:
  /// A HingeLoss with these options; `prefix` as in Block's constructor.
  explicit HingeLoss(const HingeLossOptions& options = {},
                     std::optional<std::string> prefix = std::nullopt);

 protected:
  /// For SquaredHingeLoss: `squared` squares the hinge.
  HingeLoss(std::string class_name, const HingeLossOptions& options,
            std::optional<std::string> prefix, bool squared);
  NDArray Compute(const std::vector<NDArray>& in) override;

 private:
  float margin_;
  bool squared_;
};

/// max(0, margin - pred * label)^2.
class SquaredHingeLoss : public HingeLoss {
 public:
  /// A SquaredHingeLoss with these options; `prefix` as in Block's constructor.
  explicit SquaredHingeLoss(const HingeLossOptions& options = {},
                            std::optional<std::string> prefix = std::nullopt);
};

/// LogisticLoss's keyword arguments.
struct LogisticLossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// Scales the loss (None: not applied).
  HN_LAYER_OPTION(LogisticLossOptions, std::optional<float>, weight) = {};
  /// The axis kept: the result has one value per index of it.
  HN_LAYER_OPTION(LogisticLossOptions, int, batch_axis) = 0;
  /// "signed" (labels -1/1) or "binary" (labels 0/1).
  HN_LAYER_OPTION(LogisticLossOptions, std::string, label_format) = "signed";
  HN_LAYER_OPTIONS_END;
};

/// log(1 + exp(-pred * label)). Inputs (pred, label[, sample_weight]).
class LogisticLoss : public Loss {
 public:
  /// A LogisticLoss with these options; `prefix` as in Block's constructor.
  explicit LogisticLoss(const LogisticLossOptions& options = {},
                        std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;

 private:
  bool signed_labels_;
};

/// TripletLoss's keyword arguments.
struct TripletLossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// The margin.
  HN_LAYER_OPTION(TripletLossOptions, float, margin) = 1.f;
  /// Scales the loss (None: not applied).
  HN_LAYER_OPTION(TripletLossOptions, std::optional<float>, weight) = {};
  /// The axis kept: the result has one value per index of it.
  HN_LAYER_OPTION(TripletLossOptions, int, batch_axis) = 0;
  HN_LAYER_OPTIONS_END;
};

/// max(0, |pred - positive|^2 - |pred - negative|^2 + margin) per sample. Inputs (pred,
/// positive, negative).
class TripletLoss : public Loss {
 public:
  /// A TripletLoss with these options; `prefix` as in Block's constructor.
  explicit TripletLoss(const TripletLossOptions& options = {},
                       std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;

 private:
  float margin_;
};

/// PoissonNLLLoss's keyword arguments (epsilon is MXNet's forward argument of that name).
struct PoissonNLLLossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// Scales the loss (None: not applied).
  HN_LAYER_OPTION(PoissonNLLLossOptions, std::optional<float>, weight) = {};
  /// pred is log(rate) (else the rate itself).
  HN_LAYER_OPTION(PoissonNLLLossOptions, bool, from_logits) = true;
  /// The axis kept: the result has one value per index of it.
  HN_LAYER_OPTION(PoissonNLLLossOptions, int, batch_axis) = 0;
  /// Adds Stirling's approximation of log(target!) for targets > 1.
  HN_LAYER_OPTION(PoissonNLLLossOptions, bool, compute_full) = false;
  /// Added to pred inside the log when from_logits is false.
  HN_LAYER_OPTION(PoissonNLLLossOptions, float, epsilon) = 1e-8f;
  HN_LAYER_OPTIONS_END;
};

/// Negative log likelihood of a Poisson target, averaged over every element (shape (1,), as
/// MXNet). Inputs (pred, target[, sample_weight]).
class PoissonNLLLoss : public Loss {
 public:
  /// A PoissonNLLLoss with these options; `prefix` as in Block's constructor.
  explicit PoissonNLLLoss(const PoissonNLLLossOptions& options = {},
                          std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;

 private:
  PoissonNLLLossOptions options_;
};

/// CosineEmbeddingLoss's keyword arguments.
struct CosineEmbeddingLossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// Scales the loss (None: not applied).
  HN_LAYER_OPTION(CosineEmbeddingLossOptions, std::optional<float>, weight) = {};
  /// The axis kept: the result has one value per index of it.
  HN_LAYER_OPTION(CosineEmbeddingLossOptions, int, batch_axis) = 0;
  /// The margin.
  HN_LAYER_OPTION(CosineEmbeddingLossOptions, float, margin) = 0.f;
  HN_LAYER_OPTIONS_END;
};

/// 1 - cos(input1, input2) for label 1, max(0, cos - margin) for label -1; shape (N, 1), as
/// MXNet. Inputs (input1, input2, label[, sample_weight]).
class CosineEmbeddingLoss : public Loss {
 public:
  /// A CosineEmbeddingLoss with these options; `prefix` as in Block's constructor.
  explicit CosineEmbeddingLoss(const CosineEmbeddingLossOptions& options = {},
                               std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;

 private:
  float margin_;
};

/// SDMLLoss's keyword arguments (MXNet takes weight and batch_axis and applies neither).
struct SDMLLossOptions {
  HN_LAYER_OPTIONS_BEGIN;
  /// Probability mass spread over the batch's other samples.
  HN_LAYER_OPTION(SDMLLossOptions, float, smoothing_parameter) = 0.3f;
  /// Taken as MXNet takes it, and not applied (as in MXNet).
  HN_LAYER_OPTION(SDMLLossOptions, std::optional<float>, weight) = 1.f;
  /// Taken as MXNet takes it, and not applied (as in MXNet).
  HN_LAYER_OPTION(SDMLLossOptions, int, batch_axis) = 0;
  HN_LAYER_OPTIONS_END;
};

/// Smoothed deep metric learning: the KL divergence between softmax(-squared distances) of
/// every (x1[i], x2[j]) pair and smoothed identity labels. Inputs (x1, x2), both (N, D), N >= 2.
class SDMLLoss : public Loss {
 public:
  /// A SDMLLoss with these options; `prefix` as in Block's constructor.
  explicit SDMLLoss(const SDMLLossOptions& options = {},
                    std::optional<std::string> prefix = std::nullopt);

 protected:
  NDArray Compute(const std::vector<NDArray>& in) override;

 private:
  float smoothing_;
};

}  // namespace gluon
}  // namespace hybridnet
