// Ops that rearrange elements without arithmetic (MXNet src/operator/tensor/matrix_op-inl.h,
// diag_op-inl.h, swapaxis-inl.h): tile, repeat, stack, squeeze, SwapAxis, reverse,
// depth_to_space, space_to_depth, _split_v2 and diag. Every kernel is one strided walk
// (strided_copy-inl.h), so each op works for every dtype. squeeze keeps its input's bytes (an
// identity view).
//
// Results MXNet would give as zero-size arrays (tile/repeat by 0, empty split sections) are
// rejected: a 0 dimension means "unknown" in the legacy shapes hybridnet reads and writes.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "onnx/onnx_convert.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"
#include "ops/shape/shape_util-inl.h"
#include "ops/shape/strided_copy-inl.h"

namespace hybridnet {

namespace {

using internal::AssignShape;
using internal::CheckedMul;
using internal::ContiguousStrides;
using internal::NormalizeAxis;
using internal::StridedCopy;
using internal::StridedWalk;

void CopyWalk(const StridedWalk& w, const TBlob& in, const TBlob& out) {
  StridedCopy(w, in.data, out.data, DTypeSize(out.dtype));
}

// ---------------------------------------------------------------------------------------------
// tile

struct TileParam {
  std::vector<int64_t> reps;
  static void Declare(ParamDeclarer<TileParam>* d) {
    d->Field("reps", &TileParam::reps)
        .Required()
        .Describe(
            "Repetitions per axis, aligned to the trailing axes; the shorter of reps and "
            "the input shape is padded with leading 1s.");
  }
};

void TileInit(TileParam* p) {
  for (int64_t r : p->reps)
    HN_CHECK(r >= 1, kInvalidArgument)
        << "reps=" << Shape(p->reps) << " must be positive (a 0 gives an empty result, "
        << "which legacy shapes cannot represent)";
}

bool TileShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& is = (*in)[0];
  if (!is.IsKnown()) return false;
  const auto& reps = attrs.Param<TileParam>().reps;
  const size_t nd = std::max(is.ndim(), reps.size());
  std::vector<int64_t> od(nd);
  for (size_t j = 0; j < nd; ++j) {
    const int64_t d = j + is.ndim() >= nd ? is[j + is.ndim() - nd] : 1;
    const int64_t r = j + reps.size() >= nd ? reps[j + reps.size() - nd] : 1;
    HN_CHECK(CheckedMul(d, r, &od[j]), kShapeError)
        << DescribeNode(attrs) << ": tiling " << is << " by reps=" << Shape(reps) << " overflows";
  }
  AssignShape(attrs, out, 0, Shape(od), "output");
  return true;
}

void TileCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const auto& reps = attrs.Param<TileParam>().reps;
  const Shape& is = in[0].shape;
  const Shape& os = out[0].shape;
  const size_t nd = os.ndim();
  const std::vector<int64_t> ist = ContiguousStrides(is), ost = ContiguousStrides(os);
  StridedWalk w;
  for (size_t j = 0; j < nd; ++j) {
    const bool has_in = j + is.ndim() >= nd;
    const int64_t d = has_in ? is[j + is.ndim() - nd] : 1;
    const int64_t r = j + reps.size() >= nd ? reps[j + reps.size() - nd] : 1;
    w.Add(r, 0, d * ost[j]);
    w.Add(d, has_in ? ist[j + is.ndim() - nd] : 0, ost[j]);
  }
  CopyWalk(w, in[0], out[0]);
}

// ---------------------------------------------------------------------------------------------
// repeat

struct RepeatParam {
  int repeats = 1;
  std::optional<int> axis;
  static void Declare(ParamDeclarer<RepeatParam>* d) {
    d->Field("repeats", &RepeatParam::repeats)
        .Required()
        .Describe("How many times each element is repeated.");
    d->Field("axis", &RepeatParam::axis)
        .Default(std::nullopt)
        .Describe(
            "The axis along which elements repeat (negative counts from the end); None "
            "repeats the flattened input into a 1-D result.");
  }
};

void RepeatInit(RepeatParam* p) {
  HN_CHECK(p->repeats >= 1, kInvalidArgument)
      << "repeats=" << p->repeats << " must be positive (0 gives an empty result, which legacy "
      << "shapes cannot represent)";
}

bool RepeatShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& is = (*in)[0];
  if (is.ndim() == 0) return false;
  const RepeatParam& p = attrs.Param<RepeatParam>();
  std::vector<int64_t> od;
  if (p.axis) {
    const size_t a = NormalizeAxis(attrs, *p.axis, is.ndim(), "axis");
    od = is.dims();
    HN_CHECK(CheckedMul(od[a], p.repeats, &od[a]), kShapeError)
        << DescribeNode(attrs) << ": repeating " << is << " overflows";
  } else {
    od.assign(1, 0);
    if (is.IsKnown()) {
      HN_CHECK(CheckedMul(is.Size(), p.repeats, &od[0]), kShapeError)
          << DescribeNode(attrs) << ": repeating " << is << " overflows";
    }
  }
  AssignShape(attrs, out, 0, Shape(od), "output");
  return is.IsKnown();
}

void RepeatCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                   const std::vector<TBlob>& out) {
  const RepeatParam& p = attrs.Param<RepeatParam>();
  const Shape& is = in[0].shape;
  StridedWalk w;
  if (!p.axis) {
    w.Add(is.Size(), 1, p.repeats);
    w.Add(p.repeats, 0, 1);
  } else {
    const size_t a =
        static_cast<size_t>(*p.axis < 0 ? *p.axis + static_cast<int>(is.ndim()) : *p.axis);
    const std::vector<int64_t> ist = ContiguousStrides(is);
    const std::vector<int64_t> ost = ContiguousStrides(out[0].shape);
    for (size_t k = 0; k < is.ndim(); ++k) {
      w.Add(is[k], ist[k], k == a ? ost[k] * p.repeats : ost[k]);
      if (k == a) w.Add(p.repeats, 0, ost[k]);
    }
  }
  CopyWalk(w, in[0], out[0]);
}

// ---------------------------------------------------------------------------------------------
// stack

struct StackParam {
  int axis = 0;
  int num_args = 0;
  static void Declare(ParamDeclarer<StackParam>* d) {
    d->Field("axis", &StackParam::axis)
        .Default(0)
        .Describe("Position of the new axis in the result.");
    d->Field("num_args", &StackParam::num_args)
        .Required()
        .Min(1)
        .Describe("Number of inputs to be stacked.");
  }
};

bool StackShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const StackParam& p = attrs.Param<StackParam>();
  Shape common;
  for (size_t i = 0; i < in->size(); ++i) {
    Shape before = common;
    HN_CHECK(MergeShape((*in)[i], &common), kShapeError)
        << DescribeNode(attrs) << ": input " << i << " has shape " << (*in)[i]
        << " but the other inputs have " << before << " (stacked inputs must agree)";
  }
  const Shape& os = (*out)[0];
  if (os.ndim() != 0) {
    HN_CHECK(os.ndim() >= 2, kShapeError)
        << DescribeNode(attrs) << ": output shape " << os << " has too few dimensions";
    const size_t a = NormalizeAxis(attrs, p.axis, os.ndim() - 1, "axis", 1);
    std::vector<int64_t> dims = os.dims();
    HN_CHECK(dims[a] == 0 || dims[a] == p.num_args, kShapeError)
        << DescribeNode(attrs) << ": output shape " << os << " must have num_args=" << p.num_args
        << " at axis " << a;
    dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(a));
    HN_CHECK(MergeShape(Shape(dims), &common), kShapeError)
        << DescribeNode(attrs) << ": output shape " << os << " does not fit the inputs " << common;
  }
  if (common.ndim() == 0) return false;
  for (size_t i = 0; i < in->size(); ++i) AssignShape(attrs, in, i, common, "input");
  const size_t a = NormalizeAxis(attrs, p.axis, common.ndim(), "axis", 1);
  std::vector<int64_t> od = common.dims();
  od.insert(od.begin() + static_cast<std::ptrdiff_t>(a), p.num_args);
  AssignShape(attrs, out, 0, Shape(od), "output");
  return internal::AllKnown(*in) && (*out)[0].IsKnown();
}

void StackCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
  const StackParam& p = attrs.Param<StackParam>();
  const Shape& is = in[0].shape;
  const size_t a =
      static_cast<size_t>(p.axis < 0 ? p.axis + static_cast<int>(is.ndim()) + 1 : p.axis);
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < a; ++k) outer *= is[k];
  for (size_t k = a; k < is.ndim(); ++k) inner *= is[k];
  for (size_t i = 0; i < in.size(); ++i) {
    StridedWalk w;
    w.Add(outer, inner, inner * static_cast<int64_t>(in.size()));
    w.Add(inner, 1, 1);
    w.dst_offset = static_cast<int64_t>(i) * inner;
    CopyWalk(w, in[i], out[0]);
  }
}

// ---------------------------------------------------------------------------------------------
// squeeze

struct SqueezeParam {
  std::optional<std::vector<int64_t>> axis;
  static void Declare(ParamDeclarer<SqueezeParam>* d) {
    d->Field("axis", &SqueezeParam::axis)
        .Default(std::nullopt)
        .Describe(
            "The size-1 axes to remove; None removes every size-1 axis. A listed axis "
            "of another size is an error.");
  }
};

