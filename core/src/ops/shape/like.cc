// Ops that take (part of) their output shape from attributes or another input (MXNet
// src/operator/tensor/matrix_op-inl.h SliceLike, broadcast_reduce_op.h BroadcastAxes and
// BroadcastLike, elemwise_unary_op_basic.cc reshape_like): slice_like, broadcast_axis,
// broadcast_like, reshape_like. reshape_like keeps lhs's bytes (an identity view); the others
// are one strided walk each, for every dtype.
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
using internal::ContiguousStrides;
using internal::NormalizeAxis;
using internal::StridedWalk;

// The output as a walk over the input: each output dim reads input dim k with the input's
// stride, or stride 0 where a size-1 input dim is broadcast.
void BroadcastCopy(const TBlob& in, const TBlob& out) {
  const std::vector<int64_t> ist = ContiguousStrides(in.shape);
  const std::vector<int64_t> ost = ContiguousStrides(out.shape);
  StridedWalk w;
  for (size_t k = 0; k < out.shape.ndim(); ++k)
    w.Add(out.shape[k], in.shape[k] == out.shape[k] ? ist[k] : 0, ost[k]);
  internal::StridedCopy(w, in.data, out.data, DTypeSize(out.dtype));
}

void BroadcastCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  BroadcastCopy(in[0], out[0]);
}

// ---------------------------------------------------------------------------------------------
// slice_like

struct SliceLikeParam {
  std::vector<int64_t> axes;
  static void Declare(ParamDeclarer<SliceLikeParam>* d) {
    d->Field("axes", &SliceLikeParam::axes)
        .Default(std::vector<int64_t>{})
        .Describe(
            "The axes sliced to shape_like's size (negative counts from the end); empty "
            "slices every axis.");
  }
};

bool SliceLikeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& is = (*in)[0];
  const Shape& like = (*in)[1];
  if (is.ndim() == 0 || like.ndim() == 0) return false;
  const auto& axes = attrs.Param<SliceLikeParam>().axes;
  std::vector<int64_t> od = is.dims();
  auto take = [&](size_t a) {
    HN_CHECK(a < like.ndim(), kShapeError)
        << DescribeNode(attrs) << ": axis " << a << " does not exist in shape_like " << like;
    HN_CHECK(is[a] == 0 || like[a] == 0 || like[a] <= is[a], kShapeError)
        << DescribeNode(attrs) << ": axis " << a << " of shape_like " << like
        << " is longer than the input's " << is;
    od[a] = like[a];
  };
  if (axes.empty()) {
    HN_CHECK(is.ndim() == like.ndim(), kShapeError)
        << DescribeNode(attrs) << ": slicing every axis needs inputs of one rank, got " << is
        << " and " << like;
    for (size_t a = 0; a < is.ndim(); ++a) take(a);
  } else {
    for (int64_t a : axes) take(NormalizeAxis(attrs, a, is.ndim(), "axes"));
  }
  AssignShape(attrs, out, 0, Shape(od), "output");
  return is.IsKnown() && (*out)[0].IsKnown();
}

void SliceLikeCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                      const std::vector<TBlob>& out) {
  const std::vector<int64_t> ist = ContiguousStrides(in[0].shape);
  const std::vector<int64_t> ost = ContiguousStrides(out[0].shape);
  StridedWalk w;
  for (size_t k = 0; k < out[0].shape.ndim(); ++k) w.Add(out[0].shape[k], ist[k], ost[k]);
  internal::StridedCopy(w, in[0].data, out[0].data, DTypeSize(out[0].dtype));
}

// The output has input 0's dtype; input 1 only lends its shape (any dtype, as in MXNet).
bool FirstInputType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> data{(*in)[0]};
  const bool known = ElemwiseType(attrs, &data, out);
  (*in)[0] = data[0];
  return known && (*in)[1] != DType::kUnknown;
}

// ---------------------------------------------------------------------------------------------
// broadcast_axis

