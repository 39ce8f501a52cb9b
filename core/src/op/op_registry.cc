#include <algorithm>
#include <sstream>
#include <string>
#include <unordered_map>

#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"
#include "ops/optimizer/update_ops.h"
#include "ops/real_type.h"
#include "ops/register_ops.h"

namespace hybridnet {

Op& Op::SetInputNames(FListNames f) {
  get_num_inputs = [f](const NodeAttrs& attrs) { return static_cast<uint32_t>(f(attrs).size()); };
  list_input_names = std::move(f);
  return *this;
}

Op& Op::SetInputNames(std::vector<std::string> names) {
  num_inputs = static_cast<uint32_t>(names.size());
  list_input_names = [names](const NodeAttrs&) { return names; };
  return *this;
}

std::vector<std::string> Op::InputNames(const NodeAttrs& attrs) const {
  if (list_input_names) return list_input_names(attrs);
  uint32_t n = NumInputs(attrs);
  if (n == 1) return {"data"};
  std::vector<std::string> names;
  for (uint32_t i = 0; i < n; ++i) names.push_back("arg" + std::to_string(i));
  return names;
}

const OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    internal::RegisterAllOps(r);
    // Outside register_ops.h, which every op family includes: the update ops depend on no other
    // family and register after them.
    RegisterOptimizerOps(r);
    return r;
  }();
  return *registry;
}

Op& OpRegistry::Register(const std::string& name) {
  HN_CHECK(by_name_.count(name) == 0, kInternal) << "operator '" << name << "' registered twice";
  ops_.push_back(std::make_unique<Op>(name));
  by_name_[name] = ops_.back().get();
  return *ops_.back();
}

const Op* OpRegistry::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) return it->second;
  for (const auto& op : ops_)
    if (std::find(op->aliases.begin(), op->aliases.end(), name) != op->aliases.end())
      return op.get();
  return nullptr;
}

const Op& OpRegistry::Get(const std::string& name) const {
  const Op* op = Find(name);
  HN_CHECK(op != nullptr, kNotFound) << "unknown operator '" << name << "' (hybridnet registers "
                                     << ops_.size() << " operators; `hybridnet ops` lists them)";
  return *op;
}

std::vector<const Op*> OpRegistry::List() const {
  std::vector<const Op*> ops;
  for (const auto& op : ops_) ops.push_back(op.get());
  std::sort(ops.begin(), ops.end(), [](const Op* a, const Op* b) { return a->name < b->name; });
  return ops;
}

std::string DescribeNode(const NodeAttrs& attrs) {
  std::string op = attrs.op ? attrs.op->name : "variable";
  return attrs.name.empty() ? op : op + "(" + attrs.name + ")";
}

NodeAttrs MakeNodeAttrs(const Op& op, const std::string& node_name, AttrDict dict) {
  NodeAttrs attrs;
  attrs.op = &op;
  attrs.name = node_name;
  attrs.dict = std::move(dict);
  try {
    if (op.parse_param) {
      attrs.parsed = op.parse_param(attrs.dict);
    } else {
      for (const auto& kv : attrs.dict) {
        const std::string& key = kv.first;
        bool hidden = key.size() > 4 && key.compare(0, 2, "__") == 0 &&
                      key.compare(key.size() - 2, 2, "__") == 0;
        if (!hidden) internal::ThrowUnknownKey(key, {});
      }
    }
  } catch (const Error& e) {
    HN_THROW(kInvalidArgument) << DescribeNode(attrs) << ": " << e.what();
  }
  return attrs;
}

NodeAttrs MakeNodeAttrs(const std::string& op_name, const std::string& node_name, AttrDict dict) {
  return MakeNodeAttrs(OpRegistry::Global().Get(op_name), node_name, std::move(dict));
}

