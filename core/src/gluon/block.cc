#include "hybridnet/gluon/block.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>

#include "gluon/block_calls.h"
#include "graph/naming.h"
#include "hybridnet/autograd.h"
#include "hybridnet/io/params.h"
#include "imperative/cached_op.h"
#include "imperative/tracing.h"

namespace hybridnet {
namespace gluon {

namespace {

bool AnySymbolic(const std::vector<NDArray>& xs) {
  return std::any_of(xs.begin(), xs.end(), [](const NDArray& x) { return x.is_symbolic(); });
}

std::string Indent(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

}  // namespace

}  // namespace gluon

namespace internal {

BlockCallObserver*& CurrentBlockCallObserver() {
  thread_local BlockCallObserver* observer = nullptr;
  return observer;
}

}  // namespace internal

namespace gluon {

// ---------------------------------------------------------------------------------------------
// Block

Block::Block(std::string alias, std::optional<std::string> prefix)
    : alias_(std::move(alias)), explicit_prefix_(std::move(prefix)) {}

Block::~Block() {
  for (auto& child : children_)
    if (child.second->parent_ == this) child.second->parent_ = nullptr;
}

const std::string& Block::prefix() {
  if (!named_) {
    if (parent_ != nullptr) {
      parent_->prefix();  // naming the parent names its children, this one included
    } else {
      AssignNames();
    }
  }
  return prefix_;
}

std::string Block::name() {
  const std::string& p = prefix();
  return !p.empty() && p.back() == '_' ? p.substr(0, p.size() - 1) : p;
}

void Block::AssignNames() {
  if (parent_ == nullptr) {
    // Top-level blocks share MXNet's process-wide name counters ("hybridsequential0_").
    prefix_ = explicit_prefix_ ? *explicit_prefix_ : ::hybridnet::internal::AutoName(alias_) + "_";
  } else {
    std::string local = explicit_prefix_.value_or("");
    if (!explicit_prefix_) {
      int count = parent_->child_counters_[alias_]++;
      local = alias_ + std::to_string(count) + "_";
    }
    prefix_ = parent_->prefix_ + local;
  }
  named_ = true;
  for (auto& child : children_)
    if (!child.second->named_) child.second->AssignNames();
}

void Block::NameInScope(Block* scope) {
  HN_CHECK(!named_, kInvalidArgument)
      << "block '" << prefix_ << "' is named already; name a block before its first use";
  HN_CHECK(scope != this, kInvalidArgument) << "a block cannot be named in its own scope";
  if (scope == nullptr) {
    prefix_ = explicit_prefix_ ? *explicit_prefix_ : ::hybridnet::internal::AutoName(alias_) + "_";
  } else {
    std::string local = explicit_prefix_.value_or("");
    if (!explicit_prefix_) local = alias_ + std::to_string(scope->child_counters_[alias_]++) + "_";
    prefix_ = scope->prefix() + local;
  }
  named_ = true;
  for (auto& child : children_)
    if (!child.second->named_) child.second->AssignNames();
}

void Block::AddChild(std::shared_ptr<Block> child, const std::string& name) {
  HN_CHECK(child != nullptr, kInvalidArgument) << "cannot add a null block";
  HN_CHECK(child.get() != this, kInvalidArgument) << "a block cannot be its own child";
  HN_CHECK(child->parent_ == nullptr, kInvalidArgument)
      << "block '" << child->alias_ << "' already has a parent";
  for (const Block* b = this; b != nullptr; b = b->parent_) {
    HN_CHECK(b != child.get(), kInvalidArgument)
        << "adding '" << child->alias_ << "' would make a cycle: it is an ancestor of this block";
  }
  child->parent_ = this;
  children_.emplace_back(name.empty() ? std::to_string(children_.size()) : name, child);
  if (named_ && !child->named_) child->AssignNames();
  ClearCache();
}

void Block::SetChild(const std::string& name, std::shared_ptr<Block> child) {
  auto named = [&](const auto& c) { return c.first == name; };
  auto old = std::find_if(children_.begin(), children_.end(), named);
  if (old != children_.end() && old->second == child) return;
  AddChild(std::move(child), name);  // checks the new child; appended last
  old = std::find_if(children_.begin(), children_.end(), named);
  if (old != children_.end() - 1) {  // replaced: the new child takes the old one's place
    old->second->parent_ = nullptr;
    old->second = children_.back().second;
    children_.pop_back();
  }
}

ParameterPtr Block::AddParameter(const std::string& local_name, const Shape& shape,
                                 InitializerPtr init, DType dtype, bool differentiable) {
  params_.push_back(
      std::make_shared<Parameter>(this, local_name, shape, dtype, std::move(init), differentiable));
  return params_.back();
}

ParameterDict Block::CollectParams(const std::string& select) {
  prefix();
  ParameterDict dict;
  std::set<const Parameter*> seen;
  std::optional<std::regex> pattern;
  if (!select.empty()) {
    try {
      pattern = std::regex(select);
    } catch (const std::regex_error& e) {
      HN_THROW(kInvalidArgument) << "CollectParams: invalid regex '" << select << "': " << e.what();
    }
  }
  std::function<void(Block*)> visit = [&](Block* b) {
    for (const auto& p : b->params_) {
      if (!seen.insert(p.get()).second) continue;
      if (!pattern || std::regex_match(p->name(), *pattern)) dict.Add(p);
    }
    for (auto& child : b->children_) visit(child.second.get());
  };
  visit(this);
  return dict;
}

void Block::Initialize(const InitializerPtr& init, bool force_reinit) {
  CollectParams().Initialize(init, force_reinit);
}

void Block::Cast(DType dtype) {
  ParameterDict params = CollectParams();
  for (const auto& param : params.list()) param->Cast(dtype);
  ClearCaches();
}

void Block::ClearCaches() {
  ClearCache();
  for (auto& child : children_) child.second->ClearCaches();
}

void Block::Hybridize(bool active, const HybridizeOptions& options) {
  for (auto& child : children_) child.second->Hybridize(active, options);
}

NDArray Block::operator()(const NDArray& x) {
  std::vector<NDArray> out = (*this)(std::vector<NDArray>{x});
  HN_CHECK(out.size() == 1, kInvalidArgument)
      << name() << " returned " << out.size() << " outputs; call it with a vector to get them all";
  return out[0];
}

std::vector<NDArray> Block::operator()(const std::vector<NDArray>& inputs) {
  prefix();
  std::vector<NDArray> outputs = Apply(inputs);
  if (auto* observer = ::hybridnet::internal::CurrentBlockCallObserver())
    observer->Called(*this, Describe(), alias_, params_, outputs);
  return outputs;
}

Symbol Block::operator()(const Symbol& x) {
  HN_CHECK(x.outputs.size() == 1, kInvalidArgument) << "pass a single-output symbol";
  return Symbol::Group(CallSymbolic({x}));
}

std::vector<Symbol> Block::CallSymbolic(const std::vector<Symbol>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    HN_CHECK(inputs[i].outputs.size() == 1, kInvalidArgument)
        << name() << ": input " << i << " is a symbol with " << inputs[i].outputs.size()
        << " outputs; pass single-output symbols";
  }
  return ApplySymbolic(inputs);
}

std::vector<NDArray> Block::Apply(const std::vector<NDArray>& inputs) { return RunForward(inputs); }

std::vector<Symbol> Block::ApplySymbolic(const std::vector<Symbol>&) {
  HN_THROW(kInvalidArgument) << name() << " is a plain Block: only HybridBlocks can run on symbols";
}

std::vector<NDArray> Block::RunForward(const std::vector<NDArray>& inputs) {
  ::hybridnet::internal::NameScope scope(prefix());
  return ForwardMany(inputs);
}

std::vector<NDArray> Block::ForwardMany(const std::vector<NDArray>& inputs) {
  HN_CHECK(inputs.size() == 1, kInvalidArgument)
      << name() << " takes one input, got " << inputs.size()
      << " (override ForwardMany for several)";
  return {Forward(inputs[0])};
}

NDArray Block::Forward(const NDArray&) {
  HN_THROW(kInvalidArgument) << name() << ": Forward is not implemented; override it";
}

void Block::CollectStructural(const std::string& path, std::map<std::string, ParameterPtr>* out) {
  for (const auto& p : params_) (*out)[path + p->local_name()] = p;
  for (auto& child : children_) child.second->CollectStructural(path + child.first + ".", out);
}

void Block::SaveParameters(const std::string& path) {
  std::map<std::string, ParameterPtr> structural;
  CollectStructural("", &structural);
  NDArrayList list;
  for (const auto& kv : structural) {
    list.names.push_back(kv.first);
    list.arrays.push_back(kv.second->data());
  }
  SaveNDArrayList(path, list);
}

void Block::LoadParameters(const std::string& path, bool allow_missing, bool ignore_extra) {
  SetParameters(LoadNDArrayList(path), "'" + path + "'", allow_missing, ignore_extra);
}

void Block::SetParameters(const NDArrayList& list, const std::string& source, bool allow_missing,
                          bool ignore_extra) {
  HN_CHECK(!list.names.empty() || list.arrays.empty(), kFormatError)
      << source << " holds unnamed arrays; a parameter file needs names";
  std::map<std::string, NDArray> loaded;
  bool structural_names = false;
  for (size_t i = 0; i < list.names.size(); ++i) {
    std::string key = list.names[i];
    if (key.rfind("arg:", 0) == 0 || key.rfind("aux:", 0) == 0) key = key.substr(4);
    structural_names = structural_names || key.find('.') != std::string::npos;
    loaded[key] = list.arrays[i];
  }
  // MXNet 1.9: files without any "." in their keys hold full (prefixed) parameter names.
  std::map<std::string, ParameterPtr> params;
  if (structural_names) {
    CollectStructural("", &params);
  } else {
    ParameterDict all = CollectParams();
    for (const auto& p : all.list()) params[p->name()] = p;
  }
  std::string known;
  for (const auto& kv : loaded) known += (known.empty() ? "" : ", ") + kv.first;
  for (const auto& kv : params) {
    auto it = loaded.find(kv.first);
    if (it == loaded.end()) {
      HN_CHECK(allow_missing, kNotFound) << "parameter '" << kv.first << "' is missing in "
                                         << source << ", which contains: " << known;
      continue;
    }
    kv.second->SetData(it->second);
  }
  if (!ignore_extra) {
    for (const auto& kv : loaded) {
      HN_CHECK(params.count(kv.first), kNotFound)
          << "parameter '" << kv.first << "' loaded from " << source
          << " is not present in this block (pass ignore_extra to skip it)";
    }
  }
}

std::string Block::ToString() {
  std::string s = Describe();
  if (children_.empty()) return s;
  s += "(\n";
  for (auto& child : children_)
    s += "  (" + child.first + "): " + Indent(child.second->ToString()) + "\n";
  return s + ")";
}

std::ostream& operator<<(std::ostream& os, Block& block) { return os << block.ToString(); }

// ---------------------------------------------------------------------------------------------
// HybridBlock

void HybridBlock::Hybridize(bool active, const HybridizeOptions& options) {
  HN_CHECK(!options.static_shape || options.static_alloc, kInvalidArgument)
      << "static_shape requires static_alloc, as in MXNet";
  active_ = active;
  options_ = options;
  ClearCache();
  Block::Hybridize(active, options);
}

std::vector<NDArray> HybridBlock::Apply(const std::vector<NDArray>& inputs) {
  if (AnySymbolic(inputs)) return RunForward(inputs);
  if (active_) {
    // While autograd records or trains, the traced graph runs in training mode and is recorded
    // as one node whose backward is its planned gradient graph (cached_op.h).
    if (autograd::IsRecording() || autograd::IsTraining()) return CallCachedTraining(inputs);
    return CallCached(inputs);
  }
  bool deferred = std::any_of(params_.begin(), params_.end(),
                              [](const ParameterPtr& p) { return p->is_deferred(); });
  if (deferred) DeferredInferShape(inputs);
  return RunForward(inputs);
}

std::vector<Symbol> HybridBlock::ApplySymbolic(const std::vector<Symbol>& inputs) {
  std::vector<NDArray> in;
  for (const Symbol& x : inputs) in.push_back(NDArray::FromEntry(x.outputs[0]));
  ::hybridnet::internal::TracingScope tracing;
  std::vector<NDArray> out = RunForward(in);
  std::vector<Symbol> result;
  for (const auto& y : out) {
    HN_CHECK(y.is_symbolic(), kUntraceable) << name() << ": forward returned a concrete array";
    Symbol s;
    s.outputs.push_back(y.entry());
    result.push_back(std::move(s));
  }
  return result;
}

void HybridBlock::ClearCache() {
  executor_.reset();
  cached_op_.reset();
  cached_params_.clear();
  cached_graph_ = Symbol();
  cached_num_inputs_ = 0;
}

NDArray HybridBlock::HybridForward(const F&, const NDArray&) {
  HN_THROW(kInvalidArgument) << name() << ": override Forward or HybridForward";
}

NDArray HybridBlock::Forward(const NDArray& x) { return HybridForward(F{x.is_symbolic()}, x); }

std::vector<std::string> HybridBlock::InputNames(size_t num_inputs) const {
  if (num_inputs == 1) return {"data"};
  std::vector<std::string> names;
  for (size_t i = 0; i < num_inputs; ++i) names.push_back("data" + std::to_string(i));
  return names;
}

Symbol HybridBlock::Trace(size_t num_inputs) {
  constexpr size_t kMaxInputs = 1024;
  HN_CHECK(num_inputs >= 1 && num_inputs <= kMaxInputs, kInvalidArgument)
      << name() << ": a forward takes 1 to " << kMaxInputs << " inputs, got " << num_inputs;
  std::vector<NDArray> inputs;
  for (const auto& n : InputNames(num_inputs))
    inputs.push_back(NDArray::FromEntry(Symbol::Var(n).outputs[0]));
  ::hybridnet::internal::TracingScope tracing;
  std::vector<NDArray> outputs = RunForward(inputs);
  Symbol graph;
  for (size_t i = 0; i < outputs.size(); ++i) {
    HN_CHECK(outputs[i].is_symbolic(), kUntraceable)
        << name() << ": output " << i << " of the forward is a concrete array, not computed from "
        << "the inputs; hybridize() can only record values derived from inputs and parameters";
    graph.outputs.push_back(outputs[i].entry());
  }
  return graph;
}

namespace {

// Parameters of the tree by full name, for matching graph variables.
std::map<std::string, ParameterPtr> ParamsByName(Block* block) {
  std::map<std::string, ParameterPtr> params;
  ParameterDict all = block->CollectParams();
  for (const auto& p : all.list()) params[p->name()] = p;
  return params;
}

// Completes parameter shapes from shape inference on `graph` with the given input shapes.
void CompleteShapes(const Symbol& graph, const std::vector<std::string>& data_names,
                    const std::vector<NDArray>& inputs,
                    const std::map<std::string, ParameterPtr>& params) {
  std::map<std::string, Shape> known;
  for (size_t i = 0; i < inputs.size(); ++i) known[data_names[i]] = inputs[i].shape();
  for (const auto& kv : params)
    if (kv.second->shape().IsKnown()) known[kv.first] = kv.second->shape();
  std::vector<std::string> names = graph.ListInputs();
  for (auto it = known.begin(); it != known.end();) {
    it = std::find(names.begin(), names.end(), it->first) == names.end() ? known.erase(it)
                                                                         : std::next(it);
  }
  auto r = graph.InferShape(known, /*partial=*/true);
  std::vector<std::string> args = graph.ListArguments(), auxs = graph.ListAuxiliaryStates();
  auto apply = [&](const std::vector<std::string>& n, const std::vector<Shape>& s) {
    for (size_t i = 0; i < n.size(); ++i) {
      auto it = params.find(n[i]);
      if (it != params.end() && s[i].ndim() > 0) it->second->SetShape(s[i]);
    }
  };
  apply(args, r.arg_shapes);
  apply(auxs, r.aux_shapes);
}

}  // namespace

void HybridBlock::DeferredInferShape(const std::vector<NDArray>& inputs) {
  Symbol graph = Trace(inputs.size());
  CompleteShapes(graph, InputNames(inputs.size()), inputs, ParamsByName(this));
}

void HybridBlock::TraceFor(const std::vector<NDArray>& inputs) {
  if (!cached_graph_.outputs.empty() && cached_num_inputs_ == inputs.size()) return;
  std::vector<std::string> data_names = InputNames(inputs.size());
  Symbol graph = Trace(inputs.size());
  std::map<std::string, ParameterPtr> params = ParamsByName(this);
  CompleteShapes(graph, data_names, inputs, params);
  std::vector<ParameterPtr> read;
  for (const auto& var : graph.ListInputs()) {
    if (std::find(data_names.begin(), data_names.end(), var) != data_names.end()) continue;
    auto it = params.find(var);
    HN_CHECK(it != params.end(), kNotFound)
        << name() << ": the traced graph reads '" << var
        << "', which is neither an input nor a parameter of this block";
    read.push_back(it->second);
  }
  executor_.reset();
  cached_op_.reset();
  cached_params_ = std::move(read);
  cached_graph_ = graph;
  cached_num_inputs_ = inputs.size();
}

std::vector<NDArray> HybridBlock::CallCached(const std::vector<NDArray>& inputs) {
  TraceFor(inputs);
  if (!executor_) {
    std::map<std::string, NDArray> values;
    for (const auto& p : cached_params_) values[p->name()] = p->data();
    executor_ = std::make_unique<GraphExecutor>(cached_graph_, InputNames(inputs.size()), values);
  }
  return executor_->Forward(inputs);
}

std::vector<NDArray> HybridBlock::CallCachedTraining(const std::vector<NDArray>& inputs) {
  TraceFor(inputs);
  if (!cached_op_) {
    std::vector<std::string> names = InputNames(inputs.size());
    for (const auto& p : cached_params_) names.push_back(p->name());
    cached_op_ = std::make_shared<::hybridnet::internal::CachedOp>(cached_graph_, names, name());
  }
  std::vector<NDArray> values = inputs;
  // Value() carries the parameter's place on the tape, made when recording first reads it.
  for (const auto& p : cached_params_) values.push_back(p->Value());
  return cached_op_->Run(values);
}

const Symbol& HybridBlock::CachedGraph() const {
  HN_CHECK(!cached_graph_.outputs.empty(), kInvalidArgument)
      << "no traced graph yet: call hybridize() and then run a forward once";
  return cached_graph_;
}

ExecutorStats HybridBlock::CachedStats() const {
  HN_CHECK(executor_ != nullptr, kInvalidArgument)
      << "no cached executor: hybridize() and run a forward";
  return executor_->stats();
}

TrainingStats HybridBlock::CachedTrainingStats() const {
  TrainingStats s;
  if (cached_op_) {
    s.num_gradient_graphs = cached_op_->num_gradient_graphs();
    s.num_forward_plans = cached_op_->num_forward_plans();
    s.num_backward_plans = cached_op_->num_backward_plans();
  }
  return s;
}

void HybridBlock::Export(const std::string& path_prefix, int epoch) {
  HN_CHECK(!cached_graph_.outputs.empty(), kInvalidArgument)
      << "export needs a traced graph: call hybridize() and then run a forward at least once "
         "before export()";
  HN_CHECK(epoch >= 0, kInvalidArgument) << "epoch must be >= 0, got " << epoch;
  const Symbol& graph = cached_graph_;
  graph.Save(path_prefix + "-symbol.json");
  std::map<std::string, ParameterPtr> params = ParamsByName(this);
  std::vector<std::string> data_names = InputNames(cached_num_inputs_);
  std::vector<std::string> auxs = graph.ListAuxiliaryStates();
  NDArrayList list;
  for (const auto& var : graph.ListInputs()) {
    if (std::find(data_names.begin(), data_names.end(), var) != data_names.end()) continue;
    bool aux = std::find(auxs.begin(), auxs.end(), var) != auxs.end();
    list.names.push_back((aux ? "aux:" : "arg:") + var);
    list.arrays.push_back(params.at(var)->data());
  }
  char epoch_text[16];
  std::snprintf(epoch_text, sizeof(epoch_text), "%04d", epoch);
  SaveNDArrayList(path_prefix + "-" + epoch_text + ".params", list);
}

}  // namespace gluon
}  // namespace hybridnet