bool SqueezeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& is = (*in)[0];
  if (!is.IsKnown()) return false;
  const auto& axes = attrs.Param<SqueezeParam>().axis;
  std::vector<bool> drop(is.ndim(), false);
  if (axes) {
    for (int64_t a : *axes) {
      const size_t k = NormalizeAxis(attrs, a, is.ndim(), "axis");
      HN_CHECK(is[k] == 1, kShapeError) << DescribeNode(attrs) << ": cannot squeeze axis " << k
                                        << " of size " << is[k] << " (input " << is << ")";
      HN_CHECK(!drop[k], kShapeError)
          << DescribeNode(attrs) << ": axis " << k << " is listed twice in axis=" << Shape(*axes);
      drop[k] = true;
    }
  } else {
    for (size_t k = 0; k < is.ndim(); ++k) drop[k] = is[k] == 1;
  }
  std::vector<int64_t> od;
  for (size_t k = 0; k < is.ndim(); ++k)
    if (!drop[k]) od.push_back(is[k]);
  if (od.empty()) od.push_back(1);  // MXNet keeps one axis when every axis is squeezed
  AssignShape(attrs, out, 0, Shape(od), "output");
  return true;
}

// ---------------------------------------------------------------------------------------------
// SwapAxis

struct SwapAxisParam {
  int dim1 = 0;
  int dim2 = 0;
  static void Declare(ParamDeclarer<SwapAxisParam>* d) {
    d->Field("dim1", &SwapAxisParam::dim1).Default(0).Describe("The first axis to swap.");
    d->Field("dim2", &SwapAxisParam::dim2).Default(0).Describe("The second axis to swap.");
  }
};

bool SwapAxisShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const SwapAxisParam& p = attrs.Param<SwapAxisParam>();
  const bool from_in = (*in)[0].ndim() != 0;
  const Shape& known = from_in ? (*in)[0] : (*out)[0];
  if (known.ndim() == 0) return false;
  const size_t a = NormalizeAxis(attrs, p.dim1, known.ndim(), "dim1");
  const size_t b = NormalizeAxis(attrs, p.dim2, known.ndim(), "dim2");
  Shape swapped = known;
  std::swap(swapped[a], swapped[b]);
  AssignShape(attrs, from_in ? out : in, 0, swapped, from_in ? "output" : "input");
  Shape back = (*out)[0];
  std::swap(back[a], back[b]);
  AssignShape(attrs, in, 0, back, "input");
  return (*in)[0].IsKnown() && (*out)[0].IsKnown();
}

void SwapAxisCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                     const std::vector<TBlob>& out) {
  const SwapAxisParam& p = attrs.Param<SwapAxisParam>();
  const Shape& is = in[0].shape;
  const int nd = static_cast<int>(is.ndim());
  const size_t a = static_cast<size_t>(p.dim1 < 0 ? p.dim1 + nd : p.dim1);
  const size_t b = static_cast<size_t>(p.dim2 < 0 ? p.dim2 + nd : p.dim2);
  const std::vector<int64_t> ist = ContiguousStrides(is);
  const std::vector<int64_t> ost = ContiguousStrides(out[0].shape);
  StridedWalk w;
  for (size_t k = 0; k < is.ndim(); ++k) {
    const size_t src = k == a ? b : k == b ? a : k;
    w.Add(out[0].shape[k], ist[src], ost[k]);
  }
  CopyWalk(w, in[0], out[0]);
}

// ---------------------------------------------------------------------------------------------
// reverse

struct ReverseParam {
  std::vector<int64_t> axis;
  static void Declare(ParamDeclarer<ReverseParam>* d) {
    d->Field("axis", &ReverseParam::axis)
        .Required()
        .Describe("The axes whose element order is reversed.");
  }
};

// Which axes end up reversed: an axis listed twice is reversed twice (no change), as in MXNet.
// Negative axes are errors in MXNet (it indexes the shape with them) and here.
std::vector<bool> ReversedAxes(const NodeAttrs& attrs, size_t ndim) {
  std::vector<bool> flip(ndim, false);
  for (int64_t a : attrs.Param<ReverseParam>().axis) {
    // MXNet indexes the shape with the axis as given: a negative axis is an error there.
    HN_CHECK(a >= 0, kShapeError) << DescribeNode(attrs)
                                  << ": axis=" << Shape(attrs.Param<ReverseParam>().axis)
                                  << " has a negative entry (reverse takes axes counted from 0)";
    const size_t k = NormalizeAxis(attrs, a, ndim, "axis");
    flip[k] = !flip[k];
  }
  return flip;
}

bool ReverseShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& known = (*in)[0].ndim() != 0 ? (*in)[0] : (*out)[0];
  if (known.ndim() != 0) ReversedAxes(attrs, known.ndim());  // validates the axes
  return ElemwiseShape(attrs, in, out);
}

void ReverseCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const Shape& is = in[0].shape;
  const std::vector<bool> flip = ReversedAxes(attrs, is.ndim());
  const std::vector<int64_t> st = ContiguousStrides(is);
  StridedWalk w;
  for (size_t k = 0; k < is.ndim(); ++k) {
    w.Add(is[k], flip[k] ? -st[k] : st[k], st[k]);
    if (flip[k]) w.src_offset += (is[k] - 1) * st[k];
  }
  CopyWalk(w, in[0], out[0]);
}

// ---------------------------------------------------------------------------------------------
// depth_to_space, space_to_depth (MXNet's "DCR" channel order: the block offset is the outer
// part of the channel index)

struct BlockParam {
  int block_size = 0;
  static void Declare(ParamDeclarer<BlockParam>* d) {
    d->Field("block_size", &BlockParam::block_size)
        .Required()
        .Min(1)
        .Describe("Side of the square blocks moved between depth and space.");
  }
};

template <bool kToSpace>
bool DepthSpaceShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& is = (*in)[0];
  if (is.ndim() == 0) return false;
  HN_CHECK(is.ndim() == 4, kShapeError)
      << DescribeNode(attrs) << ": expects a 4-D (N, C, H, W) input, got " << is;
  if (!is.IsKnown()) return false;
  const int64_t b = attrs.Param<BlockParam>().block_size;
  Shape os = is;
  if (kToSpace) {
    HN_CHECK(is[1] % (b * b) == 0, kShapeError)
        << DescribeNode(attrs) << ": the depth " << is[1] << " of " << is
        << " is not a multiple of block_size^2 = " << b * b;
    os = Shape{is[0], is[1] / (b * b), is[2] * b, is[3] * b};
  } else {
    HN_CHECK(is[2] % b == 0 && is[3] % b == 0, kShapeError)
        << DescribeNode(attrs) << ": height and width of " << is
        << " must be multiples of block_size=" << b;
    os = Shape{is[0], is[1] * b * b, is[2] / b, is[3] / b};
  }
  AssignShape(attrs, out, 0, os, "output");
  return true;
}

template <bool kToSpace>
void DepthSpaceCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                       const std::vector<TBlob>& out) {
  const int64_t b = attrs.Param<BlockParam>().block_size;
  // The space side (N, C, H*b, W*b) and the depth side (N, C*b*b, H, W).
  const Shape& space = kToSpace ? out[0].shape : in[0].shape;
  const int64_t n = space[0], c = space[1], h = space[2] / b, wd = space[3] / b;
  // Element strides of the space side over (n, c, h, by, w, bx) and of the depth side over
  // the same index: depth channel = (by * b + bx) * c + ch.
  const int64_t space_st[6] = {c * h * b * wd * b, h * b * wd * b, b * wd * b, wd * b, b, 1};
  const int64_t depth_st[6] = {b * b * c * h * wd, h * wd, wd, b * c * h * wd, 1, c * h * wd};
  const int64_t extent[6] = {n, c, h, b, wd, b};
  StridedWalk w;
  for (int k = 0; k < 6; ++k) {
    w.Add(extent[k], kToSpace ? depth_st[k] : space_st[k], kToSpace ? space_st[k] : depth_st[k]);
  }
  CopyWalk(w, in[0], out[0]);
}

// ---------------------------------------------------------------------------------------------
// _split_v2

struct SplitV2Param {
  std::vector<int64_t> indices;
  int axis = 1;
  bool squeeze_axis = false;
  int sections = 0;
  static void Declare(ParamDeclarer<SplitV2Param>* d) {
    d->Field("indices", &SplitV2Param::indices)
        .Required()
        .Describe(
            "Start of every part along axis, beginning with 0 (output i spans "
            "indices[i] up to indices[i+1], the last one up to the end); ignored when "
            "sections > 0.");
    d->Field("axis", &SplitV2Param::axis).Default(1).Describe("Axis along which to split.");
    d->Field("squeeze_axis", &SplitV2Param::squeeze_axis)
        .Default(false)
        .Describe("Removes the split axis from the outputs (every part must have length 1).");
    d->Field("sections", &SplitV2Param::sections)
        .Default(0)
        .Min(0)
        .Describe(
            "Number of near-equal parts (the first len % sections parts are one longer); "
            "0 splits at indices.");
  }
};

uint32_t SplitV2NumOutputs(const NodeAttrs& attrs) {
  const SplitV2Param& p = attrs.Param<SplitV2Param>();
  return static_cast<uint32_t>(p.sections > 0 ? p.sections : static_cast<int>(p.indices.size()));
}

void SplitV2Init(SplitV2Param* p) {
  HN_CHECK(p->sections > 0 || !p->indices.empty(), kInvalidArgument)
      << "indices=() with sections=0 gives no outputs";
}

