// Creation and shape-of operators (MXNet src/operator/tensor/init_op.{h,cc},
// elemwise_unary_op_basic.cc shape_array/size_array): _zeros, _ones, _full, _eye, _arange,
// _linspace, _zeros_without_dtype take no input; zeros_like, ones_like and _contrib_arange_like
// read only their input's shape and dtype (so, as in MXNet, their input's gradient is zero);
// shape_array and size_array return it as int64.
//
// MXNet's legacy shape convention holds: a 0 in `shape` is unknown and is taken from the
// consumers (so is the whole shape when it is ()). Every shape an attribute asks for is checked
// against the tensor limits (hybridnet/limits.h) before anything is allocated.
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/limits.h"
#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/dtype_switch-inl.h"
#include "ops/elemwise/math_functors-inl.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::IsNumericDType;
using internal::SwitchNumericDType;
namespace m = op_math;

// The dtype names MXNet's creation ops accept (MXNET_ADD_ALL_TYPES[_WITH_BOOL]).
EnumNames<DType> AllTypes(bool with_bool) {
  EnumNames<DType> names = {{"bfloat16", DType::kBFloat16}, {"float16", DType::kFloat16},
                            {"float32", DType::kFloat32},   {"float64", DType::kFloat64},
                            {"int32", DType::kInt32},       {"int64", DType::kInt64},
                            {"int8", DType::kInt8},         {"uint8", DType::kUint8}};
  if (with_bool) names.insert(names.begin() + 1, {"bool", DType::kBool});
  return names;
}

struct InitParam {  // _zeros, _ones
  std::vector<int64_t> shape;
  std::string ctx;
  DType dtype = DType::kFloat32;
  static void Declare(ParamDeclarer<InitParam>* d) {
    d->Field("shape", &InitParam::shape)
        .Default(std::vector<int64_t>{})
        .Describe("The shape of the output (0 or () = taken from the consumers).");
    d->Field("ctx", &InitParam::ctx).Default("").Describe("Device context (ignored).");
    d->Field("dtype", &InitParam::dtype, AllTypes(true))
        .Default(DType::kFloat32)
        .Describe("Target data type.");
  }
};

struct FullParam {  // _full
  std::vector<int64_t> shape;
  std::string ctx;
  DType dtype = DType::kFloat32;
  double value = 0.0;
  static void Declare(ParamDeclarer<FullParam>* d) {
    d->Field("shape", &FullParam::shape)
        .Default(std::vector<int64_t>{})
        .Describe("The shape of the output (0 or () = taken from the consumers).");
    d->Field("ctx", &FullParam::ctx).Default("").Describe("Device context (ignored).");
    d->Field("dtype", &FullParam::dtype, AllTypes(true))
        .Default(DType::kFloat32)
        .Describe("Target data type.");
    d->Field("value", &FullParam::value).Required().Describe("The value of every element.");
  }
};

struct ZerosWithoutDTypeParam {  // _zeros_without_dtype
  std::vector<int64_t> shape;
  std::string ctx;
  int dtype = -1;
  static void Declare(ParamDeclarer<ZerosWithoutDTypeParam>* d) {
    d->Field("shape", &ZerosWithoutDTypeParam::shape)
        .Default(std::vector<int64_t>{})
        .Describe("The shape of the output (0 or () = taken from the consumers).");
    d->Field("ctx", &ZerosWithoutDTypeParam::ctx).Default("").Describe("Device context (ignored).");
    d->Field("dtype", &ZerosWithoutDTypeParam::dtype)
        .Default(-1)
        .Describe(
            "Target dtype as MXNet's type flag (0 float32, 1 float64, 3 uint8, 4 int32, "
            "5 int8, 6 int64, ...); -1 = taken from the consumers.");
  }
};

struct FillLikeParam {  // zeros_like, ones_like
  std::string dtype;
  static void Declare(ParamDeclarer<FillLikeParam>* d) {
    d->Field("dtype", &FillLikeParam::dtype)
        .Default("")
        .Describe(
            "Accepted and ignored, as MXNet 1.9.1 does: the output keeps the input's "
            "dtype (GluonCV's CenterNet writes zeros_like(x, dtype='int64') and MXNet "
            "gives float32 for a float32 x).");
  }
};

