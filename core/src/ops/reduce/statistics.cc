// Reductions beyond reduce.cc (MXNet src/operator/tensor/broadcast_reduce_norm_value.cc,
// broadcast_reduce_op_value.cc nansum/nanprod, nn/moments-inl.h, numpy/np_cumsum-inl.h):
//  * nansum / nanprod: sum / product treating NaN as 0 / 1, every numeric dtype;
//  * norm: the L1 or L2 norm over axes (float32/float64 input);
//  * moments: mean and variance over axes (the variance's differences taken from the mean as
//    rounded to the input dtype, as MXNet's kernel does);
//  * _np_cumsum (cumsum): running sums along an axis, or over the flattened input, accumulated
//    in the output dtype.
// Float sums are accumulated in double (reduce.cc's rule); integer ones in int64 with
// wrap-around, then converted to the output type.
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"
#include "ops/elemwise/math_functors-inl.h"
#include "ops/gradient_util.h"
#include "ops/reduce/reduce-inl.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::ForEachOutput;
using internal::ForEachReduced;
using internal::IsNumericDType;
using internal::MakeReducePlan;
using internal::NumericType;
using internal::ReduceAxesParam;
using internal::ReducedAxes;
using internal::ReducedAxesOf;
using internal::ReducedShape;
using internal::ReducePlan;
using internal::SwitchNumericDType;
namespace m = op_math;

struct NormParam {
  int ord = 2;
  std::optional<std::vector<int64_t>> axis;
  std::optional<DType> out_dtype;
  bool keepdims = false;
  static void Declare(ParamDeclarer<NormParam>* d) {
    d->Field("ord", &NormParam::ord).Default(2).Describe("Order of the norm: 1 or 2.");
    d->Field("axis", &NormParam::axis)
        .Default(std::nullopt)
        .Describe("The axis or axes to reduce (None: all, giving shape (1,)).");
    d->Field("out_dtype", &NormParam::out_dtype,
             {{"float16", DType::kFloat16},
              {"float32", DType::kFloat32},
              {"float64", DType::kFloat64},
              {"int64", DType::kInt64},
              {"int32", DType::kInt32},
              {"int8", DType::kInt8}})
        .Default(std::nullopt)
        .Describe(
            "The output's dtype: None or the input's (MXNet 1.9.1's CPU kernel fails on "
            "any other).");
    d->Field("keepdims", &NormParam::keepdims)
        .Default(false)
        .Describe("Keep the reduced axes as size 1.");
  }
};

void InitNorm(NormParam* p) {
  HN_CHECK(p->ord == 1 || p->ord == 2, kInvalidArgument)
      << "ord=" << p->ord << ": only 1 and 2 are supported";
}

struct MomentsParam {
  std::optional<std::vector<int64_t>> axes;
  bool keepdims = false;
  static void Declare(ParamDeclarer<MomentsParam>* d) {
    d->Field("axes", &MomentsParam::axes)
        .Default(std::nullopt)
        .Describe("Axes to compute the mean and variance over (required, non-empty).");
    d->Field("keepdims", &MomentsParam::keepdims)
        .Default(false)
        .Describe("Keep the reduced axes as size 1.");
  }
};

void InitMoments(MomentsParam* p) {
  HN_CHECK(p->axes && !p->axes->empty(), kInvalidArgument)
      << "axes must list the axes to reduce (for global moments, list every axis)";
}

struct CumsumParam {
  std::optional<int> axis;
  std::optional<DType> dtype;
  static void Declare(ParamDeclarer<CumsumParam>* d) {
    d->Field("axis", &CumsumParam::axis)
        .Default(std::nullopt)
        .Describe(
            "The axis to accumulate along (None: the flattened input). MXNet 1.9.1 "
            "takes non-negative axes only.");
    d->Field("dtype", &CumsumParam::dtype,
             {{"float16", DType::kFloat16},
              {"float32", DType::kFloat32},
              {"float64", DType::kFloat64},
              {"int8", DType::kInt8},
              {"int32", DType::kInt32},
              {"int64", DType::kInt64}})
        .Default(std::nullopt)
        .Describe("The output's and the accumulator's dtype (None: the input's).");
  }
};

