// What an op's ONNX converter sees (Op::SetOnnx): the node, its inputs and outputs as ONNX
// values with static shapes, and calls that emit ONNX nodes and constants. No protobuf here;
// onnx_export.cc builds the ModelProto.
//
//   r->Register("relu") ... .SetOnnx({"Relu"}, OnnxSameOp("Relu"));
//
//   void ConvertClip(OnnxNodeContext* ctx) {
//     const auto& p = ctx->param<ClipParam>();
//     ctx->Add("Clip", {ctx->in(0).name, ctx->Scalar(p.a_min), ctx->Scalar(p.a_max)}, {},
//              ctx->out(0).name);
//   }
//
// A converter writes every output the graph uses (ctx->used(i)) under its name
// ctx->out(i).name; intermediate values get fresh names from Add. Attribute values or
// shapes it cannot express exactly are reported with ctx->NotExportable("why"), which the
// exporter collects for all nodes before failing.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "hybridnet/op.h"

namespace hybridnet {

namespace internal {
class OnnxGraphBuilder;  // onnx_export.cc
}  // namespace internal

/// One ONNX attribute.
struct OnnxAttr {
  using Value = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>>;
  std::string name;
  Value value;

  OnnxAttr(std::string n, int64_t v) : name(std::move(n)), value(v) {}
  OnnxAttr(std::string n, int v) : name(std::move(n)), value(int64_t{v}) {}
  OnnxAttr(std::string n, float v) : name(std::move(n)), value(v) {}
  OnnxAttr(std::string n, const char* v) : name(std::move(n)), value(std::string(v)) {}
  OnnxAttr(std::string n, std::string v) : name(std::move(n)), value(std::move(v)) {}
  OnnxAttr(std::string n, std::vector<int64_t> v) : name(std::move(n)), value(std::move(v)) {}
  OnnxAttr(std::string n, std::vector<float> v) : name(std::move(n)), value(std::move(v)) {}
};

/// A value of the ONNX graph: its name, static shape (as inferred for the export's input
/// shapes) and dtype, and which dims follow the batch size in a dynamic-batch export.
struct OnnxValue {
  std::string name;
  Shape shape;
  DType dtype = DType::kFloat32;
  std::vector<bool> batch_dims;  ///< one per dim; all false unless dynamic_batch

  bool HasBatchDim() const;
};

class OnnxNodeContext {
 public:
  OnnxNodeContext(internal::OnnxGraphBuilder* builder, const NodeAttrs& attrs,
                  std::vector<OnnxValue> inputs, std::vector<OnnxValue> outputs,
                  std::vector<bool> used);

  const NodeAttrs& attrs() const { return attrs_; }
  template <typename P>
  const P& param() const {
    return attrs_.Param<P>();
  }
  int opset() const;

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const OnnxValue& in(size_t i) const { return inputs_.at(i); }
  /// Every input's name, in order.
  std::vector<std::string> input_names() const;
  const OnnxValue& out(size_t i) const { return outputs_.at(i); }
  /// False for an output nothing reads (BatchNorm's mean and var, usually): skip it.
  bool used(size_t i) const { return used_.at(i); }

  /// Adds an ONNX node with one output, named `to` (e.g. out(0).name) or fresh when empty;
  /// returns the output's name.
  std::string Add(const std::string& op_type, const std::vector<std::string>& inputs,
                  const std::vector<OnnxAttr>& attrs = {}, const std::string& to = "");
  /// Adds an ONNX node with several outputs named `to` ("" entries get fresh names).
  std::vector<std::string> AddMulti(const std::string& op_type,
                                    const std::vector<std::string>& inputs,
                                    const std::vector<OnnxAttr>& attrs,
                                    std::vector<std::string> to);

  /// Constants (initializers): a 1-D int64 tensor, a 0-D scalar of `dtype`, a float tensor.
  std::string Int64s(const std::vector<int64_t>& values);
  std::string Scalar(double value, DType dtype = DType::kFloat32);
  std::string Floats(const std::vector<float>& values, const std::vector<int64_t>& dims);

