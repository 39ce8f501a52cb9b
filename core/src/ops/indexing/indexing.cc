// Indexing ops (MXNet src/operator/tensor/indexing_op.{h,cc}, broadcast_reduce_op.h pick,
// ravel.h, contrib/index_array, contrib/index_copy): take, batch_take, pick, gather_nd,
// scatter_nd, _scatter_set_nd, one_hot, _ravel_multi_index, _unravel_index,
// _contrib_index_array, _contrib_index_copy.
//
// Data inputs may have any dtype (elements are moved as bytes); indices any numeric dtype or
// bool, converted as MXNet does (index_util-inl.h). Out-of-range indices follow MXNet where it
// defines them (take/pick clip or wrap, take mode=raise and gather_nd raise errors); where
// MXNet's CPU kernels would write or read out of bounds (scatter_nd, index_copy), the kernel
// raises an error naming the index instead.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/dtype_switch-inl.h"
#include "ops/gradient_util.h"
#include "ops/indexing/index_util-inl.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

using internal::AssignShape;
using internal::IndexValue;
using internal::NormalizeAxis;
using internal::SwitchIndexDType;

int64_t Prod(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t k = begin; k < end; ++k) p *= s[k];
  return p;
}

// Clip into [0, n-1], or wrap modulo n (MXNet's TakeZeroAxisCPU / pick).
int64_t ClipIndex(int64_t j, int64_t n) { return j <= 0 ? 0 : j >= n ? n - 1 : j; }
int64_t WrapIndex(int64_t j, int64_t n) {
  j %= n;
  return j < 0 ? j + n : j;
}

enum class TakeMode { kRaise, kWrap, kClip };

// ---------------------------------------------------------------------------------------------
// take

struct TakeParam {
  int axis = 0;
  TakeMode mode = TakeMode::kClip;
  static void Declare(ParamDeclarer<TakeParam>* d) {
    d->Field("axis", &TakeParam::axis)
        .Default(0)
        .Describe("The axis of a to take from (negative counts from the end).");
    d->Field("mode", &TakeParam::mode,
             {{"raise", TakeMode::kRaise}, {"wrap", TakeMode::kWrap}, {"clip", TakeMode::kClip}})
        .Default(TakeMode::kClip)
        .Describe("Out-of-range indices: clip to the axis, wrap around it, or raise an error.");
  }
};

bool TakeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& as = (*in)[0];
  const Shape& is = (*in)[1];
  if (as.ndim() == 0 || !is.IsKnown()) return false;
  const size_t axis = NormalizeAxis(attrs, attrs.Param<TakeParam>().axis, as.ndim(), "axis");
  std::vector<int64_t> od(as.begin(), as.begin() + axis);
  od.insert(od.end(), is.begin(), is.end());
  od.insert(od.end(), as.begin() + axis + 1, as.end());
  AssignShape(attrs, out, 0, Shape(od), "output");
  return as.IsKnown();
}

bool TakeType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return internal::DataAndIndexType(attrs, in, out, 0, {1});
}

void TakeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const TakeParam& p = attrs.Param<TakeParam>();
  const Shape& as = in[0].shape;
  const size_t axis =
      static_cast<size_t>(p.axis < 0 ? p.axis + static_cast<int>(as.ndim()) : p.axis);
  const int64_t n = as[axis];
  const int64_t outer = Prod(as, 0, axis), inner = Prod(as, axis + 1, as.ndim());
  const int64_t count = in[1].Size();
  const size_t row = static_cast<size_t>(inner) * DTypeSize(out[0].dtype);
  const uint8_t* a = in[0].ptr<const uint8_t>();
  uint8_t* y = out[0].ptr<uint8_t>();
  SwitchIndexDType(in[1].dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* idx = in[1].ptr<const I>();
    if (p.mode == TakeMode::kRaise) {
      for (int64_t i = 0; i < count; ++i) {
        const double v = static_cast<double>(idx[i]);
        HN_CHECK(v >= 0 && v <= static_cast<double>(n - 1), kInvalidArgument)
            << DescribeNode(attrs) << ": index " << v << " is out of range for axis " << axis
            << " of length " << n << " (mode='raise')";
      }
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < count; ++i) {
        const int64_t v = IndexValue(idx[i]);
        const int64_t j = p.mode == TakeMode::kClip ? ClipIndex(v, n) : WrapIndex(v, n);
        std::memcpy(y, a + static_cast<size_t>(o * n + j) * row, row);
        y += row;
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// batch_take (2-D a only: MXNet's kernel reads past the array for more dimensions)

bool BatchTakeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& as = (*in)[0];
  if (as.ndim() != 0) {
    HN_CHECK(as.ndim() == 2, kShapeError)
        << DescribeNode(attrs) << ": a must be 2-D (rows, columns), got " << as;
    if (as[0] != 0) AssignShape(attrs, in, 1, Shape{as[0]}, "input");
  }
  if ((*in)[1].ndim() != 0) AssignShape(attrs, out, 0, (*in)[1], "output");
  if ((*out)[0].ndim() != 0) AssignShape(attrs, in, 1, (*out)[0], "input");
  return as.IsKnown() && (*in)[1].IsKnown();
}

bool BatchTakeType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  HN_CHECK((*in)[1] == DType::kUnknown || (*in)[1] == DType::kInt32, kTypeError)
      << DescribeNode(attrs) << ": indices have dtype " << DTypeName((*in)[1])
      << "; batch_take takes int32 indices, as MXNet does (Cast them first)";
  (*in)[1] = DType::kInt32;
  std::vector<DType> data{(*in)[0]};
  const bool known = internal::NumericType(attrs, &data, out);
  (*in)[0] = data[0];
  return known;
}

void BatchTakeCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const int64_t rows = in[0].shape[0], cols = in[0].shape[1];
  const int32_t* idx = in[1].ptr<const int32_t>();
  const size_t esize = DTypeSize(out[0].dtype);
  const uint8_t* a = in[0].ptr<const uint8_t>();
  uint8_t* y = out[0].ptr<uint8_t>();
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t j = ClipIndex(idx[i], cols);
    std::memcpy(y + static_cast<size_t>(i) * esize, a + static_cast<size_t>(i * cols + j) * esize,
                esize);
  }
}

// ---------------------------------------------------------------------------------------------
// pick

enum class PickMode { kWrap, kClip };

struct PickParam {
  std::optional<int> axis = -1;
  bool keepdims = false;
  PickMode mode = PickMode::kClip;
  static void Declare(ParamDeclarer<PickParam>* d) {
    d->Field("axis", &PickParam::axis)
        .Default(std::optional<int>(-1))
        .Describe(
            "The axis to pick along (negative counts from the end); None is not "
            "supported (as in MXNet).");
    d->Field("keepdims", &PickParam::keepdims)
        .Default(false)
        .Describe("Keep the picked axis as a size-1 axis in the result.");
    d->Field("mode", &PickParam::mode, {{"wrap", PickMode::kWrap}, {"clip", PickMode::kClip}})
        .Default(PickMode::kClip)
        .Describe("Out-of-range indices: clip to the axis or wrap around it.");
  }
};

void PickInit(PickParam* p) {
  HN_CHECK(p->axis.has_value(), kInvalidArgument)
      << "axis=None is not supported by pick (MXNet rejects it too); give an axis";
}

// MXNet's ReduceAxisShapeImpl: the shape with the axis removed (or kept as 1); a 1-D input
// gives (1,).
Shape PickedShape(const NodeAttrs& attrs, const Shape& s, bool keepdims) {
  if (s.ndim() == 1) return Shape{1};
  const size_t a = NormalizeAxis(attrs, *attrs.Param<PickParam>().axis, s.ndim(), "axis");
  std::vector<int64_t> d = s.dims();
  if (keepdims) {
    d[a] = 1;
  } else {
    d.erase(d.begin() + static_cast<std::ptrdiff_t>(a));
  }
  return Shape(d);
}

bool PickShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& ds = (*in)[0];
  if (ds.ndim() == 0) return false;
  NormalizeAxis(attrs, *attrs.Param<PickParam>().axis, ds.ndim(), "axis");
  AssignShape(attrs, out, 0, PickedShape(attrs, ds, attrs.Param<PickParam>().keepdims), "output");
  const Shape& is = (*in)[1];
  if (is.ndim() != 0) {
    AssignShape(attrs, in, 1, PickedShape(attrs, ds, is.ndim() == ds.ndim()), "input");
  }
  return ds.IsKnown() && (*in)[1].IsKnown();
}

bool PickType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool known = internal::DataAndIndexType(attrs, in, out, 0, {1});
  HN_CHECK((*in)[0] == DType::kUnknown || internal::IsNumericDType((*in)[0]), kTypeError)
      << DescribeNode(attrs) << ": data has dtype " << DTypeName((*in)[0])
      << "; pick takes float32, float64, uint8, int8, int32 or int64 data";
  return known;
}

void PickCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const PickParam& p = attrs.Param<PickParam>();
  const Shape& ds = in[0].shape;
  const int nd = static_cast<int>(ds.ndim());
  const size_t axis = static_cast<size_t>(*p.axis < 0 ? *p.axis + nd : *p.axis);
  const int64_t n = ds[axis];
  const int64_t lead = Prod(ds, 0, axis), trail = Prod(ds, axis + 1, ds.ndim());
  const size_t esize = DTypeSize(out[0].dtype);
  const uint8_t* a = in[0].ptr<const uint8_t>();
  uint8_t* y = out[0].ptr<uint8_t>();
  SwitchIndexDType(in[1].dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* idx = in[1].ptr<const I>();
    for (int64_t l = 0; l < lead; ++l) {
      for (int64_t t = 0; t < trail; ++t) {
        const int64_t i = l * trail + t;
        const int64_t v = IndexValue(idx[i]);
        const int64_t j = p.mode == PickMode::kClip ? ClipIndex(v, n) : WrapIndex(v, n);
        std::memcpy(y + static_cast<size_t>(i) * esize,
                    a + static_cast<size_t>((l * n + j) * trail + t) * esize, esize);
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// gather_nd, scatter_nd, _scatter_set_nd: indices of shape (M, Y...) address the first M axes

// The row-major strides (in elements) of the first m axes of `s`.
std::vector<int64_t> LeadingStrides(const Shape& s, size_t m) {
  std::vector<int64_t> st(m);
  int64_t acc = Prod(s, m, s.ndim());
  for (size_t k = m; k-- > 0;) {
    st[k] = acc;
    acc *= s[k];
  }
  return st;
}

bool GatherNDShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& ds = (*in)[0];
  const Shape& is = (*in)[1];
  if (ds.ndim() == 0 || is.ndim() == 0) return false;
  HN_CHECK(is.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": indices must have at least 2 dimensions (M, ...), got " << is;
  if (is[0] == 0) return false;
  HN_CHECK(is[0] <= static_cast<int64_t>(ds.ndim()), kShapeError)
      << DescribeNode(attrs) << ": indices " << is << " address " << is[0] << " axes but data "
      << ds << " has " << ds.ndim();
  std::vector<int64_t> od(is.begin() + 1, is.end());
  od.insert(od.end(), ds.begin() + is[0], ds.end());
  AssignShape(attrs, out, 0, Shape(od), "output");
  return ds.IsKnown() && is.IsKnown();
}

bool GatherNDType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool known = internal::DataAndIndexType(attrs, in, out, 0, {1});
  HN_CHECK((*in)[1] != DType::kBool, kTypeError)
      << DescribeNode(attrs) << ": bool indices are not supported by gather_nd (as in MXNet)";
  return known;
}

void GatherNDCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const Shape& ds = in[0].shape;
  const int64_t m = in[1].shape[0];
  const int64_t count = in[1].Size() / m;
  const std::vector<int64_t> st = LeadingStrides(ds, static_cast<size_t>(m));
  const size_t block =
      static_cast<size_t>(Prod(ds, static_cast<size_t>(m), ds.ndim())) * DTypeSize(out[0].dtype);
  const size_t esize = DTypeSize(out[0].dtype);
  const uint8_t* a = in[0].ptr<const uint8_t>();
  uint8_t* y = out[0].ptr<uint8_t>();
  SwitchIndexDType(in[1].dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    using Sum = decltype(I{} + int64_t{});
    const I* idx = in[1].ptr<const I>();
    for (int64_t k = 0; k < m; ++k) {
      const double n = static_cast<double>(ds[static_cast<size_t>(k)]);
      for (int64_t i = 0; i < count; ++i) {
        const double v = static_cast<double>(idx[k * count + i]);
        HN_CHECK(v >= -n && v <= n - 1, kInvalidArgument)
            << DescribeNode(attrs) << ": index " << v << " is out of bounds for axis " << k
            << " with size " << n;
      }
    }
    for (int64_t i = 0; i < count; ++i) {
      int64_t offset = 0;
      for (int64_t k = 0; k < m; ++k) {
        const int64_t n = ds[static_cast<size_t>(k)];
        // MXNet adds the axis length before the cast: negative indices count from the end.
        const int64_t j = IndexValue(static_cast<Sum>(idx[k * count + i]) + static_cast<Sum>(n));
        offset += st[static_cast<size_t>(k)] * (j % n);
      }
      std::memcpy(y + static_cast<size_t>(i) * block, a + static_cast<size_t>(offset) * esize,
                  block);
    }
  });
}

struct ScatterNDParam {
  std::vector<int64_t> shape;
  static void Declare(ParamDeclarer<ScatterNDParam>* d) {
    d->Field("shape", &ScatterNDParam::shape).Required().Describe("Shape of the output.");
  }
};

void ScatterNDInit(ScatterNDParam* p) {
  HN_CHECK(!p->shape.empty(), kInvalidArgument) << "shape=() gives no output";
  for (int64_t d : p->shape)
    HN_CHECK(d >= 1, kInvalidArgument)
        << "shape=" << Shape(p->shape) << " must have positive dimensions";
}

// Checks data (Y..., shape[M:]) against indices (M, Y...) and the output shape.
void CheckScatterShapes(const NodeAttrs& attrs, const Shape& ds, const Shape& is, const Shape& os) {
  HN_CHECK(is.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": indices must have at least 2 dimensions (M, ...), got " << is;
  HN_CHECK(is[0] <= static_cast<int64_t>(os.ndim()), kShapeError)
      << DescribeNode(attrs) << ": indices " << is << " address " << is[0]
      << " axes but the output " << os << " has " << os.ndim();
  std::vector<int64_t> want(is.begin() + 1, is.end());
  want.insert(want.end(), os.begin() + is[0], os.end());
  Shape merged = ds;
  HN_CHECK(MergeShape(Shape(want), &merged), kShapeError)
      << DescribeNode(attrs) << ": data " << ds << " does not fit indices " << is
      << " and output shape " << os << " (expected " << Shape(want) << ")";
}

// Shapes of (data, indices) -> output; `data_at` is the position of data among the inputs.
bool ScatterNDShapeAt(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out,
                      size_t data_at) {
  const Shape os(attrs.Param<ScatterNDParam>().shape);
  AssignShape(attrs, out, 0, os, "output");
  const Shape& ds = (*in)[data_at];
  const Shape& is = (*in)[data_at + 1];
  if (is.ndim() == 0 || is[0] == 0) return false;
  if (ds.ndim() != 0) CheckScatterShapes(attrs, ds, is, os);
  if (is.IsKnown()) {
    std::vector<int64_t> want(is.begin() + 1, is.end());
    want.insert(want.end(), os.begin() + is[0], os.end());
    AssignShape(attrs, in, data_at, Shape(want), "input");
  }
  return (*in)[data_at].IsKnown() && is.IsKnown();
}

bool ScatterNDShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return ScatterNDShapeAt(attrs, in, out, 0);
}

