// Optimizers and learning-rate schedulers with MXNet 1.9.1's semantics (mx.optimizer,
// mx.lr_scheduler).
//
//   auto opt = optimizer::Optimizer::Create("sgd", {{"learning_rate", "0.1"},
//                                                   {"momentum", "0.9"}, {"wd", "1e-4"}});
//   std::vector<NDArray> state = opt->CreateState(0, weight);   // {momentum}
//   opt->Update(0, &weight, grad, &state);                       // sgd_mom_update in place
//
// Hyper-parameters are MXNet's keyword arguments written as strings ("0.9", "True", "None"), so
// a binding or a .states file passes them through unchanged. Each optimizer runs the fused update
// op MXNet's Python optimizer calls (sgd_mom_update, adam_update, ...) or, where MXNet computes
// with plain NDArray arithmetic (AdaDelta, Adamax, Nadam, dense AdaGrad), the same arithmetic in
// the same order.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/ndarray.h"

namespace hybridnet {
/// Optimizers and learning-rate schedulers (MXNet's mx.optimizer and mx.lr_scheduler).
namespace optimizer {

/// Keyword arguments as (name, value) strings, in the order given.
using KeywordArgs = std::vector<std::pair<std::string, std::string>>;

/// MXNet's mx.lr_scheduler.LRScheduler: the learning rate at an update count. Schedulers keep
/// state between calls (FactorScheduler lowers base_lr as counts pass its steps), as MXNet's do,
/// so calls must come with non-decreasing counts.
class LRScheduler {
 public:
  /// "factor", "multifactor", "poly", "cosine" (MXNet's class names, case-insensitive, with or
  /// without the "Scheduler" suffix) with MXNet's constructor keywords ("step", "factor",
  /// "stop_factor_lr", "base_lr", "warmup_steps", "warmup_begin_lr", "warmup_mode", "max_update",
  /// "pwr", "final_lr"; "step" of multifactor is a list "[10, 20]"). Unknown name or keyword, or
  /// a value MXNet rejects (step < 1, factor > 1, warmup_mode other than linear/constant):
  /// kNotFound or kInvalidArgument naming it and listing the accepted ones.
  static std::shared_ptr<LRScheduler> Create(const std::string& name, const KeywordArgs& params);
  /// The scheduler an MXNet pickle holds: `class_name` ("FactorScheduler") and its attributes
  /// as Params() gives them (Python literals), so the rate it returns next is the one the saved
  /// scheduler would have returned (a .states file): made with the constructor keywords those
  /// attributes keep, then given the ones that change as it runs (SetAttribute). Missing or
  /// malformed attributes:
  /// kInvalidArgument naming them.
  static std::shared_ptr<LRScheduler> Restore(const std::string& class_name,
                                              const KeywordArgs& attributes);
  virtual ~LRScheduler();

  /// The learning rate for update count `num_update` (MXNet's __call__).
  virtual float operator()(int num_update) = 0;

  /// MXNet's class name: "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
  /// "CosineScheduler".
  virtual const char* class_name() const = 0;
  /// The learning rate after warmup; an optimizer created with a learning_rate sets it.
  double base_lr() const { return base_lr_; }
  /// Sets base_lr (as MXNet's optimizer does with its learning_rate).
  void set_base_lr(double base_lr) { base_lr_ = base_lr; }
  /// The attributes with their current values, by MXNet's attribute names (what MXNet pickles:
  /// base_lr, warmup_steps, warmup_begin_lr, warmup_final_lr, warmup_mode, and each scheduler's
  /// own, e.g. FactorScheduler's step, factor, stop_factor_lr, count), as Python literals.
  virtual KeywordArgs Params() const = 0;
  /// Restores an attribute of Params() that changes as the schedule runs (loading a .states
  /// file): "base_lr", and "count" / "cur_step_ind" of the factor schedulers; `value` a Python
  /// literal. Any other name: kInvalidArgument listing the accepted ones.
  void SetAttribute(const std::string& name, const std::string& value);