void InitZerosWithoutDType(ZerosWithoutDTypeParam* p) {
  HN_CHECK(p->dtype == -1 || IsKnownDType(p->dtype), kInvalidArgument)
      << "dtype=" << p->dtype << " is not a type flag (-1 or 0..12)";
}

struct EyeParam {
  int64_t N = 0;
  int64_t M = 0;
  int64_t k = 0;
  std::string ctx;
  DType dtype = DType::kFloat32;
  static void Declare(ParamDeclarer<EyeParam>* d) {
    d->Field("N", &EyeParam::N).Required().Min(1).Describe("Number of rows in the output.");
    d->Field("M", &EyeParam::M)
        .Default(0)
        .Min(0)
        .Describe("Number of columns in the output (0 = N).");
    d->Field("k", &EyeParam::k)
        .Default(0)
        .Describe("Index of the diagonal: 0 the main one, > 0 above, < 0 below.");
    d->Field("ctx", &EyeParam::ctx).Default("").Describe("Device context (ignored).");
    d->Field("dtype", &EyeParam::dtype,
             {{"float16", DType::kFloat16},
              {"float32", DType::kFloat32},
              {"float64", DType::kFloat64},
              {"int32", DType::kInt32},
              {"int64", DType::kInt64},
              {"int8", DType::kInt8},
              {"uint8", DType::kUint8}})
        .Default(DType::kFloat32)
        .Describe("Target data type.");
  }
};

struct RangeParam {  // _arange
  double start = 0.0;
  std::optional<double> stop;
  double step = 1.0;
  int repeat = 1;
  bool infer_range = false;
  std::string ctx;
  DType dtype = DType::kFloat32;
  static void Declare(ParamDeclarer<RangeParam>* d) {
    d->Field("start", &RangeParam::start)
        .Required()
        .Describe("Start of the interval (included); with stop None, the end and the start is 0.");
    d->Field("stop", &RangeParam::stop)
        .Default(std::nullopt)
        .Describe("End of the interval (excluded).");
    d->Field("step", &RangeParam::step).Default(1.0).Describe("Spacing between values.");
    d->Field("repeat", &RangeParam::repeat)
        .Default(1)
        .Describe("How many times each value is repeated.");
    d->Field("infer_range", &RangeParam::infer_range)
        .Default(false)
        .Describe("Take the length from the output's shape (given by the consumers).");
    d->Field("ctx", &RangeParam::ctx).Default("").Describe("Device context (ignored).");
    d->Field("dtype", &RangeParam::dtype, AllTypes(false))
        .Default(DType::kFloat32)
        .Describe("Target data type.");
  }
};

// MXNet's RangeParamParser: arange(n) means [0, n).
void InitRange(RangeParam* p) {
  if (!p->infer_range && !p->stop) {
    p->stop = p->start;
    p->start = 0.0;
  }
  HN_CHECK(p->step != 0.0, kInvalidArgument) << "step must not be 0";
  HN_CHECK(p->repeat >= 1, kInvalidArgument) << "repeat must be at least 1, got " << p->repeat;
}

struct LinspaceParam {
  double start = 0.0;
  double stop = 0.0;
  int num = 0;
  bool endpoint = true;
  std::string ctx;
  DType dtype = DType::kFloat32;
  static void Declare(ParamDeclarer<LinspaceParam>* d) {
    d->Field("start", &LinspaceParam::start).Required().Describe("The first value.");
    d->Field("stop", &LinspaceParam::stop).Required().Describe("The end of the sequence.");
    d->Field("num", &LinspaceParam::num).Required().Describe("Number of values (>= 1 here).");
    d->Field("endpoint", &LinspaceParam::endpoint)
        .Default(true)
        .Describe("Whether stop is the last value (else it is excluded).");
    d->Field("ctx", &LinspaceParam::ctx).Default("").Describe("Device context (ignored).");
    d->Field("dtype", &LinspaceParam::dtype, AllTypes(false))
        .Default(DType::kFloat32)
        .Describe("Target data type.");
  }
};