bool ScatterSetNDShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const bool known = ScatterNDShapeAt(attrs, in, out, 1);
  AssignShape(attrs, in, 0, (*out)[0], "input");
  return known && (*in)[0].IsKnown();
}

bool ScatterNDType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return internal::DataAndIndexType(attrs, in, out, 0, {1});
}

// lhs, rhs and the output share a dtype; indices have any index dtype.
bool ScatterSetNDType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> data{(*in)[0], (*in)[1]};
  const bool known = ElemwiseType(attrs, &data, out);
  (*in)[0] = data[0];
  (*in)[1] = data[1];
  return internal::IndexTypeKnown(attrs, (*in)[2], 2) && known;
}

// out[indices[:, i]] = data[i] for every i (the last write wins for repeated indices).
void Scatter(const NodeAttrs& attrs, const TBlob& data, const TBlob& indices, const TBlob& out) {
  const Shape& os = out.shape;
  const int64_t m = indices.shape[0];
  const int64_t count = indices.Size() / m;
  const std::vector<int64_t> st = LeadingStrides(os, static_cast<size_t>(m));
  const size_t esize = DTypeSize(out.dtype);
  const size_t block = static_cast<size_t>(Prod(os, static_cast<size_t>(m), os.ndim())) * esize;
  const uint8_t* x = data.ptr<const uint8_t>();
  uint8_t* y = out.ptr<uint8_t>();
  SwitchIndexDType(indices.dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* idx = indices.ptr<const I>();
    for (int64_t i = 0; i < count; ++i) {
      int64_t offset = 0;
      for (int64_t k = 0; k < m; ++k) {
        const int64_t j = IndexValue(idx[k * count + i]);
        const int64_t n = os[static_cast<size_t>(k)];
        HN_CHECK(j >= 0 && j < n, kInvalidArgument)
            << DescribeNode(attrs) << ": index " << static_cast<double>(idx[k * count + i])
            << " is out of range for axis " << k << " of the output " << os
            << " (MXNet would write outside the array)";
        offset += st[static_cast<size_t>(k)] * j;
      }
      std::memcpy(y + static_cast<size_t>(offset) * esize, x + static_cast<size_t>(i) * block,
                  block);
    }
  });
}

void ScatterNDCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  std::memset(out[0].data, 0, static_cast<size_t>(out[0].Size()) * DTypeSize(out[0].dtype));
  Scatter(attrs, in[0], in[1], out[0]);
}

void ScatterSetNDCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                         const std::vector<TBlob>& out) {
  internal::CopyIfDistinct(in[0], out[0]);
  Scatter(attrs, in[1], in[2], out[0]);
}

// ---------------------------------------------------------------------------------------------
// one_hot

struct OneHotParam {
  int64_t depth = 0;
  double on_value = 1.0;
  double off_value = 0.0;
  DType dtype = DType::kFloat32;
  static void Declare(ParamDeclarer<OneHotParam>* d) {
    d->Field("depth", &OneHotParam::depth)
        .Required()
        .Min(1)
        .Describe("Length of the new last axis (the number of classes).");
    d->Field("on_value", &OneHotParam::on_value)
        .Default(1.0)
        .Describe("The value at each index position.");
    d->Field("off_value", &OneHotParam::off_value)
        .Default(0.0)
        .Describe("The value everywhere else.");
    d->Field("dtype", &OneHotParam::dtype)
        .Default(DType::kFloat32)
        .Describe(
            "Output dtype (bfloat16, float16, float32, float64, int32, int64, int8 or "
            "uint8).");
  }
};

void OneHotInit(OneHotParam* p) {
  const DType d = p->dtype;
  HN_CHECK(internal::IsNumericDType(d) || d == DType::kFloat16 || d == DType::kBFloat16,
           kInvalidArgument)
      << "dtype=" << DTypeName(d) << " is not one of MXNet's one_hot output types";
}

bool OneHotShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& is = (*in)[0];
  if (!is.IsKnown()) return false;
  std::vector<int64_t> od = is.dims();
  od.push_back(attrs.Param<OneHotParam>().depth);
  AssignShape(attrs, out, 0, Shape(od), "output");
  return true;
}

