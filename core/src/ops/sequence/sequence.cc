// SequenceMask, SequenceLast, SequenceReverse (MXNet src/operator/sequence_*-inl.h).
//
// data has the time axis `axis` (0 or 1) and the batch axis 1 - axis; sequence_length (batch,)
// holds each batch element's length, read as MXNet's kernels do: converted to an integer by
// truncation. Lengths are clamped into [0, T] (SequenceLast: [1, T]) because MXNet's CPU
// kernels index memory outside the array for lengths beyond that range.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"
#include "ops/gradient_util.h"
#include "ops/register_ops.h"

namespace hybridnet {

namespace {

using internal::IsNumericDType;
using internal::SwitchNumericDType;

struct SequenceParam {
  bool use_sequence_length = false;
  int axis = 0;
  static void Declare(ParamDeclarer<SequenceParam>* d) {
    d->Field("use_sequence_length", &SequenceParam::use_sequence_length)
        .Default(false)
        .Describe(
            "If true, the sequence_length input gives each batch element's length; "
            "otherwise every sequence is the full time axis.");
    d->Field("axis", &SequenceParam::axis)
        .Default(0)
        .Describe("The time axis (0 or 1); the batch axis is the other of the two.");
  }
};

struct SequenceMaskParam {
  bool use_sequence_length = false;
  float value = 0.f;
  int axis = 0;
  static void Declare(ParamDeclarer<SequenceMaskParam>* d) {
    d->Field("use_sequence_length", &SequenceMaskParam::use_sequence_length)
        .Default(false)
        .Describe(
            "If true, the sequence_length input gives each batch element's length; "
            "otherwise the op is the identity.");
    d->Field("value", &SequenceMaskParam::value)
        .Default(0.f)
        .Describe("The value written at time steps at or beyond a sequence's length.");
    d->Field("axis", &SequenceMaskParam::axis)
        .Default(0)
        .Describe("The time axis (0 or 1); the batch axis is the other of the two.");
  }
};

template <typename P>
std::vector<std::string> SequenceInputNames(const NodeAttrs& attrs) {
  if (attrs.Param<P>().use_sequence_length) return {"data", "sequence_length"};
  return {"data"};
}

// Checks data's rank and the time axis, then fills sequence_length's shape (batch,).
bool SequenceInputShapes(const NodeAttrs& attrs, int axis, bool allow_axis1,
                         std::vector<Shape>* in) {
  HN_CHECK(axis == 0 || (allow_axis1 && axis == 1), kUnsupported)
      << DescribeNode(attrs) << ": axis=" << axis << " is not supported (expected "
      << (allow_axis1 ? "0 or 1" : "0") << ", as MXNet)";
  const Shape& data = (*in)[0];
  if (data.ndim() == 0) return false;
  HN_CHECK(data.ndim() >= 2, kShapeError)
      << DescribeNode(attrs) << ": data must have at least 2 dimensions (time and batch), got "
      << data;
  if (in->size() > 1) {
    Shape len = (*in)[1];
    HN_CHECK(MergeShape(Shape{data[static_cast<size_t>(1 - axis)]}, &len), kShapeError)
        << DescribeNode(attrs) << ": sequence_length has shape " << (*in)[1] << " but data " << data
        << " needs (" << data[static_cast<size_t>(1 - axis)] << ",)";
    (*in)[1] = len;
    return data.IsKnown() && len.IsKnown();
  }
  return data.IsKnown();
}

bool SequenceMaskShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> data_only{(*in)[0]};
  ElemwiseShape(attrs, &data_only, out);
  (*in)[0] = data_only[0];
  return SequenceInputShapes(attrs, attrs.Param<SequenceMaskParam>().axis, true, in) &&
         (*out)[0].IsKnown();
}

bool SequenceReverseShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> data_only{(*in)[0]};
  ElemwiseShape(attrs, &data_only, out);
  (*in)[0] = data_only[0];
  return SequenceInputShapes(attrs, attrs.Param<SequenceParam>().axis, false, in) &&
         (*out)[0].IsKnown();
}

