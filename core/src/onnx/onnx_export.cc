// ONNX export (hybridnet/onnx.h): walks the graph in topological order and lets each op's
// converter (Op::onnx, onnx_convert.h) emit ONNX nodes into a ModelProto built with the
// official onnx.proto schema, compiled by protoc at build time (lite runtime, so no descriptor
// is registered and another copy of onnx.proto in the same process cannot clash).
//
// Shapes: inferred once for the given input shapes. With dynamic_batch the inference runs a
// second time with every data input's batch doubled; the dims that change follow the batch
// size (OnnxValue::batch_dims) and are written as symbolic dims; a graph that rejects another
// batch size is refused with the node that fixes it.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_set>

#include "hybridnet/onnx.h"
#include "onnx/onnx.pb.h"
#include "onnx/onnx_convert.h"
#include "pass/passes.h"

namespace hybridnet {

namespace {

constexpr const char* kBatchDimName = "N";

onnx::TensorProto_DataType OnnxDType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return onnx::TensorProto_DataType_FLOAT;
    case DType::kFloat64:
      return onnx::TensorProto_DataType_DOUBLE;
    case DType::kFloat16:
      return onnx::TensorProto_DataType_FLOAT16;
    case DType::kBFloat16:
      return onnx::TensorProto_DataType_BFLOAT16;
    case DType::kUint8:
      return onnx::TensorProto_DataType_UINT8;
    case DType::kInt8:
      return onnx::TensorProto_DataType_INT8;
    case DType::kInt16:
      return onnx::TensorProto_DataType_INT16;
    case DType::kUint16:
      return onnx::TensorProto_DataType_UINT16;
    case DType::kInt32:
      return onnx::TensorProto_DataType_INT32;
    case DType::kUint32:
      return onnx::TensorProto_DataType_UINT32;
    case DType::kInt64:
      return onnx::TensorProto_DataType_INT64;
    case DType::kUint64:
      return onnx::TensorProto_DataType_UINT64;
    case DType::kBool:
      return onnx::TensorProto_DataType_BOOL;
    case DType::kUnknown:
      break;
  }
  HN_THROW(kTypeError) << "dtype " << DTypeName(dtype) << " has no ONNX tensor type";
}

void SetAttr(onnx::AttributeProto* a, const OnnxAttr& attr) {
  a->set_name(attr.name);
  if (const auto* i = std::get_if<int64_t>(&attr.value)) {
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(*i);
  } else if (const auto* f = std::get_if<float>(&attr.value)) {
    a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    a->set_f(*f);
  } else if (const auto* s = std::get_if<std::string>(&attr.value)) {
    a->set_type(onnx::AttributeProto_AttributeType_STRING);
    a->set_s(*s);
  } else if (const auto* is = std::get_if<std::vector<int64_t>>(&attr.value)) {
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t v : *is) a->add_ints(v);
  } else {
    a->set_type(onnx::AttributeProto_AttributeType_FLOATS);
    for (float v : std::get<std::vector<float>>(attr.value)) a->add_floats(v);
  }
}

// Tensor contents as little-endian raw bytes (the host order of every platform we build on).
void SetTensor(onnx::TensorProto* t, const std::string& name, const Shape& shape, DType dtype,
               const void* data, size_t bytes) {
  t->set_name(name);
  t->set_data_type(OnnxDType(dtype));
  for (int64_t d : shape) t->add_dims(d);
  t->set_raw_data(data, bytes);
}

void SetType(onnx::ValueInfoProto* v, const std::string& name, const Shape& shape, DType dtype,
             const std::vector<bool>& batch_dims, const std::vector<bool>& batch_named) {
  v->set_name(name);
  auto* tensor = v->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(OnnxDType(dtype));
  auto* dims = tensor->mutable_shape();
  for (size_t i = 0; i < shape.ndim(); ++i) {
    auto* dim = dims->add_dim();
    if (i < batch_dims.size() && batch_dims[i]) {
      // A dim equal to the batch size is "N"; other batch-dependent dims stay unnamed.
      if (i < batch_named.size() && batch_named[i]) dim->set_dim_param(kBatchDimName);
    } else {
      dim->set_dim_value(shape[i]);
    }
  }
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += "\n  " + l;
  return text;
}

}  // namespace