bool OneHotType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const DType want = attrs.Param<OneHotParam>().dtype;
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == want, kTypeError)
      << DescribeNode(attrs) << ": output dtype " << DTypeName((*out)[0])
      << " differs from dtype=" << DTypeName(want);
  (*out)[0] = want;
  HN_CHECK((*in)[0] == DType::kUnknown || internal::IsNumericDType((*in)[0]), kTypeError)
      << DescribeNode(attrs) << ": indices have dtype " << DTypeName((*in)[0])
      << "; one_hot takes float32, float64, uint8, int8, int32 or int64 indices";
  return (*in)[0] != DType::kUnknown;
}

void OneHotCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const OneHotParam& p = attrs.Param<OneHotParam>();
  const size_t esize = DTypeSize(out[0].dtype);
  // The two values in the output dtype (C conversion from double, as MXNet's DType(value)).
  uint8_t values[2][8];
  const double doubles[2] = {p.off_value, p.on_value};
  ConvertElements(doubles, DType::kFloat64, values[0], out[0].dtype, 1);
  ConvertElements(doubles + 1, DType::kFloat64, values[1], out[0].dtype, 1);
  uint8_t* y = out[0].ptr<uint8_t>();
  for (int64_t i = 0; i < out[0].Size(); ++i)
    std::memcpy(y + static_cast<size_t>(i) * esize, values[0], esize);
  internal::SwitchDType(in[0].dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* idx = in[0].ptr<const I>();
    for (int64_t i = 0; i < in[0].Size(); ++i) {
      const int64_t j = IndexValue(idx[i]);
      if (j >= 0 && j < p.depth)
        std::memcpy(y + static_cast<size_t>(i * p.depth + j) * esize, values[1], esize);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// _ravel_multi_index, _unravel_index

struct RavelParam {
  std::optional<std::vector<int64_t>> shape;
  static void Declare(ParamDeclarer<RavelParam>* d) {
    d->Field("shape", &RavelParam::shape)
        .Default(std::nullopt)
        .Describe("Shape of the array the (multi-)indices address.");
  }
};

void RavelInit(RavelParam* p) {
  HN_CHECK(p->shape && !p->shape->empty(), kInvalidArgument)
      << "shape must be given (a non-empty tuple)";
}

bool RavelShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const int64_t k = static_cast<int64_t>(attrs.Param<RavelParam>().shape->size());
  const Shape& is = (*in)[0];
  if (is.ndim() != 0) {
    HN_CHECK(is.ndim() == 2 && (is[0] == 0 || is[0] == k), kShapeError)
        << DescribeNode(attrs) << ": data must be (" << k << ", N) for a " << k << "-D shape, got "
        << is;
    AssignShape(attrs, out, 0, Shape{is[1]}, "output");
  }
  if ((*out)[0].ndim() != 0) AssignShape(attrs, in, 0, Shape{k, (*out)[0][0]}, "input");
  return (*in)[0].IsKnown() && (*out)[0].IsKnown();
}

bool UnravelShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const int64_t k = static_cast<int64_t>(attrs.Param<RavelParam>().shape->size());
  const Shape& is = (*in)[0];
  if (is.ndim() != 0) {
    HN_CHECK(is.ndim() == 1, kShapeError)
        << DescribeNode(attrs) << ": data must be 1-D (N,), got " << is;
    AssignShape(attrs, out, 0, Shape{k, is[0]}, "output");
  }
  const Shape& os = (*out)[0];
  if (os.ndim() != 0) {
    HN_CHECK(os.ndim() == 2 && (os[0] == 0 || os[0] == k), kShapeError)
        << DescribeNode(attrs) << ": output must be (" << k << ", N), got " << os;
    AssignShape(attrs, in, 0, Shape{os[1]}, "input");
  }
  return (*in)[0].IsKnown() && (*out)[0].IsKnown();
}

void RavelCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
  const std::vector<int64_t>& shape = *attrs.Param<RavelParam>().shape;
  const int64_t n = out[0].Size();
  internal::SwitchDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // MXNet: ret = ret * shape[j] + x, with C's arithmetic conversions between int64 and T.
    using Sum = decltype(int64_t{} + T{});
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t ret = 0;
      for (size_t j = 0; j < shape.size(); ++j) {
        ret = IndexValue(static_cast<Sum>(ret * shape[j]) +
                         static_cast<Sum>(x[static_cast<int64_t>(j) * n + i]));
      }
      y[i] = static_cast<T>(ret);
    }
  });
}

void UnravelCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const std::vector<int64_t>& shape = *attrs.Param<RavelParam>().shape;
  const int64_t n = in[0].Size();
  internal::SwitchDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t idx = IndexValue(x[i]);
      for (size_t j = shape.size(); j-- > 1;) {
        const int64_t q = idx / shape[j];
        y[static_cast<int64_t>(j) * n + i] = static_cast<T>(idx - q * shape[j]);
        idx = q;
      }
      y[i] = static_cast<T>(idx);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// _contrib_index_array

struct IndexArrayParam {
  std::optional<std::vector<int64_t>> axes;
  static void Declare(ParamDeclarer<IndexArrayParam>* d) {
    d->Field("axes", &IndexArrayParam::axes)
        .Default(std::nullopt)
        .Describe(
            "The axes whose coordinates are listed (None: all, in order); an axis is "
            "taken modulo the rank, as in MXNet.");
  }
};