  // ONNX ops whose signature changed between opsets 13 and 21, spelled for opset().

  /// Unsqueeze / Squeeze with the given axes.
  std::string Unsqueeze(const std::string& x, const std::vector<int64_t>& axes,
                        const std::string& to = "");
  std::string Squeeze(const std::string& x, const std::vector<int64_t>& axes,
                      const std::string& to = "");
  /// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd over `axes` (non-empty).
  std::string Reduce(const std::string& op_type, const std::string& x,
                     const std::vector<int64_t>& axes, bool keepdims, const std::string& to = "");
  /// Cast to `dtype`.
  std::string Cast(const std::string& x, DType dtype, const std::string& to = "");
  /// Reshape to `shape` (static dims, all > 0); the one dim marked in `batch_dims` becomes -1
  /// (NotExportable when more than one dim follows the batch size).
  std::string Reshape(const std::string& x, const Shape& shape, const std::vector<bool>& batch_dims,
                      const std::string& to = "");
  /// Reshape to the shape of output `i`.
  std::string ReshapeToOutput(const std::string& x, size_t i);
  /// x broadcast (ONNX Expand) to the shape of output `i`; NotExportable when a broadcast axis
  /// follows the batch size.
  std::string ExpandToOutput(const OnnxValue& x, size_t i);
  /// x cut (ONNX Slice, from 0) to the shape of output `i`; the same refusal.
  std::string SliceToOutput(const OnnxValue& x, size_t i);
  /// A 1-D int64 value: the first `keep` dims of `x`, then `tail`. Constant unless one of those
  /// dims follows the batch size; then read at run time (Shape, Slice, Concat).
  std::string LeadingDimsThen(const OnnxValue& x, size_t keep, const std::vector<int64_t>& tail);

  /// Reports that this node (with these attributes or shapes) has no exact ONNX form.
  [[noreturn]] void NotExportable(const std::string& why) const;

 private:
  internal::OnnxGraphBuilder* builder_;
  const NodeAttrs& attrs_;
  std::vector<OnnxValue> inputs_, outputs_;
  std::vector<bool> used_;
};

/// A converter for ops that are one ONNX op with the same inputs and outputs (relu -> Relu).
FOnnxConvert OnnxSameOp(std::string op_type, std::vector<OnnxAttr> attrs = {});

/// How one binary elementwise function of MXNet is written in ONNX, shared by its forms:
/// elemwise_* and broadcast_* (two inputs, OnnxBinaryOp) and *_scalar (scalar.cc).
struct OnnxBinaryForm {
  std::vector<std::string> onnx_ops;
  /// Writes f(a, b) to `to`; a and b hold values of `dtype`, the dtype MXNet computes in.
  std::function<void(OnnxNodeContext* ctx, const std::string& a, const std::string& b, DType dtype,
                     const std::string& to)>
      emit;
  /// What does not export ("" when every dtype does); emit refuses those cases.
  std::string limits;
};

/// Add, Sub, Mul, Div, Pow, Max, Min: the ONNX op on the operands. With float_only, integer
/// dtypes are refused: MXNet's integer division gives x / 0 = 0 and its integer power differs,
/// where ONNX leaves them undefined.
OnnxBinaryForm OnnxArithmetic(std::string op_type, bool float_only);
/// Equal, Greater, GreaterOrEqual, Less, LessOrEqual (negated with `negate`: not_equal): 1 or 0
/// in the output's dtype, as MXNet's legacy comparisons return.
OnnxBinaryForm OnnxComparison(std::string op_type, bool negate = false);
/// And, Or, Xor on the operands' truth (nonzero), 1 or 0 in the output's dtype.
OnnxBinaryForm OnnxLogical(std::string op_type);
/// The mapping of a two-input form (lhs, rhs of one dtype; ONNX broadcasts as MXNet does).
OnnxMapping OnnxBinaryOp(const OnnxBinaryForm& form);

namespace internal {
/// Thrown by OnnxNodeContext::NotExportable; the exporter collects them for every node.
struct OnnxNotExportable {
  std::string why;
};
}  // namespace internal

}  // namespace hybridnet