namespace internal {

// The GraphProto under construction: unique value and node names, and which graph node the
// ONNX nodes being added come from (their name prefix and doc_string).
class OnnxGraphBuilder {
 public:
  OnnxGraphBuilder(onnx::GraphProto* graph, int opset) : graph_(graph), opset_(opset) {}

  int opset() const { return opset_; }

  void Reserve(const std::string& name) { values_.insert(name); }
  bool Taken(const std::string& name) const { return values_.count(name) > 0; }

  std::string UniqueValue(const std::string& hint) {
    std::string name = hint;
    for (int k = 1; values_.count(name); ++k) name = hint + "_" + std::to_string(k);
    values_.insert(name);
    return name;
  }

  void BeginSource(const NodeAttrs& attrs, const std::string& primary_output) {
    source_ = attrs.name;
    primary_output_ = primary_output;
    doc_ = "from " + DescribeNode(attrs);
  }

  std::string Fresh(const std::string& op_type) { return UniqueValue(source_ + "/" + op_type); }

  void AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
               const std::vector<std::string>& outputs, const std::vector<OnnxAttr>& attrs) {
    onnx::NodeProto* node = graph_->add_node();
    node->set_op_type(op_type);
    // The node producing the graph node's first output carries its name; helpers get
    // "<name>/<OpType>".
    bool primary = std::find(outputs.begin(), outputs.end(), primary_output_) != outputs.end();
    std::string name = primary ? source_ : source_ + "/" + op_type;
    for (int k = 1; nodes_.count(name); ++k)
      name = source_ + "/" + op_type + "_" + std::to_string(k);
    nodes_.insert(name);
    node->set_name(name);
    node->set_doc_string(doc_);
    for (const auto& i : inputs) node->add_input(i);
    for (const auto& o : outputs) {
      node->add_output(o);
      defined_.insert(o);
    }
    for (const auto& a : attrs) SetAttr(node->add_attribute(), a);
  }

  std::string AddConstant(const std::string& hint, const Shape& shape, DType dtype,
                          const void* data, size_t bytes) {
    std::string name = UniqueValue(source_ + "/" + hint);
    SetTensor(graph_->add_initializer(), name, shape, dtype, data, bytes);
    defined_.insert(name);
    return name;
  }

  bool Defined(const std::string& name) const { return defined_.count(name) > 0; }

 private:
  onnx::GraphProto* graph_;
  int opset_;
  std::unordered_set<std::string> values_, nodes_, defined_;
  std::string source_, primary_output_, doc_;
};

}  // namespace internal

// ---- OnnxValue / OnnxNodeContext -------------------------------------------------------------

bool OnnxValue::HasBatchDim() const {
  return std::any_of(batch_dims.begin(), batch_dims.end(), [](bool b) { return b; });
}

OnnxNodeContext::OnnxNodeContext(internal::OnnxGraphBuilder* builder, const NodeAttrs& attrs,
                                 std::vector<OnnxValue> inputs, std::vector<OnnxValue> outputs,
                                 std::vector<bool> used)
    : builder_(builder),
      attrs_(attrs),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      used_(std::move(used)) {}

int OnnxNodeContext::opset() const { return builder_->opset(); }

std::vector<std::string> OnnxNodeContext::input_names() const {
  std::vector<std::string> names;
  for (const auto& v : inputs_) names.push_back(v.name);
  return names;
}

std::string OnnxNodeContext::Add(const std::string& op_type, const std::vector<std::string>& inputs,
                                 const std::vector<OnnxAttr>& attrs, const std::string& to) {
  return AddMulti(op_type, inputs, attrs, {to})[0];
}

std::vector<std::string> OnnxNodeContext::AddMulti(const std::string& op_type,
                                                   const std::vector<std::string>& inputs,
                                                   const std::vector<OnnxAttr>& attrs,
                                                   std::vector<std::string> to) {
  for (auto& name : to)
    if (name.empty()) name = builder_->Fresh(op_type);
  builder_->AddNode(op_type, inputs, to, attrs);
  return to;
}

std::string OnnxNodeContext::Int64s(const std::vector<int64_t>& values) {
  return builder_->AddConstant("const", Shape{static_cast<int64_t>(values.size())}, DType::kInt64,
                               values.data(), values.size() * sizeof(int64_t));
}