void IndexArrayInit(IndexArrayParam* p) {
  HN_CHECK(!p->axes || !p->axes->empty(), kInvalidArgument)
      << "axes=() lists no axis (an empty last dimension cannot be represented)";
}

// The axes listed, each wrapped into [0, ndim) as MXNet's ((a % n) + n) % n does.
std::vector<size_t> ListedAxes(const NodeAttrs& attrs, size_t ndim) {
  const auto& axes = attrs.Param<IndexArrayParam>().axes;
  std::vector<size_t> list;
  const int64_t n = static_cast<int64_t>(ndim);
  if (!axes) {
    for (size_t k = 0; k < ndim; ++k) list.push_back(k);
  } else {
    for (int64_t a : *axes) list.push_back(static_cast<size_t>(((a % n) + n) % n));
  }
  return list;
}

bool IndexArrayShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& is = (*in)[0];
  if (is.ndim() == 0) return false;
  std::vector<int64_t> od = is.dims();
  od.push_back(static_cast<int64_t>(ListedAxes(attrs, is.ndim()).size()));
  AssignShape(attrs, out, 0, Shape(od), "output");
  return is.IsKnown();
}

bool IndexArrayType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == DType::kInt64, kTypeError)
      << DescribeNode(attrs) << ": the output is int64, not " << DTypeName((*out)[0]);
  (*out)[0] = DType::kInt64;
  return (*in)[0] != DType::kUnknown;
}

void IndexArrayCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  const Shape& is = in[0].shape;
  const std::vector<size_t> axes = ListedAxes(attrs, is.ndim());
  std::vector<int64_t> coord(is.ndim(), 0);
  int64_t* y = out[0].ptr<int64_t>();
  for (int64_t i = 0; i < in[0].Size(); ++i) {
    for (size_t j = 0; j < axes.size(); ++j) *y++ = coord[axes[j]];
    for (size_t k = is.ndim(); k-- > 0;) {
      if (++coord[k] < is[k]) break;
      coord[k] = 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// _contrib_index_copy

bool IndexCopyShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, out, 0, (*in)[0], "output");
  AssignShape(attrs, in, 0, (*out)[0], "input");
  const Shape& old_s = (*in)[0];
  const Shape& idx = (*in)[1];
  const Shape& new_s = (*in)[2];
  if (idx.ndim() != 0) {
    HN_CHECK(idx.ndim() == 1, kShapeError)
        << DescribeNode(attrs) << ": index_vector must be 1-D, got " << idx;
  }
  if (old_s.ndim() != 0 && new_s.ndim() != 0) {
    bool fits = old_s.ndim() == new_s.ndim();
    for (size_t k = 0; fits && k < old_s.ndim(); ++k) {
      if (old_s[k] == 0 || new_s[k] == 0) continue;
      fits = k == 0 ? new_s[0] <= old_s[0] : new_s[k] == old_s[k];
    }
    HN_CHECK(fits, kShapeError)
        << DescribeNode(attrs) << ": new_tensor " << new_s << " must have old_tensor " << old_s
        << "'s shape except for a first dimension no longer than old_tensor's";
  }
  if (new_s.ndim() != 0 && new_s[0] != 0) AssignShape(attrs, in, 1, Shape{new_s[0]}, "input");
  return internal::AllKnown(*in);
}

// old_tensor, new_tensor and the output share a dtype; index_vector has any index dtype.
bool IndexCopyType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> data{(*in)[0], (*in)[2]};
  const bool known = ElemwiseType(attrs, &data, out);
  (*in)[0] = data[0];
  (*in)[2] = data[1];
  return internal::IndexTypeKnown(attrs, (*in)[1], 1) && known;
}

void IndexCopyCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  internal::CopyIfDistinct(in[0], out[0]);
  const int64_t rows = in[0].shape[0];
  const int64_t count = in[1].Size();
  const size_t row = static_cast<size_t>(in[2].Size() / count) * DTypeSize(out[0].dtype);
  const uint8_t* x = in[2].ptr<const uint8_t>();
  uint8_t* y = out[0].ptr<uint8_t>();
  SwitchIndexDType(in[1].dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* idx = in[1].ptr<const I>();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t j = IndexValue(idx[i]);
      HN_CHECK(j >= 0 && j < rows, kInvalidArgument)
          << DescribeNode(attrs) << ": index " << static_cast<double>(idx[i])
          << " is out of range for old_tensor's " << rows
          << " rows (MXNet would write outside the array)";
      std::memcpy(y + static_cast<size_t>(j) * row, x + static_cast<size_t>(i) * row, row);
    }
  });
}

