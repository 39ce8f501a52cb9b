// Slicing (MXNet src/operator/tensor/matrix_op-inl.h SliceParam, SliceAxisParam): slice with
// per-axis begin/end/step (entries may be None), slice_axis along one axis, and the ops that
// write a slice: _slice_assign (another array) and _slice_assign_scalar (a value). Every dtype.
//
// slice follows MXNet's index rules: a negative begin/end counts from the end; None means the
// start (or the end, for a negative step); begin is clamped into the axis and end into
// [-1, len]; the output has ceil((end - begin) / step) elements along the axis. Axes beyond
// len(begin) are kept whole. An empty result (MXNet allows zero-size arrays there) is rejected:
// a 0 dimension means "unknown" in the legacy shapes hybridnet reads and writes.
#include <algorithm>
#include <cstring>
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

constexpr size_t kMaxSliceDims = 16;

using OptTuple = std::vector<std::optional<int64_t>>;

// "(None, 2)", "[0, -1]", "(1,)", "()" -> entries; "None" entries are unset.
OptTuple ParseOptTuple(const std::string& text, const char* key) {
  std::string s;
  for (char c : text)
    if (c != ' ') s += c;
  auto fail = [&]() {
    HN_THROW(kInvalidArgument) << "attribute '" << key << "'='" << text
                               << "': expected a tuple of integers or None such as (0, None)";
  };
  if (s.empty()) fail();
  if (s == "None") return {};
  if (s.front() != '(' && s.front() != '[') s = "(" + s + ")";
  const char close = s.front() == '(' ? ')' : ']';
  if (s.back() != close) fail();
  s = s.substr(1, s.size() - 2);
  OptTuple out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    std::string item = s.substr(i, j - i);
    if (item.empty()) {
      if (j == s.size() || j + 1 != s.size()) fail();  // only "(3,)" may end with a comma
    } else if (item == "None" || item == "none") {
      out.emplace_back(std::nullopt);
    } else {
      if (item.back() == 'L') item.pop_back();
      try {
        int64_t v = 0;
        internal::ParseValue(item, &v);
        out.emplace_back(v);
      } catch (const std::invalid_argument&) {
        fail();
      }
    }
    i = j + 1;
  }
  return out;
}

std::string OptTupleText(const OptTuple& t) {
  std::string s = "(";
  for (size_t i = 0; i < t.size(); ++i) {
    s += (i ? ", " : "") + (t[i] ? std::to_string(*t[i]) : std::string("None"));
  }
  return s + (t.size() == 1 ? ",)" : ")");
}

struct SliceParam {
  std::string begin_text, end_text, step_text;
  OptTuple begin, end, step;
  static void Declare(ParamDeclarer<SliceParam>* d) { DeclareSliceFields(d); }

  // slice's fields, also declared by the ops that assign to a slice.
  template <typename P>
  static void DeclareSliceFields(ParamDeclarer<P>* d) {
    d->Field("begin", static_cast<std::string P::*>(&P::begin_text))
        .Required()
        .Describe("starting indices for the slice operation, supports negative indices.");
    d->Field("end", static_cast<std::string P::*>(&P::end_text))
        .Required()
        .Describe("ending indices for the slice operation, supports negative indices.");
    d->Field("step", static_cast<std::string P::*>(&P::step_text))
        .Default("()")
        .Describe("step for the slice operation, supports negative values.");
  }
};

// _slice_assign_scalar: the slice's fields and the value written into the slice.
struct SliceScalarParam : SliceParam {
  double scalar = 0;
  static void Declare(ParamDeclarer<SliceScalarParam>* d) {
    DeclareSliceFields(d);
    d->Field("scalar", &SliceScalarParam::scalar)
        .Default(0.0)
        .Describe("The value assigned to every element of the slice.");
  }
};

