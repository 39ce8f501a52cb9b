#include "hybridnet/gluon/trainer.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "imperative/autograd_tape.h"
#include "io/params_record.h"
#include "io/pickle.h"
#include "optimizer/keywords.h"

namespace hybridnet {
namespace gluon {
namespace {

namespace pickle = ::hybridnet::internal::pickle;
using pickle::Value;
using pickle::ValuePtr;
using Kind = pickle::Value::Kind;

// Where MXNet 1.9.1 defines what a .states file pickles.
constexpr const char* kNDArrayModule = "mxnet.ndarray.ndarray";
constexpr const char* kOptimizerModule = "mxnet.optimizer.optimizer";
constexpr const char* kSchedulerModule = "mxnet.lr_scheduler";

// Python's value of a literal the optimizer gives (Optimizer::Params: "0.9", "True", "None",
// "'linear'", "[10, 20]"), as a pickle value.
class LiteralParser {
 public:
  explicit LiteralParser(const std::string& text) : text_(text) {}

  ValuePtr Parse() {
    ValuePtr v = Next();
    Skip();
    HN_CHECK(pos_ == text_.size(), kInternal) << "unparsed literal '" << text_ << "'";
    return v;
  }

 private:
  const std::string& text_;
  size_t pos_ = 0;

  void Skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Eat(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  ValuePtr Next() {
    Skip();
    HN_CHECK(pos_ < text_.size(), kInternal) << "truncated literal '" << text_ << "'";
    char c = text_[pos_];
    if (c == '(' || c == '[') {
      ++pos_;
      char close = c == '(' ? ')' : ']';
      std::vector<ValuePtr> items;
      while (!Eat(close)) {
        items.push_back(Next());
        Eat(',');
      }
      return c == '(' ? Value::Tuple(std::move(items)) : Value::List(std::move(items));
    }
    if (c == '\'' || c == '"') {
      std::string s;
      for (++pos_; pos_ < text_.size() && text_[pos_] != c; ++pos_) {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
        s += text_[pos_];
      }
      ++pos_;
      return Value::Str(s);
    }
    size_t end = text_.find_first_of(",)] ", pos_);
    std::string word =
        text_.substr(pos_, end == std::string::npos ? std::string::npos : end - pos_);
    pos_ += word.size();
    if (word == "None") return Value::None();
    if (word == "True" || word == "False") return Value::Bool(word == "True");
    if (word.find_first_of(".eEni") == std::string::npos) return Value::Int(std::stoll(word));
    return Value::Float(std::stod(word));
  }
};

ValuePtr FromLiteral(const std::string& text) { return LiteralParser(text).Parse(); }

// MXNet pickles an NDArray as NDArray(None) whose state holds its raw-bytes record.
ValuePtr PickledArray(const NDArray& a, const std::string& label) {
  ValuePtr record = Value::Object(
      "builtins", "bytearray",
      Value::Tuple({Value::Bytes(internal::SerializeNDArrayRecord(a, label))}), nullptr, false);
  return Value::Object(kNDArrayModule, "NDArray", Value::Tuple({Value::None()}),
                       Value::Dict({{Value::Str("handle"), record}}), false);
}

NDArray UnpickledArray(const Value& v, const std::string& where) {
  HN_CHECK(
      v.is(Kind::kObject) && v.name == "NDArray" && v.state != nullptr && v.state->is(Kind::kDict),
      kInvalidArgument)
      << where << " is not a pickled NDArray";
  ValuePtr handle = v.state->Find("handle");
  if (handle != nullptr && handle->is(Kind::kObject) && handle->name == "bytearray" &&
      handle->args != nullptr && handle->args->items.size() == 1) {
    handle = handle->args->items[0];
  }
  HN_CHECK(handle != nullptr && handle->is(Kind::kBytes), kInvalidArgument)
      << where << " is an NDArray without its bytes";
  return internal::ParseNDArrayRecord(handle->text, where);
}

// The state of one weight as MXNet nests it: `structure` is Optimizer::StateStructure's
// literal, whose integers are positions in `arrays`.
ValuePtr NestState(const Value& structure, const std::vector<NDArray>& arrays,
                   const std::string& label) {
  switch (structure.kind) {
    case Kind::kNone:
      return Value::None();
    case Kind::kInt:
      return PickledArray(arrays.at(static_cast<size_t>(structure.integer)), label);
    case Kind::kTuple: {
      std::vector<ValuePtr> items;
      for (const auto& item : structure.items) items.push_back(NestState(*item, arrays, label));
      return Value::Tuple(std::move(items));
    }
    default:
      HN_THROW(kInternal) << "state structure of kind " << static_cast<int>(structure.kind);
  }
}

// Reads a state nested as `structure` into `arrays` (made by CreateState: each must match).
void UnnestState(const Value& structure, const Value& state, std::vector<NDArray>* arrays,
                 const std::string& where) {
  switch (structure.kind) {
    case Kind::kNone:
      HN_CHECK(state.is(Kind::kNone), kInvalidArgument) << where << " should be None";
      return;
    case Kind::kInt: {
      NDArray loaded = UnpickledArray(state, where);
      NDArray& into = arrays->at(static_cast<size_t>(structure.integer));
      HN_CHECK(
          !loaded.is_none() && loaded.shape() == into.shape() && loaded.dtype() == into.dtype(),
          kInvalidArgument)
          << where << " has shape " << (loaded.is_none() ? Shape() : loaded.shape())
          << " and dtype " << (loaded.is_none() ? "none" : DTypeName(loaded.dtype()))
          << "; the parameter's needs " << into.shape() << " and " << DTypeName(into.dtype());
      into = loaded;
      return;
    }
    case Kind::kTuple:
      HN_CHECK((state.is(Kind::kTuple) || state.is(Kind::kList)) &&
                   state.items.size() == structure.items.size(),
               kInvalidArgument)
          << where << " should be a tuple of " << structure.items.size();
      for (size_t i = 0; i < structure.items.size(); ++i) {
        UnnestState(*structure.items[i], *state.items[i], arrays,
                    where + "[" + std::to_string(i) + "]");
      }
      return;
    default:
      HN_THROW(kInternal) << "state structure of kind " << static_cast<int>(structure.kind);
  }
}

// An optimizer or a scheduler as pickle pickles a plain Python object: cls.__new__(cls) and
// its __dict__.
ValuePtr PickledObject(const char* module, const std::string& class_name,
                       std::vector<std::pair<ValuePtr, ValuePtr>> attributes) {
  return Value::Object(module, class_name, Value::Tuple({}), Value::Dict(std::move(attributes)),
                       true);
}

ValuePtr PickledScheduler(const optimizer::LRScheduler* scheduler) {
  if (scheduler == nullptr) return Value::None();
  std::vector<std::pair<ValuePtr, ValuePtr>> attributes;
  for (const auto& [key, literal] : scheduler->Params()) {
    attributes.emplace_back(Value::Str(key), FromLiteral(literal));
  }
  return PickledObject(kSchedulerModule, scheduler->class_name(), std::move(attributes));
}

ValuePtr IntDict(const std::map<int, int>& counts) {
  ValuePtr d = Value::Dict();
  for (const auto& [k, v] : counts) d->entries.emplace_back(Value::Int(k), Value::Int(v));
  return d;
}

// MXNet 1.9.1's Optimizer.__dict__ (without param_dict, which its __getstate__ drops), in its
// order: the base attributes, then the optimizer's own.
ValuePtr PickledOptimizer(const optimizer::Optimizer& opt) {
  std::map<std::string, std::string> params;
  std::vector<std::string> own;
  static const std::set<std::string> kBase = {
      "rescale_grad",     "lr",           "wd", "clip_gradient", "multi_precision",
      "begin_num_update", "aggregate_num"};
  for (const auto& [key, literal] : opt.Params()) {
    params[key] = literal;
    if (!kBase.count(key)) own.push_back(key);
  }
  auto param = [&](const char* key) {
    auto it = params.find(key);
    HN_CHECK(it != params.end(), kInternal) << opt.class_name() << " does not report " << key;
    return FromLiteral(it->second);
  };
  ValuePtr counts = IntDict(opt.index_update_count());
  std::vector<std::pair<ValuePtr, ValuePtr>> a;
  auto add = [&](const char* key, ValuePtr v) { a.emplace_back(Value::Str(key), std::move(v)); };
  add("rescale_grad", param("rescale_grad"));
  add("lr_scheduler", PickledScheduler(opt.lr_scheduler().get()));
  add("lr", param("lr"));
  add("wd", param("wd"));
  add("lr_mult", Value::Dict());  // the Trainer reads them from the parameters, as MXNet's
  add("wd_mult", Value::Dict());
  add("begin_num_update", param("begin_num_update"));
  add("num_update", Value::Int(opt.num_update()));
  add("_all_index_update_counts", Value::Dict({{Value::Int(0), counts}}));
  add("_index_update_count", counts);  // the same dict: MXNet's current context's counts
  add("clip_gradient", param("clip_gradient"));
  add("multi_precision", param("multi_precision"));
  add("aggregate_num", param("aggregate_num"));
  add("idx2name", Value::Dict());
  add("sym_info", Value::Tuple({}));
  add("allow_np_array", Value::Bool(false));
  for (const std::string& key : own) a.emplace_back(Value::Str(key), FromLiteral(params[key]));
  return PickledObject(kOptimizerModule, opt.class_name(), std::move(a));
}

// Whether `v` is None, a bool, number or str, or a tuple or list of those.
bool IsPlain(const Value& v) {
  switch (v.kind) {
    case Kind::kNone:
    case Kind::kBool:
    case Kind::kInt:
    case Kind::kFloat:
    case Kind::kStr:
      return true;
    case Kind::kTuple:
    case Kind::kList:
      for (const auto& item : v.items) {
        if (item->is(Kind::kTuple) || item->is(Kind::kList) || !IsPlain(*item)) return false;
      }
      return true;
    default:
      return false;
  }
}

int64_t IntOf(const Value* v, const std::string& what) {
  HN_CHECK(v != nullptr && v->is(Kind::kInt), kInvalidArgument) << what << " is not an integer";
  return v->integer;
}

// A .states file's optimizer must be of this trainer's class (MXNet would switch to it; here
// that is an error, so a wrong file changes nothing).
void CheckSameOptimizer(const Value& pickled, const optimizer::Optimizer& current,
                        const std::string& path) {
  HN_CHECK(pickled.is(Kind::kObject) && pickled.state != nullptr && pickled.state->is(Kind::kDict),
           kInvalidArgument)
      << "'" << path << "' does not hold an optimizer after its states";
  HN_CHECK(optimizer::Lower(pickled.name) == optimizer::Lower(current.class_name()),
           kInvalidArgument)
      << "'" << path << "' holds the states of a " << pickled.name
      << " optimizer; this trainer's is " << current.class_name();
}

// The optimizer a .states file describes, made like `current` (same class) with the file's
// hyper-parameters, update counts and scheduler.
std::shared_ptr<optimizer::Optimizer> RestoredOptimizer(const Value& pickled,
                                                        const optimizer::Optimizer& current,
                                                        const std::string& path) {
  CheckSameOptimizer(pickled, current, path);
  const Value& attrs = *pickled.state;
  optimizer::KeywordArgs plain;  // the attributes that are plain values, as Python literals
  for (const auto& [key, value] : attrs.entries) {
    if (key->is(Kind::kStr) && IsPlain(*value)) plain.emplace_back(key->text, value->Literal());
  }
  std::shared_ptr<optimizer::Optimizer> restored =
      optimizer::Optimizer::Restore(pickled.name, plain);
  ValuePtr scheduler = attrs.Find("lr_scheduler");
  if (scheduler != nullptr && !scheduler->is(Kind::kNone)) {
    HN_CHECK(scheduler->is(Kind::kObject) && scheduler->state != nullptr &&
                 scheduler->state->is(Kind::kDict),
             kInvalidArgument)
        << "'" << path << "': the optimizer's lr_scheduler is not a scheduler object";
    optimizer::KeywordArgs scheduler_args;
    for (const auto& [key, value] : scheduler->state->entries) {
      HN_CHECK(key->is(Kind::kStr), kInvalidArgument)
          << "'" << path << "': the scheduler has an attribute that is not named";
      scheduler_args.emplace_back(key->text, value->Literal());
    }
    std::shared_ptr<optimizer::LRScheduler> saved =
        optimizer::LRScheduler::Restore(scheduler->name, scheduler_args);
    const double base_lr = saved->base_lr();
    restored->set_lr_scheduler(saved);
    saved->set_base_lr(base_lr);  // as saved, not reset to the learning_rate (unpickling sets none)
  }
  std::map<int, int> counts;
  ValuePtr index_counts = attrs.Find("_index_update_count");
  HN_CHECK(index_counts != nullptr && index_counts->is(Kind::kDict), kInvalidArgument)
      << "'" << path << "': the optimizer has no _index_update_count dict";
  for (const auto& [k, v] : index_counts->entries) {
    counts[static_cast<int>(IntOf(k.get(), "an update count's index"))] =
        static_cast<int>(IntOf(v.get(), "an update count"));
  }
  restored->SetUpdateCounts(static_cast<int>(IntOf(attrs.Find("num_update").get(), "num_update")),
                            std::move(counts));
  return restored;
}

}  // namespace

Trainer::Trainer(std::vector<ParameterPtr> params, std::shared_ptr<optimizer::Optimizer> optimizer)
    : params_(std::move(params)), optimizer_(std::move(optimizer)) {
  HN_CHECK(optimizer_ != nullptr, kInvalidArgument) << "Trainer: no optimizer";
  HN_CHECK(!params_.empty(), kInvalidArgument) << "Trainer: no parameters to train";
  std::set<const Parameter*> seen;
  for (const auto& p : params_) {
    HN_CHECK(p != nullptr, kInvalidArgument) << "Trainer: a null parameter";
    HN_CHECK(seen.insert(p.get()).second, kInvalidArgument)
        << "Trainer: parameter '" << p->name() << "' is given twice";
  }
  scale_ = optimizer_->rescale_grad();
}

namespace {

std::vector<ParameterPtr> SortedByName(const ParameterDict& params) {
  std::vector<ParameterPtr> sorted = params.list();
  std::sort(sorted.begin(), sorted.end(),
            [](const ParameterPtr& a, const ParameterPtr& b) { return a->name() < b->name(); });
  return sorted;
}

}  // namespace

Trainer::Trainer(const ParameterDict& params, const std::string& optimizer,
                 const optimizer::KeywordArgs& optimizer_params)
    : Trainer(SortedByName(params), optimizer::Optimizer::Create(optimizer, optimizer_params)) {}

void Trainer::Step(int batch_size, bool ignore_stale_grad) {
  AllreduceGrads();
  Update(batch_size, ignore_stale_grad);
}

void Trainer::AllreduceGrads() {}

void Trainer::Update(int batch_size, bool ignore_stale_grad) {
  HN_CHECK(batch_size > 0, kInvalidArgument)
      << "Trainer: batch_size must be positive, got " << batch_size;
  // Every check first: an error leaves every weight and state as it was.
  std::vector<int> indices;
  std::vector<NDArray> weights;
  std::vector<NDArray> grads;
  std::map<int, float> lr_mult;
  std::map<int, float> wd_mult;
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = *params_[i];
    if (p.grad_req() == autograd::GradReq::kNull) continue;
    const NDArray& weight = p.data();  // says why a parameter has no value yet
    if (!internal::IsGradFresh(weight)) {
      HN_CHECK(ignore_stale_grad, kInvalidArgument)
          << "Trainer: the gradient of parameter '" << p.name()
          << "' has not been updated by backward since the last step. The model may use only "
             "some of its parameters in this iteration; if that is intended, call step with "
             "ignore_stale_grad=True, which skips parameters with stale gradients";
      continue;
    }
    const int index = static_cast<int>(i);
    indices.push_back(index);
    weights.push_back(weight);
    grads.push_back(p.Grad());
    if (p.lr_mult() != 1.0f) lr_mult[index] = p.lr_mult();
    if (p.wd_mult() != 1.0f) wd_mult[index] = p.wd_mult();
  }
  optimizer_->set_rescale_grad(scale_ / static_cast<float>(batch_size));
  optimizer_->set_lr_mult(std::move(lr_mult));
  optimizer_->set_wd_mult(std::move(wd_mult));
  std::vector<NDArray*> weight_ptrs;
  std::vector<std::vector<NDArray>*> state_ptrs;
  for (size_t k = 0; k < indices.size(); ++k) {
    auto it = states_.find(indices[k]);
    if (it == states_.end()) {
      it = states_.emplace(indices[k], optimizer_->CreateState(indices[k], weights[k])).first;
    }
    weight_ptrs.push_back(&weights[k]);
    state_ptrs.push_back(&it->second);
  }
  if (!indices.empty()) optimizer_->UpdateMany(indices, weight_ptrs, grads, state_ptrs);
  for (const NDArray& weight : weights) internal::SetGradFresh(weight, false);
}

float Trainer::learning_rate() const { return optimizer_->learning_rate(); }

void Trainer::set_learning_rate(float lr) { optimizer_->set_learning_rate(lr); }

void Trainer::SaveStates(const std::string& path) const {
  ValuePtr states = Value::Dict();
  for (const auto& [index, arrays] : states_) {
    const ParameterPtr& p = params_[static_cast<size_t>(index)];
    ValuePtr structure = FromLiteral(optimizer_->StateStructure(p->data()));
    states->entries.emplace_back(Value::Int(index),
                                 NestState(*structure, arrays, "the state of '" + p->name() + "'"));
  }
  std::string bytes = pickle::Dump(Value::Tuple({states, PickledOptimizer(*optimizer_)}));
  std::ofstream file(path, std::ios::binary);
  HN_CHECK(file.good(), kIOError) << "cannot open '" << path << "' for writing";
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  HN_CHECK(!file.fail(), kIOError) << "error while writing '" << path << "'";
}

void Trainer::LoadStates(const std::string& path) {
  ValuePtr top = pickle::Load(internal::ReadFileBytes(path, "a .states file"), path);
  // MXNet writes (states, optimizer); an Updater's get_states() without the optimizer is the
  // states dict alone.
  ValuePtr states = top;
  ValuePtr pickled_optimizer;
  if (top->is(Kind::kTuple) && top->items.size() == 2) {
    states = top->items[0];
    pickled_optimizer = top->items[1];
  }
  HN_CHECK(states->is(Kind::kDict), kInvalidArgument)
      << "'" << path << "' is not a .states file: it holds no dict of optimizer states";
  // Another optimizer's file fails on that, before its states meet this one's structure.
  if (pickled_optimizer != nullptr) CheckSameOptimizer(*pickled_optimizer, *optimizer_, path);
  std::map<int, std::vector<NDArray>> loaded;
  for (const auto& [key, state] : states->entries) {
    int64_t index = IntOf(key.get(), "'" + path + "': a state's key");
    HN_CHECK(index >= 0 && index < static_cast<int64_t>(params_.size()), kInvalidArgument)
        << "'" << path << "' has a state for parameter index " << index << "; this trainer has "
        << params_.size() << " parameters";
    const ParameterPtr& p = params_[static_cast<size_t>(index)];
    std::vector<NDArray> arrays = optimizer_->CreateState(static_cast<int>(index), p->data());
    ValuePtr structure = FromLiteral(optimizer_->StateStructure(p->data()));
    UnnestState(
        *structure, *state, &arrays,
        "'" + path + "': the state of index " + std::to_string(index) + " ('" + p->name() + "')");
    loaded[static_cast<int>(index)] = std::move(arrays);
  }
  std::shared_ptr<optimizer::Optimizer> restored =
      pickled_optimizer ? RestoredOptimizer(*pickled_optimizer, *optimizer_, path) : optimizer_;
  states_ = std::move(loaded);
  optimizer_ = std::move(restored);
}

}  // namespace gluon
}  // namespace hybridnet