 protected:
  /// MXNet's LRScheduler.__init__; errors as Create.
  LRScheduler(double base_lr, int warmup_steps, double warmup_begin_lr, std::string warmup_mode);
  /// The warmup learning rate at `num_update` (< warmup_steps).
  double WarmupLr(int num_update) const;
  /// Params() of the base class, for the subclasses' Params().
  KeywordArgs BaseParams() const;
  /// Restores one of the scheduler's own changing attributes (SetAttribute); false: not one.
  virtual bool SetOwnAttribute(const std::string& name, const std::string& value);
  /// The names SetOwnAttribute takes, for error messages.
  virtual std::vector<std::string> OwnAttributes() const { return {}; }

  double base_lr_;           ///< MXNet's base_lr (changed by the schedule and by optimizers)
  int warmup_steps_;         ///< updates of warmup
  double warmup_begin_lr_;   ///< the rate warmup starts from
  double warmup_final_lr_;   ///< the rate warmup ends at (base_lr when constructed)
  std::string warmup_mode_;  ///< "linear" or "constant"
};

/// MXNet's mx.optimizer.Optimizer: hyper-parameters by MXNet's keyword names, the per-index update
/// counts, lr/wd multipliers by index and the scheduler. Not thread-safe.
class Optimizer {
 public:
  /// MXNet's registry names, case-insensitive: "sgd", "nag", "adam", "adamax", "nadam",
  /// "rmsprop", "adagrad", "adadelta", "signum", "ftml", "ftrl", "lamb", "lars", "dcasgd",
  /// "sgld", "ccsgd", "test". `params` are MXNet's keyword arguments as strings
  /// ("learning_rate", "wd", "rescale_grad", "clip_gradient", "multi_precision",
  /// "begin_num_update", "momentum", "lazy_update", "beta1", ...; the scheduler is set with
  /// set_lr_scheduler). Unknown name: kNotFound listing the names; unknown keyword or bad value:
  /// kInvalidArgument naming it and listing the optimizer's keywords.
  static std::unique_ptr<Optimizer> Create(const std::string& name, const KeywordArgs& params);
  /// The registry's names, sorted.
  static std::vector<std::string> Names();
  /// The optimizer an MXNet pickle holds (a .states file): `class_name` ("Adam") and its
  /// attributes as Python literals, by MXNet's attribute names (lr, float_stable_eps, ...;
  /// attributes that are not plain values may be left out): made with the constructor keywords
  /// those attributes keep, then given its own attributes that change as it runs
  /// (SetAttribute: Nadam's m_schedule, LARS's last rates). Update counts and the scheduler are set
  /// separately (SetUpdateCounts, set_lr_scheduler). An unknown class or a missing attribute:
  /// kInvalidArgument naming it.
  static std::unique_ptr<Optimizer> Restore(const std::string& class_name,
                                            const KeywordArgs& attributes);
  virtual ~Optimizer();

  /// The registry name ("sgd").
  const std::string& name() const { return name_; }

  /// The state MXNet's create_state_multi_precision makes for this weight, flattened in MXNet's
  /// order with None left out: SGD with momentum {mom}, without {}; Adam {mean, var}; with
  /// multi_precision and a float16 weight, SGD/NAG/LARS {mom, weight32} (MXNet's tuple is
  /// (mom, weight32)) and the others {weight32, their float32 states}. StateStructure() gives
  /// MXNet's nesting.
  std::vector<NDArray> CreateState(int index, const NDArray& weight);
  /// How MXNet nests CreateState(index, weight)'s arrays (what its .states pickle holds), as a
  /// Python literal whose integers are positions in that vector: "None", "0" (a bare array, as
  /// AdaGrad's history), "(0,)", "(0, 1)", "(None, 0)" (SGD without momentum, multi_precision),
  /// "(0, (1, 2))" (Adam, multi_precision).
  std::string StateStructure(const NDArray& weight) const;