void SliceParamInit(SliceParam* p) {
  p->begin = ParseOptTuple(p->begin_text, "begin");
  p->end = ParseOptTuple(p->end_text, "end");
  p->step = ParseOptTuple(p->step_text, "step");
  HN_CHECK(p->begin.size() == p->end.size(), kInvalidArgument)
      << "begin " << OptTupleText(p->begin) << " and end " << OptTupleText(p->end)
      << " must have the same length";
  HN_CHECK(p->step.empty() || p->step.size() == p->begin.size(), kInvalidArgument)
      << "step " << OptTupleText(p->step) << " must be empty or as long as begin "
      << OptTupleText(p->begin);
  for (const auto& s : p->step)
    HN_CHECK(!s || *s != 0, kInvalidArgument) << "slice step cannot be 0";
}

template <typename P>
void SliceInit(P* p) {
  SliceParamInit(p);
}

struct SliceAxisParam {
  int axis = 0;
  int64_t begin = 0;
  std::optional<int64_t> end;
  static void Declare(ParamDeclarer<SliceAxisParam>* d) {
    d->Field("axis", &SliceAxisParam::axis)
        .Required()
        .Describe(
            "Axis along which to be sliced, "
            "supports negative indexes.");
    d->Field("begin", &SliceAxisParam::begin)
        .Required()
        .Describe("The beginning index along the axis to be sliced, supports negative indexes.");
    d->Field("end", &SliceAxisParam::end)
        .Required()
        .Describe(
            "The ending index along the axis to be sliced, supports negative indexes. "
            "None slices to the end.");
  }
};

// One axis of a slice: first index, step and count.
struct AxisRange {
  int64_t begin = 0, step = 1, count = 0;
};

// MXNet's GetIndexRange for one axis of length len (> 0).
AxisRange SliceRange(const NodeAttrs& attrs, const SliceParam& p, size_t i, int64_t len) {
  int64_t s = (i < p.step.size() && p.step[i]) ? *p.step[i] : 1;
  int64_t b = 0, e = len;
  if (p.begin[i]) {
    b = *p.begin[i];
    if (b < 0) b += len;
  } else if (s < 0) {
    b = len - 1;
  }
  if (p.end[i]) {
    e = *p.end[i];
    if (e < 0) e += len;
  } else if (s < 0) {
    e = -1;
  }
  if (s > 0) {
    b = std::clamp<int64_t>(b, 0, len);
    e = std::clamp<int64_t>(e, 0, len);
  } else {
    b = std::clamp<int64_t>(b, -1, len - 1);
    e = std::clamp<int64_t>(e, -1, len - 1);
  }
  const int64_t count = s > 0 ? (e - b + s - 1) / s : (b - e + (-s) - 1) / (-s);
  HN_CHECK(count > 0, kShapeError)
      << DescribeNode(attrs) << ": slicing axis " << i << " (length " << len
      << ") with begin=" << OptTupleText(p.begin) << ", end=" << OptTupleText(p.end)
      << (p.step.empty() ? std::string() : ", step=" + OptTupleText(p.step))
      << " gives an empty result, which legacy shapes cannot represent";
  return AxisRange{b, s, count};
}

template <typename P = SliceParam>
std::vector<AxisRange> SliceRanges(const NodeAttrs& attrs, const Shape& s) {
  const SliceParam& p = attrs.Param<P>();
  HN_CHECK(p.begin.size() <= s.ndim(), kShapeError)
      << DescribeNode(attrs) << ": begin " << OptTupleText(p.begin) << " has more entries than "
      << "the input " << s << " has dimensions";
  std::vector<AxisRange> ranges;
  for (size_t i = 0; i < s.ndim(); ++i) {
    if (i < p.begin.size()) {
      ranges.push_back(SliceRange(attrs, p, i, s[i]));
    } else {
      ranges.push_back(AxisRange{0, 1, s[i]});
    }
  }
  return ranges;
}

