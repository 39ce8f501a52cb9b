// Gluon-style blocks: write a model imperatively, then hybridize() it.
//
//   auto net = std::make_shared<HybridSequential>();
//   net->Add(std::make_shared<Dense>(256, "relu"), std::make_shared<Dense>(128, "relu"),
//            std::make_shared<Dense>(2));
//   net->Initialize();
//   NDArray y = (*net)(x);     // eager: every op runs now
//   net->Hybridize();
//   y = (*net)(x);             // traced once into a graph, then the cached executor runs
//   net->Export("my_mlp");     // my_mlp-symbol.json + my_mlp-0000.params (MXNet 1.x format)
//
// Under autograd::Record() (or TrainMode) a hybridized block runs its traced graph in training
// mode, and a recorded call is one node of the tape whose backward is the planned gradient graph,
// built once: the gradients are those of the unhybridized block, bit for bit. Parameters take
// part through Parameter::AttachGrad (grad_req write, add or null).
//
// A custom block overrides Forward (ordinary C++ over hybridnet::op functions); the MXNet
// spelling HybridForward(F, x) is offered too. Names follow MXNet 1.x: a block's prefix is its
// parent's prefix + alias + a per-parent counter ("hybridsequential0_dense0_"), assigned when the
// tree is first used.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "hybridnet/executor.h"
#include "hybridnet/gluon/parameter.h"
#include "hybridnet/io/params.h"
#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"

namespace hybridnet {
/// MXNet gluon's blocks, layers, parameters, initializers and model zoo.
namespace gluon {

/// MXNet's hybridize() keyword arguments.
struct HybridizeOptions {
  bool static_alloc = false;  ///< accepted as in MXNet; our executor always keeps its memory plan
  bool static_shape = false;  ///< requires static_alloc, as in MXNet
};

class HybridBlock;

}  // namespace gluon
namespace internal {
class CachedOp;  // imperative/cached_op.h
}  // namespace internal
namespace gluon {

/// The training graphs of a hybridized block (for tests and benchmarks).
struct TrainingStats {
  size_t num_gradient_graphs = 0;  ///< forward+backward graphs built (gradient pass runs)
  size_t num_forward_plans = 0;    ///< plans of the training forwards (one per input shape)
  size_t num_backward_plans = 0;   ///< plans of the backwards (one per input shape)
};

/// A model or a part of one, as MXNet gluon's Block: children, parameters and a forward. Override
/// Forward or ForwardMany; see the file comment.
class Block {
 public:
  /// `alias` names the class in prefixes ("dense"); `prefix` overrides the automatic prefix
  /// ("" adds nothing, as MXNet's prefix='').
  explicit Block(std::string alias, std::optional<std::string> prefix = std::nullopt);
  virtual ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  /// "hybridsequential0_"; assigns the names of this tree on first use.
  const std::string& prefix();
  /// The prefix without its trailing underscore.
  std::string name();
  /// Names this block now, as MXNet 1.x names a block when it is constructed: inside the
  /// name_scope of `scope` its prefix is scope's prefix + (its explicit prefix, or its alias and a
  /// counter of scope: "hybridsequential0_dense1_"); outside any scope (nullptr) its explicit
  /// prefix, or a process-wide "<alias><n>_". The name stays when the block is added to a
  /// container later. Blocks not named this way are named at first use from their parent.
  void NameInScope(Block* scope);

  /// Registers a child under `name` (its structural name in save_parameters files).
  template <typename T>
  std::shared_ptr<T> RegisterChild(std::shared_ptr<T> child, const std::string& name = "") {
    AddChild(child, name);
    return child;
  }
  /// The children in order, with their structural names.
  const std::vector<std::pair<std::string, std::shared_ptr<Block>>>& children() const {
    return children_;
  }

  /// This block's and its descendants' parameters by full name; `select` is a regex on names.
  ParameterDict CollectParams(const std::string& select = "");
  /// Initializes every parameter (deferred where shapes are still unknown).
  void Initialize(const InitializerPtr& init = Uniform(), bool force_reinit = false);

  /// Casts every parameter of this tree to `dtype` (MXNet's Block.cast) and drops the traced
  /// graphs, which hold the old arrays.
  void Cast(DType dtype);
  /// Drops the traced graphs of this tree, which hold the parameters' arrays: run after a
  /// parameter gets new storage (Parameter::Cast); the next hybridized call traces again.
  void ClearCaches();

  /// Hybridizes the HybridBlocks in this tree (a plain Block only passes the call on).
  virtual void Hybridize(bool active = true, const HybridizeOptions& options = {});

  /// Runs the block on one input and returns its only output (kInvalidArgument when it has more).
  /// Names the tree on first use.
  NDArray operator()(const NDArray& x);
  /// Runs the block on several inputs and returns every output; a hybridized HybridBlock runs its
  /// cached graph.
  std::vector<NDArray> operator()(const std::vector<NDArray>& inputs);
  /// Feeds symbols: returns the symbolic program (HybridBlocks only).
  Symbol operator()(const Symbol& x);
  /// Feeds one single-output symbol per input: one symbol per output (HybridBlocks only).
  std::vector<Symbol> CallSymbolic(const std::vector<Symbol>& inputs);

