// C API: Gluon blocks (hn_block_*).
#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <set>
#include <string_view>
#include <type_traits>

#include "c_api_common.h"
#include "hybridnet/gluon/conv_layers.h"
#include "hybridnet/gluon/initializer.h"
#include "hybridnet/gluon/loss.h"
#include "hybridnet/gluon/model_zoo.h"
#include "hybridnet/gluon/nn.h"
#include "hybridnet/gluon/summary.h"
#include "hybridnet/gluon/symbol_block.h"
#include "hybridnet/param.h"

using namespace hn_capi;  // NOLINT
namespace hn = ::hybridnet;
namespace gluon = ::hybridnet::gluon;

namespace {

// The string attributes of hn_block_create, parsed with the op parameters' rules (so "True",
// "1", "(3, 3)" mean the same everywhere). Every key must be used by the layer.
class LayerAttrs {
 public:
  LayerAttrs(std::string kind, hn::AttrDict attrs)
      : kind_(std::move(kind)), attrs_(std::move(attrs)) {}

  template <typename T>
  T Get(const std::string& key, T fallback) {
    accepted_.push_back(key);
    auto it = attrs_.find(key);
    if (it == attrs_.end()) return fallback;
    used_.insert(key);
    T value{};
    try {
      hn::internal::ParseValue(it->second, &value);
    } catch (const std::invalid_argument& e) {
      HN_THROW(kInvalidArgument) << kind_ << ": attribute '" << key << "'='" << it->second
                                 << "': expected " << e.what();
    }
    return value;
  }
  /// An int ("3") or a tuple ("(3, 3)"), as MXNet layers take kernel sizes and strides.
  gluon::IntTuple Tuple(const std::string& key, gluon::IntTuple fallback) {
    accepted_.push_back(key);
    auto it = attrs_.find(key);
    if (it == attrs_.end()) return fallback;
    used_.insert(key);
    try {
      int64_t scalar = 0;
      hn::internal::ParseValue(it->second, &scalar);
      return gluon::IntTuple(scalar);
    } catch (const std::invalid_argument&) {
    }
    std::vector<int64_t> values;
    try {
      hn::internal::ParseValue(it->second, &values);
    } catch (const std::invalid_argument&) {
      HN_THROW(kInvalidArgument) << kind_ << ": attribute '" << key << "'='" << it->second
                                 << "': expected an int or a tuple of ints such as (3, 3)";
    }
    return gluon::IntTuple(values);
  }
  std::optional<std::string> Prefix() {
    accepted_.push_back("prefix");
    auto it = attrs_.find("prefix");
    if (it == attrs_.end()) return std::nullopt;
    used_.insert("prefix");
    return it->second;
  }
  bool Has(const std::string& key) const { return attrs_.count(key) > 0; }
  /// Takes the attribute `alias` as `key` (an error when both are given).
  void Rename(const std::string& alias, const std::string& key) {
    auto it = attrs_.find(alias);
    if (it == attrs_.end()) return;
    HN_CHECK(!Has(key), kInvalidArgument)
        << kind_ << ": give '" << key << "' or '" << alias << "', not both";
    attrs_[key] = it->second;
    attrs_.erase(it);
  }
  /// Reads every field the options declare (gluon::ForEachField) but those in `not_taken` (the
  /// fields a layer of the family does not have), keeping the defaults of those not given. An
  /// IntTuple is an int or a tuple, an initializer a name, and a string "None" (Python's None)
  /// means not given.
  template <typename Options>
  Options Read(Options options, std::initializer_list<std::string_view> not_taken = {}) {
    gluon::ForEachField(options, [&](const char* key, auto& value, bool required) {
      if (std::find(not_taken.begin(), not_taken.end(), key) != not_taken.end()) return;
      HN_CHECK(!required || Has(key), kInvalidArgument)
          << kind_ << ": the required attribute '" << key << "' is missing";
      using T = std::decay_t<decltype(value)>;
      if constexpr (std::is_same_v<T, gluon::InitializerPtr>) {
        value = Initializer(key, value);
      } else if constexpr (std::is_same_v<T, gluon::IntTuple>) {
        value = Tuple(key, value);
      } else if constexpr (std::is_same_v<T, std::string>) {
        value = Get<std::string>(key, value);
        if (value == "None") value.clear();
      } else {
        value = Get<T>(key, value);
      }
    });
    return options;
  }
  /// An initializer given by name ("xavier", "zeros", ...), or `fallback` when not given.
  gluon::InitializerPtr Initializer(const std::string& key, gluon::InitializerPtr fallback) {
    std::string name = Get<std::string>(key, "");
    return name.empty() ? fallback : gluon::InitializerByName(name);
  }
  /// Throws for keys no getter asked for.
  void CheckAllUsed() const {
    for (const auto& kv : attrs_) {
      if (used_.count(kv.first)) continue;
      std::string keys;
      for (const auto& k : accepted_) keys += (keys.empty() ? "" : ", ") + k;
      HN_THROW(kInvalidArgument) << kind_ << ": unknown attribute '" << kv.first
                                 << "' (accepted: " << keys << ")";
    }
  }

