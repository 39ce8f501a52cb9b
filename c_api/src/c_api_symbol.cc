// C API: symbols (hn_symbol_*) and shape inference results (hn_shape_info_*).
#include <algorithm>

#include "c_api_common.h"
#include "hybridnet/io/json.h"
#include "hybridnet/visualization.h"

using namespace hn_capi;  // NOLINT
namespace hn = ::hybridnet;

namespace {

hn_symbol* NewSymbol(hn::Symbol symbol) {
  auto handle = std::make_unique<hn_symbol>();
  handle->symbol = std::move(symbol);
  return handle.release();
}

hn::Symbol SingleOutput(const hn_symbol* s, size_t i) {
  HN_CHECK(s != nullptr, kInvalidArgument) << "inputs[" << i << "] is NULL";
  HN_CHECK(s->symbol.NumOutputs() == 1, kInvalidArgument)
      << "inputs[" << i << "] " << s->symbol.ToString() << " has " << s->symbol.NumOutputs()
      << " outputs; compose with single-output symbols (use hn_symbol_output)";
  return s->symbol;
}

void EnsureLists(const hn_symbol* s) {
  std::call_once(s->lists_once, [s] {
    s->arguments.Assign(s->symbol.ListArguments());
    s->auxiliary_states.Assign(s->symbol.ListAuxiliaryStates());
    s->outputs.Assign(s->symbol.ListOutputs());
  });
}

void EnsureNodes(const hn_symbol* s) {
  std::call_once(s->nodes_once, [s] {
    hn::IndexedGraph g(s->symbol.outputs);
    for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
      const hn::Node* node = g[nid].node;
      s->node_ops.Add(node->IsVariable() ? "null" : node->attrs.op->name);
      s->node_names.Add(node->name());
    }
  });
}

int ListNames(const hn_symbol* symbol, hn_capi::NameArray hn_symbol::*member,
              const char* const** out_names, size_t* out_count) {
  CheckHandle(symbol, "symbol");
  CheckOut(out_names, "out_names");
  CheckOut(out_count, "out_count");
  EnsureLists(symbol);
  const hn_capi::NameArray& a = symbol->*member;
  *out_names = a.ptrs.data();
  *out_count = a.ptrs.size();
  return HN_OK;
}

}  // namespace

