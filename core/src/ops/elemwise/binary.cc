// Elementwise binary operators on equal shapes (MXNet
// src/operator/tensor/elemwise_binary_op_*.cc, elemwise_sum.cc for add_n,
// elemwise_scatter_op.cc for the dense forms of the _scatter ops). No broadcasting: that is
// broadcast_add and friends. Every op takes one numeric dtype for both operands and returns it;
// comparisons and logical ops return 1 or 0 in that dtype, as MXNet's legacy ops do.
#include <cstring>
#include <string>

#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"
#include "ops/elemwise/math_functors-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::NumericType;
using internal::SwitchNumericDType;
namespace m = op_math;

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
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = in[0].ptr<const T>();
    const T* b = in[1].ptr<const T>();
    T* y = out[0].ptr<T>();
    const int64_t n = out[0].Size();
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = F::Map(a[i], b[i]);
  });
}

// Sums left to right: ((in0 + in1) + in2) + ...
void AddNCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* y = out[0].ptr<T>();
    const int64_t n = out[0].Size();
    if (in.size() == 1) {
      if (in[0].data != y && n > 0) std::memcpy(y, in[0].data, static_cast<size_t>(n) * sizeof(T));
      return;
    }
    const T* a = in[0].ptr<const T>();
    const T* b = in[1].ptr<const T>();
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = m::Add::Map(a[i], b[i]);
    for (size_t k = 2; k < in.size(); ++k) {
      const T* c = in[k].ptr<const T>();
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] = m::Add::Map(y[i], c[i]);
    }
  });
}

// Output 0 is lhs; rhs only lends its shape and dtype (which must equal lhs's).
void CopyLhsCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  if (in[0].data != out[0].data && in[0].Size() > 0) {
    std::memcpy(out[0].data, in[0].data,
                static_cast<size_t>(in[0].Size()) * DTypeSize(in[0].dtype));
  }
}

Op& RegisterBinary(OpRegistry* r, const char* name, const char* description, FCompute f,
                   std::initializer_list<const char*> aliases = {}) {
  Op& op = r->Register(name)
               .Describe(description)
               .SetInputNames({"lhs", "rhs"})
               .SetInferShape(BinaryShape)
               .SetInferType(NumericType)
               .SetCompute(std::move(f))
               .SetInplace({{0, 0}, {1, 0}})
               .SetPattern(OpPattern::kElemwise);
  for (const char* alias : aliases) op.AddAlias(alias);
  return op;
}

}  // namespace

void RegisterElemwiseBinaryOps(OpRegistry* r) {
  RegisterBinary(r, "elemwise_add", "Adds arguments elementwise (shapes must be equal).",
                 BinaryCompute<m::Add>, {"_add", "_plus", "_Plus", "_sparse_elemwise_add"});
  RegisterBinary(r, "elemwise_sub", "Subtracts arguments elementwise (shapes must be equal).",
                 BinaryCompute<m::Sub>, {"_sub", "_minus", "_Minus", "_sparse_elemwise_sub"});
  RegisterBinary(r, "elemwise_mul", "Multiplies arguments elementwise (shapes must be equal).",
                 BinaryCompute<m::Mul>, {"_mul", "_Mul", "_sparse_elemwise_mul"});
  RegisterBinary(r, "elemwise_div",
                 "Divides arguments elementwise (shapes must be equal); integers truncate "
                 "toward zero and x / 0 = 0 (where MXNet's process dies).",
                 BinaryCompute<m::Div>, {"_div", "_Div", "_sparse_elemwise_div"});
  RegisterBinary(r, "_grad_add", "Adds arguments elementwise (the gradient accumulation op).",
                 BinaryCompute<m::Add>);
  RegisterBinary(r, "_scatter_elemwise_div",
                 "Divides arguments elementwise (dense arrays: the same as elemwise_div).",
                 BinaryCompute<m::Div>);
  RegisterBinary(r, "_power", "lhs raised to the power rhs, elementwise.",
                 BinaryCompute<m::Power>, {"_Power"});
  RegisterBinary(r, "_mod",
                 "Remainder with the sign of the divisor (Python's %), elementwise; x % 0 = 0.",
                 BinaryCompute<m::Mod>, {"_Mod"});
  RegisterBinary(r, "_maximum", "Elementwise maximum (NaN in lhs propagates).",
                 BinaryCompute<m::Maximum>, {"_Maximum"});
  RegisterBinary(r, "_minimum", "Elementwise minimum (NaN in lhs propagates).",
                 BinaryCompute<m::Minimum>, {"_Minimum"});
  RegisterBinary(r, "_hypot", "sqrt(lhs^2 + rhs^2), elementwise.", BinaryCompute<m::Hypot>,
                 {"_Hypot"});
  RegisterBinary(r, "_equal", "1 where lhs == rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::Equal>, {"_Equal"});
  RegisterBinary(r, "_not_equal", "1 where lhs != rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::NotEqual>, {"_Not_Equal"});
  RegisterBinary(r, "_greater", "1 where lhs > rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::Greater>, {"_Greater"});
  RegisterBinary(r, "_greater_equal", "1 where lhs >= rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::GreaterEqual>, {"_Greater_Equal"});
  RegisterBinary(r, "_lesser", "1 where lhs < rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::Lesser>, {"_Lesser"});
  RegisterBinary(r, "_lesser_equal", "1 where lhs <= rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::LesserEqual>, {"_Lesser_Equal"});
  RegisterBinary(r, "_logical_and", "1 where both lhs and rhs are nonzero, else 0.",
                 BinaryCompute<m::LogicalAnd>, {"_Logical_And"});
  RegisterBinary(r, "_logical_or", "1 where lhs or rhs is nonzero, else 0.",
                 BinaryCompute<m::LogicalOr>, {"_Logical_Or"});
  RegisterBinary(r, "_logical_xor", "1 where exactly one of lhs and rhs is nonzero, else 0.",
                 BinaryCompute<m::LogicalXor>, {"_Logical_Xor"});
  RegisterBinary(r, "_identity_with_attr_like_rhs",
                 "Returns lhs; rhs (of the same shape and dtype) is not read.", CopyLhsCompute)
      .SetInplace({{0, 0}})
      .SetIdentityView();

  r->Register("add_n")
      .Describe("Adds all input arguments elementwise (all shapes must be equal).")
      .AddAlias("ElementWiseSum")
      .AddAlias("_sparse_ElementWiseSum")
      .AddAlias("_sparse_add_n")
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
      .SetInferType(NumericType)
      .SetCompute(AddNCompute)
      .SetInplace({{0, 0}})
      .SetPattern(OpPattern::kElemwise);
}

}  // namespace hybridnet
