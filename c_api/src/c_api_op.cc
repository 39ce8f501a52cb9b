// C API: eager operators (hn_op_*). Everything is read from the one op registry.
#include "c_api_common.h"
#include "hybridnet/imperative.h"
#include "hybridnet/op.h"

using namespace hn_capi;  // NOLINT
namespace hn = ::hybridnet;

namespace {

// The public ops, sorted by name: built once from the registry (which never changes).
const std::vector<const hn::Op*>& PublicOps() {
  static const std::vector<const hn::Op*> ops = [] {
    std::vector<const hn::Op*> list;
    for (const hn::Op* op : hn::OpRegistry::Global().List())
      if (!op->internal) list.push_back(op);
    return list;
  }();
  return ops;
}

const hn::Op& FindOp(const char* op_name) {
  std::string name = CheckString(op_name, "op_name");
  return hn::OpRegistry::Global().Get(name);
}

}  // namespace

extern "C" {

int hn_op_count(size_t* out_count) noexcept {
  HN_API_BEGIN();
  CheckOut(out_count, "out_count");
  *out_count = PublicOps().size();
  HN_API_END();
}

int hn_op_name(size_t index, const char** out_name) noexcept {
  HN_API_BEGIN();
  CheckOut(out_name, "out_name");
  const auto& ops = PublicOps();
  HN_CHECK(index < ops.size(), kInvalidArgument)
      << "index " << index << " is out of range: there are " << ops.size() << " ops";
  *out_name = ops[index]->name.c_str();
  HN_API_END();
}

int hn_op_info(const char* op_name, const char** out_description, size_t* out_num_attrs,
               size_t* out_num_aliases) noexcept {
  HN_API_BEGIN();
  const hn::Op& op = FindOp(op_name);
  if (out_description != nullptr) *out_description = op.description.c_str();
  if (out_num_attrs != nullptr) *out_num_attrs = op.fields.size();
  if (out_num_aliases != nullptr) *out_num_aliases = op.aliases.size();
  HN_API_END();
}

int hn_op_attr(const char* op_name, size_t index, const char** out_key, const char** out_type,
               const char** out_default, int* out_required, const char** out_description) noexcept {
  HN_API_BEGIN();
  const hn::Op& op = FindOp(op_name);
  HN_CHECK(index < op.fields.size(), kInvalidArgument)
      << "index " << index << " is out of range: " << op.name << " has " << op.fields.size()
      << " attributes";
  const hn::FieldInfo& f = op.fields[index];
  if (out_key != nullptr) *out_key = f.key.c_str();
  if (out_type != nullptr) *out_type = f.type.c_str();
  if (out_default != nullptr) *out_default = f.default_text.c_str();
  if (out_required != nullptr) *out_required = f.required ? 1 : 0;
  if (out_description != nullptr) *out_description = f.description.c_str();
  HN_API_END();
}

int hn_op_alias(const char* op_name, size_t index, const char** out_alias) noexcept {
  HN_API_BEGIN();
  const hn::Op& op = FindOp(op_name);
  CheckOut(out_alias, "out_alias");
  HN_CHECK(index < op.aliases.size(), kInvalidArgument)
      << "index " << index << " is out of range: " << op.name << " has " << op.aliases.size()
      << " aliases";
  *out_alias = op.aliases[index].c_str();
  HN_API_END();
}

int hn_op_has_gradient(const char* op_name, int* out_has_gradient) noexcept {
  HN_API_BEGIN();
  CheckOut(out_has_gradient, "out_has_gradient");
  *out_has_gradient = FindOp(op_name).gradient ? 1 : 0;
  HN_API_END();
}

int hn_op_input_names(const char* op_name, const char* const* attr_keys,
                      const char* const* attr_values, size_t num_attrs,
                      const char* const** out_names, size_t* out_count) noexcept {
  HN_API_BEGIN();
  const hn::Op& op = FindOp(op_name);
  CheckOut(out_names, "out_names");
  CheckOut(out_count, "out_count");
  hn::NodeAttrs attrs = hn::MakeNodeAttrs(op, "", ToAttrs(attr_keys, attr_values, num_attrs));
  thread_local NameArray names;  // borrowed until the next call on this thread
  names.Assign(op.InputNames(attrs));
  *out_names = names.ptrs.data();
  *out_count = names.ptrs.size();
  HN_API_END();
}

int hn_op_key_var_num_args(const char* op_name, const char** out_key) noexcept {
  HN_API_BEGIN();
  const hn::Op& op = FindOp(op_name);
  CheckOut(out_key, "out_key");
  *out_key = op.key_var_num_args.c_str();
  HN_API_END();
}

int hn_op_invoke(const char* op_name, hn_tensor* const* inputs, size_t num_inputs,
                 const char* const* attr_keys, const char* const* attr_values, size_t num_attrs,
                 size_t max_outputs, hn_tensor** outputs, size_t* out_num_outputs) noexcept {
  HN_API_BEGIN();
  const hn::Op& op = FindOp(op_name);
  CheckOut(out_num_outputs, "out_num_outputs");
  std::vector<hn::NDArray> in = ToArrays(inputs, num_inputs, "inputs");
  hn::NodeAttrs attrs = hn::MakeNodeAttrs(op, "", ToAttrs(attr_keys, attr_values, num_attrs));
  uint32_t num_out = op.NumOutputs(attrs);
  HN_CHECK(num_out <= max_outputs, kInvalidArgument)
      << op.name << " has " << num_out << " outputs but max_outputs is " << max_outputs;
  StoreTensors(op.name.c_str(), hn::Invoke(attrs, in), max_outputs, outputs, out_num_outputs);
  HN_API_END();
}

int hn_op_onnx_info(const char* op_name, int* out_exportable, size_t* out_num_onnx_ops,
                    const char** out_limits) noexcept {
  HN_API_BEGIN();
  const hn::Op& op = FindOp(op_name);
  if (out_exportable != nullptr) *out_exportable = op.onnx.convert ? 1 : 0;
  if (out_num_onnx_ops != nullptr) *out_num_onnx_ops = op.onnx.onnx_ops.size();
  if (out_limits != nullptr) *out_limits = op.onnx.limits.c_str();
  HN_API_END();
}

int hn_op_onnx_op(const char* op_name, size_t index, const char** out_onnx_op) noexcept {
  HN_API_BEGIN();
  const hn::Op& op = FindOp(op_name);
  CheckOut(out_onnx_op, "out_onnx_op");
  HN_CHECK(index < op.onnx.onnx_ops.size(), kInvalidArgument)
      << "index " << index << " is out of range: " << op.name << " emits "
      << op.onnx.onnx_ops.size() << " ONNX ops";
  *out_onnx_op = op.onnx.onnx_ops[index].c_str();
  HN_API_END();
}

}  // extern "C"