// The shape of the slice of `ishape` (unknown dims stay unknown).
template <typename P>
Shape SlicedShape(const NodeAttrs& attrs, const Shape& ishape) {
  HN_CHECK(ishape.ndim() <= kMaxSliceDims, kShapeError)
      << DescribeNode(attrs) << ": slice supports at most " << kMaxSliceDims << " dimensions";
  const SliceParam& p = attrs.Param<P>();
  HN_CHECK(p.begin.size() <= ishape.ndim(), kShapeError)
      << DescribeNode(attrs) << ": begin " << OptTupleText(p.begin) << " has more entries than "
      << "the input " << ishape << " has dimensions";
  std::vector<int64_t> dims(ishape.begin(), ishape.end());
  for (size_t i = 0; i < p.begin.size(); ++i) {
    if (dims[i] != 0) dims[i] = SliceRange(attrs, p, i, dims[i]).count;
  }
  return Shape(dims);
}

bool SliceShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& ishape = (*in)[0];
  if (ishape.ndim() == 0) return false;
  const Shape sliced = SlicedShape<SliceParam>(attrs, ishape);
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(sliced, &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match the sliced "
      << "shape " << sliced;
  (*out)[0] = merged;
  return ishape.IsKnown() && (*out)[0].IsKnown();
}

// The strided box `ranges` of an array of shape s as a walk: the box's elements in order on
// the destination side (dense), their positions on the source side.
internal::StridedWalk BoxWalk(const Shape& s, const std::vector<AxisRange>& ranges) {
  const std::vector<int64_t> st = internal::ContiguousStrides(s);
  std::vector<int64_t> box(ranges.size());
  for (size_t k = 0; k < ranges.size(); ++k) box[k] = ranges[k].count;
  const std::vector<int64_t> dense = internal::ContiguousStrides(Shape(box));
  internal::StridedWalk w;
  for (size_t k = 0; k < ranges.size(); ++k) {
    w.Add(ranges[k].count, ranges[k].step * st[k], dense[k]);
    w.src_offset += ranges[k].begin * st[k];
  }
  return w;
}

// Copies the box of x (shape s) into the dense y.
void CopyBox(const TBlob& x, const std::vector<AxisRange>& ranges, const TBlob& y) {
  internal::StridedCopy(BoxWalk(x.shape, ranges), x.data, y.data, DTypeSize(y.dtype));
}

void SliceCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
  CopyBox(in[0], SliceRanges(attrs, in[0].shape), out[0]);
}

// slice_axis: MXNet's GetSliceAxisParams (no clamping: out-of-range values are errors).
AxisRange SliceAxisRange(const NodeAttrs& attrs, const Shape& s, size_t* axis_out) {
  const SliceAxisParam& p = attrs.Param<SliceAxisParam>();
  const int64_t n = static_cast<int64_t>(s.ndim());
  HN_CHECK(p.axis >= -n && p.axis < n, kShapeError)
      << DescribeNode(attrs) << ": axis " << p.axis << " is out of range for the " << n
      << "-D input " << s;
  const size_t axis = static_cast<size_t>(p.axis < 0 ? p.axis + n : p.axis);
  *axis_out = axis;
  const int64_t len = s[axis];
  int64_t b = p.begin < 0 ? p.begin + len : p.begin;
  int64_t e = len;
  if (p.end) e = *p.end < 0 ? *p.end + len : *p.end;
  HN_CHECK(e <= len, kShapeError) << DescribeNode(attrs) << ": end=" << e
                                  << " is out of range for axis " << axis << " of length " << len
                                  << " (input " << s << ")";
  HN_CHECK(b >= 0 && b < e, kShapeError)
      << DescribeNode(attrs) << ": invalid begin=" << p.begin
      << ", end=" << (p.end ? std::to_string(*p.end) : std::string("None")) << " for axis " << axis
      << " of length " << len << " (input " << s << ")";
  return AxisRange{b, 1, e - b};
}

