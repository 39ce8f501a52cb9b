// Elementwise binary operators on equal shapes (MXNet
// src/operator/tensor/elemwise_binary_op_*.cc, elemwise_sum.cc for add_n,
// elemwise_scatter_op.cc for the dense forms of the _scatter ops). No broadcasting: that is
// broadcast_add and friends. Every op takes one numeric dtype for both operands and returns it;
// comparisons and logical ops return 1 or 0 in that dtype, as MXNet's legacy ops do.
#include <cstring>
#include <string>

#include "hybridnet/op.h"
#include "kernels/parallel-inl.h"
#include "onnx/onnx_convert.h"
#include "ops/dtype_switch-inl.h"
#include "ops/elemwise/math_functors-inl.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::NumericType;
using internal::SwitchNumericDType;
namespace m = op_math;

struct AddNParam {
  int num_args = 0;
  static void Declare(ParamDeclarer<AddNParam>* d) {
    d->Field("num_args", &AddNParam::num_args)
        .Required()
        .Min(1)
        .Describe("Number of inputs to be summed.");
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
    internal::ParallelRanges(out[0].Size(), [&](int64_t begin, int64_t end) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) y[i] = F::Map(a[i], b[i]);
    });
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
    internal::ParallelRanges(n, [&](int64_t begin, int64_t end) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) y[i] = m::Add::Map(a[i], b[i]);
      for (size_t k = 2; k < in.size(); ++k) {
        const T* c = in[k].ptr<const T>();
#pragma omp simd
        for (int64_t i = begin; i < end; ++i) y[i] = m::Add::Map(y[i], c[i]);
      }
    });
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

// ---- gradients (MXNet's _backward_* formulas, written as ops) ----------------------------------

using internal::GradientBuilder;

// An FGradient from a function of the builder giving {d lhs, d rhs}.
template <typename F>
FGradient BinaryGradient(F f) {
  return [f](const std::shared_ptr<Node>& n, const std::vector<NodeEntry>& dy) {
    GradientBuilder g(n, dy);
    return f(g, g.out_grad(0));
  };
}

std::vector<NodeEntry> AddGradient(const GradientBuilder&, const NodeEntry& dy) { return {dy, dy}; }

std::vector<NodeEntry> SubGradient(const GradientBuilder& g, const NodeEntry& dy) {
  return {dy, g.Negative(dy)};
}

std::vector<NodeEntry> MulGradient(const GradientBuilder& g, const NodeEntry& dy) {
  return {g.Mul(dy, g.in(1)), g.Mul(dy, g.in(0))};
}

// d lhs = dy / rhs, d rhs = -dy lhs / rhs^2.
std::vector<NodeEntry> DivGradient(const GradientBuilder& g, const NodeEntry& dy) {
  return {g.Div(dy, g.in(1)), g.Negative(g.Div(g.Mul(dy, g.in(0)), g.Op("square", {g.in(1)})))};
}

// The larger operand gets the gradient, lhs on ties (MXNet: lhs >= rhs, rhs < lhs).
std::vector<NodeEntry> MaximumGradient(const GradientBuilder& g, const NodeEntry& dy) {
  return {g.Mul(dy, g.Op("_greater_equal", {g.in(0), g.in(1)})),
          g.Mul(dy, g.Op("_lesser", {g.in(0), g.in(1)}))};
}

std::vector<NodeEntry> MinimumGradient(const GradientBuilder& g, const NodeEntry& dy) {
  return {g.Mul(dy, g.Op("_lesser_equal", {g.in(0), g.in(1)})),
          g.Mul(dy, g.Op("_greater", {g.in(0), g.in(1)}))};
}

// d lhs = dy rhs lhs^(rhs - 1), d rhs = dy y log(lhs).
std::vector<NodeEntry> PowerGradient(const GradientBuilder& g, const NodeEntry& dy) {
  const NodeEntry power = g.Op("_power", {g.in(0), g.Scalar("_minus_scalar", g.in(1), 1.0)});
  return {g.Mul(dy, g.Mul(g.in(1), power)), g.Mul(dy, g.Mul(g.out(0), g.Op("log", {g.in(0)})))};
}