struct RangeLikeParam {  // _contrib_arange_like
  double start = 0.0;
  double step = 1.0;
  int repeat = 1;
  std::string ctx;
  std::optional<int> axis;
  static void Declare(ParamDeclarer<RangeLikeParam>* d) {
    d->Field("start", &RangeLikeParam::start).Default(0.0).Describe("The first value.");
    d->Field("step", &RangeLikeParam::step).Default(1.0).Describe("Spacing between values.");
    d->Field("repeat", &RangeLikeParam::repeat)
        .Default(1)
        .Describe("How many times each value is repeated.");
    d->Field("ctx", &RangeLikeParam::ctx).Default("").Describe("Device context (ignored).");
    d->Field("axis", &RangeLikeParam::axis)
        .Default(std::nullopt)
        .Describe(
            "None: the output has the input's shape; else it is 1-D with the length of "
            "that input axis (negative counts from the end).");
  }
};

void InitRangeLike(RangeLikeParam* p) {
  HN_CHECK(p->repeat >= 1, kInvalidArgument) << "repeat must be at least 1, got " << p->repeat;
}

// ---- inference ------------------------------------------------------------------------------

void CheckLimits(const NodeAttrs& attrs, const Shape& shape) {
  CheckShapeLimits(shape, DescribeNode(attrs) + ": ");
}

// MXNet's InitShape: the attribute's shape, whose 0 dims (or all of it, when it is ()) are
// unknown and filled from the output's.
bool InitShape(const NodeAttrs& attrs, const std::vector<int64_t>& dims, std::vector<Shape>* out) {
  if (!dims.empty()) {
    const Shape wanted(dims);
    CheckLimits(attrs, wanted);
    Shape merged = (*out)[0];
    HN_CHECK(MergeShape(wanted, &merged), kShapeError)
        << DescribeNode(attrs) << ": output shape " << (*out)[0]
        << " does not match shape=" << wanted;
    (*out)[0] = merged;
  }
  if ((*out)[0].IsKnown()) CheckLimits(attrs, (*out)[0]);
  return (*out)[0].IsKnown();
}

template <typename P>
bool InitOpShape(const NodeAttrs& attrs, std::vector<Shape>*, std::vector<Shape>* out) {
  return InitShape(attrs, attrs.Param<P>().shape, out);
}

bool AssignOutputType(const NodeAttrs& attrs, DType dtype, std::vector<DType>* out) {
  if (dtype == DType::kUnknown) return (*out)[0] != DType::kUnknown;
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == dtype, kTypeError)
      << DescribeNode(attrs) << ": output dtype " << DTypeName((*out)[0])
      << " differs from dtype=" << DTypeName(dtype);
  (*out)[0] = dtype;
  return true;
}

template <typename P>
bool InitOpType(const NodeAttrs& attrs, std::vector<DType>*, std::vector<DType>* out) {
  return AssignOutputType(attrs, attrs.Param<P>().dtype, out);
}

bool ZerosWithoutDTypeType(const NodeAttrs& attrs, std::vector<DType>*, std::vector<DType>* out) {
  return AssignOutputType(attrs, static_cast<DType>(attrs.Param<ZerosWithoutDTypeParam>().dtype),
                          out);
}

// Creation ops that compute values (arange, linspace, eye) do it in the numeric types only.
template <typename P>
bool NumericInitOpType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const DType dtype = attrs.Param<P>().dtype;
  HN_CHECK(IsNumericDType(dtype), kUnsupported)
      << DescribeNode(attrs) << ": dtype=" << DTypeName(dtype)
      << " is not supported (values are computed in float32, float64, uint8, int8, int32 or "
         "int64; Cast the result)";
  return InitOpType<P>(attrs, in, out);
}

bool EyeShape(const NodeAttrs& attrs, std::vector<Shape>*, std::vector<Shape>* out) {
  const EyeParam& p = attrs.Param<EyeParam>();
  return InitShape(attrs, {p.N, p.M > 0 ? p.M : p.N}, out);
}

