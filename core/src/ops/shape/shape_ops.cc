// Shape manipulation (MXNet src/operator/tensor/matrix_op*.{h,cc}, nn/concat.cc,
// slice_channel.cc, elemwise_unary_op_basic.cc Cast): Reshape, Flatten, expand_dims,
// transpose, Concat, SliceChannel and Cast. Reshape, Flatten and expand_dims keep the bytes of
// their input (identity views in the graph executor; eager invocation copies).
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"
#include "ops/shape/concat_param.h"
#include "ops/shape/shape_util-inl.h"

namespace hybridnet {

namespace {

using internal::AssignShape;
using internal::CopyIfDistinct;
using internal::NormalizeAxis;
using internal::ViewCompute;

constexpr size_t kMaxTransposeDims = 16;

// ---------------------------------------------------------------------------------------------
// Parameters

struct ReshapeParam {
  std::vector<int64_t> shape;
  bool reverse = false;
  std::optional<std::vector<int64_t>> target_shape;
  bool keep_highest = false;
  static void Declare(ParamDeclarer<ReshapeParam>* d) {
    d->Field("shape", &ReshapeParam::shape)
        .Default(std::vector<int64_t>{})
        .Describe(
            "The target shape. Special values: 0 copies the input dimension, -1 infers "
            "it, -2 copies all remaining input dimensions, -3 merges two input "
            "dimensions, -4 splits one input dimension into the two that follow.");
    d->Field("reverse", &ReshapeParam::reverse)
        .Default(false)
        .Describe("If true then the special values are inferred from right to left");
    d->Field("target_shape", &ReshapeParam::target_shape)
        .Default(std::nullopt)
        .Describe(
            "(Deprecated! Use shape instead.) Target new shape. One and only one dim "
            "can be 0, in which case it will be inferred from the rest of dims");
    d->Field("keep_highest", &ReshapeParam::keep_highest)
        .Default(false)
        .Describe("(Deprecated! Use shape instead.) Whether keep the highest dim unchanged.");
  }
};

struct ExpandDimsParam {
  int axis = 0;
  static void Declare(ParamDeclarer<ExpandDimsParam>* d) {
    d->Field("axis", &ExpandDimsParam::axis)
        .Required()
        .Describe("Position where the new axis is inserted, in [-ndim-1, ndim]");
  }
};

struct TransposeParam {
  std::vector<int64_t> axes;
  static void Declare(ParamDeclarer<TransposeParam>* d) {
    d->Field("axes", &TransposeParam::axes)
        .Default(std::vector<int64_t>{})
        .Describe("Target axis order. By default the axes will be inverted.");
  }
};

struct SliceChannelParam {
  int num_outputs = 0;
  int axis = 1;
  bool squeeze_axis = false;
  static void Declare(ParamDeclarer<SliceChannelParam>* d) {
    d->Field("num_outputs", &SliceChannelParam::num_outputs)
        .Required()
        .Min(1)
        .Describe(
            "Number of splits. Note that this should evenly divide the length of the "
            "axis.");
    d->Field("axis", &SliceChannelParam::axis).Default(1).Describe("Axis along which to split.");
    d->Field("squeeze_axis", &SliceChannelParam::squeeze_axis)
        .Default(false)
        .Describe("If true, removes the split axis (its length must equal num_outputs).");
  }
};

struct CastParam {
  DType dtype = DType::kFloat32;
  static void Declare(ParamDeclarer<CastParam>* d) {
    d->Field("dtype", &CastParam::dtype).Required().Describe("Output data type.");
  }
};

// ---------------------------------------------------------------------------------------------
// Reshape

// MXNet's InferReshapeShape. Unknown dims are -1 while computing (0 is a code here) and 0 in
// the result. Like MXNet, the -1 code's position is remembered as its index in `shape` (which
// differs from its output position only after a -4).
Shape InferReshapeShape(const NodeAttrs& attrs, const std::vector<int64_t>& shape,
                        const Shape& dshape, bool reverse) {
  std::vector<int64_t> src(dshape.begin(), dshape.end());
  for (auto& d : src)
    if (d == 0) d = -1;
  std::vector<int64_t> spec = shape;
  if (reverse) {
    std::reverse(src.begin(), src.end());
    std::reverse(spec.begin(), spec.end());
  }
  auto fail = [&]() -> Error {
    return Error(StatusCode::kShapeError)
           << DescribeNode(attrs) << ": cannot reshape " << dshape << " with shape=" << Shape(shape)
           << (reverse ? " (reverse=True)" : "") << ": ";
  };
  std::vector<int64_t> tmp;
  size_t src_idx = 0;
  int64_t inf_idx = -1;
  for (size_t i = 0; i < spec.size(); ++i) {
    const int64_t code = spec[i];
    if (code == 0) {
      if (src_idx >= src.size()) throw fail() << "code 0 has no input dimension to copy";
      tmp.push_back(src[src_idx++]);
    } else if (code == -1) {
      if (inf_idx >= 0) throw fail() << "only one dimension can be -1";
      inf_idx = static_cast<int64_t>(i);
      tmp.push_back(1);
      ++src_idx;
    } else if (code == -2) {
      while (src_idx < src.size()) tmp.push_back(src[src_idx++]);
    } else if (code == -3) {
      if (src_idx + 1 >= src.size()) throw fail() << "code -3 needs two input dimensions";
      const int64_t d1 = src[src_idx++];
      const int64_t d2 = src[src_idx++];
      tmp.push_back(d1 < 0 || d2 < 0 ? -1 : d1 * d2);
    } else if (code == -4) {
      if (i + 2 >= spec.size()) throw fail() << "code -4 must be followed by two dimensions";
      if (src_idx >= src.size()) throw fail() << "code -4 has no input dimension to split";
      const int64_t d0 = src[src_idx++];
      int64_t d1 = spec[++i];
      int64_t d2 = spec[++i];
      if ((d1 < 1 && d1 != -1) || (d2 < 1 && d2 != -1)) {
        throw fail() << "the dimensions after -4 must be positive or -1";
      }
      if (d1 == -1 && d2 == -1) throw fail() << "split dims cannot both be -1";
      if (d1 == -1 && d0 >= 0) d1 = d0 / d2;
      if (d2 == -1 && d0 >= 0) d2 = d0 / d1;
      if (d0 >= 0 && d1 * d2 != d0) {
        throw fail() << "split dims " << d1 << ", " << d2 << " do not divide original dim " << d0;
      }
      tmp.push_back(d1);
      tmp.push_back(d2);
    } else if (code > 0) {
      tmp.push_back(code);
      ++src_idx;
    } else {
      throw fail() << "invalid code " << code << " (special values are 0, -1, -2, -3, -4)";
    }
  }
  if (inf_idx >= 0) {
    if (static_cast<size_t>(inf_idx) >= tmp.size()) {
      throw fail() << "the -1 cannot be placed after a -4 split";
    }
    if (dshape.IsKnown()) {
      int64_t known = 1;
      for (int64_t x : tmp) known *= x;
      if (known <= 0 || dshape.Size() % known != 0) {
        throw fail() << "the -1 dimension cannot be inferred (" << dshape.Size()
                     << " elements are not a multiple of " << known << ")";
      }
      tmp[static_cast<size_t>(inf_idx)] = dshape.Size() / known;
    } else {
      tmp[static_cast<size_t>(inf_idx)] = -1;
    }
  }
  if (reverse) std::reverse(tmp.begin(), tmp.end());
  for (auto& d : tmp)
    if (d < 0) d = 0;
  return Shape(std::move(tmp));
}

// MXNet's ReverseReshapeInferShape: a known output fills the one unknown input dim.
void ReverseReshape(Shape* in, const Shape& out) {
  if (!out.IsKnown() || in->ndim() == 0 || in->IsKnown()) return;
  size_t unknown = in->ndim();
  int64_t known = 1;
  for (size_t i = 0; i < in->ndim(); ++i) {
    if ((*in)[i] == 0) {
      if (unknown != in->ndim()) return;  // more than one unknown
      unknown = i;
    } else {
      known *= (*in)[i];
    }
  }
  if (known > 0 && out.Size() % known == 0) (*in)[unknown] = out.Size() / known;
}

bool ReshapeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const ReshapeParam& p = attrs.Param<ReshapeParam>();
  Shape& dshape = (*in)[0];
  const bool legacy = p.shape.empty() && p.target_shape && !p.target_shape->empty();
  if (dshape.ndim() == 0 || (p.shape.empty() && !legacy)) {
    // Nothing to compute from: only a known output can give the input's unknown dim.
    if (dshape.ndim() != 0 && (*out)[0].IsKnown()) {
      Shape filled = dshape;
      ReverseReshape(&filled, (*out)[0]);
      AssignShape(attrs, in, 0, filled, "input");
    }
    return (*in)[0].IsKnown() && (*out)[0].IsKnown();
  }
  Shape oshape;
  if (!legacy) {
    oshape = InferReshapeShape(attrs, p.shape, dshape, p.reverse);
  } else {
    oshape = Shape(*p.target_shape);
    size_t start = 0;
    if (p.keep_highest) {
      oshape[0] = dshape[0];
      start = 1;
    }
    size_t zeros = 0, inf = 0;
    for (size_t i = start; i < oshape.ndim(); ++i) {
      HN_CHECK(oshape[i] >= 0, kShapeError)
          << DescribeNode(attrs) << ": target_shape " << Shape(*p.target_shape)
          << " has a negative dimension";
      if (oshape[i] == 0) {
        ++zeros;
        inf = i;
      }
    }
    if (zeros == 1 && dshape.IsKnown()) {
      oshape[inf] = 1;
      HN_CHECK(oshape.Size() > 0 && dshape.Size() % oshape.Size() == 0, kShapeError)
          << DescribeNode(attrs) << ": cannot reshape " << dshape << " to target_shape "
          << Shape(*p.target_shape);
      oshape[inf] = dshape.Size() / oshape.Size();
    }
  }
  Shape filled = dshape;
  ReverseReshape(&filled, oshape);
  if (filled.IsKnown() && oshape.IsKnown()) {
    HN_CHECK(filled.Size() == oshape.Size(), kShapeError)
        << DescribeNode(attrs) << ": target shape " << oshape << " has " << oshape.Size()
        << " elements but the input " << filled << " has " << filled.Size();
  }
  AssignShape(attrs, out, 0, oshape, "output");
  AssignShape(attrs, in, 0, filled, "input");
  Shape back = (*in)[0];
  ReverseReshape(&back, (*out)[0]);
  AssignShape(attrs, in, 0, back, "input");
  if ((*in)[0].IsKnown() && (*out)[0].IsKnown()) {
    HN_CHECK((*in)[0].Size() == (*out)[0].Size(), kShapeError)
        << DescribeNode(attrs) << ": output shape " << (*out)[0] << " has a different size "
        << "than the input " << (*in)[0];
  }
  return (*in)[0].IsKnown() && (*out)[0].IsKnown();
}

// ---------------------------------------------------------------------------------------------
// Flatten, expand_dims

bool FlattenShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& dshape = (*in)[0];
  if (dshape.ndim() == 0) return false;
  int64_t rest = 1;
  for (size_t i = 1; i < dshape.ndim(); ++i) rest *= dshape[i];
  AssignShape(attrs, out, 0, Shape{dshape[0], rest}, "output");
  return dshape.IsKnown() && (*out)[0].IsKnown();
}