namespace internal {

const NodeAttrs& CachedNodeAttrs(const std::string& op_name, const AttrDict& attrs) {
  thread_local std::unordered_map<std::string, NodeAttrs> cache;
  std::string key = op_name;
  for (const auto& kv : attrs) key += '\0' + kv.first + '\0' + kv.second;
  constexpr size_t kMaxCached = 1024;  // bounded: varying scalars must not grow it forever
  auto it = cache.find(key);
  if (it == cache.end() && cache.size() >= kMaxCached) cache.clear();
  if (it == cache.end()) it = cache.emplace(key, MakeNodeAttrs(op_name, "", attrs)).first;
  return it->second;
}

void ThrowParamError(const std::string& key, const std::string& value,
                     const std::string& expected) {
  HN_THROW(kInvalidArgument) << "attribute '" << key << "'='" << value << "': expected "
                             << expected;
}

void ThrowUnknownKey(const std::string& key, const std::vector<FieldInfo>& fields) {
  Error err(StatusCode::kInvalidArgument);
  err << "unknown attribute '" << key << "'";
  if (fields.empty()) {
    err << " (this operator takes no attributes)";
  } else {
    err << " (known:";
    for (size_t i = 0; i < fields.size(); ++i) err << (i ? ", " : " ") << fields[i].key;
    err << ")";
  }
  throw err;
}

void ThrowMissingKey(const std::string& key) {
  HN_THROW(kInvalidArgument) << "required attribute '" << key << "' is missing";
}

}  // namespace internal

namespace {

template <typename T, typename Unknown>
bool MergeAll(const NodeAttrs& attrs, std::vector<T>* in, std::vector<T>* out, Unknown is_unknown,
              bool (*merge)(const T&, T*), const char* what, StatusCode conflict_code) {
  T common{};
  bool have = false;
  auto visit = [&](const T& v, const char* side, size_t i) {
    if (is_unknown(v)) return;
    if (!have) {
      common = v;
      have = true;
      return;
    }
    if (!merge(v, &common)) {
      std::ostringstream os;
      os << v;
      throw Error(conflict_code) << DescribeNode(attrs) << ": " << side << " " << i << " " << what
                                 << " " << os.str() << " does not match the others";
    }
  };
  for (size_t i = 0; i < in->size(); ++i) visit((*in)[i], "input", i);
  for (size_t i = 0; i < out->size(); ++i) visit((*out)[i], "output", i);
  if (!have) return false;
  bool complete = true;
  for (auto* list : {in, out})
    for (auto& v : *list) {
      merge(common, &v);
      complete = complete && !is_unknown(v);
    }
  return complete;
}

bool MergeDType(const DType& known, DType* target) {
  if (known == DType::kUnknown) return true;
  if (*target == DType::kUnknown) *target = known;
  return *target == known;
}

}  // namespace

bool ElemwiseShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  MergeAll<Shape>(
      attrs, in, out, [](const Shape& s) { return s.ndim() == 0; }, MergeShape, "shape",
      StatusCode::kShapeError);
  auto known = [](const Shape& s) { return s.IsKnown(); };
  return std::all_of(in->begin(), in->end(), known) && std::all_of(out->begin(), out->end(), known);
}

bool ElemwiseType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return MergeAll<DType>(
      attrs, in, out, [](DType d) { return d == DType::kUnknown; }, MergeDType, "dtype",
      StatusCode::kTypeError);
}

bool ElemwiseFloatType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  bool complete = ElemwiseType(attrs, in, out);
  for (size_t i = 0; i < in->size(); ++i) {
    HN_CHECK((*in)[i] == DType::kUnknown || (*in)[i] == DType::kFloat32, kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName((*in)[i])
        << "; this operator computes in float32 (Cast the input first)";
  }
  if (!complete) {
    for (auto* list : {in, out})
      for (auto& d : *list) d = DType::kFloat32;
  }
  return true;
}

namespace internal {

bool NumericType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  bool complete = ElemwiseType(attrs, in, out);
  for (size_t i = 0; i < in->size(); ++i) {
    HN_CHECK((*in)[i] == DType::kUnknown || IsNumericDType((*in)[i]), kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName((*in)[i])
        << "; this operator computes in float32, float64, uint8, int8, int32 or int64 (Cast "
           "the input first)";
  }
  return complete;
}

bool RealType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  bool complete = ElemwiseType(attrs, in, out);
  for (size_t i = 0; i < in->size(); ++i) {
    HN_CHECK(
        (*in)[i] == DType::kUnknown || (*in)[i] == DType::kFloat32 || (*in)[i] == DType::kFloat64,
        kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName((*in)[i])
        << "; this operator computes in float32 or float64 (Cast the input first)";
  }
  return complete;
}

}  // namespace internal
}  // namespace hybridnet