std::string OnnxNodeContext::Scalar(double value, DType dtype) {
  NDArray one = NDArray::Full(Shape{1}, value, dtype);
  return builder_->AddConstant("const", Shape(), dtype, one.raw_data(), one.nbytes());
}

std::string OnnxNodeContext::Floats(const std::vector<float>& values,
                                    const std::vector<int64_t>& dims) {
  Shape shape(dims);
  HN_CHECK(shape.Size() == static_cast<int64_t>(values.size()), kInternal)
      << "ONNX constant of shape " << shape << " given " << values.size() << " values";
  return builder_->AddConstant("const", shape, DType::kFloat32, values.data(),
                               values.size() * sizeof(float));
}

std::string OnnxNodeContext::Unsqueeze(const std::string& x, const std::vector<int64_t>& axes,
                                       const std::string& to) {
  return Add("Unsqueeze", {x, Int64s(axes)}, {}, to);
}

std::string OnnxNodeContext::Squeeze(const std::string& x, const std::vector<int64_t>& axes,
                                     const std::string& to) {
  return Add("Squeeze", {x, Int64s(axes)}, {}, to);
}

std::string OnnxNodeContext::Reduce(const std::string& op_type, const std::string& x,
                                    const std::vector<int64_t>& axes, bool keepdims,
                                    const std::string& to) {
  HN_CHECK(!axes.empty(), kInternal) << "ONNX " << op_type << " without axes";
  const int64_t keep = keepdims ? 1 : 0;
  // ReduceSum takes its axes as an input from opset 13, the other reductions from opset 18.
  if (op_type == "ReduceSum" || opset() >= 18) {
    return Add(op_type, {x, Int64s(axes)}, {{"keepdims", keep}}, to);
  }
  return Add(op_type, {x}, {{"axes", axes}, {"keepdims", keep}}, to);
}

std::string OnnxNodeContext::Cast(const std::string& x, DType dtype, const std::string& to) {
  return Add("Cast", {x}, {{"to", static_cast<int64_t>(OnnxDType(dtype))}}, to);
}

std::string OnnxNodeContext::Reshape(const std::string& x, const Shape& shape,
                                     const std::vector<bool>& batch_dims, const std::string& to) {
  std::vector<int64_t> target = shape.dims();
  size_t batch = 0;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] <= 0) NotExportable("reshapes to the empty shape " + shape.ToString());
    if (i < batch_dims.size() && batch_dims[i]) {
      target[i] = -1;
      ++batch;
    }
  }
  if (batch > 1) {
    NotExportable("reshapes to " + shape.ToString() +
                  ", where several dimensions follow the batch size; export without a dynamic "
                  "batch axis");
  }
  return Add("Reshape", {x, Int64s(target)}, {}, to);
}

std::string OnnxNodeContext::ReshapeToOutput(const std::string& x, size_t i) {
  return Reshape(x, out(i).shape, out(i).batch_dims, out(i).name);
}

// Expand broadcasts both ways, so a kept dimension is written as 1: the target needs no
// dimension that follows the batch size.
std::string OnnxNodeContext::ExpandToOutput(const OnnxValue& x, size_t i) {
  const OnnxValue& y = out(i);
  std::vector<int64_t> target(y.shape.ndim(), 1);
  const size_t lead = y.shape.ndim() - x.shape.ndim();
  for (size_t d = 0; d < target.size(); ++d) {
    if (d >= lead && x.shape[d - lead] == y.shape[d]) continue;
    if (y.batch_dims[d]) {
      NotExportable("broadcasts axis " + std::to_string(d) +
                    " to the batch size; export without a dynamic batch axis");
    }
    target[d] = y.shape[d];
  }
  return Add("Expand", {x.name, Int64s(target)}, {}, y.name);
}