// Part boundaries along the axis (length len): part i is [begin[i], end[i]).
void SplitV2Parts(const NodeAttrs& attrs, int64_t len, std::vector<int64_t>* begin,
                  std::vector<int64_t>* end) {
  const SplitV2Param& p = attrs.Param<SplitV2Param>();
  begin->clear();
  end->clear();
  if (p.sections > 0) {
    const int64_t small = len / p.sections, extra = len % p.sections;
    int64_t at = 0;
    for (int64_t i = 0; i < p.sections; ++i) {
      begin->push_back(at);
      at += small + (i < extra ? 1 : 0);
      end->push_back(at);
    }
  } else {
    // MXNet infers the input back from the parts, so they must cover the axis from 0.
    HN_CHECK(p.indices[0] == 0, kShapeError)
        << DescribeNode(attrs) << ": indices=" << Shape(p.indices)
        << " must start at 0 (the parts have to cover the whole axis)";
    for (size_t i = 0; i < p.indices.size(); ++i) {
      begin->push_back(p.indices[i]);
      end->push_back(i + 1 < p.indices.size() ? p.indices[i + 1] : len);
    }
  }
  for (size_t i = 0; i < begin->size(); ++i) {
    HN_CHECK((*begin)[i] >= 0 && (*begin)[i] < (*end)[i] && (*end)[i] <= len, kShapeError)
        << DescribeNode(attrs) << ": part " << i << " [" << (*begin)[i] << ", " << (*end)[i]
        << ") of an axis of length " << len << " is empty or out of range ("
        << (p.sections > 0 ? "sections=" + std::to_string(p.sections)
                           : "indices=" + Shape(p.indices).ToString())
        << "; legacy shapes cannot represent empty parts)";
  }
}

bool SplitV2Shape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const SplitV2Param& p = attrs.Param<SplitV2Param>();
  const Shape& is = (*in)[0];
  if (is.ndim() == 0) return false;
  const size_t a = NormalizeAxis(attrs, p.axis, is.ndim(), "axis");
  if (is[a] == 0) return false;
  std::vector<int64_t> begin, end;
  SplitV2Parts(attrs, is[a], &begin, &end);
  for (size_t i = 0; i < out->size(); ++i) {
    std::vector<int64_t> od = is.dims();
    od[a] = end[i] - begin[i];
    if (p.squeeze_axis) {
      HN_CHECK(od[a] == 1, kShapeError)
          << DescribeNode(attrs) << ": squeeze_axis=True needs parts of length 1, part " << i
          << " has " << od[a];
      od.erase(od.begin() + static_cast<std::ptrdiff_t>(a));
      if (od.empty()) od.push_back(1);
    }
    AssignShape(attrs, out, i, Shape(od), "output");
  }
  return is.IsKnown();
}

void SplitV2Compute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out) {
  const Shape& is = in[0].shape;
  const int axis = attrs.Param<SplitV2Param>().axis;
  const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int>(is.ndim()) : axis);
  std::vector<int64_t> begin, end;
  SplitV2Parts(attrs, is[a], &begin, &end);
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < a; ++k) outer *= is[k];
  for (size_t k = a + 1; k < is.ndim(); ++k) inner *= is[k];
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t part = (end[i] - begin[i]) * inner;
    StridedWalk w;
    w.Add(outer, is[a] * inner, part);
    w.Add(part, 1, 1);
    w.src_offset = begin[i] * inner;
    CopyWalk(w, in[0], out[i]);
  }
}

// ---------------------------------------------------------------------------------------------
// diag

struct DiagParam {
  int k = 0;
  int axis1 = 0;
  int axis2 = 1;
  static void Declare(ParamDeclarer<DiagParam>* d) {
    d->Field("k", &DiagParam::k)
        .Default(0)
        .Describe("Which diagonal: 0 the main one, k > 0 above it, k < 0 below it.");
    d->Field("axis1", &DiagParam::axis1)
        .Default(0)
        .Describe("First axis of the 2-D sub-arrays whose diagonal is taken (N-D input).");
    d->Field("axis2", &DiagParam::axis2)
        .Default(1)
        .Describe("Second axis of the 2-D sub-arrays whose diagonal is taken (N-D input).");
  }
};

// For an N-D input: the two axes and the diagonal's length.
void DiagAxes(const NodeAttrs& attrs, const Shape& is, size_t* x1, size_t* x2, int64_t* len) {
  const DiagParam& p = attrs.Param<DiagParam>();
  *x1 = NormalizeAxis(attrs, p.axis1, is.ndim(), "axis1");
  *x2 = NormalizeAxis(attrs, p.axis2, is.ndim(), "axis2");
  HN_CHECK(*x1 != *x2, kShapeError)
      << DescribeNode(attrs) << ": axis1 and axis2 both refer to axis " << *x1;
  const int64_t h = is[*x1] + std::min(p.k, 0), w = is[*x2] - std::max(p.k, 0);
  *len = std::min(h, w);
  HN_CHECK(*len > 0, kShapeError) << DescribeNode(attrs) << ": diagonal k=" << p.k
                                  << " does not exist in axes (" << *x1 << ", " << *x2 << ") of "
                                  << is;
}