// ceil((stop - start) / step) * repeat values; MXNet rejects empty ranges.
bool RangeShape(const NodeAttrs& attrs, std::vector<Shape>*, std::vector<Shape>* out) {
  const RangeParam& p = attrs.Param<RangeParam>();
  if (p.infer_range && !p.stop) {
    if ((*out)[0].IsKnown()) CheckLimits(attrs, (*out)[0]);
    return (*out)[0].IsKnown();
  }
  const double stop = *p.stop;
  HN_CHECK(p.step > 0 ? p.start < stop : p.start > stop, kInvalidArgument)
      << DescribeNode(attrs) << ": invalid range (start, stop, step) = (" << p.start << ", " << stop
      << ", " << p.step << "): it has no elements";
  const double size = std::ceil((stop - p.start) / p.step) * p.repeat;
  // Checked in double: a NaN or huge length never reaches the integer conversion.
  HN_CHECK(size <= static_cast<double>(GetLimit(Limit::kMaxTensorElements)), kOutOfMemory)
      << DescribeNode(attrs) << ": the range (" << p.start << ", " << stop << ", " << p.step
      << ") repeated " << p.repeat << " times has " << size
      << " elements, more than the tensor limit" << LimitNote(Limit::kMaxTensorElements);
  return InitShape(attrs, {static_cast<int64_t>(size)}, out);
}

bool LinspaceShape(const NodeAttrs& attrs, std::vector<Shape>*, std::vector<Shape>* out) {
  const int num = attrs.Param<LinspaceParam>().num;
  HN_CHECK(num >= 1, kInvalidArgument)
      << DescribeNode(attrs) << ": num=" << num
      << " must be at least 1 (an empty result has no shape under the legacy convention)";
  return InitShape(attrs, {num}, out);
}

size_t ResolveAxis(const NodeAttrs& attrs, int axis, size_t ndim) {
  const int n = static_cast<int>(ndim);
  HN_CHECK(axis >= -n && axis < n, kShapeError) << DescribeNode(attrs) << ": axis " << axis
                                                << " is out of range for a " << ndim << "-D input";
  return static_cast<size_t>(axis < 0 ? axis + n : axis);
}

bool RangeLikeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const auto& axis = attrs.Param<RangeLikeParam>().axis;
  if (!axis) return ElemwiseShape(attrs, in, out);
  const Shape& x = (*in)[0];
  if (x.ndim() == 0) return false;
  const size_t k = ResolveAxis(attrs, *axis, x.ndim());
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(Shape{x[k]}, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " differs from (" << x[k] << ",)";
  (*out)[0] = merged;
  return x.IsKnown();
}

bool ShapeArrayShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& x = (*in)[0];
  if (x.ndim() == 0) return false;
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(Shape{static_cast<int64_t>(x.ndim())}, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " differs from (" << x.ndim()
      << ",)";
  (*out)[0] = merged;
  return x.IsKnown();
}

bool SizeArrayShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(Shape{1}, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " differs from (1,)";
  (*out)[0] = merged;
  return (*in)[0].IsKnown();
}

bool Int64OutputType(const NodeAttrs& attrs, std::vector<DType>*, std::vector<DType>* out) {
  return AssignOutputType(attrs, DType::kInt64, out);
}

bool AnyKnownType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return ElemwiseType(attrs, in, out);
}

// ---- kernels ----------------------------------------------------------------------------------

// Every element = value converted as MXNet's DType(value) (half types through float).
void FillValue(const TBlob& out, double value) {
  const int64_t n = out.Size();
  if (n == 0) return;
  if (value == 0.0) {
    std::memset(out.data, 0, static_cast<size_t>(n) * DTypeSize(out.dtype));
    return;
  }
  if (IsNumericDType(out.dtype)) {
    SwitchNumericDType(out.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T v = m::FromReal<T>(value);
      T* y = out.ptr<T>();
      for (int64_t i = 0; i < n; ++i) y[i] = v;
    });
    return;
  }
  const size_t size = DTypeSize(out.dtype);
  unsigned char element[8];
  ConvertElements(&value, DType::kFloat64, element, out.dtype, 1);
  auto* y = static_cast<unsigned char*>(out.data);
  for (int64_t i = 0; i < n; ++i) std::memcpy(y + static_cast<size_t>(i) * size, element, size);
}

template <int kValue>
void FillCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>&,
                 const std::vector<TBlob>& out) {
  FillValue(out[0], kValue);
}

void FullCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>&,
                 const std::vector<TBlob>& out) {
  FillValue(out[0], attrs.Param<FullParam>().value);
}

