// Elementwise binary operators on equal shapes (MXNet
// src/operator/tensor/elemwise_binary_op_basic.cc) and add_n (elemwise_sum.cc). No
// broadcasting: that is broadcast_add and friends.
#include <algorithm>
#include <cstring>
#include <string>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/elemwise/binary_functors-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using namespace op_functors;  // Add, Sub, Mul, Div, Maximum, Minimum

struct AddNParam {
  int num_args = 0;
  static void Declare(ParamDeclarer<AddNParam>* d) {
    d->Field("num_args", &AddNParam::num_args).Required().Min(1).Describe(
        "Number of inputs to be summed.");
  }
};

// Inputs lhs and rhs must have one shape; the message names both.
bool BinaryShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& lhs = (*in)[0];
  const Shape& rhs = (*in)[1];
  if (lhs.ndim() != 0 && rhs.ndim() != 0) {
    Shape merged = lhs;
    HN_CHECK(MergeShape(rhs, &merged), kShapeError)
        << DescribeNode(attrs) << ": lhs shape " << lhs << " and rhs shape " << rhs
        << " differ (elementwise operators need equal shapes; use the broadcast_* operators "
           "to broadcast)";
  }
  return ElemwiseShape(attrs, in, out);
}

template <typename F>
void BinaryCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const float* a = in[0].ptr<const float>();
  const float* b = in[1].ptr<const float>();
  float* y = out[0].ptr<float>();
  const int64_t n = out[0].Size();
  F f;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
}


// Sums left to right: ((in0 + in1) + in2) + ...
void AddNCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  float* y = out[0].ptr<float>();
  const int64_t n = out[0].Size();
  if (in.size() == 1) {
    if (in[0].data != y) std::memcpy(y, in[0].data, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  const float* a = in[0].ptr<const float>();
  const float* b = in[1].ptr<const float>();
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
  for (size_t k = 2; k < in.size(); ++k) {
    const float* c = in[k].ptr<const float>();
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] += c[i];
  }
}

Op& RegisterBinary(OpRegistry* r, const char* name, const char* description, FCompute f) {
  return r->Register(name)
      .Describe(description)
      .SetInputNames({"lhs", "rhs"})
      .SetInferShape(BinaryShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(std::move(f))
      .SetInplace({{0, 0}, {1, 0}})
      .SetPattern(OpPattern::kElemwise);
}

}  // namespace

void RegisterElemwiseBinaryOps(OpRegistry* r) {
  RegisterBinary(r, "elemwise_add", "Adds arguments elementwise (shapes must be equal).",
                 BinaryCompute<Add>)
      .SetOnnx({"Add"}, OnnxSameOp("Add"))
      .AddAlias("_add")
      .AddAlias("_plus")
      .AddAlias("_Plus");
  RegisterBinary(r, "elemwise_sub", "Subtracts arguments elementwise (shapes must be equal).",
                 BinaryCompute<Sub>)
      .SetOnnx({"Sub"}, OnnxSameOp("Sub"))
      .AddAlias("_sub")
      .AddAlias("_minus")
      .AddAlias("_Minus");
  RegisterBinary(r, "elemwise_mul", "Multiplies arguments elementwise (shapes must be equal).",
                 BinaryCompute<Mul>)
      .SetOnnx({"Mul"}, OnnxSameOp("Mul"))
      .AddAlias("_mul")
      .AddAlias("_Mul");
  RegisterBinary(r, "elemwise_div", "Divides arguments elementwise (shapes must be equal).",
                 BinaryCompute<Div>)
      .SetOnnx({"Div"}, OnnxSameOp("Div"))
      .AddAlias("_div")
      .AddAlias("_Div");

  r->Register("add_n")
      .Describe("Adds all input arguments elementwise (all shapes must be equal).")
      .AddAlias("ElementWiseSum")
      .SetParam<AddNParam>()
      .SetKeyVarNumArgs("num_args")
      .SetInputNames([](const NodeAttrs& attrs) {
        std::vector<std::string> names;
        for (int i = 0; i < attrs.Param<AddNParam>().num_args; ++i)
          names.push_back("arg" + std::to_string(i));
        return names;
      })
      // Counted from num_args without building the names: a hostile file may say billions.
      .SetNumInputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<AddNParam>().num_args);
      })
      .SetInferShape(ElemwiseShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(AddNCompute)
      .SetInplace({{0, 0}})
      .SetPattern(OpPattern::kElemwise)
      .SetOnnx({"Sum"}, OnnxSameOp("Sum"));
}

}  // namespace hybridnet