bool DiagShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& is = (*in)[0];
  if (!is.IsKnown()) return false;
  if (is.ndim() == 1) {
    const int64_t n = is[0] + std::abs(attrs.Param<DiagParam>().k);
    AssignShape(attrs, out, 0, Shape{n, n}, "output");
    return true;
  }
  size_t x1 = 0, x2 = 0;
  int64_t len = 0;
  DiagAxes(attrs, is, &x1, &x2, &len);
  std::vector<int64_t> od;
  for (size_t k = 0; k < is.ndim(); ++k)
    if (k != x1 && k != x2) od.push_back(is[k]);
  od.push_back(len);
  AssignShape(attrs, out, 0, Shape(od), "output");
  return true;
}

void DiagCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 const std::vector<TBlob>& out) {
  const int k = attrs.Param<DiagParam>().k;
  const Shape& is = in[0].shape;
  const size_t esize = DTypeSize(out[0].dtype);
  StridedWalk w;
  if (is.ndim() == 1) {
    // Zeros everywhere, the vector along diagonal k of the (n, n) result.
    std::memset(out[0].data, 0, static_cast<size_t>(out[0].Size()) * esize);
    const int64_t n = out[0].shape[0];
    w.Add(is[0], 1, n + 1);
    w.dst_offset = k >= 0 ? k : -static_cast<int64_t>(k) * n;
    CopyWalk(w, in[0], out[0]);
    return;
  }
  size_t x1 = 0, x2 = 0;
  int64_t len = 0;
  DiagAxes(attrs, is, &x1, &x2, &len);
  const std::vector<int64_t> ist = ContiguousStrides(is);
  const std::vector<int64_t> ost = ContiguousStrides(out[0].shape);
  size_t j = 0;
  for (size_t a = 0; a < is.ndim(); ++a)
    if (a != x1 && a != x2) w.Add(is[a], ist[a], ost[j++]);
  w.Add(len, ist[x1] + ist[x2], 1);
  w.src_offset = k >= 0 ? k * ist[x2] : -static_cast<int64_t>(k) * ist[x1];
  CopyWalk(w, in[0], out[0]);
}

FListNames StackInputNames() {
  return [](const NodeAttrs& attrs) {
    std::vector<std::string> names;
    for (int i = 0; i < attrs.Param<StackParam>().num_args; ++i)
      names.push_back("arg" + std::to_string(i));
    return names;
  };
}

// ---- ONNX ---------------------------------------------------------------------------------------

// Tile with reps and shape padded to one rank by leading 1s, as TileShape aligns them.
void TileOnnx(OnnxNodeContext* ctx) {
  std::vector<int64_t> reps = ctx->param<TileParam>().reps;
  const OnnxValue& x = ctx->in(0);
  const size_t rank = std::max(reps.size(), x.shape.ndim());
  std::string data = x.name;
  if (x.shape.ndim() < rank) {
    std::vector<int64_t> dims(rank - x.shape.ndim(), 1);
    dims.insert(dims.end(), x.shape.begin(), x.shape.end());
    std::vector<bool> batch(rank - x.shape.ndim(), false);
    batch.insert(batch.end(), x.batch_dims.begin(), x.batch_dims.end());
    data = ctx->Reshape(data, Shape(dims), batch);
  }
  reps.insert(reps.begin(), rank - reps.size(), 1);
  ctx->Add("Tile", {data, ctx->Int64s(reps)}, {}, ctx->out(0).name);
}

void StackOnnx(OnnxNodeContext* ctx) {
  const int64_t rank = static_cast<int64_t>(ctx->out(0).shape.ndim());
  int64_t axis = ctx->param<StackParam>().axis;
  if (axis < 0) axis += rank;
  if (ctx->num_inputs() == 1) {
    ctx->Unsqueeze(ctx->in(0).name, {axis}, ctx->out(0).name);
    return;
  }
  std::vector<std::string> parts;
  for (const auto& name : ctx->input_names()) parts.push_back(ctx->Unsqueeze(name, {axis}));
  ctx->Add("Concat", parts, {{"axis", axis}}, ctx->out(0).name);
}

void SwapAxisOnnx(OnnxNodeContext* ctx) {
  const auto& p = ctx->param<SwapAxisParam>();
  const int64_t n = static_cast<int64_t>(ctx->in(0).shape.ndim());
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
  const int64_t a = p.dim1 < 0 ? p.dim1 + n : p.dim1, b = p.dim2 < 0 ? p.dim2 + n : p.dim2;
  std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
  ctx->Add("Transpose", {ctx->in(0).name}, {{"perm", perm}}, ctx->out(0).name);
}

