// Evaluation metrics: MXNet 1.9.1's mx.metric, with its numbers and its running statistics.
//
//   auto acc = metric::Create("acc");                 // or Create("top_k_acc", {{"top_k", "5"}})
//   acc->Update({labels}, {predictions});             // one (label, prediction) pair per output
//   for (const auto& nv : acc->Get()) std::cout << nv.name << " " << nv.value;
//
// Every metric keeps two running sums, as MXNet's EvalMetric does: the local ones (num_inst,
// sum_metric), cleared by ResetLocal() (e.g. every logging interval), and the global ones,
// cleared only by Reset(). Get() reads the local ones, GetGlobal() the global ones. A metric
// with no instances yet reads NaN.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hybridnet/ndarray.h"
#include "hybridnet/param.h"

namespace hybridnet {
/// Evaluation metrics (MXNet's mx.metric); see the file comment.
namespace metric {

/// One reading of a metric: its name ("accuracy", "top_k_accuracy_5") and value.
struct NameValue {
  std::string name;    ///< "accuracy", "top_k_accuracy_5", ...
  double value = 0.0;  ///< NaN before any instance
};

/// A pair of running sums: the value is usually sum_metric / num_inst.
struct Stats {
  double num_inst = 0.0;    ///< the instances counted
  double sum_metric = 0.0;  ///< the metric summed over them
};

/// A metric (MXNet's EvalMetric); make one with Create().
class EvalMetric {
 public:
  virtual ~EvalMetric() = default;

  /// Adds one batch: labels[i] goes with preds[i]. Throws kInvalidArgument / kShapeError naming
  /// the metric when the counts or shapes do not fit; nothing is added then.
  virtual void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) = 0;
  /// Clears the local and the global statistics.
  virtual void Reset();
  /// Clears the local statistics only.
  virtual void ResetLocal();
  /// The readings from the local statistics: one, or each child's for a composite.
  virtual std::vector<NameValue> Get() const;
  /// The readings from the global statistics.
  virtual std::vector<NameValue> GetGlobal() const;

  /// MXNet's class name: "Accuracy", "F1", "CompositeEvalMetric", ...
  virtual const char* kind() const = 0;
  /// The metric's name (its first reading's name).
  const std::string& name() const { return name_; }
  /// The local running sums (zero for a composite, whose children keep their own).
  const Stats& local() const { return local_; }
  /// The global running sums (zero for a composite).
  const Stats& global() const { return global_; }

 protected:
  /// A metric whose first reading is called `name`.
  explicit EvalMetric(std::string name) : name_(std::move(name)) {}
  /// The value read from `stats` (sum_metric / num_inst, NaN without instances).
  virtual double Value(const Stats& stats, bool global) const;
  /// Adds to both the local and the global sums.
  void Accumulate(double sum_metric, double num_inst);

  std::string name_;  ///< the first reading's name
  Stats local_;       ///< cleared by ResetLocal() and Reset()
  Stats global_;      ///< cleared by Reset() only
};

/// A list of metrics updated together (MXNet's CompositeEvalMetric).
class CompositeEvalMetric : public EvalMetric {
 public:
  /// An empty list named `name`.
  explicit CompositeEvalMetric(std::string name = "composite") : EvalMetric(std::move(name)) {}
  /// Appends a child; its readings follow the earlier children's.
  void Add(std::unique_ptr<EvalMetric> child);
  /// The number of children.
  size_t size() const { return children_.size(); }
  /// Child `i` (kInvalidArgument past the end).
  EvalMetric& child(size_t i);

  void Update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override;
  void Reset() override;
  void ResetLocal() override;
  std::vector<NameValue> Get() const override;
  std::vector<NameValue> GetGlobal() const override;
  const char* kind() const override { return "CompositeEvalMetric"; }

 private:
  std::vector<std::unique_ptr<EvalMetric>> children_;
};

/// A metric by MXNet's registry name or alias, case-insensitive ("accuracy"/"acc",
/// "top_k_accuracy", "f1", "mcc", "mae", "mse", "rmse", "ce", "nll_loss", "perplexity",
/// "pearsonr", "loss", "composite", ...), with MXNet's keyword arguments as text:
/// "name" for every metric, "axis" (Accuracy, Perplexity), "top_k" (TopKAccuracy), "average"
/// ("macro"/"micro": F1, MCC, PearsonCorrelation), "eps" (CrossEntropy, NegativeLogLikelihood),
/// "ignore_label" (Perplexity; "None" by default), "metrics" (composite: a comma-separated list
/// of names). Unknown names (kNotFound) and unknown or bad arguments (kInvalidArgument) throw,
/// listing what is accepted.
std::unique_ptr<EvalMetric> Create(const std::string& name, const AttrDict& args = {});

/// MXNet's class name a registry name or alias stands for ("acc" -> "Accuracy"); kNotFound as
/// Create() for an unknown one. The string is static.
const std::string& KindOf(const std::string& name);

/// Every name Create() accepts, class names and aliases, lower-case.
std::vector<std::string> MetricNames();

}  // namespace metric
}  // namespace hybridnet
