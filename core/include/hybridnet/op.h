// The operator registry: every op is declared once, and eager invoke, every graph pass, JSON,
// the C API and the bindings read that one declaration.
//
// A family file registers its ops in a function called from RegisterAllOps()
// (core/src/ops/register_ops.h):
//
//   void RegisterActivationOps(OpRegistry* r) {
//     r->Register("Activation")
//         .Describe("Applies an activation function elementwise.")
//         .SetParam<ActivationParam>()
//         .SetInferShape(ElemwiseShape).SetInferType(ElemwiseFloatType)
//         .SetCompute(ActivationCompute).SetInplace({{0, 0}});
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hybridnet/dtype.h"
#include "hybridnet/param.h"
#include "hybridnet/shape.h"

namespace hybridnet {

class Op;
class Symbol;
struct Node;
struct NodeEntry;

/// An op plus its attributes: the raw strings (written back to JSON verbatim), the parsed
/// typed parameter struct, and the graphs a control-flow op runs (MXNet's "subgraphs": _foreach's
/// loop body, _while_loop's condition and body, _cond's condition and branches).
struct NodeAttrs {
  /// The operator; nullptr for a variable (an input or a parameter).
  const Op* op = nullptr;
  /// The node's name ("fc1"); outputs and error messages use it.
  std::string name;
  /// The attributes as written in the JSON, strings kept verbatim.
  AttrDict dict;
  /// The op's parameter struct parsed from `dict` (Op::SetParam); read it with Param<P>().
  std::shared_ptr<const void> parsed;
  /// The graphs a control-flow op runs, in MXNet's order; empty for other ops.
  std::vector<std::shared_ptr<const Symbol>> subgraphs;

  template <typename P>
  /// The parsed parameter struct; P must be the type the op declared with SetParam.
  const P& Param() const {
    return *static_cast<const P*>(parsed.get());
  }
};

/// A view of tensor memory handed to kernels.
struct TBlob {
  /// First element; the caller owns the memory.
  void* data = nullptr;
  /// The tensor's shape (C-contiguous layout).
  Shape shape;
  /// The element type `data` points to.
  DType dtype = DType::kFloat32;

  template <typename T>
  /// `data` as T*; unchecked: kernels dispatch on `dtype` first.
  T* ptr() const {
    return static_cast<T*>(data);
  }
  /// The number of elements.
  int64_t Size() const { return shape.Size(); }
};

class NDArray;
namespace internal {
class Workspace;  // core/src/kernels/workspace.h
}  // namespace internal

/// What a kernel is told about the call besides its tensors.
struct OpContext {
  /// Training-mode forward (Dropout drops, BatchNorm uses the batch statistics). Eager calls take
  /// it from the calling thread's autograd train mode (autograd.h); GraphExecutor runs inference
  /// and leaves it false.
  bool is_train = false;
  /// ExecutorOptions::fast_math: kernels may trade bit-identical results for speed (BatchNorm
  /// folded into convolution weights, Winograd). Eager calls leave it false.
  bool fast_math = false;
  /// Scratch memory for the call, owned by the caller (the graph executor, eager invoke) and
  /// reused across its calls, so kernels allocate nothing once the largest call has run. Never
  /// null when a kernel runs.
  internal::Workspace* workspace = nullptr;
  /// The arrays behind the inputs, where the caller has them (eager invocation: every input;
  /// the graph executor: its parameters), else null entries; null when there are none. Kernels
  /// keep data derived from them across calls (a convolution's re-laid-out weights), see
  /// ndarray/storage.h.
  const NDArray* const* input_arrays = nullptr;