// Slice with step -1 over the axes reversed an odd number of times.
void ReverseOnnx(OnnxNodeContext* ctx) {
  std::vector<bool> flipped(ctx->in(0).shape.ndim(), false);
  for (int64_t a : ctx->param<ReverseParam>().axis)
    flipped[static_cast<size_t>(a)] = !flipped[static_cast<size_t>(a)];
  std::vector<int64_t> starts, ends, axes, steps;
  for (size_t i = 0; i < flipped.size(); ++i) {
    if (!flipped[i]) continue;
    starts.push_back(-1);
    ends.push_back(std::numeric_limits<int64_t>::min());
    axes.push_back(static_cast<int64_t>(i));
    steps.push_back(-1);
  }
  if (axes.empty()) {
    ctx->Add("Identity", {ctx->in(0).name}, {}, ctx->out(0).name);
    return;
  }
  ctx->Add("Slice",
           {ctx->in(0).name, ctx->Int64s(starts), ctx->Int64s(ends), ctx->Int64s(axes),
            ctx->Int64s(steps)},
           {}, ctx->out(0).name);
}

// MXNet's channel order is ONNX's "DCR" (depth, column, row) for depth_to_space.
void DepthToSpaceOnnx(OnnxNodeContext* ctx) {
  ctx->Add("DepthToSpace", {ctx->in(0).name},
           {{"blocksize", ctx->param<BlockParam>().block_size}, {"mode", "DCR"}}, ctx->out(0).name);
}

void SpaceToDepthOnnx(OnnxNodeContext* ctx) {
  ctx->Add("SpaceToDepth", {ctx->in(0).name}, {{"blocksize", ctx->param<BlockParam>().block_size}},
           ctx->out(0).name);
}

void SqueezeOnnx(OnnxNodeContext* ctx) { ctx->ReshapeToOutput(ctx->in(0).name, 0); }

// ---------------------------------------------------------------------------------------------
// Gradients (MXNet's): tile, repeat, depth_to_space, space_to_depth and diag add the output
// gradient back where each element was copied from; stack splits it and _split_v2 joins its
// parts; SwapAxis and reverse are their own inverse, squeeze a reshape.

using internal::GradientBuilder;

std::vector<NodeEntry> CopiedGradient(const std::shared_ptr<Node>& n,
                                      const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {internal::CopiedElementsGradient(g, 0)};
}

// SwapAxis and reverse undo themselves.
std::vector<NodeEntry> SelfInverseGradient(const std::shared_ptr<Node>& n,
                                           const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {g.Op(g.attrs().op->name, {g.out_grad(0)}, g.attrs().dict)};
}

std::vector<NodeEntry> SqueezeGradient(const std::shared_ptr<Node>& n,
                                       const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {g.Op("reshape_like", {g.out_grad(0), g.in(0)})};
}

// _split_v2: the parts' gradients joined back along the axis (MXNet's _split_v2_backward).
std::vector<NodeEntry> SplitV2Gradient(const std::shared_ptr<Node>& n,
                                       const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  const SplitV2Param& p = g.attrs().Param<SplitV2Param>();
  const std::string axis = std::to_string(p.axis);
  std::vector<NodeEntry> parts;
  for (const NodeEntry& part : dy) {
    parts.push_back(p.squeeze_axis ? g.Op("expand_dims", {part}, {{"axis", axis}}) : part);
  }
  const std::string count = std::to_string(parts.size());
  return {g.Op("Concat", std::move(parts), {{"dim", axis}, {"num_args", count}})};
}

std::vector<NodeEntry> StackGradient(const std::shared_ptr<Node>& n,
                                     const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  const StackParam& p = g.attrs().Param<StackParam>();
  const std::shared_ptr<Node> parts = g.MakeNode("SliceChannel", {g.out_grad(0)},
                                                 {{"num_outputs", std::to_string(p.num_args)},
                                                  {"axis", std::to_string(p.axis)},
                                                  {"squeeze_axis", "True"}});
  std::vector<NodeEntry> grads;
  for (int i = 0; i < p.num_args; ++i)
    grads.push_back(NodeEntry{parts, static_cast<uint32_t>(i), 0});
  return grads;
}

}  // namespace