 private:
  std::string kind_;
  hn::AttrDict attrs_;
  std::vector<std::string> accepted_;
  std::set<std::string> used_;
};

using Factory = std::function<std::shared_ptr<gluon::Block>(LayerAttrs*)>;

// Max and average pooling; only average pooling takes count_include_pad.
template <typename Pool, bool kAverage>
std::shared_ptr<gluon::Block> MakePool(LayerAttrs* a) {
  gluon::PoolOptions options = kAverage ? a->Read(gluon::PoolOptions())
                                        : a->Read(gluon::PoolOptions(), {"count_include_pad"});
  return std::make_shared<Pool>(options, a->Prefix());
}

// Global pooling takes the layout alone (its constructor's one argument).
template <typename Pool>
std::shared_ptr<gluon::Block> MakeGlobalPool(LayerAttrs* a) {
  std::string layout = a->Get<std::string>("layout", "");
  return std::make_shared<Pool>(layout, a->Prefix());
}

// A layer built from its options struct: every field is an attribute. (Conv1D/2D/3D refuse a
// nonzero output_padding themselves.)
template <typename Options, typename Layer>
std::shared_ptr<gluon::Block> MakeFromOptions(LayerAttrs* a) {
  Options options = a->Read(Options());  // before Prefix(): the fields lead the accepted list
  return std::make_shared<Layer>(options, a->Prefix());
}

const std::vector<std::pair<std::string, Factory>>& Factories() {
  static const std::vector<std::pair<std::string, Factory>> factories = {
      {"HybridSequential",
       [](LayerAttrs* a) { return std::make_shared<gluon::HybridSequential>(a->Prefix()); }},
      {"Sequential",
       [](LayerAttrs* a) { return std::make_shared<gluon::Sequential>(a->Prefix()); }},
      {"Dense", MakeFromOptions<gluon::DenseOptions, gluon::Dense>},
      {"Activation",
       [](LayerAttrs* a) {
         a->Rename("act_type", "activation");  // the op's name for it, as some callers write it
         return MakeFromOptions<gluon::ActivationOptions, gluon::Activation>(a);
       }},
      {"Dropout", MakeFromOptions<gluon::DropoutOptions, gluon::Dropout>},
      {"Flatten", [](LayerAttrs* a) { return std::make_shared<gluon::Flatten>(a->Prefix()); }},
      {"Conv1D", MakeFromOptions<gluon::ConvOptions, gluon::Conv1D>},
      {"Conv2D", MakeFromOptions<gluon::ConvOptions, gluon::Conv2D>},
      {"Conv3D", MakeFromOptions<gluon::ConvOptions, gluon::Conv3D>},
      {"Conv1DTranspose", MakeFromOptions<gluon::ConvOptions, gluon::Conv1DTranspose>},
      {"Conv2DTranspose", MakeFromOptions<gluon::ConvOptions, gluon::Conv2DTranspose>},
      {"Conv3DTranspose", MakeFromOptions<gluon::ConvOptions, gluon::Conv3DTranspose>},
      {"MaxPool1D", MakePool<gluon::MaxPool1D, false>},
      {"MaxPool2D", MakePool<gluon::MaxPool2D, false>},
      {"MaxPool3D", MakePool<gluon::MaxPool3D, false>},
      {"AvgPool1D", MakePool<gluon::AvgPool1D, true>},
      {"AvgPool2D", MakePool<gluon::AvgPool2D, true>},
      {"AvgPool3D", MakePool<gluon::AvgPool3D, true>},
      {"GlobalMaxPool1D", MakeGlobalPool<gluon::GlobalMaxPool1D>},
      {"GlobalMaxPool2D", MakeGlobalPool<gluon::GlobalMaxPool2D>},
      {"GlobalMaxPool3D", MakeGlobalPool<gluon::GlobalMaxPool3D>},
      {"GlobalAvgPool1D", MakeGlobalPool<gluon::GlobalAvgPool1D>},
      {"GlobalAvgPool2D", MakeGlobalPool<gluon::GlobalAvgPool2D>},
      {"GlobalAvgPool3D", MakeGlobalPool<gluon::GlobalAvgPool3D>},
      {"BatchNorm", MakeFromOptions<gluon::BatchNormOptions, gluon::BatchNorm>},
      {"LeakyReLU", MakeFromOptions<gluon::LeakyReLUOptions, gluon::LeakyReLU>},
      {"PReLU", MakeFromOptions<gluon::PReLUOptions, gluon::PReLU>},
      {"ELU", MakeFromOptions<gluon::ELUOptions, gluon::ELU>},
      {"SELU", [](LayerAttrs* a) { return std::make_shared<gluon::SELU>(a->Prefix()); }},
      {"GELU", [](LayerAttrs* a) { return std::make_shared<gluon::GELU>(a->Prefix()); }},
      {"Identity", [](LayerAttrs* a) { return std::make_shared<gluon::Identity>(a->Prefix()); }},
      {"HybridConcurrent", MakeFromOptions<gluon::ConcurrentOptions, gluon::HybridConcurrent>},
      {"Concurrent", MakeFromOptions<gluon::ConcurrentOptions, gluon::Concurrent>},
      {"L1Loss", MakeFromOptions<gluon::LossOptions, gluon::L1Loss>},
      {"L2Loss", MakeFromOptions<gluon::L2LossOptions, gluon::L2Loss>},
      {"SigmoidBinaryCrossEntropyLoss",
       MakeFromOptions<gluon::SigmoidBCELossOptions, gluon::SigmoidBinaryCrossEntropyLoss>},
      {"SigmoidBCELoss",
       MakeFromOptions<gluon::SigmoidBCELossOptions, gluon::SigmoidBinaryCrossEntropyLoss>},
      {"SoftmaxCrossEntropyLoss",
       MakeFromOptions<gluon::SoftmaxCELossOptions, gluon::SoftmaxCrossEntropyLoss>},
      {"SoftmaxCELoss",
       MakeFromOptions<gluon::SoftmaxCELossOptions, gluon::SoftmaxCrossEntropyLoss>},
      {"KLDivLoss", MakeFromOptions<gluon::KLDivLossOptions, gluon::KLDivLoss>},
      {"CTCLoss", MakeFromOptions<gluon::CTCLossOptions, gluon::CTCLoss>},
      {"HuberLoss", MakeFromOptions<gluon::HuberLossOptions, gluon::HuberLoss>},
      {"HingeLoss", MakeFromOptions<gluon::HingeLossOptions, gluon::HingeLoss>},
      {"SquaredHingeLoss", MakeFromOptions<gluon::HingeLossOptions, gluon::SquaredHingeLoss>},
      {"LogisticLoss", MakeFromOptions<gluon::LogisticLossOptions, gluon::LogisticLoss>},
      {"TripletLoss", MakeFromOptions<gluon::TripletLossOptions, gluon::TripletLoss>},
      {"PoissonNLLLoss", MakeFromOptions<gluon::PoissonNLLLossOptions, gluon::PoissonNLLLoss>},
      {"CosineEmbeddingLoss",
       MakeFromOptions<gluon::CosineEmbeddingLossOptions, gluon::CosineEmbeddingLoss>},
      {"SDMLLoss", MakeFromOptions<gluon::SDMLLossOptions, gluon::SDMLLoss>},
  };
  return factories;
}

hn_block* NewBlock(std::shared_ptr<gluon::Block> block, std::string kind) {
  auto handle = std::make_unique<hn_block>();
  handle->block = std::move(block);
  handle->kind = std::move(kind);
  return handle.release();
}

gluon::HybridBlock* AsHybrid(hn_block* b, const char* action) {
  gluon::HybridBlock* hybrid = b->block->AsHybrid();
  HN_CHECK(hybrid != nullptr, kInvalidArgument)
      << b->kind << " '" << b->block->name() << "' is not a hybrid block and cannot " << action
      << "; build the model from HybridSequential and hybrid layers";
  return hybrid;
}

// Runs a C lambda function: the input is lent as a handle, the output handle is taken over.
hn::NDArray CallLambda(hn_lambda_fn fn, void* user_data, const hn::NDArray& x) {
  hn_tensor input{x};  // lent to the callback, which must not free it
  hn_tensor* output = nullptr;
  int rc = fn(&input, &output, user_data);
  std::unique_ptr<hn_tensor> holder(output);
  if (rc != HN_OK) {
    if (rc < HN_ERR_INTERNAL || rc > 0) {
      HN_THROW(kInvalidArgument) << "the lambda function returned " << rc
                                 << ", which is not an hn_status";
    }
    std::string message = hn_last_error_code() == rc
                              ? std::string(hn_last_error())
                              : std::string("returned ") + hn_status_name(rc);
    throw hn::Error(static_cast<hn::StatusCode>(rc), "lambda function: " + message);
  }
  HN_CHECK(holder != nullptr, kInvalidArgument)
      << "the lambda function returned HN_OK but stored no output tensor";
  return holder->array;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// What hn_block_register_child and hn_block_add_parameter need of a custom block.
class CustomBlockParts {
 public:
  virtual ~CustomBlockParts() = default;
  virtual void RegisterNamedChild(const std::string& name, std::shared_ptr<gluon::Block> child) = 0;
  virtual void DeclareParameter(const std::string& name, const hn::Shape& shape, hn::DType dtype,
                                gluon::InitializerPtr init, bool differentiable) = 0;
};

// A block whose forward is a C function (a binding's user-defined block); Base is Block or
// HybridBlock. The library's naming, parameters, tracing, caching and export apply unchanged.
template <typename Base>
class CustomBlock : public Base, public CustomBlockParts {
 public:
  CustomBlock(std::string class_name, hn_forward_fn fn, void* user_data,
              std::optional<std::string> prefix)
      : Base(Lower(class_name), std::move(prefix)),
        class_name_(std::move(class_name)),
        fn_(fn),
        user_data_(user_data) {}

  std::vector<hn::NDArray> ForwardMany(const std::vector<hn::NDArray>& inputs) override {
    constexpr size_t kMaxOutputs = 256;
    std::vector<hn_tensor*> in;
    in.reserve(inputs.size());
    for (const auto& x : inputs) in.push_back(new hn_tensor{x});  // owned by the function
    std::vector<hn_tensor*> out(kMaxOutputs, nullptr);
    size_t num_out = 0;
    int rc = fn_(user_data_, in.data(), in.size(), kMaxOutputs, out.data(), &num_out);
    std::vector<std::unique_ptr<hn_tensor>> holders;
    for (size_t i = 0; i < std::min(num_out, kMaxOutputs); ++i) holders.emplace_back(out[i]);
    if (rc != HN_OK) {
      if (rc < HN_ERR_INTERNAL || rc > 0) {
        HN_THROW(kInvalidArgument) << "the forward function of " << class_name_ << " returned "
                                   << rc << ", which is not an hn_status";
      }
      std::string message = hn_last_error_code() == rc
                                ? std::string(hn_last_error())
                                : std::string("returned ") + hn_status_name(rc);
      throw hn::Error(static_cast<hn::StatusCode>(rc),
                      "forward of " + class_name_ + " '" + this->name() + "': " + message);
    }
    HN_CHECK(num_out >= 1 && num_out <= kMaxOutputs, kInvalidArgument)
        << "the forward function of " << class_name_ << " returned " << num_out << " outputs (1 to "
        << kMaxOutputs << " are possible)";
    std::vector<hn::NDArray> result;
    for (size_t i = 0; i < num_out; ++i) {
      HN_CHECK(holders[i] != nullptr, kInvalidArgument)
          << "the forward function of " << class_name_ << " stored no tensor in output " << i;
      result.push_back(holders[i]->array);
    }
    return result;
  }

  void RegisterNamedChild(const std::string& name, std::shared_ptr<gluon::Block> child) override {
    HN_CHECK(!name.empty(), kInvalidArgument) << "a child needs a name";
    if (std::is_base_of_v<gluon::HybridBlock, Base>) {
      HN_CHECK(dynamic_cast<gluon::HybridBlock*>(child.get()) != nullptr, kInvalidArgument)
          << class_name_ << " is a HybridBlock: its child '" << name
          << "' must be a HybridBlock too (hybridize traces every child)";
    }
    this->SetChild(name, std::move(child));
  }

  void DeclareParameter(const std::string& name, const hn::Shape& shape, hn::DType dtype,
                        gluon::InitializerPtr init, bool differentiable) override {
    for (const auto& p : this->own_params()) {
      HN_CHECK(p->local_name() != name, kInvalidArgument)
          << class_name_ << " already has a parameter '" << name << "'";
    }
    this->AddParameter(name, shape, std::move(init), dtype, differentiable);
  }

 protected:
  std::string Describe() override { return class_name_; }

 private:
  std::string class_name_;
  hn_forward_fn fn_;
  void* user_data_;
};

CustomBlockParts* AsCustom(hn_block* b, const char* action) {
  auto* custom = dynamic_cast<CustomBlockParts*>(b->block.get());
  HN_CHECK(custom != nullptr, kInvalidArgument)
      << b->kind << " '" << b->block->name() << "' is not a custom block and cannot " << action
      << " (blocks made by hn_block_create_custom can)";
  return custom;
}

gluon::ParameterPtr FindParam(hn_block* b, const char* name) {
  std::string n = CheckString(name, "name");
  gluon::ParameterDict params = b->block->CollectParams();
  gluon::ParameterPtr p = params.Get(n);
  if (p == nullptr) {
    std::string known;
    for (const auto& k : params.Keys()) known += (known.empty() ? "" : ", ") + k;
    HN_THROW(kNotFound) << b->kind << " '" << b->block->name() << "' has no parameter '" << n
                        << "' (parameters: " << (known.empty() ? "none" : known) << ")";
  }
  return p;
}

// The parameter attributes hn_block_param_set_attr/get_attr read and write: one entry per key.
struct ParamAttr {
  const char* key;
  std::function<std::string(const gluon::Parameter&)> get;
  std::function<void(gluon::Parameter*, const std::string&)> set;
};

float ParseMult(const std::string& key, const std::string& text) {
  float value = 0;
  try {
    hn::internal::ParseValue(text, &value);
  } catch (const std::invalid_argument& e) {
    HN_THROW(kInvalidArgument) << "parameter attribute '" << key << "'='" << text << "': expected "
                               << e.what();
  }
  return value;
}

const std::vector<ParamAttr>& ParamAttrs() {
  static const std::vector<ParamAttr> attrs = {
      {"grad_req",
       [](const gluon::Parameter& p) { return hn::autograd::GradReqName(p.grad_req()); },
       [](gluon::Parameter* p, const std::string& v) {
         p->set_grad_req(hn::autograd::GradReqByName(v));
       }},
      {"lr_mult", [](const gluon::Parameter& p) { return hn::internal::ValueText(p.lr_mult()); },
       [](gluon::Parameter* p, const std::string& v) { p->set_lr_mult(ParseMult("lr_mult", v)); }},
      {"wd_mult", [](const gluon::Parameter& p) { return hn::internal::ValueText(p.wd_mult()); },
       [](gluon::Parameter* p, const std::string& v) { p->set_wd_mult(ParseMult("wd_mult", v)); }},
  };
  return attrs;
}

const ParamAttr& FindParamAttr(const char* key) {
  std::string k = CheckString(key, "key");
  std::string known;
  for (const ParamAttr& a : ParamAttrs()) {
    if (k == a.key) return a;
    known += (known.empty() ? "" : ", ") + std::string(a.key);
  }
  HN_THROW(kNotFound) << "parameters have no attribute '" << k << "' (attributes: " << known << ")";
}

}  // namespace

extern "C" {

int hn_block_create(const char* kind, const char* const* attr_keys, const char* const* attr_values,
                    size_t num_attrs, hn_block** out) noexcept {
  HN_API_BEGIN();
  std::string k = CheckString(kind, "kind");
  CheckOut(out, "out");
  LayerAttrs attrs(k, ToAttrs(attr_keys, attr_values, num_attrs));
  const auto& factories = Factories();
  auto it =
      std::find_if(factories.begin(), factories.end(), [&](const auto& f) { return f.first == k; });
  if (it == factories.end()) {
    std::string known;
    for (const auto& f : factories) known += (known.empty() ? "" : ", ") + f.first;
    HN_THROW(kNotFound) << "unknown block kind '" << k << "' (known: " << known << ")";
  }
  std::shared_ptr<gluon::Block> block = it->second(&attrs);
  attrs.CheckAllUsed();
  *out = NewBlock(std::move(block), k);
  HN_API_END();
}

int hn_block_create_lambda(hn_lambda_fn fn, void* user_data, int hybrid, hn_block** out) noexcept {
  HN_API_BEGIN();
  HN_CHECK(fn != nullptr, kInvalidArgument) << "argument 'fn' is NULL";
  CheckOut(out, "out");
  auto call = [fn, user_data](const hn::NDArray& x) { return CallLambda(fn, user_data, x); };
  if (hybrid != 0) {
    *out = NewBlock(std::make_shared<gluon::HybridLambda>(call), "HybridLambda");
  } else {
    *out = NewBlock(std::make_shared<gluon::Lambda>(call), "Lambda");
  }
  HN_API_END();
}

int hn_block_add(hn_block* parent, hn_block* child) noexcept {
  HN_API_BEGIN();
  CheckHandle(parent, "parent");
  CheckHandle(child, "child");
  // HybridSequential and HybridConcurrent; Sequential and Concurrent.
  if (auto* seq = dynamic_cast<gluon::SequentialOf<gluon::HybridBlock>*>(parent->block.get())) {
    HN_CHECK(child->block->AsHybrid() != nullptr, kInvalidArgument)
        << "a " << parent->kind << " takes hybrid blocks only, not a " << child->kind
        << " (use Sequential, or a hybrid layer)";
    seq->Add(child->block);
  } else if (auto* plain = dynamic_cast<gluon::SequentialOf<gluon::Block>*>(parent->block.get())) {
    plain->Add(child->block);
  } else {
    HN_THROW(kInvalidArgument) << "blocks can be added to a HybridSequential, Sequential, "
                               << "HybridConcurrent or Concurrent, not to a " << parent->kind;
  }
  HN_API_END();
}

int hn_block_initialize(hn_block* block, const char* initializer, uint64_t seed,
                        int force_reinit) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  std::string name = initializer != nullptr && initializer[0] != '\0' ? initializer : "uniform";
  gluon::InitializerPtr init = gluon::InitializerByName(name);
  hn::Seed(seed);
  block->block->Initialize(init, force_reinit != 0);
  HN_API_END();
}

int hn_block_forward(hn_block* block, hn_tensor* const* inputs, size_t num_inputs,
                     size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out_num_outputs, "out_num_outputs");
  std::vector<hn::NDArray> in = ToArrays(inputs, num_inputs, "inputs");
  StoreTensors(block->kind.c_str(), (*block->block)(in), max_outputs, outputs, out_num_outputs);
  HN_API_END();
}