bool SliceAxisShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& ishape = (*in)[0];
  if (ishape.ndim() == 0) return false;
  HN_CHECK(ishape.ndim() <= kMaxSliceDims, kShapeError)
      << DescribeNode(attrs) << ": slice_axis supports at most " << kMaxSliceDims << " dimensions";
  const SliceAxisParam& p = attrs.Param<SliceAxisParam>();
  const int64_t n = static_cast<int64_t>(ishape.ndim());
  HN_CHECK(p.axis >= -n && p.axis < n, kShapeError)
      << DescribeNode(attrs) << ": axis " << p.axis << " is out of range for the " << n
      << "-D input " << ishape;
  std::vector<int64_t> dims(ishape.begin(), ishape.end());
  const size_t axis = static_cast<size_t>(p.axis < 0 ? p.axis + n : p.axis);
  if (dims[axis] != 0) {
    size_t a = 0;
    dims[axis] = SliceAxisRange(attrs, ishape, &a).count;
  }
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(Shape(dims), &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match the sliced "
      << "shape " << Shape(dims);
  (*out)[0] = merged;
  return ishape.IsKnown() && (*out)[0].IsKnown();
}

void SliceAxisCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  size_t axis = 0;
  AxisRange r = SliceAxisRange(attrs, s, &axis);
  std::vector<AxisRange> ranges;
  for (size_t k = 0; k < s.ndim(); ++k) ranges.push_back(k == axis ? r : AxisRange{0, 1, s[k]});
  CopyBox(in[0], ranges, out[0]);
}

// ---------------------------------------------------------------------------------------------
// _slice_assign, _slice_assign_scalar: a copy of the input with the slice overwritten

// The output has the input's shape (both ways); returns it when known.
bool SameAsInput0(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  internal::AssignShape(attrs, out, 0, (*in)[0], "output");
  internal::AssignShape(attrs, in, 0, (*out)[0], "input");
  return (*in)[0].IsKnown();
}

bool SliceAssignShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  if (!SameAsInput0(attrs, in, out)) return false;
  internal::AssignShape(attrs, in, 1, SlicedShape<SliceParam>(attrs, (*in)[0]), "input");
  return (*in)[1].IsKnown();
}

bool SliceAssignScalarShape(const NodeAttrs& attrs, std::vector<Shape>* in,
                            std::vector<Shape>* out) {
  if (!SameAsInput0(attrs, in, out)) return false;
  SlicedShape<SliceScalarParam>(attrs, (*in)[0]);  // validates the slice
  return true;
}

// The box's positions on the destination side, its dense elements on the source side.
internal::StridedWalk IntoBox(const Shape& s, const std::vector<AxisRange>& ranges) {
  internal::StridedWalk w = BoxWalk(s, ranges);
  std::swap(w.src_stride, w.dst_stride);
  std::swap(w.src_offset, w.dst_offset);
  return w;
}

void SliceAssignCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  internal::CopyIfDistinct(in[0], out[0]);
  internal::StridedCopy(IntoBox(out[0].shape, SliceRanges(attrs, out[0].shape)), in[1].data,
                        out[0].data, DTypeSize(out[0].dtype));
}

void SliceAssignScalarCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in, const std::vector<TBlob>& out) {
  internal::CopyIfDistinct(in[0], out[0]);
  // The value in the output dtype, read with stride 0 for every element of the box.
  uint64_t value = 0;
  const double scalar = attrs.Param<SliceScalarParam>().scalar;
  ConvertElements(&scalar, DType::kFloat64, &value, out[0].dtype, 1);
  internal::StridedWalk w =
      IntoBox(out[0].shape, SliceRanges<SliceScalarParam>(attrs, out[0].shape));
  std::fill(w.src_stride.begin(), w.src_stride.end(), 0);
  internal::StridedCopy(w, &value, out[0].data, DTypeSize(out[0].dtype));
}