bool ExpandDimsShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const int axis_param = attrs.Param<ExpandDimsParam>().axis;
  const Shape& ishape = (*in)[0];
  const Shape& oshape = (*out)[0];
  if (ishape.ndim() == 0 && oshape.ndim() == 0) return false;
  if (ishape.ndim() != 0) {
    size_t axis = NormalizeAxis(attrs, axis_param, ishape.ndim(), "axis", 1);
    std::vector<int64_t> dims(ishape.begin(), ishape.end());
    dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(axis), 1);
    AssignShape(attrs, out, 0, Shape(dims), "output");
  }
  const Shape& o = (*out)[0];
  HN_CHECK(o.ndim() >= 1, kShapeError) << DescribeNode(attrs) << ": bad output shape " << o;
  size_t axis = NormalizeAxis(attrs, axis_param, o.ndim() - 1, "axis", 1);
  std::vector<int64_t> dims(o.begin(), o.end());
  HN_CHECK(dims[axis] == 0 || dims[axis] == 1, kShapeError)
      << DescribeNode(attrs) << ": output shape " << o << " must have 1 at axis " << axis;
  dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(axis));
  if (!dims.empty()) AssignShape(attrs, in, 0, Shape(dims), "input");
  return (*in)[0].IsKnown() && (*out)[0].IsKnown();
}