std::string OnnxNodeContext::SliceToOutput(const OnnxValue& x, size_t i) {
  const OnnxValue& y = out(i);
  std::vector<int64_t> ends, axes;
  for (size_t d = 0; d < y.shape.ndim(); ++d) {
    if (x.shape[d] == y.shape[d]) continue;
    if (y.batch_dims[d] || x.batch_dims[d]) {
      NotExportable("cuts axis " + std::to_string(d) +
                    ", which follows the batch size; export without a dynamic batch axis");
    }
    ends.push_back(y.shape[d]);
    axes.push_back(static_cast<int64_t>(d));
  }
  if (axes.empty()) return Add("Identity", {x.name}, {}, y.name);
  std::vector<int64_t> starts(axes.size(), 0);
  return Add("Slice", {x.name, Int64s(starts), Int64s(ends), Int64s(axes)}, {}, y.name);
}

std::string OnnxNodeContext::LeadingDimsThen(const OnnxValue& x, size_t keep,
                                             const std::vector<int64_t>& tail) {
  const bool dynamic =
      std::any_of(x.batch_dims.begin(), x.batch_dims.begin() + static_cast<std::ptrdiff_t>(keep),
                  [](bool b) { return b; });
  if (!dynamic) {
    std::vector<int64_t> dims(x.shape.begin(),
                              x.shape.begin() + static_cast<std::ptrdiff_t>(keep));
    dims.insert(dims.end(), tail.begin(), tail.end());
    return Int64s(dims);
  }
  const std::string head =
      Add("Slice", {Add("Shape", {x.name}), Int64s({0}), Int64s({static_cast<int64_t>(keep)})});
  return Add("Concat", {head, Int64s(tail)}, {{"axis", int64_t{0}}});
}

void OnnxNodeContext::NotExportable(const std::string& why) const {
  throw internal::OnnxNotExportable{why};
}

FOnnxConvert OnnxSameOp(std::string op_type, std::vector<OnnxAttr> attrs) {
  return [op_type, attrs](OnnxNodeContext* ctx) {
    ctx->Add(op_type, ctx->input_names(), attrs, ctx->out(0).name);
  };
}

namespace {

bool IsFloatDType(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16;
}

bool IsNarrowInteger(DType d) {
  return d == DType::kInt8 || d == DType::kUint8 || d == DType::kInt16 || d == DType::kUint16;
}

constexpr const char* kNarrowIntegerLimit = "8- and 16-bit integers at opset 13";

void RefuseNarrowIntegersBefore14(OnnxNodeContext* ctx, DType dtype, const std::string& op_type) {
  if (ctx->opset() < 14 && IsNarrowInteger(dtype)) {
    ctx->NotExportable("computes in " + std::string(DTypeName(dtype)) + ", which ONNX's " +
                       op_type + " takes from opset 14; export with --opset 14 or later");
  }
}

// Add, Sub and Mul take 8- and 16-bit integers from opset 14 only.
bool NarrowIntegersFrom14(const std::string& op_type) {
  return op_type == "Add" || op_type == "Sub" || op_type == "Mul";
}

}  // namespace

OnnxBinaryForm OnnxArithmetic(std::string op_type, bool float_only) {
  OnnxBinaryForm form;
  form.onnx_ops = {op_type};
  if (float_only) {
    form.limits = "integer dtypes (MXNet's integer results differ from ONNX's)";
  } else if (NarrowIntegersFrom14(op_type)) {
    form.limits = kNarrowIntegerLimit;
  }
  form.emit = [op_type, float_only](OnnxNodeContext* ctx, const std::string& a,
                                    const std::string& b, DType dtype, const std::string& to) {
    if (float_only && !IsFloatDType(dtype)) {
      ctx->NotExportable("computes in " + std::string(DTypeName(dtype)) + "; " + op_type +
                         " exports for float dtypes only (MXNet's integer results, such as "
                         "x / 0 = 0, are not ONNX's)");
    }
    if (NarrowIntegersFrom14(op_type)) RefuseNarrowIntegersBefore14(ctx, dtype, op_type);
    ctx->Add(op_type, {a, b}, {}, to);
  };
  return form;
}

OnnxBinaryForm OnnxComparison(std::string op_type, bool negate) {
  OnnxBinaryForm form;
  form.onnx_ops = {op_type, "Cast"};
  if (negate) form.onnx_ops.push_back("Not");
  form.emit = [op_type, negate](OnnxNodeContext* ctx, const std::string& a, const std::string& b,
                                DType, const std::string& to) {
    std::string truth = ctx->Add(op_type, {a, b});
    if (negate) truth = ctx->Add("Not", {truth});
    ctx->Cast(truth, ctx->out(0).dtype, to);
  };
  return form;
}

