// C API: Gluon blocks (hn_block_*).
#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <type_traits>

#include "c_api_common.h"
#include "hybridnet/gluon/initializer.h"
#include "hybridnet/gluon/nn.h"
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
  LayerAttrs(std::string kind, hn::AttrDict attrs) : kind_(std::move(kind)), attrs_(std::move(attrs)) {}

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
  template <typename T>
  T Required(const std::string& key) {
    HN_CHECK(attrs_.count(key), kInvalidArgument)
        << kind_ << ": the required attribute '" << key << "' is missing";
    return Get<T>(key, T{});
  }
  std::optional<std::string> Prefix() {
    accepted_.push_back("prefix");
    auto it = attrs_.find("prefix");
    if (it == attrs_.end()) return std::nullopt;
    used_.insert("prefix");
    return it->second;
  }
  bool Has(const std::string& key) const { return attrs_.count(key) > 0; }
  /// Reads every field the options declare (ForEachField), keeping the defaults of those not
  /// given; an initializer is given by name.
  template <typename Options>
  Options Read(Options options) {
    options.ForEachField([this](const char* key, auto& value, bool required) {
      using T = std::decay_t<decltype(value)>;
      if constexpr (std::is_same_v<T, gluon::InitializerPtr>) {
        std::string name = Get<std::string>(key, "");
        if (!name.empty()) value = gluon::InitializerByName(name);
      } else {
        value = required ? Required<T>(key) : Get<T>(key, value);
      }
    });
    return options;
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

const std::vector<std::pair<std::string, Factory>>& Factories() {
  static const std::vector<std::pair<std::string, Factory>> factories = {
      {"HybridSequential",
       [](LayerAttrs* a) { return std::make_shared<gluon::HybridSequential>(a->Prefix()); }},
      {"Sequential", [](LayerAttrs* a) { return std::make_shared<gluon::Sequential>(a->Prefix()); }},
      {"Dense",
       [](LayerAttrs* a) {
         gluon::DenseOptions options = a->Read(gluon::DenseOptions());
         if (options.activation == "None") options.activation.clear();
         return std::make_shared<gluon::Dense>(options, a->Prefix());
       }},
      {"Activation",
       [](LayerAttrs* a) {
         std::string act = a->Has("act_type") ? a->Required<std::string>("act_type")
                                              : a->Required<std::string>("activation");
         return std::make_shared<gluon::Activation>(act, a->Prefix());
       }},
      {"Dropout",
       [](LayerAttrs* a) {
         return std::make_shared<gluon::Dropout>(a->Required<float>("rate"), a->Prefix());
       }},
      {"Flatten", [](LayerAttrs* a) { return std::make_shared<gluon::Flatten>(a->Prefix()); }},
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

}  // namespace

extern "C" {

int hn_block_create(const char* kind, const char* const* attr_keys, const char* const* attr_values,
                    size_t num_attrs, hn_block** out) noexcept {
  HN_API_BEGIN();
  std::string k = CheckString(kind, "kind");
  CheckOut(out, "out");
  LayerAttrs attrs(k, ToAttrs(attr_keys, attr_values, num_attrs));
  const auto& factories = Factories();
  auto it = std::find_if(factories.begin(), factories.end(),
                         [&](const auto& f) { return f.first == k; });
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
  if (auto* seq = dynamic_cast<gluon::HybridSequential*>(parent->block.get())) {
    HN_CHECK(child->block->AsHybrid() != nullptr, kInvalidArgument)
        << "a HybridSequential takes hybrid blocks only, not a " << child->kind
        << " (use Sequential, or a hybrid layer)";
    seq->Add(child->block);
  } else if (auto* plain = dynamic_cast<gluon::Sequential*>(parent->block.get())) {
    plain->Add(child->block);
  } else {
    HN_THROW(kInvalidArgument) << "blocks can be added to a HybridSequential or a Sequential, not to a "
                               << parent->kind;
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
  for (size_t i = 0; i < num_inputs; ++i) names.push_back(CheckString(input_names[i], "input_names[i]"));
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

void hn_block_free(hn_block* block) noexcept { delete block; }

}  // extern "C"