// ---------------------------------------------------------------------------------------------
// transpose

std::vector<size_t> TransposeAxes(const NodeAttrs& attrs, size_t ndim) {
  const auto& axes = attrs.Param<TransposeParam>().axes;
  std::vector<size_t> perm(ndim);
  if (axes.empty()) {
    for (size_t i = 0; i < ndim; ++i) perm[i] = ndim - 1 - i;
    return perm;
  }
  HN_CHECK(axes.size() == ndim, kShapeError)
      << DescribeNode(attrs) << ": axes=" << Shape(axes) << " must list all " << ndim
      << " dimensions of the input";
  std::vector<bool> seen(ndim, false);
  for (size_t i = 0; i < ndim; ++i) {
    perm[i] = NormalizeAxis(attrs, axes[i], ndim, "axes");
    HN_CHECK(!seen[perm[i]], kShapeError)
        << DescribeNode(attrs) << ": axes=" << Shape(axes) << " is not a permutation";
    seen[perm[i]] = true;
  }
  return perm;
}

bool TransposeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& ishape = (*in)[0];
  const Shape& oshape = (*out)[0];
  if (ishape.ndim() == 0 && oshape.ndim() == 0) return false;
  const size_t ndim = ishape.ndim() ? ishape.ndim() : oshape.ndim();
  HN_CHECK(ndim <= kMaxTransposeDims, kShapeError)
      << DescribeNode(attrs) << ": transpose supports at most " << kMaxTransposeDims
      << " dimensions";
  std::vector<size_t> perm = TransposeAxes(attrs, ndim);
  if (ishape.ndim() != 0) {
    Shape o(std::vector<int64_t>(ndim, 0));
    for (size_t i = 0; i < ndim; ++i) o[i] = ishape[perm[i]];
    AssignShape(attrs, out, 0, o, "output");
  }
  const Shape& ofinal = (*out)[0];
  HN_CHECK(ofinal.ndim() == ndim, kShapeError)
      << DescribeNode(attrs) << ": output shape " << ofinal << " has the wrong rank";
  Shape back(std::vector<int64_t>(ndim, 0));
  for (size_t i = 0; i < ndim; ++i) back[perm[i]] = ofinal[i];
  AssignShape(attrs, in, 0, back, "input");
  return (*in)[0].IsKnown() && (*out)[0].IsKnown();
}

void TransposeCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const Shape& ishape = in[0].shape;
  const size_t ndim = ishape.ndim();
  const auto& axes = attrs.Param<TransposeParam>().axes;
  int64_t istride[kMaxTransposeDims];
  int64_t acc = 1;
  for (size_t k = ndim; k-- > 0;) {
    istride[k] = acc;
    acc *= ishape[k];
  }
  // Source stride and extent of every output dimension.
  int64_t stride[kMaxTransposeDims], extent[kMaxTransposeDims];
  for (size_t i = 0; i < ndim; ++i) {
    size_t a;
    if (axes.empty()) {
      a = ndim - 1 - i;
    } else {
      int64_t v = axes[i] < 0 ? axes[i] + static_cast<int64_t>(ndim) : axes[i];
      a = static_cast<size_t>(v);
    }
    stride[i] = istride[a];
    extent[i] = ishape[a];
  }
  const float* x = in[0].ptr<const float>();
  float* y = out[0].ptr<float>();
  const size_t last = ndim - 1;
  const int64_t inner = extent[last], inner_stride = stride[last];
  const int64_t total = in[0].Size();
  int64_t idx[kMaxTransposeDims] = {};
  int64_t off = 0;
  for (int64_t base = 0; base < total; base += inner) {
    const float* px = x + off;
    float* py = y + base;
    for (int64_t i = 0; i < inner; ++i) py[i] = px[i * inner_stride];
    for (size_t k = last; k-- > 0;) {
      ++idx[k];
      off += stride[k];
      if (idx[k] < extent[k]) break;
      off -= stride[k] * extent[k];
      idx[k] = 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Concat

}  // namespace

namespace internal {

bool ConcatShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const ConcatParam& p = attrs.Param<ConcatParam>();
  // The common shape with the concat axis left unknown, from every known input and the output.
  Shape common;
  size_t ndim = (*out)[0].ndim();
  for (const Shape& s : *in)
    if (ndim == 0) ndim = s.ndim();
  if (ndim == 0) return false;
  const size_t axis = NormalizeAxis(attrs, p.dim, ndim, "dim");
  auto merge = [&](const Shape& s, const char* side, size_t i) {
    if (s.ndim() == 0) return;
    HN_CHECK(s.ndim() == ndim, kShapeError)
        << DescribeNode(attrs) << ": " << side << " " << i << " has shape " << s << " but "
        << (side[0] == 'i' ? "the other inputs have " : "the inputs have ") << ndim
        << " dimensions";
    Shape t = s;
    t[axis] = 0;
    Shape before = common;
    HN_CHECK(MergeShape(t, &common), kShapeError)
        << DescribeNode(attrs) << ": " << side << " " << i << " has shape " << s
        << ", incompatible with " << before << " outside dim " << axis;
  };
  for (size_t i = 0; i < in->size(); ++i) merge((*in)[i], "input", i);
  merge((*out)[0], "output", 0);
  // Axis sizes: the output's is the sum; one unknown input size follows from a known output.
  int64_t sum = 0;
  size_t unknown = 0, unknown_at = 0;
  for (size_t i = 0; i < in->size(); ++i) {
    const Shape& s = (*in)[i];
    if (s.ndim() == 0 || s[axis] == 0) {
      ++unknown;
      unknown_at = i;
    } else {
      sum += s[axis];
    }
  }
  for (size_t i = 0; i < in->size(); ++i) {
    Shape t = common;
    if ((*in)[i].ndim() != 0) t[axis] = (*in)[i][axis];
    AssignShape(attrs, in, i, t, "input");
  }
  const int64_t out_axis = (*out)[0].ndim() ? (*out)[0][axis] : 0;
  if (unknown == 1 && out_axis != 0) {
    HN_CHECK(out_axis > sum, kShapeError)
        << DescribeNode(attrs) << ": output size " << out_axis << " along dim " << axis
        << " is not larger than the known inputs' " << sum;
    Shape t = common;
    t[axis] = out_axis - sum;
    AssignShape(attrs, in, unknown_at, t, "input");
    unknown = 0;
    sum = out_axis;
  }
  Shape o = common;
  o[axis] = unknown == 0 ? sum : 0;
  AssignShape(attrs, out, 0, o, "output");
  bool known = (*out)[0].IsKnown();
  for (const Shape& s : *in) known = known && s.IsKnown();
  return known;
}

}  // namespace internal