OnnxBinaryForm OnnxLogical(std::string op_type) {
  OnnxBinaryForm form;
  form.onnx_ops = {op_type, "Cast"};
  form.emit = [op_type](OnnxNodeContext* ctx, const std::string& a, const std::string& b, DType,
                        const std::string& to) {
    const std::string truth =
        ctx->Add(op_type, {ctx->Cast(a, DType::kBool), ctx->Cast(b, DType::kBool)});
    ctx->Cast(truth, ctx->out(0).dtype, to);
  };
  return form;
}

OnnxMapping OnnxBinaryOp(const OnnxBinaryForm& form) {
  auto convert = [emit = form.emit](OnnxNodeContext* ctx) {
    emit(ctx, ctx->in(0).name, ctx->in(1).name, ctx->in(0).dtype, ctx->out(0).name);
  };
  return OnnxMapping{form.onnx_ops, convert, form.limits};
}

// ---- the export --------------------------------------------------------------------------------

int OnnxIrVersion(int opset) {
  if (opset <= 13) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  return 10;
}

namespace {

// `names` joined by ", ", at most `max` of them ("a, b, c and 12 more").
std::string NameList(const std::vector<std::string>& names, size_t max = 6) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < max; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > max) list += " and " + std::to_string(names.size() - max) + " more";
  return list;
}

class Exporter {
 public:
  Exporter(const Symbol& symbol, const std::map<std::string, NDArray>& params,
           const OnnxExportOptions& options)
      : symbol_(symbol),
        params_(params),
        options_(options),
        g_(symbol.outputs),
        hintless_(WithoutGivenHints(symbol, options)),
        hintless_g_(hintless_.outputs) {}

  std::string Run() {
    HN_CHECK(options_.opset >= kOnnxMinOpset && options_.opset <= kOnnxMaxOpset, kInvalidArgument)
        << "ONNX opset " << options_.opset << " is not supported: choose " << kOnnxMinOpset
        << " to " << kOnnxMaxOpset << " (default " << kOnnxDefaultOpset << ")";
    ClassifyVariables();
    InferShapesAndTypes();
    onnx::ModelProto model;
    model.set_ir_version(OnnxIrVersion(options_.opset));
    model.set_producer_name("hybridnet");
    if (!options_.producer_version.empty()) model.set_producer_version(options_.producer_version);
    model.set_doc_string("Converted from an MXNet symbol by hybridnet");
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(options_.opset);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name(options_.graph_name);
    internal::OnnxGraphBuilder builder(graph, options_.opset);
    NameEntries(&builder);
    ConvertNodes(&builder);
    WriteInputsAndOutputs(graph, &builder);
    const size_t bytes = model.ByteSizeLong();
    HN_CHECK(bytes <= static_cast<size_t>(std::numeric_limits<int32_t>::max()), kUnsupported)
        << "the ONNX model is " << bytes << " bytes; a single ONNX protobuf holds at most "
        << "2 GiB (external data files are not written by this exporter)";
    std::string out;
    HN_CHECK(model.SerializeToString(&out), kInternal) << "ONNX protobuf serialization failed";
    return out;
  }

 private:
  // A copy of the graph in which the inputs with a given shape have no "__shape__" hint: shape
  // inference runs on it, so a given shape (or the doubled batch) overrides the hint. Its
  // node and entry ids are the original's (the same graph, walked in the same order).
  static Symbol WithoutGivenHints(const Symbol& symbol, const OnnxExportOptions& options) {
    Symbol copy = symbol.Copy();
    IndexedGraph g(copy.outputs);
    for (uint32_t nid : g.input_nodes()) {
      Node* node = g[nid].owner.get();
      if (node != nullptr && options.input_shapes.count(node->name())) {
        node->attrs.dict.erase("__shape__");
      }
    }
    return copy;
  }

  // Shapes of every entry for the variables' shapes: the parameters' and the given data
  // inputs' with their batch multiplied by `batch_factor` (the other inputs are inferred, or
  // have "__shape__").
  std::vector<Shape> InferEntryShapes(int64_t batch_factor) const {
    std::vector<Shape> shapes(hintless_g_.num_entries());
    for (const auto& kv : param_of_) shapes[hintless_g_.entry_id(kv.first, 0)] = kv.second->shape();
    for (const auto& kv : data_shapes_) {
      Shape s = kv.second;
      s[0] *= batch_factor;
      shapes[hintless_g_.entry_id(kv.first, 0)] = s;
    }
    internal::InferShapes(hintless_g_, &shapes);
    return shapes;
  }