int hn_block_hybridize(hn_block* block, int active, int static_alloc, int static_shape) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  gluon::HybridizeOptions options;
  options.static_alloc = static_alloc != 0;
  options.static_shape = static_shape != 0;
  block->block->Hybridize(active != 0, options);
  Log(HN_LOG_DEBUG, std::string(active ? "hybridized " : "de-hybridized ") + block->block->name());
  HN_API_END();
}

int hn_block_export(hn_block* block, const char* prefix, int epoch) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  std::string p = CheckString(prefix, "prefix");
  AsHybrid(block, "be exported")->Export(p, epoch);
  Log(HN_LOG_INFO, "exported " + block->block->name() + " to " + p + "-symbol.json");
  HN_API_END();
}

int hn_block_save_parameters(hn_block* block, const char* path) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  std::string p = CheckString(path, "path");
  block->block->SaveParameters(p);
  HN_API_END();
}

int hn_block_load_parameters(hn_block* block, const char* path, int allow_missing,
                             int ignore_extra) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  std::string p = CheckString(path, "path");
  block->block->LoadParameters(p, allow_missing != 0, ignore_extra != 0);
  HN_API_END();
}

int hn_block_import(const char* symbol_file, const char* const* input_names, size_t num_inputs,
                    const char* param_file, hn_block** out) noexcept {
  HN_API_BEGIN();
  std::string sym = CheckString(symbol_file, "symbol_file");
  CheckOut(out, "out");
  HN_CHECK(input_names != nullptr && num_inputs > 0, kInvalidArgument)
      << "an imported block needs the names of its data inputs (num_inputs is " << num_inputs
      << ")";
  std::vector<std::string> names;
  for (size_t i = 0; i < num_inputs; ++i)
    names.push_back(CheckString(input_names[i], "input_names[i]"));
  std::string params = param_file != nullptr ? param_file : "";
  auto block = gluon::SymbolBlock::Imports(sym, names, params);
  *out = NewBlock(block, "SymbolBlock");
  Log(HN_LOG_INFO, "imported " + sym + (params.empty() ? "" : " with " + params));
  HN_API_END();
}