// ONNX Gather on the indices truncated to int64 (Cast truncates toward zero, as MXNet does),
// then clipped into [0, n) or wrapped (Mod with the divisor's sign) as mode says.
void TakeOnnx(OnnxNodeContext* ctx) {
  const TakeParam& p = ctx->param<TakeParam>();
  if (p.mode == TakeMode::kRaise) {
    ctx->NotExportable("mode='raise' (ONNX has no error for an out-of-range index)");
  }
  const OnnxValue& a = ctx->in(0);
  const int64_t rank = static_cast<int64_t>(a.shape.ndim());
  const int64_t axis = p.axis < 0 ? p.axis + rank : p.axis;
  const int64_t n = a.shape[static_cast<size_t>(axis)];
  std::string index = ctx->Cast(ctx->in(1).name, DType::kInt64);
  if (p.mode == TakeMode::kClip) {
    index = ctx->Add("Clip", {index, ctx->Scalar(0, DType::kInt64),
                              ctx->Scalar(static_cast<double>(n - 1), DType::kInt64)});
  } else {
    index = ctx->Add("Mod", {index, ctx->Scalar(static_cast<double>(n), DType::kInt64)},
                     {{"fmod", int64_t{0}}});
  }
  ctx->Add("Gather", {a.name, index}, {{"axis", axis}}, ctx->out(0).name);
}

// ---------------------------------------------------------------------------------------------
// _hn_index_like, _hn_scatter_add_like: the gradient of ops that copy elements
// (internal::CopiedElementsGradient). Element numbers are float64, exact up to 2^53 elements.

bool IndexLikeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  if ((*in)[0].ndim() != 0) AssignShape(attrs, out, 0, (*in)[0], "output");
  if ((*out)[0].ndim() != 0) AssignShape(attrs, in, 0, (*out)[0], "input");
  return (*out)[0].IsKnown();
}

bool IndexLikeType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == DType::kFloat64, kTypeError)
      << DescribeNode(attrs) << ": the output is float64, not " << DTypeName((*out)[0]);
  (*out)[0] = DType::kFloat64;
  return (*in)[0] != DType::kUnknown;
}

// 1, 2, ..., n: 0 is left to mean "no element" in what the copying op makes of them.
void IndexLikeCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>&,
                      const std::vector<TBlob>& out) {
  double* y = out[0].ptr<double>();
  for (int64_t i = 0; i < out[0].Size(); ++i) y[i] = static_cast<double>(i + 1);
}

// (grad, source, like): grad and source have one shape, the output like's.
bool ScatterAddLikeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  if ((*in)[0].ndim() != 0) AssignShape(attrs, in, 1, (*in)[0], "input");
  if ((*in)[1].ndim() != 0) AssignShape(attrs, in, 0, (*in)[1], "input");
  if ((*in)[2].ndim() != 0) AssignShape(attrs, out, 0, (*in)[2], "output");
  if ((*out)[0].ndim() != 0) AssignShape(attrs, in, 2, (*out)[0], "input");
  return internal::AllKnown(*in);
}

bool ScatterAddLikeType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> grad{(*in)[0]};
  const bool known = internal::NumericType(attrs, &grad, out);
  (*in)[0] = grad[0];
  HN_CHECK((*in)[1] == DType::kUnknown || (*in)[1] == DType::kFloat64, kTypeError)
      << DescribeNode(attrs) << ": source has dtype " << DTypeName((*in)[1]) << ", not float64";
  (*in)[1] = DType::kFloat64;
  return known && (*in)[2] != DType::kUnknown;
}

void ScatterAddLikeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                           const std::vector<TBlob>& out) {
  const double* source = in[1].ptr<const double>();
  const int64_t n = out[0].Size();
  internal::SwitchNumericDType(out[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* grad = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    std::fill(y, y + n, T(0));
    for (int64_t i = 0; i < in[0].Size(); ++i) {
      const int64_t j = static_cast<int64_t>(source[i]);
      if (j == 0) continue;
      HN_CHECK(j >= 1 && j <= n, kInternal)
          << DescribeNode(attrs) << ": element number " << j << " outside 1.." << n;
      y[j - 1] += grad[i];
    }
  });
}

// take, pick, gather_nd: the output gradient added back where each element was read (MXNet's
// _backward_take / _backward_pick / _backward_gather_nd); the indices get zeros.
std::vector<NodeEntry> GatherGradient(const std::shared_ptr<Node>& n,
                                      const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {internal::CopiedElementsGradient(g, 0), g.ZerosLike(g.in(1))};
}

// scatter_nd: each written element's gradient read back with gather_nd (MXNet's).
std::vector<NodeEntry> ScatterNDGradient(const std::shared_ptr<Node>& n,
                                         const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {g.Op("gather_nd", {g.out_grad(0), g.in(1)}), g.ZerosLike(g.in(1))};
}

}  // namespace