namespace {

using internal::ConcatParam;
using internal::ConcatShape;

// Copies between the joined array and its parts along Concat's dim, as bytes (every dtype joins
// the same way; CenterNet concatenates int64 shapes): into `joined` when `join`, else out of it.
void CopyConcatParts(const NodeAttrs& attrs, const TBlob& joined, const std::vector<TBlob>& parts,
                     bool join) {
  const Shape& shape = joined.shape;
  const int dim = attrs.Param<ConcatParam>().dim;
  const size_t axis = static_cast<size_t>(dim < 0 ? dim + static_cast<int>(shape.ndim()) : dim);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.ndim(); ++i) inner *= shape[i];
  const int64_t joined_row = shape[axis] * inner;
  const int64_t size = static_cast<int64_t>(DTypeSize(joined.dtype));
  auto* all = static_cast<uint8_t*>(joined.data);
  int64_t col = 0;
  for (const TBlob& b : parts) {
    const int64_t row = b.shape[axis] * inner;
    auto* part = static_cast<uint8_t*>(b.data);
    for (int64_t o = 0; o < outer; ++o) {
      uint8_t* in_joined = all + (o * joined_row + col) * size;
      uint8_t* in_part = part + o * row * size;
      const size_t bytes = static_cast<size_t>(row * size);
      if (join) {
        std::memcpy(in_joined, in_part, bytes);
      } else {
        std::memcpy(in_part, in_joined, bytes);
      }
    }
    col += row;
  }
}

void ConcatCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  CopyConcatParts(attrs, out[0], in, true);
}

// _backward_Concat: (out_grad, the Concat's inputs, for their shapes) -> each input's part of
// out_grad (MXNet's _backward_Concat).
bool ConcatBackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> forward_in(in->begin() + 1, in->end());
  for (size_t i = 0; i < forward_in.size(); ++i) {
    if ((*out)[i].ndim() != 0) AssignShape(attrs, &forward_in, i, (*out)[i], "input");
  }
  std::vector<Shape> forward_out{(*in)[0]};
  const bool known = ConcatShape(attrs, &forward_in, &forward_out);
  (*in)[0] = forward_out[0];
  for (size_t i = 0; i < forward_in.size(); ++i) {
    (*in)[i + 1] = forward_in[i];
    if (forward_in[i].ndim() != 0) AssignShape(attrs, out, i, forward_in[i], "output");
  }
  return known;
}

bool ConcatBackwardType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> grads{(*in)[0]};
  grads.insert(grads.end(), out->begin(), out->end());
  std::vector<DType> none;
  const bool known = ElemwiseType(attrs, &grads, &none);
  (*in)[0] = grads[0];
  std::copy(grads.begin() + 1, grads.end(), out->begin());
  for (size_t i = 1; i < in->size(); ++i) {
    if ((*in)[i] == DType::kUnknown) return false;
  }
  return known;
}

void ConcatBackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                           const std::vector<TBlob>& out) {
  CopyConcatParts(attrs, in[0], out, false);
}

// ---------------------------------------------------------------------------------------------
// SliceChannel

bool SliceChannelShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const SliceChannelParam& p = attrs.Param<SliceChannelParam>();
  const Shape& dshape = (*in)[0];
  if (dshape.ndim() == 0) return false;
  const size_t axis = NormalizeAxis(attrs, p.axis, dshape.ndim(), "axis");
  const int64_t n = p.num_outputs;
  std::vector<int64_t> dims(dshape.begin(), dshape.end());
  if (dims[axis] != 0) {
    HN_CHECK(dims[axis] % n == 0, kShapeError)
        << DescribeNode(attrs) << ": cannot split axis " << axis << " of shape " << dshape
        << " into num_outputs=" << n << " evenly sized parts";
    HN_CHECK(!p.squeeze_axis || dims[axis] == n, kShapeError)
        << DescribeNode(attrs) << ": squeeze_axis=True needs the split axis (" << dims[axis]
        << " in " << dshape << ") to equal num_outputs=" << n;
    dims[axis] /= n;
  }
  if (p.squeeze_axis) dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(axis));
  if (dims.empty()) dims.push_back(1);
  for (size_t i = 0; i < out->size(); ++i) AssignShape(attrs, out, i, Shape(dims), "output");
  bool known = dshape.IsKnown();
  for (const Shape& s : *out) known = known && s.IsKnown();
  return known;
}

void SliceChannelCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                         const std::vector<TBlob>& out) {
  const SliceChannelParam& p = attrs.Param<SliceChannelParam>();
  const Shape& dshape = in[0].shape;
  const size_t axis =
      static_cast<size_t>(p.axis < 0 ? p.axis + static_cast<int>(dshape.ndim()) : p.axis);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dshape[i];
  for (size_t i = axis + 1; i < dshape.ndim(); ++i) inner *= dshape[i];
  const int64_t in_row = dshape[axis] * inner;
  const int64_t part = in_row / static_cast<int64_t>(out.size());
  // Bytes: every dtype splits the same way (CenterNet splits an int64 shape).
  const int64_t size = static_cast<int64_t>(DTypeSize(in[0].dtype));
  const auto* x = static_cast<const uint8_t*>(in[0].data);
  for (size_t k = 0; k < out.size(); ++k) {
    auto* y = static_cast<uint8_t*>(out[k].data);
    const int64_t col = static_cast<int64_t>(k) * part;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(y + o * part * size, x + (o * in_row + col) * size,
                  static_cast<size_t>(part * size));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Cast

bool CastType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const DType target = attrs.Param<CastParam>().dtype;
  HN_CHECK((*out)[0] == DType::kUnknown || (*out)[0] == target, kTypeError)
      << DescribeNode(attrs) << ": output dtype " << DTypeName((*out)[0])
      << " differs from dtype=" << DTypeName(target);
  (*out)[0] = target;
  return (*in)[0] != DType::kUnknown;
}

// _hn_cast_like (data, like): data converted to like's dtype, with data's shape (the
// conversions' gradient, CastBackGradient). like's values are not read; its shape is data's.
bool CastLikeType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const DType target = (*in)[1];
  HN_CHECK((*out)[0] == DType::kUnknown || target == DType::kUnknown || (*out)[0] == target,
           kTypeError)
      << DescribeNode(attrs) << ": output dtype " << DTypeName((*out)[0]) << " differs from like's "
      << DTypeName(target);
  if (target == DType::kUnknown) (*in)[1] = (*out)[0];
  (*out)[0] = (*in)[1];
  return (*in)[0] != DType::kUnknown && (*in)[1] != DType::kUnknown;
}

void CastCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  if (in[0].dtype == out[0].dtype) {
    CopyIfDistinct(in[0], out[0]);
    return;
  }
  ConvertElements(in[0].data, in[0].dtype, out[0].data, out[0].dtype,
                  static_cast<size_t>(in[0].Size()));
}

FListNames ArgNames(std::function<int(const NodeAttrs&)> count) {
  return [count](const NodeAttrs& attrs) {
    std::vector<std::string> names;
    for (int i = 0; i < count(attrs); ++i) names.push_back("arg" + std::to_string(i));
    return names;
  };
}

// ---------------------------------------------------------------------------------------------
// ONNX

// Every special code resolves to the inferred output shape; only a dimension that follows the
// batch size stays symbolic (-1).
void ReshapeOnnx(OnnxNodeContext* ctx) { ctx->ReshapeToOutput(ctx->in(0).name, 0); }

void ExpandDimsOnnx(OnnxNodeContext* ctx) {
  const size_t axis = NormalizeAxis(ctx->attrs(), ctx->param<ExpandDimsParam>().axis,
                                    ctx->in(0).shape.ndim(), "axis", 1);
  ctx->Unsqueeze(ctx->in(0).name, {static_cast<int64_t>(axis)}, ctx->out(0).name);
}

void TransposeOnnx(OnnxNodeContext* ctx) {
  std::vector<int64_t> perm;
  for (size_t a : TransposeAxes(ctx->attrs(), ctx->in(0).shape.ndim()))
    perm.push_back(static_cast<int64_t>(a));
  ctx->Add("Transpose", {ctx->in(0).name}, {{"perm", perm}}, ctx->out(0).name);
}

void ConcatOnnx(OnnxNodeContext* ctx) {
  const size_t axis =
      NormalizeAxis(ctx->attrs(), ctx->param<ConcatParam>().dim, ctx->out(0).shape.ndim(), "dim");
  ctx->Add("Concat", ctx->input_names(), {{"axis", static_cast<int64_t>(axis)}}, ctx->out(0).name);
}