int hn_block_trace(hn_block* block, size_t num_inputs, hn_symbol** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out, "out");
  HN_CHECK(num_inputs > 0, kInvalidArgument) << "num_inputs must be >= 1";
  hn::Symbol graph = AsHybrid(block, "be traced")->Trace(num_inputs);
  auto handle = std::make_unique<hn_symbol>();
  handle->symbol = std::move(graph);
  *out = handle.release();
  HN_API_END();
}

int hn_block_name(hn_block* block, const char** out_name) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out_name, "out_name");
  if (block->name.empty()) block->name = block->block->name();
  *out_name = block->name.c_str();
  HN_API_END();
}

int hn_block_to_string(hn_block* block, char** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out, "out");
  *out = NewCString(block->block->ToString());
  HN_API_END();
}

int hn_block_summary(hn_block* block, hn_tensor* const* inputs, size_t num_inputs,
                     char** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out, "out");
  *out = NewCString(gluon::Summary(*block->block, ToArrays(inputs, num_inputs, "inputs")));
  HN_API_END();
}

int hn_block_collect_params(hn_block* block, hn_tensor_list** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out, "out");
  auto list = std::make_unique<hn_tensor_list>();
  list->named = true;
  gluon::ParameterDict params = block->block->CollectParams();
  for (const auto& p : params.list()) {
    if (!p->is_initialized()) continue;
    list->names.push_back(p->name());
    list->arrays.push_back(p->data());
    list->record_versions.push_back(2);
  }
  *out = list.release();
  HN_API_END();
}