  // Variables: parameters (initializers) or graph inputs, some with a given shape.
  void ClassifyVariables() {
    std::vector<std::string> graph_inputs;
    for (uint32_t nid : g_.input_nodes()) {
      const Node* node = g_[nid].node;
      auto it = params_.find(node->name());
      if (it != params_.end()) {
        HN_CHECK(!it->second.is_none() && !it->second.is_symbolic(), kInvalidArgument)
            << "parameter '" << node->name() << "' has no value";
        param_of_[nid] = &it->second;
        continue;
      }
      graph_inputs.push_back(node->name());
      input_nodes_.push_back(nid);
      auto given = options_.input_shapes.find(node->name());
      if (given != options_.input_shapes.end()) {
        HN_CHECK(given->second.IsKnown(), kInvalidArgument)
            << "input '" << node->name() << "': shape " << given->second
            << " has unknown (0) dimensions";
        data_shapes_[nid] = given->second;
      }
    }
    std::vector<std::string> named;
    for (const auto& kv : options_.input_shapes) named.push_back(kv.first);
    for (const auto& kv : options_.input_dtypes) named.push_back(kv.first);
    for (const auto& given_name : named) {
      bool found =
          std::find(graph_inputs.begin(), graph_inputs.end(), given_name) != graph_inputs.end();
      if (found) continue;
      HN_CHECK(!params_.count(given_name), kInvalidArgument)
          << "'" << given_name << "' is a parameter of the model, not an input; its shape comes "
          << "from its value";
      HN_THROW(kNotFound) << "the graph has no input '" << given_name << "' (inputs: "
                          << (graph_inputs.empty() ? "none" : NameList(graph_inputs)) << ")";
    }
  }

  void InferShapesAndTypes() {
    shapes_ = InferEntryShapes(1);
    std::vector<std::string> unknown_inputs;
    for (uint32_t nid : input_nodes_) {
      if (!shapes_[g_.entry_id(nid, 0)].IsKnown()) unknown_inputs.push_back(g_[nid].node->name());
    }
    if (!unknown_inputs.empty()) {
      const bool one = unknown_inputs.size() == 1;
      HN_THROW(kShapeError) << "the shape" << (one ? " of input " : "s of inputs ")
                            << NameList(unknown_inputs) << " cannot be inferred; give "
                            << (one ? "it" : "the data inputs' shapes")
                            << " (input_shapes, or --input NAME=D1,D2,... on the command line)";
    }
    for (uint32_t nid = 0; nid < g_.num_nodes(); ++nid) {
      for (uint32_t i = 0; i < g_[nid].node->NumOutputs(); ++i) {
        HN_CHECK(shapes_[g_.entry_id(nid, i)].IsKnown(), kShapeError)
            << "cannot infer the shape of output " << i << " of "
            << DescribeNode(g_[nid].node->attrs) << " from the input shapes";
      }
    }
    types_.assign(g_.num_entries(), DType::kUnknown);
    for (const auto& kv : param_of_) types_[g_.entry_id(kv.first, 0)] = kv.second->dtype();
    for (uint32_t nid : input_nodes_) {
      auto given = options_.input_dtypes.find(g_[nid].node->name());
      if (given != options_.input_dtypes.end()) {
        types_[g_.entry_id(nid, 0)] = given->second;
      } else if (!g_[nid].node->attrs.dict.count("__dtype__")) {
        types_[g_.entry_id(nid, 0)] = DType::kFloat32;
      }
    }
    HN_CHECK(internal::InferTypes(g_, &types_), kTypeError)
        << "cannot infer every dtype of the graph";

    batch_dims_.assign(g_.num_entries(), {});
    batch_named_.assign(g_.num_entries(), {});
    for (size_t e = 0; e < shapes_.size(); ++e) {
      batch_dims_[e].assign(shapes_[e].ndim(), false);
      batch_named_[e].assign(shapes_[e].ndim(), false);
    }
    if (!options_.dynamic_batch) return;
    HN_CHECK(!data_shapes_.empty(), kInvalidArgument)
        << "a dynamic batch axis needs the shapes of the data inputs (input_shapes)";
    const int64_t batch = data_shapes_.begin()->second[0];
    std::vector<Shape> doubled;
    try {
      doubled = InferEntryShapes(2);
    } catch (const Error& e) {
      HN_THROW(kUnsupported) << "the graph does not accept another batch size, so it cannot get a "
                             << "dynamic batch axis (with the batch doubled: " << e.what()
                             << "); export without it";
    }
    for (size_t e = 0; e < shapes_.size(); ++e) {
      HN_CHECK(doubled[e].ndim() == shapes_[e].ndim() && doubled[e].IsKnown(), kUnsupported)
          << "the graph does not accept another batch size (the rank of an output changes), so "
          << "it cannot get a dynamic batch axis; export without it";
      for (size_t d = 0; d < shapes_[e].ndim(); ++d) {
        batch_dims_[e][d] = shapes_[e][d] != doubled[e][d];
        batch_named_[e][d] =
            batch_dims_[e][d] && shapes_[e][d] == batch && doubled[e][d] == 2 * batch;
      }
    }
  }