void RegisterRearrangeOps(OpRegistry* r) {
  r->Register("tile")
      .Describe(
          "Repeats the whole input reps[i] times along each axis i (reps aligned to the "
          "trailing axes; leading axes are added to the shorter of the two).")
      .SetParam<TileParam>(TileInit)
      .SetInputNames({"data"})
      .SetInferShape(TileShape)
      .SetInferType(ElemwiseType)
      .SetCompute(TileCompute)
      .SetOnnx({"Tile", "Reshape"}, TileOnnx)
      .SetGradient(CopiedGradient);

  r->Register("repeat")
      .Describe(
          "Repeats every element `repeats` times along axis (consecutive copies), or "
          "over the flattened input when axis is None.")
      .SetParam<RepeatParam>(RepeatInit)
      .SetInputNames({"data"})
      .SetInferShape(RepeatShape)
      .SetInferType(ElemwiseType)
      .SetCompute(RepeatCompute)
      .SetGradient(CopiedGradient);

  r->Register("stack")
      .Describe("Joins num_args arrays of one shape along a new axis inserted at position axis.")
      .SetParam<StackParam>()
      .SetKeyVarNumArgs("num_args")
      .SetInputNames(StackInputNames())
      // Counted from num_args without building the names: a hostile file may say billions.
      .SetNumInputs([](const NodeAttrs& attrs) {
        return static_cast<uint32_t>(attrs.Param<StackParam>().num_args);
      })
      .SetInferShape(StackShape)
      .SetInferType(ElemwiseType)
      .SetCompute(StackCompute)
      .SetOnnx({"Unsqueeze", "Concat"}, StackOnnx)
      .SetGradient(StackGradient);

  r->Register("squeeze")
      .Describe(
          "Removes size-1 axes (all of them, or those listed in axis); the data is "
          "unchanged. Squeezing every axis leaves shape (1,).")
      .SetParam<SqueezeParam>()
      .SetInputNames({"data"})
      .SetInferShape(SqueezeShape)
      .SetInferType(ElemwiseType)
      .SetCompute(internal::ViewCompute)
      .SetIdentityView()
      .SetInplace({{0, 0}})
      .SetOnnx({"Reshape"}, SqueezeOnnx)
      .SetGradient(SqueezeGradient);

  r->Register("SwapAxis")
      .Describe("Interchanges two axes of the input (a copy in the new order).")
      .AddAlias("swapaxes")
      .SetParam<SwapAxisParam>()
      .SetInputNames({"data"})
      .SetInferShape(SwapAxisShape)
      .SetInferType(ElemwiseType)
      .SetCompute(SwapAxisCompute)
      .SetOnnx({"Transpose"}, SwapAxisOnnx)
      .SetGradient(SelfInverseGradient);

  r->Register("reverse")
      .Describe("Reverses the order of the elements along each listed axis.")
      .AddAlias("flip")
      .SetParam<ReverseParam>()
      .SetInputNames({"data"})
      .SetInferShape(ReverseShape)
      .SetInferType(ElemwiseType)
      .SetCompute(ReverseCompute)
      .SetOnnx({"Slice", "Identity"}, ReverseOnnx)
      .SetGradient(SelfInverseGradient);

  r->Register("depth_to_space")
      .Describe(
          "Moves blocks of block_size^2 channels into block_size x block_size spatial "
          "blocks: (N, C, H, W) -> (N, C / b^2, H * b, W * b), channel (by * b + bx) * "
          "C' + c going to offset (by, bx) of block c.")
      .SetParam<BlockParam>()
      .SetInputNames({"data"})
      .SetInferShape(DepthSpaceShape<true>)
      .SetInferType(ElemwiseType)
      .SetCompute(DepthSpaceCompute<true>)
      .SetOnnx({"DepthToSpace"}, DepthToSpaceOnnx)
      .SetGradient(CopiedGradient);

  r->Register("space_to_depth")
      .Describe("The inverse of depth_to_space: (N, C, H, W) -> (N, C * b^2, H / b, W / b).")
      .SetParam<BlockParam>()
      .SetInputNames({"data"})
      .SetInferShape(DepthSpaceShape<false>)
      .SetInferType(ElemwiseType)
      .SetCompute(DepthSpaceCompute<false>)
      .SetOnnx({"SpaceToDepth"}, SpaceToDepthOnnx)
      .SetGradient(CopiedGradient);

  r->Register("_split_v2")
      .Describe(
          "Splits the input along axis at the given indices, or into `sections` "
          "near-equal parts.")
      .SetParam<SplitV2Param>(SplitV2Init)
      .SetInputNames({"data"})
      .SetNumOutputs(SplitV2NumOutputs)
      .SetInferShape(SplitV2Shape)
      .SetInferType(ElemwiseType)
      .SetCompute(SplitV2Compute)
      .SetGradient(SplitV2Gradient);

  r->Register("diag")
      .Describe(
          "A 1-D input becomes a square matrix with the vector on diagonal k; an N-D "
          "input gives diagonal k of its (axis1, axis2) planes as a new last axis.")
      .SetParam<DiagParam>()
      .SetInputNames({"data"})
      .SetInferShape(DiagShape)
      .SetInferType(ElemwiseType)
      .SetCompute(DiagCompute)
      .SetGradient(CopiedGradient);
}

}  // namespace hybridnet
