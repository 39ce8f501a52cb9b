// Shape and dtype inference every int8 op shares: after its integer inputs come their float
// ranges, each a (1,) float32 input, and after its integer output come the output's range ends,
// outputs 1 and 2 ("min_output", "max_output").
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "hybridnet/op.h"

namespace hybridnet {
namespace internal {

/// Sets types[i] to `want`, or throws kTypeError naming the node when it holds another type.
inline void AssignQuantizedDType(const NodeAttrs& attrs, std::vector<DType>* types, size_t i,
                                 DType want, const char* side) {
  DType& t = (*types)[i];
  HN_CHECK(t == DType::kUnknown || t == want, kTypeError)
      << DescribeNode(attrs) << ": " << side << " " << i << " has dtype " << DTypeName(t)
      << ", expected " << DTypeName(want);
  t = want;
}

/// Sets shapes[i], a range end, to (1,), or throws kShapeError naming the node.
inline void AssignRangeShape(const NodeAttrs& attrs, std::vector<Shape>* shapes, size_t i,
                             const char* side) {
  Shape merged = (*shapes)[i];
  HN_CHECK(MergeShape(Shape{1}, &merged), kShapeError)
      << DescribeNode(attrs) << ": " << side << " " << i << " (a range end) has shape "
      << (*shapes)[i] << ", expected (1,)";
  (*shapes)[i] = merged;
}

/// Inputs from `first_range` on and outputs 1 and 2 are range ends; `data_shape`, the float op's
/// inference, relates the first `first_range` inputs and output 0.
inline bool RangedShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out,
                        size_t first_range, const FInferShape& data_shape) {
  for (size_t i = first_range; i < in->size(); ++i) AssignRangeShape(attrs, in, i, "input");
  for (size_t i = 1; i < out->size(); ++i) AssignRangeShape(attrs, out, i, "output");
  std::vector<Shape> data(in->begin(), in->begin() + static_cast<std::ptrdiff_t>(first_range));
  std::vector<Shape> result{(*out)[0]};
  const bool known = data_shape(attrs, &data, &result);
  std::copy(data.begin(), data.end(), in->begin());
  (*out)[0] = result[0];
  return known;
}

/// MXNet's output names of an op with a range: the integers, then their range ends.
inline std::vector<std::string> RangeOutputNames(const NodeAttrs&) {
  return {"output", "min_output", "max_output"};
}

}  // namespace internal
}  // namespace hybridnet