void RegisterIndexingOps(OpRegistry* r) {
  r->Register("take")
      .Describe(
          "Takes slices of a along axis at the given indices: the result's shape is "
          "a.shape[:axis] + indices.shape + a.shape[axis+1:]. Indices are truncated to "
          "integers; out-of-range ones are clipped, wrapped or rejected (mode).")
      .SetParam<TakeParam>()
      .SetInputNames({"a", "indices"})
      .SetInferShape(TakeShape)
      .SetInferType(TakeType)
      .SetCompute(TakeCompute)
      .SetOnnx({"Cast", "Clip", "Mod", "Gather"}, TakeOnnx, "mode='raise'")
      .SetGradient(GatherGradient);

  r->Register("batch_take")
      .Describe(
          "For a 2-D a, takes a[i, indices[i]] for every row i (indices clipped into "
          "the row).")
      .SetInputNames({"a", "indices"})
      .SetInferShape(BatchTakeShape)
      .SetInferType(BatchTakeType)
      .SetCompute(BatchTakeCompute);

  r->Register("pick")
      .Describe(
          "Picks one element per position along axis: out[..., j, ...] = data[..., "
          "index[...], j, ...]; the index shape is the result's, with or without the "
          "picked axis.")
      .AddAlias("choose_element_0index")
      .SetParam<PickParam>(PickInit)
      .SetInputNames({"data", "index"})
      .SetInferShape(PickShape)
      .SetInferType(PickType)
      .SetCompute(PickCompute)
      .SetGradient(GatherGradient);

  r->Register("gather_nd")
      .Describe(
          "Gathers slices of data addressed by indices of shape (M, Y...): out[y...] = "
          "data[indices[0, y...], ..., indices[M-1, y...]]; negative indices count "
          "from the end, out-of-range ones are errors.")
      .SetInputNames({"data", "indices"})
      .SetInferShape(GatherNDShape)
      .SetInferType(GatherNDType)
      .SetCompute(GatherNDCompute)
      .SetGradient(GatherGradient);

  r->Register("scatter_nd")
      .Describe(
          "The inverse of gather_nd: a zero array of the given shape with data written "
          "at the positions addressed by indices (the last write wins for repeats).")
      .SetParam<ScatterNDParam>(ScatterNDInit)
      .SetInputNames({"data", "indices"})
      .SetInferShape(ScatterNDShape)
      .SetInferType(ScatterNDType)
      .SetCompute(ScatterNDCompute)
      .SetGradient(ScatterNDGradient);

  r->Register("_scatter_set_nd")
      .Describe("Like scatter_nd, but writes rhs into a copy of lhs instead of zeros.")
      .SetParam<ScatterNDParam>(ScatterNDInit)
      .SetInputNames({"lhs", "rhs", "indices"})
      .SetInferShape(ScatterSetNDShape)
      .SetInferType(ScatterSetNDType)
      .SetCompute(ScatterSetNDCompute)
      .SetInplace({{0, 0}});

  r->Register("one_hot")
      .Describe(
          "One-hot encoding: a new last axis of length depth holding on_value at the "
          "(truncated) index and off_value elsewhere; indices outside [0, depth) give "
          "all off_value.")
      .SetParam<OneHotParam>(OneHotInit)
      .SetInputNames({"indices"})
      .SetInferShape(OneHotShape)
      .SetInferType(OneHotType)
      .SetCompute(OneHotCompute)
      .SetGradient(internal::ZeroGradient);

  r->Register("_ravel_multi_index")
      .Describe(
          "Converts (k, N) multi-indices into N flat indices of an array of the given "
          "k-D shape.")
      .AddAlias("ravel_multi_index")
      .SetParam<RavelParam>(RavelInit)
      .SetInputNames({"data"})
      .SetInferShape(RavelShape)
      .SetInferType(internal::NumericType)
      .SetCompute(RavelCompute);

  r->Register("_unravel_index")
      .Describe(
          "Converts N flat indices into (k, N) multi-indices of an array of the given "
          "k-D shape.")
      .AddAlias("unravel_index")
      .SetParam<RavelParam>(RavelInit)
      .SetInputNames({"data"})
      .SetInferShape(UnravelShape)
      .SetInferType(internal::NumericType)
      .SetCompute(UnravelCompute);

  r->Register("_contrib_index_array")
      .Describe(
          "The int64 coordinates of every element of data: shape data.shape + (n,), "
          "listing all axes or those in axes.")
      .SetParam<IndexArrayParam>(IndexArrayInit)
      .SetInputNames({"data"})
      .SetInferShape(IndexArrayShape)
      .SetInferType(IndexArrayType)
      .SetCompute(IndexArrayCompute);

  r->Register("_contrib_index_copy")
      .Describe(
          "A copy of old_tensor whose rows index_vector[i] are replaced by row i of "
          "new_tensor.")
      .SetInputNames({"old_tensor", "index_vector", "new_tensor"})
      .SetInferShape(IndexCopyShape)
      .SetInferType(IndexCopyType)
      .SetCompute(IndexCopyCompute)
      .SetInplace({{0, 0}});

  r->Register("_hn_index_like")
      .Describe("The element numbers 1..n of data, in data's shape, as float64.")
      .SetInputNames({"data"})
      .SetInferShape(IndexLikeShape)
      .SetInferType(IndexLikeType)
      .SetCompute(IndexLikeCompute)
      .SetInternal();

  r->Register("_hn_scatter_add_like")
      .Describe(
          "Zeros of like's shape to which every element of grad is added at the element "
          "number source holds for it (1-based; 0 adds it nowhere).")
      .SetInputNames({"grad", "source", "like"})
      .SetInferShape(ScatterAddLikeShape)
      .SetInferType(ScatterAddLikeType)
      .SetCompute(ScatterAddLikeCompute)
      .SetInternal();
}

}  // namespace hybridnet