// MXNet's range kernel: out[i] = start + (i / repeat) * step in the output type; integers
// compute in int64 and wrap, unsigned types take start and step through int64 first.
void RangeFill(const TBlob& out, double start, double step, int repeat) {
  const int64_t n = out.Size();
  SwitchNumericDType(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* y = out.ptr<T>();
    if constexpr (std::is_floating_point_v<T>) {
      const T s = static_cast<T>(start), d = static_cast<T>(step);
      for (int64_t i = 0; i < n; ++i) y[i] = s + static_cast<T>(i / repeat) * d;
    } else {
      const T s =
          std::is_signed_v<T> ? m::FromReal<T>(start) : static_cast<T>(m::FromReal<int64_t>(start));
      const T d =
          std::is_signed_v<T> ? m::FromReal<T>(step) : static_cast<T>(m::FromReal<int64_t>(step));
      for (int64_t i = 0; i < n; ++i) {
        const int64_t v = m::Add::Map<int64_t>(
            static_cast<int64_t>(s), m::Mul::Map<int64_t>(i / repeat, static_cast<int64_t>(d)));
        y[i] = static_cast<T>(v);
      }
    }
  });
}

void RangeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>&,
                  const std::vector<TBlob>& out) {
  const RangeParam& p = attrs.Param<RangeParam>();
  RangeFill(out[0], p.start, p.step, p.repeat);
}

void RangeLikeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>&,
                      const std::vector<TBlob>& out) {
  const RangeLikeParam& p = attrs.Param<RangeLikeParam>();
  RangeFill(out[0], p.start, p.step, p.repeat);
}

// MXNet's linspace kernel: DType(start + step * i) with the step in double.
void LinspaceCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>&,
                     const std::vector<TBlob>& out) {
  const LinspaceParam& p = attrs.Param<LinspaceParam>();
  const int intervals = p.endpoint ? p.num - 1 : p.num;
  const double step = intervals > 0 ? (p.stop - p.start) / intervals : 0.0;
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* y = out[0].ptr<T>();
    const int64_t n = out[0].Size();
    for (int64_t i = 0; i < n; ++i) y[i] = m::FromReal<T>(p.start + step * static_cast<double>(i));
  });
}

void EyeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>&,
                const std::vector<TBlob>& out) {
  const EyeParam& p = attrs.Param<EyeParam>();
  FillValue(out[0], 0.0);
  const int64_t rows = out[0].shape[0], cols = out[0].shape[1];
  SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* y = out[0].ptr<T>();
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t c = r + p.k;
      if (c >= 0 && c < cols) y[r * cols + c] = T(1);
    }
  });
}

void ShapeArrayCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  int64_t* y = out[0].ptr<int64_t>();
  for (size_t i = 0; i < in[0].shape.ndim(); ++i) y[i] = in[0].shape[i];
}

void SizeArrayCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  out[0].ptr<int64_t>()[0] = in[0].Size();
}

// ---- ONNX ---------------------------------------------------------------------------------------

// zeros_like, ones_like: the value (a 0-D constant of the output dtype) expanded to the input's
// shape, read at run time where it follows the batch size.
template <int kValue>
void FillLikeOnnx(OnnxNodeContext* ctx) {
  const OnnxValue& x = ctx->in(0);
  const std::string shape = ctx->LeadingDimsThen(x, x.shape.ndim(), {});
  ctx->Add("Expand", {ctx->Scalar(kValue, ctx->out(0).dtype), shape}, {}, ctx->out(0).name);
}

void ShapeArrayOnnx(OnnxNodeContext* ctx) {
  ctx->Add("Shape", {ctx->in(0).name}, {}, ctx->out(0).name);
}

// ONNX Size is 0-D; MXNet's is (1,).
void SizeArrayOnnx(OnnxNodeContext* ctx) {
  ctx->Unsqueeze(ctx->Add("Size", {ctx->in(0).name}), {0}, ctx->out(0).name);
}

Op& RegisterCreation(OpRegistry* r, const char* name, const char* description) {
  return r->Register(name).Describe(description).SetInputNames(std::vector<std::string>{});
}

}  // namespace