  /// This block as a HybridBlock, or nullptr for a plain Block.
  virtual HybridBlock* AsHybrid() { return nullptr; }

  /// The forward computation: override Forward (one input, one output), or ForwardMany for
  /// several inputs or outputs (its default calls Forward).
  virtual NDArray Forward(const NDArray& x);
  /// The forward for several inputs or outputs; the default passes its single input to Forward
  /// (kInvalidArgument for more).
  virtual std::vector<NDArray> ForwardMany(const std::vector<NDArray>& inputs);

  /// MXNet 1.9 save_parameters: structural names ("0.weight", "fc1.bias").
  void SaveParameters(const std::string& path);
  /// Loads a save_parameters file (or an export's params with "arg:"/"aux:" keys). Errors name
  /// missing, extra and mis-shaped parameters unless allowed.
  void LoadParameters(const std::string& path, bool allow_missing = false,
                      bool ignore_extra = false);
  /// The same from arrays in memory (names as in a file); `source` names them in errors.
  void SetParameters(const NDArrayList& list, const std::string& source, bool allow_missing = false,
                     bool ignore_extra = false);

  /// MXNet-style description, e.g. "Dense(512 -> 256, Activation(relu))".
  virtual std::string ToString();

 protected:
  /// Declares a parameter of this block ("weight", shape with 0 = unknown).
  ParameterPtr AddParameter(const std::string& local_name, const Shape& shape,
                            InitializerPtr init = nullptr, DType dtype = DType::kFloat32,
                            bool differentiable = true);
  /// The parameters this block declared itself (not its children's).
  const std::vector<ParameterPtr>& own_params() const { return params_; }
  /// Runs the block's own forward (no caching): used by every call path.
  std::vector<NDArray> RunForward(const std::vector<NDArray>& inputs);
  /// What operator() does with concrete or symbolic inputs: a plain Block runs its forward; a
  /// HybridBlock may run its cached graph instead.
  virtual std::vector<NDArray> Apply(const std::vector<NDArray>& inputs);
  /// What operator()(Symbol) and CallSymbolic do (one single-output symbol per input, one
  /// symbol per output): only HybridBlocks can be traced.
  virtual std::vector<Symbol> ApplySymbolic(const std::vector<Symbol>& inputs);
  /// Drops what was derived from the tree (a HybridBlock's traced graph); run when it changes.
  virtual void ClearCache() {}
  /// Structural parameter names of this subtree ("0.weight").
  void CollectStructural(const std::string& path, std::map<std::string, ParameterPtr>* out);
  /// The first line of ToString() (children are listed below it): the alias unless overridden.
  virtual std::string Describe() { return alias_; }

  /// Appends `child` under `name` ("" = its position). kInvalidArgument for null, a block that
  /// has a parent already, or a cycle; names the child now when this block is named.
  void AddChild(std::shared_ptr<Block> child, const std::string& name);
  /// Adds the child `name`, or replaces the child of that name in its place.
  void SetChild(const std::string& name, std::shared_ptr<Block> child);
  /// Computes this block's prefix from its parent's (or the process-wide counters at the top), then
  /// names the unnamed children.
  void AssignNames();

  friend class Parameter;
  /// The class's prefix alias ("dense").
  std::string alias_;
  /// The prefix given to the constructor, if any.
  std::optional<std::string> explicit_prefix_;
  /// The assigned prefix ("hybridsequential0_dense0_"); valid once named_.
  std::string prefix_;
  /// Whether the prefix has been assigned.
  bool named_ = false;
  /// The container holding this block (not owning), or nullptr.
  Block* parent_ = nullptr;
  /// Per-alias counters of the children named so far ("dense" -> 2: dense0_ and dense1_ taken).
  std::map<std::string, int> child_counters_;
  /// The children with their structural names.
  std::vector<std::pair<std::string, std::shared_ptr<Block>>> children_;
  /// The parameters declared by AddParameter.
  std::vector<ParameterPtr> params_;
};

/// A block that can be traced into a graph.
class HybridBlock : public Block {
 public:
  using Block::Block;
  using Block::operator();

  void Hybridize(bool active = true, const HybridizeOptions& options = {}) override;
  /// Whether calls run the cached graph (Hybridize(true)).
  bool is_hybridized() const { return active_; }
  HybridBlock* AsHybrid() override { return this; }

  /// The MXNet spelling: F is "ndarray" in eager mode and "symbol" while tracing (print it to
  /// see which); the hybridnet::op functions work in both.
  struct F {
    /// True while tracing.
    bool symbolic;
    /// "hybridnet.symbol" while tracing, else "hybridnet.ndarray".
    const char* name() const { return symbolic ? "hybridnet.symbol" : "hybridnet.ndarray"; }
  };
  /// The forward in MXNet's spelling; the default Forward calls it. Override one of the two.
  virtual NDArray HybridForward(const F& f, const NDArray& x);
  NDArray Forward(const NDArray& x) override;