// ONNX Slice clamps and counts from the end exactly as MXNet does, so the attributes map
// unchanged; None is the far end in the step's direction.
void SliceOnnx(OnnxNodeContext* ctx) {
  const SliceParam& p = ctx->param<SliceParam>();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> starts, ends, axes, steps;
  for (size_t i = 0; i < p.begin.size(); ++i) {
    const int64_t step = (i < p.step.size() && p.step[i]) ? *p.step[i] : 1;
    starts.push_back(p.begin[i] ? *p.begin[i] : (step > 0 ? 0 : kMax));
    ends.push_back(p.end[i] ? *p.end[i] : (step > 0 ? kMax : kMin));
    axes.push_back(static_cast<int64_t>(i));
    steps.push_back(step);
  }
  ctx->Add("Slice",
           {ctx->in(0).name, ctx->Int64s(starts), ctx->Int64s(ends), ctx->Int64s(axes),
            ctx->Int64s(steps)},
           {}, ctx->out(0).name);
}

void SliceAxisOnnx(OnnxNodeContext* ctx) {
  const SliceAxisParam& p = ctx->param<SliceAxisParam>();
  const int64_t end = p.end ? *p.end : std::numeric_limits<int64_t>::max();
  ctx->Add(
      "Slice",
      {ctx->in(0).name, ctx->Int64s({p.begin}), ctx->Int64s({end}), ctx->Int64s({int64_t{p.axis}})},
      {}, ctx->out(0).name);
}

// slice's gradient: zeros of the input's shape with the output gradient in the slice (MXNet's
// _backward_slice is the same assignment).
std::vector<NodeEntry> SliceGradient(const std::shared_ptr<Node>& n,
                                     const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {g.Op("_slice_assign", {g.ZerosLike(g.in(0)), g.out_grad(0)}, g.attrs().dict)};
}

// slice_axis: the output gradient in the slice, zeros elsewhere.
std::vector<NodeEntry> SliceAxisGradient(const std::shared_ptr<Node>& n,
                                         const std::vector<NodeEntry>& dy) {
  internal::GradientBuilder g(n, dy);
  return {internal::CopiedElementsGradient(g, 0)};
}

}  // namespace

void RegisterSliceOps(OpRegistry* r) {
  r->Register("slice")
      .Describe(
          "Slices a region of the array: for each axis i < len(begin), "
          "elements begin[i], begin[i] + step[i], ... before end[i]. None "
          "entries select the whole axis; negative values count from the "
          "end.")
      .AddAlias("crop")
      .SetParam<SliceParam>(SliceParamInit)
      .SetInputNames({"data"})
      .SetInferShape(SliceShape)
      .SetInferType(ElemwiseType)
      .SetCompute(SliceCompute)
      .SetOnnx({"Slice"}, SliceOnnx)
      .SetGradient(SliceGradient);

  r->Register("slice_axis")
      .Describe(
          "Slices along one axis: elements begin .. end-1 of that axis (end None = the "
          "end of the axis); negative values count from the end.")
      .SetParam<SliceAxisParam>()
      .SetInputNames({"data"})
      .SetInferShape(SliceAxisShape)
      .SetInferType(ElemwiseType)
      .SetCompute(SliceAxisCompute)
      .SetOnnx({"Slice"}, SliceAxisOnnx)
      .SetGradient(SliceAxisGradient);

  r->Register("_slice_assign")
      .Describe("A copy of lhs whose slice (begin, end, step as in slice) is replaced by rhs.")
      .AddAlias("_crop_assign")
      .SetParam<SliceParam>(SliceParamInit)
      .SetInputNames({"lhs", "rhs"})
      .SetInferShape(SliceAssignShape)
      .SetInferType(ElemwiseType)
      .SetCompute(SliceAssignCompute)
      .SetInplace({{0, 0}});

  r->Register("_slice_assign_scalar")
      .Describe("A copy of data whose slice (begin, end, step as in slice) is set to scalar.")
      .AddAlias("_crop_assign_scalar")
      .SetParam<SliceScalarParam>(SliceInit<SliceScalarParam>)
      .SetInputNames({"data"})
      .SetInferShape(SliceAssignScalarShape)
      .SetInferType(ElemwiseType)
      .SetCompute(SliceAssignScalarCompute)
      .SetInplace({{0, 0}});
}

}  // namespace hybridnet