int hn_block_create_custom(const char* class_name, int hybrid, hn_forward_fn fn, void* user_data,
                           const char* prefix, hn_block** out) noexcept {
  HN_API_BEGIN();
  std::string name = CheckString(class_name, "class_name");
  HN_CHECK(!name.empty(), kInvalidArgument) << "a custom block needs a class name";
  HN_CHECK(fn != nullptr, kInvalidArgument) << "argument 'fn' is NULL";
  CheckOut(out, "out");
  std::optional<std::string> p;
  if (prefix != nullptr) p = prefix;
  if (hybrid != 0) {
    *out =
        NewBlock(std::make_shared<CustomBlock<gluon::HybridBlock>>(name, fn, user_data, p), name);
  } else {
    *out = NewBlock(std::make_shared<CustomBlock<gluon::Block>>(name, fn, user_data, p), name);
  }
  HN_API_END();
}

int hn_block_register_child(hn_block* parent, const char* name, hn_block* child) noexcept {
  HN_API_BEGIN();
  CheckHandle(parent, "parent");
  std::string n = CheckString(name, "name");
  CheckHandle(child, "child");
  AsCustom(parent, "take named children")->RegisterNamedChild(n, child->block);
  HN_API_END();
}

int hn_block_add_parameter(hn_block* block, const char* name, int dtype, const int64_t* shape,
                           int ndim, const char* initializer, int differentiable) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  std::string n = CheckString(name, "name");
  HN_CHECK(!n.empty(), kInvalidArgument) << "a parameter needs a name";
  hn::DType type = ToDType(dtype);
  hn::Shape s = ToShape(shape, ndim);
  gluon::InitializerPtr init;
  if (initializer != nullptr && initializer[0] != '\0')
    init = gluon::InitializerByName(initializer);
  AsCustom(block, "declare parameters")->DeclareParameter(n, s, type, init, differentiable != 0);
  HN_API_END();
}