extern "C" {

int hn_symbol_var(const char* name, hn_symbol** out) noexcept {
  HN_API_BEGIN();
  std::string n = CheckString(name, "name");
  CheckOut(out, "out");
  HN_CHECK(!n.empty(), kInvalidArgument) << "a variable needs a non-empty name";
  *out = NewSymbol(hn::Symbol::Var(n));
  HN_API_END();
}

int hn_symbol_create(const char* op_name, hn_symbol* const* inputs, size_t num_inputs,
                     const char* const* attr_keys, const char* const* attr_values, size_t num_attrs,
                     const char* name, hn_symbol** out) noexcept {
  HN_API_BEGIN();
  std::string op = CheckString(op_name, "op_name");
  CheckOut(out, "out");
  HN_CHECK(inputs != nullptr || num_inputs == 0, kInvalidArgument)
      << "argument 'inputs' is NULL but num_inputs is " << num_inputs;
  std::vector<hn::Symbol> in;
  for (size_t i = 0; i < num_inputs; ++i) in.push_back(SingleOutput(inputs[i], i));
  hn::AttrDict attrs = ToAttrs(attr_keys, attr_values, num_attrs);
  *out = NewSymbol(hn::Symbol::Create(op, in, attrs, name != nullptr ? name : ""));
  HN_API_END();
}

int hn_symbol_group(hn_symbol* const* symbols, size_t num_symbols, hn_symbol** out) noexcept {
  HN_API_BEGIN();
  CheckOut(out, "out");
  HN_CHECK(symbols != nullptr && num_symbols > 0, kInvalidArgument)
      << "a group needs at least one symbol";
  std::vector<hn::Symbol> list;
  for (size_t i = 0; i < num_symbols; ++i) {
    HN_CHECK(symbols[i] != nullptr, kInvalidArgument) << "symbols[" << i << "] is NULL";
    list.push_back(symbols[i]->symbol);
  }
  *out = NewSymbol(hn::Symbol::Group(list));
  HN_API_END();
}

int hn_symbol_output(const hn_symbol* symbol, size_t index, hn_symbol** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  CheckOut(out, "out");
  HN_CHECK(index < symbol->symbol.NumOutputs(), kInvalidArgument)
      << "index " << index << " is out of range: " << symbol->symbol.ToString() << " has "
      << symbol->symbol.NumOutputs() << " outputs";
  *out = NewSymbol(symbol->symbol[index]);
  HN_API_END();
}

int hn_symbol_from_tensor(const hn_tensor* tensor, hn_symbol** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(tensor, "tensor");
  CheckOut(out, "out");
  HN_CHECK(tensor->array.is_symbolic(), kInvalidArgument)
      << "the tensor is concrete (it holds values), not a traced graph value";
  hn::Symbol symbol;
  symbol.outputs.push_back(tensor->array.entry());
  *out = NewSymbol(std::move(symbol));
  HN_API_END();
}

int hn_tensor_from_symbol(const hn_symbol* symbol, hn_tensor** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  CheckOut(out, "out");
  HN_CHECK(symbol->symbol.NumOutputs() == 1, kInvalidArgument)
      << symbol->symbol.ToString() << " has " << symbol->symbol.NumOutputs()
      << " outputs; a tensor stands for one (use hn_symbol_output)";
  *out = new hn_tensor{hn::NDArray::FromEntry(symbol->symbol.outputs[0])};
  HN_API_END();
}

int hn_symbol_from_json(const char* json, hn_symbol** out) noexcept {
  HN_API_BEGIN();
  std::string text = CheckString(json, "json");
  CheckOut(out, "out");
  *out = NewSymbol(hn::LoadJSON(text, "<json string>"));
  HN_API_END();
}

int hn_symbol_load(const char* path, hn_symbol** out) noexcept {
  HN_API_BEGIN();
  std::string p = CheckString(path, "path");
  CheckOut(out, "out");
  *out = NewSymbol(hn::Symbol::Load(p));
  HN_API_END();
}

int hn_symbol_save(const hn_symbol* symbol, const char* path) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  std::string p = CheckString(path, "path");
  symbol->symbol.Save(p);
  HN_API_END();
}

int hn_symbol_to_json(const hn_symbol* symbol, char** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  CheckOut(out, "out");
  *out = NewCString(hn::SaveJSON(symbol->symbol));
  HN_API_END();
}

int hn_symbol_inspect_json(const char* json, int* out_mxnet_version, int* out_legacy) noexcept {
  HN_API_BEGIN();
  std::string text = CheckString(json, "json");
  hn::JSONFileInfo info = hn::InspectJSON(text, "<json string>");
  if (out_mxnet_version != nullptr) *out_mxnet_version = info.mxnet_version;
  if (out_legacy != nullptr) *out_legacy = info.legacy_keys ? 1 : 0;
  HN_API_END();
}

int hn_symbol_auto_name(const char* hint, char** out) noexcept {
  HN_API_BEGIN();
  std::string text = CheckString(hint, "hint");
  CheckOut(out, "out");
  HN_CHECK(!text.empty(), kInvalidArgument) << "hn_symbol_auto_name: the hint is empty";
  *out = NewCString(hn::Symbol::NextAutoName(text));
  HN_API_END();
}

int hn_symbol_unsupported_ops(const char* json, char** out) noexcept {
  HN_API_BEGIN();
  std::string text = CheckString(json, "json");
  CheckOut(out, "out");
  std::string lines;
  for (const auto& kv : hn::InspectJSON(text, "<json string>").unsupported_ops) {
    lines += kv.first + "\t";
    for (size_t i = 0; i < kv.second.size(); ++i) lines += (i ? "," : "") + kv.second[i];
    lines += "\n";
  }
  *out = NewCString(lines);
  HN_API_END();
}

