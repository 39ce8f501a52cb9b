// Pieces shared by the vision and detection op families (ops/vision, ops/detection):
//
//  * RealType: type inference for ops MXNet runs in float32/float64 only (its
//    MSHADOW_REAL_TYPE_SWITCH without half precision), every input and output one dtype;
//  * SwitchRealDType: the kernel side of it;
//  * AssignShape: merges a required shape into an inference slot, naming op, node and input;
//  * RoiBatchIndex: the image an ROI row points at, as MXNet converts it (float -> int, toward
//    zero), or -1 when it names no image of the batch;
//  * SortKey: a score as a sort key with NaN ranked last, so that sorts stay well defined
//    (MXNet's comparisons with NaN are not);
//  * CheckWorkLimit: refuses attributes that ask for more samples (or scratch elements) than
//    HN_LIMIT_MAX_TENSOR_ELEMENTS, so a hostile file cannot make a kernel run for hours;
//  * BoxFormat: MXNet's "corner"/"center" box encodings.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "hybridnet/base.h"
#include "hybridnet/limits.h"
#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"

namespace hybridnet {
namespace internal {

inline bool IsRealDType(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64;
}

/// Every input and output has one dtype, float32 or float64.
inline bool RealType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  const bool complete = ElemwiseType(attrs, in, out);
  for (size_t i = 0; i < in->size(); ++i) {
    HN_CHECK((*in)[i] == DType::kUnknown || IsRealDType((*in)[i]), kTypeError)
        << DescribeNode(attrs) << ": input " << i << " has dtype " << DTypeName((*in)[i])
        << "; this operator computes in float32 or float64 (Cast the input first)";
  }
  return complete;
}

/// Calls fn(TypeTag<T>{}) with float or double.
template <typename Fn>
void SwitchRealDType(DType dtype, Fn&& fn) {
  if (dtype == DType::kFloat64) {
    fn(TypeTag<double>{});
  } else {
    fn(TypeTag<float>{});
  }
}

/// Merges `value` into (*list)[i]; a conflict is a kShapeError naming `what`.
inline void AssignShape(const NodeAttrs& attrs, std::vector<Shape>* list, size_t i,
                        const Shape& value, const std::string& what) {
  Shape merged = (*list)[i];
  HN_CHECK(MergeShape(value, &merged), kShapeError)
      << DescribeNode(attrs) << ": " << what << " has shape " << (*list)[i] << " but " << value
      << " is required";
  (*list)[i] = merged;
}

/// Throws kInvalidArgument when `count` (the samples or scratch elements `what` describes,
/// computed in double so that it cannot overflow) exceeds HN_LIMIT_MAX_TENSOR_ELEMENTS.
inline void CheckWorkLimit(const NodeAttrs& attrs, double count, const std::string& what) {
  HN_CHECK(count <= static_cast<double>(GetLimit(Limit::kMaxTensorElements)), kInvalidArgument)
      << DescribeNode(attrs) << ": " << what << " needs " << count << " elements"
      << LimitNote(Limit::kMaxTensorElements);
}

/// `v` for a descending sort (an ascending one when `ascending`), NaN ranked after everything.
template <typename T>
T SortKey(T v, bool ascending = false) {
  if (!std::isnan(v)) return v;
  return ascending ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
}

/// True when every shape of both lists is known.
inline bool AllKnown(const std::vector<Shape>& in, const std::vector<Shape>& out) {
  for (const auto* list : {&in, &out})
    for (const Shape& s : *list)
      if (!s.IsKnown()) return false;
  return true;
}

/// The batch image of an ROI whose first column is `value` (truncated toward zero, as MXNet's
/// float -> int conversion does), or -1 when it is NaN or outside [0, batch).
inline int64_t RoiBatchIndex(double value, int64_t batch) {
  if (!(value > -1.0 && value < static_cast<double>(batch))) return -1;
  return static_cast<int64_t>(value);
}

enum class BoxFormat { kCorner, kCenter };

inline const EnumNames<BoxFormat>& BoxFormatNames() {
  static const EnumNames<BoxFormat> names = {{"center", BoxFormat::kCenter},
                                             {"corner", BoxFormat::kCorner}};
  return names;
}

}  // namespace internal
}  // namespace hybridnet