void RegisterInitOps(OpRegistry* r) {
  RegisterCreation(r, "_zeros", "An array of zeros of the given shape and dtype.")
      .SetParam<InitParam>()
      .SetInferShape(InitOpShape<InitParam>)
      .SetInferType(InitOpType<InitParam>)
      .SetCompute(FillCompute<0>);
  RegisterCreation(r, "_ones", "An array of ones of the given shape and dtype.")
      .SetParam<InitParam>()
      .SetInferShape(InitOpShape<InitParam>)
      .SetInferType(InitOpType<InitParam>)
      .SetCompute(FillCompute<1>);
  RegisterCreation(r, "_full", "An array of the given shape and dtype filled with value.")
      .AddAlias("_npi_full")
      .SetParam<FullParam>()
      .SetInferShape(InitOpShape<FullParam>)
      .SetInferType(InitOpType<FullParam>)
      .SetCompute(FullCompute);
  RegisterCreation(r, "_zeros_without_dtype",
                   "An array of zeros whose dtype (dtype=-1) comes from its consumers.")
      .SetParam<ZerosWithoutDTypeParam>(InitZerosWithoutDType)
      .SetInferShape(InitOpShape<ZerosWithoutDTypeParam>)
      .SetInferType(ZerosWithoutDTypeType)
      .SetCompute(FillCompute<0>);
  RegisterCreation(r, "_eye", "A 2-D array with ones on diagonal k and zeros elsewhere.")
      .SetParam<EyeParam>()
      .SetInferShape(EyeShape)
      .SetInferType(NumericInitOpType<EyeParam>)
      .SetCompute(EyeCompute);
  RegisterCreation(r, "_arange",
                   "Evenly spaced values start + (i / repeat) * step in [start, stop), each "
                   "repeated `repeat` times, computed in the output dtype.")
      .SetParam<RangeParam>(InitRange)
      .SetInferShape(RangeShape)
      .SetInferType(NumericInitOpType<RangeParam>)
      .SetCompute(RangeCompute);
  RegisterCreation(r, "_linspace",
                   "num evenly spaced values from start to stop (stop included when endpoint).")
      .AddAlias("_npi_linspace")
      .SetParam<LinspaceParam>()
      .SetInferShape(LinspaceShape)
      .SetInferType(NumericInitOpType<LinspaceParam>)
      .SetCompute(LinspaceCompute);

  r->Register("zeros_like")
      .Describe("An array of zeros with the input's shape and dtype (the input is not read).")
      .AddAlias("_sparse_zeros_like")
      .SetParam<FillLikeParam>()
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(AnyKnownType)
      .SetCompute(FillCompute<0>)
      .SetOnnx({"Expand", "Shape", "Slice", "Concat"}, FillLikeOnnx<0>)
      .SetGradient(internal::ZeroGradient);
  r->Register("ones_like")
      .Describe("An array of ones with the input's shape and dtype (the input is not read).")
      .SetParam<FillLikeParam>()
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(AnyKnownType)
      .SetCompute(FillCompute<1>)
      .SetOnnx({"Expand", "Shape", "Slice", "Concat"}, FillLikeOnnx<1>)
      .SetGradient(internal::ZeroGradient);
  r->Register("_contrib_arange_like")
      .Describe(
          "start + (i / repeat) * step in the input's shape (or along one axis of it) and "
          "dtype; the input's values are not read.")
      .AddAlias("_npx_arange_like")
      .SetParam<RangeLikeParam>(InitRangeLike)
      .SetInputNames({"data"})
      .SetInferShape(RangeLikeShape)
      .SetInferType(internal::NumericType)
      .SetCompute(RangeLikeCompute)
      .SetGradient(internal::ZeroGradient);
  r->Register("shape_array")
      .Describe("The input's shape as a 1-D int64 array.")
      .AddAlias("_npx_shape_array")
      .SetInputNames({"data"})
      .SetInferShape(ShapeArrayShape)
      .SetInferType(Int64OutputType)
      .SetCompute(ShapeArrayCompute)
      .SetOnnx({"Shape"}, ShapeArrayOnnx);
  r->Register("size_array")
      .Describe("The input's number of elements as a (1,) int64 array.")
      .SetInputNames({"data"})
      .SetInferShape(SizeArrayShape)
      .SetInferType(Int64OutputType)
      .SetCompute(SizeArrayCompute)
      .SetOnnx({"Size", "Unsqueeze"}, SizeArrayOnnx);
}

}  // namespace hybridnet