  /// The array behind input `i`, or null when the caller has none for it.
  const NDArray* InputArray(size_t i) const {
    return input_arrays == nullptr ? nullptr : input_arrays[i];
  }
};

/// Computes an input or output count from the attributes (Concat's num_args, SliceChannel's
/// num_outputs).
using FNumInputs = std::function<uint32_t(const NodeAttrs&)>;
/// (input, output) pairs whose memory the planner may share, from the attributes (a fused
/// convolution's residual is at a position its attributes give).
using FInplace = std::function<std::vector<std::pair<uint32_t, uint32_t>>(const NodeAttrs&)>;
/// Computes input or output names from the attributes.
using FListNames = std::function<std::vector<std::string>(const NodeAttrs&)>;
/// Fills unknown shapes in `in` and `out` from known ones. Returns true when every shape is
/// known afterwards; throws kShapeError on a conflict, naming the op and node.
using FInferShape =
    std::function<bool(const NodeAttrs&, std::vector<Shape>* in, std::vector<Shape>* out)>;
/// Same for dtypes (DType::kUnknown = unknown).
using FInferType =
    std::function<bool(const NodeAttrs&, std::vector<DType>* in, std::vector<DType>* out)>;
/// Computes outputs from inputs. Output memory is allocated by the caller; kernels never
/// validate (inference did) and never allocate tensors.
using FCompute = std::function<void(const OpContext&, const NodeAttrs&,
                                    const std::vector<TBlob>& in, const std::vector<TBlob>& out)>;

/// The gradient of an op as graph nodes (NNVM's FGradient). Given the forward node (its inputs
/// are the forward inputs; NodeEntry{node, i} is its output i) and the gradient of each visible
/// output, returns one gradient entry per input, built from other ops (ops/gradient_util.h). The
/// gradient pass calls it for graphs and for the eager autograd tape alike, so an op's gradient
/// is declared once, in its registration.
using FGradient = std::function<std::vector<NodeEntry>(const std::shared_ptr<Node>& node,
                                                       const std::vector<NodeEntry>& out_grads)>;

/// How the fusion pass may treat an op.
enum class OpPattern { kOpaque, kElemwise };

class OnnxNodeContext;  // core/src/onnx/onnx_convert.h
/// Emits the ONNX nodes computing one graph node (ExportOnnx, hybridnet/onnx.h).
using FOnnxConvert = std::function<void(OnnxNodeContext* ctx)>;

/// How an op exports to ONNX. Ops without one are reported as not exportable.
struct OnnxMapping {
  /// Every ONNX op the converter may emit (the compatibility table in README.md lists them;
  /// the ONNX tests check that each export uses only these).
  std::vector<std::string> onnx_ops;
  /// Emits the op's ONNX nodes; empty: the op does not export.
  FOnnxConvert convert;
  /// What does not export, in words ("mode='always' (random at inference)"); empty: everything.
  std::string limits;
};

/// One operator's declaration: name, attributes, shape and dtype inference, kernel and export.
/// Registered once with OpRegistry::Register and filled in with the chained setters below.
class Op {
 public:
  /// An op called `op_name` with nothing else declared (OpRegistry::Register creates it).
  explicit Op(std::string op_name) : name(std::move(op_name)) {}

  /// MXNet's operator name ("FullyConnected"), as written in the JSON.
  std::string name;
  /// One sentence on what the op computes (`hybridnet ops` prints it).
  std::string description;
  /// Other names MXNet accepts for the op (Reshape's "reshape"); OpRegistry::Find resolves them.
  std::vector<std::string> aliases;
  /// Fixed input count (see NumInputs).
  uint32_t num_inputs = 1;
  FNumInputs get_num_inputs;       ///< overrides num_inputs when set
  uint32_t num_outputs = 1;        ///< outputs the kernel writes (visible)
  FNumInputs get_num_outputs;      ///< overrides num_outputs when set (SliceChannel)
  uint32_t num_total_outputs = 0;  ///< with hidden outputs, for node_row_ptr; 0 = NumOutputs
  FListNames list_input_names;     ///< default: "data" or arg0..argN-1
  FListNames list_output_names;    ///< MXNet's ("output", "state_output"); default: "output" or
                                   ///< output0..N-1
  std::vector<uint32_t> mutable_inputs;  ///< inputs that are auxiliary states
  std::string key_var_num_args;  ///< attribute that holds the input count (Concat: num_args)
  /// The declared attributes (name, type, default, required), for listings and error messages.
  std::vector<FieldInfo> fields;
  /// Turns the attribute strings into the parameter struct; set by SetParam, empty when the op
  /// has no attributes.
  std::function<std::shared_ptr<const void>(const AttrDict&)> parse_param;
  /// Shape inference (see FInferShape).
  FInferShape infer_shape;
  /// Dtype inference (see FInferType).
  FInferType infer_type;
  /// The CPU kernel (see FCompute).
  FCompute compute;
  /// The gradient (see FGradient); empty: backward through the op is an error naming it.
  FGradient gradient;
  std::vector<std::pair<uint32_t, uint32_t>> inplace;  ///< (input, output) may share memory
  FInplace get_inplace;                                ///< overrides inplace when set
  bool identity_view = false;  ///< output 0 is input 0's bytes (Reshape, Flatten, identity)
  /// How the fusion pass may treat the op.
  OpPattern pattern = OpPattern::kOpaque;
  bool internal = false;  ///< created by graph passes only; never written to JSON
  OnnxMapping onnx;       ///< onnx.convert empty: the op does not export to ONNX