// ---- nansum / nanprod -------------------------------------------------------------------------

template <bool kProd>
void NanReduceCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  const ReducePlan plan = MakeReducePlan(s, ReducedAxes(attrs, s.ndim()));
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    ForEachOutput(plan, [&](int64_t o, int64_t base) {
      Acc acc = kProd ? Acc(1) : Acc(0);
      ForEachReduced(plan, x, base, [&](T v) {
        if (m::IsNan(v)) return;
        if constexpr (kProd) {
          acc = m::Mul::Map(acc, static_cast<Acc>(v));
        } else {
          acc = m::Add::Map(acc, static_cast<Acc>(v));
        }
      });
      y[o] = static_cast<T>(acc);
    });
  });
}

// ---- norm -------------------------------------------------------------------------------------

std::vector<bool> NormAxes(const NodeAttrs& attrs, size_t ndim) {
  return ReducedAxesOf(attrs, attrs.Param<NormParam>().axis, false, ndim);
}

bool NormShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& x = (*in)[0];
  if (x.ndim() == 0) return false;
  HN_CHECK(x.ndim() <= internal::kMaxReduceDims, kShapeError)
      << DescribeNode(attrs) << ": reductions support at most " << internal::kMaxReduceDims
      << " dimensions, got " << x;
  internal::AssignReducedShape(
      attrs, out, ReducedShape(x, NormAxes(attrs, x.ndim()), attrs.Param<NormParam>().keepdims));
  return x.IsKnown() && (*out)[0].IsKnown();
}

// Integer norms are left out: MXNet computes them with its scaled float algorithm in integer
// arithmetic, which truncates every intermediate quotient.
bool NormType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const auto& out_dtype = attrs.Param<NormParam>().out_dtype;
  if (out_dtype) {
    HN_CHECK((*in)[0] == DType::kUnknown || (*in)[0] == *out_dtype, kUnsupported)
        << DescribeNode(attrs) << ": out_dtype=" << DTypeName(*out_dtype) << " differs from the "
        << "input's " << DTypeName((*in)[0]) << "; MXNet 1.9.1's CPU norm fails on that too (it "
        << "reads the output as the input's type), so only the input's dtype is accepted";
    (*in)[0] = *out_dtype;
  }
  const bool complete = ElemwiseType(attrs, in, out);
  const DType x = (*in)[0];
  HN_CHECK(x == DType::kUnknown || x == DType::kFloat32 || x == DType::kFloat64, kTypeError)
      << DescribeNode(attrs) << ": input has dtype " << DTypeName(x)
      << "; norm takes float32 or float64 (MXNet's integer norm truncates its intermediate "
         "quotients; Cast the input first)";
  return complete;
}

void NormCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  const ReducePlan plan = MakeReducePlan(s, NormAxes(attrs, s.ndim()));
  const bool l1 = attrs.Param<NormParam>().ord == 1;
  m::SwitchFloatDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    ForEachOutput(plan, [&](int64_t o, int64_t base) {
      double acc = 0.0;
      ForEachReduced(plan, x, base, [&](T v) {
        const double d = static_cast<double>(v);
        acc += l1 ? std::fabs(d) : d * d;
      });
      y[o] = static_cast<T>(l1 ? acc : std::sqrt(acc));
    });
  });
}

// ---- moments ----------------------------------------------------------------------------------

std::vector<bool> MomentsAxes(const NodeAttrs& attrs, size_t ndim) {
  return ReducedAxesOf(attrs, attrs.Param<MomentsParam>().axes, false, ndim);
}

bool MomentsShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& x = (*in)[0];
  if (x.ndim() == 0) return false;
  HN_CHECK(x.ndim() <= internal::kMaxReduceDims, kShapeError)
      << DescribeNode(attrs) << ": reductions support at most " << internal::kMaxReduceDims
      << " dimensions, got " << x;
  const Shape reduced =
      ReducedShape(x, MomentsAxes(attrs, x.ndim()), attrs.Param<MomentsParam>().keepdims);
  for (size_t i = 0; i < 2; ++i) {
    std::vector<Shape> one{(*out)[i]};
    internal::AssignReducedShape(attrs, &one, reduced);
    (*out)[i] = one[0];
  }
  return x.IsKnown() && reduced.IsKnown();
}

void MomentsCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  const ReducePlan plan = MakeReducePlan(s, MomentsAxes(attrs, s.ndim()));
  SwitchNumericDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    const T* x = in[0].ptr<const T>();
    T* mean = out[0].ptr<T>();
    T* var = out[1].ptr<T>();
    const Acc count = static_cast<Acc>(plan.red_count);
    ForEachOutput(plan, [&](int64_t o, int64_t base) {
      Acc sum = 0;
      ForEachReduced(plan, x, base, [&](T v) { sum = m::Add::Map(sum, static_cast<Acc>(v)); });
      const T mu = static_cast<T>(sum / count);
      Acc squares = 0;
      ForEachReduced(plan, x, base, [&](T v) {
        const T d = m::Sub::Map(v, mu);
        squares = m::Add::Map(squares, static_cast<Acc>(m::Mul::Map(d, d)));
      });
      mean[o] = mu;
      var[o] = static_cast<T>(squares / count);
    });
  });
}

// ---- cumsum -----------------------------------------------------------------------------------

bool CumsumShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& axis = attrs.Param<CumsumParam>().axis;
  const Shape& x = (*in)[0];
  if (axis) {
    HN_CHECK(*axis >= 0, kShapeError)
        << DescribeNode(attrs) << ": axis=" << *axis
        << " is negative; MXNet 1.9.1's cumsum takes axes counted from the front only";
    if (x.ndim() != 0) {
      HN_CHECK(static_cast<size_t>(*axis) < x.ndim(), kShapeError)
          << DescribeNode(attrs) << ": axis " << *axis << " is out of range for a " << x.ndim()
          << "-D input";
    }
    return ElemwiseShape(attrs, in, out);
  }
  if (!x.IsKnown()) return false;
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(Shape{x.Size()}, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " differs from (" << x.Size()
      << ",)";
  (*out)[0] = merged;
  return true;
}

bool CumsumType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const auto& dtype = attrs.Param<CumsumParam>().dtype;
  if (!dtype) return NumericType(attrs, in, out);
  HN_CHECK(IsNumericDType(*dtype), kUnsupported)
      << DescribeNode(attrs) << ": dtype=" << DTypeName(*dtype)
      << " is not supported (the running sum is kept in the output dtype, and float16 "
         "arithmetic is not computed here)";
  std::vector<DType> none;
  NumericType(attrs, in, &none);
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == *dtype, kTypeError)
      << DescribeNode(attrs) << ": output dtype " << DTypeName((*out)[0]) << " differs from "
      << "dtype=" << DTypeName(*dtype);
  (*out)[0] = *dtype;
  return (*in)[0] != DType::kUnknown;
}

// Converts one input element to the accumulator type as MXNet's OType(value) does.
template <typename O, typename I>
O ToOutputType(I v) {
  if constexpr (std::is_floating_point_v<I>) {
    return m::FromReal<O>(v);
  } else {
    return static_cast<O>(v);
  }
}

void CumsumCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const auto& axis = attrs.Param<CumsumParam>().axis;
  const Shape& s = in[0].shape;
  int64_t middle = s.Size(), trailing = 1;
  if (axis) {
    middle = s[static_cast<size_t>(*axis)];
    for (size_t k = static_cast<size_t>(*axis) + 1; k < s.ndim(); ++k) trailing *= s[k];
  }
  if (middle == 0) return;
  const int64_t lanes = s.Size() / middle;
  SwitchNumericDType(in[0].dtype, [&](auto itag) {
    using I = typename decltype(itag)::type;
    SwitchNumericDType(out[0].dtype, [&](auto otag) {
      using O = typename decltype(otag)::type;
      const I* x = in[0].ptr<const I>();
      O* y = out[0].ptr<O>();
      for (int64_t lane = 0; lane < lanes; ++lane) {
        const int64_t offset = (lane / trailing) * middle * trailing + lane % trailing;
        O acc = ToOutputType<O>(x[offset]);
        y[offset] = acc;
        for (int64_t j = 1; j < middle; ++j) {
          acc = m::Add::Map(acc, ToOutputType<O>(x[offset + j * trailing]));
          y[offset + j * trailing] = acc;
        }
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Gradients (MXNet's _backward_nansum, _backward_nanprod and _backward_norm)

using internal::GradientBuilder;

// `a` (the reduction's output shape) broadcast back over the axes attrs reduced.
NodeEntry BroadcastBack(const GradientBuilder& g, const NodeEntry& a) {
  AttrDict axes;
  for (const char* key : {"axis", "keepdims", "exclude"}) {
    auto it = g.attrs().dict.find(key);
    if (it != g.attrs().dict.end()) axes[key] = it->second;
  }
  return g.Op("_backward_sum", {a, g.in(0)}, std::move(axes));
}

// nansum: dy where x is not NaN; nanprod: dy * y / x there.
template <bool kProd>
std::vector<NodeEntry> NanReduceGradient(const std::shared_ptr<Node>& n,
                                         const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  const NodeEntry number = g.Op("_equal", {g.in(0), g.in(0)});
  const NodeEntry grad = BroadcastBack(g, g.out_grad(0));
  if (!kProd) return {g.Mul(grad, number)};
  const NodeEntry quotient = g.Div(BroadcastBack(g, g.out(0)), g.in(0));
  return {g.Op("where", {number, g.Mul(grad, quotient), g.ZerosLike(grad)})};
}

// norm: dy * sign(x) (ord 1), dy * x / y (ord 2).
std::vector<NodeEntry> NormGradient(const std::shared_ptr<Node>& n,
                                    const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  const NodeEntry grad = BroadcastBack(g, g.out_grad(0));
  if (g.attrs().Param<NormParam>().ord == 1) return {g.Mul(grad, g.Op("sign", {g.in(0)}))};
  return {g.Mul(grad, g.Div(g.in(0), BroadcastBack(g, g.out(0))))};
}

}  // namespace

void RegisterStatisticsOps(OpRegistry* r) {
  for (bool prod : {false, true}) {
    r->Register(prod ? "nanprod" : "nansum")
        .Describe(prod ? "Product over axes, NaN counted as 1."
                       : "Sum over axes, NaN counted as 0.")
        .SetParam<ReduceAxesParam>()
        .SetInputNames({"data"})
        .SetInferShape(internal::ReduceAxesShape)
        .SetInferType(NumericType)
        .SetCompute(prod ? FCompute(NanReduceCompute<true>) : FCompute(NanReduceCompute<false>))
        .SetGradient(prod ? FGradient(NanReduceGradient<true>)
                          : FGradient(NanReduceGradient<false>));
  }
  r->Register("norm")
      .Describe("The L1 (ord=1) or L2 (ord=2) norm over the given axes (all by default).")
      .AddAlias("_sparse_norm")
      .SetParam<NormParam>(InitNorm)
      .SetInputNames({"data"})
      .SetInferShape(NormShape)
      .SetInferType(NormType)
      .SetCompute(NormCompute)
      .SetGradient(NormGradient);
  r->Register("moments")
      .Describe("Mean and (population) variance over the given axes: two outputs.")
      .SetParam<MomentsParam>(InitMoments)
      .SetInputNames({"data"})
      .SetNumOutputs(2)
      .SetInferShape(MomentsShape)
      .SetInferType(NumericType)
      .SetCompute(MomentsCompute);
  r->Register("_np_cumsum")
      .Describe(
          "Cumulative sum along axis (None: over the flattened input), kept in the "
          "output dtype.")
      .AddAlias("cumsum")
      .SetParam<CumsumParam>()
      .SetInputNames({"a"})
      .SetInferShape(CumsumShape)
      .SetInferType(CumsumType)
      .SetCompute(CumsumCompute);
}

}  // namespace hybridnet