void hn_symbol_free(hn_symbol* symbol) noexcept { delete symbol; }

int hn_symbol_list_arguments(const hn_symbol* symbol, const char* const** out_names,
                             size_t* out_count) noexcept {
  HN_API_BEGIN();
  ListNames(symbol, &hn_symbol::arguments, out_names, out_count);
  HN_API_END();
}

int hn_symbol_list_auxiliary_states(const hn_symbol* symbol, const char* const** out_names,
                                    size_t* out_count) noexcept {
  HN_API_BEGIN();
  ListNames(symbol, &hn_symbol::auxiliary_states, out_names, out_count);
  HN_API_END();
}

int hn_symbol_list_outputs(const hn_symbol* symbol, const char* const** out_names,
                           size_t* out_count) noexcept {
  HN_API_BEGIN();
  ListNames(symbol, &hn_symbol::outputs, out_names, out_count);
  HN_API_END();
}

int hn_symbol_num_nodes(const hn_symbol* symbol, size_t* out_count) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  CheckOut(out_count, "out_count");
  EnsureNodes(symbol);
  *out_count = symbol->node_names.ptrs.size();
  HN_API_END();
}

int hn_symbol_node(const hn_symbol* symbol, size_t index, const char** out_op,
                   const char** out_name) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  EnsureNodes(symbol);
  HN_CHECK(index < symbol->node_names.ptrs.size(), kInvalidArgument)
      << "index " << index << " is out of range: the graph has " << symbol->node_names.ptrs.size()
      << " nodes";
  if (out_op != nullptr) *out_op = symbol->node_ops.ptrs[index];
  if (out_name != nullptr) *out_name = symbol->node_names.ptrs[index];
  HN_API_END();
}

int hn_symbol_infer_shape(const hn_symbol* symbol, size_t num_known, const char* const* names,
                          const int* ndims, const int64_t* dims, int partial,
                          hn_shape_info** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  CheckOut(out, "out");
  std::map<std::string, hn::Shape> known = ToShapes(num_known, names, ndims, dims);
  EnsureLists(symbol);
  for (const auto& kv : known) {
    const auto& args = symbol->arguments.names;
    const auto& auxs = symbol->auxiliary_states.names;
    bool is_var = std::find(args.begin(), args.end(), kv.first) != args.end() ||
                  std::find(auxs.begin(), auxs.end(), kv.first) != auxs.end();
    HN_CHECK(is_var, kNotFound) << "'" << kv.first << "' is not a variable of the graph";
  }
  hn::Symbol::ShapeResult r = symbol->symbol.InferShape(known, partial != 0);
  auto info = std::make_unique<hn_shape_info>();
  info->names[HN_SHAPES_ARGUMENTS].Assign(symbol->symbol.ListArguments());
  info->names[HN_SHAPES_OUTPUTS].Assign(symbol->symbol.ListOutputs());
  info->names[HN_SHAPES_AUXILIARY_STATES].Assign(symbol->symbol.ListAuxiliaryStates());
  info->shapes[HN_SHAPES_ARGUMENTS] = r.arg_shapes;
  info->shapes[HN_SHAPES_OUTPUTS] = r.out_shapes;
  info->shapes[HN_SHAPES_AUXILIARY_STATES] = r.aux_shapes;
  for (int g = 0; g < 3; ++g) info->shapes[g].resize(info->names[g].ptrs.size());
  info->complete = r.complete;
  *out = info.release();
  HN_API_END();
}

}  // extern "C"

namespace {

void CheckGroup(const hn_shape_info* info, int group) {
  CheckHandle(info, "info");
  HN_CHECK(group >= HN_SHAPES_ARGUMENTS && group <= HN_SHAPES_AUXILIARY_STATES, kInvalidArgument)
      << "group must be an hn_shape_group (0 to 2), got " << group;
}

}  // namespace