  /// Sets `description`. Like every setter below it returns the op, for chaining.
  Op& Describe(std::string text) {
    description = std::move(text);
    return *this;
  }
  /// Adds an alternative name.
  Op& AddAlias(std::string alias) {
    aliases.push_back(std::move(alias));
    return *this;
  }
  /// A fixed input count.
  Op& SetNumInputs(uint32_t n) {
    num_inputs = n;
    return *this;
  }
  /// An input count that depends on the attributes.
  Op& SetNumInputs(FNumInputs f) {
    get_num_inputs = std::move(f);
    return *this;
  }
  /// A fixed count of visible outputs.
  Op& SetNumOutputs(uint32_t n) {
    num_outputs = n;
    return *this;
  }
  /// A visible output count that depends on the attributes.
  Op& SetNumOutputs(FNumInputs f) {
    get_num_outputs = std::move(f);
    return *this;
  }
  /// Visible plus hidden outputs, when the op has hidden ones (see NumTotalOutputs).
  Op& SetNumTotalOutputs(uint32_t n) {
    num_total_outputs = n;
    return *this;
  }
  /// Input names that depend on the attributes (no_bias, act_type, ...); the input count is
  /// their number.
  Op& SetInputNames(FListNames f);
  /// Fixed input names; the input count is their number.
  Op& SetInputNames(std::vector<std::string> names);
  /// Output names where MXNet gives the op its own (FListOutputNames): Symbol::ListOutputs
  /// appends them to the node name.
  Op& SetOutputNames(FListNames f) {
    list_output_names = std::move(f);
    return *this;
  }
  /// Marks the inputs at these positions as auxiliary states (BatchNorm's running mean and var).
  Op& SetMutableInputs(std::vector<uint32_t> idx) {
    mutable_inputs = std::move(idx);
    return *this;
  }
  /// Names the attribute that holds the input count of a variadic op.
  Op& SetKeyVarNumArgs(std::string key) {
    key_var_num_args = std::move(key);
    return *this;
  }
  /// Sets the shape inference.
  Op& SetInferShape(FInferShape f) {
    infer_shape = std::move(f);
    return *this;
  }
  /// Sets the dtype inference.
  Op& SetInferType(FInferType f) {
    infer_type = std::move(f);
    return *this;
  }
  /// Sets the kernel.
  Op& SetCompute(FCompute f) {
    compute = std::move(f);
    return *this;
  }
  /// Sets the gradient.
  Op& SetGradient(FGradient f) {
    gradient = std::move(f);
    return *this;
  }
  /// Declares (input, output) pairs whose memory the planner may share.
  Op& SetInplace(std::vector<std::pair<uint32_t, uint32_t>> p) {
    inplace = std::move(p);
    return *this;
  }
  /// Declares them from the attributes.
  Op& SetInplace(FInplace f) {
    get_inplace = std::move(f);
    return *this;
  }
  /// Declares output 0 a view of input 0's bytes (no kernel call needed).
  Op& SetIdentityView() {
    identity_view = true;
    return *this;
  }
  /// Sets how the fusion pass may treat the op.
  Op& SetPattern(OpPattern p) {
    pattern = p;
    return *this;
  }
  /// Marks the op as created by graph passes only (never read from or written to JSON).
  Op& SetInternal() {
    internal = true;
    return *this;
  }
  /// Declares the ONNX export: the ONNX ops emitted, the converter, and any limits in words.
  Op& SetOnnx(std::vector<std::string> onnx_ops, FOnnxConvert convert, std::string limits = "") {
    onnx = OnnxMapping{std::move(onnx_ops), std::move(convert), std::move(limits)};
    return *this;
  }
  /// Declares the ONNX export from a prepared mapping.
  Op& SetOnnx(OnnxMapping mapping) {
    onnx = std::move(mapping);
    return *this;
  }

  /// Declares the typed parameter struct P (see param.h). `init`, when given, runs right after
  /// the attributes are parsed (MXNet's ParamParser step: defaults that depend on other fields,
  /// cross-field checks); its errors are reported like parse errors, naming the op and node.
  template <typename P>
  Op& SetParam(void (*init)(P*) = nullptr);