struct BroadcastAxisParam {
  std::vector<int64_t> axis;
  std::vector<int64_t> size;
  static void Declare(ParamDeclarer<BroadcastAxisParam>* d) {
    d->Field("axis", &BroadcastAxisParam::axis)
        .Default(std::vector<int64_t>{})
        .Describe("The size-1 axes to broadcast.");
    d->Field("size", &BroadcastAxisParam::size)
        .Default(std::vector<int64_t>{})
        .Describe("The new size of each axis in axis.");
  }
};

void BroadcastAxisInit(BroadcastAxisParam* p) {
  HN_CHECK(p->axis.size() == p->size.size(), kInvalidArgument)
      << "axis=" << Shape(p->axis) << " and size=" << Shape(p->size)
      << " must have the same length";
  for (int64_t s : p->size)
    HN_CHECK(s >= 1, kInvalidArgument)
        << "size=" << Shape(p->size) << " must be positive (an empty result cannot be "
        << "represented by legacy shapes)";
}

bool BroadcastAxisShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& is = (*in)[0];
  if (is.ndim() == 0) return false;
  const BroadcastAxisParam& p = attrs.Param<BroadcastAxisParam>();
  std::vector<int64_t> od = is.dims();
  for (size_t i = 0; i < p.axis.size(); ++i) {
    // MXNet indexes the shape with the axis as given: a negative axis is an error there.
    HN_CHECK(p.axis[i] >= 0, kShapeError)
        << DescribeNode(attrs) << ": axis=" << Shape(p.axis)
        << " has a negative entry (broadcast_axis takes axes counted from 0)";
    const size_t a = NormalizeAxis(attrs, p.axis[i], is.ndim(), "axis");
    HN_CHECK(is[a] == 0 || is[a] == 1, kShapeError)
        << DescribeNode(attrs) << ": axis " << a << " of " << is << " has size " << is[a]
        << "; only size-1 axes can be broadcast";
    od[a] = p.size[i];
  }
  AssignShape(attrs, out, 0, Shape(od), "output");
  return is.IsKnown();
}

// ---------------------------------------------------------------------------------------------
// broadcast_like

struct BroadcastLikeParam {
  std::optional<std::vector<int64_t>> lhs_axes;
  std::optional<std::vector<int64_t>> rhs_axes;
  static void Declare(ParamDeclarer<BroadcastLikeParam>* d) {
    d->Field("lhs_axes", &BroadcastLikeParam::lhs_axes)
        .Default(std::nullopt)
        .Describe("The size-1 axes of lhs to broadcast (None: all, lhs and rhs of one rank).");
    d->Field("rhs_axes", &BroadcastLikeParam::rhs_axes)
        .Default(std::nullopt)
        .Describe("The axes of rhs whose sizes they get, pairwise with lhs_axes.");
  }
};

void BroadcastLikeInit(BroadcastLikeParam* p) {
  if (!p->lhs_axes || !p->rhs_axes) return;
  HN_CHECK(p->lhs_axes->size() == p->rhs_axes->size(), kInvalidArgument)
      << "lhs_axes=" << Shape(*p->lhs_axes) << " and rhs_axes=" << Shape(*p->rhs_axes)
      << " must have the same length";
  HN_CHECK(!p->lhs_axes->empty(), kInvalidArgument) << "lhs_axes=() selects no axis";
}

bool BroadcastLikeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& lhs = (*in)[0];
  const Shape& rhs = (*in)[1];
  if (lhs.ndim() == 0 || rhs.ndim() == 0) return false;
  const BroadcastLikeParam& p = attrs.Param<BroadcastLikeParam>();
  std::vector<int64_t> od = lhs.dims();
  auto broadcast = [&](size_t l, size_t r) {
    if (rhs[r] == 0 || lhs[l] == rhs[r]) return;
    HN_CHECK(lhs[l] == 0 || lhs[l] == 1, kShapeError)
        << DescribeNode(attrs) << ": cannot broadcast axis " << l << " of " << lhs << " to size "
        << rhs[r] << " (axis " << r << " of " << rhs << ")";
    od[l] = rhs[r];
  };
  if (!p.lhs_axes || !p.rhs_axes) {
    HN_CHECK(lhs.ndim() == rhs.ndim(), kShapeError)
        << DescribeNode(attrs) << ": " << lhs << " cannot be broadcast to " << rhs
        << " (different ranks)";
    for (size_t k = 0; k < lhs.ndim(); ++k) broadcast(k, k);
  } else {
    for (size_t i = 0; i < p.lhs_axes->size(); ++i) {
      const size_t l = NormalizeAxis(attrs, (*p.lhs_axes)[i], lhs.ndim(), "lhs_axes");
      const size_t r = NormalizeAxis(attrs, (*p.rhs_axes)[i], rhs.ndim(), "rhs_axes");
      HN_CHECK(lhs[l] == 0 || lhs[l] == 1, kShapeError)
          << DescribeNode(attrs) << ": axis " << l << " of lhs " << lhs << " has size " << lhs[l]
          << "; only size-1 axes can be broadcast";
      od[l] = rhs[r];
    }
  }
  AssignShape(attrs, out, 0, Shape(od), "output");
  return lhs.IsKnown() && (*out)[0].IsKnown();
}