extern "C" {

int hn_shape_info_count(const hn_shape_info* info, int group, size_t* out_count) noexcept {
  HN_API_BEGIN();
  CheckGroup(info, group);
  CheckOut(out_count, "out_count");
  *out_count = info->names[group].ptrs.size();
  HN_API_END();
}

int hn_shape_info_get(const hn_shape_info* info, int group, size_t index, const char** out_name,
                      const int64_t** out_dims, int* out_ndim) noexcept {
  HN_API_BEGIN();
  CheckGroup(info, group);
  size_t count = info->names[group].ptrs.size();
  HN_CHECK(index < count, kInvalidArgument)
      << "index " << index << " is out of range: the group has " << count << " shapes";
  const hn::Shape& s = info->shapes[group][index];
  if (out_name != nullptr) *out_name = info->names[group].ptrs[index];
  if (out_dims != nullptr) *out_dims = s.begin();
  if (out_ndim != nullptr) *out_ndim = static_cast<int>(s.ndim());
  HN_API_END();
}

int hn_shape_info_complete(const hn_shape_info* info, int* out_complete) noexcept {
  HN_API_BEGIN();
  CheckHandle(info, "info");
  CheckOut(out_complete, "out_complete");
  *out_complete = info->complete ? 1 : 0;
  HN_API_END();
}

void hn_shape_info_free(hn_shape_info* info) noexcept { delete info; }

// ---- mx.viz -----------------------------------------------------------------------------

int hn_symbol_print_summary(const hn_symbol* symbol, size_t num_known, const char* const* names,
                            const int* ndims, const int64_t* dims, int line_length,
                            const double* positions, size_t num_positions, char** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  CheckOut(out, "out");
  std::optional<hn::viz::InputShapes> shapes;
  if (num_known > 0) shapes = ToShapes(num_known, names, ndims, dims);
  hn::viz::SummaryLayout layout;
  if (line_length != 0) layout.line_length = line_length;
  if (num_positions > 0) {
    HN_CHECK(positions != nullptr, kInvalidArgument) << "positions is NULL";
    layout.positions.assign(positions, positions + num_positions);
  }
  *out = NewCString(hn::viz::PrintSummary(symbol->symbol, shapes, layout));
  HN_API_END();
}

int hn_symbol_plot_network(const hn_symbol* symbol, const char* title, size_t num_known,
                           const char* const* names, const int* ndims, const int64_t* dims,
                           size_t num_dtypes, const char* const* dtype_names, const int* dtypes,
                           size_t num_node_attrs, const char* const* attr_keys,
                           const char* const* attr_values, int hide_weights, char** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  CheckOut(out, "out");
  hn::viz::PlotOptions options;
  if (title != nullptr) options.title = title;
  if (num_known > 0) options.shapes = ToShapes(num_known, names, ndims, dims);
  if (num_dtypes > 0) {
    HN_CHECK(dtype_names != nullptr && dtypes != nullptr, kInvalidArgument)
        << "dtype_names or dtypes is NULL while num_dtypes is " << num_dtypes;
    options.dtypes.emplace();
    for (size_t i = 0; i < num_dtypes; ++i)
      (*options.dtypes)[CheckString(dtype_names[i], "dtype_names[i]")] = ToDType(dtypes[i]);
  }
  options.node_attrs = ToAttrs(attr_keys, attr_values, num_node_attrs);
  options.hide_weights = hide_weights != 0;
  *out = NewCString(hn::viz::PlotNetwork(symbol->symbol, options));
  HN_API_END();
}

int hn_symbol_as_run(const hn_symbol* symbol, size_t num_known, const char* const* names,
                     const int* ndims, const int64_t* dims, hn_symbol** out) noexcept {
  HN_API_BEGIN();
  CheckHandle(symbol, "symbol");
  CheckOut(out, "out");
  *out = NewSymbol(hn::viz::AsRunGraph(symbol->symbol, ToShapes(num_known, names, ndims, dims)));
  HN_API_END();
}

}  // extern "C"