// d lhs = dy lhs / y, d rhs = dy rhs / y.
std::vector<NodeEntry> HypotGradient(const GradientBuilder& g, const NodeEntry& dy) {
  return {g.Mul(dy, g.Div(g.in(0), g.out(0))), g.Mul(dy, g.Div(g.in(1), g.out(0)))};
}

// _backward_relu is linear in lhs with relu's mask; rhs (relu's output) only sets the mask.
std::vector<NodeEntry> ReluBackwardGradient(const GradientBuilder& g, const NodeEntry& dy) {
  return {g.Op("_backward_relu", {dy, g.in(1)}), g.ZerosLike(g.in(1))};
}

// Every input of add_n gets the output's gradient.
std::vector<NodeEntry> AddNGradient(const std::shared_ptr<Node>& n,
                                    const std::vector<NodeEntry>& dy) {
  return std::vector<NodeEntry>(n->inputs.size(), dy[0]);
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

// ONNX Sum takes float dtypes only; other dtypes add left to right with Add, as the kernel.
OnnxMapping AddNOnnx() {
  const OnnxBinaryForm add = OnnxArithmetic("Add", false);
  auto convert = [emit = add.emit](OnnxNodeContext* ctx) {
    const DType d = ctx->in(0).dtype;
    const size_t n = ctx->num_inputs();
    if (d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16) {
      ctx->Add("Sum", ctx->input_names(), {}, ctx->out(0).name);
      return;
    }
    if (n == 1) {
      ctx->Add("Identity", {ctx->in(0).name}, {}, ctx->out(0).name);
      return;
    }
    // The last Add goes through the shared form, which refuses what it refuses for every Add.
    std::string sum = ctx->in(0).name;
    for (size_t i = 1; i + 1 < n; ++i) sum = ctx->Add("Add", {sum, ctx->in(i).name});
    emit(ctx, sum, ctx->in(n - 1).name, d, ctx->out(0).name);
  };
  return OnnxMapping{{"Sum", "Add", "Identity"}, convert, add.limits};
}

}  // namespace