bool SequenceLastShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const int axis = attrs.Param<SequenceParam>().axis;
  if (!SequenceInputShapes(attrs, axis, true, in) && (*in)[0].ndim() == 0) return false;
  const Shape& data = (*in)[0];
  std::vector<int64_t> dims;
  for (size_t i = 0; i < data.ndim(); ++i)
    if (i != static_cast<size_t>(axis)) dims.push_back(data[i]);
  Shape merged = (*out)[0];
  HN_CHECK(MergeShape(Shape(dims), &merged), kShapeError)
      << DescribeNode(attrs) << ": output shape " << (*out)[0] << " does not match " << Shape(dims);
  (*out)[0] = merged;
  return data.IsKnown() && (in->size() < 2 || (*in)[1].IsKnown());
}

// data and output share a numeric dtype; sequence_length may have any numeric dtype.
bool SequenceType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> data_only{(*in)[0]};
  const bool known = internal::NumericType(attrs, &data_only, out);
  (*in)[0] = data_only[0];
  if (in->size() < 2) return known;
  HN_CHECK((*in)[1] == DType::kUnknown || IsNumericDType((*in)[1]), kTypeError)
      << DescribeNode(attrs) << ": sequence_length has dtype " << DTypeName((*in)[1])
      << "; expected float32, float64, uint8, int8, int32 or int64";
  return known && (*in)[1] != DType::kUnknown;
}

// Per batch element, the length clamped into [lo, time]; `time` when there is no length input.
std::vector<int64_t> Lengths(const std::vector<TBlob>& in, int64_t batch, int64_t time,
                             int64_t lo) {
  std::vector<int64_t> lengths(static_cast<size_t>(batch), time);
  if (in.size() < 2) return lengths;
  SwitchNumericDType(in[1].dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* len = in[1].ptr<const I>();
    for (int64_t b = 0; b < batch; ++b) {
      const double v = static_cast<double>(len[b]);
      const int64_t n = v >= static_cast<double>(time) ? time
                        : v > static_cast<double>(lo)  ? static_cast<int64_t>(v)
                                                       : lo;
      lengths[static_cast<size_t>(b)] = n;
    }
  });
  return lengths;
}

// The (time, batch, row) geometry of data around the time axis.
struct SeqGeom {
  int64_t time = 0, batch = 0, row = 1;
  // Offset of element (t, b, 0).
  int64_t At(int axis, int64_t t, int64_t b) const {
    return axis == 0 ? (t * batch + b) * row : (b * time + t) * row;
  }
};

SeqGeom GeomOf(const Shape& s, int axis) {
  SeqGeom g;
  g.time = s[static_cast<size_t>(axis)];
  g.batch = s[static_cast<size_t>(1 - axis)];
  for (size_t i = 2; i < s.ndim(); ++i) g.row *= s[i];
  return g;
}

void SequenceMaskCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                         const std::vector<TBlob>& out) {
  const SequenceMaskParam& p = attrs.Param<SequenceMaskParam>();
  const SeqGeom g = GeomOf(in[0].shape, p.axis);
  const std::vector<int64_t> lengths = Lengths(in, g.batch, g.time, 0);
  SwitchNumericDType(in[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].ptr<const T>();
    T* y = out[0].ptr<T>();
    if (x != y) std::memcpy(y, x, static_cast<size_t>(in[0].Size()) * sizeof(T));
    const T fill = static_cast<T>(p.value);
    for (int64_t b = 0; b < g.batch; ++b)
      for (int64_t t = lengths[static_cast<size_t>(b)]; t < g.time; ++t)
        std::fill_n(y + g.At(p.axis, t, b), g.row, fill);
  });
}

void SequenceLastCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
                         const std::vector<TBlob>& out) {
  const int axis = attrs.Param<SequenceParam>().axis;
  const SeqGeom g = GeomOf(in[0].shape, axis);
  const std::vector<int64_t> lengths = Lengths(in, g.batch, g.time, 1);
  const size_t bytes = static_cast<size_t>(g.row) * DTypeSize(in[0].dtype);
  const auto* x = static_cast<const uint8_t*>(in[0].data);
  auto* y = static_cast<uint8_t*>(out[0].data);
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t t = lengths[static_cast<size_t>(b)] - 1;
    std::memcpy(y + static_cast<size_t>(b) * bytes,
                x + static_cast<size_t>(g.At(axis, t, b) / g.row) * bytes, bytes);
  }
}

void SequenceReverseCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                            const std::vector<TBlob>& out) {
  const SeqGeom g = GeomOf(in[0].shape, 0);
  const std::vector<int64_t> lengths = Lengths(in, g.batch, g.time, 0);
  const size_t bytes = static_cast<size_t>(g.row) * DTypeSize(in[0].dtype);
  const auto* x = static_cast<const uint8_t*>(in[0].data);
  auto* y = static_cast<uint8_t*>(out[0].data);
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t n = lengths[static_cast<size_t>(b)];
    for (int64_t t = 0; t < g.time; ++t) {
      const int64_t src = t < n ? n - 1 - t : t;
      std::memcpy(y + static_cast<size_t>(g.At(0, t, b) / g.row) * bytes,
                  x + static_cast<size_t>(g.At(0, src, b) / g.row) * bytes, bytes);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Gradients (MXNet's): SequenceMask masks the output gradient with zeros, SequenceReverse
// reverses it back, SequenceLast adds it to the steps it read; sequence_length gets zeros.

using internal::GradientBuilder;

std::vector<NodeEntry> WithZeroLengthGradient(const GradientBuilder& g, NodeEntry data_grad) {
  std::vector<NodeEntry> grads{std::move(data_grad)};
  if (g.attrs().op->NumInputs(g.attrs()) > 1) grads.push_back(g.ZerosLike(g.in(1)));
  return grads;
}

// The same op, with the same lengths, on the output gradient (value 0 for SequenceMask).
std::vector<NodeEntry> SameOpGradient(const std::shared_ptr<Node>& n,
                                      const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  std::vector<NodeEntry> inputs{g.out_grad(0)};
  if (g.attrs().op->NumInputs(g.attrs()) > 1) inputs.push_back(g.in(1));
  AttrDict attrs = g.attrs().dict;
  if (g.attrs().op->name == "SequenceMask") attrs["value"] = "0";
  return WithZeroLengthGradient(g, g.Op(g.attrs().op->name, std::move(inputs), std::move(attrs)));
}

std::vector<NodeEntry> SequenceLastGradient(const std::shared_ptr<Node>& n,
                                            const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return WithZeroLengthGradient(g, internal::CopiedElementsGradient(g, 0));
}

}  // namespace

void RegisterSequenceOps(OpRegistry* r) {
  r->Register("SequenceMask")
      .Describe(
          "Sets the time steps at or beyond each sequence's length to `value`; data is "
          "(T, N, ...) for axis=0 or (N, T, ...) for axis=1, sequence_length (N,).")
      .SetParam<SequenceMaskParam>()
      .SetInputNames(SequenceInputNames<SequenceMaskParam>)
      .SetInferShape(SequenceMaskShape)
      .SetInferType(SequenceType)
      .SetCompute(SequenceMaskCompute)
      .SetInplace({{0, 0}})
      .SetGradient(SameOpGradient);

  r->Register("SequenceLast")
      .Describe(
          "The last valid time step of each sequence: data (T, N, ...) for axis=0 or "
          "(N, T, ...) for axis=1 gives (N, ...), step sequence_length[n] - 1 (T - 1 "
          "without lengths).")
      .SetParam<SequenceParam>()
      .SetInputNames(SequenceInputNames<SequenceParam>)
      .SetInferShape(SequenceLastShape)
      .SetInferType(SequenceType)
      .SetCompute(SequenceLastCompute)
      .SetGradient(SequenceLastGradient);

  r->Register("SequenceReverse")
      .Describe(
          "Reverses the first sequence_length[n] time steps of each sequence of data "
          "(T, N, ...), keeping the steps beyond the length in place (all T steps "
          "without lengths).")
      .SetParam<SequenceParam>()
      .SetInputNames(SequenceInputNames<SequenceParam>)
      .SetInferShape(SequenceReverseShape)
      .SetInferType(SequenceType)
      .SetCompute(SequenceReverseCompute)
      .SetGradient(SameOpGradient);
}

}  // namespace hybridnet