  /// Writes PREFIX-symbol.json and PREFIX-%04d.params as MXNet 1.9's export does. Needs a
  /// traced graph: hybridize() and one forward first.
  void Export(const std::string& path_prefix, int epoch = 0);
  /// The traced graph (after hybridize() and a forward), else an error.
  const Symbol& CachedGraph() const;
  /// Traces the forward with symbolic inputs named InputNames(num_inputs).
  virtual Symbol Trace(size_t num_inputs);
  /// Names of the graph's data variables: "data", or "data0", "data1", ... for several.
  virtual std::vector<std::string> InputNames(size_t num_inputs) const;
  /// Statistics of the cached executor (for tests and benchmarks).
  ExecutorStats CachedStats() const;
  /// Statistics of the training graphs (calls under autograd recording or train mode).
  TrainingStats CachedTrainingStats() const;

 protected:
  std::vector<NDArray> Apply(const std::vector<NDArray>& inputs) override;
  std::vector<Symbol> ApplySymbolic(const std::vector<Symbol>& inputs) override;
  void ClearCache() override;
  /// Runs the cached executor; traces and plans first when there is none yet or the input count
  /// changed.
  std::vector<NDArray> CallCached(const std::vector<NDArray>& inputs);
  /// Completes deferred parameter shapes from the input shapes by tracing once.
  void DeferredInferShape(const std::vector<NDArray>& inputs);

  /// Set by Hybridize: calls go through the cached graph.
  bool active_ = false;
  /// The options of the last Hybridize call.
  HybridizeOptions options_;
  /// The traced graph (empty until the first hybridized call).
  Symbol cached_graph_;
  /// The input count the cached graph was traced for.
  size_t cached_num_inputs_ = 0;
  /// The executor running cached_graph_.
  std::unique_ptr<GraphExecutor> executor_;
  /// Runs cached_graph_ under autograd recording or train mode: one forward+backward graph,
  /// recorded on the tape as one node.
  std::shared_ptr<::hybridnet::internal::CachedOp> cached_op_;
  /// The parameters cached_graph_ reads, in the order of its variables after the data inputs.
  std::vector<ParameterPtr> cached_params_;

  /// Traces the forward for this input count unless traced already; completes deferred shapes.
  void TraceFor(const std::vector<NDArray>& inputs);
  /// Runs the cached graph in training mode or under recording (see cached_op_).
  std::vector<NDArray> CallCachedTraining(const std::vector<NDArray>& inputs);
};

/// Runs its children one after another (shared by Sequential and HybridSequential).
template <typename Base>
class SequentialOf : public Base {
 public:
  /// `alias` names the prefixes, `class_name` is what ToString() prints.
  SequentialOf(std::string alias, std::string class_name, std::optional<std::string> prefix)
      : Base(std::move(alias), std::move(prefix)), class_name_(std::move(class_name)) {}

  /// Adds children in order; their structural names are "0", "1", ...
  template <typename... Blocks>
  void Add(Blocks... blocks) {
    (this->AddChild(std::move(blocks), std::to_string(this->children_.size())), ...);
  }
  /// Feeds the inputs to the first child, its outputs to the next, and so on.
  std::vector<NDArray> ForwardMany(const std::vector<NDArray>& inputs) override {
    std::vector<NDArray> x = inputs;
    for (auto& child : this->children_) x = (*child.second)(x);
    return x;
  }
  /// The number of children.
  size_t size() const { return this->children_.size(); }
  /// The child at position `i` (std::out_of_range past the end).
  std::shared_ptr<Block> operator[](size_t i) const { return this->children_.at(i).second; }

 protected:
  /// The class name ("HybridSequential").
  std::string Describe() override { return class_name_; }

 private:
  std::string class_name_;
};

/// MXNet's gluon.nn.Sequential: children run in order, not hybridizable as a whole.
class Sequential : public SequentialOf<Block> {
 public:
  /// An empty container; `prefix` as in Block's constructor.
  explicit Sequential(std::optional<std::string> prefix = std::nullopt)
      : SequentialOf("sequential", "Sequential", std::move(prefix)) {}
};

/// MXNet's gluon.nn.HybridSequential: children (HybridBlocks) run in order; hybridizable.
class HybridSequential : public SequentialOf<HybridBlock> {
 public:
  /// An empty container; `prefix` as in Block's constructor.
  explicit HybridSequential(std::optional<std::string> prefix = std::nullopt)
      : SequentialOf("hybridsequential", "HybridSequential", std::move(prefix)) {}
};

/// Prints block.ToString().
std::ostream& operator<<(std::ostream& os, Block& block);

}  // namespace gluon
}  // namespace hybridnet