void RegisterElemwiseBinaryOps(OpRegistry* r) {
  RegisterBinary(r, "elemwise_add", "Adds arguments elementwise (shapes must be equal).",
                 BinaryCompute<m::Add>, {"_add", "_plus", "_Plus", "_sparse_elemwise_add"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Add", false)))
      .SetGradient(BinaryGradient(AddGradient));
  RegisterBinary(r, "elemwise_sub", "Subtracts arguments elementwise (shapes must be equal).",
                 BinaryCompute<m::Sub>, {"_sub", "_minus", "_Minus", "_sparse_elemwise_sub"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Sub", false)))
      .SetGradient(BinaryGradient(SubGradient));
  RegisterBinary(r, "elemwise_mul", "Multiplies arguments elementwise (shapes must be equal).",
                 BinaryCompute<m::Mul>, {"_mul", "_Mul", "_sparse_elemwise_mul"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Mul", false)))
      .SetGradient(BinaryGradient(MulGradient));
  RegisterBinary(r, "elemwise_div",
                 "Divides arguments elementwise (shapes must be equal); integers truncate "
                 "toward zero and x / 0 = 0 (where MXNet's process dies).",
                 BinaryCompute<m::Div>, {"_div", "_Div", "_sparse_elemwise_div"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Div", true)))
      .SetGradient(BinaryGradient(DivGradient));
  RegisterBinary(r, "_grad_add", "Adds arguments elementwise (the gradient accumulation op).",
                 BinaryCompute<m::Add>)
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Add", false)))
      .SetGradient(BinaryGradient(AddGradient));
  RegisterBinary(r, "_scatter_elemwise_div",
                 "Divides arguments elementwise (dense arrays: the same as elemwise_div).",
                 BinaryCompute<m::Div>)
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Div", true)));
  RegisterBinary(r, "_power", "lhs raised to the power rhs, elementwise.", BinaryCompute<m::Power>,
                 {"_Power"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Pow", true)))
      .SetGradient(BinaryGradient(PowerGradient));
  RegisterBinary(r, "_mod",
                 "Remainder with the sign of the divisor (Python's %), elementwise; x % 0 = 0.",
                 BinaryCompute<m::Mod>, {"_Mod"});
  RegisterBinary(r, "_maximum", "Elementwise maximum (NaN in lhs propagates).",
                 BinaryCompute<m::Maximum>, {"_Maximum"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Max", false)))
      .SetGradient(BinaryGradient(MaximumGradient));
  RegisterBinary(r, "_minimum", "Elementwise minimum (NaN in lhs propagates).",
                 BinaryCompute<m::Minimum>, {"_Minimum"})
      .SetOnnx(OnnxBinaryOp(OnnxArithmetic("Min", false)))
      .SetGradient(BinaryGradient(MinimumGradient));
  RegisterBinary(r, "_hypot", "sqrt(lhs^2 + rhs^2), elementwise.", BinaryCompute<m::Hypot>,
                 {"_Hypot"})
      .SetGradient(BinaryGradient(HypotGradient));
  RegisterBinary(r, "_equal", "1 where lhs == rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::Equal>, {"_Equal"})
      .SetOnnx(OnnxBinaryOp(OnnxComparison("Equal")))
      .SetGradient(internal::ZeroGradient);
  RegisterBinary(r, "_not_equal", "1 where lhs != rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::NotEqual>, {"_Not_Equal"})
      .SetOnnx(OnnxBinaryOp(OnnxComparison("Equal", true)))
      .SetGradient(internal::ZeroGradient);
  RegisterBinary(r, "_greater", "1 where lhs > rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::Greater>, {"_Greater"})
      .SetOnnx(OnnxBinaryOp(OnnxComparison("Greater")))
      .SetGradient(internal::ZeroGradient);
  RegisterBinary(r, "_greater_equal", "1 where lhs >= rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::GreaterEqual>, {"_Greater_Equal"})
      .SetOnnx(OnnxBinaryOp(OnnxComparison("GreaterOrEqual")))
      .SetGradient(internal::ZeroGradient);
  RegisterBinary(r, "_lesser", "1 where lhs < rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::Lesser>, {"_Lesser"})
      .SetOnnx(OnnxBinaryOp(OnnxComparison("Less")))
      .SetGradient(internal::ZeroGradient);
  RegisterBinary(r, "_lesser_equal", "1 where lhs <= rhs, else 0 (in the input dtype).",
                 BinaryCompute<m::LesserEqual>, {"_Lesser_Equal"})
      .SetOnnx(OnnxBinaryOp(OnnxComparison("LessOrEqual")))
      .SetGradient(internal::ZeroGradient);
  RegisterBinary(r, "_logical_and", "1 where both lhs and rhs are nonzero, else 0.",
                 BinaryCompute<m::LogicalAnd>, {"_Logical_And"})
      .SetOnnx(OnnxBinaryOp(OnnxLogical("And")))
      .SetGradient(internal::ZeroGradient);
  RegisterBinary(r, "_logical_or", "1 where lhs or rhs is nonzero, else 0.",
                 BinaryCompute<m::LogicalOr>, {"_Logical_Or"})
      .SetOnnx(OnnxBinaryOp(OnnxLogical("Or")))
      .SetGradient(internal::ZeroGradient);
  RegisterBinary(r, "_logical_xor", "1 where exactly one of lhs and rhs is nonzero, else 0.",
                 BinaryCompute<m::LogicalXor>, {"_Logical_Xor"})
      .SetOnnx(OnnxBinaryOp(OnnxLogical("Xor")))
      .SetGradient(internal::ZeroGradient);
  RegisterBinary(r, "_backward_relu",
                 "relu's input gradient from its output: lhs (the output gradient) times 1 where "
                 "rhs (relu's output) > 0, 0 where rhs <= 0 and NaN where rhs is NaN.",
                 BinaryCompute<m::ReluGrad>)
      .SetGradient(BinaryGradient(ReluBackwardGradient));
  RegisterBinary(r, "_identity_with_attr_like_rhs",
                 "Returns lhs; rhs (of the same shape and dtype) is not read.", CopyLhsCompute)
      .SetInplace({{0, 0}})
      .SetIdentityView()
      .SetOnnx({"Identity"},
               [](OnnxNodeContext* ctx) {
                 ctx->Add("Identity", {ctx->in(0).name}, {}, ctx->out(0).name);
               })
      .SetGradient(internal::IdentityGradient);

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
      .SetPattern(OpPattern::kElemwise)
      .SetOnnx(AddNOnnx())
      .SetGradient(AddNGradient);
}

}  // namespace hybridnet