int hn_block_name_in_scope(hn_block* block, hn_block* scope) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  block->block->NameInScope(scope != nullptr ? scope->block.get() : nullptr);
  HN_API_END();
}

int hn_block_prefix(hn_block* block, const char** out_prefix) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out_prefix, "out_prefix");
  block->prefix = block->block->prefix();
  *out_prefix = block->prefix.c_str();
  HN_API_END();
}

int hn_block_forward_symbols(hn_block* block, hn_symbol* const* inputs, size_t num_inputs,
                             size_t max_outputs, hn_symbol** outputs,
                             size_t* out_num_outputs) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out_num_outputs, "out_num_outputs");
  HN_CHECK(num_inputs > 0 && inputs != nullptr, kInvalidArgument)
      << "a forward on symbols needs at least one input symbol";
  std::vector<hn::Symbol> in;
  for (size_t i = 0; i < num_inputs; ++i) {
    HN_CHECK(inputs[i] != nullptr, kInvalidArgument) << "inputs[" << i << "] is NULL";
    in.push_back(inputs[i]->symbol);
  }
  std::vector<hn::Symbol> result = block->block->CallSymbolic(in);
  HN_CHECK(result.size() <= max_outputs, kInvalidArgument)
      << block->kind << " returned " << result.size() << " outputs but max_outputs is "
      << max_outputs;
  HN_CHECK(outputs != nullptr, kInvalidArgument) << "argument 'outputs' is NULL";
  std::vector<std::unique_ptr<hn_symbol>> handles;
  for (auto& r : result) {
    handles.push_back(std::make_unique<hn_symbol>());
    handles.back()->symbol = std::move(r);
  }
  for (size_t i = 0; i < handles.size(); ++i) outputs[i] = handles[i].release();
  *out_num_outputs = handles.size();
  HN_API_END();
}