// ---------------------------------------------------------------------------------------------
// reshape_like

struct ReshapeLikeParam {
  std::optional<int> lhs_begin, lhs_end, rhs_begin, rhs_end;
  static void Declare(ParamDeclarer<ReshapeLikeParam>* d) {
    d->Field("lhs_begin", &ReshapeLikeParam::lhs_begin)
        .Default(std::nullopt)
        .Describe("First axis of lhs to replace (None: 0; negative counts from the end).");
    d->Field("lhs_end", &ReshapeLikeParam::lhs_end)
        .Default(std::nullopt)
        .Describe("One past the last axis of lhs to replace (None: ndim).");
    d->Field("rhs_begin", &ReshapeLikeParam::rhs_begin)
        .Default(std::nullopt)
        .Describe("First axis of rhs whose sizes replace them (None: 0).");
    d->Field("rhs_end", &ReshapeLikeParam::rhs_end)
        .Default(std::nullopt)
        .Describe("One past the last axis of rhs to use (None: ndim).");
  }
};

// MXNet's ReshapeLikeRangeCanonicalize: [begin, end) of an array of `ndim` dims.
void AxisRange(const NodeAttrs& attrs, const std::optional<int>& begin,
               const std::optional<int>& end, size_t ndim, const char* side, int64_t* b,
               int64_t* e) {
  const int64_t n = static_cast<int64_t>(ndim);
  *b = begin ? *begin : 0;
  if (*b < 0) *b += n;
  *e = end ? *end : n;
  if (*e < 0) *e += n;
  HN_CHECK(*b >= 0 && *b < *e && *e <= n, kShapeError)
      << DescribeNode(attrs) << ": " << side
      << "_begin=" << (begin ? std::to_string(*begin) : "None") << ", " << side
      << "_end=" << (end ? std::to_string(*end) : "None") << " is not a non-empty axis range of "
      << "a " << n << "-D " << side;
}

bool ReshapeLikeShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& lhs = (*in)[0];
  const Shape& rhs = (*in)[1];
  if (lhs.ndim() == 0 || rhs.ndim() == 0) return false;
  const ReshapeLikeParam& p = attrs.Param<ReshapeLikeParam>();
  int64_t lb = 0, le = 0, rb = 0, re = 0;
  AxisRange(attrs, p.lhs_begin, p.lhs_end, lhs.ndim(), "lhs", &lb, &le);
  AxisRange(attrs, p.rhs_begin, p.rhs_end, rhs.ndim(), "rhs", &rb, &re);
  std::vector<int64_t> od(lhs.begin(), lhs.begin() + lb);
  od.insert(od.end(), rhs.begin() + rb, rhs.begin() + re);
  od.insert(od.end(), lhs.begin() + le, lhs.end());
  const Shape os(od);
  if (lhs.IsKnown() && os.IsKnown()) {
    HN_CHECK(lhs.Size() == os.Size(), kShapeError)
        << DescribeNode(attrs) << ": cannot reshape lhs " << lhs << " to " << os
        << " (taken from rhs " << rhs << "): the sizes differ";
  }
  AssignShape(attrs, out, 0, os, "output");
  return lhs.IsKnown() && (*out)[0].IsKnown();
}