  /// One update of weight `index` in place, as MXNet's update_multi_precision: counts the update
  /// for `index` (num_update becomes the largest count), takes the learning rate from the
  /// scheduler at num_update, scales it and wd by the index's lr_mult/wd_mult, and runs the
  /// update. `state` is what CreateState made for this weight. Shapes or dtypes that do not fit:
  /// kShapeError/kTypeError naming the index.
  void Update(int index, NDArray* weight, const NDArray& grad, std::vector<NDArray>* state);
  /// Several weights at once, as MXNet's Updater called with lists (what gluon.Trainer does):
  /// the optimizers MXNet aggregates (SGD, LARS, LAMB) update the weights of one dtype in groups
  /// of aggregate_num with their multi-weight ops; the others update one weight at a time.
  void UpdateMany(const std::vector<int>& indices, const std::vector<NDArray*>& weights,
                  const std::vector<NDArray>& grads,
                  const std::vector<std::vector<NDArray>*>& states);

  /// The learning rate: the scheduler's at num_update when one is set, else learning_rate.
  float learning_rate() const;
  /// Sets learning_rate; kInvalidArgument when a scheduler is set (as MXNet).
  void set_learning_rate(float lr);
  /// Sets the scheduler; its base_lr becomes learning_rate when one was given to Create (as
  /// MXNet's constructor). nullptr removes it.
  void set_lr_scheduler(std::shared_ptr<LRScheduler> scheduler);
  /// The scheduler, or nullptr.
  const std::shared_ptr<LRScheduler>& lr_scheduler() const { return lr_scheduler_; }

  /// The factor gradients are multiplied by first (MXNet's rescale_grad).
  float rescale_grad() const { return static_cast<float>(rescale_grad_); }
  /// Sets rescale_grad (gluon.Trainer sets scale / batch_size before each step).
  void set_rescale_grad(float rescale_grad) { rescale_grad_ = rescale_grad; }
  /// The weight decay before wd_mult.
  float wd() const { return static_cast<float>(wd_); }

  /// Per-index multipliers of the learning rate and the weight decay (the Trainer maps parameter
  /// names to indices); an index not in the map has 1. Each call replaces the whole map.
  void set_lr_mult(std::map<int, float> lr_mult) { lr_mult_ = std::move(lr_mult); }
  /// Sets the weight-decay multipliers by index (see set_lr_mult).
  void set_wd_mult(std::map<int, float> wd_mult) { wd_mult_ = std::move(wd_mult); }
  /// The learning-rate multipliers by index.
  const std::map<int, float>& lr_mult() const { return lr_mult_; }
  /// The weight-decay multipliers by index.
  const std::map<int, float>& wd_mult() const { return wd_mult_; }

  /// The largest update count of any index, and the count of each index (what MXNet pickles as
  /// num_update and _index_update_count).
  int num_update() const { return num_update_; }
  /// The update count of each index updated so far.
  const std::map<int, int>& index_update_count() const { return index_update_count_; }
  /// Restores the counts (loading a .states file).
  void SetUpdateCounts(int num_update, std::map<int, int> index_update_count);
  /// Restores an attribute of Params() that changes during training (loading a .states file):
  /// "lr" (a number; "None" is refused), "num_update", and the optimizer's own: Nadam's
  /// "m_schedule", LARS's "last_lr" and "cur_lr" ("None" allowed). `value` is a Python literal;
  /// any other name: kInvalidArgument listing the accepted ones.
  void SetAttribute(const std::string& name, const std::string& value);

  /// The hyper-parameters with their current values as Python literals, by MXNet's attribute
  /// names (rescale_grad, lr, wd, clip_gradient, multi_precision, begin_num_update,
  /// aggregate_num, then the optimizer's own: momentum, lazy_update, beta1, ...), for the
  /// .states writer and printing.
  KeywordArgs Params() const;
  /// MXNet's class name ("SGD", "Adam", "RMSProp").
  const std::string& class_name() const { return class_name_; }