void SliceChannelOnnx(OnnxNodeContext* ctx) {
  const SliceChannelParam& p = ctx->param<SliceChannelParam>();
  const OnnxValue& x = ctx->in(0);
  const int64_t axis =
      static_cast<int64_t>(NormalizeAxis(ctx->attrs(), p.axis, x.shape.ndim(), "axis"));
  const size_t n = static_cast<size_t>(p.num_outputs);
  std::vector<std::string> parts(n);
  for (size_t i = 0; i < n; ++i)
    if (!p.squeeze_axis) parts[i] = ctx->out(i).name;
  const std::vector<OnnxAttr> attrs{{"axis", axis}};
  if (!x.batch_dims[static_cast<size_t>(axis)]) {
    std::vector<int64_t> sizes(n, x.shape[static_cast<size_t>(axis)] / p.num_outputs);
    parts = ctx->AddMulti("Split", {x.name, ctx->Int64s(sizes)}, attrs, parts);
  } else if (ctx->opset() >= 18) {
    parts = ctx->AddMulti("Split", {x.name},
                          {{"axis", axis}, {"num_outputs", int64_t{p.num_outputs}}}, parts);
  } else {
    ctx->NotExportable(
        "splits the batch axis, which a dynamic-batch export supports from opset 18");
  }
  if (!p.squeeze_axis) return;
  for (size_t i = 0; i < n; ++i) {
    if (!ctx->used(i)) continue;
    if (x.shape.ndim() == 1) {
      ctx->ReshapeToOutput(parts[i], i);  // a 1-D input keeps shape (1,)
    } else {
      ctx->Squeeze(parts[i], {axis}, ctx->out(i).name);
    }
  }
}

void CastOnnx(OnnxNodeContext* ctx) {
  ctx->Cast(ctx->in(0).name, ctx->param<CastParam>().dtype, ctx->out(0).name);
}

// ---- gradients ---------------------------------------------------------------------------------

using internal::GradientBuilder;

// Reshape, Flatten, expand_dims: the output gradient with the input's shape.
std::vector<NodeEntry> ReshapeGradient(const std::shared_ptr<Node>& n,
                                       const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {g.Op("reshape_like", {g.out_grad(0), g.in(0)})};
}

// The output gradient transposed back by the inverse permutation (the default reversal is its
// own inverse).
std::vector<NodeEntry> TransposeGradient(const std::shared_ptr<Node>& n,
                                         const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  const std::vector<int64_t>& axes = g.attrs().Param<TransposeParam>().axes;
  std::vector<int64_t> inverse(axes.size());
  const int64_t ndim = static_cast<int64_t>(axes.size());
  for (int64_t i = 0; i < ndim; ++i) inverse[static_cast<size_t>((axes[i] + ndim) % ndim)] = i;
  return {g.Op("transpose", {g.out_grad(0)}, {{"axes", Shape(inverse).ToString()}})};
}

// Each input gets its part of the output gradient (_backward_Concat, MXNet's).
std::vector<NodeEntry> ConcatGradient(const std::shared_ptr<Node>& n,
                                      const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  const int num_args = g.attrs().Param<ConcatParam>().num_args;
  std::vector<NodeEntry> inputs{g.out_grad(0)};
  for (int i = 0; i < num_args; ++i) inputs.push_back(g.in(static_cast<size_t>(i)));
  const std::shared_ptr<Node> parts = g.MakeNode("_backward_Concat", inputs, g.attrs().dict);
  std::vector<NodeEntry> grads;
  for (int i = 0; i < num_args; ++i) grads.push_back(NodeEntry{parts, static_cast<uint32_t>(i), 0});
  return grads;
}

// The parts' gradients joined back along the axis (MXNet's split gradient, a Concat).
std::vector<NodeEntry> SliceChannelGradient(const std::shared_ptr<Node>& n,
                                            const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  const SliceChannelParam& p = g.attrs().Param<SliceChannelParam>();
  const std::string axis = std::to_string(p.axis);
  std::vector<NodeEntry> parts;
  for (const NodeEntry& part : dy) {
    parts.push_back(p.squeeze_axis ? g.Op("expand_dims", {part}, {{"axis", axis}}) : part);
  }
  return {g.Op("Concat", std::move(parts),
               {{"dim", axis}, {"num_args", std::to_string(p.num_outputs)}})};
}

}  // namespace