int hn_block_from_symbol(const hn_symbol* symbol, const char* const* input_names, size_t num_inputs,
                         const hn_tensor_list* params, hn_block** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  CheckOut(out, "out");
  HN_CHECK(input_names != nullptr && num_inputs > 0, kInvalidArgument)
      << "a SymbolBlock needs the names of its data inputs (num_inputs is " << num_inputs << ")";
  std::vector<std::string> names;
  for (size_t i = 0; i < num_inputs; ++i)
    names.push_back(CheckString(input_names[i], "input_names[i]"));
  auto block = std::make_shared<gluon::SymbolBlock>(symbol->symbol, names);
  if (params != nullptr) {
    hn::NDArrayList list;
    list.arrays = params->arrays;
    if (params->named) list.names.assign(params->names.begin(), params->names.end());
    block->SetParameters(list, "the parameter list");
  }
  *out = NewBlock(block, "SymbolBlock");
  HN_API_END();
}

int hn_block_get_model(const char* name, const char* const* attr_keys,
                       const char* const* attr_values, size_t num_attrs, hn_block** out) noexcept {
  HN_API_BEGIN();
  std::string n = CheckString(name, "name");
  CheckOut(out, "out");
  LayerAttrs attrs("get_model", ToAttrs(attr_keys, attr_values, num_attrs));
  auto classes = attrs.Get<int64_t>("classes", 1000);
  auto thumbnail = attrs.Get<bool>("thumbnail", false);
  attrs.CheckAllUsed();
  *out = NewBlock(gluon::model_zoo::GetModel(n, classes, thumbnail), n);
  HN_API_END();
}