// The output shapes are known at export, so each is the ONNX op to the output's shape.
void SliceLikeOnnx(OnnxNodeContext* ctx) { ctx->SliceToOutput(ctx->in(0), 0); }
void BroadcastLikeOnnx(OnnxNodeContext* ctx) { ctx->ExpandToOutput(ctx->in(0), 0); }
void ReshapeLikeOnnx(OnnxNodeContext* ctx) { ctx->ReshapeToOutput(ctx->in(0).name, 0); }

// ---- gradients ---------------------------------------------------------------------------------

using internal::GradientBuilder;

// broadcast_axis, broadcast_like: the output gradient summed back over the broadcast axes; rhs
// only lends its shape.
std::vector<NodeEntry> BroadcastLikeGradient(const std::shared_ptr<Node>& n,
                                             const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  std::vector<NodeEntry> grads{g.SumLike(g.out_grad(0), g.in(0))};
  if (n->inputs.size() > 1) grads.push_back(g.ZerosLike(g.in(1)));
  return grads;
}

// reshape_like: the output gradient with lhs's shape; rhs only lends its shape.
std::vector<NodeEntry> ReshapeLikeGradient(const std::shared_ptr<Node>& n,
                                           const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {g.Op("reshape_like", {g.out_grad(0), g.in(0)}), g.ZerosLike(g.in(1))};
}

// slice_like: the output gradient in the leading corner of data, zeros elsewhere; shape_like
// gets zeros (MXNet's).
std::vector<NodeEntry> SliceLikeGradient(const std::shared_ptr<Node>& n,
                                         const std::vector<NodeEntry>& dy) {
  GradientBuilder g(n, dy);
  return {internal::CopiedElementsGradient(g, 0), g.ZerosLike(g.in(1))};
}

}  // namespace

void RegisterLikeOps(OpRegistry* r) {
  r->Register("slice_like")
      .Describe(
          "Slices data to the size of shape_like along the given axes (every axis by "
          "default), keeping the leading elements.")
      .SetParam<SliceLikeParam>()
      .SetInputNames({"data", "shape_like"})
      .SetInferShape(SliceLikeShape)
      .SetInferType(FirstInputType)
      .SetCompute(SliceLikeCompute)
      .SetOnnx({"Slice", "Identity"}, SliceLikeOnnx)
      .SetGradient(SliceLikeGradient);

  r->Register("broadcast_axis")
      .Describe("Broadcasts size-1 axes of the input to the given sizes.")
      .AddAlias("broadcast_axes")
      .SetParam<BroadcastAxisParam>(BroadcastAxisInit)
      .SetInputNames({"data"})
      .SetInferShape(BroadcastAxisShape)
      .SetInferType(ElemwiseType)
      .SetCompute(BroadcastCompute)
      .SetOnnx({"Expand"}, BroadcastLikeOnnx)
      .SetGradient(BroadcastLikeGradient);

  r->Register("broadcast_like")
      .Describe(
          "Broadcasts lhs to rhs's shape (every axis, or lhs_axes to the sizes of "
          "rhs_axes).")
      .SetParam<BroadcastLikeParam>(BroadcastLikeInit)
      .SetInputNames({"lhs", "rhs"})
      .SetInferShape(BroadcastLikeShape)
      .SetInferType(FirstInputType)
      .SetCompute(BroadcastCompute)
      .SetOnnx({"Expand"}, BroadcastLikeOnnx)
      .SetGradient(BroadcastLikeGradient);

  r->Register("reshape_like")
      .Describe(
          "Gives lhs (same data) a shape in which axes [lhs_begin, lhs_end) are replaced "
          "by rhs's axes [rhs_begin, rhs_end).")
      .SetParam<ReshapeLikeParam>()
      .SetInputNames({"lhs", "rhs"})
      .SetInferShape(ReshapeLikeShape)
      .SetInferType(FirstInputType)
      .SetCompute(internal::ViewCompute)
      .SetIdentityView()
      .SetInplace({{0, 0}})
      .SetOnnx({"Reshape"}, ReshapeLikeOnnx)
      .SetGradient(ReshapeLikeGradient);
}

}  // namespace hybridnet
