#include <algorithm>
#include <atomic>

#include "graph/naming.h"
#include "hybridnet/autograd.h"
#include "hybridnet/imperative.h"
#include "hybridnet/symbol.h"
#include "imperative/autograd_tape.h"
#include "imperative/tracing.h"
#include "kernels/workspace.h"
#include "profiler/profiler_hook.h"

namespace hybridnet {

namespace internal {

namespace {
thread_local int trace_depth = 0;
}

bool IsTracing() { return trace_depth > 0; }
TracingScope::TracingScope() { ++trace_depth; }
TracingScope::~TracingScope() { --trace_depth; }

}  // namespace internal

namespace {

std::vector<NDArray> Trace(const NodeAttrs& attrs, const std::vector<NDArray>& inputs) {
  std::vector<Symbol> symbols;
  for (size_t i = 0; i < inputs.size(); ++i) {
    HN_CHECK(inputs[i].is_symbolic(), kUntraceable)
        << DescribeNode(attrs) << ": input " << i
        << " is a concrete array inside a traced forward. hybridize() can only record values "
           "derived from the block's inputs and parameters; register the constant as a "
           "Parameter (or a constant block attribute) instead";
    Symbol s;
    s.outputs.push_back(inputs[i].entry());
    symbols.push_back(std::move(s));
  }
  // Names follow MXNet's name manager: "<scope prefix><name>", or "<scope prefix><op><n>".
  NodeAttrs named = attrs;
  if (named.name.empty()) {
    std::string hint = attrs.op->name;
    std::transform(hint.begin(), hint.end(), hint.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    named.name = internal::AutoName(hint);
  } else {
    named.name = internal::NameScope::CurrentPrefix() + named.name;
  }
  Symbol out = Symbol::Create(named, symbols);
  std::vector<NDArray> results;
  for (const auto& e : out.outputs) results.push_back(NDArray::FromEntry(e));
  return results;
}

// InferOutputs for the first `num_out` outputs, hidden ones included.
void InferOutputsUpTo(const NodeAttrs& attrs, uint32_t num_out, std::vector<Shape>* in_shapes,
                      std::vector<DType>* in_types, std::vector<Shape>* out_shapes,
                      std::vector<DType>* out_types) {
  const Op& op = *attrs.op;
  out_shapes->assign(num_out, Shape());
  out_types->assign(num_out, DType::kUnknown);
  std::vector<Shape> given = *in_shapes;
  bool shapes_known = op.infer_shape(attrs, in_shapes, out_shapes);
  for (size_t i = 0; i < given.size(); ++i) {
    HN_CHECK((*in_shapes)[i] == given[i], kShapeError)
        << DescribeNode(attrs) << ": input " << i << " ('" << op.InputNames(attrs)[i]
        << "') has shape " << given[i] << " but the op needs " << (*in_shapes)[i];
  }
  HN_CHECK(shapes_known, kShapeError) << DescribeNode(attrs) << ": cannot infer the output shape";
  std::vector<DType> given_types = *in_types;
  op.infer_type(attrs, in_types, out_types);
  // Only an op without inputs (or one that ignores them) can leave this open.
  for (size_t i = 0; i < out_types->size(); ++i) {
    HN_CHECK((*out_types)[i] != DType::kUnknown, kTypeError)
        << DescribeNode(attrs) << ": cannot infer the dtype of output " << i;
  }
  for (size_t i = 0; i < given_types.size(); ++i) {
    HN_CHECK((*in_types)[i] == given_types[i], kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName(given_types[i])
        << " but the op needs " << DTypeName((*in_types)[i]);
  }
}

}  // namespace

void InferOutputs(const NodeAttrs& attrs, std::vector<Shape>* in_shapes,
                  std::vector<DType>* in_types, std::vector<Shape>* out_shapes,
                  std::vector<DType>* out_types) {
  InferOutputsUpTo(attrs, attrs.op->NumOutputs(attrs), in_shapes, in_types, out_shapes, out_types);
}

namespace {

// Whether an op's output of `shape` and `dtype` may be written into `destination`.
bool WritableInto(const NDArray& destination, const Shape& shape, DType dtype,
                  const std::vector<NDArray>& inputs) {
  if (destination.is_none() || destination.is_symbolic() || destination.shape() != shape ||
      destination.dtype() != dtype) {
    return false;
  }
  return std::none_of(inputs.begin(), inputs.end(),
                      [&](const NDArray& x) { return x.SharesStorageWith(destination); });
}

}  // namespace

std::vector<NDArray> Invoke(const NodeAttrs& attrs, const std::vector<NDArray>& inputs) {
  return internal::InvokeInto(attrs, inputs, {});
}

std::vector<NDArray> internal::InvokeInto(const NodeAttrs& attrs,
                                          const std::vector<NDArray>& inputs,
                                          const std::vector<NDArray>& destinations) {
  HN_CHECK(attrs.op != nullptr, kInvalidArgument) << "Invoke: no operator given";
  const Op& op = *attrs.op;
  uint32_t num_in = op.NumInputs(attrs);
  HN_CHECK(inputs.size() == num_in, kInvalidArgument)
      << DescribeNode(attrs) << ": expects " << num_in << " inputs, got " << inputs.size();
  bool any_symbolic = false;
  for (const auto& x : inputs) any_symbolic = any_symbolic || x.is_symbolic();
  // An op without inputs (_zeros, _arange, ...) has nothing to tell it is being traced.
  if (any_symbolic || (inputs.empty() && internal::IsTracing())) return Trace(attrs, inputs);

  std::vector<Shape> in_shapes;
  std::vector<DType> in_types;
  for (size_t i = 0; i < inputs.size(); ++i) {
    HN_CHECK(!inputs[i].is_none(), kInvalidArgument)
        << DescribeNode(attrs) << ": input " << i << " is an empty (none) array";
    in_shapes.push_back(inputs[i].shape());
    in_types.push_back(inputs[i].dtype());
  }
  std::vector<Shape> out_shapes;
  std::vector<DType> out_types;
  InferOutputsUpTo(attrs, internal::OutputsToCompute(attrs, inputs.size()), &in_shapes, &in_types,
                   &out_shapes, &out_types);

  std::vector<TBlob> in_blobs(inputs.size()), out_blobs(out_shapes.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    in_blobs[i] =
        TBlob{const_cast<void*>(inputs[i].raw_data()), inputs[i].shape(), inputs[i].dtype()};
  }
  std::vector<NDArray> outputs;
  outputs.reserve(out_shapes.size());
  for (size_t i = 0; i < out_shapes.size(); ++i) {
    if (i < destinations.size() &&
        WritableInto(destinations[i], out_shapes[i], out_types[i], inputs)) {
      outputs.push_back(destinations[i]);
    } else {
      outputs.emplace_back(out_shapes[i], out_types[i]);
    }
    out_blobs[i] = TBlob{outputs[i].raw_data(), out_shapes[i], out_types[i]};
  }
  std::vector<const NDArray*> arrays(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) arrays[i] = &inputs[i];
  // Eager calls on a thread share its workspace: kernels never invoke ops eagerly themselves.
  thread_local internal::Workspace workspace;
  OpContext ctx;
  ctx.is_train = autograd::IsTraining();
  ctx.input_arrays = arrays.data();
  ctx.workspace = &workspace;
  if (profiler::internal::Records(profiler::internal::kEager)) {
    const int64_t start = profiler::internal::StartOp();
    op.compute(ctx, attrs, in_blobs, out_blobs);
    profiler::internal::RecordOp(attrs, in_blobs, out_blobs, start);
  } else {
    op.compute(ctx, attrs, in_blobs, out_blobs);
  }
  internal::RecordOp(attrs, inputs, &outputs);
  outputs.resize(op.NumOutputs(attrs));  // the hidden ones computed for the tape stay there
  return outputs;
}

std::vector<NDArray> Invoke(const std::string& op_name, const std::vector<NDArray>& inputs,
                            const AttrDict& attrs, const std::string& node_name) {
  return Invoke(MakeNodeAttrs(op_name, node_name, attrs), inputs);
}

}  // namespace hybridnet
