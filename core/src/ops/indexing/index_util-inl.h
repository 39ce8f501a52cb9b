// Index handling shared by the indexing ops: indices arrive as float32 in most exported models
// (also float64, the integer types and bool), and MXNet converts each one with a C cast to a
// 64-bit integer (truncation toward zero). The conversion here is the same, made total: values
// a cast cannot represent (NaN, +-inf, |v| >= 2^63) give INT64_MIN, what x86's truncating
// conversion gives, so the clip/wrap rules then treat them as MXNet's kernels do.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "hybridnet/op.h"
#include "ops/dtype_switch-inl.h"

namespace hybridnet {
namespace internal {

template <typename T>
int64_t IndexValue(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    constexpr double kLimit = 9223372036854775808.0;  // 2^63
    const double d = static_cast<double>(v);
    if (!(d > -kLimit && d < kLimit)) return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(v);
}

/// The dtypes an index input may have: MXNet's numeric types and bool.
inline bool IsIndexDType(DType dtype) { return IsNumericDType(dtype) || dtype == DType::kBool; }

/// Calls fn(TypeTag<T>{}) for an index dtype (see IsIndexDType).
template <typename Fn>
void SwitchIndexDType(DType dtype, Fn&& fn) {
  SwitchDType(dtype, std::forward<Fn>(fn), /*with_bool=*/true);
}

/// Checks the dtype of index input `i`; true when it is known.
inline bool IndexTypeKnown(const NodeAttrs& attrs, DType d, size_t i) {
  HN_CHECK(d == DType::kUnknown || IsIndexDType(d), kTypeError)
      << DescribeNode(attrs) << ": index input " << i << " has dtype " << DTypeName(d)
      << "; indices must be float32, float64, uint8, int8, int32, int64 or bool";
  return d != DType::kUnknown;
}

/// Type inference of an op whose output has the dtype of input `data_in` and whose other
/// inputs `index_in` are indices: the data dtype propagates both ways, index dtypes are checked.
inline bool DataAndIndexType(const NodeAttrs& attrs, std::vector<DType>* in,
                             std::vector<DType>* out, size_t data_in,
                             const std::vector<size_t>& index_in) {
  std::vector<DType> data{(*in)[data_in]};
  bool known = ElemwiseType(attrs, &data, out);
  (*in)[data_in] = data[0];
  for (size_t i : index_in) known = IndexTypeKnown(attrs, (*in)[i], i) && known;
  return known;
}

}  // namespace internal
}  // namespace hybridnet