  // Graph outputs keep Symbol::ListOutputs names; other entries get "<node>_output[i]".
  void NameEntries(internal::OnnxGraphBuilder* builder) {
    names_.assign(g_.num_entries(), "");
    used_.assign(g_.num_entries(), false);
    for (uint32_t nid : g_.input_nodes()) {
      names_[g_.entry_id(nid, 0)] = g_[nid].node->name();
      builder->Reserve(g_[nid].node->name());
    }
    std::vector<std::string> output_names = symbol_.ListOutputs();
    for (size_t k = 0; k < g_.outputs().size(); ++k) {
      uint32_t e = g_.entry_id(g_.outputs()[k]);
      used_[e] = true;
      if (names_[e].empty()) names_[e] = builder->UniqueValue(output_names[k]);
    }
    for (uint32_t nid = 0; nid < g_.num_nodes(); ++nid) {
      const Node* node = g_[nid].node;
      for (const auto& in : g_[nid].inputs) used_[g_.entry_id(in)] = true;
      if (node->IsVariable()) continue;
      const uint32_t n = node->NumOutputs();
      for (uint32_t i = 0; i < n; ++i) {
        std::string& name = names_[g_.entry_id(nid, i)];
        if (name.empty()) {
          name = builder->UniqueValue(node->name() + "_output" +
                                      (n == 1 ? std::string() : std::to_string(i)));
        }
      }
    }
  }

  OnnxValue Value(uint32_t e) const {
    return OnnxValue{names_[e], shapes_[e], types_[e], batch_dims_[e]};
  }

  void ConvertNodes(internal::OnnxGraphBuilder* builder) {
    // (operator, why) -> its nodes, reported together as main's unsupported-operator error does.
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> failures;
    size_t failed_nodes = 0;
    for (uint32_t nid = 0; nid < g_.num_nodes(); ++nid) {
      const Node* node = g_[nid].node;
      if (node->IsVariable()) continue;
      const Op& op = *node->attrs.op;
      if (!op.onnx.convert) {
        failures[{op.name, "no ONNX mapping"}].push_back(node->name());
        ++failed_nodes;
        continue;
      }
      std::vector<OnnxValue> inputs, outputs;
      std::vector<bool> used;
      for (const auto& in : g_[nid].inputs) inputs.push_back(Value(g_.entry_id(in)));
      for (uint32_t i = 0; i < node->NumOutputs(); ++i) {
        outputs.push_back(Value(g_.entry_id(nid, i)));
        used.push_back(used_[g_.entry_id(nid, i)]);
      }
      builder->BeginSource(node->attrs, outputs.empty() ? "" : outputs[0].name);
      OnnxNodeContext ctx(builder, node->attrs, std::move(inputs), outputs, used);
      try {
        op.onnx.convert(&ctx);
      } catch (const internal::OnnxNotExportable& e) {
        failures[{op.name, e.why}].push_back(node->name());
        ++failed_nodes;
        continue;
      } catch (const Error& e) {
        throw Error(e.code()) << "ONNX export of " << DescribeNode(node->attrs) << ": " << e.what();
      }
      for (size_t i = 0; i < outputs.size(); ++i) {
        HN_CHECK(!used[i] || builder->Defined(outputs[i].name), kInternal)
            << "ONNX export of " << DescribeNode(node->attrs) << ": the converter of " << op.name
            << " did not produce output " << i << " ('" << outputs[i].name << "')";
      }
    }
    if (failures.empty()) return;
    constexpr size_t kNodesShown = 5;
    std::vector<std::string> lines;
    for (const auto& [op_and_why, nodes] : failures) {
      std::vector<std::string> quoted;
      for (const auto& n : nodes) quoted.push_back("'" + n + "'");
      lines.push_back("'" + op_and_why.first + "' (node" + (nodes.size() > 1 ? "s " : " ") +
                      NameList(quoted, kNodesShown) + "): " + op_and_why.second);
    }
    HN_THROW(kUnsupported) << "cannot export to ONNX: " << failed_nodes << " node"
                           << (failed_nodes > 1 ? "s do" : " does")
                           << " not convert (`hybridnet ops --onnx` lists what each operator "
                              "exports):"
                           << JoinLines(lines);
  }