 protected:
  /// One weight's update, counts done: what MXNet's update(_multi_precision) is given.
  struct Step {
    int index;                     ///< the weight's index
    NDArray* weight;               ///< updated in place (the float16 one under fused mp)
    NDArray grad;                  ///< float32 under unfused multi_precision
    std::vector<NDArray*> states;  ///< the optimizer's own states, master copy excluded
    NDArray* weight32;             ///< the master copy under fused multi_precision, else null
    double lr;                     ///< scaled by the index's lr_mult
    double wd;                     ///< scaled by the index's wd_mult
    int t;                         ///< the index's update count
  };

  /// Made by Create only.
  Optimizer() = default;

  /// MXNet's create_state for a weight of this dtype: the arrays in order, None left out.
  virtual std::vector<NDArray> CreateBaseState(const NDArray& weight) const = 0;
  /// MXNet's nesting of CreateBaseState's arrays numbered from `first` ("None", "0", "(0, 1)").
  virtual std::string BaseStateStructure(int first) const = 0;
  /// Whether MXNet puts the master copy after the states (SGD, NAG, LARS: (state, weight32)).
  virtual bool MasterCopyLast() const { return false; }
  /// Whether the update takes a float16 weight with its master copy itself (the mp_ ops);
  /// otherwise the float32 update runs on the copy, which is then cast to the weight.
  virtual bool FusedMultiPrecision() const { return false; }
  /// The learning rate before lr_mult (MXNet's _get_lrs): the scheduler's at num_update or lr.
  virtual double BaseLearningRate();
  /// Runs the updates of one call: one step, or a group of aggregate_num of one dtype.
  virtual void Apply(std::vector<Step>* steps) = 0;
  /// The optimizer's own attributes with their values (Params() after the common ones).
  virtual KeywordArgs OwnParams() const = 0;
  /// Restores one of the optimizer's own changing attributes (SetAttribute); false: not one.
  virtual bool SetOwnAttribute(const std::string& name, const std::string& value);
  /// The names SetOwnAttribute takes, for error messages.
  virtual std::vector<std::string> OwnAttributes() const { return {}; }

  std::string name_;                      ///< the registry name
  std::string class_name_;                ///< MXNet's class name
  double rescale_grad_ = 1.0;             ///< MXNet's rescale_grad
  double lr_ = 0.01;                      ///< MXNet's lr (used without a scheduler)
  std::optional<double> constructor_lr_;  ///< learning_rate given to MXNet's base constructor
  double wd_ = 0.0;                       ///< MXNet's wd
  std::optional<double> clip_gradient_;   ///< MXNet's clip_gradient (None: std::nullopt)
  bool multi_precision_ = false;          ///< MXNet's multi_precision
  int begin_num_update_ = 0;              ///< the count an index starts from
  int num_update_ = 0;                    ///< the largest count of any index
  int aggregate_num_ = 0;                 ///< weights per call of a list update (0: one by one)
  bool count_group_first_ = false;        ///< SGD, LARS: a group's counts all precede its rate
  bool counts_updates_ = true;  ///< false for MXNet's Test optimizer, which counts nothing
  bool list_call_ = false;      ///< the update under way came as a list (UpdateMany)
  std::map<int, int> index_update_count_;      ///< the update count of each index
  std::map<int, float> lr_mult_;               ///< learning-rate multipliers by index
  std::map<int, float> wd_mult_;               ///< weight-decay multipliers by index
  std::shared_ptr<LRScheduler> lr_scheduler_;  ///< the scheduler, or nullptr

 private:
  friend class OptimizerFactory;
  void RunGroup(const std::vector<int>& indices, const std::vector<NDArray*>& weights,
                const std::vector<NDArray>& grads,
                const std::vector<std::vector<NDArray>*>& states);
};

}  // namespace optimizer
}  // namespace hybridnet
