// Slicing (MXNet src/operator/tensor/matrix_op-inl.h SliceParam, SliceAxisParam): slice with
// per-axis begin/end/step (entries may be None), and slice_axis along one axis.
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
#include "ops/nn/im2col-inl.h"
#include "ops/register_ops.h"

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
  static void Declare(ParamDeclarer<SliceParam>* d) {
    d->Field("begin", &SliceParam::begin_text)
        .Required()
        .Describe("starting indices for the slice operation, supports negative indices.");
    d->Field("end", &SliceParam::end_text)
        .Required()
        .Describe("ending indices for the slice operation, supports negative indices.");
    d->Field("step", &SliceParam::step_text)
        .Default("()")
        .Describe("step for the slice operation, supports negative values.");
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

std::vector<AxisRange> SliceRanges(const NodeAttrs& attrs, const Shape& s) {
  const SliceParam& p = attrs.Param<SliceParam>();
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

bool SliceShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& ishape = (*in)[0];
  if (ishape.ndim() == 0) return false;
  HN_CHECK(ishape.ndim() <= kMaxSliceDims, kShapeError)
      << DescribeNode(attrs) << ": slice supports at most " << kMaxSliceDims << " dimensions";
  const SliceParam& p = attrs.Param<SliceParam>();
  std::vector<int64_t> dims(ishape.begin(), ishape.end());
  for (size_t i = 0; i < p.begin.size() && i < dims.size(); ++i) {
    if (dims[i] != 0) dims[i] = SliceRange(attrs, p, i, dims[i]).count;
  }
  HN_CHECK(p.begin.size() <= dims.size(), kShapeError)
      << DescribeNode(attrs) << ": begin " << OptTupleText(p.begin) << " has more entries than "
      << "the input " << ishape << " has dimensions";
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(Shape(dims), &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match the sliced "
      << "shape " << Shape(dims);
  (*out)[0] = merged;
  return ishape.IsKnown() && (*out)[0].IsKnown();
}

// Copies the strided box described by `ranges` of `x` (shape s) into y (dense).
void CopyBox(const float* x, const Shape& s, const std::vector<AxisRange>& ranges, float* y) {
  const size_t nd = s.ndim();
  int64_t stride[kMaxSliceDims];
  int64_t acc = 1;
  for (size_t k = nd; k-- > 0;) {
    stride[k] = acc;
    acc *= s[k];
  }
  int64_t base = 0;
  for (size_t k = 0; k < nd; ++k) base += ranges[k].begin * stride[k];
  const AxisRange& last = ranges[nd - 1];
  const int64_t inner = last.count, inner_step = last.step * stride[nd - 1];
  int64_t outer = 1;
  for (size_t k = 0; k + 1 < nd; ++k) outer *= ranges[k].count;
  int64_t idx[kMaxSliceDims] = {};
  int64_t off = base;
  for (int64_t o = 0; o < outer; ++o, y += inner) {
    if (inner_step == 1) {
      std::memcpy(y, x + off, static_cast<size_t>(inner) * sizeof(float));
    } else {
      for (int64_t i = 0; i < inner; ++i) y[i] = x[off + i * inner_step];
    }
    for (size_t k = nd - 1; k-- > 0;) {
      off += ranges[k].step * stride[k];
      if (++idx[k] < ranges[k].count) break;
      off -= ranges[k].step * stride[k] * ranges[k].count;
      idx[k] = 0;
    }
  }
}

void SliceCompute(const OpContext&,
                  const NodeAttrs& attrs,
                  const std::vector<TBlob>& in,
                  const std::vector<TBlob>& out) {
  CopyBox(in[0].ptr<const float>(), in[0].shape, SliceRanges(attrs, in[0].shape),
          out[0].ptr<float>());
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

void SliceAxisCompute(const OpContext&,
                      const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const Shape& s = in[0].shape;
  size_t axis = 0;
  AxisRange r = SliceAxisRange(attrs, s, &axis);
  std::vector<AxisRange> ranges;
  for (size_t k = 0; k < s.ndim(); ++k) ranges.push_back(k == axis ? r : AxisRange{0, 1, s[k]});
  CopyBox(in[0].ptr<const float>(), s, ranges, out[0].ptr<float>());
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
  ctx->Add("Slice",
           {ctx->in(0).name, ctx->Int64s({p.begin}), ctx->Int64s({end}),
            ctx->Int64s({int64_t{p.axis}})},
           {}, ctx->out(0).name);
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
                  .SetInferType(ElemwiseFloatType)
                  .SetCompute(SliceCompute)
                  .SetOnnx({"Slice"}, SliceOnnx);

  r->Register("slice_axis")
      .Describe(
          "Slices along one axis: elements begin .. end-1 of that axis (end None = the "
          "end of the axis); negative values count from the end.")
      .SetParam<SliceAxisParam>()
      .SetInputNames({"data"})
      .SetInferShape(SliceAxisShape)
      .SetInferType(ElemwiseFloatType)
      .SetCompute(SliceAxisCompute)
      .SetOnnx({"Slice"}, SliceAxisOnnx);
}

}  // namespace hybridnet
