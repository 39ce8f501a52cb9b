// Small pieces of shape inference shared by the shape-manipulation families (shape_ops.cc,
// rearrange.cc, like.cc, ...): merging an inferred shape into a slot, normalising a possibly
// negative axis.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

/// Merges `value` into (*shapes)[i]; a conflict is a kShapeError naming the op, the node and
/// the side ("input" / "output").
inline void AssignShape(const NodeAttrs& attrs, std::vector<Shape>* shapes, size_t i,
                        const Shape& value, const char* side) {
  Shape merged = (*shapes)[i];
  HN_CHECK(MergeShape(value, &merged), kShapeError)
      << DescribeNode(attrs) << ": " << side << " " << i << " has shape " << (*shapes)[i] << " but "
      << value << " is required";
  (*shapes)[i] = merged;
}

/// Normalises a possibly negative axis for an array of `ndim` dims (`extra` = 1 allows ndim,
/// for ops that insert an axis).
inline size_t NormalizeAxis(const NodeAttrs& attrs, int64_t axis, size_t ndim, const char* key,
                            size_t extra = 0) {
  const int64_t n = static_cast<int64_t>(ndim + extra);
  HN_CHECK(axis >= -n && axis < n, kShapeError)
      << DescribeNode(attrs) << ": " << key << "=" << axis << " is out of range for "
      << (extra ? "the result's " : "") << ndim + extra << " dimensions (valid: [" << -n << ", "
      << n - 1 << "])";
  return static_cast<size_t>(axis < 0 ? axis + n : axis);
}

/// Copies in to out unless they are the same bytes (an identity view planned in place).
inline void CopyIfDistinct(const TBlob& in, const TBlob& out) {
  if (in.data != out.data) {
    std::memcpy(out.data, in.data, static_cast<size_t>(in.Size()) * DTypeSize(in.dtype));
  }
}

/// The kernel of an op whose output is input 0's bytes (Reshape, squeeze, reshape_like): the
/// executor skips it for identity views; eager invocation copies.
inline void ViewCompute(const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
                        const std::vector<TBlob>& out) {
  CopyIfDistinct(in[0], out[0]);
}

/// True when every shape of the list is known.
inline bool AllKnown(const std::vector<Shape>& shapes) {
  for (const Shape& s : shapes)
    if (!s.IsKnown()) return false;
  return true;
}

}  // namespace internal
}  // namespace hybridnet