  /// The input count for these attributes.
  uint32_t NumInputs(const NodeAttrs& attrs) const {
    return get_num_inputs ? get_num_inputs(attrs) : num_inputs;
  }
  /// The visible output count for these attributes.
  uint32_t NumOutputs(const NodeAttrs& attrs) const {
    return get_num_outputs ? get_num_outputs(attrs) : num_outputs;
  }
  /// The (input, output) pairs that may share memory for these attributes.
  std::vector<std::pair<uint32_t, uint32_t>> InplacePairs(const NodeAttrs& attrs) const {
    return get_inplace ? get_inplace(attrs) : inplace;
  }
  /// Visible plus hidden outputs (what MXNet counts in node_row_ptr).
  uint32_t NumTotalOutputs(const NodeAttrs& attrs) const {
    return num_total_outputs ? num_total_outputs : NumOutputs(attrs);
  }
  /// Input names for these attributes: the declared ones, else "data" for one input and
  /// "arg0".."argN-1" for several.
  std::vector<std::string> InputNames(const NodeAttrs& attrs) const;
};

/// Every operator of the build by name; the one table eager calls, graphs, JSON, the C API and the
/// bindings read.
class OpRegistry {
 public:
  /// The registry with every op of this build (registered once, thread-safe).
  static const OpRegistry& Global();

  /// Adds the op `name` and returns it to be declared; registering a name twice is an internal
  /// error.
  Op& Register(const std::string& name);
  /// The op with this name or alias, or nullptr.
  const Op* Find(const std::string& name) const;
  /// Like Find but throws kNotFound: "unknown operator 'X'".
  const Op& Get(const std::string& name) const;
  /// Every op, sorted by name.
  std::vector<const Op*> List() const;

 private:
  std::vector<std::unique_ptr<Op>> ops_;
  std::unordered_map<std::string, const Op*> by_name_;
};

/// Parses `dict` with the op's parameter declaration. Errors name the op and node:
/// "FullyConnected(fc1): attribute 'num_hidden'='abc': expected an integer".
NodeAttrs MakeNodeAttrs(const Op& op, const std::string& node_name, AttrDict dict);
/// The same, looking the op up by name or alias (kNotFound for an unknown one).
NodeAttrs MakeNodeAttrs(const std::string& op_name, const std::string& node_name, AttrDict dict);

/// "Op(node)" for messages.
std::string DescribeNode(const NodeAttrs& attrs);

namespace internal {
/// MakeNodeAttrs(op_name, "", attrs), kept per thread and (op, attribute text) for callers that
/// run the same op with the same attributes again and again (operator helpers, optimizer updates);
/// valid until this thread's next call.
const NodeAttrs& CachedNodeAttrs(const std::string& op_name, const AttrDict& attrs);

// MakeNodeAttrs prefixes these messages with "Op(node): ".
[[noreturn]] void ThrowParamError(const std::string& key, const std::string& value,
                                  const std::string& expected);
[[noreturn]] void ThrowUnknownKey(const std::string& key, const std::vector<FieldInfo>& fields);
[[noreturn]] void ThrowMissingKey(const std::string& key);
}  // namespace internal

template <typename P>
Op& Op::SetParam(void (*init)(P*)) {
  auto declarer = std::make_shared<ParamDeclarer<P>>();
  P::Declare(declarer.get());
  fields.clear();
  for (const auto& f : declarer->fields()) fields.push_back(f.info);
  parse_param = [declarer, init](const AttrDict& dict) -> std::shared_ptr<const void> {
    auto param = std::make_shared<P>();
    for (const auto& f : declarer->fields())
      if (f.set_default) f.set_default(param.get());
    for (const auto& f : declarer->fields()) {
      auto it = dict.find(f.info.key);
      if (it == dict.end()) {
        if (f.info.required) internal::ThrowMissingKey(f.info.key);
        continue;
      }
      try {
        f.parse(param.get(), it->second);
      } catch (const std::invalid_argument& e) {
        internal::ThrowParamError(f.info.key, it->second, e.what());
      }
    }
    for (const auto& kv : dict) {
      const std::string& key = kv.first;
      bool hidden = key.size() > 4 && key.compare(0, 2, "__") == 0 &&
                    key.compare(key.size() - 2, 2, "__") == 0;
      if (hidden) continue;
      bool known = false;
      for (const auto& f : declarer->fields()) known = known || f.info.key == key;
      if (!known) {
        std::vector<FieldInfo> infos;
        for (const auto& f : declarer->fields()) infos.push_back(f.info);
        internal::ThrowUnknownKey(key, infos);
      }
    }
    if (init != nullptr) init(param.get());
    return param;
  };
  return *this;
}

// Shared inference helpers for ops whose outputs mirror their inputs.

/// All inputs and outputs have one shape.
bool ElemwiseShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out);
/// All inputs and outputs have one dtype.
bool ElemwiseType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out);
/// Like ElemwiseType but only float32 is accepted (our compute type).
bool ElemwiseFloatType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out);

}  // namespace hybridnet