void RegisterShapeOps(OpRegistry* r) {
  r->Register("Reshape")
      .Describe(
          "Reshapes the input array (no data is moved). Special values in shape: 0 "
          "copies a dimension, -1 infers one, -2 copies the rest, -3 merges two, -4 "
          "splits one into the two values that follow; reverse=True matches them from "
          "the right.")
      .AddAlias("reshape")
      .SetParam<ReshapeParam>()
      .SetInputNames({"data"})
      .SetInferShape(ReshapeShape)
      .SetInferType(ElemwiseType)
      .SetCompute(ViewCompute)
      .SetIdentityView()
      .SetInplace({{0, 0}})
      .SetOnnx({"Reshape"}, ReshapeOnnx)
      .SetGradient(ReshapeGradient);

  r->Register("Flatten")
      .Describe("Flattens the input to 2-D: (d0, d1 * d2 * ...).")
      .AddAlias("flatten")
      .SetInputNames({"data"})
      .SetInferShape(FlattenShape)
      .SetInferType(ElemwiseType)
      .SetCompute(ViewCompute)
      .SetIdentityView()
      .SetInplace({{0, 0}})
      .SetOnnx({"Flatten"}, OnnxSameOp("Flatten", {{"axis", 1}}))
      .SetGradient(ReshapeGradient);

  r->Register("expand_dims")
      .Describe("Inserts a new axis of size 1 at position axis.")
      .SetParam<ExpandDimsParam>()
      .SetInputNames({"data"})
      .SetInferShape(ExpandDimsShape)
      .SetInferType(ElemwiseType)
      .SetCompute(ViewCompute)
      .SetIdentityView()
      .SetInplace({{0, 0}})
      .SetOnnx({"Unsqueeze"}, ExpandDimsOnnx)
      .SetGradient(ReshapeGradient);

  r->Register("transpose")
      .Describe("Permutes the dimensions of the input (reverses them by default).")
      .SetParam<TransposeParam>()
      .SetInputNames({"data"})
      .SetInferShape(TransposeShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(TransposeCompute)
      .SetOnnx({"Transpose"}, TransposeOnnx)
      .SetGradient(TransposeGradient);

  r->Register("Concat")
      .Describe("Joins the inputs along dimension dim; all other dimensions must agree.")
      .AddAlias("concat")
      .SetParam<ConcatParam>()
      .SetKeyVarNumArgs("num_args")
      .SetInputNames(
          ArgNames([](const NodeAttrs& attrs) { return attrs.Param<ConcatParam>().num_args; }))
      // Counted from num_args without building the names: a hostile file may say billions.
      .SetNumInputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<ConcatParam>().num_args);
      })
      .SetInferShape(ConcatShape)
      .SetInferType(ElemwiseType)
      .SetCompute(ConcatCompute)
      .SetOnnx({"Concat"}, ConcatOnnx)
      .SetGradient(ConcatGradient);

  r->Register("_backward_Concat")
      .Describe("The gradient of Concat: out_grad cut into the parts of the inputs' shapes.")
      .SetParam<ConcatParam>()
      .SetInputNames([](const NodeAttrs& attrs) {
        std::vector<std::string> names{"out_grad"};
        for (int i = 0; i < attrs.Param<ConcatParam>().num_args; ++i)
          names.push_back("arg" + std::to_string(i));
        return names;
      })
      .SetNumInputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<ConcatParam>().num_args) + 1;
      })
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<ConcatParam>().num_args);
      })
      .SetInferShape(ConcatBackwardShape)
      .SetInferType(ConcatBackwardType)
      .SetCompute(ConcatBackwardCompute)
      .SetInternal();

  r->Register("SliceChannel")
      .Describe("Splits the input along axis into num_outputs equal parts.")
      .AddAlias("split")
      .SetParam<SliceChannelParam>()
      .SetInputNames({"data"})
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<SliceChannelParam>().num_outputs);
      })
      .SetInferShape(SliceChannelShape)
      .SetInferType(ElemwiseType)
      .SetCompute(SliceChannelCompute)
      .SetOnnx({"Split", "Squeeze", "Reshape"}, SliceChannelOnnx)
      .SetGradient(SliceChannelGradient);

  r->Register("Cast")
      .Describe("Casts every element to dtype (C-style value conversion).")
      .AddAlias("cast")
      .SetParam<CastParam>()
      .SetInputNames({"data"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(CastType)
      .SetCompute(CastCompute)
      .SetOnnx({"Cast"}, CastOnnx)
      .SetGradient(internal::CastBackGradient);

  r->Register("_hn_cast_like")
      .Describe(
          "data converted to the dtype of like (the gradient of the type conversions); like's "
          "values are not read.")
      .SetInputNames({"data", "like"})
      .SetInferShape(ElemwiseShape)
      .SetInferType(CastLikeType)
      .SetCompute(CastCompute)
      .SetInternal();
}

}  // namespace hybridnet