int hn_block_model_names(const char* const** out_names, size_t* out_count) noexcept {
  HN_API_BEGIN();
  CheckOut(out_names, "out_names");
  CheckOut(out_count, "out_count");
  static const NameArray names = [] {
    NameArray a;
    a.Assign(gluon::model_zoo::ModelNames());
    return a;
  }();
  *out_names = names.ptrs.data();
  *out_count = names.ptrs.size();
  HN_API_END();
}

int hn_block_param_count(hn_block* block, size_t* out_count) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out_count, "out_count");
  gluon::ParameterDict params = block->block->CollectParams();
  std::deque<std::string> names;
  for (const auto& p : params.list()) names.push_back(p->name());
  block->params = params.list();
  block->param_names = std::move(names);
  *out_count = block->params.size();
  HN_API_END();
}

int hn_block_param_info(hn_block* block, size_t index, const char** out_name,
                        const int64_t** out_dims, int* out_ndim, int* out_dtype,
                        int* out_initialized) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  HN_CHECK(index < block->params.size(), kInvalidArgument)
      << "index " << index << " is out of range: the last hn_block_param_count found "
      << block->params.size() << " parameters";
  const gluon::Parameter& p = *block->params[index];
  if (out_name != nullptr) *out_name = block->param_names[index].c_str();
  if (out_dims != nullptr) *out_dims = p.shape().begin();
  if (out_ndim != nullptr) *out_ndim = static_cast<int>(p.shape().ndim());
  if (out_dtype != nullptr) *out_dtype = static_cast<int>(p.dtype());
  if (out_initialized != nullptr) *out_initialized = p.is_initialized() ? 1 : 0;
  HN_API_END();
}

int hn_block_param_data(hn_block* block, const char* name, hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out, "out");
  gluon::ParameterPtr p = FindParam(block, name);
  *out = new hn_tensor{p->Value()};
  HN_API_END();
}

int hn_block_param_set_data(hn_block* block, const char* name, const hn_tensor* value) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckHandle(value, "value");
  FindParam(block, name)->SetData(value->array);
  HN_API_END();
}

int hn_block_param_initialize(hn_block* block, const char* name, const char* initializer,
                              int force_reinit) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  std::string init_name =
      initializer != nullptr && initializer[0] != '\0' ? initializer : "uniform";
  gluon::InitializerPtr init = gluon::InitializerByName(init_name);
  if (name == nullptr) {
    block->block->Initialize(init, force_reinit != 0);
  } else {
    FindParam(block, name)->Initialize(init, force_reinit != 0);
  }
  HN_API_END();
}

int hn_block_param_grad(hn_block* block, const char* name, hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out, "out");
  *out = new hn_tensor{FindParam(block, name)->Grad()};
  HN_API_END();
}

int hn_block_param_set_attr(hn_block* block, const char* name, const char* key,
                            const char* value) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  const ParamAttr& attr = FindParamAttr(key);
  std::string v = CheckString(value, "value");
  if (name != nullptr) {
    attr.set(FindParam(block, name).get(), v);
  } else {
    gluon::ParameterDict params = block->block->CollectParams();
    for (const auto& p : params.list()) attr.set(p.get(), v);
  }
  HN_API_END();
}

int hn_block_param_get_attr(hn_block* block, const char* name, const char* key,
                            char** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  CheckOut(out, "out");
  const ParamAttr& attr = FindParamAttr(key);
  *out = NewCString(attr.get(*FindParam(block, name)));
  HN_API_END();
}

int hn_block_param_zero_grad(hn_block* block, const char* name) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  if (name != nullptr) {
    FindParam(block, name)->ZeroGrad();
  } else {
    block->block->CollectParams().ZeroGrad();
  }
  HN_API_END();
}

int hn_block_param_cast(hn_block* block, const char* name, int dtype) noexcept {
  HN_API_BEGIN();
  CheckHandle(block, "block");
  hn::DType type = ToDType(dtype);
  if (name != nullptr) {
    FindParam(block, name)->Cast(type);
    block->block->ClearCaches();
  } else {
    block->block->Cast(type);
  }
  HN_API_END();
}

int hn_initializer_fill(const char* init, const char* name, int weight_rule,
                        hn_tensor* tensor) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  gluon::InitializerPtr initializer = gluon::InitializerByName(CheckString(init, "init"));
  const std::string param_name = CheckString(name, "name");
  if (weight_rule) {
    initializer->InitWeight(param_name, &tensor->array);
  } else {
    initializer->Fill(param_name, &tensor->array);
  }
  HN_API_END();
}

void hn_block_free(hn_block* block) noexcept { delete block; }

}  // extern "C"