  void WriteInputsAndOutputs(onnx::GraphProto* graph, internal::OnnxGraphBuilder* builder) {
    std::set<std::string> referenced;
    for (const auto& node : graph->node())
      for (const auto& in : node.input()) referenced.insert(in);
    for (const auto& out : g_.outputs()) referenced.insert(names_[g_.entry_id(out)]);
    for (uint32_t nid : input_nodes_) {
      uint32_t e = g_.entry_id(nid, 0);
      if (!referenced.count(names_[e])) continue;  // e.g. SoftmaxOutput's label
      SetType(graph->add_input(), names_[e], shapes_[e], types_[e], batch_dims_[e],
              batch_named_[e]);
    }
    for (const auto& kv : param_of_) {
      const std::string& name = names_[g_.entry_id(kv.first, 0)];
      if (!referenced.count(name)) continue;  // e.g. gamma of a BatchNorm with fix_gamma
      const NDArray& value = *kv.second;
      SetTensor(graph->add_initializer(), name, value.shape(), value.dtype(), value.raw_data(),
                value.nbytes());
    }
    std::set<std::string> written;
    for (const auto& out : g_.outputs()) {
      uint32_t e = g_.entry_id(out);
      std::string name = names_[e];
      if (written.count(name)) {
        // The same value twice among the outputs: ONNX output names are unique.
        builder->BeginSource(g_[out.node_id].node->attrs, "");
        std::string copy = builder->UniqueValue(name);
        builder->AddNode("Identity", {name}, {copy}, {});
        name = copy;
      }
      written.insert(name);
      SetType(graph->add_output(), name, shapes_[e], types_[e], batch_dims_[e], batch_named_[e]);
    }
  }

  const Symbol& symbol_;
  const std::map<std::string, NDArray>& params_;
  const OnnxExportOptions& options_;
  IndexedGraph g_;
  Symbol hintless_;
  IndexedGraph hintless_g_;
  std::map<uint32_t, const NDArray*> param_of_;
  std::vector<uint32_t> input_nodes_;
  std::map<uint32_t, Shape> data_shapes_;  ///< the graph inputs in options.input_shapes
  std::vector<Shape> shapes_;
  std::vector<DType> types_;
  std::vector<std::vector<bool>> batch_dims_, batch_named_;
  std::vector<std::string> names_;
  std::vector<bool> used_;
};

}  // namespace

std::string ExportOnnx(const Symbol& symbol, const std::map<std::string, NDArray>& params,
                       const OnnxExportOptions& options) {
  return Exporter(symbol, params, options).Run();
}

void SaveOnnx(const Symbol& symbol, const std::map<std::string, NDArray>& params,
              const OnnxExportOptions& options, const std::string& path) {
  std::string bytes = ExportOnnx(symbol, params, options);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  HN_CHECK(out.good(), kIOError) << "cannot open '" << path << "' for writing";
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  HN_CHECK(out.good(), kIOError) << "cannot write '" << path << "'";
}

}  // namespace hybridnet
